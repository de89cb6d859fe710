"""The one count-law engine of Markov chains: step, convolution, traversal (internal).

Every count law of a chain (DESIGN §3.6) is built from three operations, defined here once:

* **the step** (:func:`step`): ``out[..., j, c] = log Σ_i P[i, j] e^{table[..., i, c]}`` (or
  with ``Pᵀ`` going backward), a scaled matrix product in linear space with one scale per
  column ``c`` and a log-space fallback where a product could leave float64's normal range
  (:func:`pufferfish_pgm.distributions._log_space.log_matmul`). The trailing axis ``c`` is
  a count (stored, streamed and cut laws) or a tilt ``γ`` (generating functions): the same
  product serves both;
* **the lift** that follows each step: along a count axis a shift of each state's row by its
  weight (:func:`shift_rows`), along a tilt axis the factor ``e^{γ w(s)}``
  (:func:`tilt_lift`);
* **the convolution** of a forward and a backward row (:func:`convolve`), or of many row
  pairs at once (:func:`batch_convolve`): one linear-space product when the two log ranges
  add up to at most ``2 · STRETCH`` nats (every product of two entries, and so every sum of
  them, stays above ``e^-700`` of the peak, inside float64's normal range), else the
  stretch-wise log-space convolution; one rule (:func:`fits_linear`), one threshold.

:func:`forward` and :func:`backward` run the traversal with any lift and an optional
``trim(t, offset, table)`` (the cuts of :mod:`pufferfish_pgm.queries._truncated_count_law`).
Transitions come from a :class:`ChainSteps`, one matrix per step ``t -> t + 1`` (shape
``(T - 1, k, k)``), a homogeneous ``(k, k)`` matrix, or a stack of chains ``(n, k, k)``
advanced together (``batched=True``).

Examples
--------
>>> from pufferfish_pgm.distributions._log_space import logsumexp
>>> p = np.array([[0.5, 0.5], [0.5, 0.5]])
>>> w = np.array([[0, 1]] * 3)
>>> rows = [r for _, _, r in forward(ChainSteps(p), np.log([0.5, 0.5]), count_lift(w), 3)]
>>> np.exp(logsumexp(rows[-1], axis=0)).round(4).tolist()     # the count of state 1 of 3
[0.125, 0.375, 0.375, 0.125]
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from .._tolerances import LOG_RANGE
from ..distributions._engine import log_convolve, log_matmul
from ..errors import InvalidParameterError

__all__ = ["ChainSteps", "CountLift", "STRETCH", "backward", "batch_convolve", "convolve",
           "count_lift", "fits_linear", "forward", "shift_rows", "step", "tilt_lift"]

#: Largest log range (nats) of a factor convolved in linear space (two multiply to >= e^-700).
STRETCH = LOG_RANGE

Lift = Callable[[np.ndarray, int], np.ndarray]
Trim = Callable[[int, int, np.ndarray], tuple[int, np.ndarray]]


class ChainSteps:
    """The transition matrices of a chain, one per step: ``matrix(t)`` is ``P(X_{t+1} | X_t)``.

    Parameters
    ----------
    matrices : ndarray
        ``(k, k)`` (homogeneous), ``(T - 1, k, k)`` (one per step), or with ``batched=True``
        ``(n, k, k)`` or ``(T - 1, n, k, k)``: ``n`` chains advanced together.
    batched : bool
        Whether the axis before the last two holds chains.

    Examples
    --------
    >>> steps = ChainSteps(np.stack([np.eye(2), np.full((2, 2), 0.5)]))
    >>> steps.matrix(1).tolist(), round(steps.log_min, 6)
    ([[0.5, 0.5], [0.5, 0.5]], -0.693147)
    """

    def __init__(self, matrices: np.ndarray, batched: bool = False) -> None:
        m = np.asarray(matrices, dtype=float)
        self._per_step = m.ndim == (4 if batched else 3)
        self._m = m
        positive = m[m > 0]
        #: log of the smallest positive transition probability (the step's fallback test)
        self.log_min = float(np.log(positive.min())) if positive.size else 0.0

    def matrix(self, t: int) -> np.ndarray:
        """The transition matrix (or matrices) from step ``t`` to ``t + 1``."""
        return self._m[t] if self._per_step else self._m

    def check_length(self, length: int) -> None:
        """Refuse per-step matrices that do not cover a chain of ``length`` nodes."""
        if self._per_step and len(self._m) != length - 1:
            raise InvalidParameterError(
                f"a chain of {length} nodes needs {length - 1} transition matrices (one per "
                f"step), got {len(self._m)}")


def step(table: np.ndarray, p: np.ndarray, log_p_min: float, forward: bool = True,
         scratch: np.ndarray | None = None) -> np.ndarray:
    """One step of the chain on log rows ``table[..., s, c]``: ``log Σ_s p[s, s'] e^{table}``
    going forward, ``log Σ_{s'} p[s, s'] e^{table[s', c]}`` going backward; relative precision
    (see the module docstring). ``p`` may carry leading chain axes matching ``table``'s. With
    ``scratch`` (table's shape, separate memory) the result overwrites ``table``.

    Examples
    --------
    >>> from pufferfish_pgm.distributions._log_space import logsumexp
    >>> p = np.array([[0.5, 0.5], [1e-300, 1.0]])
    >>> t = np.array([[0.0, -1000.0], [-1000.0, 0.0]])
    >>> ref = logsumexp(t[:, None, :] + np.log(p)[:, :, None], axis=0)
    >>> bool(np.allclose(step(t, p, np.log(1e-300)), ref))
    True
    """
    return log_matmul(table, p if forward else np.swapaxes(p, -1, -2), log_p_min, scratch)


def shift_rows(table: np.ndarray, shifts: np.ndarray, width: int,
               out: np.ndarray | None = None) -> np.ndarray:
    """Row ``s`` of ``table`` (..., k, n) moved right by ``shifts[s]``, cut or padded to
    ``width`` (leading axes, e.g. a bridge's start state, move along); written into ``out``
    (shape (..., k, width), sharing no memory with ``table``) when given.

    Every row is copied unmoved at once, then each moving state's row is moved by one
    strided copy (a loop over the states of nonzero weight: one copy each, without the
    gathered temporary a boolean row index would make).

    Examples
    --------
    >>> shift_rows(np.array([[0.0, 1.0], [2.0, 3.0]]), np.array([0, 1]), 3).tolist()
    [[0.0, 1.0, -inf], [-inf, 2.0, 3.0]]
    """
    n = table.shape[-1]
    if out is None:
        out = np.empty(table.shape[:-1] + (width,))
    stop = min(n, width)
    out[..., :stop] = table[..., :stop]
    out[..., stop:] = -np.inf
    shifts = np.asarray(shifts, dtype=np.int64)
    for s in np.flatnonzero(shifts).tolist():
        d = min(int(shifts[s]), width)
        m = max(min(width - d, n), 0)
        out[..., s, :d] = -np.inf
        out[..., s, d:d + m] = table[..., s, :m]
    return out


class CountLift:
    """The lift along a count axis: each state's row moves right by its weight at step t
    (``weights`` of shape (T, k)); ``out`` as in :func:`shift_rows`.

    Examples
    --------
    >>> lift = count_lift(np.array([[0, 1], [1, 0]]))
    >>> lift(np.zeros((2, 1)), 1).tolist()
    [[-inf, 0.0], [0.0, -inf]]
    """

    def __init__(self, weights: np.ndarray) -> None:
        self.weights = np.asarray(weights, dtype=np.int64)

    def width(self, table: np.ndarray, t: int) -> int:
        """The width of ``table`` lifted at step ``t``."""
        return table.shape[-1] + int(self.weights[t].max())

    def __call__(self, table: np.ndarray, t: int, out: np.ndarray | None = None) -> np.ndarray:
        return shift_rows(table, self.weights[t], self.width(table, t), out)


def count_lift(weights: np.ndarray) -> CountLift:
    """The lift along a count axis (:class:`CountLift`)."""
    return CountLift(weights)


def tilt_lift(weights: np.ndarray, gammas: np.ndarray) -> Lift:
    """The lift along a tilt axis: ``table[..., s, g] + γ_g w[..., t, s]`` (``weights`` of
    shape (T, k), or (n, T, k) for a batch of chains)."""
    w = np.asarray(weights, dtype=float)
    g = np.asarray(gammas, dtype=float)
    return lambda table, t: table + w[..., t, :, None] * g


class _Buffers:
    """Two row buffers a count traversal alternates between (``reuse=True``): each step
    overwrites the current table in place and lifts it into the other buffer, so a
    traversal allocates its rows a few times (as they outgrow the buffers) instead of a few
    arrays per step."""

    def __init__(self) -> None:
        self._pool: list[np.ndarray] = []

    def other(self, table: np.ndarray, shape: tuple) -> np.ndarray:
        """A view of ``shape`` in a buffer that ``table`` does not occupy."""
        occupied = [b for b in self._pool if b is table.base or b is table]
        for buf in self._pool:
            if (buf.shape[:-1] == shape[:-1] and buf.shape[-1] >= shape[-1]
                    and not any(buf is o for o in occupied)):
                return buf[..., :shape[-1]]
        buf = np.empty(shape[:-1] + (shape[-1] + shape[-1] // 4 + 8,))
        self._pool = [*occupied, buf]
        return buf[..., :shape[-1]]


def _advance(table: np.ndarray, lift: Lift, steps: ChainSteps, t: int, forward_step: bool,
             pool: _Buffers | None) -> np.ndarray:
    """One step and one lift (forward: step then lift at ``t``; backward: lift at ``t + 1``
    then step), in the pool's buffers when there is one (its lift is a :class:`CountLift`)."""
    p = steps.matrix(t - 1 if forward_step else t)
    if pool is None or not isinstance(lift, CountLift):
        if forward_step:
            return lift(step(table, p, steps.log_min), t)
        return step(lift(table, t + 1), p, steps.log_min, forward=False)
    if forward_step:
        table = step(table, p, steps.log_min, scratch=pool.other(table, table.shape))
        return lift(table, t, out=pool.other(table, table.shape[:-1] + (lift.width(table, t),)))
    moved = lift(table, t + 1, out=pool.other(table, table.shape[:-1]
                                              + (lift.width(table, t + 1),)))
    return step(moved, p, steps.log_min, forward=False, scratch=pool.other(moved, moved.shape))


def _pool(lift: Lift, reuse: bool) -> _Buffers | None:
    if reuse and not isinstance(lift, CountLift):
        raise TypeError("reuse=True runs a count traversal: the lift must be a CountLift")
    return _Buffers() if reuse else None


def forward(steps: ChainSteps, log_q0: np.ndarray, lift: Lift, length: int,
            trim: Trim | None = None, tilt: int = 0, reuse: bool = False
            ) -> Iterator[tuple[int, int, np.ndarray]]:
    """``(t, offset, α_t)`` for t = 0..T-1: ``α_t[..., s, c] = log P(X_t = s, lifted sum up
    to t = offset + c)`` (count axis), or the tilted ``log E[e^{γ Σ_{u<=t} w}; X_t = s]``
    (``tilt`` = the number of γ; then the offset stays 0). ``length`` is T. With ``reuse``
    (a :class:`CountLift` only) the rows live in two buffers the traversal overwrites: each
    yielded table is valid until the next one is asked for (copy what you keep)."""
    steps.check_length(length)
    pool = _pool(lift, reuse)
    start = np.asarray(log_q0, dtype=float)[..., None]
    table = lift(np.repeat(start, tilt, axis=-1) if tilt else start, 0)
    offset = 0
    if trim is not None:
        offset, table = trim(0, offset, table)
    yield 0, offset, table
    for t in range(1, length):
        table = _advance(table, lift, steps, t, True, pool)
        if trim is not None:
            offset, table = trim(t, offset, table)
        yield t, offset, table


def backward(steps: ChainSteps, shape: tuple, lift: Lift, length: int,
             trim: Trim | None = None, reuse: bool = False
             ) -> Iterator[tuple[int, int, np.ndarray]]:
    """``(t, offset, β_t)`` for t = T-1 down to 0: ``β_t[..., s, c] = log P(lifted sum over
    u > t = offset + c | X_t = s)`` (or its tilted generating function); ``shape`` is that of
    ``β_{T-1}``, all zeros (one count column, or one column per γ). ``reuse`` as in
    :func:`forward`."""
    steps.check_length(length)
    pool = _pool(lift, reuse)
    table, offset = np.zeros(shape), 0
    yield length - 1, offset, table
    for t in range(length - 2, -1, -1):
        table = _advance(table, lift, steps, t, False, pool)
        if trim is not None:
            offset, table = trim(t, offset, table)
        yield t, offset, table


def fits_linear(range_x: np.ndarray | float, range_y: np.ndarray | float) -> np.ndarray:
    """The one rule of the convolutions: two log vectors whose log ranges (largest less
    smallest finite entry) add up to at most ``2 · STRETCH`` nats are convolved in linear
    space, each scaled by its peak (every product, hence every sum of products, is then
    above ``e^-700``: positive normal floats, summed without cancellation).

    Examples
    --------
    >>> fits_linear(300.0, 400.0), fits_linear(300.0, 401.0)
    (np.True_, np.False_)
    """
    return np.asarray(range_x) + np.asarray(range_y) <= 2.0 * STRETCH


def batch_convolve(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Row-wise :func:`convolve` of ``xs`` (J, n) and ``ys`` (J, m), to relative precision.

    Rows that :func:`fits_linear` are scaled by their maxima and convolved together in
    linear space, a loop over the shorter side vectorised over rows and counts; the others
    go through :func:`log_convolve`'s stretches one by one.

    Examples
    --------
    >>> coin = np.log([[0.5, 0.5]])
    >>> np.exp(batch_convolve(coin, coin)).tolist()
    [[0.25, 0.5, 0.25]]
    """
    xs, ys = np.atleast_2d(xs), np.atleast_2d(ys)
    out = np.full((xs.shape[0], xs.shape[1] + ys.shape[1] - 1), -np.inf)
    top_x, top_y = xs.max(axis=1, keepdims=True), ys.max(axis=1, keepdims=True)
    low_x = np.where(np.isfinite(xs), xs, np.inf).min(axis=1, keepdims=True)
    low_y = np.where(np.isfinite(ys), ys, np.inf).min(axis=1, keepdims=True)
    linear = fits_linear(top_x - low_x, top_y - low_y).ravel()
    linear &= np.isfinite(top_x).ravel() & np.isfinite(top_y).ravel()
    if linear.any():
        ex, ey = np.exp(xs[linear] - top_x[linear]), np.exp(ys[linear] - top_y[linear])
        if ex.shape[1] > ey.shape[1]:
            ex, ey = ey, ex
        acc = np.zeros((ex.shape[0], out.shape[1]))
        for t in range(ex.shape[1]):
            acc[:, t:t + ey.shape[1]] += ex[:, t:t + 1] * ey
        with np.errstate(divide="ignore"):
            out[linear] = np.log(acc) + top_x[linear] + top_y[linear]
    for j in np.flatnonzero(~linear):
        out[j] = log_convolve(xs[j], ys[j])
    return out


def convolve(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``log (e^x ⊛ e^y)`` to relative precision: one linear-space product where
    :func:`fits_linear` holds (zero masses are exact either way), else :func:`log_convolve`.

    Examples
    --------
    >>> convolve(np.log([0.5, 0.5]), np.log([0.5, 0.5])).round(6).tolist()
    [-1.386294, -0.693147, -1.386294]
    >>> convolve(np.array([0.0, -2000.0]), np.array([0.0, -2000.0])).round(6).tolist()
    [0.0, -1999.306853, -4000.0]
    """
    if not (x.size and y.size):
        return np.full(max(x.size + y.size - 1, 1), -np.inf)
    top_x, top_y = float(x.max()), float(y.max())
    if not (np.isfinite(top_x) and np.isfinite(top_y)):
        return np.full(x.size + y.size - 1, -np.inf)
    low_x = np.min(x, where=np.isfinite(x), initial=top_x)
    low_y = np.min(y, where=np.isfinite(y), initial=top_y)
    if not (top_x - low_x) + (top_y - low_y) <= 2.0 * STRETCH:     # fits_linear, inlined
        return log_convolve(x, y)
    with np.errstate(divide="ignore"):
        return np.log(np.convolve(np.exp(x - top_x), np.exp(y - top_y))) + (top_x + top_y)
