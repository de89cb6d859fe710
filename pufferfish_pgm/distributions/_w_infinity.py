"""The exact ∞-Wasserstein distance between laws given as rows of log masses.

W∞ is the largest gap between the two quantile functions (the monotone coupling in 1-D). It is
computed from the CDFs as log-odds, accurate near 0 and near 1, so no mass is ignored for being
small (DESIGN §3.5).
"""

from __future__ import annotations

import numpy as np

__all__ = ["exact_w_infinity"]


#: Quantile cells narrower than this (in log-odds of the level) are ties, not mass.
_LOGIT_TIE = 1e-9


def logit_cdf(grid_rows: np.ndarray) -> np.ndarray:
    """``log F - log (1 - F)`` at every grid point of every row of log masses, accurate near
    both 0 and 1 (cumulative sums from the left and from the right, in log space)."""
    log_cdf = np.logaddexp.accumulate(grid_rows, axis=1)
    tail = np.flip(np.logaddexp.accumulate(np.flip(grid_rows, axis=1), axis=1), axis=1)
    log_sf = np.concatenate([tail[:, 1:], np.full((grid_rows.shape[0], 1), -np.inf)], axis=1)
    with np.errstate(invalid="ignore"):
        return log_cdf - log_sf


def _w_infinity_lattice(step: float, la: np.ndarray, lb: np.ndarray) -> np.ndarray:
    """W∞ on an evenly spaced grid: the smallest shift d (in steps) with
    ``F_a(x) <= F_b(x + d)`` and ``F_b(x) <= F_a(x + d)`` at every grid point ``x`` with
    ``x + d`` on the grid (``n - 1`` when a row has no number).

    The CDFs are nondecreasing, so ``F_a(x) <= F_b(y)`` holds exactly for ``y >= y_b(x)``,
    the number of grid points where ``F_b < F_a(x)`` (up to the tie tolerance); the smallest
    shift is ``max_x y_b(x) - x`` (and the same with a and b swapped), found by binary search:
    ``O(n log n)`` per row, where shifting one step at a time cost ``O(n W)``."""
    n = la.shape[1]
    shift = np.maximum(_one_sided(la, lb), _one_sided(lb, la))
    shift = np.clip(shift, 0, n - 1).astype(float)
    shift[np.isnan(la).any(axis=1) | np.isnan(lb).any(axis=1)] = n - 1
    return shift * step


def _one_sided(la: np.ndarray, lb: np.ndarray) -> np.ndarray:
    """``max_x (y_b(x) - x)`` per row, ``y_b(x) = #{y : lb[y] < la[x] - tie}`` (rows sorted).

    One binary search per row: ``np.searchsorted`` takes one sorted row at a time, and the
    loop over rows is the fast way here (measured on 20,000 rows of 721 points: 0.33 s, a
    merge of all rows at once by ``argsort`` 1.5 s and twice the rows' memory)."""
    x = np.arange(la.shape[1])
    out = np.zeros(la.shape[0], dtype=np.int64)
    for r, (a, b) in enumerate(zip(la, lb, strict=True)):
        out[r] = (np.searchsorted(b, a - _LOGIT_TIE, side="left") - x).max(initial=0)
    return out


def exact_w_infinity(grid: np.ndarray, rows_a: np.ndarray, rows_b: np.ndarray) -> np.ndarray:
    """W∞ of every pair of rows of log masses on ``grid``, blind to no mass however small.

    The monotone coupling in 1-D: merge the CDF levels of both laws (as log-odds, accurate
    near 0 and 1); on each cell between consecutive levels the two quantiles are the grid
    points counted so far. Levels closer than 1e-9 in log-odds are ties (rounding), so a
    mass is ignored only if it is below 1e-9 of the smaller tail, never for being small.
    (:func:`pufferfish_pgm.distributions.w_infinity` ignores absolute masses below 1e-12,
    which can hide a support point that only one law has.)

    Examples
    --------
    >>> g = np.array([0.0, 1.0])
    >>> a = np.log([[1 - 1e-13, 1e-13]])
    >>> b = np.array([[0.0, -np.inf]])
    >>> exact_w_infinity(g, a, b).tolist()
    [1.0]
    """
    return w_infinity_logits(grid, logit_cdf(rows_a), logit_cdf(rows_b))


def w_infinity_logits(grid: np.ndarray, la: np.ndarray, lb: np.ndarray) -> np.ndarray:
    n = grid.size
    if n > 1 and np.all(np.diff(grid) == grid[1] - grid[0]):
        return _w_infinity_lattice(grid[1] - grid[0], la, lb)
    levels = np.concatenate([la, lb], axis=1)
    order = np.argsort(levels, axis=1, kind="stable")
    merged = np.take_along_axis(levels, order, axis=1)
    from_a = order < n
    count_a = np.cumsum(from_a, axis=1)
    count_b = np.cumsum(~from_a, axis=1)
    with np.errstate(invalid="ignore"):
        width = np.diff(merged, axis=1)
    valid = (width > _LOGIT_TIE) & (count_a[:, :-1] < n) & (count_b[:, :-1] < n)
    qa = grid[np.minimum(count_a[:, :-1], n - 1)]
    qb = grid[np.minimum(count_b[:, :-1], n - 1)]
    return np.where(valid, np.abs(qa - qb), 0.0).max(axis=1, initial=0.0)
