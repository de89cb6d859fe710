"""Factor views of the network models the elimination engine works on (internal).

A Bayesian network is a product of one factor per node (its CPT over the node and its
parents), a Markov network a product of its factors over the partition function. The engine
(:mod:`._network_engine`) eliminates either from :func:`factor_tables`; what differs is which
factors a query needs: ancestors for a Bayesian network, graph separation for a Markov network
(:func:`requisite_factors`).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Mapping

from ..scenarios import BayesianNetworkScenario, MarkovNetworkScenario

__all__ = ["Ancestors", "Model", "connected_parts", "factor_tables", "requisite_factors"]

#: A model the engine eliminates: a Bayesian network (one factor per node, its CPT) or a
#: Markov network (its factors, keyed by position).
Model = BayesianNetworkScenario | MarkovNetworkScenario


class Ancestors(Mapping):
    """Each node's ancestors, itself included, found on first use (a walk up its parents)
    and kept; :meth:`of` walks up from many nodes at once. Storing every node's set up front
    cost O(n²) time and memory on a network of thousands of nodes.

    Examples
    --------
    >>> up = Ancestors({"a": (), "b": ("a",), "c": ("b",)})
    >>> sorted(up["c"]), sorted(up.of(["b"]))
    (['a', 'b', 'c'], ['a', 'b'])
    """

    def __init__(self, parents: Mapping) -> None:
        self._parents = parents
        self._known: dict[Hashable, frozenset] = {}

    def __getitem__(self, v: Hashable) -> frozenset:
        out = self._known.get(v)
        if out is None:
            if v not in self._parents:
                raise KeyError(v)
            out = self._known[v] = self.of([v])
        return out

    def __iter__(self) -> Iterator:
        return iter(self._parents)

    def __len__(self) -> int:
        return len(self._parents)

    def of(self, nodes: Iterable) -> frozenset:
        """The ancestors of any of ``nodes`` (themselves included)."""
        seen = set(nodes)
        todo = list(seen)
        while todo:
            for p in self._parents[todo.pop()]:
                if p not in seen:
                    seen.add(p)
                    todo.append(p)
        return frozenset(seen)


def factor_tables(model: Model) -> tuple[dict, dict]:
    """``(scopes, tables)`` of the model's factors, both keyed alike: a Bayesian network's
    factor of node ``v`` is its CPT over ``(v, *parents)``; a Markov network's factor ``j``
    is its ``j``-th table.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovNetworkScenario
    >>> mn = MarkovNetworkScenario.from_factors([(("a", "b"), [[2, 1], [1, 2]])],
    ...                                         {"a": (0, 1), "b": (0, 1)})
    >>> factor_tables(mn)[0]
    {0: ('a', 'b')}
    """
    if isinstance(model, MarkovNetworkScenario):
        return dict(enumerate(model.tables.scopes)), dict(enumerate(model.tables.values))
    t = model.tables
    return {v: (v, *t.parents[v]) for v in t.nodes}, t.cpts


def connected_parts(graph: dict, nodes: tuple) -> dict[Hashable, frozenset]:
    """Each node's connected component in ``graph`` (node -> neighbours)."""
    out: dict[Hashable, frozenset] = {}
    for v in nodes:
        if v in out:
            continue
        seen, todo = {v}, [v]
        while todo:
            for u in graph[todo.pop()]:
                if u not in seen:
                    seen.add(u)
                    todo.append(u)
        part = frozenset(seen)
        out.update(dict.fromkeys(part, part))
    return out


def requisite_factors(parts: Mapping, neighbours: dict, families: dict, free: list,
                      observed: set) -> tuple[frozenset, frozenset]:
    """The requisite factors of a query on a Markov network: ``(kept, relevant)``.

    ``relevant`` are the factors of the components holding the targets and the evidence
    (``parts``: each node's component; ``families``: each factor's scope); ``kept`` are
    those touching the part of the graph the targets reach without passing an observed
    node. The others contribute a constant given the evidence (graph separation).

    Examples
    --------
    >>> parts = dict.fromkeys("abc", frozenset("abc"))
    >>> near = {"a": ("b",), "b": ("a", "c"), "c": ("b",)}
    >>> kept, relevant = requisite_factors(parts, near, {0: ("a", "b"), 1: ("b", "c")},
    ...                                    ["a"], {"b"})
    >>> sorted(kept), sorted(relevant)
    ([0], [0, 1])
    """
    nodes = frozenset().union(*(parts[v] for v in [*free, *observed]))
    relevant = frozenset(k for k, scope in families.items() if scope[0] in nodes)
    if not free:
        return relevant, relevant
    reach, todo = set(free), list(free)
    while todo:
        for u in neighbours[todo.pop()]:
            if u not in reach and u not in observed:
                reach.add(u)
                todo.append(u)
    kept = frozenset(k for k in relevant if not reach.isdisjoint(families[k]))
    return kept, relevant
