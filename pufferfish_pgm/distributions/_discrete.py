"""The validated finite distribution behind :mod:`pufferfish_pgm.distributions` (internal).

Import it from :mod:`pufferfish_pgm.distributions`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from .._tolerances import PROBABILITY_SUM
from ..errors import InvalidModelError, InvalidParameterError, ParameterTypeError

__all__ = ["DiscreteDistribution", "as_distribution"]

_SUM_TOLERANCE = PROBABILITY_SUM


def _float_array(name: str, values: object) -> np.ndarray:
    """``values`` as a 1-D float64 array, refusing strings, booleans and ragged input."""
    raw = np.asarray(values)
    if raw.dtype.kind not in "iuf":
        raise ParameterTypeError(
            f"{name} must hold real numbers, got dtype {raw.dtype} ({values!r}); pass a "
            f"list or numpy array of floats"
        )
    if raw.ndim != 1 or raw.size == 0:
        raise InvalidModelError(
            f"{name} must be a non-empty 1-D array, got shape {raw.shape}; a distribution "
            f"needs at least one support point with positive probability"
        )
    return raw.astype(np.float64)


def _check_support(support: np.ndarray) -> None:
    bad = np.flatnonzero(~np.isfinite(support))
    if bad.size:
        raise InvalidModelError(
            f"support point {float(support[bad[0]])!r} (index {bad[0]}) is not finite; every "
            f"value of a distribution must be a finite real number"
        )


def _check_probs(support: np.ndarray, probs: np.ndarray, strict: bool) -> None:
    bad = np.flatnonzero(~np.isfinite(probs) | (probs <= 0 if strict else probs < 0))
    if bad.size:
        k = bad[0]
        need = "> 0 (drop zero-probability points)" if strict else ">= 0"
        raise InvalidModelError(
            f"probability {float(probs[k])!r} of value {float(support[k])!r} is invalid: "
            f"probabilities must be finite and {need}"
        )
    total = float(np.sum(probs))
    if abs(total - 1.0) > _SUM_TOLERANCE:
        raise InvalidModelError(
            f"probabilities sum to {total!r}, not 1 (tolerance {_SUM_TOLERANCE}); divide "
            f"them by their sum to normalise"
        )


@dataclass(frozen=True, eq=False)
class DiscreteDistribution:
    """A finite distribution on the real line (immutable, validated on construction).

    Parameters
    ----------
    support : array_like
        Strictly increasing finite values.
    probs : array_like
        Their probabilities: finite, > 0, summing to 1 within 1e-9 (then renormalised
        exactly). Use :meth:`from_arrays` to merge repeated values and drop zero masses.

    Examples
    --------
    >>> d = DiscreteDistribution.from_dict({3: 0.25, 1: 0.75})
    >>> d.support.tolist(), d.probs.tolist(), d.mean()
    ([1.0, 3.0], [0.75, 0.25], 1.5)
    >>> float(d.cdf(2.0)), float(d.quantile(0.8))
    (0.75, 3.0)
    """

    support: np.ndarray
    probs: np.ndarray
    #: The CDF at each support point (the last entry exactly 1), set on construction.
    _cum: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        support = _float_array("support", self.support)
        probs = _float_array("probs", self.probs)
        if support.shape != probs.shape:
            raise InvalidModelError(
                f"support has {support.size} values but probs has {probs.size}; pass one "
                f"probability per support point"
            )
        _check_support(support)
        if np.any(np.diff(support) <= 0):
            raise InvalidModelError(
                f"support {support.tolist()!r} is not strictly increasing; use "
                f"DiscreteDistribution.from_arrays to sort and merge repeated values"
            )
        _check_probs(support, probs, strict=True)
        probs = probs / np.sum(probs)
        cum = np.minimum(np.cumsum(probs), 1.0)   # rounding must not push a CDF above 1
        cum[-1] = 1.0
        for name, arr in (("support", support), ("probs", probs), ("_cum", cum)):
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    @classmethod
    def from_arrays(cls, support: object, probs: object) -> DiscreteDistribution:
        """Build from parallel arrays, merging equal values and dropping zero masses.

        Examples
        --------
        >>> DiscreteDistribution.from_arrays([2, 0, 2, 5], [0.25, 0.5, 0.25, 0.0]).probs
        array([0.5, 0.5])
        """
        s = _float_array("support", support)
        p = _float_array("probs", probs)
        if s.shape != p.shape:
            raise InvalidModelError(
                f"support has {s.size} values but probs has {p.size}; pass one probability "
                f"per support point"
            )
        _check_support(s)
        _check_probs(s, p, strict=False)
        values, inverse = np.unique(s, return_inverse=True)
        merged = np.bincount(inverse, weights=p, minlength=values.size)
        keep = merged > 0
        return cls(values[keep], merged[keep])

    @classmethod
    def from_dict(cls, mapping: Mapping[float, float]) -> DiscreteDistribution:
        """Build from a mapping ``value -> probability`` (zero probabilities are dropped).

        Examples
        --------
        >>> DiscreteDistribution.from_dict({1: 0.4, 3: 0.0, 5: 0.6}).support
        array([1., 5.])
        """
        if not isinstance(mapping, Mapping):
            raise ParameterTypeError(
                f"expected a dict value -> probability, got the {type(mapping).__name__} "
                f"{mapping!r}"
            )
        if not mapping:
            raise InvalidModelError("the distribution {} is empty; give at least one value")
        return cls.from_arrays(list(mapping.keys()), list(mapping.values()))

    @classmethod
    def point(cls, value: float) -> DiscreteDistribution:
        """The point mass at ``value``.

        Examples
        --------
        >>> DiscreteDistribution.point(5).mean()
        5.0
        """
        return cls(np.array([value], dtype=np.float64), np.array([1.0]))

    def cdf(self, x: object) -> np.ndarray | float:
        """``P(X <= x)`` (right-continuous); a float for scalar ``x``.

        Examples
        --------
        >>> DiscreteDistribution.from_dict({0: 0.5, 1: 0.5}).cdf([-1, 0, 0.5, 1])
        array([0. , 0.5, 0.5, 1. ])
        """
        xs = np.asarray(x, dtype=np.float64)
        if np.isnan(xs).any():
            raise InvalidParameterError(f"cdf argument {x!r} contains NaN")
        out = np.concatenate((np.zeros(1), self._cum))[np.searchsorted(self.support, xs, "right")]
        return float(out) if out.ndim == 0 else out

    def quantile(self, u: object) -> np.ndarray | float:
        """Generalised inverse ``inf{x : F(x) >= u}`` for ``u`` in [0, 1].

        ``quantile(0)`` is the smallest support point.

        Examples
        --------
        >>> DiscreteDistribution.from_dict({0: 0.5, 1: 0.5}).quantile([0.0, 0.5, 0.51, 1.0])
        array([0., 0., 1., 1.])
        """
        us = np.asarray(u, dtype=np.float64)
        if np.isnan(us).any() or (us < 0).any() or (us > 1).any():
            raise InvalidParameterError(f"quantile levels must lie in [0, 1], got {u!r}")
        idx = np.minimum(np.searchsorted(self._cum, us, "left"), self.support.size - 1)
        out = self.support[idx]
        return float(out) if out.ndim == 0 else out

    def mean(self) -> float:
        """The expectation ``sum_x x P(x)``."""
        return float(np.dot(self.support, self.probs))

    def convolve(self, other: DiscreteDistribution) -> DiscreteDistribution:
        """Distribution of ``X + Y`` for independent ``X ~ self`` and ``Y ~ other``.

        Sums of non-integer values that differ only by rounding are kept apart.

        Examples
        --------
        >>> coin = DiscreteDistribution.from_dict({0: 0.5, 1: 0.5})
        >>> coin.convolve(coin).probs
        array([0.25, 0.5 , 0.25])
        """
        other = as_distribution(other, "other")
        sums = np.add.outer(self.support, other.support).ravel()
        return DiscreteDistribution.from_arrays(sums, np.outer(self.probs, other.probs).ravel())

    def is_integer(self) -> bool:
        """True when every support point is an integer."""
        return bool(np.all(np.floor(self.support) == self.support))


def as_distribution(value: object, name: str = "distribution") -> DiscreteDistribution:
    """Accept a :class:`DiscreteDistribution` or a dict ``value -> probability``.

    Examples
    --------
    >>> as_distribution({2: 1.0}).support
    array([2.])
    """
    if isinstance(value, DiscreteDistribution):
        return value
    if isinstance(value, Mapping):
        return DiscreteDistribution.from_dict(value)
    raise ParameterTypeError(
        f"{name} must be a DiscreteDistribution or a dict value -> probability, got the "
        f"{type(value).__name__} {value!r}"
    )
