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
from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ..errors import (
    InvalidModelError,
    InvalidParameterError,
    ModelFileError,
    ModelFileNotFoundError,
    ParameterTypeError,
)

__all__ = ["DEFAULT_RENORMALIZE", "MAX_RENORMALIZE", "NetworkTables", "RenormalizedColumn",
           "chain_from_pgmpy", "check_renormalize", "read_network_file", "tables_from_pgmpy",
           "tables_to_pgmpy"]

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
        raise ParameterTypeError(
            f"expected a pgmpy DiscreteBayesianNetwork, got {type(model).__name__}; load files "
            "with BayesianNetworkScenario.from_file(path)"
        )
    nodes = list(model.nodes())
    if not nodes:
        raise InvalidModelError("the network has no nodes; add nodes and CPDs first")
    cpds = {}
    for node in nodes:
        cpd = model.get_cpds(node)
        if cpd is None:
            raise InvalidModelError(f"node {node!r} has no CPD; add one with model.add_cpds(...)")
        cpds[node] = cpd
    states = {v: tuple(cpds[v].state_names[v]) for v in nodes}
    parents, tables = {}, {}
    fixed: list[RenormalizedColumn] = []
    wrong: list[RenormalizedColumn] = []
    for v in nodes:
        cpd = cpds[v]
        parents[v] = tuple(cpd.variables[1:])
        if set(parents[v]) != set(model.get_parents(v)):
            raise InvalidModelError(
                f"the CPD of node {v!r} is conditioned on {sorted(map(str, parents[v]))} but the "
                f"graph gives parents {sorted(map(str, model.get_parents(v)))}; make them agree"
            )
        for p in parents[v]:
            if tuple(cpd.state_names[p]) != states[p]:
                raise InvalidModelError(
                    f"the CPD of node {v!r} names the states of its parent {p!r} as "
                    f"{list(cpd.state_names[p])} but node {p!r} has {list(states[p])}; use the "
                    "same state names in the same order"
                )
        tables[v], ok, bad = _columns(v, cpd.values, tolerance, renormalize,
                                      partial(_parent_states, states, parents[v]))
        fixed += ok
        wrong += bad
    if wrong:
        raise _column_error(wrong, max(tolerance, renormalize))
    return NetworkTables(nodes=_topological(nodes, parents), states=states, parents=parents,
                         cpts=tables, renormalized=tuple(fixed))


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


def read_network_file(path: str | Path, *, renormalize: float = DEFAULT_RENORMALIZE,
                      tolerance: float = DEFAULT_TOLERANCE) -> NetworkTables:
    """Read a BIF or XMLBIF file into validated tables (see :func:`tables_from_pgmpy`)."""
    renormalize = check_renormalize(renormalize)
    path = Path(path)
    if not path.is_file():
        raise ModelFileNotFoundError(
            f"model file {str(path)!r} does not exist; give the path of a .bif or .xml file"
        )
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        if text.lstrip().startswith("<"):
            from pgmpy.readwrite import XMLBIFReader  # type: ignore[import-untyped]  # no hints

            model = XMLBIFReader(path=str(path)).get_model()
        else:
            from pgmpy.readwrite import BIFReader  # type: ignore[import-untyped]  # no hints

            model = BIFReader(path=str(path)).get_model()
    except Exception as err:  # pgmpy raises many kinds on malformed files
        raise ModelFileError(
            f"cannot read {str(path)!r} as a BIF or XMLBIF network ({type(err).__name__}: "
            f"{str(err)[:200]}); check the file's syntax"
        ) from err
    # pgmpy's readers skip what they cannot parse: a truncated file gives missing CPDs
    nodes = list(model.nodes())
    missing = [v for v in nodes if model.get_cpds(v) is None]
    if not nodes or missing:
        what = "no variables" if not nodes else f"no probability table for node {missing[0]!r}"
        raise ModelFileError(
            f"cannot read {str(path)!r} as a BIF or XMLBIF network: it has {what}; check that "
            "the file is complete"
        )
    try:
        return tables_from_pgmpy(model, renormalize=renormalize, tolerance=tolerance)
    except InvalidModelError as err:
        raise InvalidModelError(f"{path.name}: {err}") from None


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
