"""The one exact Laplace calibrator: smallest scale whose exact realised ε passes (internal).

Every (pair, scenario) is a pair of rows of log masses on a shared grid (a :class:`Group`,
one per fixed-start scenario; see :mod:`pufferfish_pgm.privacy_loss._pair_rows`). The realised ε of
``F + Laplace(λ)`` never increases with λ (DESIGN §3.7), tends to the *noiseless loss*
``max |log μ_a(x)/μ_b(x)|`` as ``λ -> 0`` (``+inf`` where the supports differ) and the
kernel evaluates it exactly at every positive scale. So:

* no noise (scale 0) only when the noiseless loss is at most ``ε (1 - 1e-9)``, a margin
  far above the rounding of the log masses;
* otherwise a scale is found by bisection between a failing and a passing scale. A failing
  scale is found by descending geometrically from the passing upper bracket, never below
  the *floor* ``min grid gap / (R + 800 + ε)`` (``R`` the dynamic range of the log masses): there
  every cross term of the Laplace mixture is below ``e^-800`` of the point's own mass, so the
  audit equals the noiseless loss to float precision; if the floor still passes (noiseless
  loss within the rounding margin of ε), the floor is returned, a scale the audit accepts;
* bisection prunes: once some pair fails at λ, λ* > λ, and every pair that passed at λ
  passes at every larger scale. The worst pair is bisected alone first, then every pair is
  checked at the result; failing pairs start the next round from there.
* the returned scale is checked on **every** pair (not only the unpruned ones); a pair
  failing there (rounding) restarts the search above it, so the result always passed its
  final audit;
* with per-pair W∞ given (``transport``), a pair is not evaluated at a scale λ where
  ``W∞/λ <= ε``: its realised ε is at most W∞/λ there (the coupling argument of
  :func:`exact_laplace_scale`), so it passes by theorem. The final check still evaluates it.

Examples
--------
>>> import numpy as np
>>> g = Group.from_distributions([({0: 1.0}, {2: 1.0})])     # a pure shift by 2
>>> scale, _, _ = smallest_passing_scale([g], 1.0, upper=2.0)
>>> round(scale, 6)
2.0
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .._tolerances import RELATIVE
from .._validation import positive_finite
from ..distributions import as_distribution, w_infinity
from ..distributions._engine import logit_cdf, w_infinity_logits
from ..errors import InvalidParameterError, ParameterTypeError
from ._pair_rows import CHUNK_CELLS, Group

__all__ = [
    "exact_laplace_scale",
    "noiseless_epsilon",
    "pair_noiseless",
    "scale_floor",
    "smallest_passing_scale",
]

#: Relative slack when comparing a realised ε with its target.
SLACK = 1e-12
#: Relative margin below ε under which the noiseless loss means "no noise needed".
NOISELESS_MARGIN = 1e-9


def pair_noiseless(group: Group) -> np.ndarray:
    """Per pair, the loss of releasing F itself: ``max |log μ_a(x)/μ_b(x)|``, ``inf`` where
    the supports differ. The limit of the realised ε as the scale tends to 0."""
    rows = group.rows.reshape(group.rows.shape[0], -1)
    first, second, back = group.distinct()
    out = np.empty(first.size)
    step = max(1, CHUNK_CELLS // max(rows.shape[1], 1))
    for lo in range(0, out.size, step):    # chunks of pairs: bounded temporaries
        a, b = rows[first[lo:lo + step]], rows[second[lo:lo + step]]
        fa, fb = np.isfinite(a), np.isfinite(b)
        with np.errstate(invalid="ignore"):
            gap = np.where(fa & fb, np.abs(a - b), 0.0)
        out[lo:lo + step] = np.where((fa != fb).any(axis=1), np.inf,
                                     gap.max(axis=1, initial=0.0))
    return out[back]


def noiseless_epsilon(groups: Sequence[Group]) -> float:
    """The largest :func:`pair_noiseless` over every group (0.0 without pairs)."""
    return max((float(pair_noiseless(g).max(initial=0.0)) for g in groups), default=0.0)


def scale_floor(groups: Sequence[Group], epsilon: float = 0.0) -> float:
    """A scale at which the audit equals the noiseless loss to float precision, and below
    which nothing is left to search for a target ``epsilon``.

    At ``λ = min gap / (R + 800 + ε)``, with ``R`` the largest ``-log mass`` of any row, a mass
    point's own term dominates every other term of the Laplace mixture by ``e^{800+ε}``; so a
    pair whose supports differ fails there (its ratio at a point of one support only is at
    least ``e^{800+ε}``), and a pair with equal supports shows its noiseless loss. (Without
    the ε, a huge target such as 3000 let a pair with differing supports pass at the floor,
    and the search stopped there, up to twice above the smallest passing scale.)
    """
    gap, depth = np.inf, 0.0
    for g in groups:
        for grid in g.grids:
            if grid.size > 1:
                gap = min(gap, float(np.min(np.diff(grid))))
        finite = g.rows[np.isfinite(g.rows)]
        depth = max(depth, float(-finite.min(initial=0.0)))
    return 1.0 if not np.isfinite(gap) else gap / (depth + 800.0 + epsilon)


def _passes(groups: Sequence[Group], active: list[np.ndarray], scale: float,
            epsilon: float, transport: Sequence[np.ndarray] | None = None
            ) -> tuple[bool, list[np.ndarray], tuple[int, int] | None]:
    """Do all active pairs pass at ``scale``? Returns that, the per-group masks of passing
    pairs and the failing pair with the largest realised ε, as (group, pair), if any. Pairs
    whose W∞/scale is at most ε (``transport``) pass without evaluation."""
    ok, top = True, -1.0
    passed: list[np.ndarray] = []
    worst: tuple[int, int] | None = None
    limit = epsilon * (1.0 + SLACK)
    for g, (group, mask) in enumerate(zip(groups, active, strict=True)):
        proven = (np.zeros_like(mask) if transport is None
                  else mask & (transport[g] / scale <= epsilon))
        mask = mask & ~proven
        if not mask.any():
            passed.append(proven)
            continue
        eps, _ = group.epsilons(np.full(len(group.grids), scale), mask)
        good = proven.copy()
        good[np.flatnonzero(mask)] = eps <= limit
        ok = ok and bool(good[mask].all())
        passed.append(good)
        i = int(np.argmax(eps))
        if eps[i] > limit and eps[i] > top:
            top, worst = float(eps[i]), (g, int(np.flatnonzero(mask)[i]))
    return ok, passed, worst


def _prune(active: list[np.ndarray], passed: list[np.ndarray]) -> list[np.ndarray]:
    return [m & ~p for m, p in zip(active, passed, strict=True)]


def _bisect(groups: Sequence[Group], active: list[np.ndarray], epsilon: float, lo: float, hi: float,
            rtol: float, floor: float,
            transport: Sequence[np.ndarray] | None = None) -> tuple[float, float, int]:
    """Shrink ``[lo, hi]`` (``hi`` passes; ``lo`` fails, or 0 for "unknown") to relative width
    ``rtol``; returns (lo, hi, evaluations). With ``lo = 0`` a failing scale is first sought
    by descending from ``hi`` by factors of 16, down to ``floor``, which is returned as
    ``hi`` if it passes."""
    steps = 0
    while lo <= 0.0:
        trial = max(hi / 16.0, floor)
        ok, passed, _ = _passes(groups, active, trial, epsilon, transport)
        steps += 1
        if ok:
            hi = trial
            if trial <= floor:
                return 0.0, hi, steps
        else:
            lo, active = trial, _prune(active, passed)
    while hi - lo > rtol * hi:
        mid = float(np.sqrt(lo * hi)) if hi > 4.0 * lo else 0.5 * (lo + hi)
        ok, passed, _ = _passes(groups, active, mid, epsilon, transport)
        steps += 1
        if ok:
            hi = mid
        else:
            lo, active = mid, _prune(active, passed)
    return lo, hi, steps


def smallest_passing_scale(groups: Sequence[Group], epsilon: float, upper: float,
                           rtol: float = RELATIVE, first: tuple[int, int] = (0, 0),
                           final: Callable[[float], bool] | None = None,
                           transport: Sequence[np.ndarray] | None = None
                           ) -> tuple[float, int, float]:
    """Smallest scale passing for every pair, up to ``rtol`` (see the module docstring).

    ``upper`` should pass (it is doubled until it does); ``first`` = (group, pair) is
    bisected alone first (the pair of largest W∞ or noiseless loss). ``final(scale)``, if
    given, must evaluate EVERY pair at ``scale`` and say whether all pass (within ``SLACK``);
    it replaces the built-in final check, so a caller that needs the full audit report anyway
    computes it once. ``transport``, if given, holds each group's per-pair W∞ (pairs passing
    by W∞/λ <= ε are not evaluated before the final check). Returns (scale, evaluations, the
    upper bracket used). Call only when the noiseless loss exceeds ``ε (1 - NOISELESS_MARGIN)``;
    the result is positive.
    """
    every = [np.ones(len(g.pairs), dtype=bool) for g in groups]
    active = [m.copy() for m in every]
    floor = min(scale_floor(groups, epsilon), upper)
    lo, pick, steps = 0.0, first, 0
    while True:
        single = [np.zeros(len(g.pairs), bool) for g in groups]
        single[pick[0]][pick[1]] = True
        for _ in range(64):   # by theorem upper passes; only rounding can make it fail
            if _passes(groups, single, upper, epsilon)[0]:
                break
            upper *= 2.0
        lo_single, hi, n = _bisect(groups, single, epsilon, lo, upper, rtol, floor)
        ok, passed, worst = _passes(groups, active, hi, epsilon, transport)
        steps += n + 2
        if ok:
            steps += 1
            if final is not None and final(hi):   # the final audit, by the caller
                return hi, steps, upper
            ok, passed, worst = _passes(groups, every, hi, epsilon)   # the final audit
            if ok:
                return hi, steps, upper
            active = [m.copy() for m in every]
        active = _prune(active, passed)
        if worst is None:
            raise RuntimeError("internal error: a failing audit named no failing pair")
        lo, pick = hi, worst


def exact_laplace_scale(
    pairs: Sequence[tuple[object, object]],
    epsilon: float,
    *,
    discrete: bool = False,
    upper: float | None = None,
    rtol: float = RELATIVE,
) -> float:
    """Smallest Laplace scale whose realised ε is at most ``epsilon`` for every pair.

    The realised ε never increases with the scale (Laplace(λ₂) is Laplace(λ₁) plus an
    independent mixture of 0 and Laplace(λ₂) when λ₁ < λ₂; the same holds for discrete
    Laplace), so the passing scales form a ray, found by the calibrator of this module. The
    default ``upper = max W∞ / ε`` always passes: couple each pair monotonically, so
    ``p_a(w) = Σ π(x,x') f(w-x) <= Σ π(x,x') e^{|x-x'|/λ} f(w-x') <= e^{W∞/λ} p_b(w)``.

    Returns 0.0, meaning *no noise is needed*, when releasing ``F`` itself already satisfies
    ε: every pair has equal supports and ``max_x |log mu_a(x) / mu_b(x)| <= ε (1 - 1e-9)``.

    Parameters
    ----------
    pairs : sequence of (mu_a, mu_b)
        Distributions of the query answer under the two secrets of each discriminative pair
        (and each scenario): :class:`DiscreteDistribution` or dicts value -> probability.
    epsilon : float
        Target privacy loss, > 0.
    discrete : bool
        Calibrate discrete Laplace noise on integers (requires integer supports; the realised
        ε equals the continuous one).
    upper : float, optional
        A scale known to pass; default ``max W∞ / ε``.
    rtol : float
        Relative width of the final bisection bracket.

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
    group = Group.from_distributions(pairs, discrete)
    if noiseless_epsilon([group]) <= eps * (1.0 - NOISELESS_MARGIN):
        return 0.0
    w = [w_infinity(as_distribution(a), as_distribution(b)) for a, b in pairs]
    if upper is not None:
        hi = positive_finite("upper", upper)
        if not _passes([group], [np.ones(len(w), bool)], hi, eps)[0]:
            raise InvalidParameterError(
                f"upper={hi!r} does not pass the audit at epsilon={eps!r}; leave upper=None "
                f"to start from max W∞/ε = {max(w) / eps!r}")
    else:   # W∞/ε passes by theorem; the diameter covers masses W∞ rounds away
        hi = (max(w) or float(group.grids[0][-1] - group.grids[0][0])) / eps
    first = (0, int(np.argmax(w)))
    return float(smallest_passing_scale([group], eps, hi, tol, first)[0])


def group_w_infinity(group: Group) -> np.ndarray:
    """Exact W∞ of every pair of a scalar group (CDFs computed once per distinct row)."""
    logits = logit_cdf(group.rows)
    first, second, back = group.distinct()
    out = np.empty(first.size)
    step = max(1, CHUNK_CELLS // max(logits.shape[1], 1))
    for lo in range(0, out.size, step):    # chunks of pairs: bounded temporaries
        part = slice(lo, lo + step)
        out[part] = w_infinity_logits(group.grids[0], logits[first[part]],
                                       logits[second[part]])
    return out[back]
