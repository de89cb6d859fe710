"""The local quilt search of a network's secret node (issue 24 item 2; DESIGN §3.2).

Per secret node X_i, everything happens in X_i's neighbourhood, so the work per node is
bounded by ``max_region`` and the memory budget, not by the network's size:

1. *Candidates*: distance spheres of the union skeleton up to the largest radius whose ball
   has at most ``max_region`` nodes, per-branch distances (branches of the ball minus X_i,
   for at most :data:`MAX_BRANCHES` branches, cut at ``max_candidates``), each member's
   Markov blanket, the caller's quilts, and ∅.
2. *Nearby sets*: reachability (d-connection given the quilt in a Bayesian network member,
   graph separation in a Markov network member), stopped past ``max_region`` nodes (the
   candidate is then skipped, reason ``"region"``).
3. *Influence*: :mod:`._local_influence` on the quilt's region. The prior term
   ``log P(b)/P(a)`` is exact when the region of ∅ (X_i's component, or ``An(X_i)``) fits;
   otherwise it is bounded by the best separator computed for the node (distance spheres
   first), which keeps every influence a proven upper bound (``docs/undirected.md``).
   Candidates whose elimination needs a table above the memory budget are skipped
   (``"budget"``) before anything is built.

4. *Entry*: the chosen quilt's node sets are built once, after the plan's
   :class:`~pufferfish_pgm.quilts._plan.PlanLedger` (``settings["ledger"]``) has counted
   their bytes against the memory budget (the plan holds one entry per secret node).

Candidates are tried by increasing nearby count; σ only decreases as the prior bound
tightens, so the usual stop (``card / ε >= best σ``) stays exact.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import Counter
from collections.abc import Hashable, Iterator
from typing import Any

from ..errors import InvalidParameterError
from ..inference._engine import connected_parts
from ._influence import quilt_table_size
from ._local_influence import LocalView, Ratios, local_ratios, region
from ._plan import OtherNodes, PlanEntry, PlanLedger

__all__ = ["ClassView", "class_view", "local_candidates", "nearby_set", "plan_node_local"]


class ClassView:
    """The members' :class:`LocalView` (one per distinct table object), the union skeleton
    and the node order of a class, built once per plan."""

    def __init__(self, cls: Any, views: list[LocalView]) -> None:
        self.nodes = tuple(cls.nodes)
        self.universe = frozenset(self.nodes)    # shared by every entry's remote set
        self.views = views
        skeleton: dict = {v: set() for v in self.nodes}
        for view in views:
            if view.directed:
                for v, ps in view.parents.items():
                    for p in ps:
                        skeleton[v].add(p)
                        skeleton[p].add(v)
            else:
                for v, near in view.neighbours.items():
                    skeleton[v].update(near)
        self.skeleton = skeleton
        #: every member attractive (:func:`is_attractive`): no table over a quilt is built
        self.monotone = all(view.attractive for view in views)
        #: every member has the same graph (Bayesian networks: the same parents)
        first = views[0]
        self.same_graph = all(v.directed == first.directed and v.neighbours == first.neighbours
                              and v.parents == first.parents for v in views)
        self._part_size = _component_sizes(skeleton)

    def own_region(self, node: Hashable) -> int:
        """The most nodes of ``node``'s region for the empty quilt in any member (its
        component; a Bayesian network member: its ancestors)."""
        return max(view.ancestors[view.position[node]].bit_count() if view.directed
                   else self._part_size[node] for view in self.views)


def _component_sizes(graph: dict) -> dict:
    """Each node's component size in ``graph`` (node -> neighbours)."""
    return {v: len(part) for v, part in connected_parts(graph, tuple(graph)).items()}


def class_view(cls: Any) -> ClassView:
    """The :class:`ClassView` of a network class (members sharing tables share a view)."""
    from ._local_influence import local_view

    made: dict[int, LocalView] = {}
    views = []
    for m in cls:
        key = id(m.tables)
        if key not in made:
            made[key] = local_view(m)
        views.append(made[key])
    return ClassView(cls, list(dict.fromkeys(views)))


def _dsep_reach(view: LocalView, node: Hashable, quilt: frozenset, cap: int) -> set | None:
    """Nodes d-connected to ``node`` given ``quilt`` (Bayes-ball), None past ``cap``."""
    lit = 0
    for q in quilt:
        lit |= view.ancestors[view.position[q]]
    seen, reach, todo = set(), set(), [(node, True)]
    while todo:
        v, up = todo.pop()
        if (v, up) in seen:
            continue
        seen.add((v, up))
        if v not in quilt:
            reach.add(v)
            if len(reach) > cap:
                return None
            todo.extend((c, False) for c in view.children[v])
            if up:
                todo.extend((p, True) for p in view.parents[v])
        if not up and lit >> view.position[v] & 1:
            todo.extend((p, True) for p in view.parents[v])
    return reach


def nearby_set(cv: ClassView, node: Hashable, quilt: frozenset, cap: int,
               memos: list[dict] | None = None) -> tuple | None:
    """X_N of ``quilt`` (model order): ``node`` and every non-quilt node connected to it in
    some member; None when it has more than ``cap`` nodes. ``memos`` (one dict per view)
    keeps a Markov network member's regions for :func:`local_ratios`."""
    near: set = {node}
    for k, view in enumerate(cv.views):
        if view.directed:
            part = _dsep_reach(view, node, quilt, cap)
        else:
            memo = {} if memos is None else memos[k]
            if quilt not in memo:
                memo[quilt] = region(view, node, quilt, cap)
            part = memo[quilt]
        if part is None:
            return None
        near |= part
        if len(near) > cap:
            return None
    return tuple(sorted(near, key=cv.views[0].position.__getitem__))


def _blanket(view: LocalView, node: Hashable) -> frozenset:
    if not view.directed:
        return frozenset(view.neighbours[node])
    kids = view.children[node]
    spouses = {p for c in kids for p in view.parents[c]}
    return frozenset((set(view.parents[node]) | set(kids) | spouses) - {node})


def _ball(cv: ClassView, node: Hashable, cap: int) -> dict:
    """Distances from ``node`` in the skeleton, for whole spheres while the ball has at most
    ``cap`` nodes (plus the first sphere past it, so that its quilt is a candidate)."""
    dist, frontier = {node: 0}, [node]
    while frontier and len(dist) <= cap:
        nxt = []
        for v in frontier:
            for u in cv.skeleton[v]:
                if u not in dist:
                    dist[u] = dist[v] + 1
                    nxt.append(u)
        frontier = nxt
    return dist


def _branch_options(cv: ClassView, node: Hashable, dist: dict) -> list[list]:
    """Per branch of (ball − node): None or the branch's nodes at each distance."""
    inner = set(dist) - {node}
    rank = cv.views[0].position
    branches, seen = [], set()
    for start in sorted(cv.skeleton[node], key=rank.__getitem__):
        if start in seen:
            continue
        comp, todo = {start}, [start]
        while todo:
            for u in cv.skeleton[todo.pop()]:
                if u in inner and u not in comp:
                    comp.add(u)
                    todo.append(u)
        seen |= comp
        branches.append(comp)
    options = []
    for comp in branches:
        depths = sorted({dist[v] for v in comp})
        options.append([None] + [frozenset(v for v in comp if dist[v] == d) for d in depths])
    return options


def local_candidates(cv: ClassView, node: Hashable, *, max_region: int, max_candidates: int,
                     extra: Any = ()) -> tuple[list[frozenset], bool]:
    """The candidate quilts of ``node`` (module docstring) and whether the cut applied."""
    found: dict = dict.fromkeys(_blanket(v, node) for v in cv.views)
    dist = _ball(cv, node, max_region)
    for d in range(1, max(dist.values()) + 1):
        found[frozenset(v for v, dv in dist.items() if dv == d)] = None
    options = _branch_options(cv, node, dist)
    cut = len(options) > MAX_BRANCHES
    if not cut:
        combos = itertools.product(*options)
        taken = list(itertools.islice(combos, max_candidates + 1))
        cut = len(taken) > max_candidates
        for combo in taken[:max_candidates]:
            found[frozenset().union(*(c for c in combo if c is not None))] = None
    for q in extra:
        found[frozenset(q)] = None
    found[frozenset()] = None     # influence 0: its nearby set is X_i's component
    return list(found), cut


#: Per-branch distances are combined only for nodes with at most this many branches (a
#: chain has 2); past it the spheres stand for them and the node is listed as cut.
MAX_BRANCHES = 4


class _NodeInfluence:
    """The ratios computed for one node, per view, and the prior-term bound they give."""

    def __init__(self, cv: ClassView, node: Hashable, pairs: list, caps: dict) -> None:
        self.cv, self.node, self.pairs, self.caps = cv, node, pairs, caps
        self.states = sorted({s for p in pairs for s in p})
        self.prior = [dict.fromkeys(pairs, math.inf) for _ in cv.views]
        self.possible = [dict.fromkeys(self.states, True) for _ in cv.views]
        self.exact = [False] * len(cv.views)
        #: regions searched, per view (views with one graph share the dict)
        shared: dict = {}
        self.memos = [shared if cv.same_graph else {} for _ in cv.views]

    def ratios(self, quilt: frozenset) -> list[Ratios] | str:
        """Every view's ratios for ``quilt`` (tightening the prior bound), or the reason
        (``"region"`` / ``"budget"``) why one could not be computed."""
        out = []
        for k, view in enumerate(self.cv.views):
            r = local_ratios(view, self.node, quilt, self.states, **self.caps,
                             memo=self.memos[k])
            if isinstance(r, str):
                return r
            out.append(r)
            for a, b in self.pairs:
                self.prior[k][(a, b)] = min(self.prior[k][(a, b)], r.top[(b, a)])
            for s, ok in r.possible.items():
                self.possible[k][s] = self.possible[k][s] and ok
            self.exact[k] = self.exact[k] or not quilt
        return out

    def influence(self, rows: list[Ratios]) -> float:
        """e_Θ from one quilt's ratios and the current prior bounds (exact when the prior
        term of every view is)."""
        best = 0.0
        for k, r in enumerate(rows):
            ok = self.possible[k]
            for a, b in self.pairs:
                if ok[a] and ok[b]:
                    best = max(best, r.top[(a, b)] + self.prior[k][(a, b)])
        return best


def plan_node_local(cls: Any, cv: ClassView, pairs: list, node: Any, weight: Counter,
                    epsilon: float, settings: dict, enough: float = 0.0
                    ) -> tuple[PlanEntry, Counter, bool]:
    """The best quilt of ``node`` by the local search, the candidates skipped by reason
    (``"size"``, ``"budget"``, ``"region"``) or evaluated (``"bounded"``: the chosen quilt's
    influence is a proven upper bound, not the exact value), and whether the list was cut.

    ``enough``: the search stops (``"enough"``) as soon as σ is at most this, the largest σ
    another node already needs: σ_max, hence the scale, is the same, and the node's σ is
    still valid (an upper bound of its optimum)."""
    cap = settings["max_region"]
    extra = _extra_quilts(cls, settings, node)
    total = sum(weight.values())
    trivial = PlanEntry(node=node, quilt=(), nearby=cv.nodes, remote=(), influence=0.0,
                        sigma=total / epsilon, trivial=True)
    counts: Counter = Counter()
    ledger = settings.get("ledger")
    if not pairs:
        return _admitted(trivial, ledger), counts, False
    if trivial.sigma <= enough:
        counts["enough"] += 1
        return _admitted(trivial, ledger), counts, False
    quilts, cut = local_candidates(cv, node, max_region=cap,
                                   max_candidates=settings["max_candidates"], extra=extra)
    inf = _NodeInfluence(cv, node, pairs, {"max_region": cap, "max_cells": settings["max_cells"]})
    if cv.own_region(node) <= cap:
        inf.ratios(frozenset())   # the exact prior term: X_i's own region fits
    ranked = _by_card(cv, node, quilts, weight, cap, counts, inf.memos)
    kept = _evaluated(cls, cv, ranked, inf, counts, epsilon, settings, trivial.sigma, enough)
    entry = _choose(cv, node, kept, inf, epsilon, trivial, ledger)
    if not entry.trivial and not all(inf.exact):
        counts["bounded"] += 1    # the prior term over the quilt's region: an upper bound
    return entry, counts, cut


def _extra_quilts(cls: Any, settings: dict, node: Hashable) -> list[frozenset]:
    """The user's extra candidate quilts of ``node`` (``extra_quilts=``), checked."""
    given = settings["extra_quilts"].get(node, ()) if settings["extra_quilts"] else ()
    extra = [frozenset(cls.members[0].check_node(v) for v in q) for q in given]
    if any(node in q for q in extra):
        raise InvalidParameterError(f"a candidate quilt of node {node!r} contains the node")
    return extra


def _evaluated(cls: Any, cv: ClassView, ranked: Iterator, inf: _NodeInfluence, counts: Counter,
               epsilon: float, settings: dict, best_sigma: float, enough: float) -> list[tuple]:
    """The candidates evaluated, ``(card, quilt, nearby, rows)``, by increasing nearby count
    until none can beat the best σ so far (or it is at most ``enough``); skips counted."""
    kept = []
    for card, q, nearby in ranked:
        if card / epsilon >= best_sigma:
            break
        if best_sigma <= enough:
            counts["enough"] += 1
            break
        if quilt_table_size(cls, q) > settings["max_quilt_states"] and not cv.monotone:
            counts["size"] += 1
            continue
        counts["evaluated"] += 1
        rows = inf.ratios(q) if q else None
        if isinstance(rows, str):
            counts[rows] += 1
            continue
        kept.append((card, q, nearby, rows))
        e = inf.influence(rows) if rows is not None else 0.0
        if e < epsilon:
            best_sigma = min(best_sigma, card / (epsilon - e))
    return kept


def _by_card(cv: ClassView, node: Hashable, quilts: list, weight: Counter, cap: int,
             counts: Counter, memos: list[dict]) -> Iterator[tuple[int, frozenset, tuple]]:
    """(nearby count, quilt, nearby set) of the candidates by increasing count (ties: the
    smaller quilt table, then the quilt's names), each nearby set searched only when every
    candidate before it is known to be smaller (a lower bound of the count, from the
    quilt's distance to the node, orders the searches)."""
    lower = _lower_bounds(cv, node, weight, cap)
    heap = [(lower(q), 0, _tie(cv, q), k) for k, q in enumerate(quilts)]
    heapq.heapify(heap)
    nearby_of: dict[int, tuple] = {}
    while heap:
        card, done, _, k = heapq.heappop(heap)
        if done:
            yield card, quilts[k], nearby_of.pop(k)
            continue
        nearby = nearby_set(cv, node, quilts[k], cap, memos)
        if nearby is None:
            counts["region"] += 1 if quilts[k] else 0    # ∅: a component past the cap
            continue
        nearby_of[k] = nearby
        heapq.heappush(heap, (sum(weight[v] for v in nearby), 1, _tie(cv, quilts[k]), k))


def _tie(cv: ClassView, quilt: frozenset) -> tuple:
    return len(quilt), sorted(map(repr, quilt))


def _lower_bounds(cv: ClassView, node: Hashable, weight: Counter, cap: int) -> Any:
    """quilt -> a lower bound of its nearby count: every node closer than the quilt's
    nearest node is nearby in a Markov network (a Bayesian network: the parents and
    children), when every member has the same graph; else the node's own weight."""
    dist = _ball(cv, node, cap)
    top = max(dist.values())
    level = [0] * (top + 2)
    for v, d in dist.items():
        level[d] += weight[v]
    cum = list(itertools.accumulate(level))
    if not cv.same_graph:
        return lambda q: weight[node]
    reach = 1 if cv.views[0].directed else top + 1

    def bound(q: frozenset) -> int:
        near = min((dist.get(v, top + 1) for v in q), default=top + 1)
        return cum[max(0, min(near - 1, reach))]

    return bound


def _choose(cv: ClassView, node: Hashable, kept: list, inf: _NodeInfluence, epsilon: float,
            trivial: PlanEntry, ledger: PlanLedger | None = None) -> PlanEntry:
    """The best of the evaluated candidates with the final (tightest) prior bounds; its node
    sets are built once, after ``ledger`` (the plan's bytes so far) has admitted their size."""
    best, sigma, influence = None, trivial.sigma, 0.0
    for card, q, nearby, rows in kept:
        e = inf.influence(rows) if rows is not None else 0.0
        if e < epsilon and card / (epsilon - e) < sigma:
            best, sigma, influence = (q, nearby), card / (epsilon - e), e
    if best is None:
        return _admitted(trivial, ledger)
    q, nearby = best
    if ledger is not None:
        ledger.admit(node, len(nearby), len(q))
    quilt = tuple(sorted(q, key=cv.views[0].position.__getitem__))
    return PlanEntry(node=node, quilt=quilt, nearby=nearby,
                     remote=OtherNodes(cv.nodes, cv.universe, frozenset(nearby + quilt)),
                     influence=influence, sigma=sigma, trivial=not q)


def _admitted(trivial: PlanEntry, ledger: PlanLedger | None) -> PlanEntry:
    """The trivial entry (it shares the class's node tuple), counted by ``ledger``."""
    if ledger is not None:
        ledger.admit(trivial.node, 0, 0)
    return trivial
