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

from functools import partial
from typing import Any

import numpy as np

from ..errors import ImpossibleSecretError, InvalidParameterError
from ._chain_nodes import possible_states, search_nodes
from ._chain_windows import (
    _stationary_tables,
    search_shared,
)
from ._influence import is_stationary
from ._plan import ChainPlan

__all__ = ["pair_groups", "plan_chain", "query_prefix"]


def pair_groups(framework: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    """Secret nodes grouped by their set of ordered state pairs: [(nodes, pairs (m, 2))].

    Uses :meth:`Framework.node_pair_codes`, which needs no pair objects for all-pairs chains.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework, secret_pairs
    >>> mc = MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 4)
    >>> [(n.tolist(), p.tolist()) for n, p in pair_groups(Framework(mc, secret_pairs(mc, [1, 3])))]
    [([1, 3], [[0, 1], [1, 0]])]
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
    words = np.zeros((cls.members[0].length, (k * k + 62) // 63), dtype=np.int64)
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
    """MQMExact: the optimal chain quilt of every secret node (see the module docstring)."""
    cls = framework.scenarios
    length = len(cls.nodes)
    prefix = query_prefix(query, cls)
    groups = pair_groups(framework)
    _check_possible(framework, groups)
    full = np.array_equal(prefix, np.arange(length + 1))
    shared = full and all(is_stationary(m) for m in cls)
    parts = []
    for nodes, pairs in groups:
        if shared:
            best, cut = search_shared(partial(_stationary_tables, cls.members, pairs), nodes,
                                      length, epsilon, max_window)
        else:
            best, cut = search_nodes(cls.members, nodes, pairs, prefix, epsilon, max_window)
        parts.append((nodes, best, cut))
    return _assemble(parts, length)


def _assemble(parts: list, length: int) -> ChainPlan:
    nodes = np.concatenate([p[0] for p in parts])
    order = np.argsort(nodes, kind="stable")
    cat = {name: np.concatenate([getattr(p[1], name) for p in parts])[order]
           for name in ("sigma", "left", "right", "influence")}
    return ChainPlan(nodes=nodes[order], left=cat["left"], right=cat["right"],
                     influence=cat["influence"], sigma=cat["sigma"],
                     truncated=np.concatenate([p[2] for p in parts])[order], length=length)
