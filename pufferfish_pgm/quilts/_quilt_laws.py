"""Exact count laws of the nearby block of a chain Markov quilt (``docs/exact-quilt.md``).

For a secret node X_i, a quilt X_Q and a value x_Q of it, the exact quilt mechanism needs the
law of the nearby part ``F_N = Σ_{t ∈ N} w(X_t)`` given ``(x_Q, X_i = s)`` and the log ratio
``log P(x_Q | s) / P(x_Q | s')``. On a chain with transition P and integer weights w >= 0:

* bridges ``G_a[u, v, c] = log P(Σ_{t=1}^{a-1} w(X_t) = c, X_a = v | X_0 = u)``, one table per
  distance a, shared by every node (the chain is time-homogeneous);
* starts ``H_i[s, c] = log P(X_i = s, Σ_{t<i} w(X_t) = c)`` (fixed initial law only) and ends
  ``K_d[s, c] = log P(Σ_{t=1}^{d} w(X_t) = c | X_0 = s)``.

A two-sided quilt {X_{i-a} = u, X_{i+b} = v} has nearby law ``G_a[u,s] ⊛ δ_{w(s)} ⊛ G_b[s,v]``
(normalised): past and future of X_i are independent given X_i. One-sided quilts use H_i or
K_d for the open side, the empty quilt both. Every table is a logarithm and every convolution
is exact to relative precision, never FFT, because the loss of a Laplace release is often
decided in the far tails. Every step and convolution is the one count-law engine's
(:mod:`pufferfish_pgm.queries._count_engine`): a step is ``step(count_lift(w)(g, 0), P)``,
the shift of each state's row by its weight followed by the scaled matrix product.

Examples
--------
>>> p = np.array([[0.9, 0.1], [0.2, 0.8]])
>>> laws = ChainQuiltLaws([ChainBridges(p, np.array([2 / 3, 1 / 3]), np.array([0, 1]))],
...                       np.array([[0, 1], [1, 0]]))
>>> rows = laws.rows(("two", 1, 2))      # quilt {X_{i-1}, X_{i+2}}: nearby {X_i, X_{i+1}}
>>> rows.grid.tolist(), rows.table().shape[1]
([0.0, 1.0, 2.0], 3)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..distributions._engine import logsumexp
from ..queries._engine import ChainCountTables, ChainSteps, batch_convolve, count_lift, step
from ..scenarios import MarkovChainScenario
from ._chain_planner import pair_groups

__all__ = ["ChainBridges", "ChainQuiltLaws", "QuiltRows", "batch_log_convolve",
           "log_advance", "quilt_rows", "whole_chain_cells", "whole_chain_laws",
           "whole_chain_rows"]


def log_advance(table: np.ndarray, log_p: np.ndarray, weights: np.ndarray,
                forward: bool = True) -> np.ndarray:
    """One step of a count recursion in log space; the last two axes are (state, count).

    Forward: ``out[.., v', c] = logsumexp_v table[.., v, c - w(v)] + log P[v, v']``.
    Backward: ``out[.., v, c] = logsumexp_v' log P[v, v'] + table[.., v', c - w(v')]``.

    Examples
    --------
    >>> start = np.array([[0.0], [-np.inf]])                 # X_0 = 0 surely, count 0
    >>> step = log_advance(start, np.log([[0.5, 0.5], [0.5, 0.5]]), np.array([0, 1]))
    >>> np.exp(step).tolist()                                  # X_1 = 0 or 1, count w(X_0) = 0
    [[0.5, 0.0], [0.5, 0.0]]
    """
    p = np.exp(log_p)
    lifted = count_lift(np.asarray(weights, dtype=np.int64)[None])(table, 0)
    return step(lifted, p, ChainSteps(p).log_min, forward)


class ChainBridges:
    """Bridge, start and end tables of one chain (extended lazily, kept).

    ``initial`` is the law of X_0, or None for ``initial="any"`` (then only ``start(0)``).
    """

    def __init__(self, transition: np.ndarray, initial: np.ndarray | None,
                 weights: np.ndarray) -> None:
        self.transition = np.asarray(transition, dtype=float)
        self.steps = ChainSteps(self.transition)
        with np.errstate(divide="ignore"):
            self.log_p = np.log(self.transition)
            log_q0 = None if initial is None else np.log(np.asarray(initial, dtype=float))
        self.weights = np.asarray(weights, dtype=np.int64)
        self._lift = count_lift(self.weights[None])
        self.k = self.log_p.shape[0]
        self._g = [np.empty((0,)), self.log_p[:, :, None].copy()]
        self.fixed = log_q0 is not None
        # X_0 = s given: the count before node 0 is 0 whatever the start, so H_0 needs none
        self._h = [np.zeros((self.k, 1)) if log_q0 is None else log_q0[:, None]]
        self._end = [np.zeros((self.k, 1))]

    def advance(self, table: np.ndarray, forward: bool = True) -> np.ndarray:
        """One step of the count recursion (:func:`log_advance` with this chain's P and
        weights): the engine's ``step(count_lift(w)(table, 0), P)``."""
        return step(self._lift(table, 0), self.transition, self.steps.log_min, forward)

    def bridge(self, a: int) -> np.ndarray:
        """``G_a`` (k, k, (a-1)·max w + 1), a >= 1."""
        while len(self._g) <= a:
            self._g.append(self.advance(self._g[-1]))
        return self._g[a]

    def start(self, i: int) -> np.ndarray:
        """``H_i`` (k, i·max w + 1); needs a fixed initial law when i > 0."""
        if i > 0 and not self.fixed:
            raise ValueError("internal error: start tables of a chain with initial='any'")
        while len(self._h) <= i:
            self._h.append(self.advance(self._h[-1]))
        return self._h[i]

    def end(self, d: int) -> np.ndarray:
        """``K_d`` (k, d·max w + 1)."""
        while len(self._end) <= d:
            self._end.append(self.advance(self._end[-1], False))
        return self._end[d]


@dataclass(frozen=True, eq=False)
class QuiltRows:
    """Nearby laws of one quilt under every θ, as rows on one grid, and the comparisons.

    Comparison j sets row ``first[j]`` (given X_i = ``state[j]``) against row ``second[j]``
    (given ``other[j]``) under scenario ``theta[j]``, for the quilt value whose left node is in
    state ``left[j]`` (-1: no left node); ``r0[j]`` is the part of
    ``log P(x_Q | s) / P(x_Q | s')`` that does not depend on the node, to which the node's
    prior term ``log q_i(s')/q_i(s)`` is added when ``prior``. ``blockers`` (θ, left, s, s')
    are quilt values possible under s and impossible under s' (the quilt is unusable where
    they apply). ``distance`` is a, the distance of the left node (0: none). ``rows`` may be
    given as a function computing them: :meth:`table` calls it once, when a loss is needed
    (the prior part alone often rules a quilt out). ``grids`` (vector queries): one grid per
    released coordinate, the rows then having one axis per grid; empty: ``(grid,)``.
    """

    grid: np.ndarray
    rows: np.ndarray | Callable[[], np.ndarray]
    first: np.ndarray
    second: np.ndarray
    theta: np.ndarray
    left: np.ndarray
    state: np.ndarray
    other: np.ndarray
    r0: np.ndarray
    blockers: np.ndarray
    distance: int
    prior: bool
    grids: tuple = ()

    def axes(self) -> tuple:
        """The grid of every coordinate of the rows (``(grid,)`` for scalar queries)."""
        return self.grids or (self.grid,)

    def table(self) -> np.ndarray:
        """The rows (computed on the first call when given as a function)."""
        if callable(self.rows):
            object.__setattr__(self, "_build", self.rows)
            object.__setattr__(self, "rows", self.rows())
        assert isinstance(self.rows, np.ndarray)
        return self.rows

    def release(self) -> None:
        """Free rows given as a function (the next :meth:`table` recomputes them)."""
        build = self.__dict__.get("_build")
        if build is not None:
            object.__setattr__(self, "rows", build)

    def comparison_bytes(self) -> int:
        """Bytes of the comparison arrays (held whether or not the table is)."""
        return sum(a.nbytes for a in (self.first, self.second, self.theta, self.left,
                                      self.state, self.other, self.r0, self.blockers))

    def cells(self) -> int:
        """Cells of the rows' table, known before it is computed."""
        count = int(max(self.first.max(initial=-1), self.second.max(initial=-1))) + 1
        return count * int(np.prod([g.size for g in self.axes()]))


def _left_distance(key: tuple) -> int:
    """a, the distance of the left quilt node of ``key`` (0: open left side)."""
    return key[1] if key[0] == "two" else key[2] if key[0] == "left" else 0


class ChainQuiltLaws:
    """Rows of every quilt a node class may use, built on demand and kept (one pair set).

    Keys: ``("two", a, b)``, ``("right", i, b)`` (left side open, nearby from node 0),
    ``("left", d, a)`` (right side open, d = T-1-i), ``("empty", i, d)``.
    """

    def __init__(self, bridges: Sequence[ChainBridges], pairs: np.ndarray) -> None:
        self.bridges = list(bridges)
        self.pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        self._rows: dict[tuple, QuiltRows] = {}

    def rows(self, key: tuple) -> QuiltRows:
        """The rows of quilt ``key`` (see the class docstring), computed once."""
        out = self._rows.get(key)
        if out is None:
            out = self._rows[key] = self._build(key)
        return out

    def forget(self, key: tuple) -> None:
        """Drop the rows of ``key`` (the next :meth:`rows` computes them again)."""
        self._rows.pop(key, None)

    def _sides(self, key: tuple, br: ChainBridges) -> tuple[np.ndarray, np.ndarray]:
        """Log tables (k_left, k, C_left) and (k, k_right, C_right) of the two open or quilted
        sides: axis 0 of the left table is the left quilt value (size 1 when open)."""
        kind = key[0]
        if kind == "two":
            return br.bridge(key[1]), br.bridge(key[2])
        if kind == "right":
            return br.start(key[1])[None], br.bridge(key[2])
        if kind == "left":
            return br.bridge(key[2]), br.end(key[1])[:, None]
        return br.start(key[1])[None], br.end(key[2])[:, None]

    def _comparisons(self, key: tuple) -> tuple[list, list, int]:
        """Per θ the comparisons of :meth:`_compare` and what its law rows need
        ``(bridges, left, right, row keys)``, and the number of rows."""
        parts: list[tuple] = []
        jobs: list[tuple] = []   # per θ: what its law rows need, computed only on demand
        count = 0
        for theta, br in enumerate(self.bridges):
            left, right = self._sides(key, br)
            index: list[tuple] = []
            parts.append(self._compare(theta, key, left, right, index, count))
            jobs.append((br, left, right, index))
            count += len(index)
        return parts, jobs, count

    def _build(self, key: tuple) -> QuiltRows:
        parts, jobs, count = self._comparisons(key)
        width = max(left.shape[-1] + right.shape[-1] - 1 + int(br.weights.max())
                    for br, left, right, _ in jobs)
        return quilt_rows(key, parts, (np.arange(width, dtype=float),),
                          lambda: _law_table(jobs, count, width))

    def _compare(self, theta: int, key: tuple, left: np.ndarray, right: np.ndarray,
                 index: list, offset: int) -> tuple:
        """Comparisons of one θ; the rows they use, (u, s, v), are appended to ``index`` and
        numbered from ``offset`` on."""
        tl, tr = logsumexp(left, axis=-1), logsumexp(right, axis=-1)   # (kl, k), (k, kr)
        open_left = key[0] in ("right", "empty")
        s, s2 = self.pairs[:, 0], self.pairs[:, 1]
        # (m, kl, kr): log P(x_Q, X_i = s) up to the prior; finite where possible
        one = tl[:, s].T[:, :, None] + tr[s][:, None, :]
        two = tl[:, s2].T[:, :, None] + tr[s2][:, None, :]
        both = np.isfinite(one) & np.isfinite(two)
        m, u, v = np.nonzero(both)
        if open_left:   # P(x_Q | s) = P^b[s, v] (or 1): the start table's total is q_i(s)
            r0 = (tr[s[m], v] - tr[s2[m], v])
        else:
            r0 = (tl[u, s[m]] - tl[u, s2[m]]) + (tr[s[m], v] - tr[s2[m], v])
        first, second = _row_ids(u, s[m], s2[m], v, left.shape[1], right.shape[1], index,
                                 offset)
        bm, bu, _ = np.nonzero(np.isfinite(one) & ~np.isfinite(two))
        blockers = np.stack([np.full(bm.size, theta), np.where(open_left, -1, bu), s[bm],
                             s2[bm]], axis=1)
        lefts = np.full(m.size, -1) if open_left else u
        return first, second, np.full(m.size, theta), lefts, s[m], s2[m], r0, blockers


def quilt_rows(key: tuple, parts: list[tuple], grids: tuple,
               rows: Callable[[], np.ndarray]) -> QuiltRows:
    """:class:`QuiltRows` of the per-θ comparisons ``parts`` of :meth:`ChainQuiltLaws._compare`,
    with rows computed by ``rows`` on ``grids`` (one per released coordinate)."""
    cat = [np.concatenate([p[j] for p in parts]) for j in range(7)]
    blockers = np.concatenate([p[7] for p in parts]).reshape(-1, 4)
    return QuiltRows(grid=grids[0], rows=rows, first=cat[0], second=cat[1], theta=cat[2],
                     left=cat[3], state=cat[4], other=cat[5], r0=cat[6].astype(float),
                     blockers=blockers, distance=_left_distance(key),
                     prior=key[0] in ("two", "left"), grids=grids if len(grids) > 1 else ())


def _row_ids(us: np.ndarray, ss: np.ndarray, s2s: np.ndarray, vs: np.ndarray, k: int,
             kr: int, index: list, offset: int) -> tuple[np.ndarray, np.ndarray]:
    """Row numbers of the laws (u, s, v) and (u, s', v) of each comparison: the distinct
    triples (sorted) are appended to ``index`` and numbered from ``offset`` on."""
    codes = np.concatenate([(us * k + ss) * kr + vs, (us * k + s2s) * kr + vs])
    unique, inverse = np.unique(codes, return_inverse=True)
    u, rest = np.divmod(unique, k * kr)
    index.extend(zip(u.tolist(), *(x.tolist() for x in np.divmod(rest, kr)), strict=True))
    ids = offset + inverse.ravel()
    return ids[:us.size], ids[us.size:]


def _law_table(jobs: list[tuple], count: int, width: int) -> np.ndarray:
    """The normalised nearby laws ``left[u, s] ⊛ δ_{w(s)} ⊛ right[s, v]`` of every job's rows
    (numbered in order), one batch per θ; X_i's own weight is one shift per state."""
    table = np.full((count, width), -np.inf)
    start = 0
    for br, left, right, keys in jobs:
        if keys:
            u, s, v = (np.array(x, dtype=np.int64) for x in zip(*keys, strict=True))
            laws = batch_log_convolve(left[u, s], right[s, v])
            laws -= logsumexp(laws, axis=1)[:, None]
            shift, n = br.weights[s], laws.shape[1]
            for w in np.unique(shift):
                table[start + np.flatnonzero(shift == w), w:w + n] = laws[shift == w]
        start += len(keys)
    return table


def batch_log_convolve(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Row-wise convolution of log rows to relative precision: the count-law engine's
    :func:`~pufferfish_pgm.queries._count_engine.batch_convolve` (kept under this name).

    Examples
    --------
    >>> coin = np.log([[0.5, 0.5]])
    >>> np.exp(batch_log_convolve(coin, coin)).tolist()
    [[0.25, 0.5, 0.25]]
    """
    return batch_convolve(xs, ys)


def whole_chain_cells(length: int, k: int, weights: np.ndarray) -> int:
    """Cells ``T·k·C`` of one chain's whole-chain laws (C = T·max w + 1 counts).

    >>> whole_chain_cells(288, 4, np.array([0, 0, 1, 0]))
    332928
    """
    return length * k * (length * int(np.max(weights)) + 1)


def whole_chain_rows(transition: np.ndarray, initial: np.ndarray, weights: np.ndarray,
                     length: int, secrets: Sequence[tuple[np.ndarray, np.ndarray]]
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Empty-quilt laws of every secret node of one fixed-start chain of ``length`` nodes and
    per-state ``weights``, in one pass.

    ``secrets`` are (nodes, ordered pairs) as :func:`~pufferfish_pgm.quilts.pair_groups`
    gives them. Returns rows (R, C) of ``log P(F = c | X_t = s)`` on counts 0..C-1 and, per
    comparison of an unordered pair {s, s'} at node t (both secrets possible; the loss is
    symmetric, so one order suffices), its two rows and t. One forward–backward pass
    (:meth:`~pufferfish_pgm.queries._chain_count_law.ChainCountTables.stream_secret_log_joints`).

    Examples
    --------
    >>> rows, first, second, node = whole_chain_rows(
    ...     np.full((2, 2), 0.5), np.array([0.5, 0.5]), np.array([0, 1]), 3,
    ...     [(np.arange(3), np.array([[0, 1], [1, 0]]))])
    >>> rows.shape, node.tolist()
    ((6, 4), [0, 1, 2])
    >>> np.exp(rows[second[1]]).round(4).tolist()            # F given X_1 = 1
    [0.0, 0.25, 0.5, 0.25]
    """
    tables = ChainCountTables(transition, initial,
                              np.broadcast_to(weights, (length, len(weights))))
    wanted: dict[int, list[int]] = {}
    comparisons = []
    for nodes, pairs in secrets:
        both = np.unique(np.sort(np.asarray(pairs).reshape(-1, 2), axis=1), axis=0)
        both = both[both[:, 0] < both[:, 1]]
        states = np.unique(both).tolist()
        wanted.update(dict.fromkeys(np.asarray(nodes).tolist(), states))
        comparisons.append(np.column_stack([np.repeat(nodes, len(both)),
                                            np.tile(both, (len(nodes), 1))]))
    row_of = np.full((length, len(weights)), -1)
    rows = np.full((sum(len(v) for v in wanted.values()), tables.width), -np.inf)
    for r, (t, s, law) in enumerate(tables.stream_secret_log_joints(wanted)):
        total = float(logsumexp(law))
        if np.isfinite(total):   # else the secret is impossible: its pairs are unconstrained
            rows[r], row_of[t, s] = law - total, r
    if not comparisons:
        empty = np.zeros(0, dtype=np.int64)
        return rows, empty, empty, empty
    comp = np.concatenate(comparisons)
    first, second = row_of[comp[:, 0], comp[:, 1]], row_of[comp[:, 0], comp[:, 2]]
    keep = (first >= 0) & (second >= 0)
    return rows, first[keep], second[keep], comp[keep, 0]


def whole_chain_laws(framework: Any, weights: np.ndarray, max_cells: int) -> list[tuple] | None:
    """Per member θ with a comparison, ``(θ, rows, first, second, node)`` of
    :func:`whole_chain_rows`; None unless every member is a fixed-start chain and the laws
    hold at most ``max_cells`` cells in all.

    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework
    >>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.1, 0.9]], "stationary", 5))
    >>> [law[1].shape for law in whole_chain_laws(fw, np.array([0, 1]), 100)]
    [(10, 6)]
    >>> whole_chain_laws(fw, np.array([0, 1]), 50) is None     # 5·2·6 = 60 cells
    True
    """
    members = list(framework.scenarios)
    chains = [m for m in members if isinstance(m, MarkovChainScenario) and not m.initial_is_any]
    if len(chains) < len(members):
        return None
    length = chains[0].length
    if sum(whole_chain_cells(length, m.k, weights) for m in chains) > max_cells:
        return None
    secrets = pair_groups(framework)
    out = []
    for theta, m in enumerate(chains):
        rows, first, second, node = whole_chain_rows(m.transition, m.initial_distribution,
                                                     weights, length, secrets)
        if first.size:
            out.append((theta, rows, first, second, node))
    return out
