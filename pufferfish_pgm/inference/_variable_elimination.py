"""Exact inference: joint conditionals P(targets | evidence) for networks and chains.

Networks use a numpy variable-elimination engine: the elimination order (min-fill on the moral
graph) and the ancestor sets are computed once per model and kept in its :class:`NetworkIndex`;
each query drops barren nodes (those that are not ancestors of a target or of the evidence),
slices the evidence out of the tables and eliminates the rest in the cached order. Chains use
matrix powers: the involved time steps form a chain whose links are powers of the transition
matrix.

The index of a network is owned by this module and kept per scenario *object* in a weak-keyed
table (:func:`network_index`): the frozen scenario holds no cache, an index lives exactly as long
as its scenario, and a ``dataclasses.replace`` copy of a scenario gets an index of its own.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> mc = MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], [1.0, 0.0], 3)
>>> conditional(mc, [2], {0: 0}).round(3).tolist()   # first row of P^2
[0.83, 0.17]
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from ..errors import ImpossibleSecretError, InvalidModelError, ParameterTypeError
from ..scenarios import BayesianNetworkScenario, MarkovChainScenario, Scenario

__all__ = ["NetworkIndex", "conditional", "elimination_order", "network_index",
           "secret_probability"]

#: An einsum operand list: (slot of an array, its axis ids).
_Operands = list[tuple[int, list[int]]]


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


#: Evidence-free einsum result shared between plans: (memo id, table, its axes).
_Static = tuple[int, np.ndarray, tuple]


@dataclass(eq=False)
class NetworkIndex:
    """What the elimination engine derives from one network, computed once per model.

    Built by :func:`network_index` on first use and written only by this module; other
    stages may read it (the count-law engine of :mod:`pufferfish_pgm.queries` uses
    ``order`` and ``ancestors``). It holds no reference to its scenario, so the weak-keyed
    table that maps scenarios to indices lets both go together.

    Attributes
    ----------
    order : dict
        Rank of each node in a min-fill elimination order of the moral graph.
    ancestors : dict
        Each node's ancestors, itself included.
    children : dict
        Each node's children, in model order.
    plans, marginals, static
        Compiled query shapes by (targets, evidence nodes); single-node marginals (for
        the zero-probability check); evidence-free intermediate tables shared between
        plans (see :func:`_plan`).
    """

    order: dict[Hashable, int]
    ancestors: dict[Hashable, frozenset]
    children: dict[Hashable, tuple]
    plans: dict[tuple[tuple, tuple], _Plan] = field(default_factory=dict)
    marginals: dict[Hashable, np.ndarray] = field(default_factory=dict)
    static: dict[tuple, _Static] = field(default_factory=dict)


_NETWORK_INDEX: weakref.WeakKeyDictionary[BayesianNetworkScenario, NetworkIndex] = (
    weakref.WeakKeyDictionary())


def network_index(bn: BayesianNetworkScenario) -> NetworkIndex:
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


def _build_index(bn: BayesianNetworkScenario) -> NetworkIndex:
    parents = bn.tables.parents
    moral: dict[Hashable, set] = {v: set() for v in bn.nodes}
    for v in bn.nodes:
        family = (v, *parents[v])
        for i, a in enumerate(family):
            for b in family[i + 1:]:
                moral[a].add(b)
                moral[b].add(a)
    ancestors: dict[Hashable, frozenset] = {}
    for v in bn.nodes:  # topological: parents come first
        ancestors[v] = frozenset({v}.union(*(ancestors[p] for p in parents[v])))
    children = {v: tuple(c for c in bn.nodes if v in parents[c]) for v in bn.nodes}
    return NetworkIndex(order={v: r for r, v in enumerate(_min_fill(moral))},
                        ancestors=ancestors, children=children)


def _codes(scenario: Scenario, evidence: Mapping | None) -> dict:
    if evidence is None:
        return {}
    if not isinstance(evidence, Mapping):
        raise ParameterTypeError(f"evidence must be a dict node -> state, got {evidence!r}")
    return {scenario.check_node(n): scenario.state_index(n, s) for n, s in evidence.items()}


def _target_list(scenario: Scenario, targets: Any) -> list:
    if isinstance(targets, (str, int, np.integer)):
        targets = [targets]
    out = [scenario.check_node(t) for t in targets]
    if len(set(out)) != len(out):
        raise ParameterTypeError(f"targets repeat a node: {list(targets)}; list each node once")
    return out


def conditional(scenario: Any, targets: Sequence, evidence: Mapping | None = None) -> np.ndarray:
    """Joint distribution P(targets | evidence) as an array with one axis per target.

    Axes follow the order of ``targets``; states follow the model's order. A target that is
    also in the evidence gets a one-hot axis.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import BayesianNetworkScenario, default_model_path
    >>> asia = BayesianNetworkScenario.from_file(default_model_path("asia.bif"))
    >>> conditional(asia, ["lung"], {"smoke": "yes"}).tolist()
    [0.1, 0.9]
    """
    _check_scenario(scenario)
    tlist = _target_list(scenario, targets)
    codes = _codes(scenario, evidence)
    free = [t for t in tlist if t not in codes]
    if isinstance(scenario, MarkovChainScenario):
        joint = _chain_joint(scenario, free, codes)
    else:
        joint = _network_joint(scenario, free, codes)
    total = joint.sum()
    if not total > 0:
        shown = {n: scenario.states_of(n)[c] for n, c in codes.items()}
        raise ImpossibleSecretError(
            f"the evidence {shown} has probability 0 under {scenario.name!r}; condition on "
            "something possible"
        )
    return _embed(scenario, tlist, free, codes, joint / total)


def _check_scenario(scenario: Any) -> None:
    if not isinstance(scenario, (BayesianNetworkScenario, MarkovChainScenario)):
        raise ParameterTypeError(
            f"expected a BayesianNetworkScenario or MarkovChainScenario, got "
            f"{type(scenario).__name__}; pass one member of a class (e.g. cls[0])"
        )


def _embed(scenario: Any, tlist: list, free: list, codes: dict, joint: np.ndarray) -> np.ndarray:
    if len(free) == len(tlist):
        return joint
    shape = [len(scenario.states_of(t)) for t in tlist]
    out = np.zeros(shape)
    index = tuple(codes[t] if t in codes else slice(None) for t in tlist)
    out[index] = joint
    return out


def secret_probability(scenario: Any, evidence: Mapping) -> float:
    """P(evidence | θ); for a chain with ``initial="any"`` the largest over initial states.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> mc = MarkovChainScenario([[0.5, 0.5], [0.0, 1.0]], "any", 3)
    >>> secret_probability(mc, {2: 0})
    0.25
    """
    _check_scenario(scenario)
    codes = _codes(scenario, evidence)
    if isinstance(scenario, MarkovChainScenario):
        if scenario.initial_is_any:
            k = scenario.k
            return float(max(_chain_joint(scenario, [], codes, np.eye(k)[z]).sum()
                             for z in range(k)))
        return float(_chain_joint(scenario, [], codes).sum())
    return float(_network_joint(scenario, [], codes).sum())


# ----------------------------------------------------------------------------- chains

def _chain_joint(chain: MarkovChainScenario, free: list, codes: dict,
                 initial: np.ndarray | None = None) -> np.ndarray:
    """Unnormalised P(free, evidence) for a chain: a product of transition powers."""
    if initial is None:
        if isinstance(chain.initial, str):
            raise InvalidModelError(
                f"chain {chain.name!r} has initial='any', so it defines no single joint "
                "distribution; give an initial distribution"
            )
        initial = chain.initial
    steps = sorted(set(free) | set(codes))
    if not steps:
        return np.array(1.0)
    first = initial @ chain.power(steps[0])
    factors: list[Any] = [_pick(first, [steps[0]], codes), [steps[0]]]
    for s, t in zip(steps[:-1], steps[1:], strict=True):
        factors += [_pick(chain.power(t - s), [s, t], codes), [s, t]]
    return _contract(factors, free)


def _pick(table: np.ndarray, axes: list, codes: dict) -> np.ndarray:
    """Replace evidence axes by a one-hot mask (keeps axis bookkeeping simple)."""
    out = table
    for i, v in enumerate(axes):
        if v in codes:
            mask = np.zeros(table.shape[i])
            mask[codes[v]] = 1.0
            out = out * mask.reshape([-1 if j == i else 1 for j in range(table.ndim)])
    return out


def _contract(factors: list, free: list) -> np.ndarray:
    ids = {v: i for i, v in enumerate(dict.fromkeys(v for ax in factors[1::2] for v in ax))}
    operands = []
    for table, axes in zip(factors[0::2], factors[1::2], strict=True):
        operands += [table, [ids[v] for v in axes]]
    return np.einsum(*operands, [ids[v] for v in free], optimize=True)


# ----------------------------------------------------------------------------- networks

def elimination_order(scenario: BayesianNetworkScenario) -> dict[Hashable, int]:
    """Rank of each node in a min-fill elimination order of the moral graph (cached).

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import BayesianNetworkScenario, default_model_path
    >>> asia = BayesianNetworkScenario.from_file(default_model_path("asia.bif"))
    >>> sorted(elimination_order(asia).values()) == list(range(8))
    True
    """
    return network_index(scenario).order


def _min_fill(adjacency: dict) -> list:
    """Greedy min-fill order; ties go to fewer neighbours, then to the smaller ``str(node)``.

    ``adjacency`` (node -> set of neighbours, in the graph's node order) is consumed. Only the
    scores of nodes within distance 2 of an eliminated node can change, so only those are
    recomputed after each step.
    """
    graph = adjacency

    def fill(v: Any) -> tuple:
        nb = list(graph[v])
        missing = sum(1 for i, a in enumerate(nb) for b in nb[i + 1:] if b not in graph[a])
        return missing, len(nb), str(v)

    score = {v: fill(v) for v in graph}
    order = []
    while graph:
        v = min(graph, key=score.__getitem__)
        nb = list(graph.pop(v))
        del score[v]
        for a in nb:
            graph[a].discard(v)
            graph[a].update(b for b in nb if b != a)
        stale = set(nb).union(*(graph[a] for a in nb))
        for u in stale:
            score[u] = fill(u)
        order.append(v)
    return order


def _network_joint(bn: BayesianNetworkScenario, free: list, codes: dict) -> np.ndarray:
    """Unnormalised P(free, evidence) (up to a constant when ``free`` is non-empty).

    All zeros when the evidence has probability 0 (also when the CPTs that make it impossible
    lie outside the targets' part of the network, which the plan leaves out).
    """
    index = network_index(bn)
    key = (tuple(free), tuple(sorted(codes, key=str)))
    plan = index.plans.get(key)
    if plan is None:
        plan = index.plans[key] = _plan(bn, index, free, set(codes))
    arrays = list(plan.arrays)
    cpts = bn.tables.cpts
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
    if plan.partial and not _possible(bn, index, codes):
        return np.zeros_like(joint)
    return joint


def _possible(bn: BayesianNetworkScenario, index: NetworkIndex, codes: dict) -> bool:
    """P(evidence) > 0; single-node evidence is looked up in cached marginals."""
    if len(codes) == 1:
        ((v, c),) = codes.items()
        marginals = index.marginals
        if v not in marginals:
            marginals[v] = _network_joint(bn, [v], {})
        return bool(marginals[v][c] > 0)
    return bool(_network_joint(bn, [], codes).sum() > 0)


def _requisite(bn: BayesianNetworkScenario, index: NetworkIndex, free: list,
               observed: set) -> tuple[frozenset, frozenset]:
    """Nodes whose CPTs a query needs, and the ancestral set they were taken from.

    The relevant nodes are the ancestors of the targets and the evidence; with targets, only
    the CPTs touching their component of the moral graph of that set (observed nodes removed)
    count: the other components only contribute a constant factor.
    """
    ancestors, children = index.ancestors, index.children
    parents = bn.tables.parents
    relevant = frozenset().union(*(ancestors[v] for v in [*free, *observed]))
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


def _plan(bn: BayesianNetworkScenario, index: NetworkIndex, free: list,
          observed: set) -> _Plan:
    """Compile one query shape: which tables to slice and the einsum steps of the elimination.

    Steps whose inputs do not depend on the evidence values are run here, once, and their
    results stored in the plan; a query then only runs the steps that touch the evidence.
    Such evidence-free results are also shared between plans: they are memoised per model by
    what they are made of (a CPT by its node; a sum by the variable summed out and the memo
    ids of its inputs, in order, which also fixes the axes of the result).
    ``partial`` says whether CPTs touching the evidence were left out (then the result is
    only proportional to P(targets, evidence), and P(evidence) = 0 must be checked apart).
    """
    kept, relevant = _requisite(bn, index, free, observed)
    nodes = sorted(kept, key=index.order.__getitem__)
    parents, cpts = bn.tables.parents, bn.tables.cpts
    memo = index.static
    arrays: list[np.ndarray | None] = []
    sliced: list[tuple[int, Hashable, tuple]] = []
    factors: dict[int, tuple] = {}
    static: dict[int, int] = {}  # slot -> memo id
    using: dict[Hashable, set[int]] = {}  # variable -> slots of the live factors using it
    for v in nodes:
        family = (v, *parents[v])
        slot = len(arrays)
        if observed.isdisjoint(family):
            factors[slot] = family
            static[slot] = memo.setdefault(("cpt", v), (len(memo), cpts[v], family))[0]
            arrays.append(cpts[v])
        else:
            factors[slot] = tuple(a for a in family if a not in observed)
            sliced.append((slot, v, family))
            arrays.append(None)
        for a in factors[slot]:
            using.setdefault(a, set()).add(slot)
    steps: list[_Step] = []
    for x in (v for v in nodes if v not in observed and v not in free):
        touching = sorted(using.pop(x))
        slot = len(arrays)
        if all(i in static for i in touching):
            key = ("sum", x, *(static[i] for i in touching))
            if key not in memo:
                table, out = _eliminate(bn, x, [arrays[i] for i in touching],
                                        [factors[i] for i in touching])
                memo[key] = (len(memo), table, out)
            static[slot], table, out = memo[key]
            arrays.append(table)
        else:
            out = tuple(dict.fromkeys(a for i in touching for a in factors[i] if a != x))
            ids = {a: n for n, a in enumerate(dict.fromkeys(
                [*out, x, *(a for i in touching for a in factors[i])]))}
            inputs = [(i, [ids[a] for a in factors[i]]) for i in touching]
            steps.append(_Step(slot, inputs, [ids[a] for a in out],
                               _path(bn, [factors[i] for i in touching], out, ids)))
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
    partial = bool(observed) and len(kept) < len(relevant)
    return _Plan(arrays, sliced, steps, final, partial)


def _eliminate(bn: BayesianNetworkScenario, x: Any, tables: list,
               axes: list) -> tuple[np.ndarray, tuple]:
    """Sum ``x`` out of the product of ``tables`` (with the given axes): (table, its axes)."""
    out = tuple(dict.fromkeys(a for ax in axes for a in ax if a != x))
    ids = {a: n for n, a in enumerate(dict.fromkeys([*out, x, *(a for ax in axes for a in ax)]))}
    table = np.einsum(*[y for t, ax in zip(tables, axes, strict=True)
                        for y in (t, [ids[a] for a in ax])],
                      [ids[a] for a in out], optimize=_path(bn, axes, out, ids))
    return table, out


PATH_MIN_COST = 1 << 15


def _path(bn: BayesianNetworkScenario, inputs: list, out: tuple, ids: dict) -> list | bool:
    """A pairwise contraction order for one big elimination step, else False.

    ``np.einsum`` without a path multiplies all its operands in one loop over every variable
    they share, which costs (product of all sizes) x (number of operands); for big steps with
    three or more operands, contracting pairwise in a greedy order is much cheaper.
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
    path = np.einsum_path(*operands, [ids[a] for a in out], optimize="greedy")[0]
    return path if len(path) > 2 else False
