"""Markov quilts on networks of independent components (DESIGN §3.2; issue 24).

When the union skeleton of a class falls into components (households, families, villages),
every node of another component is independent of the secret node X_i in every θ, so it is
remote under any quilt, including the empty one. A quilt of X_i therefore lives in X_i's
component and is planned on that component alone; the rest of the population is remote and
contributes neither nearby nodes nor influence. Components equal in every member (the same
node order, states, parents and CPTs: a plate) with the same query weights and the same
secret pairs share their plan, computed once on a representative and renamed position by
position. Each entry's remote set is kept as "every node outside the component's nearby and
quilt nodes" (:class:`OtherNodes`), not listed, so a plan of n nodes takes O(n) memory.

Examples
--------
>>> from pufferfish_pgm.scenarios import BayesianNetworkScenario
>>> from pufferfish_pgm.scenarios._network_tables import validate_tables
>>> from pufferfish_pgm.secrets import Framework
>>> from pufferfish_pgm.queries import Count
>>> from pufferfish_pgm.quilts import plan_network
>>> t = validate_tables(list("abcd"), {v: (0, 1) for v in "abcd"},
...                     {"a": (), "b": ("a",), "c": (), "d": ("c",)},
...                     {"a": [.5, .5], "c": [.5, .5], "b": [[.9, .1], [.1, .9]],
...                      "d": [[.9, .1], [.1, .9]]})
>>> plan = plan_network(Framework(BayesianNetworkScenario(t)), Count(1), 1.0)
>>> [(e.node, e.nearby, list(e.remote), e.sigma) for e in plan.entries][:2]
[('a', ('a', 'b'), ['c', 'd'], 2.0), ('b', ('a', 'b'), ['c', 'd'], 2.0)]
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from .._budget import memory_budget
from .._progress import Ticker, as_progress
from ..inference._engine import component_signature, linked_parts, sub_tables
from ..scenarios import BayesianNetworkScenario, ScenarioClass
from ._influence import ordered_pairs
from ._local_planner import ClassView, class_view, plan_node_local
from ._network_planner import (
    NetworkPlan,
    collect_plan,
    network_inputs,
    plan_connected,
)
from ._plan import OtherNodes, PlanEntry, PlanLedger

__all__ = ["OtherNodes", "class_components", "plan_components", "plan_network"]


def class_components(cls: Any) -> list[tuple]:
    """The components of the union skeleton of a network class (nodes in model order); one
    part for chains."""
    if not all(isinstance(m, BayesianNetworkScenario) for m in cls):
        return [tuple(cls.nodes)]
    return linked_parts(tuple(cls.nodes), [m.tables.parents for m in cls])


class _Component:
    """What every secret node of one component shares, computed once per component (a
    giant component's signature, weights or positions per node would take O(size²)): the
    representative's sub-class and view, its key, the positions, rep node -> real node, and
    the sets of an entry whose nearby set is the whole component."""

    def __init__(self, comp: tuple, key: int, sub: Any, view: ClassView, w: tuple,
                 w_key: int, others: tuple) -> None:
        self.comp, self.key, self.sub, self.view = comp, key, sub, view
        self.w, self.w_key = w, w_key
        self.rep_nodes = tuple(sub.nodes)
        self.pos = {v: i for i, v in enumerate(comp)}
        self.to = dict(zip(self.rep_nodes, comp, strict=True))
        nodes, universe = others
        self.everyone = OtherNodes(nodes, universe, frozenset(comp))


class _Representatives:
    """One sub-class (and its view) per distinct component of the class, made on demand, and
    one :class:`_Component` per component met."""

    def __init__(self, cls: Any, weight: Counter, ledger: PlanLedger) -> None:
        self.cls, self.weight, self.ledger = cls, weight, ledger
        self.others = (tuple(cls.nodes), frozenset(cls.nodes))
        self._made: dict[tuple, tuple[int, Any, ClassView]] = {}
        self._weights: dict[tuple, int] = {}
        self._parts: dict[Any, _Component] = {}

    def of(self, comp: tuple) -> _Component:
        """The :class:`_Component` of ``comp`` (its shared sets counted once by the ledger)."""
        part = self._parts.get(comp[0])
        if part is None:
            key = tuple(component_signature(m.tables, comp) for m in self.cls)
            made = self._made.get(key)
            if made is None:
                sub = ScenarioClass([BayesianNetworkScenario(
                    tables=sub_tables(m.tables, comp), name=m.name) for m in self.cls])
                made = self._made[key] = (len(self._made), sub, class_view(sub))
            w = tuple(self.weight[v] for v in comp)
            w_key = self._weights.setdefault(w, len(self._weights))
            self.ledger.admit_component(comp[0], len(comp))
            part = self._parts[comp[0]] = _Component(comp, made[0], made[1], made[2], w,
                                                     w_key, self.others)
        return part


def _rename(entry: PlanEntry, node: Any, part: _Component, ledger: PlanLedger) -> PlanEntry:
    """The representative's entry for the real component, counted by ``ledger`` before its
    node sets are built (an entry whose nearby set is the whole component shares them)."""
    if not entry.quilt and len(entry.nearby) == len(part.comp):
        ledger.admit(node, 0, 0)
        return PlanEntry(node=node, quilt=(), nearby=part.comp, remote=part.everyone,
                         influence=entry.influence, sigma=entry.sigma, trivial=entry.trivial)
    ledger.admit(node, len(entry.nearby), len(entry.quilt))
    nearby = tuple(part.to[v] for v in entry.nearby)
    quilt = tuple(part.to[v] for v in entry.quilt)
    nodes, universe = part.everyone.nodes, part.everyone.universe
    return PlanEntry(node=node, quilt=quilt, nearby=nearby,
                     remote=OtherNodes(nodes, universe, frozenset(nearby + quilt)),
                     influence=entry.influence, sigma=entry.sigma, trivial=entry.trivial)


def _extra(settings: dict, node: Any, part: _Component) -> dict:
    """``extra_quilts`` of ``node`` at the representative's nodes (nodes of other
    components are remote under any quilt and are dropped)."""
    given = (settings["extra_quilts"] or {}).get(node, ())
    mapped = tuple(tuple(sorted(part.pos[v] for v in q if v in part.pos)) for q in given)
    return {part.rep_nodes[part.pos[node]]: [[part.rep_nodes[i] for i in q]
                                            for q in mapped if q]}


def _plan_one(framework: Any, node: Any, part: _Component, epsilon: float, settings: dict,
              memo: dict, enough: float) -> tuple:
    """The representative's result for ``node`` (planned once per key; a result stopped at
    ``enough`` stays valid for later nodes, whose ``enough`` is at least as large)."""
    pairs = ordered_pairs(framework, node)
    extra = _extra(settings, node, part)
    full = (part.key, part.pos[node], tuple(pairs), part.w_key, repr(extra))
    if full not in memo:
        rep = part.rep_nodes[part.pos[node]]
        rep_weight = Counter({r: c for r, c in zip(part.rep_nodes, part.w, strict=True) if c})
        memo[full] = plan_node_local(part.sub, part.view, pairs, rep, rep_weight, epsilon,
                                     {**settings, "extra_quilts": extra}, enough=enough)
    return memo[full]


def _order(nodes: tuple, comp_of: dict, reps: _Representatives, shortcut: bool) -> list:
    """The secret nodes in planning order: by decreasing degree with ``shortcut`` (the hubs'
    σ first, so the others stop early, as :func:`plan_connected` does)."""
    if not shortcut:
        return list(nodes)

    def degree(v: Any) -> int:
        part = reps.of(comp_of[v])
        return len(part.view.skeleton[part.rep_nodes[part.pos[v]]])

    return sorted(nodes, key=lambda v: -degree(v))


def plan_components(framework: Any, parts: list[tuple], weight: Counter, epsilon: float,
                    settings: dict) -> NetworkPlan:
    """:func:`plan_network` for a class whose skeleton has several components ``parts``
    (with ``settings["shortcut"]``, a node's search stops once its σ is at most the largest
    σ of the nodes planned before it)."""
    comp_of = {v: comp for comp in parts for v in comp}
    reps = _Representatives(framework.scenarios, weight, settings["ledger"])
    memo: dict[tuple, tuple] = {}
    results, most = {}, 0.0
    steps = settings["progress"]
    steps.plan(len(framework.secret_nodes))
    for node in _order(framework.secret_nodes, comp_of, reps, settings["shortcut"]):
        steps.tick()
        part = reps.of(comp_of[node])
        entry, counts, was_cut = _plan_one(framework, node, part, epsilon, settings, memo,
                                           most)
        results[node] = (_rename(entry, node, part, settings["ledger"]), counts, was_cut)
        most = max(most, entry.sigma) if settings["shortcut"] else most
    return collect_plan((node, results[node]) for node in framework.secret_nodes)


def plan_network(framework: Any, query: Any, epsilon: float, *, max_quilt_states: int = 10**6,
                 extra_quilts: Mapping | None = None, max_candidates: int = 20_000,
                 memory_budget: int | float | str | None = None,
                 executor: Any = None, max_region: int = 500,
                 progress: Any = None, shortcut: bool = False) -> NetworkPlan:
    """The best quilt of every secret node of a network class (σ for L = 1).

    ``card`` counts the nearby nodes the query sums over (the MQM proof needs only the query's
    sensitivity to the nearby block). Each chosen partition is checked with networkx's
    d-connection search in every member's DAG (graph separation in a Markov network).
    ``memory_budget`` bounds each table of a candidate's influence computation, and
    ``max_region`` the nodes of its nearby set and of its influence region
    (:mod:`._local_planner`); candidates over either are skipped before any table is built.
    ``memory_budget`` also bounds the plan itself: each entry's node sets are counted
    (:class:`~pufferfish_pgm.quilts._plan.PlanLedger`, an upper bound from their sizes)
    before they are built, and LimitExceededError names the node where the plan would pass it.
    ``progress`` (None, True or a callable ``(done, total)``) counts one step per secret node.
    ``shortcut``: a node's search stops once its σ is at most the largest σ already needed
    by another node (σ_max is the same; the node's σ is then not its optimum, and the
    evidence says so): what MQM's scale needs, not what a per-node plan needs.
    ``executor`` plans the secret nodes in parallel (see :mod:`pufferfish_pgm._parallel`).
    A class whose skeleton has several components is planned component by component (quilts
    never cross them, DESIGN §3.2): :func:`plan_components`.
    """
    steps = Ticker(as_progress(progress, "MQM"))
    settings: dict[str, Any] = {"max_quilt_states": max_quilt_states, "extra_quilts": extra_quilts,
                "max_candidates": max_candidates, "memory_budget": memory_budget,
                "max_region": max_region, "progress": steps,
                "max_cells": _budget_cells(memory_budget), "shortcut": shortcut,
                "ledger": PlanLedger(budget=memory_budget, max_region=max_region,
                                     secret_nodes=len(framework.secret_nodes))}
    weight = network_inputs(framework, query, settings)
    parts = class_components(framework.scenarios)
    if len(parts) > 1:
        plan = plan_components(framework, parts, weight, epsilon, settings)
    else:
        plan = plan_connected(framework, weight, epsilon, settings, executor)
    steps.finish()
    return replace(plan, held_bytes=settings["ledger"].held)


def _budget_cells(budget: int | float | str | None) -> int:
    """The most float64 cells one table of the influence computation may hold."""
    return max(1, memory_budget(budget) // 8)
