"""Exact Laplace calibration: the smallest noise that passes the exact audit (DESIGN §3.7).

For a finite class Θ the realised ε of ``F + Laplace(λ)`` is computed exactly by
:mod:`pufferfish_pgm.privacy_loss`, and it never increases with λ: Laplace(λ₂) is Laplace(λ₁) plus
independent noise (its characteristic function ``1/(1+λ₂²t²)`` is ``1/(1+λ₁²t²)`` times that of
a mixture of 0 and Laplace(λ₂)), and adding independent noise cannot increase a privacy loss.
So the passing scales form a ray ``[λ*, ∞)`` and bisection finds λ*. It starts from the
Wasserstein scale ``W/ε``, which always passes (couple each pair monotonically:
``p_a(w) <= e^{W/λ} p_b(w)``), and ends with an exact audit of the returned scale on every
pair. The search itself (:mod:`pufferfish_pgm.privacy_loss`) never trusts a scale the kernel
cannot evaluate: the kernel is exact at every positive scale, the descent towards 0 stops at
a floor where the audit equals the noiseless loss, and the scale is 0 (no noise) only when the
noiseless loss ``max |log μ_a(x)/μ_b(x)|`` is at most ``ε (1 - 1e-9)``.

Pairs are pruned as the bisection goes: once some pair fails at λ, λ* > λ, and every pair that
passed at λ passes at every larger scale, so it need not be evaluated again. Histograms are
calibrated with one scale on every bar, audited on the joint vector of counts (small models).

Long chains (a count on fixed-start chains whose stored laws would pass ``STREAM_CELLS``
cells, or ``streaming=True``) are calibrated without holding the laws: node by node from one
backward pass per scenario, each law cut where no scale above a proven failing one can see it
(:mod:`pufferfish_pgm.privacy_loss._streamed_exact`; same scale up to ``rtol``, and the same
final audit of every pair).

``progress=`` (see :mod:`pufferfish_pgm._progress`) counts the laws, the W∞ of each scenario
and every evaluation of a scenario's pairs at a scale (the bisection's audits and the final
one); their number is estimated from ``rtol`` and grows if the search needs more. The streamed
path reports what :func:`~pufferfish_pgm.privacy_loss._streamed_exact.streamed_calibration`
reports.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> from pufferfish_pgm.secrets import Framework
>>> from pufferfish_pgm.queries import Count
>>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 20))
>>> cal = ExactLaplaceMechanism(epsilon=1.0).calibrate(fw, Count(1))
>>> cal.evidence.audit.epsilon <= 1.0 + 1e-9, cal.scale < cal.evidence.wasserstein_scale
(True, True)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from .._progress import Ticker, as_progress
from .._tolerances import RELATIVE
from .._validation import positive_finite, positive_int
from ..errors import InvalidParameterError
from ..privacy_loss import AuditReport, noiseless_epsilon, smallest_passing_scale
from ..privacy_loss._engine import (
    MAX_GRID,
    NOISELESS_MARGIN,
    SLACK,
    STREAM_CELLS,
    Group,
    build_groups,
    chain_streams,
    coverage_note,
    group_w_infinity,
    pair_noiseless,
    refuse_any_start,
    release_layout,
    report_from_groups,
    streamed_calibration,
)
from ..queries import Query
from ..secrets import Framework
from .base import Calibration, Mechanism
from .evidence import ExactEvidence

__all__ = ["ExactLaplaceMechanism"]


def _upper_bracket(groups: list[Group], scalar: bool, epsilon: float,
                   transport: list[np.ndarray] | None
                   ) -> tuple[float, float | None, tuple[int, int]]:
    """A scale that passes by theorem (W∞/ε for one coordinate, else the L1 diameter / ε),
    the Wasserstein scale (None for vectors) and the pair of largest W∞ as (group, pair)."""
    if transport is not None:
        pick, top = (0, 0), -1.0
        for g, w in enumerate(transport):
            i = int(np.argmax(w))
            if w[i] > top:
                top, pick = float(w[i]), (g, i)
        best = max(top, 0.0)
        if best > 0.0:
            return best / epsilon, best / epsilon, pick
    diameter = max(sum(float(grid[-1] - grid[0]) for grid in g.grids) for g in groups)
    loss = [pair_noiseless(g) for g in groups]
    g = int(np.argmax([x.max(initial=-1.0) for x in loss]))
    return diameter / epsilon, (0.0 if scalar else None), (g, int(np.argmax(loss[g])))


def _nothing() -> None:
    """No-op tick."""


@dataclass(frozen=True, eq=False)
class _Counted(Group):
    """A group whose every evaluation of its pairs at a scale is one step of progress."""

    tick: Callable[[], None] = _nothing

    def epsilons(self, scales: np.ndarray, active: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
        self.tick()
        return super().epsilons(scales, active)


def counted(groups: list[Group], steps: Ticker) -> list[Group]:
    """``groups`` whose evaluations tick ``steps`` (the groups themselves when nobody listens).
    The engine's bisection evaluates each group by ``Group.epsilons``; the copies share the
    arrays of the originals."""
    if not steps.active:
        return groups
    return [_Counted(**{f.name: getattr(g, f.name) for f in fields(Group)},
                     tick=steps.tick) for g in groups]


def bisection_estimate(groups: list[Group], rtol: float) -> int:
    """The evaluations of groups a bisection to ``rtol`` usually makes: the worst pair is
    bisected alone (one halving of the bracket per step), then checked on every group, about
    twice (measured at rtol 1e-9: 68 for one scenario, 69 for two; this gives 66 and 68).
    Only a progress estimate; the search may take more."""
    return 2 * math.ceil(math.log2(1.0 / rtol)) + 4 + 2 * len(groups)


@dataclass(frozen=True, kw_only=True)
class ExactLaplaceMechanism(Mechanism):
    """Smallest Laplace scale whose exact realised ε is at most ``epsilon``.

    Parameters
    ----------
    epsilon : float
        Target privacy loss (> 0).
    rtol : float
        Relative width of the final bisection bracket (the upper end is returned).
    max_grid : int
        Cap on the cells of the conditional distributions of one scenario.
    streaming : bool or None
        Stream the laws node by node (True), hold them all (False), or decide by size (None:
        stream counts on chains whose stored laws would pass ``STREAM_CELLS`` cells).
        Streaming needs fixed-start chains, a Count or LinearQuery, and each pair's secrets
        on one shared node.

    Raises
    ------
    InvalidParameterError
        ``rtol`` outside (0, 1), ``max_grid`` < 1, ``streaming`` not True/False/None, or
        ``streaming=True`` for a framework it does not cover (the message says why).

    Examples
    --------
    >>> ExactLaplaceMechanism(epsilon=1.0, max_grid=0)
    Traceback (most recent call last):
    ...
    pufferfish_pgm.errors.InvalidParameterError: max_grid must be >= 1, got 0
    """

    rtol: float = RELATIVE
    max_grid: int = MAX_GRID
    streaming: bool | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if not positive_finite("rtol", self.rtol) < 1.0:
            raise InvalidParameterError(f"rtol must be < 1, got {self.rtol!r}")
        object.__setattr__(self, "max_grid", positive_int("max_grid", self.max_grid))
        if self.streaming not in (None, True, False):
            raise InvalidParameterError(
                f"streaming must be True, False or None (decide by size), got "
                f"{self.streaming!r}")

    def _streamed(self, framework: Framework, query: Query, names: list,
                  executor: Any, steps: Ticker) -> Calibration[ExactEvidence] | None:
        """The streamed calibration when it applies (see the module docstring), else None."""
        if self.streaming is False:
            return None
        streams = chain_streams(framework, query)
        if streams is None:
            if self.streaming:
                raise InvalidParameterError(
                    "streaming=True needs fixed-start chains, a Count or LinearQuery and every "
                    "pair's two secrets on one shared node; use streaming=None")
            return None
        if self.streaming is None and sum(s.cells for s in streams) <= STREAM_CELLS:
            return None
        found = streamed_calibration(framework, streams, self.epsilon, self.rtol, names,
                                     coverage_note(framework), executor,
                                     **_streamed_progress(steps))
        if found is None:       # no proven failing scale: the stored path decides
            return None
        return self._calibration(framework, query, found.scale, ExactEvidence(
            audit=found.report, coverage=found.report.coverage, skipped=found.report.skipped,
            coordinates=tuple(names), wasserstein_scale=None, bisection_steps=found.steps,
            streamed=True, lower_bracket=found.lower))

    def calibrate(self, framework: Framework, query: Query, *, executor: Any = None,
                  progress: Any = None) -> Calibration[ExactEvidence]:
        """Calibrate by bisection on the exact audit (see the module docstring); each
        scenario's laws are built on ``executor`` if given (W∞, the search and the final audit
        run here, on the laws already returned). ``progress``: None, True (a bar on stderr)
        or a callable ``(done, total)`` (:mod:`pufferfish_pgm._progress`)."""
        steps = Ticker(as_progress(progress, "exact Laplace"))
        refuse_any_start(framework, "ExactLaplaceMechanism")
        engine, matrix, shift, names = release_layout(framework, query)
        found = self._streamed(framework, query, names, executor, steps)
        if found is None:
            steps.plan(1)
            groups, skipped = build_groups(framework, engine, matrix, shift, self.max_grid,
                                           executor)
            steps.tick()
            found = self._stored(framework, query, names, groups, skipped, steps)
        steps.finish()
        return found

    def calibrate_laws(self, framework: Framework, query: Query, laws: tuple, *,
                       progress: Any = None) -> Calibration[ExactEvidence]:
        """:meth:`calibrate` on laws already laid out, ``(names, groups, skipped)`` of
        ``release_layout`` and ``build_groups`` (for mechanisms that hold them anyway, such
        as optimal noise: the laws are not built twice)."""
        steps = Ticker(as_progress(progress, "exact Laplace"))
        names, groups, skipped = laws
        found = self._stored(framework, query, names, groups, skipped, steps)
        steps.finish()
        return found

    def _stored(self, framework: Framework, query: Query, names: list, groups: list[Group],
                skipped: tuple, steps: Ticker) -> Calibration[ExactEvidence]:
        """The calibration on the stored laws (see the module docstring)."""
        coverage, scalar = coverage_note(framework), len(names) == 1
        if not groups or noiseless_epsilon(groups) <= self.epsilon * (1 - NOISELESS_MARGIN):
            return self._calibration(framework, query, 0.0, ExactEvidence(
                audit=None, coverage=coverage, skipped=skipped, coordinates=tuple(names),
                wasserstein_scale=0.0 if scalar else None,
                note="releasing F itself already meets epsilon: no noise needed"))
        steps.plan(len(groups) * scalar + bisection_estimate(groups, self.rtol))
        # W∞ and the audit run here: shipping the groups' laws to process or cluster workers
        # again costs more than it saves (measured: Dask 207 s against 67 s serial at T=1,440)
        transport = [_ticked(group_w_infinity(g), steps) for g in groups] if scalar else None
        start, w_scale, pick = _upper_bracket(groups, scalar, self.epsilon, transport)
        groups = counted(groups, steps)
        reports: list[AuditReport] = []

        def final(scale: float) -> bool:   # the full report, computed once, is the final check
            reports.append(report_from_groups(groups, np.full(len(names), scale), names,
                                              skipped, coverage, False))
            return reports[-1].passes(self.epsilon, SLACK)

        scale, steps_made, upper = smallest_passing_scale(groups, self.epsilon, start,
                                                          self.rtol, pick, final, transport)
        return self._calibration(framework, query, scale, ExactEvidence(
            audit=reports[-1], coverage=coverage, skipped=skipped, coordinates=tuple(names),
            wasserstein_scale=w_scale, upper_bracket=start, upper_used=upper,
            bisection_steps=steps_made))

    def _calibration(self, framework: Framework, query: Query, scale: float,
                     evidence: ExactEvidence) -> Calibration[ExactEvidence]:
        return Calibration(mechanism=self.name, epsilon=self.epsilon, scale=float(scale),
                           query=query, framework=framework, evidence=evidence)


def _ticked(value: np.ndarray, steps: Ticker) -> np.ndarray:
    """``value``, after one step of progress."""
    steps.tick()
    return value


def _streamed_progress(steps: Ticker) -> dict[str, Any]:
    """``progress=`` for the streamed engine when anyone listens."""
    return {"progress": steps.part()} if steps.active else {}
