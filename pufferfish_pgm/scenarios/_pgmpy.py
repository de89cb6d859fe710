"""The only module that imports pgmpy: reading and writing pgmpy models (the adapter).

pgmpy is imported lazily inside functions (it takes seconds to import), so chain-only paths
and ``--help`` never pay for it. A pgmpy network is copied into the library's own
:class:`~pufferfish_pgm.scenarios._network_tables.NetworkTables` and strictly validated there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import InvalidModelError, InvalidParameterError, ParameterTypeError
from ._network_tables import (
    DEFAULT_RENORMALIZE,
    DEFAULT_TOLERANCE,
    NetworkTables,
    check_renormalize,
    validate_tables,
)

__all__ = ["chain_from_pgmpy", "cpd_parents", "factors_from_pgmpy", "factors_to_pgmpy",
           "model_cpds", "pgmpy_inference_subclass",
           "tables_from_pgmpy", "tables_to_pgmpy", "to_discrete_factor"]


def tables_from_pgmpy(model: Any, *, renormalize: float = DEFAULT_RENORMALIZE,
                      tolerance: float = DEFAULT_TOLERANCE) -> NetworkTables:
    """Copy and strictly validate a pgmpy ``DiscreteBayesianNetwork``.

    Columns off by more than ``tolerance`` but at most ``renormalize`` are rescaled and listed
    in ``renormalized``; if any column is off by more, one :class:`InvalidModelError` lists
    every such column and the ``renormalize=`` that would accept them all.

    Examples
    --------
    >>> from pgmpy.models import DiscreteBayesianNetwork
    >>> from pgmpy.factors.discrete import TabularCPD
    >>> m = DiscreteBayesianNetwork([("A", "B")])
    >>> m.add_cpds(TabularCPD("A", 2, [[0.4], [0.6]]),
    ...            TabularCPD("B", 2, [[0.9, 0.2], [0.1, 0.8]], evidence=["A"], evidence_card=[2]))
    >>> t = tables_from_pgmpy(m)
    >>> t.nodes, t.parents["B"], t.cpts["B"].shape
    (('A', 'B'), ('A',), (2, 2))
    """
    from pgmpy.models import DiscreteBayesianNetwork  # type: ignore[import-untyped]  # no hints

    renormalize = check_renormalize(renormalize)
    if not isinstance(model, DiscreteBayesianNetwork):
        hint = ("unroll it with BayesianNetworkScenario.from_dbn(dbn, length=T)"
                if type(model).__name__ == "DynamicBayesianNetwork"
                else "load files with BayesianNetworkScenario.from_file(path)")
        raise ParameterTypeError(
            f"expected a pgmpy DiscreteBayesianNetwork, got {type(model).__name__}; {hint}"
        )
    cpds = model_cpds(model)
    states = {v: tuple(cpd.state_names[v]) for v, cpd in cpds.items()}
    parents = {v: cpd_parents(v, cpd, model.get_parents(v), states) for v, cpd in cpds.items()}
    return validate_tables(list(cpds), states, parents, {v: c.values for v, c in cpds.items()},
                           renormalize=renormalize, tolerance=tolerance)


def model_cpds(model: Any) -> dict:
    """``{node: TabularCPD}`` of a pgmpy network, with a clear error for a missing CPD."""
    nodes = list(model.nodes())
    if not nodes:
        raise InvalidModelError("the network has no nodes; add nodes and CPDs first")
    cpds = {}
    for node in nodes:
        cpd = model.get_cpds(node)
        if cpd is None:
            raise InvalidModelError(f"node {node!r} has no CPD; add one with model.add_cpds(...)")
        cpds[node] = cpd
    return cpds


def cpd_parents(node: Any, cpd: Any, graph_parents: Any, states: dict) -> tuple:
    """The parents of a pgmpy CPD, checked against the graph's parents and their states."""
    parents = tuple(cpd.variables[1:])
    if set(parents) != set(graph_parents):
        raise InvalidModelError(
            f"the CPD of node {node!r} is conditioned on {sorted(map(str, parents))} but the "
            f"graph gives parents {sorted(map(str, graph_parents))}; make them agree"
        )
    for p in parents:
        if tuple(cpd.state_names[p]) != states[p]:
            raise InvalidModelError(
                f"the CPD of node {node!r} names the states of its parent {p!r} as "
                f"{list(cpd.state_names[p])} but node {p!r} has {list(states[p])}; use the "
                "same state names in the same order"
            )
    return parents


def tables_to_pgmpy(tables: NetworkTables) -> Any:
    """Build a fresh pgmpy ``DiscreteBayesianNetwork`` from validated tables."""
    from pgmpy.factors.discrete import TabularCPD  # type: ignore[import-untyped]  # no hints
    from pgmpy.models import DiscreteBayesianNetwork  # type: ignore[import-untyped]  # no hints

    model = DiscreteBayesianNetwork()
    model.add_nodes_from(tables.nodes)
    model.add_edges_from((p, v) for v in tables.nodes for p in tables.parents[v])
    for v in tables.nodes:
        pa = list(tables.parents[v])
        table = tables.cpts[v]
        model.add_cpds(TabularCPD(
            v, table.shape[0], table.reshape(table.shape[0], -1),
            evidence=pa or None, evidence_card=[len(tables.states[p]) for p in pa] or None,
            state_names={u: list(tables.states[u]) for u in [v, *pa]},
        ))
    return model


def chain_from_pgmpy(chain: Any) -> tuple[np.ndarray, tuple, Any]:
    """Return ``(transition, states, start_state)`` from a single-variable pgmpy MarkovChain."""
    from pgmpy.models import MarkovChain  # type: ignore[import-untyped]  # no hints

    if not isinstance(chain, MarkovChain):
        raise ParameterTypeError(f"expected a pgmpy MarkovChain, got {type(chain).__name__}")
    if len(chain.variables) != 1:
        raise InvalidModelError(
            f"the pgmpy MarkovChain has {len(chain.variables)} variables {chain.variables}; "
            "pass a chain over exactly one variable"
        )
    var = chain.variables[0]
    model = chain.transition_models.get(var)
    if not model:
        raise InvalidModelError(f"variable {var!r} has no transition model; add one first")
    states = tuple(range(chain.cardinalities[var]))
    matrix = np.array([[model.get(s, {}).get(t, 0.0) for t in states] for s in states])
    start = None if chain.state is None else dict(chain.state).get(var)
    return matrix, states, start


def to_discrete_factor(variables: Sequence, states: Sequence[Sequence], values: Any) -> Any:
    """A pgmpy ``DiscreteFactor`` over ``variables`` (one axis each, in this order).

    ``states[i]`` names the states of ``variables[i]`` along axis ``i`` of ``values``; pgmpy's
    factor copies them as its ``state_names``.

    Examples
    --------
    >>> f = to_discrete_factor(["lung"], [("yes", "no")], np.array([0.1, 0.9]))
    >>> f.variables, f.state_names, f.values.tolist()
    (['lung'], {'lung': ['yes', 'no']}, [0.1, 0.9])
    """
    from pgmpy.factors.discrete import DiscreteFactor  # type: ignore[import-untyped]  # no hints

    values = np.asarray(values, dtype=float)
    variables = list(variables)
    cards = [len(s) for s in states]
    if values.shape != tuple(cards) or len(variables) != len(cards):
        raise InvalidParameterError(
            f"values of shape {values.shape} do not fit {len(variables)} variables with "
            f"{cards} states"
        )
    return DiscreteFactor(variables, cards, values,
                          state_names={v: list(s) for v, s in zip(variables, states, strict=True)})


def pgmpy_inference_subclass(name: str, namespace: dict[str, Any]) -> type:
    """A subclass of pgmpy's ``Inference`` with the given methods.

    pgmpy's ``model.predict(data, algo=...)`` accepts only subclasses of its ``Inference``;
    the inference stage builds its engine's front end through this function so that pgmpy is
    imported here only.

    Examples
    --------
    >>> cls = pgmpy_inference_subclass("Nothing", {"__doc__": "An engine with no methods."})
    >>> from pgmpy.inference import Inference
    >>> issubclass(cls, Inference), cls.__name__
    (True, 'Nothing')
    """
    from pgmpy.inference import Inference  # type: ignore[import-untyped]  # no hints

    return type(name, (Inference,), dict(namespace))


_UNDIRECTED = ("DiscreteMarkovNetwork", "MarkovNetwork", "FactorGraph")


def factors_from_pgmpy(model: Any) -> tuple[list, dict, list]:
    """``(nodes, states, [(scope, values), ...])`` of a pgmpy ``DiscreteMarkovNetwork`` or
    ``FactorGraph`` (copied; checked by
    :func:`~pufferfish_pgm.scenarios._markov_network.validate_factors`).

    Every factor must name a variable's states as the others do (pgmpy's default names are
    0..k-1). A graph edge that no factor covers adds no dependence and is refused, since
    the graph would then claim links the law does not have.

    Examples
    --------
    >>> from pgmpy.models import DiscreteMarkovNetwork
    >>> from pgmpy.factors.discrete import DiscreteFactor
    >>> m = DiscreteMarkovNetwork([("a", "b")])
    >>> m.add_factors(DiscreteFactor(["a", "b"], [2, 2], [1, 2, 3, 4]))
    >>> nodes, states, factors = factors_from_pgmpy(m)
    >>> nodes, states["b"], factors[0][0]
    (['a', 'b'], (0, 1), ('a', 'b'))
    """
    if type(model).__name__ not in _UNDIRECTED:
        hint = ("use BayesianNetworkScenario(model) for a Bayesian network"
                if hasattr(model, "get_cpds") else "build one with pgmpy or from_factors(...)")
        raise ParameterTypeError(f"expected a pgmpy DiscreteMarkovNetwork or FactorGraph, got "
                                 f"{type(model).__name__}; {hint}")
    factors = list(model.get_factors())
    if not factors:
        raise InvalidModelError("the model has no factors; add them with model.add_factors(...)")
    nodes = (list(model.get_variable_nodes()) if type(model).__name__ == "FactorGraph"
             else list(model.nodes()))
    states: dict = {}
    out = []
    for j, f in enumerate(factors):
        scope = tuple(f.scope())
        for v in scope:
            names = tuple(f.state_names[v])
            if states.setdefault(v, names) != names:
                raise InvalidModelError(
                    f"factor {j} over {list(scope)} names the states of {v!r} as {list(names)} "
                    f"but another factor has {list(states[v])}; use the same names in the same "
                    "order")
        out.append((scope, np.array(f.values, dtype=float)))
    if type(model).__name__ != "FactorGraph":
        _check_edges(model, [s for s, _ in out])
    return nodes, states, out


def _check_edges(model: Any, scopes: list) -> None:
    covered = {frozenset((u, v)) for s in scopes for u in s for v in s if u != v}
    for u, v in model.edges():
        if frozenset((u, v)) not in covered:
            raise InvalidModelError(
                f"the edge ({u!r}, {v!r}) of the Markov network is in no factor's scope; add "
                "a factor over both nodes or remove the edge")


def factors_to_pgmpy(tables: Any) -> Any:
    """A fresh pgmpy ``DiscreteMarkovNetwork`` from validated
    :class:`~pufferfish_pgm.scenarios._markov_network.FactorTables`."""
    from pgmpy.factors.discrete import DiscreteFactor  # type: ignore[import-untyped]  # no hints
    from pgmpy.models import DiscreteMarkovNetwork  # type: ignore[import-untyped]  # no hints

    model = DiscreteMarkovNetwork()
    model.add_nodes_from(tables.nodes)
    model.add_edges_from((u, v) for u in tables.nodes for v in tables.neighbours[u])
    for scope, values in zip(tables.scopes, tables.values, strict=True):
        model.add_factors(DiscreteFactor(
            list(scope), list(values.shape), values.copy(),
            state_names={v: list(tables.states[v]) for v in scope}))
    return model
