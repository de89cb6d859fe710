"""Sums of unbounded continuous attributes (``002_*`` §7.1, Lemma 7.1).

**What is protected (absolute error).** For every record ``i`` and every ``x``, an attacker
cannot tell "``t_i`` lies in ``[x - k, x + k)``" from the neighbouring "``t_i`` lies in
``[x + k, x + 3k)``" by more than a factor ``e^ε``, whatever independent distributions the
records have (``002_*`` eq. 8-10): the value is hidden to within ``±k``, while no bound on the
values is needed. Two values from neighbouring intervals differ by less than ``4k``, so the
sum is released with Laplace noise of scale ``4k/ε`` (Lemma 7.1).

**What is protected (relative error, ``relative=True``).** The same is done to ``log t_i``
(``002_*`` §7.1.2): ``t_i`` cannot be told to lie in ``[y e^{-k}, y e^{k})`` rather than in
the neighbouring ``[y e^{k}, y e^{3k})`` — the paper's factor is ``c = e^{-k}``, see
:meth:`ContinuousSum.from_factor`. The released statistic is
``A = sum_i log t_i + X`` with ``X ~ Laplace(4k/ε)``; transformed back, ``exp(A / n)`` is the
geometric mean of the values times the multiplicative noise ``e^{X/n}`` (``n``, the number of
records, is public in this setting: the records of ``h_1..h_n`` are known to be in the data).

Noise is drawn by :func:`pufferfish_pgm.noise.add_noise` (secure by default; a seeded
``rng`` is reproducible and not for production). The release is the shared
:class:`~pufferfish_pgm.queries._encoding.Release`: ``value`` is the noisy sum, or the noisy
geometric mean ``exp(A / n)``, and nothing else about the data is returned (the exact sum never
is). ``A`` itself is not returned either: ``n * log(value)`` recovers it up to rounding.

Examples
--------
>>> import numpy as np
>>> m = ContinuousSum(epsilon=1.0, k=1000.0)
>>> m.scale
4000.0
>>> rel = m.release([52000.0, 61000.0, 38000.0], rng=np.random.default_rng(0))
>>> rel.mechanism, rel.query, rel.scale
('ContinuousSum', 'sum', 4000.0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validation import positive_finite
from ..errors import InvalidDataError, InvalidParameterError, ParameterTypeError
from ..noise import Release, add_noise

__all__ = ["ContinuousSum"]


def _validated_values(values: object, relative: bool) -> np.ndarray:
    raw = np.asarray(values)
    if raw.dtype.kind not in "iuf" or raw.ndim != 1:
        raise InvalidDataError(
            f"values must be a 1-D sequence of real numbers, got {values!r} (dtype "
            f"{raw.dtype}, shape {raw.shape})"
        )
    if raw.size == 0:
        raise InvalidDataError("values is empty; pass at least one record")
    data = raw.astype(np.float64)
    bad = np.flatnonzero(~np.isfinite(data) | ((data <= 0) if relative else False))
    if bad.size:
        i = int(bad[0])
        need = "finite and > 0 (relative error works on logarithms)" if relative else "finite"
        raise InvalidDataError(
            f"values[{i}] = {raw[i].item()!r} is invalid: values must be {need}"
        )
    return data


def _geometric_mean(log_sum: float, n: int) -> float:
    try:
        return math.exp(log_sum / n)
    except OverflowError:
        return math.inf


@dataclass(frozen=True, kw_only=True)
class ContinuousSum:
    """Release the sum of a continuous attribute, hiding each value to within ``±k``.

    Parameters
    ----------
    epsilon : float
        Privacy parameter, > 0.
    k : float
        Half-width of the protected interval, > 0: in the values' units, or for
        ``relative=True`` in natural-log units (values hidden to within a factor ``e^k``).
    relative : bool
        Protect relative instead of absolute error (work on ``log`` values).

    Examples
    --------
    >>> ContinuousSum(epsilon=0.5, k=2.0).scale   # 4k / ε
    16.0
    >>> ContinuousSum.from_factor(epsilon=1.0, c=0.5).k == math.log(2.0)
    True
    """

    epsilon: float
    k: float
    relative: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", positive_finite("epsilon", self.epsilon))
        object.__setattr__(self, "k", positive_finite("k", self.k))
        if not isinstance(self.relative, bool):
            raise ParameterTypeError(f"relative must be True or False, got {self.relative!r}")

    @classmethod
    def from_factor(cls, *, epsilon: float, c: float) -> ContinuousSum:
        """Relative-error mechanism of ``002_*`` §7.1.2 with factor ``c`` in (0, 1).

        Values are hidden within ``[c y, y / c]``: ``k = log(1 / c)`` on the log scale.
        """
        factor = positive_finite("c", c)
        if factor >= 1.0:
            raise InvalidParameterError(f"c must lie in (0, 1), got {factor!r}; try c=0.5")
        return cls(epsilon=epsilon, k=-math.log(factor), relative=True)

    @property
    def sensitivity(self) -> float:
        """``4k``: how far the sum moves between the two secrets of a pair (Lemma 7.1)."""
        return 4.0 * self.k

    @property
    def scale(self) -> float:
        """Laplace scale ``4k / ε`` (``002_*`` Lemma 7.1)."""
        return self.sensitivity / self.epsilon

    def release(self, values: object, rng: np.random.Generator | None = None) -> Release:
        """Add noise to the sum of ``values`` (or of their logs) and return the release.

        Parameters
        ----------
        values : array_like
            One value per record: finite, and > 0 when ``relative``.
        rng : numpy.random.Generator, optional
            ``None`` draws from the OS's secure source; a Generator is reproducible only.

        Returns
        -------
        Release
            ``value``: the noisy sum ``sum t_i + X`` (query ``"sum"``), or for ``relative`` the
            noisy geometric mean ``exp((sum log t_i + X) / n)`` (query ``"geometric_mean"``),
            where ``X`` is Laplace(``scale``) noise on the grid of
            :func:`~pufferfish_pgm.noise.add_noise`; ``scale`` = 4k/ε, the scale of ``X``;
            ``mechanism``: ``"ContinuousSum"`` or ``"ContinuousSum(relative)"``.

        Raises
        ------
        InvalidDataError
            Naming the first bad row and its value.

        Examples
        --------
        >>> import numpy as np
        >>> rel = ContinuousSum.from_factor(epsilon=1.0, c=0.5).release(
        ...     [2.0, 8.0], rng=np.random.default_rng(0))
        >>> rel.query, rel.mechanism, 1.0 < rel.value < 16.0
        ('geometric_mean', 'ContinuousSum(relative)', True)
        """

        data = _validated_values(values, self.relative)
        exact = float(np.sum(np.log(data) if self.relative else data))
        noisy = float(add_noise(exact, self.scale, rng=rng, sensitivity=self.sensitivity))
        name = "ContinuousSum(relative)" if self.relative else "ContinuousSum"
        if self.relative:  # post-processing: a function of the noisy answer and the public n
            value, query = _geometric_mean(noisy, data.size), "geometric_mean"
        else:
            value, query = noisy, "sum"
        return Release(
            value=value, scale=self.scale, epsilon=self.epsilon, mechanism=name, query=query
        )
