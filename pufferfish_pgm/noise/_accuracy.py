"""Accuracy of the noise :func:`~pufferfish_pgm.noise.add_noise` adds: confidence half-widths.

For a discrete Laplace variable Z with P(k) = (1 - q) / (1 + q) * q**|k|, q = exp(-1 / scale),
the tail beyond h is a geometric series::

    P(|Z| > h) = 2 * (1 - q) / (1 + q) * sum_{k > h} q**k = 2 * q**(h + 1) / (1 + q),

so the smallest integer h with P(|Z| <= h) >= confidence is the smallest h >= 0 with
(h + 1) / scale >= log(2 / ((1 - confidence) * (1 + q))). For continuous Laplace(scale),
P(|X| > t) = exp(-t / scale) and the half-width is ``-scale * log(1 - confidence)``.

A floating answer released by :func:`add_noise` is the answer rounded to the grid (an error of
at most grid / 2) plus ``grid * K`` with K discrete Laplace at :func:`grid_noise_scale`; its
half-width is ``grid * (h + 1/2)`` with h the discrete half-width of K.

Examples
--------
>>> discrete_laplace_halfwidth(1.0, 0.9)
2
>>> round(laplace_halfwidth(1.0, 0.9), 6)
2.302585
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .._validation import positive_finite
from ..errors import InvalidParameterError, ParameterTypeError
from ._additive import MAX_SCALE, _noise_scale, default_grid, grid_noise_scale

__all__ = [
    "check_confidence", "discrete_laplace_halfwidth", "discrete_laplace_tail",
    "laplace_halfwidth", "noise_halfwidth",
]  # fmt: skip


def check_confidence(confidence: object) -> float:
    """``confidence`` as a float strictly between 0 and 1, else a clear error naming it.

    Examples
    --------
    >>> check_confidence(0.95)
    0.95
    >>> check_confidence(1)
    Traceback (most recent call last):
    ...
    pufferfish_pgm.errors.InvalidParameterError: confidence must be strictly between 0 and 1, ...
    """
    if isinstance(confidence, (bool, np.bool_)) or not isinstance(confidence, numbers.Real):
        raise ParameterTypeError(
            f"confidence must be a probability, got the {type(confidence).__name__} "
            f"{confidence!r}; pass a float such as confidence=0.95"
        )
    out = float(confidence)
    if not 0.0 < out < 1.0:  # also refuses NaN
        raise InvalidParameterError(
            f"confidence must be strictly between 0 and 1, got {out!r}; pass a float such as "
            "confidence=0.95"
        )
    return out


def _tail(confidence: float, coordinates: int) -> float:
    """Per-coordinate tail probability; Šidák split over independent coordinates."""
    if coordinates <= 1:
        return 1.0 - confidence  # exact in floats for confidence >= 1/2
    # (1 - tail)**n = confidence, i.e. tail = 1 - confidence**(1/n); rounded down so that the
    # product of the coordinates' coverages is never below confidence
    tail = -math.expm1(math.log(confidence) / coordinates)
    return math.nextafter(tail, 0.0)


def discrete_laplace_tail(scale: float, halfwidth: int) -> float:
    """P(|Z| > halfwidth) for the discrete Laplace Z with P(k) proportional to exp(-|k|/scale).

    Examples
    --------
    >>> round(discrete_laplace_tail(1.0, 0), 6)   # 1 - P(0) = 1 - (1 - q) / (1 + q)
    0.537883
    """
    q = math.exp(-1.0 / scale)
    return 2.0 * math.exp(-(halfwidth + 1) / scale) / (1.0 + q)


def _discrete_halfwidth_for_tail(scale: float, tail: float) -> int:
    q = math.exp(-1.0 / scale)
    # smallest h >= 0 with (h + 1) / scale >= log 2 - log(1 + q) - log(tail)
    bound = scale * (math.log(2.0) - math.log1p(q) - math.log(tail)) - 1.0
    h = max(0, math.ceil(bound))
    while h > 0 and discrete_laplace_tail(scale, h - 1) <= tail:  # float rounding in bound
        h -= 1
    while discrete_laplace_tail(scale, h) > tail:
        h += 1
    return h


def discrete_laplace_halfwidth(scale: float, confidence: float, coordinates: int = 1) -> int:
    """Smallest integer h with P(|Z| <= h) >= ``confidence``, Z discrete Laplace(``scale``).

    With ``coordinates`` = n > 1, the h for which n independent draws are all within h with
    probability at least ``confidence`` (each at ``confidence ** (1/n)``).

    Examples
    --------
    >>> [discrete_laplace_halfwidth(s, 0.95) for s in (0.5, 1.0, 2.0, 10.0)]
    [1, 3, 6, 30]
    """
    s = _noise_scale("scale", scale)
    return _discrete_halfwidth_for_tail(s, _tail(check_confidence(confidence), coordinates))


def laplace_halfwidth(scale: float, confidence: float, coordinates: int = 1) -> float:
    """``-scale * log(1 - confidence)``: the half-width of continuous Laplace(``scale``).

    Examples
    --------
    >>> laplace_halfwidth(2.0, 0.5) == 2.0 * math.log(2.0)
    True
    """
    s = positive_finite("scale", scale)
    return -s * math.log(_tail(check_confidence(confidence), coordinates))


def noise_halfwidth(
    scale: float,
    confidence: float,
    *,
    integer: bool,
    sensitivity: float | None = None,
    grid: float | None = None,
    coordinates: int = 1,
) -> int | float:
    """Half-width h such that ``add_noise(answer, scale, ...)`` is within h of ``answer`` with
    probability at least ``confidence`` (jointly over ``coordinates`` entries).

    Parameters
    ----------
    scale : float
        The scale passed to :func:`add_noise`; 0 means no noise was added (h = 0).
    confidence : float
        In (0, 1).
    integer : bool
        Whether the answer had an integer type (exact discrete Laplace on the integers) or a
        floating type (discrete Laplace on a grid after rounding to it).
    sensitivity, grid : float, optional
        What was passed to :func:`add_noise` (floating answers only; ``grid=None`` is the
        default grid). Without ``sensitivity`` the bound holds for every sensitivity with the
        default grid, and is wider by a relative ~2**-20 than the exact one: the noise is
        ``g * K`` with ``g <= scale * 2**-20`` and ``g * scale(K) <= scale * (1 + 2**-20)``,
        and P(|g K| > t) <= exp(-(t - g) / (g * scale(K))).
    coordinates : int
        Number of independent noisy entries that must all be covered (Šidák split).

    Examples
    --------
    >>> noise_halfwidth(2.0, 0.9, integer=True)
    5
    >>> noise_halfwidth(1.0, 0.9, integer=False, sensitivity=1.0, grid=0.25)  # 0.25 * (11 + 1/2)
    2.875
    """
    conf = check_confidence(confidence)
    if isinstance(scale, (bool, np.bool_)) or not isinstance(scale, numbers.Real):
        raise ParameterTypeError(f"scale must be a real number, got {scale!r}")
    if scale == 0:
        return 0 if integer else 0.0
    tail = _tail(conf, coordinates)
    s = positive_finite("scale", scale)
    if integer:
        return _discrete_halfwidth_for_tail(_noise_scale("scale", s), tail)
    if sensitivity is None:
        if grid is not None:
            raise InvalidParameterError(
                "a grid without the sensitivity does not determine the noise; pass both"
            )
        g = default_grid(s)  # the largest grid add_noise can use for this scale
        sigma = s * (1.0 + 2.0**-20) * (1.0 + 2.0**-50)  # g * scale(K), rounded up
        return -sigma * math.log(tail) + 1.5 * g
    delta = positive_finite("sensitivity", sensitivity)
    g = default_grid(min(s, delta)) if grid is None else positive_finite("grid", grid)
    ratio = grid_noise_scale(s, delta, g)
    if ratio > MAX_SCALE:  # pragma: no cover - grid_noise_scale raises first
        raise InvalidParameterError(f"scale / grid is too large: {ratio!r}")
    return g * (_discrete_halfwidth_for_tail(ratio, tail) + 0.5)
