"""One-dimensional discrete distributions and the exact Laplace loss between two of them.

This is the shared core behind the Wasserstein, Kantorovich, exact and multi-user mechanisms:

* :class:`DiscreteDistribution`: a validated finite distribution on the real line;
* optimal transport in 1-D: :func:`w_infinity`, :func:`kantorovich_delta_star` (``004_*``
  Appendix A, Prop. 2), :func:`optimal_plan` and :func:`relaxed_kantorovich_scale` (eq. 20);
* the exact privacy loss of ``F + Laplace(scale)`` (DESIGN §3.7): :func:`laplace_pair_epsilon`,
  :func:`discrete_laplace_pair_epsilon` (the calibration that uses them is
  :func:`pufferfish_pgm.privacy_loss.exact_laplace_scale`).

Probabilities that agree to within ``CDF_TOLERANCE`` (1e-12) are treated as equal by the
transport functions, so that rounding in cumulative sums (0.1 + 0.2 != 0.3) does not create
spurious slivers of transported mass.

Examples
--------
>>> a = DiscreteDistribution.from_dict({0: 0.5, 1: 0.5})
>>> b = DiscreteDistribution.from_dict({1: 0.5, 2: 0.5})
>>> w_infinity(a, b)
1.0
"""

from __future__ import annotations

import numpy as np

from .._validation import positive_finite
from ._discrete import DiscreteDistribution, as_distribution
from ._exp_moment import smallest_exp_moment_scale
from ._w_infinity import exact_w_infinity

__all__ = [
    "CDF_TOLERANCE",
    "DiscreteDistribution",
    "as_distribution",
    "delta_star_rows",
    "kantorovich_delta_star",
    "optimal_plan",
    "relaxed_kantorovich_scale",
    "w_infinity",
]

CDF_TOLERANCE = 1e-12


# ---------------------------------------------------------------- optimal transport in 1-D


def _quantile_cells(a: DiscreteDistribution,
                    b: DiscreteDistribution) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Both quantile functions on the cells between the union of CDF levels (no slivers)."""
    levels = np.unique(np.concatenate((np.zeros(1), a._cum, b._cum)))
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

    Computed by the one W∞ kernel
    (:func:`~pufferfish_pgm.distributions._w_infinity.exact_w_infinity`) on the union of the
    supports, so no mass is ignored for being small: a mass of 1e-13 that only one law has
    still moves the distance.

    Examples
    --------
    >>> w_infinity({0: 0.5, 10: 0.5}, {0: 0.4, 10: 0.6})
    10.0
    >>> w_infinity({0: 1 - 1e-13, 1: 1e-13}, {0: 1.0})
    1.0
    """
    a, b = as_distribution(mu_a, "mu_a"), as_distribution(mu_b, "mu_b")
    grid = np.union1d(a.support, b.support)
    rows = np.full((2, grid.size), -np.inf)
    for r, d in enumerate((a, b)):
        rows[r, np.searchsorted(grid, d.support)] = np.log(d.probs)
    return float(exact_w_infinity(grid, rows[:1], rows[1:])[0])


def kantorovich_delta_star(mu_a: object, mu_b: object) -> float:
    """``sup_x Δ*(x)`` of ``004_*`` Prop. 2 (eq. 25), computed from the two CDFs.

    Where ``F_a(x) > F_b(x)``: ``Δ*(x) = min{Δ > 0 : F_a(x) <= F_b(x + Δ)}``, largest at the
    left end of each constant stretch of the CDFs. Where ``F_a(x) < F_b(x)``:
    ``Δ*(x) = inf{Δ > 0 : F_a(x) >= F_b(x - Δ)}``, which grows with ``x`` across a stretch, so
    its supremum is the limit at the stretch's right end: evaluating this case only at support
    points, with real ``Δ``, would miss leftward transport (``δ_5`` against ``δ_0`` would give
    0); on an integer alphabet with integer ``Δ``, as in the paper's examples, the two agree.
    In 1-D the result equals :func:`w_infinity` (a separate computation; tests compare them).

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
    return _delta_star(a.support, a._cum, b.support, b._cum)


def _delta_star(x_a: np.ndarray, cum_a: np.ndarray, x_b: np.ndarray,
                cum_b: np.ndarray) -> float:
    """:func:`kantorovich_delta_star` of two supports and their CDFs there."""
    x = np.union1d(x_a, x_b)
    # A cumulative sum can round above 1 before its last entry (which is set to exactly 1):
    # clip at 1 so the CDFs stay monotone for searchsorted and such overshoots count as ties.
    cum_b = np.minimum(cum_b, 1.0)
    fa, fb = (np.minimum(np.concatenate((np.zeros(1), cum))[np.searchsorted(s, x, "right")],
                         1.0) for s, cum in ((x_a, cum_a), (x_b, cum_b)))
    right = fa > fb + CDF_TOLERANCE
    up_at = np.searchsorted(cum_b, fa[right] - CDF_TOLERANCE, "left")
    up = x_b[np.minimum(up_at, x_b.size - 1)] - x[right]
    left = np.flatnonzero(fa < fb - CDF_TOLERANCE)  # never the last point (there F_a = 1)
    low = np.searchsorted(cum_b, fa[left] + CDF_TOLERANCE, "right")
    # F_b(x) > F_a(x) there, so the answer lies at or left of b's last support point <= x.
    low = np.minimum(low, np.searchsorted(x_b, x[left], "right") - 1)
    down = x[left + 1] - x_b[low]
    return float(max(np.max(up, initial=0.0), np.max(down, initial=0.0)))


def delta_star_rows(grid: np.ndarray, rows: np.ndarray, first: np.ndarray,
                    second: np.ndarray) -> np.ndarray:
    """:func:`kantorovich_delta_star` of the laws ``rows[first[i]]`` and ``rows[second[i]]``
    (log masses on the increasing ``grid``) for every ``i``: equal to it on
    ``DiscreteDistribution.from_arrays(grid, exp(row))`` without building the distributions
    (one loop over pairs: the supports differ per row).

    Examples
    --------
    >>> g = np.arange(6.0)
    >>> with np.errstate(divide="ignore"):
    ...     rows = np.log([[0, 0.2, 0.225, 0.5, 0.075, 0], [0, 0, 0.075, 0.5, 0.225, 0.2]])
    >>> delta_star_rows(g, rows, np.array([0, 0]), np.array([1, 0])).tolist()
    [2.0, 0.0]

    (``004_*`` Example 1, and a law against itself.)
    """
    used = np.union1d(first, second).tolist()   # other rows may hold no mass at all
    support = {r: _support_cdf(grid, rows[r]) for r in used}
    return np.array([_delta_star(*support[a], *support[b])
                     for a, b in zip(first.tolist(), second.tolist(), strict=True)])


def _support_cdf(grid: np.ndarray, log_mass: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The support and CDF a ``DiscreteDistribution`` of these log masses holds."""
    keep = log_mass > -np.inf
    probs = np.exp(log_mass[keep])
    probs = probs / np.sum(probs)
    cum = np.minimum(np.cumsum(probs), 1.0)
    cum[-1] = 1.0
    return grid[keep], cum


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
    return smallest_exp_moment_scale(
        np.tile(dist, 2), np.tile(plan[:, 2], 2), groups, eps
    )


# ------------------------------------------------------------ exact Laplace privacy loss


