"""The Kantorovich mechanism (Ding; ``004_*`` Prop. 1–2 and eq. 20; DESIGN §3.5).

Plain: the scale is ``sup Δ*(x) / ε`` maximised over pairs and scenarios, with ``Δ*`` read off
the two CDFs (``004_*`` Appendix A, Prop. 2) — the largest distance in the support of the
optimal (monotone) transport plan, equal to ``W∞`` in one dimension.

Relaxed (``relaxed=True``, ``004_*`` eq. 20): for every column ``x'`` of the optimal plan
``π*``, ``Σ_x π*(x, x') (e^{|x - x'|/θ} - e^ε) <= 0``, and the same for every row (the other
direction of the guarantee); the smallest such ``θ`` is found by Brent's method
(:func:`pufferfish_pgm.distributions.relaxed_kantorovich_scale`) and maximised over pairs.
It is never larger than the plain scale.

A two-state :class:`Histogram` is handled as its count with distances doubled (see
:mod:`pufferfish_pgm.mechanisms.wasserstein`); larger histograms are refused.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> from pufferfish_pgm.secrets import Framework
>>> from pufferfish_pgm.queries import Count
>>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 5))
>>> plain = KantorovichMechanism(epsilon=1.0).calibrate(fw, Count(1))
>>> relaxed = KantorovichMechanism(epsilon=1.0, relaxed=True).calibrate(fw, Count(1))
>>> plain.scale, relaxed.scale < plain.scale, relaxed.evidence.audit.epsilon <= 1.0
(5.0, True, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

from .._validation import positive_int
from ..distributions import DiscreteDistribution, relaxed_kantorovich_scale
from ..distributions._engine import delta_star_rows
from ..errors import ParameterTypeError
from ..privacy_loss._engine import MAX_GRID, PairLayout, PairValue, scalar_view
from ..queries import Query
from ..secrets import Framework
from .base import Calibration, Mechanism
from .evidence import DistanceEvidence
from .wasserstein import distance_evidence, release_audit

__all__ = ["KantorovichMechanism"]


@dataclass(frozen=True, kw_only=True)
class KantorovichMechanism(Mechanism):
    """Laplace noise calibrated by the Kantorovich optimal transport plan.

    Parameters
    ----------
    epsilon : float
        The privacy parameter ε > 0.
    relaxed : bool, default False
        Calibrate by the relaxed condition (eq. 20) instead of ``sup Δ*``.
    max_grid : int, default 50_000_000
        Cap on the cells of the conditional distributions of one scenario (≥ 1).

    Notes
    -----
    ``calibrate`` returns the scale with a
    :class:`~pufferfish_pgm.mechanisms.evidence.DistanceEvidence`: ``distance`` (the largest
    ``sup Δ*`` for the plain mechanism, or ``ε ·`` the largest relaxed θ), ``worst`` (pair and
    scenario), ``plan_support`` (the optimal plan there, rows ``(x, x', mass)``),
    ``relaxed_theta`` and ``audit`` (the exact audit of the calibrated release).

    Examples
    --------
    >>> KantorovichMechanism(epsilon=1.0, max_grid=0)
    Traceback (most recent call last):
    ...
    pufferfish_pgm.errors.InvalidParameterError: max_grid must be >= 1, got 0
    """

    relaxed: bool = False
    max_grid: int = MAX_GRID

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.relaxed, bool):
            raise ParameterTypeError(f"relaxed must be True or False, got {self.relaxed!r}")
        object.__setattr__(self, "max_grid", positive_int("max_grid", self.max_grid))

    @property
    def name(self) -> str:
        return "KantorovichRelaxed" if self.relaxed else "Kantorovich"

    def calibrate(self, framework: Framework, query: Query, *,
                  executor: Any = None) -> Calibration[DistanceEvidence]:
        """The largest per-pair scale (plain: ``Δ*/ε``; relaxed: eq. 20) times the factor."""
        scalar, factor = scalar_view(framework, query, "Kantorovich")
        layout = PairLayout.build(framework, scalar, self.max_grid, type(self).__name__,
                                  executor)
        if self.relaxed:
            # a histogram's distances are doubled: e^{2d/θ} = e^{d/(θ/2)}, so θ doubles
            best = layout.max_over_pairs(partial(_relaxed, epsilon=self.epsilon))
            scale = 0.0 if best is None else factor * best.value
        else:
            best = _largest_delta_star(layout)
            scale = 0.0 if best is None else factor * best.value / self.epsilon
        report = release_audit(framework, query, layout, scale, factor, self.max_grid)
        evidence = distance_evidence(best, layout, report,
                                     distance=scale * self.epsilon if self.relaxed else None,
                                     relaxed_theta=scale if self.relaxed else None)
        return Calibration(mechanism=self.name, epsilon=self.epsilon, scale=float(scale),
                           query=query, framework=framework, evidence=evidence)


def _largest_delta_star(layout: PairLayout) -> PairValue | None:
    """The pair of largest ``sup Δ*``, or of largest W∞ when Δ* misses a tiny CDF step."""
    best = layout.max_over_rows(delta_star_rows)
    exact, _ = layout.w_infinity()
    if exact is not None and (best is None or exact.value > best.value):
        return exact   # Δ* is blind to CDF steps below 1e-12; W∞ equals it in 1-D
    return best


def _relaxed(mu_a: DiscreteDistribution, mu_b: DiscreteDistribution, epsilon: float) -> float:
    return relaxed_kantorovich_scale(mu_a, mu_b, epsilon)
