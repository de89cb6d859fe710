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
  :mod:`pufferfish_pgm._chain_nodes`.

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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import ImpossibleSecretError, InvalidParameterError
from .influence import is_stationary, log_ratio, power_stack
from .mechanisms.base import PlanEntry

__all__ = ["ChainPlan", "NodeRanges", "pair_groups", "plan_chain", "query_prefix",
           "search_shared", "sigma_table", "window_terms"]

FIRST_WINDOW = 16


@dataclass(frozen=True)
class NodeRanges(Sequence):
    """A set of chain nodes stored as disjoint ranges (O(1) memory for a remote set).

    Examples
    --------
    >>> r = NodeRanges((range(0, 3), range(7, 9)))
    >>> len(r), list(r), 8 in r, r[3]
    (5, [0, 1, 2, 7, 8], True, 7)
    """

    ranges: tuple

    def __len__(self) -> int:
        return sum(len(r) for r in self.ranges)

    def __getitem__(self, k: int) -> int:  # type: ignore[override]
        k = k + len(self) if k < 0 else k
        for r in self.ranges:
            if k < len(r):
                return r[k]
            k -= len(r)
        raise IndexError("node index out of range")

    def __iter__(self):
        for r in self.ranges:
            yield from r

    def __contains__(self, node: object) -> bool:
        return any(node in r for r in self.ranges)


@dataclass(frozen=True, eq=False)
class ChainPlan(Sequence):
    """One :class:`PlanEntry` per secret node of a chain, stored compactly as arrays.

    ``left``/``right`` hold the distances a, b of the quilt nodes (0 for an absent side);
    entries are built on access, so memory stays linear in T. ``truncated`` flags nodes whose
    search reached ``max_window`` before it could prove optimality (their σ is still valid).
    """

    nodes: np.ndarray
    left: np.ndarray
    right: np.ndarray
    influence: np.ndarray
    sigma: np.ndarray
    truncated: np.ndarray
    length: int

    def __len__(self) -> int:
        return len(self.nodes)

    def __getitem__(self, k: int | slice) -> Any:  # type: ignore[override]
        if isinstance(k, slice):
            return [self[j] for j in range(len(self))[k]]
        i, a, b = int(self.nodes[k]), int(self.left[k]), int(self.right[k])
        quilt = tuple(v for v, d in ((i - a, a), (i + b, b)) if d)
        lo, hi = (i - a + 1 if a else 0), (i + b if b else self.length)
        remote = tuple(r for r in (range(0, lo - 1 if a else 0),
                                   range(hi + 1 if b else self.length, self.length)) if r)
        return PlanEntry(node=i, quilt=quilt, nearby=range(lo, hi), remote=NodeRanges(remote),
                         influence=float(self.influence[k]), sigma=float(self.sigma[k]),
                         trivial=not (a or b))

    def __iter__(self):
        return (self[k] for k in range(len(self)))

    @property
    def sigma_max(self) -> float:
        """σ_max = max_i σ_i (0 for an empty plan)."""
        return float(self.sigma.max(initial=0.0))

    @property
    def worst_node(self) -> int | None:
        """A node reaching σ_max."""
        return int(self.nodes[np.argmax(self.sigma)]) if len(self) else None


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


def window_terms(transition: np.ndarray, pairs: np.ndarray, window: int) -> tuple:
    """Left log-ratios ``(W, k, m)`` = log P^a[x,s]/P^a[x,s'] and D_b ``(W, m)`` for a, b <= W."""
    powers = power_stack(transition, window + 1)[1:]
    s, s2 = pairs[:, 0], pairs[:, 1]
    left = log_ratio(powers[:, :, s], powers[:, :, s2])
    right = log_ratio(powers[:, s, :], powers[:, s2, :]).max(axis=2)
    return left, right


def sigma_table(card: np.ndarray, influence: np.ndarray, epsilon: float) -> np.ndarray:
    """card / (ε - e) where e < ε, else inf (0 for an empty nearby block)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = card / (epsilon - influence)
    return np.where(influence < epsilon, out, np.inf)


def _stationary_tables(members: Sequence, pairs: np.ndarray, window: int) -> tuple:
    """E(a, b) for a, b <= W plus the one-sided rows, for stationary members (node-free)."""
    us, ds = [], []
    for chain in members:
        left, right = window_terms(chain.transition, pairs, window)
        pi = chain.initial
        support = pi > 0
        active = support[pairs[:, 0]] & support[pairs[:, 1]]
        s, s2 = pairs[active, 0], pairs[active, 1]
        best_x = np.where(support[None, :, None], left[:, :, active], -np.inf).max(axis=1)
        us.append(best_x + np.log(pi[s2]) - np.log(pi[s]))
        ds.append(right[:, active])
    u, d = np.concatenate(us, axis=1), np.concatenate(ds, axis=1)
    both = np.zeros((window, window))
    for j in range(u.shape[1]):  # loop over (θ, pair): avoids a (W, W, J) array
        both = np.maximum(both, u[:, j, None] + d[None, :, j])
    return both, d.max(axis=1, initial=0.0), u.max(axis=1, initial=0.0)


def _prefix_min_2d(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Minimum of ``table[:A, :B]`` for every (A, B), with the flat index where it sits."""
    val, arg = table.copy(), np.arange(table.size).reshape(table.shape)
    for view_v, view_a in ((val, arg), (val.T, arg.T)):
        for r in range(1, view_v.shape[0]):  # a running min carrying argmins: O(W) numpy calls
            better = view_v[r - 1] < view_v[r]
            view_v[r] = np.where(better, view_v[r - 1], view_v[r])
            view_a[r] = np.where(better, view_a[r - 1], view_a[r])
    return val, arg


@dataclass
class _Best:
    """Running best option per node (a mutable accumulator local to one search)."""

    sigma: np.ndarray
    left: np.ndarray
    right: np.ndarray
    influence: np.ndarray

    @classmethod
    def trivial(cls, n: int, sigma: float) -> _Best:
        zero = np.zeros(n, dtype=np.int64)
        return cls(np.full(n, sigma), zero, zero.copy(), np.zeros(n))

    def offer(self, rows: np.ndarray, sigma: np.ndarray, left: Any, right: Any,
              influence: np.ndarray) -> None:
        take = sigma < self.sigma[rows]
        rows = rows[take]
        self.sigma[rows] = sigma[take]
        self.left[rows] = np.broadcast_to(left, take.shape)[take]
        self.right[rows] = np.broadcast_to(right, take.shape)[take]
        self.influence[rows] = influence[take]


def _shared_round(tables: tuple, nodes: np.ndarray, length: int, window: int,
                  epsilon: float) -> tuple[_Best, np.ndarray]:
    """Exact best option within the window for every node, from node-free tables."""
    both, left_absent, right_absent = tables
    steps = np.arange(1, window + 1)
    val, arg = _prefix_min_2d(sigma_table(steps[:, None] + steps[None, :] - 1, both, epsilon))
    best = _Best.trivial(len(nodes), length / epsilon)
    span_l, span_r = np.minimum(nodes, window), np.minimum(length - 1 - nodes, window)
    rows = np.flatnonzero((span_l > 0) & (span_r > 0))
    flat = arg[span_l[rows] - 1, span_r[rows] - 1]
    best.offer(rows, val[span_l[rows] - 1, span_r[rows] - 1], flat // window + 1,
               flat % window + 1, both.ravel()[flat])
    for left_side in (True, False):  # one side absent: card = (that side's length) + distance
        far = nodes if left_side else length - 1 - nodes
        span, row_e = (span_r, left_absent) if left_side else (span_l, right_absent)
        rows = np.flatnonzero(far <= window)
        sig = sigma_table(far[rows, None] + steps[None, :], row_e[None, :], epsilon)
        sig[steps[None, :] > span[rows, None]] = np.inf
        pick = sig.argmin(axis=1)
        dist = pick + 1
        best.offer(rows, sig[np.arange(len(rows)), pick], 0 if left_side else dist,
                   dist if left_side else 0, row_e[pick])
    outside = (nodes > window) | (length - 1 - nodes > window)
    return best, ~outside | ((window + 1) / epsilon >= best.sigma)


def grow_window(round_fn: Callable[[int, np.ndarray], tuple], count: int, length: int,
                trivial: float, max_window: int,
                too_costly: Callable[[int, np.ndarray], bool] | None = None,
                ) -> tuple[_Best, np.ndarray]:
    """Double the window until ``round_fn(window, rows)`` settles every row.

    Growth stops at ``max_window``, or earlier when ``too_costly(next_window, rows)`` says
    the next round is too expensive. Returns the best options and a mask of the rows still
    unsettled then (their σ is the best found in the window or the trivial one: valid, maybe
    not optimal).
    """
    cap = max(1, min(length - 1, max_window))
    window = min(cap, FIRST_WINDOW)
    done = _Best.trivial(count, trivial)
    truncated = np.zeros(count, dtype=bool)
    pending = np.arange(count)
    while len(pending):
        best, settled = round_fn(window, pending)
        nxt = min(cap, 2 * window)
        last = window >= cap or (too_costly is not None and too_costly(nxt, pending[~settled]))
        keep = settled | last
        for name in ("sigma", "left", "right", "influence"):
            getattr(done, name)[pending[keep]] = getattr(best, name)[keep]
        truncated[pending[keep & ~settled]] = True
        pending = pending[~keep]
        window = nxt
    return done, truncated


def search_shared(table_fn: Callable[[int], tuple], nodes: np.ndarray, length: int,
                  epsilon: float, max_window: int) -> tuple[_Best, np.ndarray]:
    """The window search when one set of node-free tables serves every node."""
    return grow_window(
        lambda w, rows: _shared_round(table_fn(w), nodes[rows], length, w, epsilon),
        len(nodes), length, length / epsilon, max_window)


def _check_possible(framework: Any, groups: list) -> None:
    """Every secret must be possible under some θ (as :func:`compile_secrets` requires)."""
    from ._chain_nodes import possible_states

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
            best, cut = search_shared(
                lambda w, p=pairs: _stationary_tables(cls.members, p, w), nodes, length,
                epsilon, max_window)
        else:
            from ._chain_nodes import search_nodes

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
