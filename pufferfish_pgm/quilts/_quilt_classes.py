"""Node classes of the exact quilt mechanism on chains (``docs/exact-quilt.md``).

The bound of a node depends on the node only through (i) which quilts fit (distances to both
ends), (ii) the prior term ``log q_i(s')/q_i(s)`` and (iii) the supports of the quilt nodes.
Nodes that agree on all three share one evaluation. Past the proven sharing point of
:func:`~pufferfish_pgm.quilts._chain_nodes.convergence` (supports constant, prior term within
1e-12 of its limit and bounded by it) and farther than the window from both ends, every node
is one class, evaluated with that proven upper bound of the prior term; for stationary
members this is every node at least ``window`` away from both ends, with the exact prior.
The other nodes are classes of their own.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> mc = MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 1000)
>>> classes = chain_classes([mc], np.arange(1000), np.array([[0, 1], [1, 0]]), 16,
...                         np.ones(1000))
>>> len(classes), max(len(c.nodes) for c in classes)
(34, 967)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..scenarios import MarkovChainScenario
from ._chain_nodes import _prior_terms, convergence, support_at
from ._chain_planner import pair_groups
from ._influence import log_ratio, power_stack
from ._quilt_laws import ChainBridges, ChainQuiltLaws
from ._quilt_varying import NodeQuiltLaws, VaryingBridges, prior_tables, varying_two_sided_prior

__all__ = ["NodeClass", "chain_candidates", "chain_classes", "chain_setup", "key_shape",
           "mixing_window", "quilt_nodes", "window_grid"]


@dataclass(frozen=True, eq=False)
class NodeClass:
    """Secret nodes that share one bound.

    ``node`` is a representative; ``head`` = i when i <= window (start tables usable), else
    -1; ``tail`` = T-1-i when <= window, else -1. ``possible`` (θ, k): secrets possible at the
    node; ``prior`` (θ, k, k): an upper bound of ``log q_i(s')/q_i(s)`` (exact for fixed-start
    nodes of their own class); ``support`` (θ, window+1, k): possible states of X_{i-a};
    ``mqm_sigma``: the largest MQM σ of its nodes (the fallback bound); ``fixed``: every θ has
    a fixed initial law (one-sided-left and empty quilts need it).
    """

    nodes: np.ndarray
    node: int
    head: int
    tail: int
    possible: np.ndarray
    prior: np.ndarray
    support: np.ndarray
    mqm_sigma: float
    fixed: bool

    def applies(self, distance: int, theta: np.ndarray, left: np.ndarray, s: np.ndarray,
                s2: np.ndarray) -> np.ndarray:
        """Which comparisons (or blockers) concern the class: both secrets possible, and the
        left quilt value possible at distance ``distance`` before the node."""
        ok = self.possible[theta, s] & self.possible[theta, s2]
        if distance:
            ok &= (left < 0) | self.support[theta, distance, np.maximum(left, 0)]
        return ok


def window_grid(window: int) -> list[int]:
    """Quilt distances tried: 1, 2, 3, 4 then about four per doubling, up to ``window``.

    >>> window_grid(40)
    [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 28, 32, 40]
    """
    out, step = {1, 2, 3, 4, 5, 6, 7, 8}, 2
    d = 8
    while d < window:
        d += step
        if d & (d - 1) == 0:
            step *= 2
        out.add(d)
    return sorted(x for x in out | {window} if x <= window)


def _two_sided_prior(chain: MarkovChainScenario, pairs: np.ndarray, distances: list[int],
                     length: int) -> np.ndarray:
    """The shared class's prior term of the quilts {X_{i-d}, X_{i+d}} for each d:
    max over the pairs and the quilt values of log P^d[u,s]/P^d[u,s'] + c(s, s') +
    log P^d[s,v]/P^d[s',v] (``docs/exact-quilt.md``, "Window"); inf where a pair is blocked
    or the chain never reaches its sharing point."""
    conv = convergence(chain, length)
    if conv is None:
        return np.full(len(distances), np.inf)
    powers = power_stack(chain.transition, max(distances) + 1)[distances]
    s, s2 = pairs[:, 0], pairs[:, 1]
    keep = conv.support[s] & conv.support[s2]
    s, s2 = s[keep], s2[keep]
    if not s.size:
        return np.zeros(len(distances))
    left = log_ratio(powers[:, :, s], powers[:, :, s2])            # (D, u, m)
    left = np.where(conv.support[None, :, None], left, -np.inf).max(axis=1)
    right = log_ratio(powers[:, s, :], powers[:, s2, :]).max(axis=2)   # (D, m)
    return (left + conv.prior[s, s2][None] + right).max(axis=1)


def mixing_window(members: Sequence, pairs: np.ndarray, epsilon: float, window: int,
                  tolerance: float) -> tuple[int, float]:
    """The smallest grid distance d <= ``window`` at which every member's two-sided quilts
    {X_{i-d}, X_{i+d}} of the shared class have a prior term <= ``tolerance``·ε (``window``
    when none has, or ``tolerance`` is 0), and that prior term at d. Wider quilts can gain
    at most that much in the bound, so the search stops there (``docs/exact-quilt.md``,
    "Window").

    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> mc = MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 1000)
    >>> pairs = np.array([[0, 1], [1, 0]])
    >>> d, prior = mixing_window([mc], pairs, 1.0, 256, 0.01)
    >>> d, bool(prior <= 0.01)
    (20, True)
    >>> mixing_window([mc], pairs, 1.0, 256, 0.0)[0]
    256
    """
    if not len(pairs):
        return window, 0.0
    grid = window_grid(window)
    worst = np.max([varying_two_sided_prior(m, pairs, grid) if m.time_varying else
                    _two_sided_prior(m, pairs, grid, m.length) for m in members], axis=0)
    ok = np.flatnonzero((worst <= tolerance * epsilon) & (tolerance > 0.0))
    at = int(ok[0]) if ok.size else len(grid) - 1
    return grid[at], float(worst[at])


def _share_from(members: Sequence, length: int, window: int) -> int:
    """First node from which every member's supports and prior bound are shared."""
    start = 0
    for chain in members:
        conv = convergence(chain, length)
        if conv is None:
            return length
        start = max(start, conv.t_conv, conv.t_s + window)
    return max(start, window)


def _own_class(members: Sequence, i: int, length: int, window: int, sigma: float) -> NodeClass:
    k = members[0].k
    pairs = np.array([(s, t) for s in range(k) for t in range(k)])
    times = i - np.arange(window + 1)
    support, prior, possible = [], [], []
    for chain in members:
        sup = support_at(chain, np.maximum(times, 0)) & (times >= 0)[:, None]
        support.append(sup)
        possible.append(sup[0])
        with np.errstate(divide="ignore", invalid="ignore"):
            c = _prior_terms(chain, pairs, i, np.array([0]))[0].reshape(k, k)
        prior.append(np.where(np.eye(k, dtype=bool), 0.0, c))
    d = length - 1 - i
    return NodeClass(nodes=np.array([i]), node=i, head=i if i <= window else -1,
                      tail=d if d <= window else -1, possible=np.array(possible),
                      prior=np.array(prior), support=np.array(support), mqm_sigma=sigma,
                      fixed=not any(m.initial_is_any for m in members))


def _shared_class(members: Sequence, nodes: np.ndarray, window: int,
                  sigma: float) -> NodeClass:
    convs = [convergence(m, int(nodes.max()) + 1) for m in members]
    star = np.array([c.support for c in convs if c is not None])
    prior = np.array([c.prior for c in convs if c is not None])
    k = star.shape[1]
    prior = np.where(np.eye(k, dtype=bool)[None], 0.0, prior)
    return NodeClass(nodes=nodes, node=int(nodes[0]), head=-1, tail=-1, possible=star,
                      prior=prior, support=np.repeat(star[:, None], window + 1, axis=1),
                      mqm_sigma=sigma, fixed=not any(m.initial_is_any for m in members))


def chain_classes(members: Sequence, nodes: np.ndarray, pairs: np.ndarray, window: int,
                  sigma: np.ndarray) -> list[NodeClass]:
    """The classes of ``nodes`` (one pair group; ``sigma``: their MQM σ), shared one first."""
    length = members[0].length
    nodes = np.asarray(nodes, dtype=np.int64)
    start = _share_from(members, length, window)
    shared = (nodes >= start) & (length - 1 - nodes > window)
    out = []
    if shared.any():
        out.append(_shared_class(members, nodes[shared], window, float(sigma[shared].max())))
    for j in np.flatnonzero(~shared):
        out.append(_own_class(members, int(nodes[j]), length, window, float(sigma[j])))
    return out


def chain_candidates(cls: NodeClass, window: int, length: int,
                     fits: Callable[[tuple], bool] | None = None) -> list[tuple]:
    """Quilt keys a class may use (see :class:`~pufferfish_pgm.quilts._quilt_laws.ChainQuiltLaws`).

    The empty quilt alone when the whole chain is within the window (its bound is the node's
    exact ε, below every other bound); else two-sided quilts at grid distances no more than a
    factor 2 apart (or at the largest distance a side allows) and one-sided quilts whose open
    side is within the window. An open left side needs the start law, so chains with
    ``initial="any"`` have it at node 0 only (whose left part is empty). Widest nearby block
    first: usually the best, so that a class's search rarely bisects more than one quilt.
    ``fits`` (vector queries): only keys it accepts are kept, the empty quilt included.

    >>> c = NodeClass(nodes=np.array([3]), node=3, head=3, tail=-1, possible=None,
    ...               prior=None, support=None, mqm_sigma=1.0, fixed=True)
    >>> chain_candidates(c, 2, 100)
    [('right', 3, 2), ('two', 2, 2), ('right', 3, 1), ('two', 1, 2), ('two', 2, 1), ('two', 1, 1)]
    """
    i, d = cls.node, length - 1 - cls.node
    grid = window_grid(window)
    left = sorted({a for a in grid if a <= i} | ({i} if 0 < i <= window else set()))
    right = sorted({b for b in grid if b <= d} | ({d} if 0 < d <= window else set()))
    opens = cls.head == 0 or (cls.fixed and cls.head > 0)   # node 0 needs no start law
    if opens and cls.tail >= 0 and (fits is None or fits(("empty", i, d))):
        return [("empty", i, d)]
    out = [(("two", a, b), a + b) for a in left for b in right
           if max(a, b) <= 2 * min(a, b) or a == left[-1] or b == right[-1]]
    if opens:
        out += [(("right", i, b), i + b) for b in right]
    if cls.tail >= 0:
        out += [(("left", d, a), d + a) for a in left]
    return [key for key, _ in sorted(out, key=lambda pair: -pair[1])
            if fits is None or fits(key)]


def chain_setup(framework: Any, weights: np.ndarray, window: int, plan_nodes: np.ndarray,
                sigma: np.ndarray) -> tuple[list, list, list]:
    """Classes, their candidate keys and the laws behind them, for every pair group of a
    chain framework (``weights``: shifted integer weights per state; ``plan_nodes`` sorted,
    ``sigma`` their MQM σ)."""
    chains = [m for m in framework.scenarios if isinstance(m, MarkovChainScenario)]
    if any(m.time_varying for m in chains):
        return _varying_setup(framework, chains, weights, window, plan_nodes, sigma)
    bridges = [ChainBridges(m.transition, None if m.initial_is_any else m.initial_distribution,
                            weights) for m in chains]
    length = chains[0].length
    classes, candidates, laws = [], [], []
    for nodes, pairs in pair_groups(framework):
        group_laws = ChainQuiltLaws(bridges, pairs)
        own = sigma[np.searchsorted(plan_nodes, nodes)]
        for c in chain_classes(chains, nodes, pairs, window, own):
            classes.append(c)
            candidates.append(chain_candidates(c, window, length))
            laws.append(group_laws)
    return classes, candidates, laws


def key_shape(key: tuple) -> tuple:
    """A key without the node it was made for (one-sided and empty chain quilts).

    >>> key_shape(("right", 7, 16)), key_shape(("two", 4, 8))
    (('right', 16), ('two', 4, 8))
    """
    return (key[0], key[2]) if key[0] in ("right", "left") else key[:1] if key[0] == "empty" \
        else key


def quilt_nodes(key: tuple, node: Any) -> tuple:
    """The quilt nodes of ``key`` at ``node`` (sorted by repr for networks).

    >>> quilt_nodes(("two", 2, 3), 10), quilt_nodes(("right", 10, 4), 10)
    ((8, 13), (14,))
    """
    kind = key[0]
    if kind == "net":
        return tuple(sorted(key[2], key=repr))
    i = int(node)
    left = key[1] if kind == "two" else key[2] if kind == "left" else 0
    right = key[2] if kind in ("two", "right") else 0
    return tuple(v for v, d in ((i - left, left), (i + right, right)) if d)


def varying_class(members: Sequence, tables: list, i: int, window: int,
                  sigma: float) -> NodeClass:
    """Node i of time-varying chains as its own class; ``tables``: per member its supports
    and prior terms (:func:`~pufferfish_pgm.quilts._quilt_varying.prior_tables`)."""
    length = members[0].length
    times = i - np.arange(window + 1)
    support = np.array([sup[np.maximum(times, 0)] & (times >= 0)[:, None]
                        for sup, _ in tables])
    d = length - 1 - i
    return NodeClass(nodes=np.array([i]), node=i, head=i if i <= window else -1,
                     tail=d if d <= window else -1, possible=support[:, 0],
                     prior=np.array([prior[i] for _, prior in tables]), support=support,
                     mqm_sigma=sigma, fixed=not any(m.initial_is_any for m in members))


def _varying_setup(framework: Any, chains: list, weights: np.ndarray, window: int,
                   plan_nodes: np.ndarray, sigma: np.ndarray) -> tuple[list, list, list]:
    """:func:`chain_setup` for time-varying members: every node its own class and laws
    (:mod:`~pufferfish_pgm.quilts._quilt_varying`; a member that is homogeneous is taken as
    a stack of identical steps)."""
    bridges = [VaryingBridges(m, weights) for m in chains]
    tables = prior_tables(chains)
    length = chains[0].length
    classes, candidates, laws = [], [], []
    for nodes, pairs in pair_groups(framework):
        own = sigma[np.searchsorted(plan_nodes, nodes)]
        # middle nodes first (the search keeps this order among equal MQM σ): they usually
        # need the largest scale, which the other nodes then mostly pass at once
        order = np.argsort(np.abs(2 * np.asarray(nodes) - (length - 1)), kind="stable")
        for i, sig in zip(np.asarray(nodes)[order].tolist(), own[order].tolist(), strict=True):
            c = varying_class(chains, tables, i, window, float(sig))
            classes.append(c)
            candidates.append(_balanced(chain_candidates(c, window, length)))
            laws.append(NodeQuiltLaws(bridges, pairs, i))
    return classes, candidates, laws


def _balanced(keys: list[tuple]) -> list[tuple]:
    """Time-varying classes: the two-sided keys with equal sides, or with the shorter side
    at its longest (cut by a chain end), and every one-sided key (widest first, as given); a
    choice of candidates for speed (each node searches its own), every bound stays proven.

    >>> _balanced([("two", 4, 4), ("two", 4, 8), ("right", 3, 2), ("two", 2, 3)])
    [('two', 4, 4), ('two', 4, 8), ('right', 3, 2)]
    """
    twos = [k for k in keys if k[0] == "two"]
    top_a = max((k[1] for k in twos), default=0)
    top_b = max((k[2] for k in twos), default=0)
    return [k for k in keys if k[0] != "two" or k[1] == k[2]
            or (k[1] == top_a and k[1] < k[2]) or (k[2] == top_b and k[2] < k[1])]
