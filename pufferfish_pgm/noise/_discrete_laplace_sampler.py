"""Exact discrete Laplace sampling (Canonne, Kamath & Steinke 2020), the engine of ``noise``.

Private: :mod:`pufferfish_pgm.noise` is the public interface. The sampler follows "The Discrete
Gaussian for Differential Privacy" (Algorithms 1 and 2): the scale is the exact rational
``Fraction(scale) = n / d`` and every random decision compares uniform integers drawn by
rejection from a byte stream, so no floating-point rounding enters the sampled distribution.
The byte stream is ``secrets.token_bytes`` (the OS's secure source) or, for reproducible tests
only, a ``numpy.random.Generator``'s ``bytes``.

Examples
--------
>>> import numpy as np
>>> discrete_laplace(3.0, 5, source_for(np.random.default_rng(0)))
array([ 7, -2,  2,  4,  1])
>>> source_for(np.random.default_rng(0)).below(10, 4)      # uniform on 0..9
array([1, 8, 8, 9])
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from ..errors import LimitExceededError, ParameterTypeError

__all__ = ["DRAW_LIMIT", "Source", "discrete_laplace", "floor_ratio", "source_for"]

_I64_MAX = 2**63 - 1
DRAW_LIMIT = 2**62  # |draw| >= this raises (probability < exp(-1000) at noise.MAX_SCALE)
_WORD_TYPES = (np.uint8, np.uint16, np.uint32, np.uint64)
_SMALL_BATCH = 32  # below this many entries, uniform integers are drawn one by one


class Source:
    """Exactly uniform integers and 53-bit floats built from a stream of random bytes."""

    __slots__ = ("_bytes",)

    def __init__(self, random_bytes: Callable[[int], bytes]) -> None:
        self._bytes = random_bytes

    def words(self, count: int, dtype: type = np.uint64) -> np.ndarray:
        """``count`` uniform unsigned words of ``dtype`` (as uint64)."""
        raw = self._bytes(count * np.dtype(dtype).itemsize)
        return np.frombuffer(raw, dtype=dtype).astype(np.uint64)

    def below(self, bound: int | np.ndarray, count: int) -> np.ndarray:
        """Uniform integers in ``[0, bound)`` (bound >= 1, scalar or per entry), as int64.

        Masked rejection: draw as many bits as ``bound - 1`` has, keep values below ``bound``
        and redraw the others. Each draw is accepted with probability > 1/2 and the result is
        exactly uniform. Words are as narrow as the largest bound allows, to spare entropy.
        """
        if count <= _SMALL_BATCH:  # plain Python integers beat numpy's per-call overhead
            bounds = (bound.tolist() if isinstance(bound, np.ndarray) and bound.ndim
                      else [int(bound)] * count)
            return np.array([self._below_one(b) for b in bounds], dtype=np.int64)
        bound = np.broadcast_to(np.asarray(bound, dtype=np.uint64), (count,))
        mask = bound - np.uint64(1)
        for shift in (1, 2, 4, 8, 16, 32):
            mask |= mask >> np.uint64(shift)
        out = np.zeros(count, dtype=np.int64)
        if (top := int(mask.max())) == 0:
            return out
        dtype = next(t for t in _WORD_TYPES if top <= np.iinfo(t).max)
        todo = np.arange(count)
        while todo.size:
            draw = self.words(todo.size, dtype) & mask[todo]
            ok = draw < bound[todo]
            out[todo[ok]] = draw[ok]
            todo = todo[~ok]
        return out

    def _below_one(self, bound: int) -> int:
        """One uniform integer in ``[0, bound)`` by the same masked rejection."""
        bits = (bound - 1).bit_length()
        while bits:
            draw = int.from_bytes(self._bytes((bits + 7) // 8), "little") & ((1 << bits) - 1)
            if draw < bound:
                return draw
        return 0

    def uniform(self, count: int) -> np.ndarray:
        """Floats ``j * 2**-53`` with ``j`` uniform in ``[0, 2**53)``: uniform on [0, 1)."""
        return (self.words(count) >> np.uint64(11)).astype(np.float64) * 2.0**-53


def source_for(rng: np.random.Generator | None) -> Source:
    """The random source: OS randomness for ``None``, else the given numpy Generator."""
    if rng is None:
        return Source(secrets.token_bytes)
    if isinstance(rng, np.random.Generator):
        return Source(rng.bytes)
    raise ParameterTypeError(
        f"rng must be None (secure OS randomness) or a numpy.random.Generator, got the "
        f"{type(rng).__name__} {rng!r}; for reproducible runs pass numpy.random.default_rng(seed)"
    )


def _bernoulli_exp(src: Source, num: np.ndarray, den: int) -> np.ndarray:
    """Exact Bernoulli(exp(-num / den)) per entry, for 0 <= num <= den (CKS Algorithm 1).

    Count k = 1, 2, ... while Bernoulli(gamma / k) succeeds; the final k is odd with
    probability exp(-gamma). Bernoulli(gamma / k) is drawn as Bernoulli(gamma) AND
    Bernoulli(1 / k), two independent comparisons, so no bound ever exceeds max(den, k).
    """
    k = np.ones(num.size, dtype=np.int64)
    todo = np.arange(num.size)
    while todo.size:
        todo = todo[src.below(den, todo.size) < num[todo]]
        todo = todo[src.below(k[todo], todo.size) == 0]
        k[todo] += 1
    return k % 2 == 1


def _geometric_exp1(src: Source, count: int) -> np.ndarray:
    """Successes before the first failure of Bernoulli(exp(-1)): P(v) = (1 - 1/e) e^-v."""
    v = np.zeros(count, dtype=np.int64)
    todo = np.arange(count)
    while todo.size:
        todo = todo[_bernoulli_exp(src, np.ones(todo.size, dtype=np.int64), 1)]
        v[todo] += 1
    return v


def floor_ratio(u: np.ndarray, v: np.ndarray, n: int, d: int) -> np.ndarray:
    """``(u + n * v) // d`` per entry, exactly, without int64 overflow."""
    safe = v <= (_I64_MAX - u) // n
    y = np.zeros(u.size, dtype=np.int64)
    if d <= _I64_MAX:
        y[safe] = (u[safe] + n * v[safe]) // d
    # else u + n * v < 2**63 <= d for the safe entries, so their quotient is 0.
    for i in np.flatnonzero(~safe):  # needs v > 2**9: probability below exp(-500)
        y[i] = min((int(u[i]) + n * int(v[i])) // d, _I64_MAX)
    return y


def _accepted_draws(src: Source, n: int, d: int, trials: int) -> np.ndarray:
    """One round of CKS Algorithm 2 on ``trials`` candidates; the accepted draws, in order."""
    u = src.below(n, trials)
    u = u[_bernoulli_exp(src, u, n)]  # u + n * v is then geometric: P(x) ~ exp(-x / n)
    y = floor_ratio(u, _geometric_exp1(src, u.size), n, d)  # P(y) ~ exp(-y d / n)
    negative = src.below(2, y.size) == 1
    ok = ~negative | (y != 0)  # reject "-0" so that 0 is not counted twice
    return np.where(negative, -y, y)[ok]


def discrete_laplace(scale: float, count: int, src: Source) -> np.ndarray:
    """``count`` exact discrete Laplace draws with scale ``scale`` = n / d (CKS Algorithm 2).

    Vectorised: each round runs the rejection sampler on a whole batch of independent
    candidates, sized from the acceptance rate so that one or two rounds usually suffice, and
    keeps the first accepted draws. Which candidates are kept depends only on the accept
    decisions, never on the values, so the kept draws are independent and exactly distributed.
    """
    n, d = Fraction(scale).as_integer_ratio()  # n < 2**63: callers keep scale <= 2**52
    # P(accept) = P(keep u) * P(not "-0"); an estimate in floats only affects the speed.
    rate = -math.expm1(-1) / (n * -math.expm1(-1 / n)) * (1 + math.exp(-1 / scale)) / 2
    parts, missing = [], count
    while missing > 0:
        parts.append(_accepted_draws(src, n, d, int(missing / rate * 1.1) + 16)[:missing])
        missing -= parts[-1].size
    out = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    if count and int(np.abs(out).max()) >= DRAW_LIMIT:
        raise LimitExceededError(f"a discrete Laplace draw at scale {scale!r} reached 2**62")
    return out
