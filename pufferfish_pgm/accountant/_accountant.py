"""Composition bookkeeping: add up ε only where the composition is proven (DESIGN §3.10).

Pufferfish privacy does not compose in general (Kifer & Machanavajjhala 2014, §8.2: linear
self-composition is a property an instantiation may lack): on a network where
``X2 = X1 XOR X0``, ``X1`` and ``X2`` each say little about ``X0`` and together determine it.
:class:`PrivacyAccountant` accepts releases on the same data only under one of these results
(proofs in ``docs/composition.md``; the checks live in the private module
``_composition_rules``) and raises :class:`~pufferfish_pgm.errors.CompositionError` otherwise:

1. **Markov Quilt Mechanism releases** under one framework (same data, class Θ and pairs):
   ε = Σ ε_k, the sequential composition of MQM on time series (Song & Chaudhuri 2017,
   arXiv:1707.02702). Checked on the recorded plans: for a node X_i and a recorded quilt with
   nearby set X_N and max-influence e, the MQM argument (Song, Wang & Chaudhuri 2017) applied
   to the joint release gives ``ε_i <= e + Σ_k n_k · L_k / scale_k``, n_k = card(X_N ∩ nodes
   of query k) (:func:`quilt_bound`, :attr:`PrivacyAccountant.bound`). With a shared quilt each
   term is at most ε_k − e; with different quilts and queries over the same nodes, the quilt
   with the smallest X_N makes each term at most ε_k − e_k; a plan that does not prove Σ ε_k
   is refused.
2. **Independent records** (every θ a product distribution, single-node pairs): any Laplace
   releases, ε = Σ ε_k. For a pair on X_i, ``P(ω | a) = Σ_{x_{-i}} P(x_{-i}) Π_k
   p_k(ω_k − F_k(a, x_{-i}))`` and each factor moves by at most ``e^{Δ_k/scale_k}``: DP's
   sequential composition through Kifer & Machanavajjhala 2014, Theorem 6.1.
3. **Dataset-level releases** (``scale >= (max F − min F) / ε``, e.g. group DP) bound the
   density ratio between *any* two datasets by e^ε, so they add ε to any Pufferfish release.
4. **Parallel composition**: different ``dataset`` labels mean disjoint, independent users; a
   secret concerns one user and the other releases are independent of it (Kifer &
   Machanavajjhala 2014, §8.1, eq. 14), so the total is the largest per-label ε.

For a finite class Θ, :func:`joint_audit` computes the exact ε of several Laplace releases made
together (DESIGN §3.7, vector case), whatever mechanisms calibrated them.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> from pufferfish_pgm.secrets import Framework
>>> from pufferfish_pgm.queries import Count
>>> from pufferfish_pgm.mechanisms.exact import ExactLaplaceMechanism
>>> fw = Framework(MarkovChainScenario([[0.8, 0.2], [0.3, 0.7]], "stationary", 4))
>>> cal = ExactLaplaceMechanism(epsilon=0.5).calibrate(fw, Count(1))
>>> acc = PrivacyAccountant().record(cal)
>>> acc.epsilon
0.5
>>> acc.record(cal)
Traceback (most recent call last):
...
pufferfish_pgm.errors.CompositionError: releases #1 (ExactLaplace, ε=0.5) and #2 (...
>>> round(joint_audit(fw, [cal, cal]), 4)      # the exact combined ε
0.9994
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import CompositionError, InvalidParameterError, ParameterTypeError
from ..mechanisms import Calibration
from ..privacy_loss import audit_releases
from ..queries import Query
from ..secrets import Framework
from ._composition_rules import check_proven, compose_bound, full_range, pair_range, quilt_bound
from ._records import RecordedRelease

__all__ = ["GroupAccount", "PrivacyAccountant", "RecordedRelease", "full_range", "joint_audit",
           "pair_range", "quilt_bound"]


@dataclass(frozen=True, kw_only=True)
class GroupAccount:
    """The composition of the releases on one dataset label.

    ``epsilon`` is Σ ε_k (proven by ``rule``); ``bound`` is the tighter ε the same argument
    proves from the actual scales (``bound <= epsilon``).
    """

    dataset: Hashable
    indices: tuple[int, ...]
    epsilon: float
    bound: float
    rule: str


def compose(dataset: Hashable, items: list[tuple[int, RecordedRelease]]) -> GroupAccount:
    """Account for the releases ``items`` = [(index, RecordedRelease), ...] on one label.

    The rules are checked in :mod:`pufferfish_pgm.accountant._composition_rules`; raises
    :class:`~pufferfish_pgm.errors.CompositionError` when none covers the releases.
    """
    total = sum(r.calibration.epsilon for _, r in items)
    indices = tuple(i for i, _ in items)
    if len(items) == 1:
        return GroupAccount(dataset=dataset, indices=indices, epsilon=total, bound=total,
                            rule="a single release")
    bound, rule = compose_bound(items)
    return GroupAccount(dataset=dataset, indices=indices, epsilon=total, bound=bound, rule=rule)


@dataclass(frozen=True)
class PrivacyAccountant:
    """An immutable record of releases and their proven total ε.

    :meth:`record` returns a new accountant with one more release, or raises
    :class:`~pufferfish_pgm.errors.CompositionError` when no composition result covers the
    releases on the same data (see the module docstring). ``releases`` holds the
    :class:`RecordedRelease` objects in order, ``groups`` one :class:`GroupAccount` per label.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework
    >>> from pufferfish_pgm.queries import Count
    >>> from pufferfish_pgm.mechanisms.blowfish import BlowfishLaplaceMechanism
    >>> iid = Framework(MarkovChainScenario([[0.7, 0.3], [0.7, 0.3]], "stationary", 5))
    >>> acc = PrivacyAccountant()
    >>> for eps in (0.5, 0.25):      # independent records: the epsilons add
    ...     acc = acc.record(BlowfishLaplaceMechanism(epsilon=eps).calibrate(iid, Count(1)))
    >>> acc.epsilon, len(acc.releases)
    (0.75, 2)
    >>> acc.record(BlowfishLaplaceMechanism(epsilon=1.0).calibrate(iid, Count(0)),
    ...            dataset="other users").epsilon                 # parallel: the largest
    1.0
    """

    releases: tuple[RecordedRelease, ...] = ()
    groups: tuple[GroupAccount, ...] = ()

    def __init__(self) -> None:
        object.__setattr__(self, "releases", ())
        object.__setattr__(self, "groups", ())

    @property
    def epsilon(self) -> float:
        """The proven total: the largest per-dataset sum of ε (0 when nothing is recorded)."""
        return max((g.epsilon for g in self.groups), default=0.0)

    @property
    def bound(self) -> float:
        """A tighter proven ε from the same arguments (``bound <= epsilon``)."""
        return max((g.bound for g in self.groups), default=0.0)

    def record(self, calibration: Calibration, *,
               dataset: Hashable = "default") -> PrivacyAccountant:
        """A new accountant with ``calibration`` released on the users labelled ``dataset``.

        Releases with different labels must be on disjoint, independent users' data; use one
        label for all releases whose users overlap. A calibration whose ε is only nominal for
        its framework (entry DP under correlated scenarios) is refused with
        :class:`~pufferfish_pgm.errors.CompositionError`.
        """
        if not isinstance(calibration, Calibration):
            raise ParameterTypeError(f"record() takes a Calibration (from mechanism.calibrate), "
                                     f"got {type(calibration).__name__}")
        if np.isnan(calibration.scale) and hasattr(calibration, "noise"):
            raise CompositionError(
                f"{calibration.mechanism} releases add an integer noise law, not Laplace noise; "
                "the accountant's proven composition rules cover Laplace releases only, so it "
                "cannot add this release to others (release it alone, or calibrate with a "
                "Laplace mechanism such as ExactLaplaceMechanism to compose)")
        if not (np.isfinite(calibration.scale) and calibration.scale >= 0):
            raise InvalidParameterError(f"the calibration's scale is {calibration.scale!r}; it "
                                        "must be a finite number >= 0")
        check_proven(calibration)
        try:
            hash(dataset)
        except TypeError:
            raise ParameterTypeError(f"dataset must be a hashable label, got {dataset!r}") from None
        releases = self.releases + (RecordedRelease(calibration=calibration, dataset=dataset),)
        items = [(i, r) for i, r in enumerate(releases) if r.dataset == dataset]
        group = compose(dataset, items)
        groups = tuple(g for g in self.groups if g.dataset != dataset) + (group,)
        out = object.__new__(PrivacyAccountant)
        object.__setattr__(out, "releases", releases)
        object.__setattr__(out, "groups", groups)
        return out

    def summary(self) -> str:
        """One line per dataset label: ε, the tighter bound and the rule used."""
        lines = [f"total ε = {self.epsilon:.6g} (bound {self.bound:.6g})"]
        lines += [f"  {g.dataset!r}: releases {[i + 1 for i in g.indices]}, ε = {g.epsilon:.6g}"
                  f", bound {g.bound:.6g} — {g.rule}" for g in self.groups]
        return "\n".join(lines)


def _as_pair(item: object) -> tuple[Query, float]:
    query: Query
    if isinstance(item, Calibration):
        query, scale = item.query, item.scale
    elif isinstance(item, Sequence) and not isinstance(item, (str, bytes)) and len(item) == 2:
        query, scale = item[0], item[1]
    else:
        raise ParameterTypeError(f"each release is a (query, scale) pair or a Calibration, got "
                                 f"{item!r}")
    if isinstance(scale, (int, float)) and scale == 0:
        raise InvalidParameterError(
            f"the release of {getattr(query, 'name', query)!r} has scale 0 (no noise); the joint "
            "audit needs Laplace noise on every release (a noiseless release is audited by "
            "ExactLaplaceMechanism's noiseless check)")
    return query, scale


def joint_audit(framework: Framework, releases: Sequence[Calibration | tuple[Query, float]], *,
                discrete: bool = False) -> float:
    """Exact ε of several Laplace releases made together on the same data (finite Θ).

    Parameters
    ----------
    framework : Framework
        Scenarios and pairs the combined release is audited against.
    releases : sequence of (query, scale) or Calibration
        Each adds independent Laplace(scale) noise to every coordinate of its query.
    discrete : bool
        Discrete Laplace on integers (the same realised ε).

    Returns
    -------
    float
        The sup over pairs, scenarios and outputs of the joint log density ratio
        (:func:`pufferfish_pgm.privacy_loss.audit_releases`; the product grid must stay small).

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework
    >>> from pufferfish_pgm.queries import Count
    >>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 5))
    >>> one = joint_audit(fw, [(Count(1), 4.0)])
    >>> one < joint_audit(fw, [(Count(1), 4.0), (Count(0, nodes=[0, 1]), 2.0)])
    True
    """
    if isinstance(releases, (str, bytes)) or not isinstance(releases, Sequence) or not releases:
        raise InvalidParameterError(f"releases must be a non-empty list of (query, scale) pairs "
                                    f"or Calibrations, got {releases!r}")
    pairs = [_as_pair(item) for item in releases]
    return float(audit_releases(framework, pairs, discrete=discrete).epsilon)
