"""The numpy variable-elimination engine for networks, with bounded memory (internal).

The elimination order (min-fill on the moral graph) and the ancestor sets are computed once per
model and kept in its :class:`NetworkIndex` (:mod:`._network_index`); each query drops barren
nodes (those that are not ancestors of a target or of the evidence), slices the evidence out of
the tables and eliminates the rest. A Markov network's factors are eliminated the same way (its
factor tables instead of CPTs, :mod:`._factor_models`; no barren nodes, but the factors the
evidence separates from the targets are dropped), giving its joint up to the partition
function. Before a query shape is compiled its largest table is computed from the graph
(:mod:`._elimination_order`): above the memory budget the query is refused with
:class:`~pufferfish_pgm.errors.LimitExceededError`; a large one gets an order of its own.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any, NamedTuple

import numpy as np

from .._budget import check_allocation, memory_budget
from ..scenarios import MarkovNetworkScenario
from ._elimination_order import Schedule, schedule
from ._factor_models import Ancestors, Model, factor_tables, requisite_factors
from ._network_index import NetworkIndex, _Plan, _Step, network_index

__all__ = ["NetworkIndex", "network_index", "network_joint"]

#: Bytes per table cell (float64).
CELL_BYTES = 8


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
    plan = _plan(bn, index, kept, free, observed, order, memory_budget(budget))
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


class _Work(NamedTuple):
    """A plan being compiled (:func:`_plan`): its slots so far and the live factors."""

    arrays: list[np.ndarray | None]   # per slot: a table, or None (filled per query)
    sliced: list[tuple[int, Hashable, tuple]]   # (slot, node, axes) of CPTs touching evidence
    steps: list[_Step]
    factors: dict[int, tuple]   # slot -> axes, of the live factors (not yet summed over)
    static: dict[int, int]   # slot -> memo id, of the evidence-free slots
    using: dict[Hashable, set[int]]   # variable -> slots of the live factors using it


def _plan(bn: Model, index: NetworkIndex, kept: frozenset, free: list, observed: set,
          order: Schedule, limit: int) -> _Plan:
    """Compile one query shape: which tables to slice and the einsum steps of ``order``.

    Steps whose inputs do not depend on the evidence values are run here, once, and their
    results stored in the plan; a query then only runs the steps that touch the evidence.
    Such evidence-free results are also shared between plans: they are memoised per model by
    what they are made of (a CPT by its node; a sum by the variable summed out and the memo
    ids of its inputs, in order, which also fixes the axes of the result).
    """
    work = _factor_slots(bn, index, kept, observed)
    for x in order.order:
        _sum_out(bn, index, work, x, order.peak_cells, limit)
    ids = {a: n for n, a in enumerate(dict.fromkeys([*free, *(a for ax in work.factors.values()
                                                             for a in ax)]))}
    final = [(i, [ids[a] for a in axes]) for i, axes in work.factors.items()]
    return _Plan(work.arrays, work.sliced, work.steps, final, False, order)


def _factor_slots(bn: Model, index: NetworkIndex, kept: frozenset, observed: set) -> _Work:
    """One slot per factor of ``kept``: its table (memoised) when no evidence touches it, else
    None and an entry in ``sliced`` (the query slices it)."""
    families, cpts = factor_tables(bn)
    work = _Work([], [], [], {}, {}, {})
    for v in sorted(kept, key=lambda k: (index.order[families[k][0]], str(k))):
        family = families[v]
        slot = len(work.arrays)
        if observed.isdisjoint(family):
            work.factors[slot] = family
            known = (index.static.get(("cpt", v))
                     or index.remember(("cpt", v), cpts[v], family, None))
            work.static[slot] = known[0]
            work.arrays.append(cpts[v])
        else:
            work.factors[slot] = tuple(a for a in family if a not in observed)
            work.sliced.append((slot, v, family))
            work.arrays.append(None)
        for a in work.factors[slot]:
            work.using.setdefault(a, set()).add(slot)
    return work


def _sum_out(bn: Model, index: NetworkIndex, work: _Work, x: Hashable, max_cells: int,
             limit: int) -> None:
    """Add the slot of summing ``x`` out of the live factors using it, which it replaces.

    Evidence-free inputs: the sum is run now (or taken from the model's memo); else it
    becomes a step of the plan, run per query.
    """
    touching = sorted(work.using.pop(x))
    slot = len(work.arrays)
    axes = [work.factors[i] for i in touching]
    if all(i in work.static for i in touching):
        key = ("sum", x, *(work.static[i] for i in touching))
        entry = index.static.get(key)
        if entry is None:
            table, out = _eliminate(bn, x, [work.arrays[i] for i in touching], axes, max_cells)
            entry = index.remember(key, table, out, limit)
        work.static[slot], table, out = entry
        work.arrays.append(table)
    else:
        out = tuple(dict.fromkeys(a for ax in axes for a in ax if a != x))
        ids = _axis_ids(out, x, axes)
        inputs = [(i, [ids[a] for a in ax]) for i, ax in zip(touching, axes, strict=True)]
        work.steps.append(_Step(slot, inputs, [ids[a] for a in out],
                                _path(bn, axes, out, ids, max_cells)))
        work.arrays.append(None)
    for i in touching:
        del work.factors[i]
    work.factors[slot] = out
    for a in out:  # every axis of the touching factors but x
        users = work.using[a]
        users.difference_update(touching)
        users.add(slot)


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
