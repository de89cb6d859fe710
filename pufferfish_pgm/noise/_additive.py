"""Noise samplers, secure by default.

Every mechanism releases through :func:`add_noise`. The noise is the exact discrete Laplace
distribution, P(k) proportional to exp(-|k| / scale) on the integers, sampled with the
rejection method of Canonne, Kamath and Steinke (2020, "The Discrete Gaussian for Differential
Privacy", Algorithms 1 and 2; the sampler lives in the private module ``_cks``). The scale, a
float, is turned into the exact rational ``fractions.Fraction(scale)`` and every random
decision is made by comparing uniform integers, so no floating-point rounding ever enters the
sampled distribution.

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
from fractions import Fraction
from typing import Any

import numpy as np

from .._validation import positive_finite
from ..errors import InvalidDataError, InvalidParameterError, LimitExceededError, ParameterTypeError
from ._discrete_laplace_sampler import DRAW_LIMIT as _DRAW_LIMIT
from ._discrete_laplace_sampler import Source as _Source
from ._discrete_laplace_sampler import discrete_laplace as _discrete_laplace
from ._discrete_laplace_sampler import source_for as _source_for

__all__ = [
    "GRID_BITS", "MAX_SCALE", "add_noise", "default_grid", "grid_noise_scale",
    "sample_discrete_laplace", "sample_laplace",
]  # fmt: skip

#: The default grid is the largest power of two no larger than ``scale * 2**-GRID_BITS``.
GRID_BITS: int = 20
#: Largest discrete-Laplace scale accepted (in units of the grid for real-valued noise). Beyond
#: it a draw could overflow 64-bit integers with non-negligible probability.
MAX_SCALE: float = 2.0**52


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
    given: Any = size  # whatever the caller passed; every dimension is checked below
    dims = tuple(given) if np.ndim(given) else (given,)
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


def grid_noise_scale(scale: float, sensitivity: float, grid: float) -> float:
    """The discrete Laplace scale, in units of ``grid``, that :func:`add_noise` draws for a
    floating answer: ``scale * (sensitivity + grid) / (sensitivity * grid)`` rounded up.

    Examples
    --------
    >>> grid_noise_scale(1.0, 1.0, 0.25)
    5.0
    """
    exact = Fraction(scale) * (Fraction(sensitivity) + Fraction(grid)) / (
        Fraction(sensitivity) * Fraction(grid))
    ratio = float(exact)
    if Fraction(ratio) < exact:  # round the scale up: more noise never weakens privacy
        ratio = math.nextafter(ratio, math.inf)
    return _noise_scale("scale / grid", ratio)


def _grid_release(
    values: np.ndarray, scale: float, delta: float, grid: float, src: _Source
) -> np.ndarray:
    """Round to the grid, add discrete noise in grid units, return float multiples of grid."""
    noise = _discrete_laplace(grid_noise_scale(scale, delta, grid), values.size, src)
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
