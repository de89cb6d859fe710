"""Scenarios from the structures people already have: contact graphs and household tables.

:func:`contagion` turns a networkx graph into a noisy-OR Bayesian network over an orientation
of its edges; :func:`households` turns rows of (household id, role) into independent
households whose members depend on the household's root members (noisy-OR). Both return a
:class:`BayesianNetworkScenario` with binary nodes, built from numpy tables (no pgmpy) and
validated like any other network. Households are independent components; the count laws and
the quilt planner use that automatically (DESIGN §3.2, §3.6).

**Ising-type (``directed=False``).** With ``x_v = 1`` for the second state, the law is
``P(x) ∝ Π_v base_v^{x_v} (1 - base_v)^{1 - x_v} · Π_{edges uv} (1 - spread_uv)^{-x_u x_v}``:
a field ``h_v = logit(base_v)`` per person and a coupling ``J_uv = -log(1 - spread_uv) >= 0``
per contact, so two infected contacts weigh ``1 / (1 - spread)`` times more. With
``spread = 0`` the people are independent with ``P(infected) = base``; ``spread`` must be
below 1 (it is a coupling, not a probability of passing it on). The factors are one unary
table per person and one pairwise table per edge, all positive.

**Noisy-OR.** A node with parents ``u_1..u_m`` is in its second state ("infected", "yes")
with probability ``1 - (1 - base) · Π_{j: u_j in its second state} (1 - spread_j)``: it
catches the attribute on its own with probability ``base`` and from each affected parent
independently with probability ``spread_j``.

Examples
--------
>>> import networkx as nx
>>> bn = contagion(nx.path_graph(3), base=0.1, spread=0.5)
>>> bn.parents_of(2), bn.cpt(2)[1].round(3).tolist()
((1,), [0.1, 0.55])
>>> h = households([("h1", "parent"), ("h1", "child"), ("h2", "parent")], base=0.2,
...                spread=0.5)
>>> h.nodes, h.parents_of("h1/child")
(('h1/parent', 'h1/child', 'h2/parent'), ('h1/parent',))
"""

from __future__ import annotations

import numbers
from collections.abc import Hashable, Iterable, Mapping
from typing import Any

import numpy as np

from .._budget import check_allocation
from ..errors import InvalidModelError, InvalidParameterError, ParameterTypeError
from ._markov_network import MarkovNetworkScenario, validate_factors
from ._network_tables import validate_tables
from ._scenarios import BayesianNetworkScenario

__all__ = ["contagion", "households"]

#: Most parents a noisy-OR node may have (its CPT has 2^(m+1) cells).
MAX_PARENTS = 24


def _probability(value: Any, what: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ParameterTypeError(f"{what} must be a probability (a number in [0, 1]), got "
                                 f"the {type(value).__name__} {value!r}")
    out = float(value)
    if not 0.0 <= out <= 1.0:   # also refuses NaN
        raise InvalidParameterError(f"{what} must be a probability in [0, 1], got {out!r}")
    return out


def _lookup(value: Any, key: Hashable, what: str) -> float:
    """``value`` itself, or ``value[key]`` when it is a mapping (which must hold ``key``)."""
    if isinstance(value, Mapping):
        if key not in value:
            raise InvalidParameterError(
                f"{what} is a mapping without an entry for {key!r}; give every one, or one "
                "number for all")
        return _probability(value[key], f"{what}[{key!r}]")
    return _probability(value, what)


def noisy_or(base: float, spreads: list[float]) -> np.ndarray:
    """The CPT (axes: node, parents...) of a binary noisy-OR node.

    Examples
    --------
    >>> noisy_or(0.1, [0.5])[1].round(3).tolist()
    [0.1, 0.55]
    """
    yes = np.full((2,) * len(spreads), 1.0 - base)
    for j, s in enumerate(spreads):
        factor = np.ones(2)
        factor[1] = 1.0 - s
        yes = yes * factor.reshape([2 if i == j else 1 for i in range(len(spreads))])
    return np.stack([yes, 1.0 - yes])


def _check_parents(node: Hashable, count: int, hint: str) -> None:
    if count > MAX_PARENTS:
        raise InvalidModelError(
            f"node {node!r} would have {count} parents: its noisy-OR table has 2^{count + 1} "
            f"cells (at most {MAX_PARENTS} parents are accepted); {hint}")
    check_allocation(8 * 2 ** (count + 1), what=f"the noisy-OR table of node {node!r} "
                                                f"({count} parents)")


def _orientation(graph: Any, directed: bool, order: Iterable | None) -> dict:
    """Parents of every node: a DiGraph's own edges, or an undirected graph's edges from
    earlier to later nodes of ``order`` (default: the graph's node order)."""
    import networkx as nx  # type: ignore[import-untyped]  # networkx ships no type hints

    if not isinstance(graph, nx.Graph):
        raise ParameterTypeError(f"graph must be a networkx Graph or DiGraph, got "
                                 f"{type(graph).__name__}")
    if graph.number_of_nodes() == 0:
        raise InvalidModelError("the graph has no nodes")
    if graph.is_directed():
        if not nx.is_directed_acyclic_graph(graph):
            cycle = [u for u, _ in nx.find_cycle(graph)]
            raise InvalidModelError(f"the directed graph has a cycle through {cycle[:8]}; "
                                    "give a DAG, or an undirected graph to orient by order")
        return {v: tuple(graph.predecessors(v)) for v in graph.nodes}
    rank = {v: i for i, v in enumerate(graph.nodes if order is None else order)}
    missing = [v for v in graph.nodes if v not in rank]
    if missing or len(rank) != graph.number_of_nodes():
        raise InvalidParameterError(
            f"order must list every node of the graph once (missing: {missing[:8]})")
    return {v: tuple(sorted((u for u in graph[v] if rank[u] < rank[v]), key=rank.__getitem__))
            for v in graph.nodes}


def contagion(graph: Any, *, base: float | Mapping = 0.05, spread: float | Mapping = 0.3,
              directed: bool = True, order: Iterable | None = None,
              states: tuple = ("healthy", "infected"),
              name: str = "contagion") -> BayesianNetworkScenario | MarkovNetworkScenario:
    """A contagion prior on a networkx graph: noisy-OR over an orientation, or with
    ``directed=False`` an Ising-type Markov network (see the module docstring).

    Parameters
    ----------
    graph : networkx.Graph or networkx.DiGraph
        People and contacts. A DiGraph must be acyclic and is used as it is; an undirected
        graph is oriented from earlier to later nodes of ``order``.
    base : float or dict node -> float
        Probability of being infected with no infected parent.
    spread : float or dict (parent, child) -> float
        Probability that an infected parent passes it on.
    directed : bool
        True: noisy-OR over an orientation (a :class:`BayesianNetworkScenario`). False: the
        Ising-type :class:`MarkovNetworkScenario` of the module docstring, on the graph's
        undirected edges (``spread`` < 1; a dict keyed by either orientation of an edge).
    order : iterable, optional
        The orientation order of an undirected graph (default: ``graph.nodes``; unused when
        ``directed=False``).
    states : tuple of two names
        The states of every node (healthy first).
    """
    if len(states) != 2 or states[0] == states[1]:
        raise InvalidParameterError(f"states must be two distinct names, got {states!r}")
    if not directed:
        return _ising(graph, base, spread, tuple(states), name)
    parents = _orientation(graph, directed, order)
    raw = {}
    for v, ps in parents.items():
        _check_parents(v, len(ps), "use a sparser graph or a DiGraph with fewer in-edges")
        raw[v] = noisy_or(_lookup(base, v, "base"),
                          [_lookup(spread, (u, v), "spread") for u in ps])
    nodes = list(graph.nodes)
    tables = validate_tables(nodes, {v: tuple(states) for v in nodes}, parents, raw)
    return BayesianNetworkScenario(tables, name=name)


def _ising(graph: Any, base: Any, spread: Any, states: tuple,
           name: str) -> MarkovNetworkScenario:
    """The Ising-type Markov network of the module docstring on ``graph``'s edges."""
    import networkx as nx  # type: ignore[import-untyped]  # networkx ships no type hints

    if not isinstance(graph, nx.Graph):
        raise ParameterTypeError(f"graph must be a networkx Graph or DiGraph, got "
                                 f"{type(graph).__name__}")
    if graph.is_directed():
        graph = graph.to_undirected()
    nodes = list(graph.nodes)
    if not nodes:
        raise InvalidModelError("the graph has no nodes")
    factors: list[tuple[tuple, np.ndarray]] = []
    for v in nodes:
        b = _lookup(base, v, "base")
        if not 0.0 < b < 1.0:
            raise InvalidParameterError(f"base[{v!r}] = {b!r}: an undirected prior needs "
                                        "0 < base < 1 (each person's field is logit(base))")
        factors.append(((v,), np.array([1.0 - b, b])))
    for u, v in graph.edges:
        if u == v:
            continue
        s = _edge_spread(spread, u, v)
        factors.append(((u, v), np.array([[1.0, 1.0], [1.0, 1.0 / (1.0 - s)]])))
    return MarkovNetworkScenario(tables=validate_factors(
        nodes, {v: states for v in nodes}, factors), name=name)


def _edge_spread(spread: Any, u: Hashable, v: Hashable) -> float:
    key = (v, u) if isinstance(spread, Mapping) and (u, v) not in spread else (u, v)
    s = _lookup(spread, key, "spread")
    if s >= 1.0:
        raise InvalidParameterError(f"spread[{key!r}] = {s!r}: an undirected prior needs "
                                    "spread < 1 (its coupling is -log(1 - spread))")
    return s


def _rows(table: Any) -> list[tuple]:
    """(household, role) rows of a sequence of pairs or of a DataFrame's first two columns."""
    if hasattr(table, "itertuples"):
        table = table.iloc[:, :2].itertuples(index=False, name=None)
    rows = []
    for i, raw in enumerate(table):
        row = tuple(raw) if isinstance(raw, Iterable) and not isinstance(raw, str) else ()
        if len(row) != 2:
            raise InvalidParameterError(
                f"row {i} of the household table is {raw!r}; each row must be "
                "(household id, role)")
        rows.append(row)
    if not rows:
        raise InvalidParameterError("the household table has no rows")
    return rows


def _members(rows: list[tuple], roots: tuple) -> dict[Hashable, list[tuple[str, Any]]]:
    """Node names per household, roots first, then by role (equal households look alike)."""
    by_house: dict[Hashable, list] = {}
    for house, role in rows:
        by_house.setdefault(house, []).append(role)
    out = {}
    for house, roles in by_house.items():
        ordered = sorted(roles, key=lambda r: (r not in roots, str(r)))
        seen: dict = {}
        names = []
        for r in ordered:
            seen[r] = seen.get(r, 0) + 1
            names.append(f"{house}/{r}" if roles.count(r) == 1 else f"{house}/{r}.{seen[r]}")
        out[house] = list(zip(names, ordered, strict=True))
    return out


def households(table: Any, *, roots: Iterable = ("parent", "head", "adult"),
               base: float | Mapping = 0.1, spread: float | Mapping = 0.5,
               states: tuple = ("no", "yes"),
               name: str = "households") -> BayesianNetworkScenario:
    """Independent households from rows of (household id, role).

    Node ``"<household>/<role>"`` (``".2"``, ``".3"``... when a role repeats in a household).
    Members whose role is in ``roots`` have the attribute with probability ``base[role]``,
    independently; every other member is noisy-OR over the household's root members:
    ``P(yes | roots) = 1 - (1 - base[role]) · Π_{roots with yes} (1 - spread[role])``. A
    household without a root member has independent members. ``base`` and ``spread`` are
    one number or a dict role -> number. Households are independent of each other, and
    households with the same roles are plates (computed once, DESIGN §3.6).
    """
    roots = tuple(roots)
    if len(states) != 2 or states[0] == states[1]:
        raise InvalidParameterError(f"states must be two distinct names, got {states!r}")
    nodes, parents, raw = [], {}, {}
    for house, members in _members(_rows(table), roots).items():
        heads = tuple(n for n, r in members if r in roots)
        for node, role in members:
            ps = () if role in roots else heads
            _check_parents(node, len(ps), f"household {house!r} has too many root members")
            raw[node] = noisy_or(_lookup(base, role, "base"),
                                 [_lookup(spread, role, "spread")] * len(ps))
            parents[node] = ps
            nodes.append(node)
    if len(set(nodes)) != len(nodes):
        raise InvalidModelError("two members get the same node name; use household ids and "
                                "roles whose text differs")
    tables = validate_tables(nodes, {v: tuple(states) for v in nodes}, parents, raw)
    return BayesianNetworkScenario(tables, name=name)
