"""Forward–backward with a count axis: exact count distributions on Markov chains (internal).

For a chain with fixed start ``q0``, transition ``P`` and non-negative integer weights
``w[t, s]``, the query is ``F = Σ_t w[t, X_t]``. In log space:

* forward ``α_t(s, c) = log P(X_t = s, Σ_{u<=t} w[u, X_u] = c)``;
* backward ``β_t(s, c) = log P(Σ_{u>t} w[u, X_u] = c | X_t = s)``.

Then ``P(F = c, X_t = a) = (α_t(a, ·) ⊛ β_t(a, ·))(c)``: one pass each way gives the
distribution under every single-node secret at once, O(T² k²) in all (DESIGN §3.6). Evidence
on several nodes uses one masked forward pass.

Examples
--------
>>> import numpy as np
>>> tables = ChainCountTables(np.full((2, 2), 0.5), np.array([0.5, 0.5]),
...                           np.array([[0, 1]] * 3))
>>> np.exp(tables.secret_log_joint(1, 1)).round(4).tolist()   # P(F = c, X_1 = 1)
[0.0, 0.125, 0.25, 0.125]
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np

from .._budget import check_allocation
from ..distributions._engine import logsumexp
from ..errors import LimitExceededError
from ._count_engine import ChainSteps, convolve, shift_rows, step

__all__ = ["ChainCountTables"]

#: None: the forward and backward tables (2·T·k·C cells of 8 bytes) are checked against the
#: memory budget (:mod:`pufferfish_pgm._budget`) instead of a fixed number of cells.
MAX_CELLS = None


class ChainCountTables:
    """Forward and backward count tables of one chain with a fixed start (computed lazily).

    Parameters
    ----------
    transition : ndarray (k, k) or (T - 1, k, k)
        Row-stochastic transition matrix, or one per step ``t -> t + 1``.
    initial : ndarray (k,)
        Distribution of X_0.
    weights : ndarray (T, k) of int
        Non-negative integer weight of each state at each step.
    max_cells : int or None
        Refuse (LimitExceededError) tables with more than this many cells; None (default):
        refuse when the forward and backward tables would pass the memory budget.
    """

    def __init__(self, transition: np.ndarray, initial: np.ndarray, weights: np.ndarray,
                 max_cells: int | None = MAX_CELLS) -> None:
        self.steps = ChainSteps(transition)
        with np.errstate(divide="ignore"):
            self.log_q0 = np.log(initial)
        self.weights = np.asarray(weights, dtype=np.int64)
        self.length, self.k = self.weights.shape
        reach = self.weights.max(axis=1)
        self.prefix = np.cumsum(reach)              # largest partial sum up to t
        self.width = int(self.prefix[-1]) + 1       # C: counts 0..C-1
        cells = self.length * self.k * self.width
        if max_cells is None:
            check_allocation(2 * cells * 8, what=f"the count tables of a chain (T={self.length}, "
                                                 f"k={self.k}, counts up to {self.width - 1})")
        elif cells > max_cells:
            raise LimitExceededError(
                f"the count tables would hold {cells:,} cells (T={self.length}, k={self.k}, "
                f"counts up to {self.width - 1}); the limit is max_cells={max_cells:,}"
            )
        self._alpha: np.ndarray | None = None
        self._beta: np.ndarray | None = None

    def forward(self, mask: dict | None = None) -> np.ndarray:
        """α as an array (T, k, C); ``mask`` maps steps to the only allowed state index."""
        mask = mask or {}
        out = np.full((self.length, self.k, self.width), -np.inf)
        first = np.full((self.k, 1), -np.inf)
        first[:, 0] = self.log_q0
        out[0] = shift_rows(first, self.weights[0], self.width)
        for t in range(1, self.length):
            n = int(self.prefix[t - 1]) + 1
            moved = self._step(self._masked(out[t - 1, :, :n], t - 1, mask), t - 1)
            out[t] = shift_rows(moved, self.weights[t], self.width)
        out[-1] = self._masked(out[-1], self.length - 1, mask)
        return out

    def _step(self, table: np.ndarray, t: int, forward: bool = True) -> np.ndarray:
        """The engine's step from ``t`` to ``t + 1`` (forward) or back."""
        return step(table, self.steps.matrix(t), self.steps.log_min, forward)

    @staticmethod
    def _masked(table: np.ndarray, t: int, mask: dict) -> np.ndarray:
        if t not in mask:
            return table
        out = np.full_like(table, -np.inf)
        out[mask[t]] = table[mask[t]]
        return out

    def backward(self) -> np.ndarray:
        """β as an array (T, k, C)."""
        out = np.full((self.length, self.k, self.width), -np.inf)
        out[-1, :, 0] = 0.0
        total = int(self.prefix[-1])
        for t in range(self.length - 2, -1, -1):
            n = total - int(self.prefix[t]) + 1      # range of Σ_{u>t}
            moved = shift_rows(out[t + 1, :, :n], self.weights[t + 1], n)
            out[t, :, :n] = self._step(moved, t, forward=False)
        return out

    def secret_log_joint(self, t: int, state: int) -> np.ndarray:
        """``log P(F = c, X_t = state)`` for c = 0..C-1 (unnormalised conditional)."""
        if self._alpha is None:
            self._alpha, self._beta = self.forward(), self.backward()
        assert self._beta is not None
        head = self._alpha[t, state, :int(self.prefix[t]) + 1]
        tail = self._beta[t, state, :self.width - int(self.prefix[t])]
        return convolve(head, tail)[:self.width]

    def forward_rows(self) -> list[np.ndarray]:
        """α as a list over t of arrays (k, prefix_t + 1): only the counts reachable by t,
        about half of :meth:`forward`'s table."""
        out = []
        first = np.full((self.k, 1), -np.inf)
        first[:, 0] = self.log_q0
        out.append(shift_rows(first, self.weights[0], int(self.prefix[0]) + 1))
        for t in range(1, self.length):
            moved = self._step(out[-1], t - 1)
            out.append(shift_rows(moved, self.weights[t], int(self.prefix[t]) + 1))
        return out

    def stream_secret_log_joints(self, wanted: Mapping[int, Sequence[int]]
                                 ) -> Iterator[tuple[int, int, np.ndarray]]:
        """``(t, state, log P(F = c, X_t = state))`` for every wanted (t, state), t descending.

        One forward pass is kept (:meth:`forward_rows`); the backward table is never stored:
        β_t is advanced step by step and combined with α_t as it goes. Nothing is cached, so
        the memory is the forward rows plus one β row.
        """
        alpha = self.forward_rows()
        total = int(self.prefix[-1])
        beta = np.full((self.k, 1), -np.inf)
        beta[:, 0] = 0.0
        for t in range(self.length - 1, -1, -1):
            if t < self.length - 1:
                n = total - int(self.prefix[t]) + 1      # range of Σ_{u>t}
                beta = self._step(shift_rows(beta, self.weights[t + 1], n), t, forward=False)
            for state in wanted.get(t, ()):
                yield t, state, convolve(alpha[t][state], beta[state])[:self.width]
            alpha[t] = alpha[t][:0]   # no longer needed: free it as we go

    def evidence_log_joint(self, mask: dict) -> np.ndarray:
        """``log P(F = c, evidence)`` for evidence ``mask`` (step -> state index)."""
        if len(mask) == 1:
            (t, s), = mask.items()
            return self.secret_log_joint(t, s)
        return logsumexp(self.forward(mask)[-1], axis=0)
