"""A released (noisy) answer and how it was made: :class:`Release`.

Every release path of the library returns one (``Calibration.release``, the standalone
mechanisms); :meth:`Release.interval` reads the noise off the value's type, as
:func:`~pufferfish_pgm.noise.add_noise` chose it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InvalidDataError, LimitExceededError, ParameterTypeError
from ._accuracy import check_confidence, noise_halfwidth

__all__ = ["Release"]


@dataclass(frozen=True, kw_only=True)
class Release:
    """A released (noisy) answer and how it was made.

    Attributes
    ----------
    value : int, float or numpy.ndarray
        The noisy answer: one number, or one per user and/or per histogram bar.
    scale : float
        The Laplace scale of the noise added to every entry (0: no noise).
    epsilon : float
        The privacy parameter of the calibration.
    mechanism, query : str
        Names of the mechanism and the released statistic.
    coordinates : tuple of str
        Names of a vector's coordinates (the last axis of ``value``): a histogram's bars,
        ``'count(walk)@[0,60)'`` per window of a windowed query; empty for a scalar.

    Notes
    -----
    The noise is read from the type of ``value``, exactly as
    :func:`~pufferfish_pgm.noise.add_noise` chose it: integers carry exact discrete Laplace
    noise, P(k) proportional to exp(-|k| / scale); floats carry discrete Laplace noise on a
    power-of-two grid after the answer was rounded to it (the grid depends on the sensitivity,
    which a Release does not record; :meth:`interval` uses a bound valid for every sensitivity).

    Examples
    --------
    >>> rel = Release(value=10, scale=2.0, epsilon=0.5, mechanism="by hand", query="count(1)")
    >>> rel.interval(0.9)
    (5, 15)
    """

    value: Any
    scale: float
    epsilon: float
    mechanism: str
    query: str
    coordinates: tuple[str, ...] = field(default=(), repr=False)

    def interval(self, confidence: float = 0.95, *, simultaneous: bool = False) -> tuple[Any, Any]:
        """``(low, high)`` around :attr:`value` that holds the true answer with probability at
        least ``confidence``, over the noise (the true answer is fixed).

        Integer answers (counts, histograms): ``value -+ h`` with h the smallest integer with
        P(|Z| <= h) >= confidence for the discrete Laplace noise Z, so the coverage is exact up
        to the integer step. Real-valued answers (noise ``grid * K`` on add_noise's default
        grid, after rounding the answer to it): ``value -+ (-s' log(1 - confidence) + 1.5 g)``
        with ``s' = scale (1 + 2**-20)`` and ``g = default_grid(scale)``, a bound that holds
        for every sensitivity and is wider than the exact grid interval
        (:func:`pufferfish_pgm.noise.noise_halfwidth` with the sensitivity) by a relative
        ~1e-6. Scale 0: the exact answer, ``(value, value)``.

        The interval is around the value the noise was added to: a release whose value was
        transformed afterwards (``ContinuousSum(relative)``'s geometric mean) needs the
        transform applied to the interval of the noisy sum instead.

        Arrays (one answer per user, per bar, or both) get one interval per entry. By default
        each interval is **marginal**: each entry is covered with probability >= confidence,
        but not all entries at once. ``simultaneous=True`` widens every interval so that all
        entries are covered together with probability >= confidence (a Šidák split, exact for
        the independent noise of the entries: each at ``confidence ** (1/n)``).

        Returns ints for an int value, floats for a float value, else two arrays of the
        value's shape and dtype.

        Raises
        ------
        InvalidParameterError, ParameterTypeError
            ``confidence`` not a number strictly between 0 and 1 (NaN, bool or str included).

        Examples
        --------
        >>> import numpy as np
        >>> rel = Release(value=np.array([3, 7]), scale=1.0, epsilon=1.0, mechanism="m",
        ...               query="q")
        >>> [a.tolist() for a in rel.interval(0.9)]
        [[1, 5], [5, 9]]
        >>> [a.tolist() for a in rel.interval(0.9, simultaneous=True)]
        [[0, 4], [6, 10]]
        """
        conf = check_confidence(confidence)
        if not isinstance(simultaneous, (bool, np.bool_)):
            raise ParameterTypeError(f"simultaneous must be True or False, got {simultaneous!r}")
        values = np.asarray(self.value)
        if values.dtype.kind not in "iuf":
            raise InvalidDataError(f"this release's value {self.value!r} is not numeric; an "
                                   "interval needs a numeric value")
        integer = values.dtype.kind in "iu"
        n = values.size if simultaneous else 1
        half = noise_halfwidth(self.scale, conf, integer=integer, coordinates=n)
        if integer:
            if values.size and int(np.abs(values).max()) + int(half) >= 2**63:
                raise LimitExceededError(f"the interval half-width {half} overflows int64 for "
                                         "this release; its scale is too large to be useful")
            low: np.ndarray = values - np.int64(half)
            high: np.ndarray = values + np.int64(half)
        else:
            low, high = values - half, values + half
        if low.ndim == 0:
            return low.item(), high.item()
        return low, high
