"""One-dimensional discrete distributions and the exact Laplace loss between two of them.

This is the shared core behind the Wasserstein, Kantorovich, exact and multi-user mechanisms:

* :class:`DiscreteDistribution`: a validated finite distribution on the real line;
* optimal transport in 1-D: :func:`w_infinity`, :func:`kantorovich_delta_star` (``004_*``
  Appendix A, Prop. 2), :func:`optimal_plan` and :func:`relaxed_kantorovich_scale` (eq. 20);
* the exact privacy loss of ``F + Laplace(scale)`` (DESIGN §3.7): :func:`laplace_pair_epsilon`,
  :func:`discrete_laplace_pair_epsilon` and the exact calibration :func:`exact_laplace_scale`.

Probabilities that agree to within ``CDF_TOLERANCE`` (1e-12) are treated as equal by the
transport functions, so that rounding in cumulative sums (0.1 + 0.2 != 0.3) does not create
spurious slivers of transported mass.

Examples
--------
>>> a = DiscreteDistribution.from_dict({0: 0.5, 1: 0.5})
>>> b = DiscreteDistribution.from_dict({1: 0.5, 2: 0.5})
>>> w_infinity(a, b)
1.0
>>> eps, where = laplace_pair_epsilon(a, b, scale=1.0)
>>> round(eps, 6), where
(1.0, 0.0)
>>> exact_laplace_scale([(a, b)], epsilon=1.0) <= 1.0
True
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from . import _lossfn
from ._checks import positive_finite
from .errors import InvalidModelError, InvalidParameterError, ParameterTypeError

__all__ = [
    "CDF_TOLERANCE",
    "DiscreteDistribution",
    "as_distribution",
    "discrete_laplace_pair_epsilon",
    "exact_laplace_scale",
    "kantorovich_delta_star",
    "laplace_pair_epsilon",
    "optimal_plan",
    "relaxed_kantorovich_scale",
    "w_infinity",
]

CDF_TOLERANCE = 1e-12
_SUM_TOLERANCE = 1e-9
_AUDIT_SLACK = 1e-12  # relative slack when comparing a realised epsilon with its target


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
            f"support point {support[bad[0]]!r} (index {bad[0]}) is not finite; every value "
            f"of a distribution must be a finite real number"
        )


def _check_probs(support: np.ndarray, probs: np.ndarray, strict: bool) -> None:
    bad = np.flatnonzero(~np.isfinite(probs) | (probs <= 0 if strict else probs < 0))
    if bad.size:
        k = bad[0]
        need = "> 0 (drop zero-probability points)" if strict else ">= 0"
        raise InvalidModelError(
            f"probability {probs[k]!r} of value {support[k]!r} is invalid: probabilities "
            f"must be finite and {need}"
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
        cum = np.cumsum(probs)
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
        out = np.concatenate(([0.0], self._cum))[np.searchsorted(self.support, xs, "right")]
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


# ---------------------------------------------------------------- optimal transport in 1-D


def _quantile_cells(a: DiscreteDistribution, b: DiscreteDistribution):
    """Both quantile functions on the cells between the union of CDF levels (no slivers)."""
    levels = np.unique(np.concatenate(([0.0], a._cum, b._cum)))
    width = np.diff(levels)
    keep = width > CDF_TOLERANCE
    mids = 0.5 * (levels[:-1] + levels[1:])[keep]
    qa = a.support[np.searchsorted(a._cum, mids, "left")]
    qb = b.support[np.searchsorted(b._cum, mids, "left")]
    return qa, qb, width[keep]


def optimal_plan(mu_a: object, mu_b: object) -> np.ndarray:
    """The monotone (quantile, north-west corner) coupling of two distributions.

    It is optimal for every convex cost in 1-D, hence the Kantorovich plan of ``004_*``
    eq. (6). Returns an array of rows ``(x, x', mass)`` sorted by ``x`` and ``x'``.

    Examples
    --------
    >>> a = DiscreteDistribution.from_dict({1: 0.2, 2: 0.225, 3: 0.5, 4: 0.075})
    >>> b = DiscreteDistribution.from_dict({2: 0.075, 3: 0.5, 4: 0.225, 5: 0.2})
    >>> optimal_plan(a, b).round(3).tolist()[:3]   # 004_* Table 6
    [[1.0, 2.0, 0.075], [1.0, 3.0, 0.125], [2.0, 3.0, 0.225]]
    """
    qa, qb, mass = _quantile_cells(as_distribution(mu_a, "mu_a"), as_distribution(mu_b, "mu_b"))
    new = np.concatenate(([True], (qa[1:] != qa[:-1]) | (qb[1:] != qb[:-1])))
    starts = np.flatnonzero(new)
    return np.column_stack((qa[starts], qb[starts], np.add.reduceat(mass, starts)))


def w_infinity(mu_a: object, mu_b: object) -> float:
    """∞-Wasserstein distance: the largest gap between the two quantile functions.

    Examples
    --------
    >>> w_infinity({0: 0.5, 10: 0.5}, {0: 0.4, 10: 0.6})
    10.0
    """
    plan = optimal_plan(mu_a, mu_b)
    return float(np.max(np.abs(plan[:, 0] - plan[:, 1])))


def kantorovich_delta_star(mu_a: object, mu_b: object) -> float:
    """``sup_x Δ*(x)`` of ``004_*`` Prop. 2 (eq. 25), computed from the two CDFs.

    Where ``F_a(x) > F_b(x)``: ``Δ*(x) = min{Δ > 0 : F_a(x) <= F_b(x + Δ)}``, largest at the
    left end of each constant stretch of the CDFs. Where ``F_a(x) < F_b(x)``:
    ``Δ*(x) = inf{Δ > 0 : F_a(x) >= F_b(x - Δ)}``, which grows with ``x`` across a stretch, so
    its supremum is the limit at the stretch's right end. (Evaluating this case only at
    support points, as the paper's Theorem 4 does for ``x`` in the alphabet, can miss it.)
    In 1-D the result equals :func:`w_infinity`.

    Examples
    --------
    >>> a = {1: 0.2, 2: 0.225, 3: 0.5, 4: 0.075}
    >>> b = {2: 0.075, 3: 0.5, 4: 0.225, 5: 0.2}
    >>> kantorovich_delta_star(a, b)   # 004_* Example 1
    2.0
    >>> kantorovich_delta_star({5: 1.0}, {0: 1.0})
    5.0
    """
    a, b = as_distribution(mu_a, "mu_a"), as_distribution(mu_b, "mu_b")
    x = np.union1d(a.support, b.support)
    fa, fb = a.cdf(x), b.cdf(x)
    right = fa > fb + CDF_TOLERANCE
    up = b.support[np.searchsorted(b._cum, fa[right] - CDF_TOLERANCE, "left")] - x[right]
    left = np.flatnonzero(fa < fb - CDF_TOLERANCE)  # never the last point (there F_a = 1)
    low = np.searchsorted(b._cum, fa[left] + CDF_TOLERANCE, "right")
    down = x[left + 1] - b.support[low]
    return float(max(np.max(up, initial=0.0), np.max(down, initial=0.0)))


def relaxed_kantorovich_scale(mu_a: object, mu_b: object, epsilon: float) -> float:
    """Smallest ``θ`` meeting the relaxed Kantorovich condition (``004_*`` eq. 20) both ways.

    For every column ``x'`` of the optimal plan ``π*``:
    ``sum_x π*(x, x') (e^{|x - x'|/θ} - e^ε) <= 0`` (this gives ``p_a <= e^ε p_b``), and the
    same for every row ``x`` (``p_b <= e^ε p_a``). Each constraint decreases in ``θ``; one
    Brent solve on their maximum gives the answer. Returns 0.0 for equal distributions.

    Examples
    --------
    >>> relaxed_kantorovich_scale({0: 1.0}, {2: 1.0}, epsilon=1.0)   # a shift: 2/ε
    2.0
    """
    eps = positive_finite("epsilon", epsilon)
    plan = optimal_plan(mu_a, mu_b)
    dist = np.abs(plan[:, 0] - plan[:, 1])
    starts = [np.flatnonzero(np.concatenate(([True], col[1:] != col[:-1]))) for col in plan.T[:2]]
    groups = np.concatenate((starts[1], starts[0] + len(plan)))
    return _lossfn.smallest_exp_moment_scale(
        np.tile(dist, 2), np.tile(plan[:, 2], 2), groups, eps
    )


# ------------------------------------------------------------ exact Laplace privacy loss


def _union_log_masses(a: DiscreteDistribution, b: DiscreteDistribution):
    grid = np.union1d(a.support, b.support)
    out = []
    for d in (a, b):
        log_mass = np.full(grid.size, -np.inf)
        log_mass[np.searchsorted(grid, d.support)] = np.log(d.probs)
        out.append(log_mass)
    return grid, out[0], out[1]


def laplace_pair_epsilon(mu_a: object, mu_b: object, scale: float) -> tuple[float, float]:
    """Realised ε of ``F + Laplace(scale)`` between ``F ~ mu_a`` and ``F ~ mu_b``.

    Returns ``(max_w |log p_a(w) / p_b(w)|, w)`` over all real outputs ``w``, both directions.
    Between consecutive support points the density ratio is a Möbius map of
    ``z = e^{2w/scale}`` (monotone), and beyond the extremes it is constant, so the supremum
    is reached at a support point of ``mu_a`` or ``mu_b`` (DESIGN §3.7). Densities there come
    from O(n) cumulative recursions in log space; the result is never NaN (+inf on overflow).

    Examples
    --------
    >>> eps, w = laplace_pair_epsilon({5: 1.0}, {3: 1.0}, scale=2.0)   # |5 - 3| / 2
    >>> round(eps, 12), w
    (1.0, 3.0)
    """
    a, b = as_distribution(mu_a, "mu_a"), as_distribution(mu_b, "mu_b")
    return _lossfn.pair_epsilon(*_union_log_masses(a, b), positive_finite("scale", scale))


def _require_integer(*dists: DiscreteDistribution) -> None:
    for d in dists:
        if not d.is_integer():
            raise InvalidParameterError(
                f"discrete Laplace noise needs integer-valued answers, got support "
                f"{d.support.tolist()!r}; rescale the query to integers or use Laplace noise"
            )


def discrete_laplace_pair_epsilon(
    mu_a: object, mu_b: object, scale: float
) -> tuple[float, float]:
    """Realised ε of ``F + DiscreteLaplace(scale)``, ``P(k) ∝ exp(-|k| / scale)``.

    Both supports must be integers. The output pmf at an integer ``w`` is proportional to the
    continuous Laplace density there, with the same constant for both laws, and the integer
    support points of :func:`laplace_pair_epsilon` are valid outputs; so the value is the same.

    Examples
    --------
    >>> eps, w = discrete_laplace_pair_epsilon({0: 0.5, 1: 0.5}, {1: 0.5, 2: 0.5}, 1.0)
    >>> round(eps, 12)
    1.0
    """
    a, b = as_distribution(mu_a, "mu_a"), as_distribution(mu_b, "mu_b")
    _require_integer(a, b)
    return _lossfn.pair_epsilon(*_union_log_masses(a, b), positive_finite("scale", scale))


def _prepare_pairs(pairs: object, discrete: bool) -> list[tuple[np.ndarray, ...]]:
    if not isinstance(pairs, Sequence) or isinstance(pairs, str) or not pairs:
        raise InvalidParameterError(
            f"pairs must be a non-empty sequence of (mu_a, mu_b) tuples, got {pairs!r}"
        )
    prepared = []
    for k, pair in enumerate(pairs):
        if not isinstance(pair, Sequence) or len(pair) != 2:
            raise InvalidParameterError(f"pairs[{k}] must be a (mu_a, mu_b) tuple, got {pair!r}")
        a = as_distribution(pair[0], f"pairs[{k}][0]")
        b = as_distribution(pair[1], f"pairs[{k}][1]")
        if discrete:
            _require_integer(a, b)
        prepared.append((w_infinity(a, b), *_union_log_masses(a, b)))
    return prepared


def _passes(prepared: list, scale: float, epsilon: float) -> bool:
    limit = epsilon * (1.0 + _AUDIT_SLACK)
    return all(_lossfn.pair_epsilon(g, la, lb, scale)[0] <= limit for _, g, la, lb in prepared)


def exact_laplace_scale(
    pairs: Sequence[tuple[object, object]],
    epsilon: float,
    *,
    discrete: bool = False,
    upper: float | None = None,
    rtol: float = 1e-9,
) -> float:
    """Smallest Laplace scale whose realised ε is at most ``epsilon`` for every pair.

    Bisection on ``[0, upper]``; the realised ε never increases with the scale (Laplace(λ₂)
    is Laplace(λ₁) plus an independent mixture of 0 and Laplace(λ₂) when λ₁ < λ₂, and the
    same holds for discrete Laplace), so the passing scales form a ray. The default
    ``upper = max W∞ / ε`` always passes: couple each pair monotonically, so
    ``p_a(w) = sum π(x,x') f(w-x) <= sum π(x,x') e^{|x-x'|/λ} f(w-x') <= e^{W∞/λ} p_b(w)``.
    The upper end of the final bracket is returned, so the result passed the exact audit
    (within a relative slack of 1e-12). If every pair has ``W∞ = 0`` the output laws are
    identical at any scale and 0.0 is returned: no noise is needed.

    Examples
    --------
    >>> shift = ({0: 1.0}, {2: 1.0})
    >>> round(exact_laplace_scale([shift], epsilon=1.0), 6)   # a pure shift needs 2/ε
    2.0
    >>> mixed = ({0: 0.5, 2: 0.5}, {1: 0.5, 2: 0.5})
    >>> exact_laplace_scale([mixed], epsilon=1.0) < w_infinity(*mixed) / 1.0
    True
    """
    eps = positive_finite("epsilon", epsilon)
    tol = positive_finite("rtol", rtol)
    if tol >= 1.0:
        raise InvalidParameterError(f"rtol must be < 1, got {tol!r}; the default is 1e-9")
    if not isinstance(discrete, bool):
        raise ParameterTypeError(f"discrete must be True or False, got {discrete!r}")
    prepared = _prepare_pairs(pairs, discrete)
    w_max = max(p[0] for p in prepared)
    if upper is None:
        if w_max == 0.0:
            return 0.0
        hi = w_max / eps
        for _ in range(100):  # the bound is a theorem: only rounding can make it fail
            if _passes(prepared, hi, eps):
                break
            hi *= 1.0 + 1e-9
    else:
        hi = positive_finite("upper", upper)
        if not _passes(prepared, hi, eps):
            raise InvalidParameterError(
                f"upper={hi!r} does not pass the audit at epsilon={eps!r}; leave upper=None "
                f"to start from max W∞/ε = {w_max / eps!r}"
            )
    lo = 0.0
    while hi - lo > tol * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if _passes(prepared, mid, eps) else (mid, hi)
    if not math.isfinite(hi) or not _passes(prepared, hi, eps):  # the final exact audit
        raise AssertionError(f"internal error: scale {hi!r} failed its final audit")
    return float(hi)
