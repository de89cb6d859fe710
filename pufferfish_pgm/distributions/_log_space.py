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

from .._tolerances import LOG_RANGE

__all__ = ["log_convolve", "log_matmul", "log_normalize", "logsumexp"]

#: Smallest exponent a product may have in :func:`log_matmul`'s linear-space product (float64
#: normals reach e^-708).
_FLOOR = -700.0

#: Largest dynamic range (in nats) of one stretch: products of two stay above e^-700, inside
#: float64's normal range (e^-708).
_STRETCH = LOG_RANGE


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


def log_matmul(table: np.ndarray, p: np.ndarray, log_p_min: float | None = None,
               scratch: np.ndarray | None = None) -> np.ndarray:
    """``out[..., j, c] = log Σ_i p[i, j] e^{table[..., i, c]}``, to relative precision.

    The step of every count recursion (``p`` a transition matrix, or its transpose for a
    backward step; leading axes of ``p`` are chains matched with ``table``'s, see
    :mod:`pufferfish_pgm.queries._count_engine`). Each column ``c`` is scaled by its largest
    entry and multiplied in linear space: a matrix product of positive terms keeps its
    relative precision. When some product could leave float64's normal range (an entry
    ``e^-700`` below its column's peak times the smallest positive ``p``, ``e^{log_p_min}``),
    that column takes the log-space sum (the columns are independent sums: the others keep
    the linear product; a tilt axis mixes columns of very different ranges).

    With ``scratch`` (an array of ``table``'s shape sharing no memory with it) the result
    overwrites ``table`` and no array of that size is allocated: the same values, for a
    traversal that reuses its buffers (fresh arrays of a few megabytes each step cost more
    in page faults than the arithmetic).

    Examples
    --------
    >>> p = np.array([[0.5, 0.5], [1e-300, 1.0]])
    >>> t = np.array([[0.0, -1000.0], [-1000.0, 0.0]])     # 1000 nats: the log-space sum
    >>> ref = logsumexp(t[:, None, :] + np.log(p)[:, :, None], 0)
    >>> bool(np.allclose(log_matmul(t, p), ref))
    True
    >>> inplace = t.copy()
    >>> bool((log_matmul(inplace, p, scratch=np.empty_like(t)) == log_matmul(t, p)).all())
    True
    """
    if log_p_min is None:
        log_p_min = float(np.log(p[p > 0].min(initial=1.0)))
    peak = np.max(table, axis=-2, keepdims=True)
    safe = np.where(np.isfinite(peak), peak, 0.0)
    scaled = np.subtract(table, safe, out=scratch)
    finite = np.isfinite(scaled)
    wide, wide_sums = _log_space_columns(table, p, scaled, finite, log_p_min)
    if wide is not None and wide_sums is not None and wide.size == scaled.shape[-1]:
        if scratch is None:
            return wide_sums
        table[...] = wide_sums
        return table
    np.exp(scaled, out=scaled)
    out = np.matmul(np.swapaxes(p, -1, -2), scaled, out=None if scratch is None else table)
    with np.errstate(divide="ignore"):
        np.log(out, out=out)
    out += safe
    if wide is not None:
        out[..., wide] = wide_sums
    return out


def _log_space_columns(table: np.ndarray, p: np.ndarray, scaled: np.ndarray,
                       finite: np.ndarray, log_p_min: float
                       ) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The columns of :func:`log_matmul` whose products could leave float64's normal range
    and their log-space sums (computed from ``table`` before the product overwrites it), or
    ``(None, None)`` when every column takes the linear product."""
    if float(np.min(scaled, where=finite, initial=0.0)) + log_p_min >= _FLOOR:
        return None, None
    low = np.min(scaled, axis=tuple(range(scaled.ndim - 1)), where=finite, initial=0.0)
    wide = np.flatnonzero(low + log_p_min < _FLOOR)       # columns of the log-space sum
    with np.errstate(divide="ignore"):
        log_p = np.log(p)[..., :, :, None]
    if wide.size == scaled.shape[-1]:
        return wide, logsumexp(table[..., :, None, :] + log_p, axis=-3)
    return wide, logsumexp(table[..., :, None, wide] + log_p, axis=-3)


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


