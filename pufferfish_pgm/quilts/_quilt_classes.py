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

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ._chain_nodes import _prior_terms, convergence, support_at

__all__ = ["NodeClass", "chain_candidates", "chain_classes", "window_grid"]


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


def chain_candidates(cls: NodeClass, window: int, length: int) -> list[tuple]:
    """Quilt keys a class may use (see :class:`~pufferfish_pgm.quilts._quilt_laws.ChainQuiltLaws`).

    Two-sided quilts at grid distances no more than a factor 2 apart (or at the largest
    distance a side allows), one-sided quilts whose open side is within the window, and the
    empty quilt when the whole chain is. An open left side needs the start law, so chains with
    ``initial="any"`` have it at node 0 only (whose left part is empty).
    """
    i, d = cls.node, length - 1 - cls.node
    grid = window_grid(window)
    left = sorted({a for a in grid if a <= i} | ({i} if 0 < i <= window else set()))
    right = sorted({b for b in grid if b <= d} | ({d} if 0 < d <= window else set()))
    out: list[tuple] = []
    for a in left:
        for b in right:
            if max(a, b) <= 2 * min(a, b) or a == left[-1] or b == right[-1]:
                out.append(("two", a, b))
    opens = cls.head == 0 or (cls.fixed and cls.head > 0)   # node 0 needs no start law
    if opens:
        out += [("right", i, b) for b in right]
    if cls.tail >= 0:
        out += [("left", d, a) for a in left]
    if opens and cls.tail >= 0:
        out.append(("empty", i, d))
    return out
