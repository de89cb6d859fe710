"""Noise samplers, secure by default.

Every mechanism releases through :func:`add_noise`. The noise is the exact discrete Laplace
distribution, P(k) proportional to exp(-|k| / scale) on the integers, sampled with the
rejection method of Canonne, Kamath and Steinke (2020, "The Discrete Gaussian for Differential
Privacy", Algorithms 1 and 2). The scale, a float, is turned into the exact rational
``fractions.Fraction(scale)`` and every random decision is made by comparing uniform integers,
so no floating-point rounding ever enters the sampled distribution.

Randomness: with ``rng=None`` (the default) every random byte comes from ``secrets.token_bytes``,
the operating system's cryptographically secure source. Passing a ``numpy.random.Generator``
makes the draws reproducible; that is meant for tests and experiments, NOT for production
releases, because a seeded generator is predictable. Both paths run the same code; only the
source of random bytes differs.

Real-valued answers are released on a grid (a power of two), so that a released float is a
function of an integer only and cannot leak the unrounded answer through its low bits (the
floating-point attack on textbook Laplace noise).

Examples
--------
>>> import numpy as np
>>> from pufferfish_pgm.noise import add_noise, sample_discrete_laplace
>>> sample_discrete_laplace(3.0, size=5, rng=np.random.default_rng(0))
array([ 7, -2,  2,  4,  1])
>>> add_noise(np.array([10, 20, 30]), 2.0, rng=np.random.default_rng(0))
array([ 9, 22, 27])
"""

from __future__ import annotations

import math
import numbers
import secrets
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from ._checks import positive_finite
from .errors import InvalidDataError, InvalidParameterError, LimitExceededError, ParameterTypeError

__all__ = [
    "GRID_BITS", "MAX_SCALE", "add_noise", "default_grid", "sample_discrete_laplace",
    "sample_laplace",
]  # fmt: skip

#: The default grid is the largest power of two no larger than ``scale * 2**-GRID_BITS``.
GRID_BITS: int = 20
#: Largest discrete-Laplace scale accepted (in units of the grid for real-valued noise). Beyond
#: it a draw could overflow 64-bit integers with non-negligible probability.
MAX_SCALE: float = 2.0**52

_I64_MAX = 2**63 - 1
_DRAW_LIMIT = 2**62  # |draw| >= this raises (probability below exp(-1000) at MAX_SCALE)
_WORD_TYPES = (np.uint8, np.uint16, np.uint32, np.uint64)
_SMALL_BATCH = 32  # below this many entries, uniform integers are drawn one by one


class _Source:
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
            bounds = [int(bound)] * count if np.ndim(bound) == 0 else bound.tolist()
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


def _source_for(rng: np.random.Generator | None) -> _Source:
    """The random source: OS randomness for ``None``, else the given numpy Generator."""
    if rng is None:
        return _Source(secrets.token_bytes)
    if isinstance(rng, np.random.Generator):
        return _Source(rng.bytes)
    raise ParameterTypeError(
        f"rng must be None (secure OS randomness) or a numpy.random.Generator, got the "
        f"{type(rng).__name__} {rng!r}; for reproducible runs pass numpy.random.default_rng(seed)"
    )


def _bernoulli_exp(src: _Source, num: np.ndarray, den: int) -> np.ndarray:
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


def _geometric_exp1(src: _Source, count: int) -> np.ndarray:
    """Successes before the first failure of Bernoulli(exp(-1)): P(v) = (1 - 1/e) e^-v."""
    v = np.zeros(count, dtype=np.int64)
    todo = np.arange(count)
    while todo.size:
        todo = todo[_bernoulli_exp(src, np.ones(todo.size, dtype=np.int64), 1)]
        v[todo] += 1
    return v


def _floor_ratio(u: np.ndarray, v: np.ndarray, n: int, d: int) -> np.ndarray:
    """``(u + n * v) // d`` per entry, exactly, without int64 overflow."""
    safe = v <= (_I64_MAX - u) // n
    y = np.zeros(u.size, dtype=np.int64)
    if d <= _I64_MAX:
        y[safe] = (u[safe] + n * v[safe]) // d
    # else u + n * v < 2**63 <= d for the safe entries, so their quotient is 0.
    for i in np.flatnonzero(~safe):  # needs v > 2**9: probability below exp(-500)
        y[i] = min((int(u[i]) + n * int(v[i])) // d, _I64_MAX)
    return y


def _accepted_draws(src: _Source, n: int, d: int, trials: int) -> np.ndarray:
    """One round of CKS Algorithm 2 on ``trials`` candidates; the accepted draws, in order."""
    u = src.below(n, trials)
    u = u[_bernoulli_exp(src, u, n)]  # u + n * v is then geometric: P(x) ~ exp(-x / n)
    y = _floor_ratio(u, _geometric_exp1(src, u.size), n, d)  # P(y) ~ exp(-y d / n)
    negative = src.below(2, y.size) == 1
    ok = ~negative | (y != 0)  # reject "-0" so that 0 is not counted twice
    return np.where(negative, -y, y)[ok]


def _discrete_laplace(scale: float, count: int, src: _Source) -> np.ndarray:
    """``count`` exact discrete Laplace draws with scale ``scale`` = n / d (CKS Algorithm 2).

    Vectorised: each round runs the rejection sampler on a whole batch of independent
    candidates, sized from the acceptance rate so that one or two rounds usually suffice, and
    keeps the first accepted draws. Which candidates are kept depends only on the accept
    decisions, never on the values, so the kept draws are independent and exactly distributed.
    """
    n, d = Fraction(scale).as_integer_ratio()  # n < 2**63 because scale <= MAX_SCALE
    # P(accept) = P(keep u) * P(not "-0"); an estimate in floats only affects the speed.
    rate = -math.expm1(-1) / (n * -math.expm1(-1 / n)) * (1 + math.exp(-1 / scale)) / 2
    parts, missing = [], count
    while missing > 0:
        parts.append(_accepted_draws(src, n, d, int(missing / rate * 1.1) + 16)[:missing])
        missing -= parts[-1].size
    out = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    if count and int(np.abs(out).max()) >= _DRAW_LIMIT:
        raise LimitExceededError(f"a discrete Laplace draw at scale {scale!r} reached 2**62")
    return out


def _noise_scale(name: str, value: object) -> float:
    out = positive_finite(name, value)
    if out > MAX_SCALE:
        raise LimitExceededError(
            f"{name} must be at most 2**52, got {out!r}; use a coarser grid or a smaller scale"
        )
    return out


def _shape(size: object) -> tuple[int, ...] | None:
    """Normalise ``size`` (None, an int or a sequence of ints) to a shape tuple."""
    if size is None:
        return None
    dims = tuple(size) if np.ndim(size) else (size,)
    for dim in dims:
        if isinstance(dim, (bool, np.bool_)) or not isinstance(dim, numbers.Integral):
            raise ParameterTypeError(
                f"size must be None, an int or a tuple of ints, got {size!r}; e.g. size=1000"
            )
        if dim < 0:
            raise InvalidParameterError(f"size must not be negative, got {size!r}")
    return tuple(int(dim) for dim in dims)


def _power_of_two(name: str, value: object) -> float:
    out = positive_finite(name, value)
    if math.frexp(out)[0] != 0.5 or out < 2.0**-1000:
        raise InvalidParameterError(
            f"{name} must be a power of two such as 2**-10, got {out!r}; rounding to a power "
            f"of two keeps grid points exact floats (try {name}={2.0 ** round(math.log2(out))!r})"
        )
    return out


def default_grid(scale: float) -> float:
    """The default grid for real-valued noise: the largest power of two <= ``scale * 2**-20``.

    Examples
    --------
    >>> default_grid(1.0)
    9.5367431640625e-07
    >>> default_grid(3.0) == 2.0**-19
    True
    """
    exponent = math.frexp(positive_finite("scale", scale))[1]  # 2**(exponent-1) <= scale
    if exponent - 1 - GRID_BITS < -1000:
        raise InvalidParameterError(f"scale must be at least 2**-979 for a grid, got {scale!r}")
    return math.ldexp(1.0, exponent - 1 - GRID_BITS)


def sample_discrete_laplace(
    scale: float, size: int | tuple[int, ...] | None = None, rng: np.random.Generator | None = None
) -> int | np.ndarray:
    """Draw integers k with P(k) proportional to exp(-|k| / scale), exactly.

    Parameters
    ----------
    scale : float
        Positive and finite, at most ``2**52``. Used as the exact rational ``Fraction(scale)``.
    size : int or tuple of int, optional
        Shape of the output; ``None`` returns one Python int.
    rng : numpy.random.Generator, optional
        ``None`` (default) draws from the OS's secure source (``secrets``). A Generator gives
        reproducible draws for tests and experiments; do not use one in production.

    Returns
    -------
    int or numpy.ndarray
        A Python int when ``size`` is None, else an int64 array of shape ``size``.

    Examples
    --------
    >>> import numpy as np
    >>> sample_discrete_laplace(1.0, size=(2, 3), rng=np.random.default_rng(0))
    array([[0, 0, 3],
           [1, 0, 2]])
    >>> isinstance(sample_discrete_laplace(1.0), int)
    True
    """
    shape = _shape(size)
    count = math.prod(shape or ())  # one draw when size is None
    draws = _discrete_laplace(_noise_scale("scale", scale), count, _source_for(rng))
    return int(draws[0]) if shape is None else draws.reshape(shape)


def sample_laplace(
    scale: float,
    size: int | tuple[int, ...] | None = None,
    rng: np.random.Generator | None = None,
    grid: float | None = None,
) -> float | np.ndarray:
    """Draw Laplace(scale) noise on a grid: ``grid * sample_discrete_laplace(scale / grid)``.

    Parameters
    ----------
    scale : float
        Positive and finite.
    size, rng
        As for :func:`sample_discrete_laplace`.
    grid : float, optional
        A power of two; default :func:`default_grid` (``scale * 2**-20`` rounded down to a power
        of two). ``scale / grid`` must be at most ``2**52``.

    Returns
    -------
    float or numpy.ndarray
        Multiples of ``grid`` (exact floats whenever the multiple is below ``2**53``).

    Examples
    --------
    >>> import numpy as np
    >>> sample_laplace(1.0, size=3, rng=np.random.default_rng(0), grid=0.25)
    array([-0.75,  0.  , -1.25])
    """
    s = positive_finite("scale", scale)
    g = default_grid(s) if grid is None else _power_of_two("grid", grid)
    k = sample_discrete_laplace(_noise_scale("scale / grid", s / g), size, rng)
    return float(k) * g if isinstance(k, int) else k.astype(np.float64) * g


def add_noise(
    answer: float | np.ndarray,
    scale: float,
    rng: np.random.Generator | None = None,
    sensitivity: float = 1.0,
    grid: float | None = None,
) -> int | float | np.ndarray:
    """Release ``answer`` plus noise with the guarantee of Laplace(scale) at ``sensitivity``.

    Integer types (Python int, numpy integer dtypes) get exact discrete Laplace(scale) noise and
    stay integers: the discrete Laplace pmf at each integer is proportional to the Laplace
    density there, and neighbouring integer answers differ by integers, so the privacy loss is
    that of continuous Laplace(scale). Floating types are rounded to ``grid`` and get discrete
    noise on the grid; rounding moves each answer by at most grid/2, so neighbouring answers can
    differ by ``sensitivity + grid`` and the scale is inflated to
    ``scale * (sensitivity + grid) / sensitivity`` (rounded up to a float). The path is chosen
    from the TYPE, never from the values, so that it cannot reveal which dataset was used: a
    float answer equal to 3.0 still takes the grid path.

    Parameters
    ----------
    answer : int, float or array_like of them
        The exact query answer (finite).
    scale : float
        The Laplace scale the mechanism calibrated (sensitivity / epsilon for plain DP).
    rng : numpy.random.Generator, optional
        ``None`` (default) is the OS's secure source; a Generator is reproducible, not secure.
    sensitivity : float
        How much the answer can move between the neighbours being protected.
    grid : float, optional
        A power of two; only used for floating answers. Default
        ``default_grid(min(scale, sensitivity))``.

    Returns
    -------
    int, float or numpy.ndarray
        Same shape as ``answer``; int64 for integer answers, else float64 multiples of ``grid``.

    Examples
    --------
    >>> import numpy as np
    >>> add_noise(7, 2.0, rng=np.random.default_rng(0))
    8
    >>> add_noise(0.3, 1.0, rng=np.random.default_rng(0), grid=2.0**-4)
    1.9375
    """
    s = positive_finite("scale", scale)
    delta = positive_finite("sensitivity", sensitivity)
    values = _as_answer(answer)
    src = _source_for(rng)
    if values.dtype.kind in "iu":
        out = _integer_release(values, s, src)
    else:
        g = default_grid(min(s, delta)) if grid is None else _power_of_two("grid", grid)
        out = _grid_release(values.astype(np.float64), s, delta, g, src)
    return out.item() if out.ndim == 0 else out


def _as_answer(answer: object) -> np.ndarray:
    try:
        values = np.asarray(answer)
    except (OverflowError, ValueError) as err:
        raise InvalidDataError(f"answer must be numeric, got {answer!r}") from err
    if values.dtype == object and all(type(v) is int for v in values.ravel()):
        raise InvalidDataError(f"integer answers must lie within +-2**62, got {answer!r}")
    if values.dtype.kind not in "iuf":
        raise ParameterTypeError(
            f"answer must be an int, a float or an array of them, got {answer!r} "
            f"(dtype {values.dtype}); convert booleans and objects to numbers first"
        )
    if values.dtype.kind == "f" and not np.all(np.isfinite(values)):
        bad = values[~np.isfinite(values)].ravel()[0]
        raise InvalidDataError(f"answer must be finite, got the entry {bad!r}")
    return values


def _integer_release(values: np.ndarray, scale: float, src: _Source) -> np.ndarray:
    if values.size and (values.max() > _DRAW_LIMIT or values.min() < -_DRAW_LIMIT):
        raise InvalidDataError("integer answers must lie within +-2**62 to add noise safely")
    noise = _discrete_laplace(_noise_scale("scale", scale), values.size, src)
    return values.astype(np.int64) + noise.reshape(values.shape)


def _grid_release(
    values: np.ndarray, scale: float, delta: float, grid: float, src: _Source
) -> np.ndarray:
    """Round to the grid, add discrete noise in grid units, return float multiples of grid."""
    inflated = Fraction(scale) * (Fraction(delta) + Fraction(grid)) / (Fraction(delta) * grid)
    ratio = float(inflated)
    if Fraction(ratio) < inflated:  # round the scale up: more noise never weakens privacy
        ratio = math.nextafter(ratio, math.inf)
    noise = _discrete_laplace(_noise_scale("scale / grid", ratio), values.size, src)
    points = np.rint(values / grid)  # exact: grid is a power of two
    if not np.all(np.isfinite(points)):
        raise InvalidDataError(f"answer / grid overflows float64 for grid={grid!r}; rescale")
    if points.size and np.abs(points).max() <= _DRAW_LIMIT:
        total = points.astype(np.int64) + noise.reshape(points.shape)
    else:  # huge answers against a fine grid: exact sums in Python integers
        total = np.array(
            [int(p) + int(k) for p, k in zip(points.ravel(), noise, strict=True)], dtype=object
        ).reshape(points.shape)
    out = total.astype(np.float64) * grid  # a function of the integer total only
    if not np.all(np.isfinite(out)):
        raise InvalidDataError("the noisy answer overflows float64; rescale the answer")
    return out
