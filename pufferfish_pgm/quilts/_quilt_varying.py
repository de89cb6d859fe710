"""Exact quilt laws and node classes of time-varying chains (``docs/exact-quilt.md``,
"Time-varying chains").

With one matrix per step the bridges of :mod:`._quilt_laws` depend on where they sit: for node
i, the left side of a quilt at distance a is

    L_{i,a}[u, s, c] = log P(Σ_{t=i-a+1}^{i-1} w(X_t) = c, X_i = s | X_{i-a} = u)

(built backward from ``log P_{i-1}``, one step ``P_{i-a-1}`` per extra slot), the right side at
distance b is ``R_{i,b}[s, v, c] = log P(Σ_{t=i+1}^{i+b-1} w(X_t) = c, X_{i+b} = v | X_i = s)``
(forward from ``log P_i``), the start table ``H_i`` comes from a forward pass from X_0 and the
end table of node ``T-1-d`` from a backward pass from the last node. Every step is the count-law
engine's lift and step with that step's matrix. Nothing is shared between nodes: every node is
its own class, with its own laws object (:class:`NodeQuiltLaws`, keys as
:class:`~pufferfish_pgm.quilts._quilt_laws.ChainQuiltLaws`). The prior part
``log P(x_Q|s)/P(x_Q|s')`` needs the probabilities only: the step products
``M_{i-a→i}``, ``M_{i→i+b}`` and the marginal ``q_i``, without count tables; the count tables
are built when a loss is needed, and a node's tables are kept in a small cache of recent nodes
(the search handles one class at a time), recomputed when evicted.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> p = np.array([[0.9, 0.1], [0.2, 0.8]])
>>> mc = MarkovChainScenario(np.stack([p] * 5), [2 / 3, 1 / 3], 6)
>>> laws = NodeQuiltLaws([VaryingBridges(mc, np.array([0, 1]))], np.array([[0, 1], [1, 0]]), 3)
>>> rows = laws.rows(("two", 1, 2))      # quilt {X_2, X_5}: nearby {X_3, X_4}
>>> rows.grid.tolist(), rows.table().shape[1]
([0.0, 1.0, 2.0], 3)
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..queries._engine import ChainSteps, count_lift, step
from ..scenarios import MarkovChainScenario
from ..secrets._engine import support_at
from ._chain_varying import _prior
from ._influence import log_ratio
from ._quilt_laws import ChainQuiltLaws, QuiltRows, _law_table, quilt_rows

__all__ = ["NodeQuiltLaws", "VaryingBridges", "prior_tables", "varying_two_sided_prior"]

#: Cells of per-node count tables a chain keeps (recent nodes first; about 64 MB).
CACHE_CELLS = 1 << 23


class VaryingBridges:
    """Count tables of one time-varying chain around any node (module docstring).

    ``weights``: the shifted integer weight of every state. The start tables need a fixed
    initial law past node 0 (``initial="any"``: only ``start(0)``).
    """

    def __init__(self, chain: MarkovChainScenario, weights: np.ndarray) -> None:
        self.length, self.k = chain.length, chain.k
        self.matrices = chain.steps if chain.length > 1 else np.eye(chain.k)[None]
        self.log_min = ChainSteps(self.matrices).log_min
        self.weights = np.asarray(weights, dtype=np.int64)
        self._lift = count_lift(self.weights[None])
        self.fixed = not chain.initial_is_any
        self.marginals = _marginals(chain) if self.fixed else None
        with np.errstate(divide="ignore"):
            self._log_p = np.log(self.matrices)
            first = np.zeros(self.k) if not self.fixed else np.log(chain.initial_distribution)
        self._h = [first[:, None]]
        self._end = [np.zeros((self.k, 1))]
        self._cache: OrderedDict[tuple, list] = OrderedDict()
        self._cells = 0

    def _advance(self, table: np.ndarray, t: int, forward: bool = True) -> np.ndarray:
        """Lift the counts by the weight of the states on axis -2, then step ``t``."""
        return step(self._lift(table, 0), self.matrices[t], self.log_min, forward)

    def start(self, i: int) -> np.ndarray:
        """``H_i`` (k, i·max w + 1): log P(X_i = s, Σ_{t<i} w(X_t) = c)."""
        if i > 0 and not self.fixed:
            raise ValueError("internal error: start tables of a chain with initial='any'")
        while len(self._h) <= i:
            self._h.append(self._advance(self._h[-1], len(self._h) - 1))
        return self._h[i]

    def end(self, d: int) -> np.ndarray:
        """``K`` of node T-1-d (k, d·max w + 1): log P(Σ_{t>i} w(X_t) = c | X_i = s)."""
        while len(self._end) <= d:
            self._end.append(self._advance(self._end[-1], self.length - 1 - len(self._end),
                                           False))
        return self._end[d]

    def left(self, i: int, a: int) -> np.ndarray:
        """``L_{i,a}`` (k_u, k_s, (a-1)·max w + 1), a <= i."""
        tables = self._tables("left", i, a, lambda: self._log_p[i - 1].T[:, :, None],
                              lambda tab, n: self._advance(tab, i - n - 1, False))
        return np.swapaxes(tables[a - 1], 0, 1)   # kept as (s, u, c): steps act on u

    def right(self, i: int, b: int) -> np.ndarray:
        """``R_{i,b}`` (k_s, k_v, (b-1)·max w + 1), i + b <= T - 1."""
        return self._tables("right", i, b, lambda: self._log_p[i][:, :, None],
                            lambda tab, n: self._advance(tab, i + n))[b - 1]

    def _tables(self, side: str, i: int, n: int, first: Any, extend: Any) -> list:
        """The side's tables of node i up to distance n (cached, recent nodes kept)."""
        key = (side, i)
        tables = self._cache.pop(key, None)
        if tables is None:
            tables = [first()]
            self._cells += tables[0].size
        while len(tables) < n:
            tables.append(extend(tables[-1], len(tables)))
            self._cells += tables[-1].size
        self._cache[key] = tables
        while self._cells > CACHE_CELLS and len(self._cache) > 1:
            _, old = self._cache.popitem(last=False)
            self._cells -= sum(t.size for t in old)
        return tables

    def log_back(self, i: int, a: int) -> np.ndarray:
        """``log M_{i-a→i}`` (k, k): log P(X_i | X_{i-a})."""
        tables = self._tables("back", i, a + 1, lambda: np.eye(self.k),
                              lambda tab, n: self.matrices[i - n] @ tab)
        with np.errstate(divide="ignore"):
            return np.log(tables[a])

    def log_ahead(self, i: int, b: int) -> np.ndarray:
        """``log M_{i→i+b}`` (k, k): log P(X_{i+b} | X_i)."""
        tables = self._tables("ahead", i, b + 1, lambda: np.eye(self.k),
                              lambda tab, n: tab @ self.matrices[i + n - 1])
        with np.errstate(divide="ignore"):
            return np.log(tables[b])


def _marginals(chain: MarkovChainScenario) -> np.ndarray:
    """``(T, k)``: the law of every X_t."""
    q = np.empty((chain.length, chain.k))
    q[0] = chain.initial_distribution
    for t in range(chain.length - 1):
        q[t + 1] = q[t] @ chain.steps[t]
    return q


class NodeQuiltLaws(ChainQuiltLaws):
    """Rows of every quilt of node ``node`` of time-varying chains (one pair set; keys as
    :class:`~pufferfish_pgm.quilts._quilt_laws.ChainQuiltLaws`)."""

    def __init__(self, bridges: Sequence[VaryingBridges], pairs: np.ndarray,
                 node: int) -> None:
        super().__init__([], pairs)
        self.varying, self.node = list(bridges), node

    def _log_sides(self, key: tuple, br: VaryingBridges) -> tuple[np.ndarray, np.ndarray]:
        """The sides' log probabilities, as one-count tables (k_left, k, 1), (k, k_right, 1)."""
        kind, i = key[0], self.node
        if kind in ("right", "empty"):
            with np.errstate(divide="ignore"):
                q = np.zeros(br.k) if br.marginals is None else np.log(br.marginals[i])
            left = q[None, :, None]
        else:
            left = br.log_back(i, key[1 if kind == "two" else 2])[:, :, None]
        if kind in ("left", "empty"):
            return left, np.zeros((br.k, 1, 1))
        return left, br.log_ahead(i, key[2])[:, :, None]

    def count_sides(self, key: tuple, br: VaryingBridges) -> tuple[np.ndarray, np.ndarray]:
        """The sides' count tables (k_left, k, C_left), (k, k_right, C_right)."""
        kind, i = key[0], self.node
        if kind == "two":
            return br.left(i, key[1]), br.right(i, key[2])
        if kind == "right":
            return br.start(i)[None], br.right(i, key[2])
        if kind == "left":
            return br.left(i, key[2]), br.end(key[1])[:, None]
        return br.start(i)[None], br.end(key[2])[:, None]

    def _build(self, key: tuple) -> QuiltRows:
        parts, jobs = [], []
        count = 0
        for theta, br in enumerate(self.varying):
            index: list[tuple] = []
            left, right = self._log_sides(key, br)
            parts.append(self._compare(theta, key, left, right, index, count))
            jobs.append((br, index))
            count += len(index)
        width = _width(key, self.node, int(self.varying[0].weights.max()))

        def rows() -> np.ndarray:
            full = [(br, *self.count_sides(key, br), index) for br, index in jobs]
            return _law_table(full, count, width)
        return quilt_rows(key, parts, (np.arange(width, dtype=float),), rows)


def _width(key: tuple, node: int, top: int) -> int:
    """Counts of the nearby law of ``key`` at ``node`` (max weight ``top``): the two sides'
    widths and X_i's own weight."""
    kind = key[0]
    left = key[1] - 1 if kind == "two" else key[2] - 1 if kind == "left" else node
    right = key[2] - 1 if kind in ("two", "right") else key[2] if kind == "empty" else key[1]
    return (left + right + 1) * top + 1


def prior_tables(members: Sequence) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per member its supports S_t (T, k) and c_t(s, s') = log q_t(s')/q_t(s) (T, k, k; for
    ``initial="any"`` its supremum over starts), 0 on the diagonal."""
    out = []
    for chain in members:
        k = chain.k
        pairs = np.array([(s, t) for s in range(k) for t in range(k)])
        with np.errstate(divide="ignore", invalid="ignore"):
            c = _prior(chain, pairs).reshape(chain.length, k, k)
        out.append((support_at(chain, np.arange(chain.length)),
                    np.where(np.eye(k, dtype=bool)[None], 0.0, c)))
    return out


def varying_two_sided_prior(chain: MarkovChainScenario, pairs: np.ndarray,
                            distances: list[int]) -> np.ndarray:
    """The largest prior term of the quilts {X_{i-d}, X_{i+d}} over the nodes i where they fit,
    for each d (``-inf`` where none fits; inf where some node's pair is blocked): the step
    products of every node grow by one batched product per distance, and the log ratios are
    taken at ``distances`` only.

    >>> p = np.array([[0.9, 0.1], [0.2, 0.8]])
    >>> mc = MarkovChainScenario(np.stack([p] * 9), [2 / 3, 1 / 3], 10)
    >>> varying_two_sided_prior(mc, np.array([[0, 1], [1, 0]]), [1, 4]).round(3).tolist()
    [4.159, 1.333]

    (at d = 1, pair (1, 0): log(.8/.2) + log 2 + log(.8/.1), the homogeneous chain's value)
    """
    s, s2 = pairs[:, 0], pairs[:, 1]
    length, k = chain.length, chain.k
    steps = chain.steps if length > 1 else np.eye(k)[None]
    prior, support = _prior(chain, pairs), support_at(chain, np.arange(length))
    nodes, last = np.arange(length), max(length - 2, 0)
    back = ahead = np.broadcast_to(np.eye(k), (length, k, k))
    out = np.full(len(distances), -np.inf)
    wanted = {d: j for j, d in enumerate(distances)}
    for a in range(1, max(distances) + 1):
        back = steps[np.clip(nodes - a, 0, last)] @ back        # M_{i-a -> i}
        ahead = ahead @ steps[np.clip(nodes + a - 1, 0, last)]  # M_{i -> i+a}
        if a not in wanted:
            continue
        fits = nodes[(nodes >= a) & (nodes + a <= length - 1)]
        if not fits.size:
            continue
        with np.errstate(invalid="ignore"):
            left = log_ratio(back[fits][:, :, s], back[fits][:, :, s2])
            left = np.where(support[fits - a][:, :, None], left, -np.inf).max(axis=1)
            right = log_ratio(ahead[fits][:, s, :], ahead[fits][:, s2, :]).max(axis=2)
            both = np.nan_to_num(left + prior[fits] + right, nan=np.inf)
        active = support[fits][:, s] & support[fits][:, s2]
        out[wanted[a]] = np.where(active, both, -np.inf).max(initial=-np.inf)
    return out
