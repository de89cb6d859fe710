"""Elimination orders and the size of their largest table, known before any table is built.

Variable elimination on factors with scopes ``S_1, ..., S_m`` is a walk on their interaction
graph (variables adjacent when they share a scope): eliminating ``x`` multiplies the factors
that mention ``x`` into one table over ``x``'s neighbours, which then form a clique. The table
made when ``x`` goes is therefore over ``x``'s current neighbours, so the largest table of an
order (its *peak*) is known from the graph alone, and a query can be refused before it
allocates anything (:mod:`pufferfish_pgm._budget`).

Two orders are used. The network's own order (greedy min-fill on the whole moral graph,
computed once per model) lets queries share evidence-free tables; a query whose peak under it
is large gets a greedy order of its own (smallest new table first, then fewest fill edges,
then the model order), which keeps the variables it must not eliminate (its targets) out of
the way.

Examples
--------
>>> scopes = [("a",), ("b", "a"), ("c", "b"), ("d", "c")]   # a -> b -> c -> d
>>> dims = dict.fromkeys("abcd", 2)
>>> plan = schedule(scopes, keep=["a", "d"], dims=dims, rank={"b": 0, "c": 1, "a": 2, "d": 3})
>>> plan.order, plan.peak_cells
(('b', 'c'), 4)
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._treewidth_bound import proven_peak

__all__ = ["Schedule", "interaction_graph", "min_fill", "schedule"]

#: A query whose peak under the model's order is below this many cells keeps that order.
OWN_ORDER_CELLS = 1 << 20


@dataclass(frozen=True)
class Schedule:
    """An elimination order and its largest table.

    Attributes
    ----------
    order : tuple
        Variables to eliminate, first to last.
    peak_cells : int
        Cells of the largest table the order builds (a product or the final result).
    culprit : node name or None
        The variable whose elimination builds that table; None when it is the final result.
    complete : bool
        False when the search stopped at a table above its limit: ``order`` is then a
        prefix, and ``peak_cells`` a lower bound (the table ``culprit`` would build next).
    treewidth : int or None
        Set when no order was searched because a lower bound on the treewidth of the
        interaction graph (:mod:`._treewidth_bound`) already proves that *every* order builds
        a table above the limit: this bound, with ``order`` empty, ``culprit`` None,
        ``complete`` False and ``peak_cells`` the cells such a table has at least.
    """

    order: tuple
    peak_cells: int
    culprit: Any
    complete: bool = True
    treewidth: int | None = None


def interaction_graph(scopes: Iterable[Sequence]) -> dict[Hashable, set]:
    """Variable -> variables it shares a scope with (in first-seen order of the variables)."""
    graph: dict[Hashable, set] = {}
    for scope in scopes:
        for i, a in enumerate(scope):
            graph.setdefault(a, set())
            for b in scope[i + 1:]:
                if b != a:
                    graph[a].add(b)
                    graph.setdefault(b, set()).add(a)
    return graph


def _greedy(graph: dict, candidates: Iterable, score: Callable[[dict, Any], tuple],
            stop: Callable[[tuple], bool] | None = None,
            cheap: Callable[[dict, Any], tuple[tuple, bool]] | None = None) -> list:
    """Eliminate ``candidates`` one by one, each time the one of least ``score`` (consumes
    ``graph``). ``score(graph, u)`` must depend only on ``u``'s neighbours and the links among
    them (as table size and fill do): eliminating ``v`` then changes the scores of ``v``'s
    neighbours and of the nodes adjacent to two or more of them (the new links join those
    neighbours), no others. When ``stop`` holds for the least score, the order ends there
    (the rest is not eliminated).

    ``cheap(graph, u)`` gives ``(key, exact)``: ``key`` is at most ``score(graph, u)`` (equal
    when ``exact``). A node is queued by its cheap key and scored only when that key comes
    first; its score is then queued in its place. The least queued key is then always the
    least score (every other key is at most its node's score), so the order is the one of
    ``score`` alone, for fewer calls of it (a min-cells search fills in the fill of the
    nodes of least cells only).
    """
    rank = {v: i for i, v in enumerate(candidates)}      # ties: the first listed, as min()
    rough: set = set()                                   # queued by a cheap key, not scored

    def key(u: Any) -> tuple:
        if cheap is None:
            return score(graph, u)
        k, exact = cheap(graph, u)
        (rough.discard if exact else rough.add)(u)
        return k

    scores = {v: key(v) for v in rank}
    heap = [(s, rank[v], v) for v, s in scores.items()]   # stale entries are skipped
    heapq.heapify(heap)
    order = []
    while scores:
        s, _, v = heapq.heappop(heap)
        if scores.get(v) != s:
            continue
        if v in rough:
            rough.discard(v)
            scores[v] = score(graph, v)
            heapq.heappush(heap, (scores[v], rank[v], v))
            continue
        if stop is not None and stop(s):
            break
        _eliminate(graph, v, scores, heap, rank, key)
        order.append(v)
    return order


def _eliminate(graph: dict, v: Any, scores: dict, heap: list, rank: dict,
               key: Callable[[Any], tuple]) -> None:
    """Eliminate ``v`` from ``graph`` (its neighbours become a clique) and queue the new
    keys of the nodes whose score may have changed."""
    nb = list(graph.pop(v))
    del scores[v]
    for a in nb:
        graph[a].discard(v)
        graph[a].update(b for b in nb if b != a)
    for u in _rescored(graph, nb):
        if u in scores:
            scores[u] = key(u)
            heapq.heappush(heap, (scores[u], rank[u], u))


def _rescored(graph: dict, nb: list) -> set:
    """The nodes whose neighbourhood or links among it changed when the nodes ``nb`` became
    a clique: ``nb`` itself and every other node adjacent to two or more of them."""
    inside = set(nb)
    seen: set = set()
    twice: set = set()
    for a in nb:
        for u in graph[a]:
            if u not in inside:
                (twice if u in seen else seen).add(u)
    return inside | twice


def _fill(graph: dict, v: Any) -> int:
    """Pairs of ``v``'s neighbours not yet adjacent (``graph`` is symmetric, without self
    loops, as every graph built here): all pairs less
    the linked ones, counted by set intersections (each link seen from both ends).

    Examples
    --------
    >>> _fill({"v": {"a", "b", "c"}, "a": {"v", "b"}, "b": {"v", "a"}, "c": {"v"}}, "v")
    2
    """
    nb = graph[v]
    twice = sum(len(graph[a] & nb) for a in nb)
    return len(nb) * (len(nb) - 1) // 2 - twice // 2


def min_fill(adjacency: dict) -> list:
    """Greedy min-fill order of every node; ties go to fewer neighbours, then smaller
    ``str(node)``. ``adjacency`` (node -> set of neighbours) is consumed.

    Examples
    --------
    >>> min_fill({"a": {"b"}, "b": {"a", "c"}, "c": {"b"}})
    ['a', 'b', 'c']
    """
    return _greedy(adjacency, set(adjacency),
                   lambda g, v: (_fill(g, v), len(g[v]), str(v)))


def _peak(graph: dict, order: Iterable, dims: Mapping, kept_cells: int) -> tuple[int, Any]:
    """Largest table of eliminating ``order`` on ``graph`` (consumed), and who makes it."""
    peak, culprit = kept_cells, None
    for v in order:
        nb = graph.pop(v)
        cells = math.prod(dims[a] for a in nb)
        if cells > peak:
            peak, culprit = cells, v
        for a in nb:
            graph[a].discard(v)
            graph[a].update(b for b in nb if b != a)
    return peak, culprit


def schedule(scopes: Sequence[Sequence], *, keep: Iterable, dims: Mapping,
             rank: Mapping | Callable[[], Mapping], limit: int | None = None) -> Schedule:
    """The order to eliminate every variable of ``scopes`` not in ``keep``, and its peak.

    ``rank`` is the model's order (lower goes first), or a function that returns it (called
    only when needed: a whole-network min-fill order costs seconds on thousands of nodes).
    Its own order is taken unless its peak reaches :data:`OWN_ORDER_CELLS` and a greedy order
    for this query does better. With ``limit`` (cells), a greedy order (smallest new table
    first, then fewest fill edges, then ``str`` of the variable) is built first and stops at
    the first step whose least new table has more than ``limit`` cells: the result is then
    incomplete (``complete`` False) and its ``peak_cells`` is that table, a lower bound of the
    peak of any completion of that order, found without the model's order and without
    scoring the huge neighbourhoods beyond it (the refusal costs little). Before that search,
    a lower bound on the treewidth (:func:`._treewidth_bound.proven_peak`, near-linear time)
    may already prove every order over ``limit``: the result then has ``treewidth`` set and no
    order is searched.

    Examples
    --------
    >>> star = [("h",), *((f"l{i}", "h") for i in range(30))]   # a hub with 30 leaves
    >>> dims = {v: 2 for scope in star for v in scope}
    >>> schedule(star, keep=[f"l{i}" for i in range(30)], dims=dims, rank={"h": 0},
    ...          limit=2**20).complete
    False
    >>> k40 = [(a, b) for a in range(40) for b in range(a)]          # treewidth 39
    >>> found = schedule(k40, keep=(), dims=dict.fromkeys(range(40), 2), rank={}, limit=2**20)
    >>> found.treewidth, found.peak_cells, found.order
    (39, 549755813888, ())
    """
    keep = set(keep)
    graph = interaction_graph(scopes)
    kept_cells = math.prod(dims[v] for v in keep if v in graph)
    free = [v for v in graph if v not in keep]
    first = None
    proof = None if limit is None else proven_peak(graph, dims, limit)
    if proof is not None:
        return Schedule((), proof[1], None, complete=False, treewidth=proof[0])
    if limit is not None:
        names = {v: i for i, v in enumerate(sorted(free, key=str))}
        first = _own_order(graph, free, dims, names, (kept_cells, math.inf, None), limit)
        if not first.complete:
            return first
    ranks = rank() if callable(rank) else rank
    order = sorted(free, key=ranks.__getitem__)
    peak, culprit = _peak({v: set(n) for v, n in graph.items()}, order, dims, kept_cells)
    if peak < OWN_ORDER_CELLS:
        return Schedule(tuple(order), peak, culprit)
    own = _own_order(graph, order, dims, ranks, (kept_cells, peak, culprit), limit)
    if first is None or (own.complete and own.peak_cells <= first.peak_cells):
        return own
    return first    # the first order fits the limit; this one stopped or does worse


def _cells_upto(nodes: Iterable, dims: Mapping, cap: float) -> float:
    """The product of ``dims`` over ``nodes``, or ``cap + 1`` as soon as it passes ``cap``: the
    capped search only asks whether a table is over the cap (the node then waits, and the
    search stops when the least table is), so a hub's neighbours cost ~log2(cap) products
    instead of their degree.

    Examples
    --------
    >>> dims = {"a": 2, "b": 3, "c": 4}
    >>> _cells_upto("abc", dims, 100), _cells_upto("abc", dims, 5)     # 2·3 > 5: stop there
    (24, 6)
    """
    cells = 1
    for a in nodes:
        cells *= dims[a]
        if cells > cap:
            return cap + 1
    return cells


def _cells_counter(dims: Mapping, nodes: Iterable,
                   cap: float) -> Callable[[Collection], float]:
    """:func:`_cells_upto` for ``dims`` and ``cap``; when the nodes all have ``d >= 2`` states,
    from the number of neighbours alone (``d^n``, or ``cap + 1`` past the cap).

    Examples
    --------
    >>> count = _cells_counter(dict.fromkeys("abc", 2), "abc", 5)
    >>> count("ab"), count("abc")                         # 4, then 8 > 5: the cap + 1
    (4, 6)
    """
    sizes = {dims[v] for v in nodes}
    d = sizes.pop() if len(sizes) == 1 else 0
    if d < 2:
        return lambda nb: _cells_upto(nb, dims, cap)
    powers = [1]                          # d^n while at most the cap
    while cap < math.inf and powers[-1] * d <= cap:
        powers.append(powers[-1] * d)
    if cap == math.inf:
        return lambda nb: d ** len(nb)
    return lambda nb: powers[len(nb)] if len(nb) < len(powers) else cap + 1


def _own_order(graph: dict, order: list, dims: Mapping, rank: Mapping, model: tuple,
               limit: int | None) -> Schedule:
    """The greedy order of :func:`schedule` (``model``: kept cells, peak and culprit of the
    model's order), or the model's order when it does no better."""
    kept_cells, peak, culprit = model
    cap = math.inf if limit is None else limit
    cells_of = _cells_counter(dims, graph, cap)

    def score(g: dict, v: Any) -> tuple:
        cells = cells_of(g[v])
        return cells, (_fill(g, v) if cells <= cap else 0), rank[v]

    def cheap(g: dict, v: Any) -> tuple[tuple, bool]:    # fill >= 0: a lower bound
        cells = cells_of(g[v])
        return (cells, 0, rank[v]), cells > cap

    own = _greedy({v: set(n) for v, n in graph.items()}, order, score,
                  None if limit is None else (lambda s: s[0] > cap), cheap)
    if len(own) < len(order):
        work = {v: set(n) for v, n in graph.items()}
        _peak(work, own, dims, kept_cells)
        left = set(order).difference(own)
        nxt = min((v for v in work if v in left),
                  key=lambda v: (math.prod(dims[a] for a in work[v]), rank[v]))
        return Schedule(tuple(own), math.prod(dims[a] for a in work[nxt]), nxt,
                        complete=False)
    own_peak, own_culprit = _peak({v: set(n) for v, n in graph.items()}, own, dims,
                                  kept_cells)
    if own_peak < peak:
        return Schedule(tuple(own), own_peak, own_culprit)
    return Schedule(tuple(order), peak, culprit)
