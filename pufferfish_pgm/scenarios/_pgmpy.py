"""The only module that imports pgmpy: reading, converting and strictly validating models.

pgmpy is imported lazily inside functions (it takes seconds to import), so chain-only paths
and ``--help`` never pay for it.

The library's own representation of a discrete Bayesian network is a :class:`NetworkTables`:
nodes in topological order, state names per node, parents per node and one conditional
probability table per node whose axes are ``(node, *parents)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InvalidModelError, ModelFileError, ModelFileNotFoundError, ParameterTypeError

__all__ = ["NetworkTables", "chain_from_pgmpy", "read_network_file", "tables_from_pgmpy",
           "tables_to_pgmpy"]

DEFAULT_TOLERANCE = 1e-9


@dataclass(frozen=True, eq=False)
class NetworkTables:
    """A validated discrete Bayesian network as plain numpy tables.

    ``cpts[node]`` has shape ``(len(states[node]), *[len(states[p]) for p in parents[node]])``
    and every column ``cpts[node][:, j...]`` sums to 1.
    """

    nodes: tuple
    states: dict
    parents: dict
    cpts: dict


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


def check_cpt(node: Any, table: np.ndarray, tolerance: float, renormalize: float) -> np.ndarray:
    """Validate one CPT (axes ``(node, *parents)``) and return it renormalised exactly.

    Examples
    --------
    >>> check_cpt("A", np.array([0.3, 0.7]), 1e-9, 0.0)
    array([0.3, 0.7])
    """
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
    if (off > limit).any():
        col = tuple(int(i) for i in np.argwhere(off > limit)[0])
        hint = "fix the probabilities"
        if off.max() < 1e-3:  # rounding in the file, not a wrong table: offer to rescale
            hint += (f", or pass renormalize={10 ** math.ceil(math.log10(off.max())):.0e} to "
                     "rescale columns that are off by less than that")
        raise InvalidModelError(
            f"the CPD column of node {node!r} for parent configuration {col} sums to "
            f"{float(sums[col])!r} (off by {off[col]:.3g}, allowed {limit:.0e}); {hint}"
        )
    return table / sums


def tables_from_pgmpy(model: Any, *, renormalize: float = 0.0,
                      tolerance: float = DEFAULT_TOLERANCE) -> NetworkTables:
    """Copy and strictly validate a pgmpy ``DiscreteBayesianNetwork``.

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
        tables[v] = check_cpt(v, cpd.values, tolerance, renormalize)
    return NetworkTables(nodes=_topological(nodes, parents), states=states, parents=parents,
                         cpts=tables)


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


def read_network_file(path: str | Path, *, renormalize: float = 0.0,
                      tolerance: float = DEFAULT_TOLERANCE) -> NetworkTables:
    """Read a BIF or XMLBIF file into validated tables."""
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
