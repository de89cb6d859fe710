"""What the network planner returns: the plan, what limited its search, and why a node kept
the trivial quilt (internal; the planner is :mod:`._network_planner`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ._plan import PlanEntry

__all__ = ["NO_CANDIDATE", "TRIVIAL_REASONS", "NetworkPlan", "collect_plan", "trivial_reason"]


@dataclass(frozen=True)
class NetworkPlan:
    """The planner's result: entries (one per secret node) and what limited the search.

    ``skipped`` maps a node to the number of promising candidates left out because their
    joint table exceeds ``max_quilt_states``; ``over_budget`` to the number left out because
    computing their influence needs a table above the memory budget; ``cut`` lists nodes
    whose candidate list was cut at ``max_candidates``. ``trivial_reasons`` maps why a node
    kept the trivial quilt (:func:`trivial_reason`) to the number of such nodes.
    ``held_bytes`` is the planner's upper bound of the bytes the entries hold (their own node
    sets and those shared per component), checked against the memory budget as they were
    built. ``bounded`` counts the nodes whose quilt's influence is a proven upper bound (the
    local search's prior term over the quilt's region), not the exact value.
    """

    entries: tuple
    skipped: dict
    cut: tuple
    over_budget: dict = field(default_factory=dict)
    trivial_reasons: dict = field(default_factory=dict)
    held_bytes: int = 0
    bounded: int = 0


#: Why a node kept the trivial quilt, by what stopped the better candidates (first that holds).
TRIVIAL_REASONS = {
    "enough": "sigma_max: another node already needs the trivial quilt's sigma; not searched",
    "budget": "memory budget: a candidate's influence needs a table above it",
    "size": "max_quilt_states: a candidate's joint table is larger",
    "region": "max_region: a candidate's nearby set or influence region is larger",
    "evaluated": "influence: every candidate tried has e >= epsilon or no smaller sigma",
}
#: The reason when no candidate could beat the trivial quilt even at influence 0.
NO_CANDIDATE = "no candidate: every quilt leaves all the query's nodes nearby"


def trivial_reason(entry: PlanEntry, counts: Counter) -> str | None:
    """Why ``entry`` is the trivial quilt (None when it is not), from the planner's counts.

    Examples
    --------
    >>> e = PlanEntry(node="a", quilt=(), nearby=("a",), remote=(), influence=0.0,
    ...               sigma=1.0, trivial=True)
    >>> trivial_reason(e, Counter(evaluated=2, size=1))
    "max_quilt_states: a candidate's joint table is larger"
    """
    if not entry.trivial:
        return None
    return next((text for key, text in TRIVIAL_REASONS.items() if counts[key]), NO_CANDIDATE)


def collect_plan(results: Iterable[tuple[Any, tuple[PlanEntry, Counter, bool]]]) -> NetworkPlan:
    """A :class:`NetworkPlan` from ``(node, (entry, skip counts, was cut))`` per secret node."""
    entries, skipped, over, cut = [], {}, {}, []
    reasons: Counter = Counter()
    bounded = 0
    for node, (entry, counts, was_cut) in results:
        entries.append(entry)
        bounded += counts["bounded"]
        if counts["size"]:
            skipped[node] = counts["size"]
        if counts["budget"]:
            over[node] = counts["budget"]
        if was_cut:
            cut.append(node)
        reasons[trivial_reason(entry, counts)] += 1
    reasons.pop(None, None)
    return NetworkPlan(entries=tuple(entries), skipped=skipped, cut=tuple(cut),
                       over_budget=over, trivial_reasons=dict(reasons), bounded=bounded)
