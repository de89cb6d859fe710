"""Exact inference: joint conditionals P(targets | evidence) for networks and chains.

Networks use a numpy variable-elimination engine: the elimination order (min-fill on the moral
graph) and the ancestor sets are computed once per model and cached on the scenario; each query
drops barren nodes (those that are not ancestors of a target or of the evidence), slices the
evidence out of the tables and eliminates the rest in the cached order. Chains use matrix
powers: the involved time steps form a chain whose links are powers of the transition matrix.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> mc = MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], [1.0, 0.0], 3)
>>> conditional(mc, [2], {0: 0}).round(3).tolist()   # first row of P^2
[0.83, 0.17]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import networkx as nx
import numpy as np

from .errors import ImpossibleSecretError, InvalidModelError, ParameterTypeError
from .scenarios import BayesianNetworkScenario, MarkovChainScenario

__all__ = ["conditional", "elimination_order", "secret_probability"]


def _codes(scenario: Any, evidence: Mapping | None) -> dict:
    if evidence is None:
        return {}
    if not isinstance(evidence, Mapping):
        raise ParameterTypeError(f"evidence must be a dict node -> state, got {evidence!r}")
    return {scenario.check_node(n): scenario.state_index(n, s) for n, s in evidence.items()}


def _target_list(scenario: Any, targets: Any) -> list:
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
    tlist = _target_list(scenario, targets)
    codes = _codes(scenario, evidence)
    free = [t for t in tlist if t not in codes]
    if isinstance(scenario, MarkovChainScenario):
        joint = _chain_joint(scenario, free, codes)
    elif isinstance(scenario, BayesianNetworkScenario):
        joint = _network_joint(scenario, free, codes)
    else:
        raise ParameterTypeError(f"expected a scenario, got {type(scenario).__name__}")
    total = joint.sum()
    if not total > 0:
        shown = {n: scenario.states_of(n)[c] for n, c in codes.items()}
        raise ImpossibleSecretError(
            f"the evidence {shown} has probability 0 under {scenario.name!r}; condition on "
            "something possible"
        )
    return _embed(scenario, tlist, free, codes, joint / total)


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
        if chain.initial_is_any:
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
    for s, t in zip(steps[:-1], steps[1:]):
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
    for table, axes in zip(factors[0::2], factors[1::2]):
        operands += [table, [ids[v] for v in axes]]
    return np.einsum(*operands, [ids[v] for v in free], optimize=True)


# ----------------------------------------------------------------------------- networks

def elimination_order(scenario: BayesianNetworkScenario) -> dict:
    """Rank of each node in a min-fill elimination order of the moral graph (cached).

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import BayesianNetworkScenario, default_model_path
    >>> asia = BayesianNetworkScenario.from_file(default_model_path("asia.bif"))
    >>> sorted(elimination_order(asia).values()) == list(range(8))
    True
    """
    cache = scenario._cache
    if "order" not in cache:
        moral = nx.Graph()
        moral.add_nodes_from(scenario.nodes)
        for v in scenario.nodes:
            pa = scenario.tables.parents[v]
            moral.add_edges_from((p, v) for p in pa)
            moral.add_edges_from((p, q) for i, p in enumerate(pa) for q in pa[i + 1:])
        cache["order"] = {v: r for r, v in enumerate(_min_fill(moral))}
        graph = nx.DiGraph(scenario.edges())
        graph.add_nodes_from(scenario.nodes)
        cache["ancestors"] = {v: frozenset(nx.ancestors(graph, v)) | {v} for v in scenario.nodes}
    return cache["order"]


def _min_fill(graph: nx.Graph) -> list:
    graph = graph.copy()
    order = []
    while graph:
        def fill(v: Any) -> tuple:
            nb = list(graph[v])
            missing = sum(1 for i, a in enumerate(nb) for b in nb[i + 1:] if not graph.has_edge(a, b))
            return missing, len(nb), str(v)

        v = min(graph.nodes, key=fill)
        nb = list(graph[v])
        graph.add_edges_from((a, b) for i, a in enumerate(nb) for b in nb[i + 1:])
        graph.remove_node(v)
        order.append(v)
    return order


def _network_joint(bn: BayesianNetworkScenario, free: list, codes: dict) -> np.ndarray:
    """Unnormalised P(free, evidence) (up to a constant when ``free`` is non-empty)."""
    key = (tuple(free), tuple(sorted(codes, key=str)))
    plans = bn._cache.setdefault("plans", {})
    if key not in plans:
        plans[key] = _plan(bn, free, set(codes))
    arrays, sliced, steps, final = plans[key]
    arrays = list(arrays)
    cpts = bn.tables.cpts
    for slot, v, axes in sliced:
        arrays[slot] = cpts[v][tuple(codes.get(a, slice(None)) for a in axes)]
    for slot, inputs, out in steps:
        arrays[slot] = np.einsum(*[x for i, sub in inputs for x in (arrays[i], sub)], out)
    return np.einsum(*[x for i, sub in final for x in (arrays[i], sub)], list(range(len(free))))


def _requisite(bn: BayesianNetworkScenario, free: list, observed: set) -> frozenset:
    """Ancestors of targets and evidence; with targets, only their moral component counts."""
    elimination_order(bn)
    ancestors = bn._cache["ancestors"]
    relevant = frozenset().union(*(ancestors[v] for v in [*free, *observed]))
    if not free:
        return relevant
    moral = nx.Graph()
    moral.add_nodes_from(relevant - observed)
    for v in relevant:
        family = [u for u in (v, *bn.tables.parents[v]) if u not in observed]
        moral.add_edges_from((a, b) for i, a in enumerate(family) for b in family[i + 1:])
    reach = set().union(*(nx.node_connected_component(moral, t) for t in free))
    return frozenset(v for v in relevant
                     if {v, *bn.tables.parents[v]} & reach)


def _plan(bn: BayesianNetworkScenario, free: list, observed: set) -> tuple:
    """Compile one query shape: which tables to slice and the einsum steps of the elimination.

    Steps whose inputs do not depend on the evidence values are run here, once, and their
    results stored in the plan; a query then only runs the steps that touch the evidence.
    """
    order = elimination_order(bn)
    nodes = sorted(_requisite(bn, free, observed), key=order.__getitem__)
    parents, cpts = bn.tables.parents, bn.tables.cpts
    family = {v: (v, *parents[v]) for v in nodes}
    arrays: list = []
    sliced, factors, static = [], {}, set()
    for v in nodes:
        factors[len(arrays)] = tuple(a for a in family[v] if a not in observed)
        if observed & set(family[v]):
            sliced.append((len(arrays), v, family[v]))
            arrays.append(None)
        else:
            static.add(len(arrays))
            arrays.append(cpts[v])
    steps = []
    for x in (v for v in nodes if v not in observed and v not in free):
        touching = [i for i, axes in factors.items() if x in axes]
        out = tuple(dict.fromkeys(a for i in touching for a in factors[i] if a != x))
        ids = {a: n for n, a in enumerate(dict.fromkeys([*out, x, *(a for i in touching
                                                                    for a in factors[i])]))}
        inputs = [(i, [ids[a] for a in factors[i]]) for i in touching]
        if all(i in static for i in touching):
            static.add(len(arrays))
            arrays.append(np.einsum(*[y for i, sub in inputs for y in (arrays[i], sub)],
                                    [ids[a] for a in out]))
        else:
            steps.append((len(arrays), inputs, [ids[a] for a in out]))
            arrays.append(None)
        for i in touching:
            del factors[i]
        factors[len(arrays) - 1] = out
    ids = {a: n for n, a in enumerate(dict.fromkeys([*free, *(a for ax in factors.values()
                                                             for a in ax)]))}
    final = [(i, [ids[a] for a in axes]) for i, axes in factors.items()]
    return arrays, sliced, steps, final
