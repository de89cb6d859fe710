"""The numpy variable-elimination engine for networks, with bounded memory (internal).

The elimination order (min-fill on the moral graph) and the ancestor sets are computed once per
model and kept in its :class:`NetworkIndex`; each query drops barren nodes (those that are not
ancestors of a target or of the evidence), slices the evidence out of the tables and
eliminates the rest. A Markov network's factors are eliminated the same way (its factor
tables instead of CPTs, :mod:`._factor_models`; no barren nodes, but the factors the evidence
separates from the targets are dropped), giving its joint up to the partition function.
Before a query shape is compiled its largest table is computed from the graph
(:mod:`._elimination_order`): above the memory budget the query is refused with
:class:`~pufferfish_pgm.errors.LimitExceededError`; a large one gets an order of its own.

The index of a network is kept per scenario *object* in a weak-keyed table
(:func:`network_index`): the frozen scenario holds no cache, an index lives exactly as long as
its scenario. The evidence-free tables it caches are shared between query shapes and never
exceed one memory budget in all: past it the cache starts afresh.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from .._budget import check_allocation, memory_budget
from ..scenarios import MarkovNetworkScenario
from ._elimination_order import Schedule, min_fill, schedule
from ._factor_models import Ancestors, Model, connected_parts, factor_tables, requisite_factors

__all__ = ["NetworkIndex", "network_index", "network_joint"]

#: An einsum operand list: (slot of an array, its axis ids).
_Operands = list[tuple[int, list[int]]]
#: Bytes per table cell (float64).
CELL_BYTES = 8


class _Step(NamedTuple):
    """One einsum of a plan that depends on the evidence values."""

    slot: int
    inputs: _Operands
    output: list[int]
    path: list | bool


class _Plan(NamedTuple):
    """A compiled query shape (see :func:`_plan`)."""

    arrays: list[np.ndarray | None]   # evidence-free tables and results; None: filled per query
    sliced: list[tuple[int, Hashable, tuple]]   # (slot, node, axes) of CPTs touching evidence
    steps: list[_Step]
    final: _Operands
    partial: bool
    schedule: Schedule


#: Evidence-free einsum result shared between plans: (memo id, table, its axes).
_Static = tuple[int, np.ndarray, tuple]


@dataclass(eq=False)
class NetworkIndex:
    """What the elimination engine derives from one network, computed once per model.

    Built by :func:`network_index` on first use and written only by this stage; other
    stages may read it (the count-law engine of :mod:`pufferfish_pgm.queries` uses
    ``order`` and ``ancestors``). It holds no reference to its scenario, so the weak-keyed
    table that maps scenarios to indices lets both go together.

    Attributes
    ----------
    moral : dict
        The moral graph (node -> neighbours).
    order : dict
        Rank of each node in a min-fill elimination order of the moral graph, computed on
        first use (a property: on a network of thousands of nodes it costs seconds, which a
        query refused from its own capped order never pays).
    ancestors : dict
        Each node's ancestors, itself included (Markov network: its connected component,
        every node whose factors can matter).
    children : dict
        Each node's children, in model order (Markov network: its neighbours).
    families, tables : dict
        The scope and the table of each factor (:func:`factor_tables`), read once.
    plans, marginals, static
        Compiled query shapes by (targets, evidence nodes); single-node marginals (for
        the zero-probability check); evidence-free intermediate tables shared between
        plans (see :func:`_plan`).
    static_bytes, next_id
        Bytes held by ``static``; the next memo id (never reused, so a memo key made before
        the cache was emptied cannot name a newer table).
    """

    moral: dict[Hashable, set]
    ancestors: Mapping[Hashable, frozenset]
    children: dict[Hashable, tuple]
    families: dict[Hashable, tuple] = field(default_factory=dict)
    tables: dict[Hashable, np.ndarray] = field(default_factory=dict)
    plans: dict[tuple[tuple, tuple], _Plan] = field(default_factory=dict)
    marginals: dict[Hashable, np.ndarray] = field(default_factory=dict)
    static: dict[tuple, _Static] = field(default_factory=dict)
    static_bytes: int = 0
    next_id: int = 0
    _order: dict[Hashable, int] | None = None

    @property
    def order(self) -> dict[Hashable, int]:
        """Rank of each node in the min-fill order of ``moral`` (computed once)."""
        if self._order is None:
            ranks = min_fill({v: set(n) for v, n in self.moral.items()})
            self._order = {v: r for r, v in enumerate(ranks)}
        return self._order

    def remember(self, key: tuple, table: np.ndarray, axes: tuple,
                 budget: int | None) -> _Static:
        """Cache an evidence-free table (emptying the cache first if it would pass ``budget``
        bytes); ``budget`` None: a table the model owns (a CPT), not counted."""
        size = 0 if budget is None else table.nbytes
        if budget is not None and self.static_bytes + size > budget:
            self.static.clear()
            self.plans.clear()
            self.static_bytes = 0
        entry = self.static[key] = (self.next_id, table, axes)
        self.next_id += 1
        self.static_bytes += size
        return entry


_NETWORK_INDEX: weakref.WeakKeyDictionary[Model, NetworkIndex] = (
    weakref.WeakKeyDictionary())


def network_index(bn: Model) -> NetworkIndex:
    """The :class:`NetworkIndex` of ``bn`` (built on the first call for this object).

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import BayesianNetworkScenario, default_model_path
    >>> asia = BayesianNetworkScenario.from_file(default_model_path("asia.bif"))
    >>> index = network_index(asia)
    >>> network_index(asia) is index, sorted(index.ancestors["either"])
    (True, ['asia', 'either', 'lung', 'smoke', 'tub'])
    """
    index = _NETWORK_INDEX.get(bn)
    if index is None:
        index = _build_index(bn)
        _NETWORK_INDEX[bn] = index
    return index


def _build_index(bn: Model) -> NetworkIndex:
    families, tables = factor_tables(bn)
    moral: dict[Hashable, set] = {v: set() for v in bn.nodes}
    for family in families.values():
        for i, a in enumerate(family):
            for b in family[i + 1:]:
                if b != a:   # no self loops (min_fill counts on it)
                    moral[a].add(b)
                    moral[b].add(a)
    if isinstance(bn, MarkovNetworkScenario):   # no direction: a node's component
        return NetworkIndex(moral=moral, ancestors=connected_parts(moral, bn.nodes),
                            children=dict(bn.tables.neighbours), families=families, tables=tables)
    parents = bn.tables.parents
    ancestors = Ancestors(parents)
    kids: dict[Hashable, list] = {v: [] for v in bn.nodes}
    for c in bn.nodes:   # model order, as before; one pass instead of one per node
        for p in dict.fromkeys(parents[c]):
            kids[p].append(c)
    children = {v: tuple(kids[v]) for v in bn.nodes}
    return NetworkIndex(moral=moral, ancestors=ancestors, children=children,
                        families=families, tables=tables)


def network_joint(bn: Model, free: list, codes: dict,
                  budget: int | float | str | None = None) -> np.ndarray:
    """Unnormalised P(free, evidence) (up to a constant when ``free`` is non-empty).

    All zeros when the evidence has probability 0 (also when the CPTs that make it impossible
    lie outside the targets' part of the network, which the plan leaves out). Raises
    :class:`~pufferfish_pgm.errors.LimitExceededError` before allocating when the query's
    largest table exceeds the memory budget.
    """
    index = network_index(bn)
    plan = _compiled(bn, index, free, codes, budget)
    arrays = list(plan.arrays)
    cpts = index.tables      # built once per model (a dict per query cost 20 % on alarm)
    for slot, v, axes in plan.sliced:
        arrays[slot] = cpts[v][tuple(codes.get(a, slice(None)) for a in axes)]
    # einsum's interleaved form (array, axes, ..., output axes) has no numpy type hints
    operands: list[Any]
    for slot, inputs, out, path in plan.steps:
        operands = [x for i, sub in inputs for x in (arrays[i], sub)]
        arrays[slot] = np.einsum(*operands, out, optimize=path)
    if not plan.final:  # no targets and no evidence: the empty product
        return np.array(1.0)
    operands = [x for i, sub in plan.final for x in (arrays[i], sub)]
    joint = np.einsum(*operands, list(range(len(free))))
    if plan.partial and not _possible(bn, index, codes, budget):
        return np.zeros_like(joint)
    return joint


def _compiled(bn: Model, index: NetworkIndex, free: list, codes: dict,
              budget: Any) -> _Plan:
    """The plan of this query shape (compiled and cached on first use), checked against
    the budget before anything is allocated."""
    key = (tuple(free), tuple(sorted(codes, key=str)))
    plan = index.plans.get(key)
    if plan is not None:
        _check(bn, plan.schedule, free, codes, budget)
        return plan
    observed = set(codes)
    kept, relevant = _requisite(bn, index, free, observed)
    scopes = [tuple(a for a in index.families[k] if a not in observed) for k in kept]
    dims = {a: len(bn.tables.states[a]) for scope in scopes for a in scope}
    order = schedule(scopes, keep=free, dims=dims, rank=index.order)
    _check(bn, order, free, codes, budget)
    plan = _plan(bn, index, free, observed, order, memory_budget(budget))
    plan = plan._replace(partial=bool(observed) and len(kept) < len(relevant))
    index.plans[key] = plan
    return plan


def _check(bn: Model, order: Schedule, free: list, codes: dict,
           budget: Any) -> None:
    given = sorted(map(str, codes))
    where = (f"summing out node {order.culprit!r}" if order.culprit is not None
             else "the result table")
    check_allocation(order.peak_cells * CELL_BYTES, budget=budget,
                     what=f"exact inference of P({', '.join(map(str, free)) or '∅'} | "
                          f"{', '.join(given) or 'nothing'}) in {bn.name!r} ({where}, "
                          f"{order.peak_cells:,} cells)")


def _possible(bn: Model, index: NetworkIndex, codes: dict,
              budget: Any) -> bool:
    """P(evidence) > 0; single-node evidence is looked up in cached marginals."""
    if len(codes) == 1:
        ((v, c),) = codes.items()
        marginals = index.marginals
        if v not in marginals:
            marginals[v] = network_joint(bn, [v], {}, budget)
        return bool(marginals[v][c] > 0)
    return bool(network_joint(bn, [], codes, budget).sum() > 0)


def _requisite(bn: Model, index: NetworkIndex, free: list,
               observed: set) -> tuple[frozenset, frozenset]:
    """Nodes whose CPTs a query needs, and the ancestral set they were taken from.

    The relevant nodes are the ancestors of the targets and the evidence; with targets, only
    the CPTs touching their component of the moral graph of that set (observed nodes removed)
    count: the other components only contribute a constant factor.
    """
    if isinstance(bn, MarkovNetworkScenario):
        return requisite_factors(index.ancestors, index.children, index.families, free,
                                 observed)
    ancestors, children = index.ancestors, index.children
    parents = bn.tables.parents
    relevant = (ancestors.of([*free, *observed]) if isinstance(ancestors, Ancestors)
                else frozenset().union(*(ancestors[v] for v in [*free, *observed])))
    if not free:
        return relevant, relevant
    # moral neighbours inside ``relevant``, unobserved: parents, children, co-parents
    reach = set(free)
    todo = list(free)
    while todo:
        v = todo.pop()
        near = [*parents[v]]
        for c in children[v]:
            if c in relevant:
                near.append(c)
                near.extend(parents[c])
        for u in near:
            if u not in reach and u not in observed:
                reach.add(u)
                todo.append(u)
    kept = frozenset(v for v in relevant if v in reach or not reach.isdisjoint(parents[v]))
    return kept, relevant


def _plan(bn: Model, index: NetworkIndex, free: list, observed: set,
          order: Schedule, limit: int) -> _Plan:
    """Compile one query shape: which tables to slice and the einsum steps of ``order``.

    Steps whose inputs do not depend on the evidence values are run here, once, and their
    results stored in the plan; a query then only runs the steps that touch the evidence.
    Such evidence-free results are also shared between plans: they are memoised per model by
    what they are made of (a CPT by its node; a sum by the variable summed out and the memo
    ids of its inputs, in order, which also fixes the axes of the result).
    """
    kept, _ = _requisite(bn, index, free, observed)
    families, cpts = factor_tables(bn)
    memo = index.static
    arrays: list[np.ndarray | None] = []
    sliced: list[tuple[int, Hashable, tuple]] = []
    factors: dict[int, tuple] = {}
    static: dict[int, int] = {}  # slot -> memo id
    using: dict[Hashable, set[int]] = {}  # variable -> slots of the live factors using it
    for v in sorted(kept, key=lambda k: (index.order[families[k][0]], str(k))):
        family = families[v]
        slot = len(arrays)
        if observed.isdisjoint(family):
            factors[slot] = family
            known = memo.get(("cpt", v)) or index.remember(("cpt", v), cpts[v], family, None)
            static[slot] = known[0]
            arrays.append(cpts[v])
        else:
            factors[slot] = tuple(a for a in family if a not in observed)
            sliced.append((slot, v, family))
            arrays.append(None)
        for a in factors[slot]:
            using.setdefault(a, set()).add(slot)
    steps: list[_Step] = []
    for x in order.order:
        touching = sorted(using.pop(x))
        slot = len(arrays)
        if all(i in static for i in touching):
            key = ("sum", x, *(static[i] for i in touching))
            entry = memo.get(key)
            if entry is None:
                table, out = _eliminate(bn, x, [arrays[i] for i in touching],
                                        [factors[i] for i in touching], order.peak_cells)
                entry = index.remember(key, table, out, limit)
            static[slot], table, out = entry
            arrays.append(table)
        else:
            out = tuple(dict.fromkeys(a for i in touching for a in factors[i] if a != x))
            ids = _axis_ids(out, x, [factors[i] for i in touching])
            inputs = [(i, [ids[a] for a in factors[i]]) for i in touching]
            steps.append(_Step(slot, inputs, [ids[a] for a in out],
                               _path(bn, [factors[i] for i in touching], out, ids,
                                     order.peak_cells)))
            arrays.append(None)
        for i in touching:
            del factors[i]
        factors[slot] = out
        for a in out:  # every axis of the touching factors but x
            users = using[a]
            users.difference_update(touching)
            users.add(slot)
    ids = {a: n for n, a in enumerate(dict.fromkeys([*free, *(a for ax in factors.values()
                                                             for a in ax)]))}
    final = [(i, [ids[a] for a in axes]) for i, axes in factors.items()]
    return _Plan(arrays, sliced, steps, final, False, order)


def _axis_ids(out: tuple, x: Any, axes: list) -> dict:
    return {a: n for n, a in enumerate(dict.fromkeys([*out, x, *(a for ax in axes for a in ax)]))}


def _eliminate(bn: Model, x: Any, tables: list, axes: list,
               max_cells: int) -> tuple[np.ndarray, tuple]:
    """Sum ``x`` out of the product of ``tables`` (with the given axes): (table, its axes)."""
    out = tuple(dict.fromkeys(a for ax in axes for a in ax if a != x))
    ids = _axis_ids(out, x, axes)
    table = np.einsum(*[y for t, ax in zip(tables, axes, strict=True)
                        for y in (t, [ids[a] for a in ax])],
                      [ids[a] for a in out], optimize=_path(bn, axes, out, ids, max_cells))
    return table, out


PATH_MIN_COST = 1 << 15


def _path(bn: Model, inputs: list, out: tuple, ids: dict,
          max_cells: int) -> list | bool:
    """A pairwise contraction order for one big elimination step, else False.

    ``np.einsum`` without a path multiplies all its operands in one loop over every variable
    they share, which costs (product of all sizes) x (number of operands) but allocates only
    the result; for big steps with three or more operands, contracting pairwise in a greedy
    order is much cheaper. The pairwise intermediates are kept within ``max_cells`` (the
    plan's checked peak), so a path never allocates more than the budget allowed.
    """
    if len(inputs) < 3:
        return False
    states = bn.tables.states
    dims = {a: len(states[a]) for axes in inputs for a in axes}
    if math.prod(dims.values()) * len(inputs) < PATH_MIN_COST:
        return False
    operands: list = []
    for axes in inputs:
        operands += [np.broadcast_to(0.0, [dims[a] for a in axes]), [ids[a] for a in axes]]
    path = np.einsum_path(*operands, [ids[a] for a in out],
                          optimize=("greedy", max(max_cells, 1)))[0]
    return path if len(path) > 2 else False
