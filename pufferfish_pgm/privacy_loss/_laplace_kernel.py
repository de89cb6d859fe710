"""Array kernels behind :mod:`pufferfish_pgm.distributions` (internal).

Two computations live here, both on plain numpy arrays so that they can be shared without
import cycles:

* the log densities of ``F + Laplace(scale)`` at the points of a sorted grid, for a discrete
  ``F`` whose masses sit on that grid (the one kernel of
  :func:`log_laplace_density` below), and the largest log ratio of two;
* the smallest ``theta`` with ``log sum_j m_j exp(d_j / theta) - log sum_j m_j <= epsilon``
  for every group of (distance, mass) pairs: the relaxed Kantorovich condition (``004_*``
  eq. 20) and Theorem 3's equation (13) are both of this form.

Examples
--------
>>> import numpy as np
>>> grid = np.array([0.0, 1.0])
>>> la, lb = log_densities(grid, np.array([0.0, -np.inf]), np.array([-np.inf, 0.0]), 1.0)
>>> round(float(la[0] - lb[0]), 12)   # a point mass at 0 against one at 1: ratio e^{1/1}
1.0
"""

from __future__ import annotations

import numpy as np

__all__ = ["log_densities", "pair_epsilon"]


def log_densities(
    grid: np.ndarray, log_mass_a: np.ndarray, log_mass_b: np.ndarray, scale: float
) -> tuple[np.ndarray, np.ndarray]:
    """Log densities (up to the common ``-log(2 scale)``) of both laws at the grid points.

    ``grid`` is sorted and strictly increasing; ``log_mass_*`` hold ``log mu(x_k)`` with
    ``-inf`` where a law puts no mass.
    """
    return log_laplace_density(grid, log_mass_a, scale), log_laplace_density(grid, log_mass_b,
                                                                             scale)


def pair_epsilon(
    grid: np.ndarray, log_mass_a: np.ndarray, log_mass_b: np.ndarray, scale: float
) -> tuple[float, float]:
    """``max_k |log p_a(x_k) / p_b(x_k)|`` and the grid point where it is reached.

    Only grid points where at least one law has mass are compared: the supremum over all
    outputs sits on the union of the two supports (DESIGN §3.7), and elsewhere both densities
    may underflow together at tiny scales. ``inf`` means one density underflows where the
    other does not (supports that differ, at a scale far below their distance).
    """
    la, lb = log_densities(grid, log_mass_a, log_mass_b, scale)
    mass = np.isfinite(log_mass_a) | np.isfinite(log_mass_b)
    with np.errstate(invalid="ignore"):
        gap = np.where(mass, np.abs(la - lb), 0.0)
    k = int(np.argmax(gap))
    return float(gap[k]), float(grid[k])


#: Largest span ``(g_max - g_min) / scale`` evaluated by the one-pass cumulative form; its
#: absolute rounding error is about ``span * 2.2e-16`` nats (<= 2.3e-13 here). Wider spans (tiny
#: scales) use the log-space scan, whose error does not grow with the span.
_FAST_SPAN = 1024.0
#: Up to this many blocks of span <= _FAST_SPAN, wider spans run the one-pass form per block.
_MAX_BLOCKS = 64
#: Largest log range (nats) of the terms a row sums in linear space (:func:`_linear_form`):
#: every term then lies in [e^-600, e^600], far inside float64's normal range (e^±708).
LINEAR_RANGE = 600.0
#: Smallest span ``c_max = (g_max - g_min) / scale`` evaluated in linear space.
LINEAR_SPAN = 1e-3


def log_laplace_density(grid: np.ndarray, log_mass: np.ndarray, scale: float,
                        axis: int = -1) -> np.ndarray:
    """``log Σ_i exp(log_mass_i - |g_k - g_i| / scale)`` at every grid point, along ``axis``.

    ``grid`` is strictly increasing and matches ``log_mass`` along ``axis``. The common
    factor ``1 / (2 scale)`` of the Laplace density is left out. The sum is split into a left
    part ``L_k = Σ_{i<=k}`` and a right part ``R_k = Σ_{i>k}``; both obey the recursion
    ``L_k = m_k + L_{k-1} e^{-(g_k - g_{k-1})/λ}`` (DESIGN §3.7).

    Two evaluations of that recursion, both in log space and exact at every scale:

    * span ``(g_max - g_min)/λ <= 1024``: the one-pass cumulative form
      ``L_k = logcumsumexp(m + c)_k - c_k`` with ``c_k = (g_k - g_0)/λ``; spans up to 64
      times that run it per block of span <= 1024, each block adding the previous blocks'
      sum decayed by its (positive) distance, ``L_{b-1} - (g_k - g_b)/λ``, in log space;
    * wider spans (small scales): adding ``c`` to ``m`` would round ``m`` away once ``c`` is
      large (at ``c ~ 1e16`` the masses vanish entirely), so the recursion runs as a parallel
      prefix scan of the affine maps ``x -> m_k + e^{-δ_k} x`` (Kogge–Stone, ``log2 n``
      vectorised passes): every decay ``δ`` is a sum of positive gaps ``(g_k - g_{k-1})/λ``,
      never a difference, so no digit is lost; a decay that overflows to ``inf`` contributes
      exactly ``e^{-inf} = 0``, which is also its true value to any float precision.

    As ``λ -> 0`` the result at a support point tends to ``m_k`` itself, so the audit's
    limit is the noiseless loss (see :func:`pufferfish_pgm.privacy_loss.noiseless_epsilon`).

    Examples
    --------
    >>> g = np.array([0.0, 1.0])
    >>> log_laplace_density(g, np.array([0.0, -np.inf]), 1.0).tolist()
    [0.0, -1.0]
    >>> m = np.log([0.5, 0.5])
    >>> log_laplace_density(g, m, 1e-300).tolist() == m.tolist()     # the noiseless limit
    True
    """
    m = np.moveaxis(np.asarray(log_mass, dtype=float), axis, -1)
    g = np.asarray(grid, dtype=float)
    with np.errstate(over="ignore"):
        span = (g[-1] - g[0]) / scale
    if span <= _FAST_SPAN:
        return np.moveaxis(_one_pass(m, g, scale), -1, axis)
    if span <= _FAST_SPAN * _MAX_BLOCKS:
        left = _blocked_left(m, g, scale)
        inclusive = np.flip(_blocked_left(np.flip(m, axis=-1), -g[::-1], scale), axis=-1)
        right = np.concatenate([inclusive[..., 1:] - np.diff(g) / scale,
                                np.full(m.shape[:-1] + (1,), -np.inf)], axis=-1)
    else:
        left, right = _scanned_parts(m, g, scale)
    return np.moveaxis(np.logaddexp(left, right), -1, axis)


def _one_pass(m: np.ndarray, g: np.ndarray, scale: float) -> np.ndarray:
    """:func:`log_laplace_density` along the last axis for a span of at most ``_FAST_SPAN``:
    the linear-space sums where the tilted rows fit, the cumulative form elsewhere."""
    c = (g - g[0]) / scale
    flat = m.reshape(-1, m.shape[-1])
    out = np.empty_like(flat)
    with np.errstate(invalid="ignore"):
        x, y = flat + c, flat - c
    tops = np.max(x, axis=-1), np.max(y, axis=-1)
    fits = _fits_tilted(flat, c, x, y, tops)
    if fits.any():
        out[fits] = _linear_sums(x[fits], y[fits], tops[0][fits, None], tops[1][fits, None], c)
    if not fits.all():
        out[~fits] = _cumulative_form(flat[~fits], c)
    return out.reshape(m.shape)


def _scanned_parts(m: np.ndarray, g: np.ndarray, scale: float
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The left and right parts of :func:`log_laplace_density` by the prefix scan of the
    affine maps (wide spans: every decay a sum of positive gaps)."""
    with np.errstate(over="ignore"):
        gaps = np.concatenate(([0.0], np.diff(g) / scale))
    left = decay_scan(m, gaps)
    inclusive = np.flip(decay_scan(np.flip(m, axis=-1), np.concatenate(
        ([0.0], gaps[1:][::-1]))), axis=-1)
    right = np.concatenate([inclusive[..., 1:] - gaps[1:],
                            np.full(m.shape[:-1] + (1,), -np.inf)], axis=-1)
    return left, right


def _cumulative_form(m: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The one-pass cumulative form ``L_k = logcumsumexp(m + c)_k - c_k`` and its mirror, in
    log space (rows along the last axis; ``c`` the grid over the scale from its first point)."""
    left = np.logaddexp.accumulate(m + c, axis=-1) - c
    tail = np.flip(np.logaddexp.accumulate(np.flip(m - c, axis=-1), axis=-1), axis=-1)
    right = np.concatenate([tail[..., 1:], np.full(tail.shape[:-1] + (1,), -np.inf)],
                           axis=-1) + c
    return np.logaddexp(left, right)


def _fits_linear(m: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Per row of ``m`` (rows, n), whether :func:`_linear_form` is exact to rounding there:
    the finite ``x = m + c`` span at most ``LINEAR_RANGE`` nats, so do the finite ``y = m -
    c``, and the tilt ``2 c_max`` between the two sides is at most ``LINEAR_RANGE`` too; and
    ``c_max >= LINEAR_SPAN``: every loss the audit can find is at most ``c_max`` (the support
    diameter over the scale), so the relative rounding of the prefix sums, about ``n u``,
    stays far below the losses compared (at huge scales, targets of 1e-15, the log-space
    recursion is kept: it resolves them where ``n u`` would not)."""
    with np.errstate(invalid="ignore"):
        x, y = m + c, m - c
    return _fits_tilted(m, c, x, y, (np.max(x, axis=-1), np.max(y, axis=-1)))


def _fits_tilted(m: np.ndarray, c: np.ndarray, x: np.ndarray, y: np.ndarray,
                 tops: tuple) -> np.ndarray:
    """:func:`_fits_linear` from the tilted rows ``x = m + c``, ``y = m - c`` and their row
    maxima ``tops`` (computed once for both it and :func:`_linear_sums`)."""
    finite = np.isfinite(m)
    top_x, top_y = tops
    low_x = np.min(x, axis=-1, where=finite, initial=np.inf)
    low_y = np.min(y, axis=-1, where=finite, initial=np.inf)
    return (np.isfinite(top_x) & (top_x - low_x <= LINEAR_RANGE)
            & (top_y - low_y <= LINEAR_RANGE) & (LINEAR_SPAN <= c[-1] <= LINEAR_RANGE / 2.0))


def _linear_form(m: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The same sums as :func:`_cumulative_form`, as prefix sums in linear space.

    With ``x = m + c``, ``y = m - c`` and their row maxima ``X``, ``Y``: ``L_k = e^{X - c_k}
    A_k`` with ``A_k = Σ_{i<=k} e^{x_i - X}``, and ``R_k = e^{Y + c_k} B_k`` with ``B_k =
    Σ_{i>k} e^{y_i - Y}``, so the log density is ``X - c_k + log(A_k + B_k e^{Y - X + 2
    c_k})``. Where :func:`_fits_linear` holds, every term of ``A`` and ``B`` is a normal float
    (in ``[e^-600, 1]``), so each prefix sum of positive terms is exact to a relative ``n u``
    (``u = 2^-53``), with no cancellation (``B`` is summed from the right, never as a
    difference of totals); ``e^{Y - X + 2 c_k} <= e^{2 c_max} <= e^600`` cannot overflow. The
    product ``B_k e^{...}`` may underflow only where it does not matter: if ``A_k > 0`` then
    ``A_k >= e^-600`` and a product below ``e^-708`` is less than ``e^-108 A_k``; if ``A_k =
    0`` (no mass at or left of ``k``) the term of ``i* = argmax x`` alone is ``e^{-2(c_{i*} -
    c_k)} >= e^-600``. So the result is exact to the same order as the log-space recursion's
    rounding, for three exponentials and one logarithm per point instead of six.

    Examples
    --------
    >>> m, c = np.log([[0.25, 0.5, 0.25]]), np.array([0.0, 0.5, 1.5])
    >>> bool(np.allclose(_linear_form(m, c), _cumulative_form(m, c), rtol=0, atol=1e-15))
    True
    """
    with np.errstate(invalid="ignore"):
        x, y = m + c, m - c
    return _linear_sums(x, y, np.max(x, axis=-1, keepdims=True),
                        np.max(y, axis=-1, keepdims=True), c)


def _linear_sums(x: np.ndarray, y: np.ndarray, top_x: np.ndarray, top_y: np.ndarray,
                 c: np.ndarray) -> np.ndarray:
    """:func:`_linear_form` from the tilted rows and their row maxima (rows, 1)."""
    a = np.cumsum(np.exp(x - top_x), axis=-1)
    b = np.zeros_like(a)
    b[:, :-1] = np.cumsum(np.exp(y - top_y)[:, :0:-1], axis=-1)[:, ::-1]
    with np.errstate(divide="ignore"):
        return top_x - c + np.log(a + b * np.exp(top_y - top_x + 2.0 * c))


def _blocked_left(m: np.ndarray, g: np.ndarray, scale: float) -> np.ndarray:
    """``log Σ_{i<=k} exp(m_i - (g_k - g_i)/λ)`` along the last axis, block by block.

    Within a block of span <= ``_FAST_SPAN`` the one-pass form is exact to ~2.3e-13 nats;
    the sum of the blocks before enters decayed by ``(g_k - g_last)/λ`` >= 0 (a subtraction
    from a log, never a cancellation).

    Examples
    --------
    >>> g = np.array([0.0, 1.0, 3.0])
    >>> bool(np.allclose(_blocked_left(np.zeros(3), g, 1.0), decay_scan(np.zeros(3),
    ...      np.array([0.0, 1.0, 2.0]))))
    True
    """
    c = (g - g[0]) / scale
    starts = np.flatnonzero(np.diff(np.floor(c / _FAST_SPAN), prepend=-1.0))
    out = np.empty_like(m)
    for i0, i1 in zip(starts, [*starts[1:], g.size], strict=True):
        cb = c[i0:i1] - c[i0]
        out[..., i0:i1] = np.logaddexp.accumulate(m[..., i0:i1] + cb, axis=-1) - cb
        if i0 > 0:
            carried = out[..., i0 - 1:i0] - (c[i0:i1] - c[i0 - 1])
            out[..., i0:i1] = np.logaddexp(out[..., i0:i1], carried)
    return out


def decay_scan(m: np.ndarray, gaps: np.ndarray) -> np.ndarray:
    """``log Σ_{i<=k} exp(m_i - (gaps_{i+1} + ... + gaps_k))`` along the last axis.

    Kogge–Stone prefix scan: after the pass with offset ``s``, entry ``k`` holds the sum over
    ``i`` in ``(k - 2s, k]`` and ``decay[k]`` the distance (in units of the scale) from ``k``
    to ``k - 2s``. Decays are sums of non-negative gaps (``inf`` on overflow, which stands for
    a weight of exactly 0).

    Examples
    --------
    >>> decay_scan(np.zeros(3), np.array([0.0, 1.0, 2.0])).round(6).tolist()  # log(1+e^-2+e^-3)
    [0.0, 0.313262, 0.169846]
    """
    out, decay, n, s = m.copy(), gaps.copy(), m.shape[-1], 1
    with np.errstate(over="ignore"):
        while s < n:
            out[..., s:] = np.logaddexp(out[..., s:], out[..., :-s] - decay[s:])
            decay[s:] = decay[s:] + decay[:-s]
            s *= 2
    return out
