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
>>> cal.scale, cal.evidence["distance"], cal.evidence["audit"].epsilon <= 1.0
(5.0, 5.0, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..distributions import optimal_plan
from ..privacy_loss import audit
from ..privacy_loss._audit import report_from_groups
from ..privacy_loss._pair_rows import MAX_GRID
from ._pair_laws import PairLayout, PairValue, scalar_view
from .base import Calibration, Mechanism

__all__ = ["WassersteinMechanism", "distance_evidence"]


def distance_evidence(best: PairValue | None, layout: PairLayout) -> dict:
    """Evidence entries naming the pair where a distance is largest, with its plan support."""
    if best is None:
        return {"distance": 0.0, "worst": None, "plan_support": None,
                "skipped": layout.skipped, "coverage": layout.coverage}
    plan = optimal_plan(best.mu_first, best.mu_second)
    return {"distance": best.value, "skipped": layout.skipped, "coverage": layout.coverage,
            "worst": {"pair": best.pair, "theta": best.theta, "scenario": best.scenario},
            "plan_support": plan}


def attach_audit(framework: Any, query: Any, layout: PairLayout, scale: float,
                 factor: float, evidence: dict, max_grid: int) -> dict:
    """Add the exact audit of the calibrated release (None when no noise is added)."""
    if scale <= 0.0:
        evidence["audit"] = None
    elif factor == 1.0:
        evidence["audit"] = report_from_groups(list(layout.groups), [scale], list(layout.names),
                                               layout.skipped, layout.coverage, False)
    else:
        evidence["audit"] = audit(framework, query, scale, max_grid=max_grid)
    return evidence


@dataclass(frozen=True, kw_only=True)
class WassersteinMechanism(Mechanism):
    """``F + Laplace(W/ε)`` with ``W`` the largest ∞-Wasserstein distance between secrets.

    ``calibrate`` returns the scale with evidence: ``distance`` (W), ``worst`` (pair, θ and
    scenario where W is reached), ``plan_support`` (rows ``(x, x', mass)`` of the optimal
    plan there), ``distances`` (W of every pair and scenario) and ``audit`` (the exact audit of
    the calibrated release).
    """

    max_grid: int = MAX_GRID

    def calibrate(self, framework: Any, query: Any) -> Calibration:
        """Compute W over every pair and scenario and the scale ``factor · W / ε``."""
        scalar, factor = scalar_view(framework, query, "Wasserstein")
        layout = PairLayout.build(framework, scalar, self.max_grid, type(self).__name__)
        best, rows = layout.w_infinity()
        evidence = distance_evidence(best, layout)
        evidence["distances"] = tuple(rows)
        scale = factor * evidence["distance"] / self.epsilon
        attach_audit(framework, query, layout, scale, factor, evidence, self.max_grid)
        return Calibration(mechanism=self.name, epsilon=self.epsilon, scale=float(scale),
                           query=query, framework=framework, evidence=evidence)
