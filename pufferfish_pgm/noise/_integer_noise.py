"""Integer noise with a finite core and geometric tails, exactly represented and sampled.

An :class:`IntegerNoise` is a law on all of ℤ described by integers: weights
``c_0, ..., c_m`` (``N = Σ c < 2**62``), an offset ``lo`` and a tail scale ``λ``
(``r = exp(-1/λ)``, with ``λ`` read as the exact rational ``Fraction(λ)``)::

    P(Z = lo + k)   = c_k / N                       0 < k < m   (the core)
    P(Z = hi + j)   = c_m / N · (1 - r) r^j          j >= 0      (hi = lo + m, right tail)
    P(Z = lo - j)   = c_0 / N · (1 - r) r^j          j >= 0      (left tail)

So ``c_0 / N`` and ``c_m / N`` are the total masses of the tails, and the pmf is geometric
beyond the core's edges (infinite support whenever both tail weights are positive). The
sampler (:mod:`~pufferfish_pgm.noise._integer_sampler`) draws exactly this law from uniform
integers (DESIGN §3.11), so the pmf that is audited is the pmf that is sampled.

Examples
--------
>>> noise = IntegerNoise(lo=-1, weights=(1, 2, 1), tail_scale=1.0)
>>> noise.hi, noise.total
(1, 4)
>>> noise.pmf([-2, -1, 0, 1, 2]).round(4).tolist()
[0.0581, 0.158, 0.5, 0.158, 0.0581]
>>> round(noise.mean_abs, 6)     # 2 · (1/4) · (1 + r/(1-r)), r = e^-1
0.790988
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import positive_finite
from ..errors import InvalidParameterError, ParameterTypeError
from ._accuracy import check_confidence
from ._additive import MAX_SCALE
from ._discrete_laplace_sampler import source_for
from ._integer_sampler import integer_noise

__all__ = ["IntegerNoise"]

#: Weights sum to at most this (uniform integers below it fit in int64 with room to spare).
TOTAL_LIMIT = 2**62
#: Quantised weights sum to about ``2**QUANTUM_BITS``.
QUANTUM_BITS = 61


def _check_weights(weights: object) -> tuple[int, ...]:
    if not isinstance(weights, Sequence) or isinstance(weights, (str, bytes)):
        raise ParameterTypeError(f"weights must be a sequence of integers, got {weights!r}")
    out = []
    for w in weights:
        if isinstance(w, (bool, np.bool_)) or not isinstance(w, numbers.Integral) or w < 0:
            raise InvalidParameterError(f"weights must be non-negative integers, got {w!r}")
        out.append(int(w))
    if len(out) < 3:
        raise InvalidParameterError(f"weights need a left tail, a core and a right tail (at "
                                    f"least 3 entries), got {len(out)}")
    if not 0 < sum(out) < TOTAL_LIMIT:
        raise InvalidParameterError(f"weights must sum to a positive integer below 2**62, got "
                                    f"{sum(out)}")
    return tuple(out)


@dataclass(frozen=True, kw_only=True)
class IntegerNoise:
    """A law on the integers: integer weights on a core and geometric tails (see the module).

    Attributes
    ----------
    lo : int
        Where the left tail starts (``<= -1``); the right tail starts at ``hi = lo + m``
        (``>= 1``), ``m + 1 = len(weights)``.
    weights : tuple of int
        ``(left tail mass, core weights for lo+1 .. hi-1, right tail mass)``, unnormalised.
    tail_scale : float
        λ of both tails, ``P(Z = hi + j) ∝ exp(-j/λ)``.

    Raises
    ------
    InvalidParameterError, ParameterTypeError
        Weights that are not non-negative integers summing to 1 .. 2**62 - 1, an offset that
        does not put 0 inside the core, a non-positive or huge tail scale.
    """

    lo: int
    weights: tuple[int, ...]
    tail_scale: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "weights", _check_weights(self.weights))
        if isinstance(self.lo, bool) or not isinstance(self.lo, numbers.Integral):
            raise ParameterTypeError(f"lo must be an integer, got {self.lo!r}")
        object.__setattr__(self, "lo", int(self.lo))
        if not (self.lo <= -1 and self.hi >= 1):
            raise InvalidParameterError(f"the core must contain 0: lo = {self.lo} <= -1 and "
                                        f"hi = {self.hi} >= 1 are needed")
        scale = positive_finite("tail_scale", self.tail_scale)
        if scale > MAX_SCALE:
            raise InvalidParameterError(f"tail_scale must be at most 2**52, got {scale!r}")
        object.__setattr__(self, "tail_scale", scale)

    @classmethod
    def quantise(cls, lo: int, masses: Any, tail_scale: float) -> IntegerNoise:
        """The law with weights ``round(masses / Σ masses · 2**61)`` (negative floats are 0).

        Examples
        --------
        >>> IntegerNoise.quantise(-1, [0.25, 0.5, 0.25], 2.0).weights == (2**59, 2**60, 2**59)
        True
        """
        m = np.clip(np.asarray(masses, dtype=float), 0.0, None)
        if m.ndim != 1 or not np.all(np.isfinite(m)) or m.sum() <= 0:
            raise InvalidParameterError("masses must be finite, with a positive sum")
        scaled = m / m.sum() * 2.0**QUANTUM_BITS
        return cls(lo=lo, weights=tuple(int(x) for x in np.rint(scaled)), tail_scale=tail_scale)

    @property
    def hi(self) -> int:
        """Where the right tail starts."""
        return self.lo + len(self.weights) - 1

    @property
    def total(self) -> int:
        """``N``, the sum of the weights."""
        return sum(self.weights)

    @property
    def ratio(self) -> float:
        """The tails' ratio ``r = exp(-1/λ)``."""
        return math.exp(-1.0 / self.tail_scale)

    @property
    def tail_masses(self) -> tuple[float, float]:
        """``(P(Z <= lo), P(Z >= hi))``."""
        return self.weights[0] / self.total, self.weights[-1] / self.total

    def log_pmf(self, z: Any) -> np.ndarray:
        """``log P(Z = z)`` for any integers (``-inf`` where the mass is 0), vectorised.

        In log space, tails included: ``log c - log N + log(1 - r) - j/λ`` never underflows.

        Examples
        --------
        >>> IntegerNoise(lo=-1, weights=(0, 1, 1), tail_scale=1.0).log_pmf([-5, 0]).tolist()
        [-inf, -0.6931471805599453]
        """
        z = np.asarray(z, dtype=np.int64)
        with np.errstate(divide="ignore"):
            logw = np.log(np.asarray(self.weights, dtype=float)) - math.log(self.total)
        log1mr = math.log(-math.expm1(-1.0 / self.tail_scale))
        inside = logw[np.clip(z - self.lo, 0, len(self.weights) - 1)]
        right = logw[-1] + log1mr - (z - self.hi) / self.tail_scale
        left = logw[0] + log1mr - (self.lo - z) / self.tail_scale
        return np.where(z >= self.hi, right, np.where(z <= self.lo, left, inside))

    def pmf(self, z: Any) -> np.ndarray:
        """``P(Z = z)`` for any integers, vectorised (tails included)."""
        return np.exp(self.log_pmf(z))

    def _tail_moments(self) -> tuple[float, float]:
        """``E J`` and ``E J²`` of the geometric offset into a tail."""
        r = self.ratio
        return r / (1 - r), r * (1 + r) / (1 - r) ** 2

    @property
    def mean_abs(self) -> float:
        """``E|Z|``, tails in closed form (``E J = r/(1-r)`` for the offset into a tail)."""
        core = np.abs(np.arange(self.lo + 1, self.hi)).astype(float)   # floats: no overflow
        ej, _ = self._tail_moments()
        left, right = self.tail_masses
        inner = float(np.dot(core, np.asarray(self.weights[1:-1], dtype=float))) / self.total
        return inner + left * (-self.lo + ej) + right * (self.hi + ej)

    @property
    def mean_square(self) -> float:
        """``E Z²``, tails in closed form."""
        core = np.arange(self.lo + 1, self.hi, dtype=float)
        ej, ej2 = self._tail_moments()
        left, right = self.tail_masses
        inner = float(np.dot(core ** 2, np.asarray(self.weights[1:-1], dtype=float))) / self.total
        return (inner + left * (self.lo ** 2 - 2 * self.lo * ej + ej2)
                + right * (self.hi ** 2 + 2 * self.hi * ej + ej2))

    def tail_probability(self, t: int) -> float:
        """``P(|Z| > t)`` for an integer ``t >= 0``.

        Examples
        --------
        >>> noise = IntegerNoise(lo=-1, weights=(1, 2, 1), tail_scale=1.0)
        >>> noise.tail_probability(0), round(noise.tail_probability(1), 6)
        (0.5, 0.18394)
        """
        t = int(t)
        core = np.arange(self.lo + 1, self.hi)
        inner = sum(w for z, w in zip(core.tolist(), self.weights[1:-1], strict=True)
                    if abs(z) > t) / self.total
        left, right = self.tail_masses
        r = self.ratio
        return inner + right * r ** max(t + 1 - self.hi, 0) + left * r ** max(t + 1 + self.lo, 0)

    def halfwidth(self, confidence: float) -> int:
        """The smallest integer ``h >= 0`` with ``P(|Z| <= h) >= confidence``."""
        conf = check_confidence(confidence)
        lo, hi = 0, max(self.hi, -self.lo)
        while self.tail_probability(hi) > 1 - conf:
            lo, hi = hi, 2 * hi
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (mid + 1, hi) if self.tail_probability(mid) > 1 - conf else (lo, mid)
        return lo

    def shift_loss(self, shift: int) -> float:
        """``max_z |log P(Z = z) / P(Z = z + shift)|`` over all integers: the ε of plain DP
        for answers that move by ``shift`` (``inf`` where one mass is 0 and the other not).

        Beyond ``[lo - shift, hi]`` both points lie in one tail and the ratio is
        ``e^{shift/λ}``; the points in between are evaluated one by one.

        Examples
        --------
        >>> round(IntegerNoise(lo=-1, weights=(1, 2, 1), tail_scale=1.0).shift_loss(1), 6)
        1.151822
        """
        s = abs(int(shift))
        z = np.arange(self.lo - s, self.hi + 1)
        a, b = self.log_pmf(z), self.log_pmf(z + s)
        both = np.isfinite(a) & np.isfinite(b)
        if np.any(np.isfinite(a) != np.isfinite(b)):
            return math.inf
        inner = float(np.max(np.abs(a[both] - b[both]), initial=0.0))
        tails = s / self.tail_scale if self.weights[0] or self.weights[-1] else 0.0
        return max(inner, tails)

    def sample(self, size: int | None = None, rng: np.random.Generator | None = None) -> Any:
        """Exact draws from the OS's secure randomness (``rng=None``) or, for tests only, a
        seeded Generator. Returns one int (``size=None``) or an int64 array.

        Examples
        --------
        >>> noise = IntegerNoise(lo=-1, weights=(1, 2, 1), tail_scale=1.0)
        >>> noise.sample(5, rng=np.random.default_rng(0)).tolist()
        [1, 1, 0, -4, -1]
        """
        count = 1 if size is None else int(size)
        draws = integer_noise(self.weights, self.lo, self.tail_scale, count, source_for(rng))
        return int(draws[0]) if size is None else draws
