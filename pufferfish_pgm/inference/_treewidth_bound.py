"""A proven lower bound on the treewidth of an interaction graph, in near-linear time.

Every elimination order of a graph ``G`` has a step whose eliminated node has at least
``tw(G)`` neighbours (the width of an order is its largest such neighbourhood, and the
treewidth is the least width over all orders). So when a cheap lower bound ``b <= tw(G)``
makes the ``b`` smallest cardinalities multiply past a cell limit, *every* order builds a table
over the limit, and a query can be refused without running any order search.

The bound is the contraction degeneracy heuristic MMD+ with the *least-c* rule (Bodlaender,
Koster and Wolle, "Contraction and treewidth lower bounds", 2006): repeatedly take a node
``v`` of least degree, note that degree, and contract ``v`` into the neighbour with the fewest
neighbours in common with it (then fewest neighbours, then first in node order); the bound is
the largest degree noted. Why it is a lower bound (proven in ``docs/undirected.md``, section
"Refusing from a treewidth bound"): each graph met is a minor of ``G``, treewidth never grows
under contraction or deletion, and a graph of least degree ``d`` has treewidth at least ``d``
(the first node any order eliminates has ``d`` neighbours or more).

Examples
--------
>>> k5 = {v: set(range(5)) - {v} for v in range(5)}                 # complete graph: tw 4
>>> treewidth_lower_bound(k5)
4
>>> cycle = {v: {(v - 1) % 6, (v + 1) % 6} for v in range(6)}       # a cycle: tw 2
>>> treewidth_lower_bound(cycle)
2
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable, Iterable, Mapping

__all__ = ["proven_peak", "treewidth_lower_bound"]


def treewidth_lower_bound(graph: Mapping[Hashable, Iterable[Hashable]],
                          enough: int | None = None) -> int:
    """A lower bound on the treewidth of ``graph`` (node -> neighbours, symmetric, without
    self loops), by MMD+ (least-c); not consumed.

    With ``enough``, the search stops as soon as the bound reaches it (the bound returned is
    then at least ``enough``), or once fewer than ``enough + 1`` nodes are left (it cannot
    reach it any more). A contraction costs O(d²) for the least degree ``d`` it notes, below
    ``enough``: O(n · enough² + edges) in all, whatever the largest degree.

    Examples
    --------
    >>> path = {0: {1}, 1: {0, 2}, 2: {1}}
    >>> treewidth_lower_bound(path), treewidth_lower_bound({})
    (1, 0)
    """
    ids = {v: i for i, v in enumerate(graph)}
    adj = [{ids[a] for a in graph[v]} for v in graph]
    target = len(adj) if enough is None else enough    # the degree is below len(adj)
    floor = 0 if enough is None else enough           # k nodes: least degree below k
    heap = [(len(nb), v) for v, nb in enumerate(adj)]
    heapq.heapify(heap)
    gone = [False] * len(adj)
    left, bound = len(adj), 0
    while left > floor and bound < target:
        degree, v = heapq.heappop(heap)
        if gone[v] or len(adj[v]) != degree:
            continue                          # a stale entry: v was updated or removed
        bound = max(bound, degree)
        if bound >= target:
            break                             # (no contraction at that degree)
        gone[v], left = True, left - 1
        for a in _contract(adj, v):
            heapq.heappush(heap, (len(adj[a]), a))
    return bound


def _contract(adj: list[set[int]], v: int) -> set[int]:
    """Contract ``v`` into its neighbour sharing the fewest neighbours with it (ties: fewest
    neighbours, then lowest id); an isolated ``v`` is deleted. Returns the nodes whose
    degree may have changed (``v``'s former neighbours).

    Examples
    --------
    >>> adj = [{1, 2}, {0, 2}, {0, 1, 3}, {2}]       # a triangle 0-1-2 with a tail 2-3
    >>> sorted(_contract(adj, 0)), adj[1], adj[2]   # 1 and 2 each share one neighbour
    ([1, 2], {2}, {1, 3})
    """
    nb = adj[v]
    if not nb:
        return nb
    u = min(nb, key=lambda a: (len(adj[a] & nb), len(adj[a]), a))
    into = adj[u]
    for a in nb:
        adj[a].discard(v)
        if a != u and a not in into:
            into.add(a)
            adj[a].add(u)
    return nb


def proven_peak(graph: Mapping[Hashable, Iterable[Hashable]], dims: Mapping[Hashable, int],
                limit: float) -> tuple[int, int] | None:
    """``(b, cells)`` when every elimination order of ``graph`` is proven to build a table of
    more than ``limit`` cells: ``b`` a treewidth lower bound, ``cells`` the product of the
    ``b`` smallest cardinalities (``dims``), which every order's widest step reaches (it is
    a table over at least ``b`` other nodes). None when the bound does not prove it.

    Examples
    --------
    >>> k8 = {v: set(range(8)) - {v} for v in range(8)}              # tw 7: 2^7 = 128 cells
    >>> dims = dict.fromkeys(range(8), 2)
    >>> proven_peak(k8, dims, limit=100), proven_peak(k8, dims, limit=128)
    ((7, 128), None)
    """
    sizes = sorted(dims[v] for v in graph)
    need, cells = 0, 1
    for size in sizes[:-1]:                   # a table is over the other nodes at most
        if cells > limit:
            break
        cells, need = cells * size, need + 1
    if cells <= limit or need == 0:
        return None
    bound = treewidth_lower_bound(graph, enough=need)
    if bound < need:
        return None
    for size in sizes[need:bound]:
        cells *= size
    return bound, cells
