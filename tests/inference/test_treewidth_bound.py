"""The treewidth lower bound (MMD+ least-c) against brute-force treewidth and brute-force
least peaks on small graphs, and the order search it lets :func:`schedule` skip (issue 24)."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pufferfish_pgm.inference import _elimination_order
from pufferfish_pgm.inference._elimination_order import schedule
from pufferfish_pgm.inference._treewidth_bound import proven_peak, treewidth_lower_bound


def _later_neighbours(adj: list[int], done: int, v: int) -> int:
    """Bitmask of the nodes outside ``done | {v}`` that a path from ``v`` through ``done``
    reaches: ``v``'s neighbours when ``done`` was eliminated before it (in any order)."""
    seen, todo, found = 1 << v, [v], 0
    while todo:
        u = todo.pop()
        for w in range(len(adj)):
            if adj[u] >> w & 1 and not seen >> w & 1:
                seen |= 1 << w
                if done >> w & 1:
                    todo.append(w)
                else:
                    found |= 1 << w
    return found


def _least_peak(adj: list[int], cost) -> float:
    """min over every elimination order of the max over its steps of ``cost(neighbours)``,
    by dynamic programming over the set already eliminated (the neighbours of the next node
    depend on that set only, not on its order)."""
    n = len(adj)
    best = [math.inf] * (1 << n)
    best[0] = 0
    for done in range(1 << n):
        if best[done] == math.inf:
            continue
        for v in range(n):
            if not done >> v & 1:
                step = max(best[done], cost(_later_neighbours(adj, done, v)))
                nxt = done | 1 << v
                best[nxt] = min(best[nxt], step)
    return best[-1]


def _treewidth(adj: list[int]) -> int:
    return int(_least_peak(adj, lambda nb: bin(nb).count("1")))


def _graph(n: int, bits: list[bool]) -> tuple[dict[int, set[int]], list[int]]:
    pairs = list(itertools.combinations(range(n), 2))
    graph: dict[int, set[int]] = {v: set() for v in range(n)}
    for (a, b), on in zip(pairs, bits, strict=False):
        if on:
            graph[a].add(b)
            graph[b].add(a)
    return graph, [sum(1 << b for b in graph[v]) for v in range(n)]


graphs = st.integers(1, 9).flatmap(
    lambda n: st.tuples(st.just(n), st.lists(st.booleans(), min_size=n * (n - 1) // 2,
                                             max_size=n * (n - 1) // 2)))


@settings(max_examples=150, deadline=None)
@given(graphs, st.integers(0, 9))
def test_the_bound_is_at_most_the_treewidth(nb, enough):
    graph, adj = _graph(*nb)
    tw = _treewidth(adj)
    full = treewidth_lower_bound(graph)
    assert full <= tw
    # stopping early reaches ``enough`` exactly when the whole run does, and stays a bound
    early = treewidth_lower_bound(graph, enough=enough)
    assert early <= tw and (early >= enough) == (full >= enough)
    assert graph == _graph(*nb)[0]                       # not consumed


@settings(max_examples=150, deadline=None)
@given(graphs, st.data())
def test_a_proven_peak_is_reached_by_every_order(nb, data):
    # brute force: the least peak over all orders, with cardinalities 1..3 (1 included: a
    # node of one state adds nothing to a table)
    graph, adj = _graph(*nb)
    dims = {v: data.draw(st.integers(1, 3)) for v in graph}
    limit = data.draw(st.integers(0, 300))
    proof = proven_peak(graph, dims, limit)
    if proof is not None:
        bound, cells = proof
        least = _least_peak(adj, lambda m: math.prod(dims[v] for v in graph if m >> v & 1))
        assert limit < cells <= least and bound <= _treewidth(adj)


@pytest.mark.parametrize(("graph", "want"), [
    (nx.complete_graph(12), 11), (nx.cycle_graph(30), 2), (nx.path_graph(30), 1),
    (nx.balanced_tree(2, 5), 1), (nx.empty_graph(4), 0)])
def test_known_treewidths_are_reached(graph, want):
    # complete graph K_n: n - 1; cycles 2; trees and paths 1; no edges 0 (MMD+ is exact here)
    assert treewidth_lower_bound({v: set(graph[v]) for v in graph}) == want


def test_grid_bound_is_below_its_treewidth():
    # the k x k grid has treewidth k (a known value); the bound must not pass it
    grid = nx.grid_2d_graph(8, 8)
    assert 2 <= treewidth_lower_bound({v: set(grid[v]) for v in grid}) <= 8


def test_schedule_refuses_from_the_bound_without_an_order_search(monkeypatch):
    """A clique of 40 binary nodes under a 2^20-cell limit: the bound (treewidth 39) proves
    every order builds 2^39 cells, so no greedy order is searched (before: the greedy search
    ran and named a culprit)."""
    def forbidden(*args, **kwargs):
        raise AssertionError("the order search ran")

    monkeypatch.setattr(_elimination_order, "_greedy", forbidden)
    scopes = [(a, b) for a in range(40) for b in range(a)]
    found = schedule(scopes, keep=(), dims=dict.fromkeys(range(40), 2), rank={},
                     limit=2**20)
    assert (found.complete, found.treewidth, found.peak_cells, found.culprit) == (
        False, 39, 2**39, None)


def test_schedule_keeps_the_greedy_proof_when_the_bound_is_too_small():
    # a hub with 30 leaves (a tree: treewidth 1) whose leaves are kept: the order stops at
    # the hub, whose table is over the 30 leaves (2^30 cells > 2^20)
    star = [("h",), *((f"l{i}", "h") for i in range(30))]
    dims = {v: 2 for scope in star for v in scope}
    found = schedule(star, keep=[f"l{i}" for i in range(30)], dims=dims, rank={"h": 0},
                     limit=2**20)
    assert (found.complete, found.treewidth, found.culprit, found.peak_cells) == (
        False, None, "h", 2**30)


def test_a_network_the_limit_fits_is_never_refused_by_the_bound():
    # a 6 x 6 grid of binary nodes: treewidth 6, so an order of at most 2^6 cells exists
    grid = nx.grid_2d_graph(6, 6)
    scopes = list(grid.edges)
    dims = dict.fromkeys(grid, 2)
    rank = {v: i for i, v in enumerate(sorted(grid))}
    found = schedule(scopes, keep=(), dims=dims, rank=rank, limit=2**6)
    assert found.complete and found.peak_cells <= 2**6
