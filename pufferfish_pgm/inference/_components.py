"""Independent parts of a network: weakly connected components and plates of equal ones.

A Bayesian network whose DAG falls into weakly connected components (households, families,
villages) is the product of the components' laws: the components are mutually independent,
and evidence on one changes nothing in the others. Components with the same structure and the
same tables (the same node order, state names, parent positions and CPTs) are *plates*: one
representative stands for all of them, so what is computed for one (a count law, a quilt) holds
for every member, node by node at the same position. The stages above use this to compute per
component what would otherwise be computed on the whole network (DESIGN §3.6, §3.2).

A Markov network (:class:`~pufferfish_pgm.scenarios.MarkovNetworkScenario`) splits the same
way into the connected components of its factor graph (nodes linked when they share a scope):
its law is the product of the components' normalised laws. Two components are a plate when
they have the same node order, states and factors (each factor's scope positions and table,
in model order): the same tables up to a renaming of the nodes.

The split is computed once per network (weak-keyed by its tables, owned by this module).

Examples
--------
>>> from pufferfish_pgm.scenarios._network_tables import validate_tables
>>> t = validate_tables(["a", "b", "c", "d"], {v: (0, 1) for v in "abcd"},
...                     {"a": (), "b": ("a",), "c": (), "d": ("c",)},
...                     {"a": [.5, .5], "c": [.5, .5], "b": [[.9, .1], [.1, .9]],
...                      "d": [[.9, .1], [.1, .9]]})
>>> parts = network_parts(t)
>>> parts.components, [p.members for p in parts.plates]
(2, [(('a', 'b'), ('c', 'd'))])
>>> parts.where["d"]
(0, 1, 1)
"""

from __future__ import annotations

import weakref
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

from ..scenarios import BayesianNetworkScenario, MarkovNetworkScenario
from ..scenarios._engine import FactorTables, NetworkTables

__all__ = ["NetworkParts", "Plate", "component_signature", "linked_parts", "network_parts",
           "sub_tables"]


@dataclass(frozen=True, eq=False)
class Plate:
    """Identical components: a representative network and each member's nodes.

    ``members[m][p]`` is the node of member ``m`` at position ``p``; the representative's
    node at position ``p`` is ``scenario.nodes[p]`` (its nodes are those of member 0).
    """

    scenario: BayesianNetworkScenario | MarkovNetworkScenario
    members: tuple[tuple, ...]


@dataclass(frozen=True, eq=False)
class NetworkParts:
    """The plates of a network and where each node sits: ``where[v] = (plate, member,
    position)``."""

    plates: tuple[Plate, ...]
    where: dict[Hashable, tuple[int, int, int]]

    @property
    def components(self) -> int:
        """How many weakly connected components the network has."""
        return sum(len(p.members) for p in self.plates)

    def component_of(self, node: Hashable) -> tuple:
        """The nodes of ``node``'s component, in topological order."""
        plate, member, _ = self.where[node]
        return self.plates[plate].members[member]


def _components(tables: NetworkTables) -> list[tuple]:
    """Weakly connected components (union-find over parent links), nodes in model order."""
    return linked_parts(tables.nodes, [tables.parents])


def linked_parts(nodes: Sequence, parents: Sequence[Mapping]) -> list[tuple]:
    """The weakly connected parts of ``nodes`` under the union of the parent links of every
    map in ``parents`` (union-find), each part in the order of ``nodes``.

    >>> linked_parts("abcd", [{"a": (), "b": ("a",), "c": (), "d": ()}, {"d": ("c",)}])
    [('a', 'b'), ('c', 'd')]
    """
    root = {v: v for v in nodes}

    def find(v: Hashable) -> Hashable:
        while root[v] != v:
            root[v] = root[root[v]]
            v = root[v]
        return v

    for links in parents:
        for v in nodes:
            for p in links.get(v, ()):
                a, b = find(v), find(p)
                if a != b:
                    root[a] = b
    groups: dict[Hashable, list] = {}
    for v in nodes:
        groups.setdefault(find(v), []).append(v)
    return [tuple(g) for g in groups.values()]


def component_signature(tables: NetworkTables, nodes: tuple) -> tuple:
    """What two components must share to be a plate: per position, the states, the parents'
    positions and the CPT (shape and bytes)."""
    pos = {v: i for i, v in enumerate(nodes)}
    return tuple((tables.states[v], tuple(pos[p] for p in tables.parents[v]),
                  tables.cpts[v].shape, tables.cpts[v].tobytes()) for v in nodes)


def sub_tables(tables: NetworkTables, nodes: tuple) -> NetworkTables:
    """The (already validated) tables of one component."""
    return NetworkTables(nodes=nodes, states={v: tables.states[v] for v in nodes},
                         parents={v: tables.parents[v] for v in nodes},
                         cpts={v: tables.cpts[v] for v in nodes})


def _split(tables: NetworkTables) -> NetworkParts:
    by_signature: dict[tuple, list[tuple]] = {}
    for nodes in _components(tables):
        by_signature.setdefault(component_signature(tables, nodes), []).append(nodes)
    plates, where = [], {}
    for k, members in enumerate(by_signature.values()):
        rep = BayesianNetworkScenario(tables=sub_tables(tables, members[0]),
                                      name=f"component of {members[0][0]!r}")
        plates.append(Plate(rep, tuple(members)))
        for m, nodes in enumerate(members):
            for p, v in enumerate(nodes):
                where[v] = (k, m, p)
    return NetworkParts(tuple(plates), where)


def _factor_split(tables: FactorTables) -> NetworkParts:
    """The plates of a Markov network's factor-graph components (see the module)."""
    links: dict[Hashable, list] = {}
    for scope in tables.scopes:
        links.setdefault(scope[0], []).extend(scope[1:])
    owner: dict[Hashable, list[int]] = {}
    for j, scope in enumerate(tables.scopes):
        owner.setdefault(scope[0], []).append(j)
    by_signature: dict[tuple, list[tuple]] = {}
    chosen: dict[tuple, list[int]] = {}
    for nodes in linked_parts(tables.nodes, [links]):
        pos = {v: i for i, v in enumerate(nodes)}
        js = chosen[nodes] = sorted(j for v in nodes for j in owner.get(v, ()))
        key = (tuple(tables.states[v] for v in nodes),
               tuple((tuple(pos[v] for v in tables.scopes[j]), tables.values[j].shape,
                      tables.values[j].tobytes()) for j in js))
        by_signature.setdefault(key, []).append(nodes)
    plates, where = [], {}
    for k, members in enumerate(by_signature.values()):
        nodes, js = members[0], chosen[members[0]]
        sub = FactorTables(nodes, {v: tables.states[v] for v in nodes},
                           tuple(tables.scopes[j] for j in js),
                           tuple(tables.values[j] for j in js),
                           {v: tables.neighbours[v] for v in nodes})
        plates.append(Plate(MarkovNetworkScenario(tables=sub,
                                                  name=f"component of {nodes[0]!r}"),
                            tuple(members)))
        for m, member in enumerate(members):
            for p, v in enumerate(member):
                where[v] = (k, m, p)
    return NetworkParts(tuple(plates), where)


_PARTS: weakref.WeakKeyDictionary[NetworkTables | FactorTables, NetworkParts] = (
    weakref.WeakKeyDictionary())


def network_parts(tables: NetworkTables | FactorTables) -> NetworkParts:
    """The :class:`NetworkParts` of a network's tables (computed once per tables object):
    a Bayesian network's weakly connected components, or a Markov network's factor-graph
    components.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovNetworkScenario
    >>> pair = [[3.0, 1.0], [1.0, 3.0]]
    >>> mn = MarkovNetworkScenario.from_factors(
    ...     [(("a", "b"), pair), (("c", "d"), pair), (("e",), [1.0, 2.0])],
    ...     {v: (0, 1) for v in "abcde"})
    >>> [p.members for p in network_parts(mn.tables).plates]
    [(('a', 'b'), ('c', 'd')), (('e',),)]
    """
    out = _PARTS.get(tables)
    if out is None:
        out = _PARTS[tables] = (_factor_split(tables) if isinstance(tables, FactorTables)
                                else _split(tables))
    return out
