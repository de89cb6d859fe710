"""pgmpy ``DynamicBayesianNetwork`` models unrolled over T time slices (a pgmpy adapter module).

A two-slice DBN (2-TBN) gives every variable v a node ``(v, 0)`` whose CPD, with parents in
slice 0 only, is the law of the first slice, and a node ``(v, 1)`` whose CPD, with parents in
slices 0 and 1, is the law of every later slice given the one before. Unrolled over ``length``
slices t = 0 .. T-1 it is an ordinary Bayesian network whose nodes are the strings
``"v@t"`` (``f"{variable}@{t}"``): strings, so that they pass through the command line, JSON
certificates and every function taking a node unchanged (a tuple ``(v, t)`` would be read as
two nodes wherever one node or several may be given). Node ``"v@t"`` (t >= 1) has the CPT of
``(v, 1)`` with its parent ``(u, 1)`` read as ``"u@t"`` and ``(u, 0)`` as ``"u@{t-1}"``.

Both slices are validated like any network (states, shapes, columns summing to 1, the CPDs'
parents against the graph's), also when ``length`` is 1. Columns rescaled by ``renormalize``
are listed once, under the names ``"v@0"`` and ``"v@1"`` of the slices' nodes.
"""

from __future__ import annotations

from typing import Any

from .._validation import positive_int
from ..errors import InvalidModelError, ParameterTypeError
from ._network_tables import (
    DEFAULT_RENORMALIZE,
    DEFAULT_TOLERANCE,
    NetworkTables,
    check_renormalize,
    validate_tables,
)

__all__ = ["node_name", "tables_from_dbn"]


def node_name(variable: Any, t: int) -> str:
    """The name of ``variable`` at time slice ``t`` in an unrolled DBN.

    Examples
    --------
    >>> node_name("activity", 3)
    'activity@3'
    """
    return f"{variable}@{t}"


def tables_from_dbn(dbn: Any, length: int, *, renormalize: float = DEFAULT_RENORMALIZE,
                    tolerance: float = DEFAULT_TOLERANCE) -> NetworkTables:
    """Validated tables of a pgmpy two-slice DBN unrolled over ``length`` slices.

    Examples
    --------
    >>> from pgmpy.models import DynamicBayesianNetwork
    >>> from pgmpy.factors.discrete import TabularCPD
    >>> dbn = DynamicBayesianNetwork([(("A", 0), ("A", 1))])
    >>> dbn.add_cpds(TabularCPD(("A", 0), 2, [[0.5], [0.5]]),
    ...              TabularCPD(("A", 1), 2, [[0.9, 0.2], [0.1, 0.8]],
    ...                         evidence=[("A", 0)], evidence_card=[2]))
    >>> t = tables_from_dbn(dbn, 3)
    >>> t.nodes, t.parents["A@2"]
    (('A@0', 'A@1', 'A@2'), ('A@1',))
    """
    from pgmpy.models import DynamicBayesianNetwork  # type: ignore[import-untyped]  # no hints

    if not isinstance(dbn, DynamicBayesianNetwork):
        raise ParameterTypeError(
            f"expected a pgmpy DynamicBayesianNetwork, got {type(dbn).__name__}; a "
            "DiscreteBayesianNetwork is a scenario as it is: BayesianNetworkScenario(model)"
        )
    length = positive_int("length", length)
    renormalize = check_renormalize(renormalize)
    two, slice_of = _two_slices(dbn, renormalize, tolerance)
    return _unroll(two, slice_of, length)


def _slice_nodes(dbn: Any) -> list[tuple]:
    """The DBN's nodes as ``(variable, slice)`` tuples, each slice 0 or 1."""
    nodes = [(n[0], n[1]) for n in dbn.nodes()]
    if not nodes:
        raise InvalidModelError("the DBN has no nodes; add nodes, edges and CPDs first")
    for v, s in nodes:
        if s not in (0, 1):
            raise InvalidModelError(
                f"DBN node {(v, s)!r} is in time slice {s!r}; a two-slice DBN has nodes in "
                "slices 0 and 1 only"
            )
    names = {node_name(v, s) for v, s in nodes}
    if len(names) != len(nodes):
        raise InvalidModelError("two DBN variables have the same name as text (e.g. 1 and "
                                "'1'); unrolled nodes are named 'variable@t', rename one")
    return nodes


def _slice_cpd(dbn: Any, node: tuple) -> tuple[Any, tuple]:
    """The CPD of a slice node and its parents as tuples, checked against the graph."""
    cpd = dbn.get_cpds(node=node)
    if cpd is None:
        raise InvalidModelError(
            f"DBN node {node!r} has no CPD; add one with dbn.add_cpds(...) (each variable "
            "needs a CPD in slice 0 and one in slice 1; dbn.initialize_initial_state() "
            "copies missing ones)"
        )
    parents = tuple((p[0], p[1]) for p in cpd.variables[1:])
    allowed = (0,) if node[1] == 0 else (0, 1)
    for p in parents:
        if p[1] not in allowed:
            raise InvalidModelError(
                f"the CPD of DBN node {node!r} has the parent {p!r} in time slice {p[1]!r}; "
                f"a slice-{node[1]} CPD may have parents in slice{'s 0 and' * (node[1] == 1)} "
                f"{node[1]} only"
            )
    graph = {(p[0], p[1]) for p in dbn.get_parents(node)}
    if set(parents) != graph:
        raise InvalidModelError(
            f"the CPD of DBN node {node!r} is conditioned on {sorted(map(str, parents))} but "
            f"the graph gives parents {sorted(map(str, graph))}; make them agree"
        )
    return cpd, parents


def _two_slices(dbn: Any, renormalize: float,
                tolerance: float) -> tuple[NetworkTables, dict[str, tuple]]:
    """The two slices as one validated network over ``"v@0"``, ``"v@1"`` nodes."""
    nodes = _slice_nodes(dbn)
    slice_of = {node_name(*n): n for n in nodes}
    cpds = {node_name(*n): _slice_cpd(dbn, n) for n in nodes}
    states = {name: tuple(cpd.state_names[slice_of[name]]) for name, (cpd, _) in cpds.items()}
    parents = {name: tuple(node_name(*p) for p in pa) for name, (_, pa) in cpds.items()}
    _check_states(cpds, states, slice_of)
    raw = {name: cpd.values for name, (cpd, _) in cpds.items()}
    two = validate_tables(list(cpds), states, parents, raw, renormalize=renormalize,
                          tolerance=tolerance)
    return two, slice_of


def _check_states(cpds: dict, states: dict, slice_of: dict) -> None:
    """Each variable in both slices with the same states; parents' states as in their CPD."""
    for name, (v, s) in slice_of.items():
        other = node_name(v, 1 - s)
        if other not in states:
            raise InvalidModelError(f"DBN variable {v!r} has no node in slice {1 - s}; add "
                                    f"({v!r}, {1 - s}) with its CPD")
        if s == 0 and states[other] != states[name]:
            raise InvalidModelError(
                f"DBN variable {v!r} has states {list(states[name])} in slice 0 but "
                f"{list(states[other])} in slice 1; a variable keeps its states over time"
            )
    for name, (cpd, parents) in cpds.items():
        for p in parents:
            if tuple(cpd.state_names[p]) != states[node_name(*p)]:
                raise InvalidModelError(
                    f"the CPD of DBN node {slice_of[name]!r} names the states of its parent "
                    f"{p!r} as {list(cpd.state_names[p])} but {p!r} has "
                    f"{list(states[node_name(*p)])}; use the same state names in the same order"
                )


def _unroll(two: NetworkTables, slice_of: dict[str, tuple], length: int) -> NetworkTables:
    """Copy slice 0 once and slice 1 for t = 1 .. length-1, renaming parents by time."""
    nodes: list[str] = []
    states, parents, cpts = {}, {}, {}
    for t in range(length):
        for name in two.nodes:
            v, s = slice_of[name]
            if s != min(t, 1):
                continue
            new = node_name(v, t)
            nodes.append(new)
            states[new] = two.states[name]
            parents[new] = tuple(node_name(slice_of[p][0], t - s + slice_of[p][1])
                                 for p in two.parents[name])
            cpts[new] = two.cpts[name].copy()
    kept = tuple(r for r in two.renormalized if r.node in states)
    return NetworkTables(nodes=tuple(nodes), states=states, parents=parents, cpts=cpts,
                         renormalized=kept)
