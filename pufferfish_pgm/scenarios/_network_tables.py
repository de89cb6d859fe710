"""The library's own discrete Bayesian network, :class:`NetworkTables`, and its strict checks.

Nodes in topological order, state names per node, parents per node and one conditional
probability table per node whose axes are ``(node, *parents)``. Every scenario, engine and file
reader builds one through :func:`validate_tables`, which refuses wrong tables naming the node
and column (and rescales columns off by rounding only, within ``renormalize``). No pgmpy here:
the adapter (:mod:`._pgmpy`) converts pgmpy models to and from these tables.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_CEILING, Decimal
from functools import partial
from typing import Any, NamedTuple

import numpy as np

from .._tolerances import PROBABILITY_SUM
from ..errors import InvalidModelError, InvalidParameterError, ParameterTypeError

__all__ = ["DEFAULT_RENORMALIZE", "DEFAULT_TOLERANCE", "MAX_RENORMALIZE", "NetworkTables",
           "RenormalizedColumn", "check_cpt", "check_renormalize", "validate_tables"]

DEFAULT_TOLERANCE = PROBABILITY_SUM
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
