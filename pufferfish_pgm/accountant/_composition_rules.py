"""The composition rules behind :class:`pufferfish_pgm.accountant.PrivacyAccountant`.

Private: the accountant's module docstring states the four rules and ``docs/composition.md``
proves them. This module checks them on recorded releases and returns the proven bound and the
name of the rule used, or raises :class:`~pufferfish_pgm.errors.CompositionError`.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Sequence

import numpy as np

from .._tolerances import RELATIVE
from ..errors import CompositionError, InvalidParameterError
from ..mechanisms import Calibration
from ..mechanisms.blowfish import dependence_reason
from ..queries import (
    Count,
    Histogram,
    Query,
    WeightedQuery,
    WindowedCount,
    WindowedHistogram,
    WindowedQuery,
)
from ..quilts import PlanEntry
from ..scenarios import Scenario, ScenarioClass
from ..secrets import Framework, NodeSecret
from ._records import RecordedRelease

#: Recorded releases with their position in the accountant: [(index, RecordedRelease), ...].
Items = list[tuple[int, RecordedRelease]]

__all__ = ["check_proven", "compose_bound", "full_range", "pair_range", "quilt_bound"]

_RTOL = RELATIVE
_ADVICE = ("Use joint_audit(framework, [(query, scale), ...]) for the exact combined ε over a "
           "finite class, calibrate every release with MarkovQuiltMechanism, or record releases "
           "on different (independent) users' data under different dataset labels")


def _same_framework(a: Framework, b: Framework) -> bool:
    if a is b:
        return True
    same_members = len(a.scenarios) == len(b.scenarios) and all(
        x is y for x, y in zip(a.scenarios, b.scenarios, strict=True))
    return same_members and set(a.pairs) == set(b.pairs)


def _single_node_pairs(framework: Framework) -> bool:
    return all(isinstance(p.first, NodeSecret) and isinstance(p.second, NodeSecret)
               for p in framework.pairs)


#: Mechanisms whose ε is a nominal (DP) figure, not a Pufferfish guarantee under correlation.
_NOMINAL = {"EntryDP": "entry DP hides one node with the others held fixed"}


def check_proven(calibration: Calibration) -> None:
    """Refuse a calibration whose ε is not a proven Pufferfish guarantee for its framework.

    Entry DP is ε-Pufferfish private only when the records are independent under every θ and
    every pair is about one node (then it is DP's guarantee, Kifer & Machanavajjhala 2014
    Thm 6.1); under correlation its realised ε exceeds the nominal one (the audit shows it), so
    recording it at its nominal ε would vouch for a leak.
    """
    why = _NOMINAL.get(calibration.mechanism)
    framework = calibration.framework
    if why is None or (_single_node_pairs(framework)
                       and dependence_reason(framework.scenarios) is None):
        return
    raise CompositionError(
        f"{calibration.mechanism} (ε={calibration.epsilon:g}) is not ε-Pufferfish private for "
        f"this framework ({why}, and "
        f"{dependence_reason(framework.scenarios) or 'some secret pairs are joint'}): its ε "
        "is nominal, so the accountant cannot record it. Audit its realised ε with "
        "pufferfish_pgm.audit(framework, query, scale), or calibrate with a Pufferfish "
        "mechanism (MarkovQuiltMechanism, ExactLaplaceMechanism, GroupDPMechanism)")


def _ratio(delta: float, scale: float) -> float:
    """``delta / scale`` with 0/0 = 0 (no change, no noise) and x/0 = inf."""
    if delta == 0.0:
        return 0.0
    return float("inf") if scale == 0.0 else delta / scale


def full_range(query: Query, scenarios: ScenarioClass | Scenario) -> float:
    """Most the query can differ between any two datasets (L1 over a histogram's bars).

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.queries import LinearQuery
    >>> mc = MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 3)
    >>> full_range(LinearQuery({0: -1, 1: 2}), mc), full_range(Histogram(), mc)
    (9.0, 6.0)
    """
    if isinstance(query, (Histogram, WindowedQuery)):   # L1: each node moves it by at most L
        return query.lipschitz_for(scenarios) * len(query.node_list(scenarios))
    weighted = _weighted(query)
    return float(sum(np.ptp(weighted.weights_of(scenarios, v))
                     for v in weighted.node_list(scenarios)))


def _weighted(query: Query) -> WeightedQuery:
    """``query`` as a scalar sum with weights, or a CompositionError saying what is missing."""
    if not isinstance(query, WeightedQuery):
        raise CompositionError(f"cannot bound the range of {query.name!r}: the accountant needs "
                               "a Count, LinearQuery or Histogram")
    return query


def pair_range(query: Query, framework: Framework) -> float:
    """Most the query moves when one node changes along one of the framework's pairs.

    Raises :class:`~pufferfish_pgm.errors.InvalidParameterError` for a pair over several nodes.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.queries import LinearQuery
    >>> mc = MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 3)
    >>> pair_range(LinearQuery({0: -1, 1: 2}), Framework(mc))
    3.0
    """
    cls, worst = framework.scenarios, 0.0
    nodes = set(query.node_list(cls))
    for p in framework.pairs:
        if not (isinstance(p.first, NodeSecret) and isinstance(p.second, NodeSecret)):
            raise InvalidParameterError(f"pair_range covers single-node pairs; the pair {p} is "
                                        "over several nodes")
        v = p.first.node
        if v not in nodes:
            continue
        if isinstance(query, (Histogram, WindowedHistogram)):
            return 2.0
        scalar = Count(query.state) if isinstance(query, WindowedCount) else _weighted(query)
        row = scalar.weights_of(cls, v)   # a windowed count moves in v's window only
        a, b = cls.state_index(v, p.first.state), cls.state_index(v, p.second.state)
        worst = max(worst, abs(float(row[a] - row[b])))
    return worst


class _QueryWeight:
    """``L_k / scale_k`` of one release and a prefix count of the nodes its query sums over."""

    def __init__(self, calibration: Calibration, index: dict[Hashable, int]) -> None:
        cls = calibration.framework.scenarios
        self.rate = _ratio(float(calibration.query.lipschitz_for(cls)), calibration.scale)
        counted = np.zeros(len(index) + 1, dtype=np.int64)
        counted[[index[v] + 1 for v in calibration.query.node_list(cls)]] = 1
        self.prefix, self.index = np.cumsum(counted), index

    def loss(self, nearby: Collection[Hashable]) -> float:
        """card(nearby ∩ query nodes) · L_k / scale_k (0 when the query misses X_N)."""
        if isinstance(nearby, range) and nearby.step == 1:     # chains: an interval of nodes
            count = int(self.prefix[nearby.stop] - self.prefix[nearby.start])
        else:
            count = int(sum(self.prefix[self.index[v] + 1] - self.prefix[self.index[v]]
                            for v in nearby))
        return 0.0 if count == 0 else count * self.rate


def quilt_bound(cals: Sequence[Calibration]) -> float:
    """Proven ε of the joint release from the recorded Markov quilts.

    For each secret node X_i, the minimum over the quilts recorded for X_i (in any of the
    plans) of ``influence + Σ_k card(X_N ∩ nodes of query k) · L_k / scale_k``; the maximum
    over nodes. Raises CompositionError when a secret node has no plan entry.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework
    >>> from pufferfish_pgm.queries import Count
    >>> from pufferfish_pgm.mechanisms.markov_quilt import MarkovQuiltMechanism
    >>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.1, 0.9]], "stationary", 50))
    >>> cal = MarkovQuiltMechanism(epsilon=1.0).calibrate(fw, Count(1))
    >>> round(quilt_bound([cal]), 6) <= 1.0, round(quilt_bound([cal, cal]), 6) <= 2.0
    (True, True)
    """
    framework = cals[0].framework
    index = {v: n for n, v in enumerate(framework.scenarios.nodes)}
    weights = [_QueryWeight(c, index) for c in cals]
    entries: dict[Hashable, list[PlanEntry]] = {}
    for c in cals:
        for e in c.plan:
            if isinstance(e, PlanEntry):
                entries.setdefault(e.node, []).append(e)
    worst = 0.0
    for v in framework.secret_nodes:
        if v not in entries:
            raise CompositionError(f"no recorded Markov quilt plan covers node {v!r}; "
                                   + _ADVICE)
        worst = max(worst, min(e.influence + sum(w.loss(e.nearby) for w in weights)
                               for e in entries[v]))
    return worst


def _refuse(items: Items, why: str) -> CompositionError:
    (i, a), (j, b) = items[0], items[1]
    return CompositionError(f"releases {a.describe(i)} and {b.describe(j)} on the same data "
                            f"cannot be composed: {why}. {_ADVICE}")


def _independent_bound(framework: Framework, rest: Items) -> float:
    total = 0.0
    for i, r in rest:
        c = r.calibration
        loss = _ratio(pair_range(c.query, framework), c.scale)
        if loss > c.epsilon * (1 + _RTOL):
            raise CompositionError(
                f"release {r.describe(i)} has noise scale {c.scale:g} but its query moves by "
                f"{pair_range(c.query, framework):g} along a protected pair (ε {loss:g} > "
                f"{c.epsilon:g}); it is not ε-private for this framework. {_ADVICE}")
        total += loss
    return total


def _compose_rest(framework: Framework, rest: Items) -> tuple[float, str]:
    """Bound and rule for the releases that are not dataset-level (at least two)."""
    if _single_node_pairs(framework) and dependence_reason(framework.scenarios) is None:
        return _independent_bound(framework, rest), (
            "independent records: sequential composition of the per-record (DP) guarantee, "
            "Kifer & Machanavajjhala 2014 Thm 6.1")
    cals = [r.calibration for _, r in rest]
    if not all(len(c.plan) for c in cals):
        plain = next(k for k, (_, r) in enumerate(rest) if not len(r.calibration.plan))
        shown = [rest[0], rest[plain]] if plain else [rest[0], rest[1]]
        raise _refuse(shown, f"{dependence_reason(framework.scenarios) or 'some pairs are joint'}"
                      ", and composition is proven here only for Markov Quilt Mechanism releases "
                      "(Song & Chaudhuri 2017), dataset-level (group DP) releases, or "
                      "independent records")
    if not _single_node_pairs(framework):
        raise _refuse(rest, "Markov quilt composition covers single-node pairs only")
    bound = quilt_bound(cals)
    if bound > sum(c.epsilon for c in cals) * (1 + _RTOL):
        raise _refuse(rest, f"their plans prove only ε ≤ {bound:g}, more than the sum of "
                      "their epsilons (inconsistent plans)")
    return bound, ("Markov Quilt Mechanism sequential composition (Song & Chaudhuri 2017, "
                   "arXiv:1707.02702), checked on the recorded quilts")


def _split_dataset_level(framework: Framework, items: Items) -> tuple[Items, float]:
    """(releases that are not dataset-level, Σ of the dataset-level ones' ε bounds)."""
    rest: Items = []
    bound = 0.0
    for i, r in items:
        c = r.calibration
        loss = _ratio(full_range(c.query, framework.scenarios), c.scale)
        if loss <= c.epsilon * (1 + _RTOL):
            bound += loss
        else:
            rest.append((i, r))
    return rest, bound


def _all_quilts_bound(framework: Framework, items: Items) -> float:
    """The quilt bound over every release when all carry plans (else inf)."""
    cals = [r.calibration for _, r in items]
    if not (_single_node_pairs(framework) and all(len(c.plan) for c in cals)):
        return float("inf")
    try:
        return quilt_bound(cals)
    except CompositionError:
        return float("inf")


def compose_bound(items: Items) -> tuple[float, str]:
    """Proven ε and rule for ``items`` = [(index, RecordedRelease), ...], two or more releases
    on one dataset label; raises CompositionError when no rule covers them.

    The bound is the sum over the dataset-level releases plus the bound of the rule covering the
    others, capped by the quilt bound over all releases and by Σ ε_k.
    """
    framework = items[0][1].calibration.framework
    for i, r in items[1:]:
        if not _same_framework(framework, r.calibration.framework):
            raise _refuse([items[0], (i, r)], "they were calibrated for different frameworks "
                          "(scenario objects or secret pairs differ)")
    rest, bound = _split_dataset_level(framework, items)
    if len(rest) <= 1:
        bound += sum(r.calibration.epsilon for _, r in rest)
        rule = "dataset-level (group DP) releases compose with any release"
    else:
        extra, rule = _compose_rest(framework, rest)
        bound += extra
    total = sum(r.calibration.epsilon for _, r in items)
    return min(bound, _all_quilts_bound(framework, items), total), rule
