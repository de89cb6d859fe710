"""Greedy elimination orders: rescoring only the nodes whose score can change gives the order
that rescoring every node within distance 2 gave; so does scoring lazily from a lower bound
(the fill only filled in for the nodes of least cells)."""

from __future__ import annotations

import heapq
import math

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from pufferfish_pgm.inference._elimination_order import (
    _cells_counter,
    _cells_upto,
    _fill,
    _greedy,
)


def _greedy_reference(graph: dict, candidates: list, score, stop=None) -> list:
    """The engine's loop before: every node within distance 2 of ``v`` rescored."""
    rank = {v: i for i, v in enumerate(candidates)}
    scores = {v: score(graph, v) for v in candidates}
    heap = [(s, rank[v], v) for v, s in scores.items()]
    heapq.heapify(heap)
    order = []
    while scores:
        s, _, v = heapq.heappop(heap)
        if scores.get(v) != s:
            continue
        if stop is not None and stop(s):
            break
        nb = list(graph.pop(v))
        del scores[v]
        for a in nb:
            graph[a].discard(v)
            graph[a].update(b for b in nb if b != a)
        for u in set(nb).union(*(graph[a] for a in nb)):
            if u in scores:
                scores[u] = score(graph, u)
                heapq.heappush(heap, (scores[u], rank[u], u))
        order.append(v)
    return order


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["ba", "ws", "gnp"]), st.integers(5, 60),
       st.integers(2, 3), st.sampled_from([None, 8, 64]))
def test_orders_equal_the_full_rescoring(seed, kind, n, card, cap):
    # scale-free, small-world and random graphs; the table-size score with a cap (as the
    # refusal's capped search) and the min-fill score
    graph = {"ba": lambda: nx.barabasi_albert_graph(n, 2, seed=seed),
             "ws": lambda: nx.watts_strogatz_graph(n, 4, 0.2, seed=seed),
             "gnp": lambda: nx.gnp_random_graph(n, 0.15, seed=seed)}[kind]()
    adjacency = {v: set(graph[v]) for v in graph}
    dims = {v: card for v in graph}
    limit = math.inf if cap is None else cap

    def cells_score(g, v):
        cells = math.prod(dims[a] for a in g[v])
        return cells, (_fill(g, v) if cells <= limit else 0), v

    def fill_score(g, v):
        return _fill(g, v), len(g[v]), str(v)

    stop = None if cap is None else (lambda s: s[0] > limit)
    for score, halt in ((cells_score, stop), (fill_score, None)):
        want = _greedy_reference({v: set(a) for v, a in adjacency.items()}, list(graph),
                                 score, halt)
        got = _greedy({v: set(a) for v, a in adjacency.items()}, list(graph), score, halt)
        assert got == want


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["ba", "ws", "gnp"]), st.integers(5, 60),
       st.sampled_from([(2,), (3,), (1, 2, 3)]), st.sampled_from([None, 8, 64, 2**40]))
def test_lazy_fill_gives_the_same_order(seed, kind, n, cards, cap):
    # the capped min-cells score of the refusal's search, queued by (cells, 0, rank) until
    # it comes first: the same order and the same stopping point as scoring every time
    graph = {"ba": lambda: nx.barabasi_albert_graph(n, 2, seed=seed),
             "ws": lambda: nx.watts_strogatz_graph(n, 4, 0.2, seed=seed),
             "gnp": lambda: nx.gnp_random_graph(n, 0.15, seed=seed)}[kind]()
    adjacency = {v: set(graph[v]) for v in graph}
    dims = {v: cards[v % len(cards)] for v in graph}
    limit = math.inf if cap is None else cap
    cells_of = _cells_counter(dims, graph, limit)

    def score(g, v):
        cells = _cells_upto(g[v], dims, limit)
        return cells, (_fill(g, v) if cells <= limit else 0), v

    def cheap(g, v):
        cells = cells_of(g[v])
        return (cells, 0, v), cells > limit

    stop = None if cap is None else (lambda s: s[0] > limit)
    want = _greedy_reference({v: set(a) for v, a in adjacency.items()}, list(graph), score, stop)
    got = _greedy({v: set(a) for v, a in adjacency.items()}, list(graph), score, stop, cheap)
    assert got == want


@given(st.lists(st.integers(1, 4), min_size=1, max_size=40), st.integers(1, 10**6),
       st.booleans())
def test_cells_counter_equals_the_capped_product(cards, cap, uniform):
    dims = {i: cards[0] if uniform else c for i, c in enumerate(cards)}
    count = _cells_counter(dims, dims, cap)
    for k in range(len(cards) + 1):
        assert count(list(dims)[:k]) == _cells_upto(list(dims)[:k], dims, cap)
