"""The window search shared by the chain quilt planners (DESIGN §3.3).

For a node i and a quilt {X_{i-a}, X_{i+b}} the score is σ = card(X_N) / (ε - e_Θ); the
planners grow the window of candidate (a, b) until no larger window can beat the best σ.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._influence import log_ratio, power_stack

__all__ = ["BestWindows", "grow_window", "search_shared", "sigma_table", "window_terms"]


FIRST_WINDOW = 16


def window_terms(transition: np.ndarray, pairs: np.ndarray, window: int) -> tuple:
    """Left log-ratios ``(W, k, m)`` = log P^a[x,s]/P^a[x,s'] and D_b ``(W, m)`` for a, b <= W."""
    powers = power_stack(transition, window + 1)[1:]
    s, s2 = pairs[:, 0], pairs[:, 1]
    left = log_ratio(powers[:, :, s], powers[:, :, s2])
    right = log_ratio(powers[:, s, :], powers[:, s2, :]).max(axis=2)
    return left, right


def sigma_table(card: np.ndarray, influence: np.ndarray, epsilon: float) -> np.ndarray:
    """card / (ε - e) where e < ε, else inf (0 for an empty nearby block)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = card / (epsilon - influence)
    return np.where(influence < epsilon, out, np.inf)


def _stationary_tables(members: Sequence, pairs: np.ndarray, window: int) -> tuple:
    """E(a, b) for a, b <= W plus the one-sided rows, for stationary members (node-free)."""
    us, ds = [], []
    for chain in members:
        left, right = window_terms(chain.transition, pairs, window)
        pi = chain.initial
        support = pi > 0
        active = support[pairs[:, 0]] & support[pairs[:, 1]]
        s, s2 = pairs[active, 0], pairs[active, 1]
        best_x = np.where(support[None, :, None], left[:, :, active], -np.inf).max(axis=1)
        us.append(best_x + np.log(pi[s2]) - np.log(pi[s]))
        ds.append(right[:, active])
    u, d = np.concatenate(us, axis=1), np.concatenate(ds, axis=1)
    both = np.zeros((window, window))
    for j in range(u.shape[1]):  # loop over (θ, pair): avoids a (W, W, J) array
        both = np.maximum(both, u[:, j, None] + d[None, :, j])
    return both, d.max(axis=1, initial=0.0), u.max(axis=1, initial=0.0)


def _prefix_min_2d(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Minimum of ``table[:A, :B]`` for every (A, B), with the flat index where it sits."""
    val, arg = table.copy(), np.arange(table.size).reshape(table.shape)
    for view_v, view_a in ((val, arg), (val.T, arg.T)):
        for r in range(1, view_v.shape[0]):  # a running min carrying argmins: O(W) numpy calls
            better = view_v[r - 1] < view_v[r]
            view_v[r] = np.where(better, view_v[r - 1], view_v[r])
            view_a[r] = np.where(better, view_a[r - 1], view_a[r])
    return val, arg


@dataclass
class BestWindows:
    """Running best option per node (a mutable accumulator local to one search)."""

    sigma: np.ndarray
    left: np.ndarray
    right: np.ndarray
    influence: np.ndarray

    @classmethod
    def trivial(cls, n: int, sigma: float) -> BestWindows:
        zero = np.zeros(n, dtype=np.int64)
        return cls(np.full(n, sigma), zero, zero.copy(), np.zeros(n))

    def offer(self, rows: np.ndarray, sigma: np.ndarray, left: Any, right: Any,
              influence: np.ndarray) -> None:
        take = sigma < self.sigma[rows]
        rows = rows[take]
        self.sigma[rows] = sigma[take]
        self.left[rows] = np.broadcast_to(left, take.shape)[take]
        self.right[rows] = np.broadcast_to(right, take.shape)[take]
        self.influence[rows] = influence[take]


def _shared_round(tables: tuple, nodes: np.ndarray, length: int, window: int,
                  epsilon: float) -> tuple[BestWindows, np.ndarray]:
    """Exact best option within the window for every node, from node-free tables."""
    both, left_absent, right_absent = tables
    steps = np.arange(1, window + 1)
    val, arg = _prefix_min_2d(sigma_table(steps[:, None] + steps[None, :] - 1, both, epsilon))
    best = BestWindows.trivial(len(nodes), length / epsilon)
    span_l, span_r = np.minimum(nodes, window), np.minimum(length - 1 - nodes, window)
    rows = np.flatnonzero((span_l > 0) & (span_r > 0))
    flat = arg[span_l[rows] - 1, span_r[rows] - 1]
    best.offer(rows, val[span_l[rows] - 1, span_r[rows] - 1], flat // window + 1,
               flat % window + 1, both.ravel()[flat])
    for left_side in (True, False):  # one side absent: card = (that side's length) + distance
        far = nodes if left_side else length - 1 - nodes
        span, row_e = (span_r, left_absent) if left_side else (span_l, right_absent)
        rows = np.flatnonzero(far <= window)
        sig = sigma_table(far[rows, None] + steps[None, :], row_e[None, :], epsilon)
        sig[steps[None, :] > span[rows, None]] = np.inf
        pick = sig.argmin(axis=1)
        dist = pick + 1
        best.offer(rows, sig[np.arange(len(rows)), pick], 0 if left_side else dist,
                   dist if left_side else 0, row_e[pick])
    outside = (nodes > window) | (length - 1 - nodes > window)
    return best, ~outside | ((window + 1) / epsilon >= best.sigma)


def grow_window(round_fn: Callable[[int, np.ndarray], tuple], count: int, length: int,
                trivial: float, max_window: int,
                too_costly: Callable[[int, np.ndarray], bool] | None = None,
                ) -> tuple[BestWindows, np.ndarray]:
    """Double the window until ``round_fn(window, rows)`` settles every row.

    Growth stops at ``max_window``, or earlier when ``too_costly(next_window, rows)`` says
    the next round is too expensive. Returns the best options and a mask of the rows still
    unsettled then (their σ is the best found in the window or the trivial one: valid, maybe
    not optimal).
    """
    cap = max(1, min(length - 1, max_window))
    window = min(cap, FIRST_WINDOW)
    done = BestWindows.trivial(count, trivial)
    truncated = np.zeros(count, dtype=bool)
    pending = np.arange(count)
    while len(pending):
        best, settled = round_fn(window, pending)
        nxt = min(cap, 2 * window)
        last = window >= cap or (too_costly is not None and too_costly(nxt, pending[~settled]))
        keep = settled | last
        for name in ("sigma", "left", "right", "influence"):
            getattr(done, name)[pending[keep]] = getattr(best, name)[keep]
        truncated[pending[keep & ~settled]] = True
        pending = pending[~keep]
        window = nxt
    return done, truncated


def search_shared(table_fn: Callable[[int], tuple], nodes: np.ndarray, length: int,
                  epsilon: float, max_window: int) -> tuple[BestWindows, np.ndarray]:
    """The window search when one set of node-free tables serves every node."""
    return grow_window(
        lambda w, rows: _shared_round(table_fn(w), nodes[rows], length, w, epsilon),
        len(nodes), length, length / epsilon, max_window)
