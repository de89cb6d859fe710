"""The streams of the streamed exact calibration: one per fixed-start chain (internal).

A :class:`ChainStream` holds one fixed-start chain of a framework, its packed query weights
and its single-node pairs by node (state indices); :func:`chain_streams` builds them, or says
that the framework is not a class of fixed-start chains with a count (None). The size checks
refuse, from the sizes alone and before any law is computed, streams whose forward rows could
pass the memory budget. Used by :mod:`pufferfish_pgm.privacy_loss._streamed_exact`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from .._budget import check_allocation
from ..queries import Count, LinearQuery
from ..queries._engine import LOG_DELTA, fixed_start_variants, pack_queries
from ..scenarios import MarkovChainScenario
from ._bisection import SLACK
from ._mgf_bracket import MgfTask
from ._middle_nodes import DISTANCES, held_bytes

__all__ = ["STREAM_CELLS", "ChainStream", "chain_streams", "check_stream_sizes", "cut_level"]

#: Stored laws above this many cells (over all scenarios) are streamed instead (2^21: 16 MiB;
#: measured crossover between 0.6 M cells, stored 1.5x faster, and 3.6 M, streamed 1.7x faster).
STREAM_CELLS = 1 << 21


@dataclass(frozen=True, eq=False)
class ChainStream:
    """One fixed-start chain, its packed query weights and its pairs by node."""

    theta: int
    scenario: MarkovChainScenario
    weights: np.ndarray
    offset: int
    step: int
    nodes: dict

    @property
    def cells(self) -> int:
        """Cells of the stored layout (laws of every node's states): what streaming saves."""
        return len(self.nodes) * self.scenario.k * (int(self.weights.max(axis=1).sum()) + 1)

    @cached_property
    def codes(self) -> np.ndarray:
        """Every pair as a row ``(node, a, b)`` of state indices, in the order of ``nodes``
        (built once per stream: the bracket and the raise pass both read it)."""
        rows = [(t, a, b) for t, pairs in self.nodes.items() for _, a, b in pairs]
        return np.array(rows, dtype=np.int64).reshape(-1, 3)

    def mgf_task(self, skip: frozenset = frozenset()) -> MgfTask:
        """The generating-function task of the pairs of the nodes not in ``skip`` (a failing
        pair among them fails the audit all the same)."""
        rows = self.codes
        if skip:
            rows = rows[~np.isin(rows[:, 0], np.fromiter(skip, np.int64, len(skip)))]
        node, first, second = (np.ascontiguousarray(rows[:, j]) for j in range(3))
        return MgfTask(self.scenario.transition, self.scenario.initial_distribution,
                       self.weights, node, first, second, float(self.step))


def chain_streams(framework: Any, query: Any) -> list[ChainStream] | None:
    """The streams of a framework, or None when it is not a class of fixed-start chains with
    a Count or LinearQuery and every pair's secrets on one shared node."""
    if not isinstance(query, (Count, LinearQuery)):
        return None
    scenarios = framework.scenarios
    if not all(isinstance(m, MarkovChainScenario) and not m.initial_is_any for m in scenarios):
        return None
    _check_size_early(scenarios, query)
    if not framework.pairs:
        return None
    nodes: dict[int, list] = {}
    for pair in framework.pairs:
        one, two = pair.first.evidence, pair.second.evidence
        if len(one) != 1 or len(two) != 1 or one.keys() != two.keys():
            return None
        (node, a), = one.items()
        nodes.setdefault(node, []).append((pair, a, two[node]))
    packed = pack_queries(scenarios, [query])
    out = []
    for theta, scenario in enumerate(scenarios):
        for variant in fixed_start_variants(scenario):
            table = np.array([packed.weights.get(t, np.zeros(variant.k, np.int64))
                              for t in variant.nodes], dtype=np.int64)
            out.append(ChainStream(theta, variant, table, int(packed.offsets[0]),
                                   int(packed.steps[0]), _coded(variant, nodes)))
    return out


def _coded(variant: MarkovChainScenario, nodes: dict) -> dict:
    """The pairs by node with their states as indices (each node and state checked once)."""
    index = {s: i for i, s in enumerate(variant.states)}
    out = {}
    for t, pairs in nodes.items():
        node = variant.check_node(t)
        code = {s: index[s] if s in index else variant.state_index(t, s)
                for s in {x for _, a, b in pairs for x in (a, b)}}
        out[node] = tuple((p, code[a], code[b]) for p, a, b in pairs)
    return out


def _check_size_early(scenarios: Any, query: Any) -> None:
    """:func:`check_stream_sizes` before the pairs and weights are built (seconds at
    T = 100,000), on a lower bound of its figure. A query that weighs the states of its
    ``n`` nodes unequally has a packed weight >= 1 on each, so the uncut row of node ``t``
    holds at least ``t + 2`` counts (the prefix sums are least with the counted nodes last).
    Without a middle plan every node's row is held: ``8 k (T + n(n + 1)/2)`` bytes. A plan
    (:func:`~pufferfish_pgm.privacy_loss._middle_nodes.middle_plan`: a homogeneous chain
    counted at every node) holds only the rows of the nodes outside its middle and of one
    representative, least with the shortest distance it may take (:func:`_least_held`).
    Above the budget, the exact figure is too, so the answer is the same."""
    weight = dict(query.weights)
    unequal = [m for m in scenarios if len({weight.get(s, 0) for s in m.states}) > 1]
    if not unequal:
        return
    counted = len(query.node_list(scenarios))
    sizes = [_least_held(m, counted) for m in unequal]
    big = unequal[int(np.argmax(sizes))]
    check_allocation(max(sizes),
                     what=f"the forward count rows of chain {big.name!r} (T={big.length:,}, "
                          f"k={big.k}, held while its laws stream; at most this much, fewer "
                          "where the cuts remove counts)")


def _least_held(chain: MarkovChainScenario, counted: int) -> int:
    """Fewest bytes of forward rows a stream of ``chain`` holds when ``counted`` of its nodes
    carry weight (the lower bound of :func:`_check_size_early`).

    Examples
    --------
    >>> p = np.full((2, 2), 0.5)
    >>> _least_held(MarkovChainScenario(p, "stationary", 10), 10)      # no plan below 48
    1040
    >>> _least_held(MarkovChainScenario(p, "stationary", 100_000), 100_000)   # two ends
    26400800
    """
    length, k = chain.length, chain.k
    if chain.time_varying or counted < length or 3 * DISTANCES[0] > length:
        return 8 * k * (length + counted * (counted + 1) // 2)
    d = DISTANCES[0]         # nodes [0, d), [T - d, T) and T // 2; node t holds >= t + 2
    ends = sum(range(2, d + 2)) + sum(range(length - d + 2, length + 2))
    return 8 * k * (ends + length // 2 + 2)


def check_stream_sizes(streams: list[ChainStream], plans: list | None = None) -> None:
    """Refuse, from the sizes alone, streams whose forward rows could pass the memory budget
    (:func:`~pufferfish_pgm.queries._truncated_count_law.forward_bytes`: the uncut rows, a
    proven upper bound of what one stream holds; with a middle plan only the rows of the
    nodes audited one by one are held); the same answer whatever the load."""
    if not streams:
        return
    plans = plans or [None] * len(streams)
    sizes = [held_bytes(s.weights, p) for s, p in zip(streams, plans, strict=True)]
    big = streams[int(np.argmax(sizes))]
    length, k = big.weights.shape
    check_allocation(max(sizes),
                     what=f"the forward count rows of chain {big.scenario.name!r} (T={length:,}, "
                          f"k={k}, held while its laws stream; at most this much, fewer where "
                          "the cuts remove counts)")


def cut_level(length: int, epsilon: float | None) -> float:
    """``log δ`` of the cuts: ``LOG_DELTA``, lowered so that the bound they add to a pair's ε
    stays below ``1e-3 · SLACK · ε`` (tiny targets; None: an audit, the default).

    Examples
    --------
    >>> round(cut_level(100, 1.0), 1), round(cut_level(10_080, 1.0), 1)
    (-46.0, -46.5)
    >>> round(cut_level(10_080, 1e-15), 1)       # the cuts keep 1e-15 in sight
    -81.1
    """
    if epsilon is None:
        return LOG_DELTA
    return min(LOG_DELTA, float(np.log(1e-3 * SLACK * epsilon / (8.0 * (2 * length + 1)))))
