"""Markov quilts for Bayesian networks: candidates, partitions and the planner (DESIGN §3.2).

A Markov quilt X_Q of X_i splits the nodes into nearby X_N (which holds X_i), the quilt and
remote X_R, with X_R ⟂ X_i | X_Q in every θ: here X_R is every node d-separated from X_i by
X_Q in the DAG of every member of the class (as large as allowed), and X_N is the rest. For a
Markov network member the test is graph separation in its undirected graph (every path from
X_i to X_R passes X_Q), which implies the independence for any factorisation
(``docs/undirected.md``).

Candidate quilts of a node, built on the skeleton (the undirected graph of all members):

* per-branch distances: the skeleton minus the node falls into branches (components); each
  branch contributes its nodes at graph distance d_j from the node, or nothing (the whole
  branch stays nearby), with d_j chosen independently per branch. On a chain this is every
  (left, right) pair of quilt nodes, so the planner matches the chain planner exactly;
* distance spheres (all nodes at distance d) and the Markov blanket;
* the empty quilt, whose remote set is every node independent of X_i;
* the caller's own candidates (``extra_quilts``: node -> iterable of quilts).

A quilt whose joint table has more than ``max_quilt_states`` cells is skipped (and counted in
the plan's evidence), never computed; so is a quilt whose influence needs an inference table
larger than the memory budget (counted apart). The per-branch product is cut at
``max_candidates``. The empty quilt needs no inference, so every node always has a plan.

:func:`plan_connected` plans by the local search of :mod:`._local_planner` (the same
candidates taken from the node's neighbourhood, influences on each quilt's region);
:func:`plan_node` is the whole-model planner it replaced, kept as the reference the tests
compare it with where both run.

Examples
--------
>>> from pufferfish_pgm.scenarios import BayesianNetworkScenario, default_model_path
>>> asia = BayesianNetworkScenario.from_file(default_model_path("asia.bif"))
>>> nearby, quilt, remote = partition(asia, "lung", ["smoke", "either"])
>>> nearby, remote     # observing the collider 'either' links 'lung' to 'tub' and 'asia'
(('asia', 'tub', 'lung'), ('bronc', 'xray', 'dysp'))
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import networkx as nx  # type: ignore[import-untyped]  # networkx ships no type hints

from .._parallel import run_map
from ..errors import InvalidParameterError, LimitExceededError
from ..scenarios import MarkovChainScenario, MarkovNetworkScenario, as_class
from ..secrets import NodeSecret, check_possible, possible_secrets
from ._influence import member_influence, ordered_pairs, quilt_table_size
from ._local_planner import ClassView, class_view, plan_node_local
from ._network_plan import NetworkPlan, collect_plan, trivial_reason
from ._plan import OtherNodes, PlanEntry, PlanLedger

__all__ = ["NetworkPlan", "candidate_quilts", "class_dags", "d_connected", "d_separated",
           "collect_plan", "network_inputs", "partition", "plan_connected", "trivial_reason"]


def _edges(member: Any) -> tuple[bool, frozenset]:
    """(directed, edges) of a member: a Markov network's graph is undirected."""
    if isinstance(member, MarkovChainScenario):
        return True, frozenset((t - 1, t) for t in range(1, member.length))
    return not isinstance(member, MarkovNetworkScenario), frozenset(member.edges())


def class_dags(scenarios: Any) -> list[nx.Graph]:
    """The distinct graphs of the class's members: DAGs (a chain is the path 0 -> 1 -> ...)
    and, for Markov networks, undirected graphs (``nx.Graph``), whose separation is plain
    graph separation (``docs/undirected.md``)."""
    cls = as_class(scenarios)
    out = []
    for directed, edges in dict.fromkeys(_edges(m) for m in cls):
        dag = nx.DiGraph() if directed else nx.Graph()
        dag.add_nodes_from(cls.nodes)
        dag.add_edges_from(sorted(edges, key=repr))
        out.append(dag)
    return out


def _reach(graph: nx.Graph, source: Any, given: set) -> set:
    """Nodes joined to ``source`` by a path of an undirected graph avoiding ``given``."""
    seen, todo = {source}, [source]
    while todo:
        for u in graph[todo.pop()]:
            if u not in seen and u not in given:
                seen.add(u)
                todo.append(u)
    return seen - {source}


def d_separated(dag: nx.Graph, x: set, y: set, z: set) -> bool:
    """networkx's d-separation test (``is_d_separator`` or, before 3.3, ``d_separated``);
    on an undirected graph, graph separation (every path from x to y meets z)."""
    if not dag.is_directed():
        z = set(z)
        return all(set(y).isdisjoint(_reach(dag, v, z)) for v in set(x) - z)
    test = getattr(nx, "is_d_separator", None) or nx.d_separated
    return bool(test(dag, set(x), set(y), set(z)))


def d_connected(dag: nx.Graph, source: Any, given: Iterable) -> set:
    """Nodes d-connected to ``source`` given ``given`` (reachability of active trails; on an
    undirected graph, of paths avoiding ``given``).

    A trail arriving at v from a child continues to v's parents and children unless v is
    observed; arriving from a parent it continues to the children unless v is observed, and
    to the parents if v is observed or has an observed descendant (a collider).

    Examples
    --------
    >>> dag = nx.DiGraph([("a", "c"), ("b", "c")])
    >>> sorted(d_connected(dag, "a", [])), sorted(d_connected(dag, "a", ["c"]))
    (['c'], ['b'])
    """
    given = set(given)
    if not dag.is_directed():   # a Markov network: separation is reachability
        return _reach(dag, source, given)
    lit, stack = set(given), list(given)
    while stack:
        for p in dag.predecessors(stack.pop()):
            if p not in lit:
                lit.add(p)
                stack.append(p)
    seen, reach, todo = set(), set(), [(source, True)]
    while todo:
        v, up = todo.pop()
        if (v, up) in seen:
            continue
        seen.add((v, up))
        if v not in given:
            reach.add(v)
            todo.extend((c, False) for c in dag.successors(v))
            if up:
                todo.extend((p, True) for p in dag.predecessors(v))
        if not up and v in lit:
            todo.extend((p, True) for p in dag.predecessors(v))
    return reach - {source}


def _split(dags: list, nodes: tuple, node: Any, quilt: frozenset) -> tuple[tuple, tuple]:
    connected = set().union(*(d_connected(d, node, quilt) for d in dags))
    nearby = tuple(v for v in nodes if v == node or (v in connected and v not in quilt))
    remote = tuple(v for v in nodes if v != node and v not in connected and v not in quilt)
    return nearby, remote


def partition(scenarios: Any, node: Any, quilt: Iterable) -> tuple[tuple, tuple, tuple]:
    """(nearby, quilt, remote) for ``quilt`` as a Markov quilt of ``node``, in model order."""
    cls = as_class(scenarios)
    node = cls.members[0].check_node(node)
    q = frozenset(cls.members[0].check_node(v) for v in quilt)
    if node in q:
        raise InvalidParameterError(f"the quilt {sorted(map(str, q))} contains node {node!r}")
    nearby, remote = _split(class_dags(cls), tuple(cls.nodes), node, q)
    return nearby, tuple(v for v in cls.nodes if v in q), remote


def _markov_blanket(dag: nx.Graph, node: Any) -> frozenset:
    if not dag.is_directed():
        return frozenset(dag[node])
    children = set(dag.successors(node))
    spouses = {p for c in children for p in dag.predecessors(c)}
    return frozenset((set(dag.predecessors(node)) | children | spouses) - {node})


def _branch_options(graph: nx.Graph, node: Any, rank: dict) -> list[list]:
    dist = nx.single_source_shortest_path_length(graph, node)
    rest = graph.subgraph(v for v in graph if v != node)
    branches = [c for c in nx.connected_components(rest) if set(graph[node]) & c]
    options = []
    for comp in sorted(branches, key=lambda c: min(rank[v] for v in c)):
        depths = sorted({dist[v] for v in comp})
        options.append([None] + [frozenset(v for v in comp if dist[v] == d) for d in depths])
    return options


def candidate_quilts(scenarios: Any, node: Any, *, max_candidates: int = 20_000,
                     extra: Iterable[Iterable] = ()) -> tuple[list[frozenset], bool]:
    """Candidate quilts of ``node`` (see the module docstring) and whether the cut applied.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> bn = MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 4).to_bayesian_network()
    >>> sorted(sorted(q) for q in candidate_quilts(bn, 1)[0])
    [[0], [0, 2], [0, 3], [2], [3]]
    """
    cls = as_class(scenarios)
    dags, rank = class_dags(cls), {v: r for r, v in enumerate(cls.nodes)}
    graph = nx.Graph()
    graph.add_nodes_from(cls.nodes)
    for dag in dags:
        graph.add_edges_from(dag.edges())
    found = dict.fromkeys(_markov_blanket(d, node) for d in dags)
    dist = nx.single_source_shortest_path_length(graph, node)
    for d in range(1, max(dist.values()) + 1):
        found[frozenset(v for v, dv in dist.items() if dv == d)] = None
    combos = itertools.product(*_branch_options(graph, node, rank))
    taken = list(itertools.islice(combos, max_candidates + 1))
    for combo in taken[:max_candidates]:
        found[frozenset().union(*(c for c in combo if c is not None))] = None
    for q in extra:
        found[frozenset(cls.members[0].check_node(v) for v in q)] = None
    found.pop(frozenset(), None)
    if any(node in q for q in found):
        raise InvalidParameterError(f"a candidate quilt of node {node!r} contains the node")
    return list(found), len(taken) > max_candidates


def _options(cls: Any, dags: list, node: Any, quilts: list, weight: Counter) -> list[tuple]:
    nodes = tuple(cls.nodes)
    rows = []
    for q in [frozenset(), *quilts]:
        nearby, remote = _split(dags, nodes, node, q)
        card = sum(weight[v] for v in nearby)
        rows.append((card, quilt_table_size(cls, q), q, nearby, remote))
    rows.sort(key=lambda r: (r[0], r[1], sorted(map(repr, r[2]))))
    return rows


def _influence(cls: Any, node: Any, quilt: frozenset, pairs: list, budget: Any) -> float | None:
    """e_Θ(quilt | node), or None when some member needs a table above the memory budget."""
    try:
        return max(0.0, max(member_influence(m, node, tuple(quilt), pairs,
                                             memory_budget=budget) for m in cls))
    except LimitExceededError:
        return None


def plan_node(cls: Any, pairs: list, node: Any, weight: Counter, epsilon: float,
              settings: dict, dags: list) -> tuple[PlanEntry, Counter, bool]:
    """The best quilt of ``node`` in ``cls`` for the ordered state ``pairs``, the candidates
    skipped (``"size"``, ``"budget"``) or evaluated (``"evaluated"``) and whether the
    candidate list was cut."""
    extra = settings["extra_quilts"].get(node, ()) if settings["extra_quilts"] else ()
    quilts, cut = candidate_quilts(cls, node, max_candidates=settings["max_candidates"],
                                   extra=extra)
    best = PlanEntry(node=node, quilt=(), nearby=tuple(cls.nodes), remote=(), influence=0.0,
                     sigma=sum(weight.values()) / epsilon, trivial=True)
    skipped: Counter = Counter()
    for card, size, q, nearby, remote in _options(cls, dags, node, quilts, weight):
        if card / epsilon >= best.sigma:
            break  # sorted by card, and σ >= card / ε for every later option
        if size > settings["max_quilt_states"]:
            skipped["size"] += 1
            continue
        skipped["evaluated"] += 1
        e = _influence(cls, node, q, pairs, settings["memory_budget"]) if q else 0.0
        if e is None:
            skipped["budget"] += 1
        elif e < epsilon and card / (epsilon - e) < best.sigma:
            best = PlanEntry(node=node, quilt=tuple(v for v in cls.nodes if v in q),
                             nearby=nearby, remote=remote, influence=e,
                             sigma=card / (epsilon - e), trivial=not q)
    return best, skipped, cut


def _node_task(task: tuple) -> tuple:
    """One secret node's plan (module level: executors run it), sent without the class's
    node tuples, which a process pool would copy into every entry: (entry with remote ∅,
    counts, cut, whether nearby is every node, the remote set's kept nodes or None)."""
    framework, node, weight, epsilon, settings, view = task
    entry, counts, cut = plan_node_local(framework.scenarios, view,
                                         ordered_pairs(framework, node), node, weight, epsilon,
                                         settings)
    everyone = entry.nearby is view.nodes
    kept = entry.remote.kept if isinstance(entry.remote, OtherNodes) else None
    return (replace(entry, nearby=() if everyone else entry.nearby, remote=()), counts, cut,
            everyone, kept)


def _received(result: tuple, view: ClassView, ledger: PlanLedger) -> tuple:
    """A :func:`_node_task` result on this process's node tuples, counted by ``ledger``."""
    entry, counts, cut, everyone, kept = result
    ledger.admit(entry.node, 0 if everyone else len(entry.nearby), len(entry.quilt))
    return replace(entry, nearby=view.nodes if everyone else entry.nearby,
                   remote=() if kept is None else OtherNodes(view.nodes, view.universe, kept)
                   ), counts, cut


def network_inputs(framework: Any, query: Any, settings: dict) -> Counter:
    """Check a network framework for MQM and return the query's weight per node.

    An impossible secret (joint ones too) is refused first, as compile_secrets would; joint
    secrets are refused (MQM protects single-node secrets). ``settings`` is checked only for
    its keys (``max_quilt_states``, ``extra_quilts``, ``max_candidates``, ``memory_budget``,
    ``max_region``, ``max_cells``, ``progress``, ``shortcut``, ``ledger``: the plan's
    :class:`~pufferfish_pgm.quilts._plan.PlanLedger` or None).
    """
    check_possible(framework.pairs, possible_secrets(framework))
    if any(not isinstance(s, NodeSecret) for p in framework.pairs for s in (p.first, p.second)):
        raise InvalidParameterError(
            "the Markov quilt mechanism protects single-node secrets; the framework has a joint "
            "secret pair (use the exact or Wasserstein mechanism for joint secrets)")
    assert set(settings) == {"max_quilt_states", "extra_quilts", "max_candidates",
                             "memory_budget", "max_region", "max_cells", "progress",
                             "shortcut", "ledger"}
    return Counter(query.node_list(framework.scenarios))  # a node listed twice counts twice


def plan_connected(framework: Any, weight: Counter, epsilon: float, settings: dict,
                   executor: Any = None) -> NetworkPlan:
    """The best quilt of every secret node by the local search
    (:func:`~pufferfish_pgm.quilts._local_planner.plan_node_local`), the class planned as
    one network (:func:`~pufferfish_pgm.quilts.plan_network` splits independent Bayesian
    network components first). ``settings["progress"]`` (a Ticker) counts one step per node.

    Serially, nodes are planned by decreasing degree; with ``settings["shortcut"]`` a node's
    search stops once its σ is at most the largest σ of the nodes planned before it
    (σ_max is unchanged; see
    :func:`~pufferfish_pgm.quilts._local_planner.plan_node_local`).
    """
    view = class_view(framework.scenarios)
    steps = settings["progress"]
    nodes = framework.secret_nodes
    steps.plan(len(nodes))
    if executor is not None:
        light = {**settings, "ledger": None}   # the entries are counted here, as they come
        tasks = [(framework, node, weight, epsilon, light, view) for node in nodes]
        done = [_ticked(_received(r, view, settings["ledger"]), steps)
                for r in run_map(_node_task, tasks, executor)]
        return collect_plan(zip(nodes, done, strict=True))
    results: dict = {}
    most = 0.0    # the largest σ a node planned so far needs: enough for the others
    for node in sorted(nodes, key=lambda v: -len(view.skeleton[v])):
        results[node] = _ticked(plan_node_local(
            framework.scenarios, view, ordered_pairs(framework, node), node, weight, epsilon,
            settings, enough=most), steps)
        if settings["shortcut"]:
            most = max(most, results[node][0].sigma)
    return collect_plan((node, results[node]) for node in nodes)


def _ticked(result: tuple, steps: Any) -> tuple:
    steps.tick()
    return result
