"""Exact Laplace calibration: the smallest noise that passes the exact audit (DESIGN §3.7).

For a finite class Θ the realised ε of ``F + Laplace(λ)`` is computed exactly by
:mod:`pufferfish_pgm.audit`, and it never increases with λ: Laplace(λ₂) is Laplace(λ₁) plus
independent noise (its characteristic function ``1/(1+λ₂²t²)`` is ``1/(1+λ₁²t²)`` times that of
a mixture of 0 and Laplace(λ₂)), and adding independent noise cannot increase a privacy loss.
So the passing scales form a ray ``[λ*, ∞)`` and bisection finds λ*. It starts from the
Wasserstein scale ``W/ε``, which always passes (couple each pair monotonically:
``p_a(w) <= e^{W/λ} p_b(w)``), and ends with an exact audit of the returned scale.

Pairs are pruned as the bisection goes: once some pair fails at λ, λ* > λ, and every pair that
passed at λ passes at every larger scale, so it need not be evaluated again. Histograms are
calibrated with one scale on every bar, audited on the joint vector of counts (small models).

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> from pufferfish_pgm.secrets import Framework
>>> from pufferfish_pgm.queries import Count
>>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 20))
>>> cal = ExactLaplaceMechanism(epsilon=1.0).calibrate(fw, Count(1))
>>> cal.evidence["audit"].epsilon <= 1.0 + 1e-9, cal.scale < cal.evidence["wasserstein_scale"]
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._checks import positive_finite
from .._secret_batch import MAX_GRID, build_groups, refuse_any_start
from ..audit import coverage_note, release_layout, report_from_groups
from ..errors import InvalidParameterError
from ._pairwise import group_w_infinity
from .base import Calibration, Mechanism

__all__ = ["ExactLaplaceMechanism", "noiseless_epsilon"]

_SLACK = 1e-12  # relative slack when comparing a realised ε with its target


def noiseless_epsilon(groups: list) -> float:
    """The loss of releasing F itself: ``max |log μ_a(x) / μ_b(x)|`` (inf if supports differ).

    It is the limit of the realised ε as the scale tends to 0.
    """
    worst = 0.0
    for g in groups:
        a, b = g.rows[g.first], g.rows[g.second]
        if not np.array_equal(np.isfinite(a), np.isfinite(b)):
            return float("inf")
        both = np.isfinite(a)
        if both.any():
            worst = max(worst, float(np.max(np.abs(a[both] - b[both]))))
    return worst


def _passes(groups: list, active: list, scale: float,
            epsilon: float) -> tuple[bool, list, tuple | None]:
    """Do all active pairs pass at ``scale``? Returns that, the per-group masks of passing
    pairs and the failing pair with the largest realised ε, as (group, pair), if any."""
    ok, passed, worst, top = True, [], None, -1.0
    for g, (group, mask) in enumerate(zip(groups, active, strict=True)):
        if not mask.any():
            passed.append(mask)
            continue
        eps, _ = group.epsilons(np.full(len(group.grids), scale), mask)
        good = np.zeros_like(mask)
        good[np.flatnonzero(mask)] = eps <= epsilon * (1.0 + _SLACK)
        ok = ok and bool(good[mask].all())
        passed.append(good)
        i = int(np.argmax(eps))
        if eps[i] > epsilon * (1.0 + _SLACK) and eps[i] > top:
            top, worst = float(eps[i]), (g, int(np.flatnonzero(mask)[i]))
    return ok, passed, worst


def _bisect(groups: list, active: list, epsilon: float, lo: float, hi: float,
            rtol: float) -> tuple[float, int]:
    """Bisection on ``[lo, hi]`` (``hi`` passes) with pruning: once some pair fails at a
    scale, the pairs that passed there pass at every larger scale and are dropped."""
    steps = 0
    while hi - lo > rtol * hi:
        mid = 0.5 * (lo + hi)
        ok, passed, _ = _passes(groups, active, mid, epsilon)
        steps += 1
        if ok:
            hi = mid
        else:
            lo = mid
            active = [m & ~p for m, p in zip(active, passed, strict=True)]
    return hi, steps


def smallest_passing_scale(groups: list, epsilon: float, upper: float, rtol: float = 1e-9,
                           first: tuple = (0, 0)) -> tuple[float, int, float]:
    """Smallest scale in ``(0, upper]`` passing for every pair (``upper`` should pass).

    Worst pair first: bisect one pair alone (``first``, e.g. the pair of largest W∞), then
    check every remaining pair at the scale found. The pairs that pass there are done (their
    own smallest scale is no larger); if some fail, the worst of them is bisected next, from
    that scale up. Usually one or two rounds, each one evaluation of the remaining pairs.
    Returns (scale, evaluations, the upper bracket used).
    """
    active = [np.ones(len(g.pairs), dtype=bool) for g in groups]
    lo, pick, steps = 0.0, first, 0
    while True:
        single = [np.zeros(len(g.pairs), bool) for g in groups]
        single[pick[0]][pick[1]] = True
        for _ in range(64):   # by theorem upper passes; only rounding can make it fail
            if _passes(groups, single, upper, epsilon)[0]:
                break
            upper *= 2.0
        hi, n = _bisect(groups, single, epsilon, lo, upper, rtol)
        ok, passed, worst = _passes(groups, active, hi, epsilon)
        steps += n + 2
        if ok or worst is None:
            return hi, steps, upper
        active = [m & ~p for m, p in zip(active, passed, strict=True)]
        lo, pick = hi, worst


def _upper_bracket(groups: list, scalar: bool,
                   epsilon: float) -> tuple[float, float | None, tuple]:
    """A scale that passes by theorem (W∞/ε for one coordinate, else the L1 diameter / ε),
    the Wasserstein scale (None for vectors) and the pair of largest W∞ as (group, pair)."""
    if scalar:
        pick, top = (0, 0), -1.0
        for g, group in enumerate(groups):
            w = group_w_infinity(group)
            i = int(np.argmax(w))
            if w[i] > top:
                top, pick = float(w[i]), (g, i)
        best = max(top, 0.0)
        if best > 0.0:
            return best / epsilon, best / epsilon, pick
    diameter = max(sum(float(grid[-1] - grid[0]) for grid in g.grids) for g in groups)
    return diameter / epsilon, (0.0 if scalar else None), (0, 0)


@dataclass(frozen=True)
class ExactLaplaceMechanism(Mechanism):
    """Smallest Laplace scale whose exact realised ε is at most ``epsilon``.

    Parameters
    ----------
    epsilon : float
        Target privacy loss (> 0).
    rtol : float
        Relative width of the final bisection bracket (the upper end is returned).
    max_grid : int
        Cap on the cells of the conditional distributions of one scenario.
    """

    rtol: float = 1e-9
    max_grid: int = MAX_GRID

    def __post_init__(self) -> None:
        super().__post_init__()
        if not positive_finite("rtol", self.rtol) < 1.0:
            raise InvalidParameterError(f"rtol must be < 1, got {self.rtol!r}")

    def calibrate(self, framework: Any, query: Any) -> Calibration:
        """Calibrate by bisection on the exact audit (see the module docstring)."""
        refuse_any_start(framework, "ExactLaplaceMechanism")
        engine, matrix, shift, names = release_layout(framework, query)
        groups, skipped = build_groups(framework, engine, matrix, shift, self.max_grid)
        evidence: dict[str, Any] = {"coverage": coverage_note(framework),
                                    "skipped": skipped, "coordinates": tuple(names)}
        if not groups or noiseless_epsilon(groups) <= self.epsilon:
            evidence.update(note="releasing F itself already meets epsilon: no noise needed",
                            audit=None, wasserstein_scale=0.0 if len(names) == 1 else None)
            return self._calibration(framework, query, 0.0, evidence)
        start, w_scale, pick = _upper_bracket(groups, len(names) == 1, self.epsilon)
        scale, steps, upper = smallest_passing_scale(groups, self.epsilon, start, self.rtol,
                                                     pick)
        report = report_from_groups(groups, np.full(len(names), scale), names, skipped,
                                    evidence["coverage"], False)
        if not report.passes(self.epsilon, _SLACK):
            raise AssertionError(f"internal error: scale {scale!r} failed its final audit "
                                 f"({report.epsilon!r} > {self.epsilon!r})")
        evidence.update(audit=report, wasserstein_scale=w_scale, upper_bracket=start,
                        upper_used=upper, bisection_steps=steps)
        return self._calibration(framework, query, scale, evidence)

    def _calibration(self, framework: Any, query: Any, scale: float,
                     evidence: dict) -> Calibration:
        return Calibration(mechanism=self.name, epsilon=self.epsilon, scale=float(scale),
                           query=query, framework=framework, evidence=evidence)

