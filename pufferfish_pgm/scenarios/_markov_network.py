"""Undirected priors: discrete Markov networks (and factor graphs) as scenarios (issue 24).

A Markov network over nodes ``V`` with factors ``φ_1..φ_m`` (each a non-negative table over its
scope ``S_j ⊆ V``) is the law ``P(x) = Π_j φ_j(x_{S_j}) / Z``. Its graph links two nodes when
they share a scope; a set ``X_Q`` *separates* ``X_i`` from ``X_R`` when every path from
``X_i`` to ``X_R`` in that graph passes through ``X_Q``, and then ``X_R ⟂ X_i | X_Q``
(the global Markov property of a Gibbs law; ``docs/undirected.md``).

:class:`FactorTables` are the library's own tables (no pgmpy here; the adapter
:mod:`._pgmpy` converts pgmpy ``DiscreteMarkovNetwork`` and ``FactorGraph`` models), and
:func:`validate_factors` builds them strictly: every node named with its states, every factor's
scope known and its shape right, values finite and non-negative, every node in some factor,
and a positive partition function (some joint state of positive weight). The last check needs
no work when every value is positive; otherwise it eliminates Boolean tables, each checked
against the memory budget before it is built (:class:`LimitExceededError` names the node).

Examples
--------
>>> mn = MarkovNetworkScenario.from_factors(
...     [(("a", "b"), [[2.0, 1.0], [1.0, 2.0]])], {"a": ("no", "yes"), "b": ("no", "yes")})
>>> mn.nodes, mn.neighbours_of("a"), mn.edges()
(('a', 'b'), ('b',), [('a', 'b')])
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._budget import check_allocation
from ..errors import InvalidModelError, ParameterTypeError, UnknownNodeError
from ._network_scenario import _Domain

__all__ = ["FactorTables", "MarkovNetworkScenario", "validate_factors"]


@dataclass(frozen=True, eq=False)
class FactorTables:
    """A validated discrete Markov network as plain numpy tables.

    ``values[j]`` has one axis per node of ``scopes[j]`` (in that order), of length
    ``len(states[node])``; ``neighbours[v]`` are the nodes sharing a scope with ``v`` (model
    order); ``factors_of[v]`` the positions of the factors over ``v``. Values are
    unnormalised: the law is their product over the partition function.
    """

    nodes: tuple
    states: dict
    scopes: tuple[tuple, ...]
    values: tuple[np.ndarray, ...]
    neighbours: dict = field(repr=False, default_factory=dict)
    factors_of: dict = field(repr=False, default_factory=dict)

    def __post_init__(self) -> None:
        """``factors_of[v]``: the positions of the factors over ``v`` (filled when not given),
        so that what is read per node costs its own factors, not a scan of all of them."""
        if not self.factors_of:
            index: dict = {}
            for j, scope in enumerate(self.scopes):
                for v in dict.fromkeys(scope):
                    index.setdefault(v, []).append(j)
            object.__setattr__(self, "factors_of", {v: tuple(js) for v, js in index.items()})


def _check_states(nodes: Sequence, states: Mapping) -> dict:
    out = {}
    for v in nodes:
        if v not in states:
            raise InvalidModelError(f"node {v!r} has no state names; give states[{v!r}]")
        names = tuple(states[v])
        bad = next((s for s in names if not isinstance(s, Hashable)), None)
        if bad is not None:
            raise ParameterTypeError(f"the states of node {v!r} must be hashable names, got "
                                     f"the {type(bad).__name__} {bad!r}")
        if not names or len(set(names)) != len(names):
            raise InvalidModelError(f"node {v!r} must name at least one state, each once; got "
                                    f"{list(names)}")
        out[v] = names
    return out


def _check_factor(j: int, scope: tuple, values: Any, states: dict) -> np.ndarray:
    """One factor's table, checked: known nodes, no repeats, shape, finite and >= 0."""
    for v in scope:
        if v not in states:
            shown = list(states)[:8]
            raise UnknownNodeError(f"factor {j} over {list(scope)} names the unknown node "
                                   f"{v!r}; the nodes are {shown}")
    if len(set(scope)) != len(scope):
        raise InvalidModelError(f"factor {j} lists a node twice in its scope {list(scope)}")
    table = np.array(values, dtype=float)
    shape = tuple(len(states[v]) for v in scope)
    if table.shape != shape:
        raise InvalidModelError(f"factor {j} over {list(scope)} has shape {table.shape}, but "
                                f"the nodes' states give {shape}")
    bad = ~np.isfinite(table) | (table < 0)
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        at = {v: states[v][i] for v, i in zip(scope, idx, strict=True)}
        raise InvalidModelError(f"factor {j} over {list(scope)} has the value "
                                f"{float(table[idx])!r} at {at}; factor values must be finite "
                                "and non-negative")
    table.setflags(write=False)
    return table


def _neighbours(nodes: tuple, scopes: tuple) -> dict:
    near: dict = {v: set() for v in nodes}
    for scope in scopes:
        for v in scope:
            near[v].update(u for u in scope if u != v)
    rank = {v: i for i, v in enumerate(nodes)}
    return {v: tuple(sorted(near[v], key=rank.__getitem__)) for v in nodes}


def validate_factors(nodes: Sequence, states: Mapping, factors: Sequence[tuple[Sequence, Any]],
                     *, memory_budget: int | float | str | None = None) -> FactorTables:
    """Strictly validated :class:`FactorTables` from ``(scope, values)`` pairs.

    Examples
    --------
    >>> t = validate_factors(["a"], {"a": (0, 1)}, [(("a",), [0.0, 3.0])])
    >>> t.scopes, t.values[0].tolist()
    ((('a',),), [0.0, 3.0])
    >>> validate_factors(["a"], {"a": (0, 1)}, [(("a",), [0.0, 0.0])])
    Traceback (most recent call last):
    ...
    pufferfish_pgm.errors.InvalidModelError: the factors give weight 0 to every joint state ...
    """
    nodes = tuple(nodes)
    if not nodes:
        raise InvalidModelError("the Markov network has no nodes; add nodes and factors")
    if len(set(nodes)) != len(nodes):
        raise InvalidModelError(f"the nodes repeat a name: {list(nodes)[:8]}")
    named = _check_states(nodes, states)
    scopes, values = [], []
    for j, item in enumerate(factors):
        if not (isinstance(item, tuple) and len(item) == 2):
            raise ParameterTypeError(f"factor {j} must be a (scope, values) pair, got {item!r}")
        scope = (item[0],) if isinstance(item[0], str) else tuple(item[0])
        scopes.append(scope)
        values.append(_check_factor(j, scope, item[1], named))
    covered = {v for s in scopes for v in s}
    lonely = [v for v in nodes if v not in covered]
    if lonely:
        raise InvalidModelError(f"nodes {lonely[:8]} are in no factor; give each node at least "
                                "one factor (e.g. a table of ones for a uniform node)")
    tables = FactorTables(nodes, named, tuple(scopes), tuple(values),
                          _neighbours(nodes, tuple(scopes)))
    _check_partition(tables, memory_budget)
    return tables


def _check_partition(tables: FactorTables, budget: int | float | str | None) -> None:
    """Refuse a zero partition function: no joint state has positive weight.

    Variable elimination over the Boolean tables ``φ_j > 0`` (an 'and' of the factors, an
    'or' over the variable summed out); each product is checked against the budget (8 bytes
    a cell) before it is built. Nothing to do when every value is positive.
    """
    if all(bool((v > 0).all()) for v in tables.values):
        return
    live = [(frozenset(s), s, v > 0) for s, v in zip(tables.scopes, tables.values, strict=True)]
    dims = {v: len(tables.states[v]) for v in tables.nodes}
    todo = set(tables.nodes)
    while todo:
        x = min(todo, key=lambda u: (_cells(live, u, dims), str(u)))
        cells = _cells(live, x, dims)
        check_allocation(8 * cells, budget=budget, what=(
            f"checking that the partition function is positive (summing out node {x!r}: "
            f"{cells:,} cells)"))
        todo.discard(x)
        touching = [f for f in live if x in f[0]]
        live = [f for f in live if x not in f[0]]
        live.append(_or_out(touching, x))
    if not all(bool(f[2]) for f in live):
        raise InvalidModelError(
            "the factors give weight 0 to every joint state (partition function 0): no "
            "assignment makes all of them positive; fix the zero entries")


def _cells(live: list, x: Hashable, dims: dict) -> int:
    scope = frozenset().union(*(f[0] for f in live if x in f[0]))
    return math.prod(dims[v] for v in scope)


def _or_out(touching: list, x: Hashable) -> tuple:
    """The Boolean product of ``touching`` with ``x`` or-ed out: (scope set, scope, table)."""
    scope = tuple(dict.fromkeys(v for f in touching for v in f[1]))
    ids = {v: i for i, v in enumerate(scope)}
    out = tuple(v for v in scope if v != x)
    operands: list[Any] = []
    for f in touching:   # counts of satisfying states fit: each product is 0 or 1
        operands += [f[2].astype(np.float64), [ids[v] for v in f[1]]]
    table = np.asarray(np.einsum(*operands, [ids[v] for v in out]) > 0)
    return frozenset(out), out, table


@dataclass(frozen=True, eq=False)
class MarkovNetworkScenario(_Domain):
    """A scenario given by a discrete Markov network (factor model), strictly validated.

    Parameters
    ----------
    model : pgmpy.models.DiscreteMarkovNetwork or pgmpy.models.FactorGraph, optional
        The model; it is copied (later changes do not affect the scenario).
    name : str, optional
        A label used in plans and error messages.
    tables : FactorTables, optional (keyword only)
        Already validated tables instead of ``model``.
    memory_budget : int, float or str, optional
        Bounds the check that the partition function is positive (only run when some factor
        value is 0).

    Notes
    -----
    Immutable and cache-free like :class:`BayesianNetworkScenario`: inference indices and
    count-law engines are kept by the stages above, per scenario object.

    Examples
    --------
    >>> from pgmpy.models import DiscreteMarkovNetwork
    >>> from pgmpy.factors.discrete import DiscreteFactor
    >>> m = DiscreteMarkovNetwork([("a", "b")])
    >>> m.add_factors(DiscreteFactor(["a", "b"], [2, 2], [3, 1, 1, 3]))
    >>> mn = MarkovNetworkScenario(m, name="pair")
    >>> mn.states_of("a"), mn.factors()[0][1].tolist()
    ((0, 1), [[3.0, 1.0], [1.0, 3.0]])
    """

    tables: FactorTables
    name: str = "markov network"
    _node_set: frozenset = field(init=False, repr=False, compare=False)

    def __init__(self, model: Any = None, *, name: str = "markov network",
                 tables: FactorTables | None = None,
                 memory_budget: int | float | str | None = None) -> None:
        if isinstance(model, FactorTables) and tables is None:
            model, tables = None, model
        if (model is None) == (tables is None):
            raise ParameterTypeError(
                "MarkovNetworkScenario needs a pgmpy DiscreteMarkovNetwork or FactorGraph (or "
                "tables=); " + ("got neither" if model is None else "got both"))
        if tables is None:
            from ._pgmpy import factors_from_pgmpy

            nodes, states, factors = factors_from_pgmpy(model)
            tables = validate_factors(nodes, states, factors, memory_budget=memory_budget)
        elif not isinstance(tables, FactorTables):
            raise ParameterTypeError(f"tables must be FactorTables, got {type(tables).__name__}")
        object.__setattr__(self, "tables", tables)
        object.__setattr__(self, "name", str(name))
        object.__setattr__(self, "_node_set", frozenset(tables.nodes))

    @classmethod
    def from_factors(cls, factors: Sequence[tuple[Sequence, Any]], states: Mapping, *,
                     nodes: Sequence | None = None, name: str = "markov network",
                     memory_budget: int | float | str | None = None) -> MarkovNetworkScenario:
        """From ``(scope, values)`` pairs and ``states`` (node -> state names); the nodes are
        ``nodes`` or the keys of ``states``, in that order (see :func:`validate_factors`)."""
        if not isinstance(states, Mapping):
            raise ParameterTypeError(f"states must be a dict node -> state names, got "
                                     f"{type(states).__name__}")
        order = list(states) if nodes is None else list(nodes)
        return cls(tables=validate_factors(order, states, factors, memory_budget=memory_budget),
                   name=name)

    @property
    def nodes(self) -> tuple:
        """Nodes in model order."""
        return self.tables.nodes

    def check_node(self, node: Any) -> Any:
        if node not in self._node_set:
            shown = list(self.nodes[:8]) + (["..."] if len(self.nodes) > 8 else [])
            raise UnknownNodeError(
                f"unknown node {node!r} in scenario {self.name!r}; its nodes are {shown}")
        return node

    def states_of(self, node: Any) -> tuple:
        return self.tables.states[self.check_node(node)]

    def neighbours_of(self, node: Any) -> tuple:
        """The nodes sharing a factor with ``node`` (model order)."""
        return self.tables.neighbours[self.check_node(node)]

    def factors(self) -> list[tuple[tuple, np.ndarray]]:
        """``(scope, values)`` of every factor (copies)."""
        return [(s, v.copy()) for s, v in zip(self.tables.scopes, self.tables.values,
                                               strict=True)]

    def edges(self) -> list[tuple]:
        """Undirected edges ``(u, v)``, u before v in model order."""
        rank = {v: i for i, v in enumerate(self.nodes)}
        return [(u, v) for u in self.nodes for v in self.tables.neighbours[u]
                if rank[u] < rank[v]]

    def to_pgmpy(self) -> Any:
        """A fresh pgmpy ``DiscreteMarkovNetwork`` with the validated factors."""
        from ._pgmpy import factors_to_pgmpy

        return factors_to_pgmpy(self.tables)
