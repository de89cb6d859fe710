"""Variable elimination with a count axis: exact count distributions on networks (internal).

Every factor carries a polynomial in ``z`` as a trailing axis: entry ``[..., c]`` is the
coefficient of ``z^c``. A node ``v`` with weight ``w_v(x)`` contributes the factor
``P(v | parents) z^{w_v(v)}``. Multiplying factors multiplies the tables and convolves the
count axes; summing out a variable adds. After eliminating every requisite node (ancestors of
the weighted and evidence nodes; the rest sum to 1) the coefficients are ``P(F = c, evidence)``
(DESIGN §3.6). Each factor is rescaled by its largest entry, the scale kept as a logarithm, so
long products do not underflow as a whole. Entries far below a factor's peak (the tails of the
count, products of rare states) could still fall below the float range in a product; so a
product whose smallest entries could pass ``e^-600`` of its peak is computed in log space
instead (and so is everything built from it): every mass keeps its relative precision, as in
the chain engine, and the fast linear path is kept where it is exact.

Examples
--------
>>> from pufferfish_pgm.scenarios import BayesianNetworkScenario, default_model_path
>>> asia = BayesianNetworkScenario.from_file(default_model_path("asia.bif"))
>>> w = {v: np.array([1, 0]) for v in asia.nodes}          # count the "yes" states
>>> log_joint = network_log_joint(asia, w, {"smoke": 0})
>>> round(float(np.exp(log_joint).sum()), 6)               # P(smoke = yes)
0.5
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._budget import check_allocation, describe_bytes, machine_memory, memory_budget
from ..distributions._engine import logsumexp
from ..errors import LimitExceededError
from ..inference._engine import (
    Ancestors,
    NetworkIndex,
    Schedule,
    network_index,
    schedule,
)
from ..scenarios import BayesianNetworkScenario, MarkovNetworkScenario
from ..scenarios._engine import FactorTables, NetworkTables

__all__ = ["factor_log_joint", "network_log_joint", "tables_log_joint"]


#: Products whose entries could fall below this many nats under their peak go to log space
#: (doubles hold e^-708 before subnormals; the margin covers the sums of many products).
_LINEAR_DEPTH = 600.0


@dataclass(frozen=True)
class _Factor:
    """A table over ``variables`` with a trailing count axis, times ``exp(log_scale)``; with
    ``in_log`` the table holds the logarithms of the entries (and ``log_scale`` is 0)."""

    variables: tuple
    table: np.ndarray
    log_scale: float
    in_log: bool = False

    def rescaled(self) -> _Factor:
        if self.in_log:
            return self
        peak = float(self.table.max(initial=0.0))
        if peak <= 0.0:
            return _Factor(self.variables, self.table, -np.inf)
        return _Factor(self.variables, self.table / peak, self.log_scale + np.log(peak))

    def depth(self) -> float:
        """How far (in nats) the smallest positive entry lies under the peak (inf in log)."""
        if self.in_log:
            return np.inf
        positive = self.table[self.table > 0]
        return float(-np.log(positive.min())) if positive.size else 0.0

    def logs(self) -> np.ndarray:
        """The entries' logarithms (scale included)."""
        if self.in_log:
            return self.table
        with np.errstate(divide="ignore"):
            return np.log(self.table) + self.log_scale


def _aligned(f: _Factor, union: tuple, in_log: bool = False) -> np.ndarray:
    """``f.table`` (its logarithms with ``in_log``) with one axis per variable of ``union``
    (size 1 where absent)."""
    order = [f.variables.index(v) for v in union if v in f.variables] + [len(f.variables)]
    table = (f.logs() if in_log else f.table).transpose(order)
    present = iter(table.shape[:-1])
    shape = [next(present) if v in f.variables else 1 for v in union]
    return table.reshape(shape + [table.shape[-1]])


def _multiply(a: _Factor, b: _Factor) -> _Factor:
    """The product, its count axes convolved: linear while no entry can underflow, else in
    log space. The loop runs over the shorter count axis (a node's weights, a few values)."""
    union = tuple(dict.fromkeys(a.variables + b.variables))
    in_log = a.depth() + b.depth() > _LINEAR_DEPTH
    x, y = (_aligned(f, union, in_log) for f in (a, b))
    if x.shape[-1] < y.shape[-1]:
        x, y = y, x
    body = np.broadcast_shapes(x.shape[:-1], y.shape[:-1])
    width = x.shape[-1] + y.shape[-1] - 1
    if in_log:
        out = np.full(body + (width,), -np.inf)
        for j in range(y.shape[-1]):
            out[..., j:j + x.shape[-1]] = np.logaddexp(out[..., j:j + x.shape[-1]],
                                                       x + y[..., j:j + 1])
        return _Factor(union, out, 0.0, True)
    out = np.zeros(body + (width,))
    for j in range(y.shape[-1]):
        out[..., j:j + x.shape[-1]] += x * y[..., j:j + 1]
    return _Factor(union, out, a.log_scale + b.log_scale).rescaled()


def _sum_out(f: _Factor, variable: object) -> _Factor:
    axis = f.variables.index(variable)
    rest = f.variables[:axis] + f.variables[axis + 1:]
    if f.in_log:
        return _Factor(rest, logsumexp(f.table, axis=axis), 0.0, True)
    return _Factor(rest, f.table.sum(axis=axis), f.log_scale).rescaled()


def _node_factor(tables: NetworkTables, v: object, weights: np.ndarray | None,
                 observed: int | None) -> _Factor:
    cpt = tables.cpts[v]
    w = np.zeros(cpt.shape[0], dtype=np.int64) if weights is None else weights
    table = np.zeros(cpt.shape + (int(w.max()) + 1,))
    for s in range(cpt.shape[0]):
        if observed is None or observed == s:
            table[s, ..., w[s]] = cpt[s]
    return _Factor((v, *tables.parents[v]), table, 0.0).rescaled()


def network_log_joint(bn: BayesianNetworkScenario | MarkovNetworkScenario, weights: dict,
                      codes: dict,
                      budget: int | float | str | None = None) -> np.ndarray:
    """``log P(F = c, evidence)`` for c = 0..Σ max w, ``F = Σ_v weights[v][X_v]``.

    ``weights`` maps nodes to non-negative integer arrays over their states (missing nodes
    weigh 0); ``codes`` maps evidence nodes to state indices. ``budget``: see
    :func:`pufferfish_pgm.inference.conditional`.
    """
    if isinstance(bn, MarkovNetworkScenario):
        return factor_log_joint(bn.tables, network_index(bn), weights, codes, budget)
    return tables_log_joint(bn.tables, network_index(bn), weights, codes, budget)


#: Tables alive at once in a product step: the result, the operand and one temporary.
_LIVE_TABLES = 3


def _peak(states: dict, order: tuple, factors: list[tuple[frozenset, int]]
          ) -> tuple[int, object]:
    """Cells of the largest product (count axis included) of eliminating ``order`` from
    ``factors`` (scope, count width).

    A factor's count axis is as long as the counts its nodes can add up to: multiplying
    factors of widths w_1..w_n gives width w_1 + ... + w_n - (n - 1).
    """
    peak, culprit = 1, None
    for x in order:
        touching = [f for f in factors if x in f[0]]
        factors = [f for f in factors if x not in f[0]]
        scope = frozenset().union(*(f[0] for f in touching))
        width = sum(f[1] for f in touching) - len(touching) + 1
        cells = math.prod(len(states[v]) for v in scope) * width
        if cells > peak:
            peak, culprit = cells, x
        factors.append((scope - {x}, width))
    return peak, culprit


def _schedule(states: dict, index: NetworkIndex, factors: list[tuple[tuple, int]], size: int,
              budget: int | float | str | None) -> tuple:
    """The elimination order of ``factors`` (scope, count width) over ``size`` requisite
    nodes, after checking its largest product against the budget.

    The order is searched up to tables of the larger of the budget and this machine's memory
    (:func:`_lower_bound_refusal` when it stops), so a refusal from a stopped search always
    proves that no budget on this machine fits; a complete order has a known peak, and the
    budget check may then suggest a budget that would.
    """
    scopes = [scope for scope, _ in factors]
    dims = {v: len(states[v]) for scope in scopes for v in scope}
    # a product of more cells than this is refused with or without its count axis (>= 1)
    limit = max(memory_budget(budget), machine_memory()) // (8 * _LIVE_TABLES)
    found = schedule(scopes, keep=(), dims=dims, rank=lambda: index.order, limit=limit)
    if not found.complete:
        raise _lower_bound_refusal(found, size, budget)
    order = found.order
    cells, culprit = _peak(states, order, [(frozenset(s), w) for s, w in factors])
    check_allocation(cells * 8 * _LIVE_TABLES, budget=budget,
                     what=f"the exact count law over {size} requisite nodes "
                          f"(the product that sums out {culprit!r}: {cells:,} cells)")
    return order


def _lower_bound_refusal(found: Schedule, size: int,
                         budget: int | float | str | None) -> LimitExceededError:
    """The refusal of a stopped order search: its table is a proven lower bound (every
    completion of the order builds it or a larger one; with ``found.treewidth``, every
    order does), above the machine and the budget."""
    need = found.peak_cells * 8 * _LIVE_TABLES
    why = (f"its elimination order reaches node {found.culprit!r}, whose product"
           if found.treewidth is None else
           f"its factors' graph has treewidth at least {found.treewidth}, so every "
           "elimination order builds a product that")
    return LimitExceededError(
        f"the exact count law over {size} requisite nodes needs at least "
        f"2^{math.log2(found.peak_cells):.3g} = {found.peak_cells:,} cells, "
        f"{describe_bytes(need)} ({why} has that many cells before the count axis: a "
        "lower bound), more than "
        f"this machine lets the process use ({describe_bytes(machine_memory())}) and more "
        f"than the memory budget ({describe_bytes(memory_budget(budget))}), so no budget "
        "makes it fit on this machine; use MarkovQuiltMechanism (local quilts), or split the "
        "population into independent components (pp.scenarios.households), or ask about "
        "fewer nodes")


def _eliminate_all(factors: list[_Factor], order: tuple, width: int) -> np.ndarray:
    """Sum every variable of ``order`` out of the product of ``factors``: log masses on
    0..width-1."""
    for x in order:
        touching = [f for f in factors if x in f.variables]
        factors = [f for f in factors if x not in f.variables]
        product = touching[0]
        for f in touching[1:]:
            product = _multiply(product, f)
        factors.append(_sum_out(product, x))
    total = _Factor((), np.ones(1), 0.0)
    for f in factors:
        total = _multiply(total, f)
    out = np.full(width, -np.inf)
    body = total.logs()
    out[:body.size] = body
    return out


def tables_log_joint(tables: NetworkTables, index: NetworkIndex, weights: dict,
                     codes: dict, budget: int | float | str | None = None) -> np.ndarray:
    """:func:`network_log_joint` from a network's tables and inference index.

    What a cached engine holds instead of the scenario itself (the inference index is kept
    per scenario in a weak-keyed table, so what it stores must not refer back to it).
    """
    seeds = [v for v, w in weights.items() if w.max() > 0] + list(codes)
    up = index.ancestors
    requisite = (up.of(seeds) if isinstance(up, Ancestors)
                 else frozenset().union(*(up[v] for v in seeds)))
    width = int(sum(int(w.max()) for w in weights.values())) + 1
    widths = {v: int(w.max()) + 1 for v, w in weights.items()}
    order = _schedule(tables.states, index,
                      [((v, *tables.parents[v]), widths.get(v, 1)) for v in requisite],
                      len(requisite), budget)
    factors = [_node_factor(tables, v, weights.get(v), codes.get(v)) for v in requisite]
    return _eliminate_all(factors, order, width)


def _mark(k: int, v: object, weights: np.ndarray | None, observed: int | None) -> _Factor:
    """A Markov network node's count factor: ``z^{w_v(x)}``, zero off the evidence."""
    w = np.zeros(k, dtype=np.int64) if weights is None else weights
    table = np.zeros((k, int(w.max()) + 1))
    for s in range(k):
        if observed is None or observed == s:
            table[s, w[s]] = 1.0
    return _Factor((v,), table, 0.0)


def factor_log_joint(tables: FactorTables, index: NetworkIndex, weights: dict, codes: dict,
                     budget: int | float | str | None = None,
                     log_z: dict | None = None) -> np.ndarray:
    """``log P(F = c, evidence)`` on a Markov network (:class:`FactorTables`).

    The factors of the components holding weighted or evidence nodes, times one count factor
    ``z^{w_v(x_v)}`` per such node (zero off the evidence), are eliminated as on a Bayesian
    network; each component's log partition function (the same elimination without marks,
    cached in ``log_z`` by component) is subtracted. Other components sum to their own
    partition functions and cancel.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovNetworkScenario
    >>> from pufferfish_pgm.inference._engine import network_index
    >>> mn = MarkovNetworkScenario.from_factors([(("a", "b"), [[3.0, 1.0], [1.0, 3.0]])],
    ...                                         {"a": (0, 1), "b": (0, 1)})
    >>> w = {v: np.array([0, 1]) for v in mn.nodes}
    >>> np.exp(factor_log_joint(mn.tables, network_index(mn), w, {})).round(6).tolist()
    [0.375, 0.25, 0.375]
    """
    seeds = [v for v, w in weights.items() if w.max() > 0] + list(codes)
    parts = {index.ancestors[v] for v in seeds}
    nodes = frozenset().union(*parts)
    width = int(sum(int(w.max()) for w in weights.values())) + 1
    marks = [v for v in nodes if v in codes or (v in weights and weights[v].max() > 0)]
    out = _factors_law(tables, index, nodes, {v: (weights.get(v), codes.get(v)) for v in marks},
                       width, budget)
    cache = {} if log_z is None else log_z
    for part in parts:
        if part not in cache:
            cache[part] = float(_factors_law(tables, index, part, {}, 1, budget)[0])
        out = out - cache[part]
    return out


def _factors_law(tables: FactorTables, index: NetworkIndex, nodes: frozenset, marks: dict,
                 width: int, budget: int | float | str | None) -> np.ndarray:
    """Unnormalised log masses of the factors over ``nodes`` times the count ``marks``
    (node -> (weights, observed state))."""
    chosen = [j for j, scope in enumerate(tables.scopes) if scope[0] in nodes]
    spec = [(tables.scopes[j], 1) for j in chosen]
    spec += [((v,), 1 if w is None else int(w.max()) + 1) for v, (w, _) in marks.items()]
    order = _schedule(tables.states, index, spec, len(nodes), budget)
    factors = [_Factor(tables.scopes[j], tables.values[j][..., None], 0.0).rescaled()
               for j in chosen]
    factors += [_mark(len(tables.states[v]), v, w, c) for v, (w, c) in marks.items()]
    return _eliminate_all(factors, order, width)
