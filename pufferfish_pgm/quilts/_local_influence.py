"""Max-influence of a quilt computed on the quilt's own region (``docs/undirected.md``).

Write a member θ as a product of factors (a Bayesian network's CPTs, restricted to the
ancestral set ``A = An(Q ∪ {i})``, which is all ``P(x_Q, x_i)`` needs; a Markov network's
factors). Let ``C`` be the component of ``X_i`` in the interaction graph (the moral graph of
``A``) minus ``X_Q``: every factor lies in ``C ∪ Q`` or outside ``C``, so
``P(x_Q, X_i = s) = G_s(x_Q) · H(x_Q)`` with ``G_s`` the sum over ``C − {i}`` of the factors
touching ``C``, and ``H`` not depending on ``s``. Hence, for a pair ``(a, b)``::

    log P(x_Q | a) / P(x_Q | b) = log G_a(x_Q) / G_b(x_Q) + log P(b) / P(a)

and ``log P(b)/P(a) = log Σ G_b H / Σ G_a H <= max_x log G_b(x)/G_a(x)``, for this quilt and
for any other set ``Q'`` (the *prior term* bound). With ``Q' = ∅`` (``C`` the whole
component, or ``An(i)``) it is the exact ``log P(b)/P(a)``. So ``G`` over a region gives the
exact influence when the prior term is exact, and a proven upper bound otherwise.

Every computation's size is decided before it runs: the region's node count
(``max_region``) and the largest table of a greedy elimination order (``max_cells``).

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> bn = MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], [0.5, 0.5], 4).to_bayesian_network()
>>> view = local_view(bn)
>>> sorted(region(view, 1, frozenset({2}), 10))     # X_3 is barren given X_2: dropped
[0, 1]
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._tolerances import RELATIVE
from ..scenarios import MarkovNetworkScenario

__all__ = ["LocalView", "Ratios", "elimination_order", "local_ratios", "local_view", "region"]


@dataclass(frozen=True, eq=False)
class LocalView:
    """One member as factors, with its interaction graph (and, for a Bayesian network, the
    parents, children and each node's ancestors as a bit set over ``position``)."""

    directed: bool
    position: dict
    dims: dict
    scopes: tuple
    tables: tuple
    factors_of: dict          # node -> ids of the factors whose scope holds it
    neighbours: dict          # node -> neighbours (Markov network: its graph)
    parents: dict
    children: dict
    ancestors: tuple          # per position, an int whose bit p marks the node at p
    attractive: bool = False  # binary, positive, log-supermodular factors (is_attractive)


def local_view(member: Any) -> LocalView:
    """The :class:`LocalView` of a Bayesian or Markov network scenario."""
    t = member.tables
    nodes = tuple(t.nodes)
    position = {v: p for p, v in enumerate(nodes)}
    dims = {v: len(t.states[v]) for v in nodes}
    directed = not isinstance(member, MarkovNetworkScenario)
    if directed:
        scopes = tuple((v, *t.parents[v]) for v in nodes)
        tables = tuple(t.cpts[v] for v in nodes)
        parents, children, anc = _family_links(nodes, t.parents, position)
    else:
        scopes, tables = tuple(t.scopes), tuple(t.values)
        parents, children, anc = {}, {}, ()
    factors_of, neighbours = _interaction_graph(nodes, scopes, position)
    return LocalView(directed=directed, position=position,
                     attractive=is_attractive(dims, scopes, tables),
                     dims=dims, scopes=scopes, tables=tables, factors_of=factors_of,
                     neighbours=neighbours, parents=parents, children=children, ancestors=anc)


def _family_links(nodes: tuple, parents_of: Any,
                  position: dict) -> tuple[dict, dict, tuple]:
    """A Bayesian network's parents and children of each node, and each node's ancestors
    (itself included) as a bit set over ``position`` (``nodes`` in topological order)."""
    parents = {v: tuple(parents_of[v]) for v in nodes}
    kids: dict = {v: [] for v in nodes}
    for v in nodes:
        for p in dict.fromkeys(parents[v]):
            kids[p].append(v)
    children = {v: tuple(k) for v, k in kids.items()}
    bits: list[int] = [0] * len(nodes)
    for v in nodes:          # topological order: parents first
        b = 1 << position[v]
        for p in parents[v]:
            b |= bits[position[p]]
        bits[position[v]] = b
    return parents, children, tuple(bits)


def _interaction_graph(nodes: tuple, scopes: tuple, position: dict) -> tuple[dict, dict]:
    """The ids of the factors holding each node, and each node's neighbours in the
    interaction graph (two nodes in one factor's scope), in ``position`` order."""
    factors_of: dict = {v: [] for v in nodes}
    near: dict = {v: set() for v in nodes}
    for j, scope in enumerate(scopes):
        for v in scope:
            factors_of[v].append(j)
            near[v].update(u for u in scope if u != v)
    return ({v: tuple(f) for v, f in factors_of.items()},
            {v: tuple(sorted(n, key=position.__getitem__)) for v, n in near.items()})


def is_attractive(dims: dict, scopes: Sequence, tables: Sequence) -> bool:
    """Every node binary, every factor positive and log-supermodular in each pair of its
    axes (``φ(.., 1, .., 1, ..) φ(.., 0, .., 0, ..) >= φ(.., 1, .., 0, ..) φ(.., 0, .., 1, ..)``
    for every value of the other axes): then ``P(X_i = 1 | x_Q)`` is nondecreasing in
    ``x_Q`` (Holley's inequality; ``docs/undirected.md``).

    Examples
    --------
    >>> is_attractive({"a": 2, "b": 2}, [("a", "b")], [np.array([[2.0, 1.0], [1.0, 2.0]])])
    True
    >>> is_attractive({"a": 2, "b": 2}, [("a", "b")], [np.array([[1.0, 2.0], [2.0, 1.0]])])
    False
    """
    if any(d != 2 for d in dims.values()):
        return False
    by_shape: dict[tuple, list] = {}
    for table in tables:
        by_shape.setdefault(np.shape(table), []).append(table)
    for shape, group in by_shape.items():
        stack = np.asarray(group, dtype=float)      # (factors, 2, 2, ...)
        if not np.all(stack > 0):
            return False
        log = np.log(stack)
        for i, j in itertools.combinations(range(1, len(shape) + 1), 2):
            one = np.moveaxis(log, (i, j), (1, 2))
            if np.any(one[:, 1, 1] + one[:, 0, 0] < one[:, 1, 0] + one[:, 0, 1] - RELATIVE):
                return False
    return True


def _moral_step(view: LocalView, v: Hashable, mask: int) -> Iterable:
    """Neighbours of ``v`` in the moral graph of the ancestral set ``mask`` (bits)."""
    yield from view.parents[v]
    for c in view.children[v]:
        if mask >> view.position[c] & 1:
            yield c
            yield from view.parents[c]


def region(view: LocalView, node: Hashable, quilt: frozenset, cap: int) -> frozenset | None:
    """``C``: the component of ``node`` in the interaction graph (for a Bayesian network, the
    moral graph of ``An(quilt ∪ {node})``) minus ``quilt``; None when it has more than
    ``cap`` nodes (the search stops there)."""
    if view.directed:
        mask = view.ancestors[view.position[node]]
        for q in quilt:
            mask |= view.ancestors[view.position[q]]
    seen, todo = {node}, [node]
    while todo:
        v = todo.pop()
        step = _moral_step(view, v, mask) if view.directed else view.neighbours[v]
        for u in step:
            if u not in seen and u not in quilt:
                seen.add(u)
                if len(seen) > cap:
                    return None
                todo.append(u)
    return frozenset(seen)


def _region_factors(view: LocalView, part: frozenset, quilt: frozenset) -> list[int]:
    """The factors touching ``part`` and those inside the quilt (for a Bayesian network:
    the CPTs of ``part`` and of the quilt nodes whose parents lie in ``part ∪ quilt``); all
    lie in ``part ∪ quilt``. A factor over the quilt alone multiplies ``G_a`` and ``G_b``
    alike; it is kept so that the quilt values it rules out are left out of the maximum."""
    if not view.directed:
        inside = part | quilt
        near = {j for v in part for j in view.factors_of[v]}
        near |= {j for q in quilt for j in view.factors_of[q]
                 if inside.issuperset(view.scopes[j])}
        return sorted(near)
    out = [view.position[v] for v in part]
    out += [view.position[q] for q in quilt
            if (part | quilt).issuperset(view.parents[q])]
    return sorted(out)


def elimination_order(scopes: Sequence[Sequence], keep: Iterable, dims: dict,
                      cap: int) -> tuple[list, int] | None:
    """A greedy order (smallest new table first) summing out every variable of ``scopes``
    not in ``keep``, and its largest table in cells (the kept table included); None as soon
    as a step would build a table of more than ``cap`` cells.

    Examples
    --------
    >>> elimination_order([("a", "b"), ("b", "c")], ["c"], {"a": 2, "b": 2, "c": 2}, 8)
    (['a', 'b'], 2)
    >>> elimination_order([("h", f"l{k}") for k in range(5)], [f"l{k}" for k in range(5)],
    ...                   dict.fromkeys(["h"] + [f"l{k}" for k in range(5)], 2), 16) is None
    True
    """
    keep = set(keep)
    graph: dict = {}
    for scope in scopes:
        for a in scope:
            graph.setdefault(a, set()).update(b for b in scope if b != a)
    peak = math.prod(dims[v] for v in keep if v in graph)
    if peak > cap:
        return None
    def cells(u: Hashable) -> tuple:
        return math.prod(dims[x] for x in graph[u]), str(u)

    heap = [(*cells(v), v) for v in graph if v not in keep]
    heapq.heapify(heap)
    order: list = []
    while heap:
        size, name, v = heapq.heappop(heap)
        if v not in graph or (size, name) != cells(v):
            continue    # eliminated already, or a stale score
        if size > cap:
            return None
        peak = max(peak, size)
        nb = graph.pop(v)
        for x in nb:
            graph[x].discard(v)
            graph[x].update(y for y in nb if y != x)
        for x in nb:
            if x not in keep:
                heapq.heappush(heap, (*cells(x), x))
        order.append(v)
    return order, peak


def _eliminate(factors: list[tuple[tuple, np.ndarray]], order: list,
               keep: tuple) -> np.ndarray:
    """log of Σ over ``order`` of the product of ``factors``, as a table over ``keep``;
    each intermediate table is rescaled by its maximum (no underflow)."""
    offset, fresh = 0.0, itertools.count(len(factors))
    live = dict(enumerate(factors))
    using: dict = {}
    for k, (scope, _) in live.items():
        for a in scope:
            using.setdefault(a, set()).add(k)
    for x in order:
        touching = [live.pop(k) for k in sorted(using.pop(x, ()))]
        out = tuple(dict.fromkeys(a for s, _ in touching for a in s if a != x))
        table = _product(touching, out)
        top = float(table.max())
        if top <= 0:
            return np.full([1] * len(keep), -np.inf)
        offset += math.log(top)
        k = next(fresh)
        live[k] = (out, table / top)
        for a in out:
            using[a] = {j for j in using[a] if j in live} | {k}
    with np.errstate(divide="ignore"):
        return np.log(_product(list(live.values()), keep)) + offset


def _product(factors: list[tuple[tuple, np.ndarray]], out: tuple) -> np.ndarray:
    """The product of ``factors`` summed onto ``out`` (einsum, folded in groups: einsum
    takes a bounded number of operands)."""
    factors = list(factors)
    while len(factors) > _GROUP:
        head, factors = factors[:_GROUP], factors[_GROUP:]
        scope = tuple(dict.fromkeys(a for s, _ in head for a in s))
        factors.append((scope, _product(head, scope)))
    ids = {a: n for n, a in enumerate(dict.fromkeys([*out, *(a for s, _ in factors
                                                              for a in s)]))}
    operands: list[Any] = [x for s, t in factors for x in (t, [ids[a] for a in s])]
    if not operands:
        return np.ones([1] * len(out))
    return np.einsum(*operands, [ids[a] for a in out])


#: Operands of one einsum call (numpy allows a few dozen).
_GROUP = 16


def _log_top(num: np.ndarray, den: np.ndarray) -> float:
    """max over cells of log(num/den) from logs, with :func:`log_ratio`'s conventions
    (+inf where only the denominator is zero, cells where the numerator is zero ignored)."""
    num, den = np.broadcast_arrays(num, den)
    with np.errstate(invalid="ignore"):
        diff = np.where(np.isfinite(num), np.where(np.isfinite(den), num - den, np.inf),
                        -np.inf)
    return float(diff.max())


@dataclass(frozen=True)
class Ratios:
    """``G``'s ratios for one member, node and quilt: ``top[(a, b)] = max_x log G_a/G_b``
    over the quilt values, ``possible[s]`` whether ``G_s`` is not all zero (when it is,
    ``P(X_i = s) = 0``), and the region's node count."""

    top: dict
    possible: dict
    size: int


def local_ratios(view: LocalView, node: Hashable, quilt: frozenset, states: Sequence[int],
                 *, max_region: int, max_cells: int,
                 memo: dict | None = None) -> Ratios | str:
    """:class:`Ratios` of ``quilt`` for ``node``'s ``states`` (indices), or why it was not
    computed: ``"region"`` (more than ``max_region`` nodes) or ``"budget"`` (an elimination
    table above ``max_cells``), decided before any table is built. ``memo`` keeps the
    regions already searched for this node and view (key: the quilt)."""
    memo = {} if memo is None else memo
    if quilt not in memo:
        memo[quilt] = region(view, node, quilt, max_region)
    part = memo[quilt]
    if part is None:
        return "region"
    fids = _region_factors(view, part, quilt)
    scopes = [tuple(a for a in view.scopes[j] if a != node) for j in fids]
    if view.attractive and sorted(states) == [0, 1]:
        return _monotone_ratios(view, node, quilt, fids, max_cells, len(part))
    keep = tuple(sorted({a for s in scopes for a in s if a in quilt},
                        key=view.position.__getitem__))
    plan = elimination_order(scopes, keep, view.dims, max_cells)
    if plan is None:
        return "budget"
    logs = {s: _eliminate(_sliced(view, fids, {node: s}), plan[0], keep) for s in states}
    top = {(a, b): _log_top(logs[a], logs[b]) for a in states for b in states if a != b}
    possible = {s: bool(np.isfinite(logs[s]).any()) for s in states}
    return Ratios(top=top, possible=possible, size=len(part))


def _sliced(view: LocalView, fids: list[int], codes: dict) -> list[tuple[tuple, np.ndarray]]:
    """The factors ``fids`` with the nodes of ``codes`` fixed to their state indices."""
    out = []
    for j in fids:
        scope, table = view.scopes[j], view.tables[j]
        index = tuple(codes.get(a, slice(None)) for a in scope)
        out.append((tuple(a for a in scope if a not in codes), table[index]))
    return out


def _monotone_ratios(view: LocalView, node: Hashable, quilt: frozenset, fids: list[int],
                     max_cells: int, size: int) -> Ratios | str:
    """:class:`Ratios` of an attractive binary member: the odds ``G_1/G_0`` are
    nondecreasing in ``x_Q``, so their extremes sit at ``x_Q`` all 0 and all 1 (two
    eliminations with the quilt observed, no table over the quilt)."""
    inner = [tuple(a for a in view.scopes[j] if a not in quilt) for j in fids]
    plan = elimination_order(inner, (node,), view.dims, max_cells)
    if plan is None:
        return "budget"
    odds = []
    for level in (0, 1):
        both = _eliminate(_sliced(view, fids, dict.fromkeys(quilt, level)), plan[0], (node,))
        odds.append(float(both[1] - both[0]))
    top = {(1, 0): odds[1], (0, 1): -odds[0]}
    return Ratios(top=top, possible={0: True, 1: True}, size=size)
