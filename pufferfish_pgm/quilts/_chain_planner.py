"""Markov quilts for Markov chains: the exact planner MQMExact and the MQMApprox search.

A quilt of X_i is a left node X_{i-a} (or none) and a right node X_{i+b} (or none); the nearby
set is every node strictly between them (to the chain end on an absent side) and the rest is
remote (DESIGN §3.3). For every secret node the planner finds

    σ_i = min over (a, b) of card(X_N) / (ε - e(a, b))      (e >= ε: unusable)

where card(X_N) counts the nearby nodes the query sums over (the MQM proof only needs the
query's sensitivity to the nearby block, which is L per such node) and e(a, b) is the exact
max-influence over the class and the node's pairs. The trivial quilt (both sides absent) is
always available.

How it stays fast (all bounds proven, no guesswork):

* Every term depends on powers P^a, P^b with a, b <= W, a search window shared by all nodes.
  An option outside the window has card >= c_out (the card of the cheapest such option, as
  card grows with a and b) and influence >= 0, so σ >= c_out / ε: once that is >= the best σ
  found for a node, nothing outside can beat it. W doubles until every node is settled, up to
  ``max_window`` or, for the per-node search, a work budget (nodes still unsettled keep the
  best σ found, which is a valid upper bound, and are reported as truncated).
* Time-varying chains (one matrix per step) have no stationary middle: every node is searched
  with its own step products (:mod:`pufferfish_pgm.quilts._chain_varying`).
* With stationary starts and a query over all nodes, the left terms do not depend on the node,
  so one (W, W) table of σ serves every node through 2-D prefix minima (the middle nodes are
  identical; only nodes within W of an end differ). Other cases go through
  :mod:`pufferfish_pgm.quilts._chain_nodes`.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> from pufferfish_pgm.secrets import Framework
>>> from pufferfish_pgm.queries import Count
>>> mc = MarkovChainScenario([[0.9, 0.1], [0.1, 0.9]], "stationary", 100)
>>> plan = plan_chain(Framework(mc), Count(1), 1.0)
>>> len(plan), round(plan.sigma_max, 3), plan[50].quilt
(100, 31.738, (38, 62))
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from .._budget import check_allocation
from ..errors import ImpossibleSecretError, InvalidParameterError
from ..secrets._engine import support_at, support_cycle
from ._chain_nodes import Prefix, convergence, possible_states, search_nodes, sharing_start
from ._chain_varying import search_varying
from ._chain_windows import (
    _stationary_tables,
    search_shared,
)
from ._influence import is_stationary
from ._plan import ChainPlan

__all__ = ["pair_groups", "pair_runs", "plan_chain", "plan_runs", "query_prefix"]

#: Bytes per secret node searched on its own (per-node arrays of the search and the plan).
NODE_BYTES = 160


def pair_groups(framework: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    """Secret nodes grouped by their set of ordered state pairs: [(nodes, pairs (m, 2))].

    The node arrays are built from :func:`pair_runs` (checked against the memory budget).

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework, secret_pairs
    >>> mc = MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 4)
    >>> [(n.tolist(), p.tolist()) for n, p in pair_groups(Framework(mc, secret_pairs(mc, [1, 3])))]
    [([1, 3], [[0, 1], [1, 0]])]
    """
    return [(_expand(runs, "the pair groups"), pairs) for runs, pairs in pair_runs(framework)]


def pair_runs(framework: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    """Secret nodes grouped by their set of ordered state pairs, as runs of consecutive
    nodes: [(runs (r, 2) of [start, stop), pairs (m, 2))]. O(1) in T for the default
    framework (every pair of possible states) on chains whose supports settle.

    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework
    >>> mc = MarkovChainScenario([[0.5, 0.5], [0.0, 1.0]], [1.0, 0.0], 10**6)
    >>> [(r.tolist(), p.tolist()) for r, p in pair_runs(Framework(mc))]
    [([[1, 1000000]], [[0, 1], [1, 0]])]
    """
    runs = _default_runs(framework)
    if runs is None:
        runs = [(_runs_of(nodes), pairs) for nodes, pairs in _coded_groups(framework)]
    return runs


def _default_runs(framework: Any) -> list | None:
    """Pair runs of a default framework from the members' support cycles, or None (pairs
    given, periodic supports, or no pair at all: the per-pair path decides)."""
    if getattr(framework, "_explicit", True) is not None or not framework._skips:
        return None     # private fields of Framework: the pairs were given one by one
    members = framework.scenarios.members
    cycles = [support_cycle(m) for m in members]
    if any(len(head) - start != 1 for head, start in cycles):
        return None
    length, k = members[0].length, members[0].k
    rows = min(length, max(len(head) for head, _ in cycles) + 1)
    union = np.zeros((rows, k), dtype=bool)
    for chain in members:       # row rows-1 is the settled support: it holds to the end
        union |= support_at(chain, np.arange(rows))
    if not (union.sum(axis=1) >= 2).any():
        return None
    bounds = np.append(np.arange(rows), length)
    groups: dict[bytes, list] = {}
    for t in range(rows):
        groups.setdefault(union[t].tobytes(), []).append((bounds[t], bounds[t + 1]))
    out = []
    for key, spans in groups.items():
        mask = np.frombuffer(key, dtype=bool)
        pairs = np.array([(s, s2) for s in range(k) for s2 in range(k)
                          if s != s2 and mask[s] and mask[s2]], dtype=np.int64)
        if len(pairs):
            code = sum(1 << int(s * k + s2) for s, s2 in pairs)
            out.append((code, _merge(np.array(spans, dtype=np.int64)), pairs))
    return [(runs, pairs) for _, runs, pairs in sorted(out, key=lambda g: g[0])]


def _merge(runs: np.ndarray) -> np.ndarray:
    """Sorted runs with touching neighbours joined."""
    if len(runs) < 2:
        return runs
    new = np.ones(len(runs), dtype=bool)
    new[1:] = runs[1:, 0] != runs[:-1, 1]
    first = np.flatnonzero(new)
    last = np.append(first[1:], len(runs)) - 1
    return np.stack([runs[first, 0], runs[last, 1]], axis=1)


def _runs_of(nodes: np.ndarray) -> np.ndarray:
    """Runs [start, stop) of sorted distinct nodes."""
    nodes = np.asarray(nodes, dtype=np.int64)
    cut = np.flatnonzero(np.diff(nodes) != 1) + 1
    first, last = np.append(0, cut), np.append(cut, len(nodes)) - 1
    return np.stack([nodes[first], nodes[last] + 1], axis=1) if len(nodes) else \
        np.zeros((0, 2), dtype=np.int64)


def _expand(runs: np.ndarray, what: str) -> np.ndarray:
    """The nodes of ``runs`` (checked against the memory budget)."""
    count = int((runs[:, 1] - runs[:, 0]).sum())
    check_allocation(NODE_BYTES * count, what=f"{what} ({count} secret nodes, one by one)")
    if len(runs) == 1:
        return np.arange(runs[0, 0], runs[0, 1])
    return np.concatenate([np.arange(a, b) for a, b in runs]).astype(np.int64)


def _coded_groups(framework: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    """Pair groups from the framework's per-pair codes (pairs given one by one: their size).

    Uses :meth:`Framework.node_pair_codes`, which needs no pair objects for all-pairs chains.
    """
    cls = framework.scenarios
    k = len(cls.members[0].states_of(0))
    coded = framework.node_pair_codes()
    if coded is None:
        raise InvalidParameterError(
            "the Markov quilt mechanism protects single-node secrets; the framework has a joint "
            "secret pair (use the exact or Wasserstein mechanism for joint secrets)")
    nodes, one, two = np.asarray(coded[0], dtype=np.int64), coded[1], coded[2]
    codes = np.concatenate([one * k + two, two * k + one])
    width = (k * k + 62) // 63
    check_allocation(8 * (4 * len(codes) + cls.members[0].length * width),
                     what=f"the pair groups of {len(codes) // 2} secret pairs")
    words = np.zeros((cls.members[0].length, width), dtype=np.int64)
    np.bitwise_or.at(words, (np.tile(nodes, 2), codes // 63), np.left_shift(1, codes % 63))
    used = np.flatnonzero(words.any(axis=1))
    masks, inverse = np.unique(words[used], axis=0, return_inverse=True)
    groups = []
    for g, mask in enumerate(masks):
        bits = [w * 63 + j for w, word in enumerate(mask) for j in range(63) if word >> j & 1]
        groups.append((used[inverse.ravel() == g], np.array([divmod(c, k) for c in bits])))
    return groups


def query_prefix(query: Any, scenarios: Any) -> np.ndarray:
    """Prefix counts C (length T+1) of the query's nodes: card of [lo, hi] is C[hi+1] - C[lo].

    A node the query lists twice counts twice (F then moves twice as much when it changes).
    """
    length = len(scenarios.members[0].nodes)
    if getattr(query, "nodes", None) is None:
        return np.arange(length + 1)
    counts = np.zeros(length, dtype=np.int64)
    np.add.at(counts, np.array(query.node_list(scenarios), dtype=np.int64), 1)
    return np.concatenate([[0], np.cumsum(counts)])


def _check_possible(framework: Any, groups: list) -> None:
    """Every secret must be possible under some θ (as :func:`compile_secrets` requires)."""

    for nodes, pairs in groups:
        possible = np.zeros((len(nodes), framework.scenarios.members[0].k), dtype=bool)
        for chain in framework.scenarios:
            possible |= possible_states(chain, nodes)
        bad = np.argwhere(~possible[:, pairs[:, 0]])
        if len(bad):
            node, state = int(nodes[bad[0][0]]), int(pairs[bad[0][1], 0])
            name = framework.scenarios.states_of(node)[state]
            raise ImpossibleSecretError(
                f"secret {node}={name} has probability 0 under every scenario of the class; "
                "remove it from the pairs (it cannot be true, so there is nothing to protect)")


def plan_chain(framework: Any, query: Any, epsilon: float, *,
               max_window: int = 2048) -> ChainPlan:
    """MQMExact: the optimal chain quilt of every secret node (see the module docstring).

    Only the nodes within ``max_window`` of an end (or before the members' sharing point)
    are searched one by one; every other node of a pair group has the same answer (one
    class), so time and memory do not grow with T for a query over every node.
    """
    members = framework.scenarios.members
    length = members[0].length
    prefix = Prefix(length) if getattr(query, "nodes", None) is None else \
        Prefix(length, query_prefix(query, framework.scenarios))
    if prefix.counts is not None and np.array_equal(prefix.counts, np.arange(length + 1)):
        prefix = Prefix(length)
    groups = _default_runs(framework)
    if groups is None:
        coded = _coded_groups(framework)
        _check_possible(framework, coded)
        groups = [(_runs_of(nodes), pairs) for nodes, pairs in coded]
    cap = max(1, min(length - 1, max_window))
    if any(m.time_varying for m in members):      # every node its own terms: no class
        return plan_runs(lambda nodes, pairs: search_varying(
            members, nodes, pairs, prefix, epsilon, max_window), groups, length, None, cap)
    if prefix.counts is None and all(is_stationary(m) for m in members):
        return plan_runs(lambda nodes, pairs: search_shared(
            partial(_stationary_tables, members, pairs), nodes, length, epsilon, max_window),
            groups, length, cap + 1, cap)
    converged = [convergence(m, length) for m in members]
    start = sharing_start(converged, cap) if prefix.counts is None else None
    return plan_runs(lambda nodes, pairs: search_nodes(
        members, nodes, pairs, prefix, epsilon, max_window, converged), groups, length,
        None if start is None else max(start, cap + 1), cap)


def plan_runs(search: Callable[[np.ndarray, np.ndarray], tuple], groups: list, length: int,
              middle: int | None, cap: int) -> ChainPlan:
    """Run ``search(nodes, pairs)`` on each group's representatives and spread the answers.

    Nodes from ``middle`` to T - 2 - ``cap`` are one class (searched through its first
    node); every other node is searched on its own. ``groups``: [(runs, pairs)].
    """
    parts = []
    for runs, pairs in groups:
        lone, shared = _split(runs, middle, length - 1 - cap)
        nodes = _expand(lone, "the quilt search near the chain ends")
        if len(shared):
            nodes = np.sort(np.append(nodes, shared[0, 0]))
        best, cut = search(nodes, pairs)
        values = [best.left, best.right, best.influence, best.sigma, cut]
        spans = np.stack([nodes, nodes + 1], axis=1)
        if len(shared):     # the class representative stands for every shared run
            at = int(np.searchsorted(nodes, shared[0, 0]))
            keep = np.arange(len(nodes)) != at
            spans = np.concatenate([spans[keep], shared])
            values = [np.concatenate([v[keep], np.repeat(v[at], len(shared))])
                      for v in values]
        parts.append((spans, values))
    spans = np.concatenate([p[0] for p in parts])
    order = np.argsort(spans[:, 0], kind="stable")
    values = [np.concatenate([p[1][j] for p in parts])[order] for j in range(5)]
    return _merged_plan(spans[order], values, length)


def _split(runs: np.ndarray, middle: int | None, stop: int) -> tuple[np.ndarray, np.ndarray]:
    """Runs outside [middle, stop) (searched node by node) and inside (one class)."""
    if middle is None or middle >= stop:
        return runs, np.zeros((0, 2), dtype=np.int64)
    inner = np.stack([np.maximum(runs[:, 0], middle), np.minimum(runs[:, 1], stop)], axis=1)
    before = np.stack([runs[:, 0], np.minimum(runs[:, 1], middle)], axis=1)
    after = np.stack([np.maximum(runs[:, 0], stop), runs[:, 1]], axis=1)
    outer = np.concatenate([before, after])
    outer = outer[outer[:, 1] > outer[:, 0]]
    return outer[np.argsort(outer[:, 0])], inner[inner[:, 1] > inner[:, 0]]


def _merged_plan(spans: np.ndarray, values: list, length: int) -> ChainPlan:
    """A ChainPlan from sorted runs, touching runs with equal values joined."""
    new = np.ones(len(spans), dtype=bool)
    new[1:] = spans[1:, 0] != spans[:-1, 1]
    for v in values:
        new[1:] |= v[1:] != v[:-1]
    first = np.flatnonzero(new)
    last = np.append(first[1:], len(spans)) - 1
    return ChainPlan(starts=spans[first, 0], stops=spans[last, 1],
                     run_left=values[0][first], run_right=values[1][first],
                     run_influence=values[2][first], run_sigma=values[3][first],
                     run_truncated=values[4][first], length=length)
