"""Log-space kernels for count distributions (internal).

The exact engine works with probability masses that span hundreds of orders of magnitude (the
count of a rare state over a long chain), and the audit needs every one of them to *relative*
precision: the supremum of a Laplace density ratio often sits at an extreme support point,
where the masses are tiny but are multiplied by ``e^{x/λ}``. So every array here holds
natural logarithms (``-inf`` for a zero mass), and:

* :func:`log_convolve` convolves two log-mass vectors exactly, to relative precision, by
  splitting each into stretches whose dynamic range fits a float64 and convolving the
  stretches in linear space (sums of positive terms keep their relative precision);
* :func:`log_laplace_density` evaluates ``log Σ_i m_i exp(-|g_k - g_i| / λ)`` along one axis
  of an array with the O(n) cumulative recursions of DESIGN §3.7.

FFT convolution is deliberately not used: its error is absolute (about 1e-16 of the largest
mass), which wipes out exactly the tail masses the audit depends on.

Examples
--------
>>> import numpy as np
>>> coin = np.log([0.5, 0.5])
>>> np.exp(log_convolve(coin, coin)).tolist()
[0.25, 0.5, 0.25]
"""

from __future__ import annotations

import numpy as np

__all__ = ["log_convolve", "log_laplace_density", "log_normalize", "logsumexp"]

#: Largest dynamic range (in nats) of one stretch: products of two stay above e^-700, inside
#: float64's normal range (e^-708).
_STRETCH = 350.0


def logsumexp(values: np.ndarray, axis: int | None = None) -> np.ndarray:
    """``log Σ exp(values)`` along ``axis``, ``-inf`` for an all ``-inf`` slice (no warnings).

    Examples
    --------
    >>> round(float(logsumexp(np.log([0.25, 0.75]))), 12)
    0.0
    """
    values = np.asarray(values, dtype=float)
    peak = np.max(values, axis=axis, keepdims=True)
    safe = np.where(np.isfinite(peak), peak, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(values - safe), axis=axis, keepdims=True)) + safe
    return out.squeeze(axis=axis) if axis is not None else out.reshape(())


def log_normalize(log_mass: np.ndarray) -> np.ndarray:
    """Shift log masses so that they sum to 1.

    Examples
    --------
    >>> np.exp(log_normalize(np.log([1.0, 3.0]))).round(12).tolist()
    [0.25, 0.75]
    """
    return log_mass - logsumexp(log_mass)


def _stretches(x: np.ndarray) -> list[tuple[int, int, float]]:
    """Split the finite part of ``x`` into contiguous stretches of range <= ``_STRETCH``.

    Each finite value gets the band ``floor((max - x) / _STRETCH)`` (zero masses inherit the
    band before them); a run of equal bands spans at most ``_STRETCH``. Returns
    ``(start, stop, max)`` per stretch.
    """
    finite = np.isfinite(x)
    where = np.flatnonzero(finite)
    if where.size == 0:
        return []
    start, stop = int(where[0]), int(where[-1]) + 1
    part, ok = x[start:stop], finite[start:stop]
    peak = float(np.max(part))
    if peak - float(np.min(part[ok])) <= _STRETCH:
        return [(start, stop, peak)]
    band = np.where(ok, np.floor((peak - np.where(ok, part, peak)) / _STRETCH), -1.0)
    filled = np.maximum.accumulate(np.where(ok, np.arange(part.size), 0))
    band = band[filled]
    cuts = np.concatenate(([0], np.flatnonzero(np.diff(band)) + 1, [part.size]))
    return [(start + int(a), start + int(b), float(np.max(part[a:b])))
            for a, b in zip(cuts[:-1], cuts[1:], strict=True)]


def log_convolve(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Log of the convolution of ``exp(x)`` and ``exp(y)``, to relative precision.

    Each input is cut into stretches whose log range is at most 300; the stretches are scaled
    by their maxima and convolved in linear space, where every product is at least e^-600
    of the stretch pair's peak (no underflow), and the partial results are added in log space.

    Examples
    --------
    >>> x = np.array([0.0, -2000.0])     # masses 1 and e^-2000
    >>> log_convolve(x, x).round(6).tolist()
    [0.0, -1999.306853, -4000.0]
    """
    out = np.full(x.size + y.size - 1, -np.inf)
    parts_y = [(s, e, m, np.exp(y[s:e] - m)) for s, e, m in _stretches(y)]
    for sx, ex, mx in _stretches(x):
        lin_x = np.exp(x[sx:ex] - mx)
        for sy, _, my, lin_y in parts_y:
            lin = np.convolve(lin_x, lin_y)
            with np.errstate(divide="ignore"):
                part = np.log(lin) + (mx + my)
            window = slice(sx + sy, sx + sy + part.size)
            out[window] = np.logaddexp(out[window], part)
    return out


#: Largest span ``(g_max - g_min) / scale`` evaluated by the one-pass cumulative form; its
#: absolute rounding error is about ``span * 2.2e-16`` nats (<= 6e-14 here). Wider spans (tiny
#: scales) use the log-space scan, whose error does not grow with the span.
_FAST_SPAN = 256.0


def log_laplace_density(grid: np.ndarray, log_mass: np.ndarray, scale: float,
                        axis: int = -1) -> np.ndarray:
    """``log Σ_i exp(log_mass_i - |g_k - g_i| / scale)`` at every grid point, along ``axis``.

    ``grid`` is strictly increasing and matches ``log_mass`` along ``axis``. The common
    factor ``1 / (2 scale)`` of the Laplace density is left out. The sum is split into a left
    part ``L_k = Σ_{i<=k}`` and a right part ``R_k = Σ_{i>k}``; both obey the recursion
    ``L_k = m_k + L_{k-1} e^{-(g_k - g_{k-1})/λ}`` (DESIGN §3.7).

    Two evaluations of that recursion, both in log space and exact at every scale:

    * span ``(g_max - g_min)/λ <= 256``: the one-pass cumulative form
      ``L_k = logcumsumexp(m + c)_k - c_k`` with ``c_k = (g_k - g_0)/λ``;
    * wider spans (small scales): adding ``c`` to ``m`` would round ``m`` away once ``c`` is
      large (at ``c ~ 1e16`` the masses vanish entirely), so the recursion runs as a parallel
      prefix scan of the affine maps ``x -> m_k + e^{-δ_k} x`` (Kogge–Stone, ``log2 n``
      vectorised passes): every decay ``δ`` is a sum of positive gaps ``(g_k - g_{k-1})/λ``,
      never a difference, so no digit is lost; a decay that overflows to ``inf`` contributes
      exactly ``e^{-inf} = 0``, which is also its true value to any float precision.

    As ``λ -> 0`` the result at a support point tends to ``m_k`` itself, so the audit's
    limit is the noiseless loss (see :func:`pufferfish_pgm._calibrate.noiseless_epsilon`).

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
        c = (g - g[0]) / scale
        left = np.logaddexp.accumulate(m + c, axis=-1) - c
        tail = np.flip(np.logaddexp.accumulate(np.flip(m - c, axis=-1), axis=-1), axis=-1)
        right = np.concatenate([tail[..., 1:], np.full(tail.shape[:-1] + (1,), -np.inf)],
                               axis=-1) + c
    else:
        with np.errstate(over="ignore"):
            gaps = np.concatenate(([0.0], np.diff(g) / scale))
        left = _decay_scan(m, gaps)
        inclusive = np.flip(_decay_scan(np.flip(m, axis=-1), np.concatenate(
            ([0.0], gaps[1:][::-1]))), axis=-1)
        right = np.concatenate([inclusive[..., 1:] - gaps[1:],
                                np.full(m.shape[:-1] + (1,), -np.inf)], axis=-1)
    return np.moveaxis(np.logaddexp(left, right), -1, axis)


def _decay_scan(m: np.ndarray, gaps: np.ndarray) -> np.ndarray:
    """``log Σ_{i<=k} exp(m_i - (gaps_{i+1} + ... + gaps_k))`` along the last axis.

    Kogge–Stone prefix scan: after the pass with offset ``s``, entry ``k`` holds the sum over
    ``i`` in ``(k - 2s, k]`` and ``decay[k]`` the distance (in units of the scale) from ``k``
    to ``k - 2s``. Decays are sums of non-negative gaps (``inf`` on overflow, which stands for
    a weight of exactly 0).

    Examples
    --------
    >>> _decay_scan(np.zeros(3), np.array([0.0, 1.0, 2.0])).round(6).tolist()  # log(1+e^-2+e^-3)
    [0.0, 0.313262, 0.169846]
    """
    out, decay, n, s = m.copy(), gaps.copy(), m.shape[-1], 1
    with np.errstate(over="ignore"):
        while s < n:
            out[..., s:] = np.logaddexp(out[..., s:], out[..., :-s] - decay[s:])
            decay[s:] = decay[s:] + decay[:-s]
            s *= 2
    return out
