"""A class's Laplace scale member by member, with a running maximum (``docs/posterior.md``).

A release ``F + Laplace(λ)`` is ε-Pufferfish private for a finite class Θ exactly when it is
for every member (the definition quantifies over θ), and for one θ the passing scales form a
ray ``[t(θ), ∞)`` (DESIGN §3.7, monotone in the scale). So the exact scale of Θ is
``max_θ t(θ)``, and a member need not be calibrated when it already passes the exact audit at
a scale known to be needed: :func:`memberwise_scale` calibrates a pilot of about √n members
spread over the class (their largest scale is near the top of the members' thresholds, so few
others fail it), audits the others at that scale, calibrates the worst that fails, audits only
the failing ones at the new scale, and so on. Members that pass are pruned for good (they
pass at every larger scale). For a posterior class of hundreds of chains
(``ScenarioClass.from_posterior``) this replaces one calibration per member by one audit per
member and about √n calibrations.

``also=(λ1, λ2, ...)`` measures, in the same pass, the class's realised ε at other scales (for
example a point fit's calibration audited against the posterior class): every member's pair
laws are built once (:func:`realised_at`) and evaluated at the running maximum and at each
``λj``; the class's realised ε at ``λj`` is the largest of its members' (the definition again).

Other Laplace mechanisms (MQM, ...) are calibrated on each member alone; the largest of those
scales is private for the class (each member's own proof holds at any larger scale, §3.7), and
no larger than the mechanism's scale on the whole class when the mechanism takes a maximum
over the class (MQM's max-influence does).

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario, ScenarioClass
>>> from pufferfish_pgm.secrets import Framework
>>> from pufferfish_pgm.queries import Count
>>> from pufferfish_pgm.mechanisms import ExactLaplaceMechanism
>>> fw = Framework(ScenarioClass([
...     MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 8),
...     MarkovChainScenario([[0.6, 0.4], [0.4, 0.6]], "stationary", 8, name="mixing")]))
>>> out = memberwise_scale(ExactLaplaceMechanism(epsilon=2.0), fw, Count(1))
>>> out.binding, out.calibrated, out.audited
('chain', 1, 1)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from .._parallel import run_map
from .._validation import positive_finite
from ..errors import ParameterTypeError
from ..mechanisms import ExactLaplaceMechanism, Mechanism
from ..mechanisms._engine import quiet
from ..privacy_loss import audit
from ..privacy_loss._engine import (
    STREAM_CELLS,
    build_groups,
    chain_streams,
    release_layout,
    report_from_groups,
)
from ..secrets import Framework
from ._robustness import _framework_for

__all__ = ["MemberScales", "memberwise_scale"]


@dataclass(frozen=True)
class MemberScales:
    """The class scale found member by member.

    Attributes
    ----------
    scale : float
        ``max`` over members of each member's own scale (exact: the smallest λ the exact
        audit accepts for every member).
    binding : str
        The member whose scale it is.
    calibrated : int
        Members calibrated on their own.
    audited : int
        Member audits run to prune the others (exact Laplace only).
    rounds : int
        Rounds of auditing the members still failing.
    also : tuple of float
        The class's exact realised ε at each scale of ``also`` (the largest over members).
    """

    scale: float
    binding: str
    calibrated: int
    audited: int
    rounds: int
    also: tuple[float, ...] = ()


def _own_scale(mechanism: Mechanism, framework: Framework, query: Any) -> float:
    with quiet():       # one member is not a release; the caller checks usefulness
        return float(mechanism.calibrate(framework, query).scale)


def _member_scale(mechanism: Mechanism, frameworks: list, query: Any, i: int) -> float:
    return _own_scale(mechanism, frameworks[i], query)


def _others(mechanism: Mechanism, frameworks: list, query: Any, executor: Any,
            also: tuple[float, ...]) -> MemberScales:
    scales = run_map(partial(_member_scale, mechanism, frameworks, query),
                     range(len(frameworks)), executor)
    worst = max(range(len(scales)), key=scales.__getitem__)
    at = run_map(partial(realised_at, frameworks, query, also), range(len(frameworks)),
                 executor) if also else []
    return MemberScales(scales[worst], frameworks[worst].scenarios[0].name, len(scales), 0, 0,
                        _largest(at, len(also)))


def _largest(rows: list, width: int) -> tuple[float, ...]:
    return tuple(float(max(r[j] for r in rows)) for j in range(width)) if rows else ()


def memberwise_scale(mechanism: Mechanism, framework: Framework, query: Any, *,
                     executor: Any = None, also: Any = ()) -> MemberScales:
    """The largest of the members' own scales, with pruning for exact Laplace (see the
    module); ``executor`` (a ``concurrent.futures.Executor``) runs the audits or the member
    calibrations; ``also``: scales at which to measure the class's realised ε too.

    Raises
    ------
    ParameterTypeError
        ``mechanism`` is not a mechanism or ``framework`` not a framework.
    InvalidParameterError
        A scale of ``also`` that is not a finite number > 0.
    """
    if not isinstance(mechanism, Mechanism) or not isinstance(framework, Framework):
        raise ParameterTypeError(f"memberwise_scale() takes a Mechanism and a Framework, got "
                                 f"{type(mechanism).__name__} and {type(framework).__name__}")
    extra = tuple(positive_finite("also", s) for s in also)
    frameworks = [_framework_for(framework, m) for m in framework.scenarios]
    if not isinstance(mechanism, ExactLaplaceMechanism):
        return _others(mechanism, frameworks, query, executor, extra)
    return _exact(mechanism, frameworks, query, executor, extra)


def realised_at(frameworks: list, query: Any, scales: tuple[float, ...],
                i: int) -> tuple[float, ...]:
    """The exact realised ε of member ``i`` at each of ``scales``, its pair laws built once
    (as :func:`~pufferfish_pgm.privacy_loss.audit` does per scale; streamed chains fall back
    to one audit per scale)."""
    fw = frameworks[i]
    streams = chain_streams(fw, query)
    if streams is not None and sum(s.cells for s in streams) > STREAM_CELLS:
        return tuple(float(audit(fw, query, s).epsilon) for s in scales)
    engine, matrix, shift, names = release_layout(fw, query)
    groups, skipped = build_groups(fw, engine, matrix, shift)
    return tuple(float(report_from_groups(groups, np.full(len(names), s), names, skipped, "",
                                          False).epsilon) for s in scales)


def _exact(mechanism: Mechanism, frameworks: list, query: Any, executor: Any,
           also: tuple[float, ...]) -> MemberScales:
    """The running maximum of the members' exact scales (see the module)."""
    step = max(1, len(frameworks) // math.isqrt(len(frameworks)))
    pilot = list(range(0, len(frameworks), step))     # ~sqrt(n) members, evenly spread
    scales = run_map(partial(_member_scale, mechanism, frameworks, query), pilot, executor)
    at = run_map(partial(realised_at, frameworks, query, also), pilot, executor) if also else []
    binding, scale = pilot[int(np.argmax(scales))], max(scales)
    chosen = set(pilot)
    pending = [i for i in range(len(frameworks)) if i not in chosen]
    counts = [len(pilot), 0, 0]                        # calibrated, audited, rounds
    while pending:
        rows = run_map(partial(realised_at, frameworks, query, (scale,) + also), pending,
                       executor)
        if counts[2] == 0:
            at += [r[1:] for r in rows]
            also = ()                                  # measured once, on every member
        counts[1] += len(pending)
        counts[2] += 1
        failing = [(r[0], i) for r, i in zip(rows, pending, strict=True)
                   if r[0] > mechanism.epsilon]
        if not failing:
            break
        binding = max(failing)[1]
        scale = max(scale, _own_scale(mechanism, frameworks[binding], query))
        counts[0] += 1
        pending = [i for _, i in failing if i != binding]
    width = len(at[0]) if at else 0
    return MemberScales(scale, frameworks[binding].scenarios[0].name, counts[0], counts[1],
                        counts[2], _largest(at, width))
