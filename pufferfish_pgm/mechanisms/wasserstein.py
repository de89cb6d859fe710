"""The Wasserstein mechanism (Song, Wang, Chaudhuri; DESIGN §3.5).

For every discriminative pair and scenario, ``μ_a`` and ``μ_b`` are the exact distributions of
the query given each secret. ``W = max W∞(μ_a, μ_b)`` over pairs and scenarios, and the
release is ``F + Laplace(W/ε)``: coupling ``μ_a`` and ``μ_b`` with a plan that moves no mass
further than ``W`` gives ``p_a(w) <= e^{W/λ} p_b(w)`` for every output. In one dimension
``W∞`` is the largest gap between the two quantile functions
(computed exactly, see :func:`pufferfish_pgm.distributions._w_infinity.exact_w_infinity`).

A two-state :class:`Histogram` is the vector ``(N - c, c)``: its L1 transport distances are
twice those of the count ``c``, so each bar gets Laplace(2 W(c) / ε). Histograms over more
states are refused (their joint transport plan is not implemented); use
:class:`pufferfish_pgm.mechanisms.exact.ExactLaplaceMechanism`.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> from pufferfish_pgm.secrets import Framework
>>> from pufferfish_pgm.queries import Count
>>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 5))
>>> cal = WassersteinMechanism(epsilon=1.0).calibrate(fw, Count(1))
>>> cal.scale, cal.evidence.distance, cal.evidence.audit.epsilon <= 1.0
(5.0, 5.0, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import positive_int
from ..distributions import optimal_plan
from ..privacy_loss import AuditReport, audit
from ..privacy_loss._engine import MAX_GRID, PairLayout, PairValue, report_from_groups, scalar_view
from ..queries import Query
from ..secrets import Framework
from .base import Calibration, Mechanism
from .evidence import DistanceEvidence, WorstPair

__all__ = ["WassersteinMechanism", "distance_evidence"]


def distance_evidence(best: PairValue | None, layout: PairLayout, audit: AuditReport | None, *,
                      distance: float | None = None, distances: tuple = (),
                      relaxed_theta: float | None = None) -> DistanceEvidence:
    """The evidence naming the pair where a distance is largest, with its plan support.

    ``distance`` overrides ``best.value`` (the relaxed Kantorovich distance is ε·θ).
    """
    if distance is None:
        distance = 0.0 if best is None else best.value
    return DistanceEvidence(
        distance=distance,
        worst=None if best is None else WorstPair(pair=best.pair, theta=best.theta,
                                                  scenario=best.scenario),
        plan_support=None if best is None else optimal_plan(best.mu_first, best.mu_second),
        distances=distances, relaxed_theta=relaxed_theta, audit=audit,
        coverage=layout.coverage, skipped=layout.skipped)


def release_audit(framework: Framework, query: Query, layout: PairLayout, scale: float,
                  factor: float, max_grid: int) -> AuditReport | None:
    """The exact audit of the calibrated release (None when no noise is added)."""
    if scale <= 0.0:
        return None
    if factor == 1.0:
        return report_from_groups(list(layout.groups), np.array([scale]), list(layout.names),
                                  layout.skipped, layout.coverage, False)
    return audit(framework, query, scale, max_grid=max_grid)


@dataclass(frozen=True, kw_only=True)
class WassersteinMechanism(Mechanism):
    """``F + Laplace(W/ε)`` with ``W`` the largest ∞-Wasserstein distance between secrets.

    Parameters
    ----------
    epsilon : float
        The privacy parameter ε > 0.
    max_grid : int, default 50_000_000
        Cap on the cells of the conditional distributions of one scenario (≥ 1).

    Notes
    -----
    ``calibrate`` returns the scale with a
    :class:`~pufferfish_pgm.mechanisms.evidence.DistanceEvidence`: ``distance`` (W),
    ``worst`` (pair, θ and scenario where W is reached), ``plan_support`` (rows
    ``(x, x', mass)`` of the optimal plan there), ``distances`` (W of every pair and scenario)
    and ``audit`` (the exact audit of the calibrated release).

    Examples
    --------
    >>> WassersteinMechanism(epsilon=1.0, max_grid=-5)
    Traceback (most recent call last):
    ...
    pufferfish_pgm.errors.InvalidParameterError: max_grid must be >= 1, got -5
    """

    max_grid: int = MAX_GRID

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "max_grid", positive_int("max_grid", self.max_grid))

    def calibrate(self, framework: Framework, query: Query, *,
                  executor: Any = None) -> Calibration[DistanceEvidence]:
        """Compute W over every pair and scenario and the scale ``factor · W / ε``."""
        scalar, factor = scalar_view(framework, query, "Wasserstein")
        layout = PairLayout.build(framework, scalar, self.max_grid, type(self).__name__,
                                  executor)
        best, rows = layout.w_infinity()
        scale = factor * (0.0 if best is None else best.value) / self.epsilon
        report = release_audit(framework, query, layout, scale, factor, self.max_grid)
        evidence = distance_evidence(best, layout, report, distances=tuple(rows))
        return Calibration(mechanism=self.name, epsilon=self.epsilon, scale=float(scale),
                           query=query, framework=framework, evidence=evidence)
