"""The only module that imports pgmpy: reading, converting and strictly validating models.

pgmpy is imported lazily inside functions (it takes seconds to import), so chain-only paths
and ``--help`` never pay for it.

The library's own representation of a discrete Bayesian network is a :class:`NetworkTables`:
nodes in topological order, state names per node, parents per node and one conditional
probability table per node whose axes are ``(node, *parents)``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal
from functools import partial
from typing import Any, NamedTuple

import numpy as np

from ..errors import (
    InvalidModelError,
    InvalidParameterError,
    ParameterTypeError,
)

__all__ = ["DEFAULT_RENORMALIZE", "MAX_RENORMALIZE", "NetworkTables", "RenormalizedColumn",
           "chain_from_pgmpy", "check_renormalize", "cpd_parents", "model_cpds",
           "pgmpy_inference_subclass", "tables_from_pgmpy", "tables_to_pgmpy",
           "to_discrete_factor", "validate_tables"]

DEFAULT_TOLERANCE = 1e-9
#: CPD columns off by at most this are rescaled by default (real BIF files are off by ~1e-7).
DEFAULT_RENORMALIZE = 1e-6
#: Largest accepted ``renormalize``: a column off by more is a wrong table, not rounding.
MAX_RENORMALIZE = 1e-3
_SHOWN = 100  # columns listed one by one in an error; the rest are summed up per node


class RenormalizedColumn(NamedTuple):
    """A CPD column that did not sum to 1 within 1e-9 and was rescaled.

    ``parent_states`` are the states of the node's parents (in the order of
    ``scenario.parents_of(node)``; ``()`` for a root node) that pick the column; ``total`` is
    the column's sum as read.
    """

    node: Any
    parent_states: tuple
    total: float

    @property
    def deviation(self) -> float:
        """``|total - 1|``."""
        return abs(self.total - 1.0)


@dataclass(frozen=True, eq=False)
class NetworkTables:
    """A validated discrete Bayesian network as plain numpy tables.

    ``cpts[node]`` has shape ``(len(states[node]), *[len(states[p]) for p in parents[node]])``
    and every column ``cpts[node][:, j...]`` sums to 1. ``renormalized`` lists the columns
    that summed to 1 only within ``renormalize`` (not within 1e-9) and were rescaled.
    """

    nodes: tuple
    states: dict
    parents: dict
    cpts: dict
    renormalized: tuple[RenormalizedColumn, ...] = ()


def _topological(nodes: list, parents: dict) -> tuple:
    order, seen, temp = [], set(), set()

    def visit(v: Any) -> None:
        if v in seen:
            return
        if v in temp:
            raise InvalidModelError(f"the network has a directed cycle through node {v!r}")
        temp.add(v)
        for p in parents[v]:
            visit(p)
        temp.discard(v)
        seen.add(v)
        order.append(v)

    for v in nodes:
        visit(v)
    return tuple(order)


def check_renormalize(value: object) -> float:
    """``renormalize`` as a float in [0, 1e-3], else a clear error naming the value.

    Examples
    --------
    >>> check_renormalize(1e-6)
    1e-06
    >>> check_renormalize(-1)
    Traceback (most recent call last):
    ...
    pufferfish_pgm.errors.InvalidParameterError: renormalize must be between 0 and 0.001, ...
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ParameterTypeError(
            f"renormalize must be a number (the largest deviation from 1 of a CPD column to "
            f"rescale), got the {type(value).__name__} {value!r}; e.g. renormalize=1e-6"
        )
    out = float(value)
    if not 0.0 <= out <= MAX_RENORMALIZE:  # also refuses NaN
        raise InvalidParameterError(
            f"renormalize must be between 0 and {MAX_RENORMALIZE:g}, got {out!r}; it is the "
            "largest deviation from 1 of a CPD column to rescale (default 1e-6; 0 rescales "
            "only float rounding, up to 1e-9). Columns off by more are wrong tables: fix them"
        )
    return out


def _accepting_value(off: float) -> float:
    """The smallest 2-significant-digit number >= ``off`` (a renormalize= that accepts it)."""
    exact = Decimal(off)
    step = Decimal(1).scaleb(exact.adjusted() - 1)  # one unit in the 2nd significant digit
    value = float((exact / step).to_integral_value(rounding=ROUND_CEILING) * step)
    return value if value >= off else math.nextafter(value, math.inf)  # nearest float is >= off


def _columns(node: Any, table: np.ndarray, tolerance: float, renormalize: float,
             labels: Callable[[tuple], tuple]) -> tuple[np.ndarray, list, list]:
    """Validate one CPT; return it rescaled, the columns rescaled beyond ``tolerance`` and the
    columns off by more than ``max(tolerance, renormalize)``, as :class:`RenormalizedColumn`."""
    table = np.asarray(table, dtype=float)
    bad = ~np.isfinite(table)
    if bad.any():
        raise InvalidModelError(
            f"the CPD of node {node!r} contains {float(table[bad][0])!r} (NaN or infinite) at "
            f"index {tuple(int(i) for i in np.argwhere(bad)[0])}; replace it with a probability "
            "in [0, 1]"
        )
    if (table < 0).any():
        idx = tuple(int(i) for i in np.argwhere(table < 0)[0])
        raise InvalidModelError(
            f"the CPD of node {node!r} has the negative probability {float(table[idx])!r} at "
            f"index {idx}; probabilities must be in [0, 1]"
        )
    sums = table.sum(axis=0)
    off = np.abs(sums - 1.0)
    limit = max(tolerance, renormalize)
    fixed: list[RenormalizedColumn] = []
    wrong: list[RenormalizedColumn] = []
    for where in np.argwhere(off > tolerance):
        col = tuple(int(i) for i in where)
        record = RenormalizedColumn(node, labels(col), float(sums[col]))
        (wrong if off[col] > limit else fixed).append(record)
    return table / sums, fixed, wrong


def _parent_states(states: dict, parents: tuple, col: tuple) -> tuple:
    """The parents' states that pick column ``col`` (indices) of a CPT."""
    return tuple(states[p][i] for p, i in zip(parents, col, strict=True))


def _describe(record: RenormalizedColumn) -> str:
    where = (f"for parent states {record.parent_states}" if record.parent_states
             else "(no parents)")
    return (f"node {record.node!r} {where} sums to {record.total!r} "
            f"(off by {record.deviation:.3g})")


def _column_error(wrong: list, limit: float) -> InvalidModelError:
    """One error listing every column off by more than ``limit`` (the first _SHOWN in full,
    the others by node with their largest deviation) and the renormalize= that accepts all."""
    worst = max(r.deviation for r in wrong)
    lines = [_describe(r) for r in wrong[:_SHOWN]]
    if len(wrong) > _SHOWN:
        rest: dict = {}
        for r in wrong[_SHOWN:]:
            count, dev = rest.get(r.node, (0, 0.0))
            rest[r.node] = (count + 1, max(dev, r.deviation))
        lines.append(f"and {len(wrong) - _SHOWN} more: " + "; ".join(
            f"node {v!r}: {count} column{'s' * (count > 1)} off by up to {dev:.3g}"
            for v, (count, dev) in rest.items()))
    if worst <= MAX_RENORMALIZE:  # rounding in the file, not a wrong table: offer to rescale
        hint = (f"pass renormalize={_accepting_value(worst)!r} to rescale them all (they are "
                "then listed on scenario.renormalized), or fix the probabilities")
    else:
        hint = (f"fix the probabilities (a column off by more than {MAX_RENORMALIZE:g} is a "
                "wrong table, not rounding)")
    n = len(wrong)
    return InvalidModelError(
        f"{n} CPD column{'s' * (n > 1)} {'do' if n > 1 else 'does'} not sum to 1 (allowed "
        f"deviation {limit:.0e}):\n  " + "\n  ".join(lines) + f"\n{hint}"
    )


def check_cpt(node: Any, table: np.ndarray, tolerance: float,
              renormalize: float = DEFAULT_RENORMALIZE) -> np.ndarray:
    """Validate one CPT (axes ``(node, *parents)``) and return it renormalised exactly.

    Columns are named by their index in the error (:func:`tables_from_pgmpy` names them by
    their parents' states).

    Examples
    --------
    >>> check_cpt("A", np.array([0.3, 0.7]), 1e-9, 0.0)
    array([0.3, 0.7])
    """
    out, _, wrong = _columns(node, table, tolerance, check_renormalize(renormalize),
                             lambda col: col)
    if wrong:
        raise _column_error(wrong, max(tolerance, renormalize))
    return out


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


def validate_tables(nodes: list, states: dict, parents: dict, raw: dict, *,
                    renormalize: float = DEFAULT_RENORMALIZE,
                    tolerance: float = DEFAULT_TOLERANCE) -> NetworkTables:
    """Strictly validated :class:`NetworkTables` from raw CPTs with axes ``(node, *parents)``.

    Checks each table's shape and probabilities, rescales the columns off by at most
    ``renormalize`` and orders the nodes topologically (a directed cycle is an error).

    Examples
    --------
    >>> t = validate_tables(["B", "A"], {"A": ("a0", "a1"), "B": ("b0", "b1")},
    ...                     {"A": (), "B": ("A",)},
    ...                     {"A": [0.4, 0.6], "B": [[0.9, 0.2], [0.1, 0.8]]})
    >>> t.nodes, t.cpts["B"][:, 1].tolist()
    (('A', 'B'), [0.2, 0.8])
    """
    renormalize = check_renormalize(renormalize)
    tables, fixed, wrong = {}, [], []
    for v in nodes:
        shape = (len(states[v]), *(len(states[p]) for p in parents[v]))
        table = np.asarray(raw[v], dtype=float)
        if table.shape != shape:
            raise InvalidModelError(
                f"the CPD of node {v!r} has shape {table.shape}, but its states and those of "
                f"its parents {list(parents[v])} give {shape}"
            )
        tables[v], ok, bad = _columns(v, table, tolerance, renormalize,
                                      partial(_parent_states, states, parents[v]))
        fixed += ok
        wrong += bad
    if wrong:
        raise _column_error(wrong, max(tolerance, renormalize))
    return NetworkTables(nodes=_topological(list(nodes), parents), states=states,
                         parents=parents, cpts=tables, renormalized=tuple(fixed))


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
