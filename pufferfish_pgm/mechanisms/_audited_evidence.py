"""Evidence of the mechanisms that audit their own release exactly (internal module).

The records are public through :mod:`pufferfish_pgm.mechanisms.evidence`, which lists every
family; they live here to keep that module small.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..privacy_loss import AuditReport
from ._evidence_base import Evidence, WorstPair

__all__ = ["AuditedEvidence", "DistanceEvidence", "ExactEvidence", "OptimalNoiseEvidence"]


@dataclass(frozen=True, kw_only=True)
class AuditedEvidence(Evidence):
    """Evidence of the mechanisms that audit their own release exactly (DESIGN §3.7).

    Attributes
    ----------
    audit : AuditReport or None
        The exact audit of the calibrated release (None when no noise is added).
    coverage : str
        What the audit covers (all of Θ, or fixed starts only for ``initial="any"`` chains).
    skipped : tuple
        (pair, θ) combinations not audited because a secret is impossible under θ.
    """

    __module__ = "pufferfish_pgm.mechanisms.evidence"   # its public home

    audit: AuditReport | None
    coverage: str
    skipped: tuple = ()


@dataclass(frozen=True, kw_only=True)
class ExactEvidence(AuditedEvidence):
    """Why an exact Laplace scale is the smallest the exact audit accepts (DESIGN §3.7).

    Attributes
    ----------
    audit, coverage, skipped : see :class:`AuditedEvidence`
        The exact audit of the calibrated release (None without noise), what it covers, and
        the (pair, θ) combinations skipped because a secret is impossible under θ.
    coordinates : tuple of str
        Names of the released coordinates (one per bar of a histogram).
    wasserstein_scale : float or None
        W∞/ε, the Wasserstein scale the search starts below (one coordinate; 0.0 when no
        noise is needed); None for a vector release.
    upper_bracket : float or None
        The scale that passes by theorem and starts the bisection (None: no noise needed).
    upper_used : float or None
        The upper bracket actually used (doubled if rounding made the theorem's fail).
    bisection_steps : int
        Evaluations of the audit during the search.
    note : str
        Why no noise is needed, when the scale is 0; else empty.
    streamed : bool
        True when the laws were streamed node by node (long chains; see
        :mod:`pufferfish_pgm.privacy_loss._streamed_exact`): the search then starts from
        ``lower_bracket`` and no W∞ is computed (``wasserstein_scale`` is None).
    lower_bracket : float or None
        The scale proven to fail by the generating-function limits (streamed search only).

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework
    >>> from pufferfish_pgm.queries import Count
    >>> from pufferfish_pgm.mechanisms import ExactLaplaceMechanism
    >>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 6))
    >>> ev = ExactLaplaceMechanism(epsilon=1.0).calibrate(fw, Count(1)).evidence
    >>> ev.coordinates, ev.audit.epsilon <= 1.0, ev.wasserstein_scale
    (('count(1)',), True, 5.0)
    """

    __module__ = "pufferfish_pgm.mechanisms.evidence"   # its public home

    coordinates: tuple[str, ...]
    wasserstein_scale: float | None
    upper_bracket: float | None = None
    upper_used: float | None = None
    bisection_steps: int = 0
    note: str = ""
    streamed: bool = False
    lower_bracket: float | None = None


@dataclass(frozen=True, kw_only=True)
class OptimalNoiseEvidence(AuditedEvidence):
    """Why an optimal integer noise law is ε-private, and what it saves
    (``docs/optimal-noise.md``).

    Attributes
    ----------
    audit, coverage, skipped : see :class:`AuditedEvidence`
        The exact audit of the quantised law that is sampled (None without noise).
    loss : str
        The minimised loss (``'abs'``, ``'square'`` or ``('tail', t)``).
    objective : float
        That loss for the sampled law.
    mean_abs : float
        ``E|Z|`` of the sampled law.
    laplace_scale : float
        The exact discrete Laplace calibration's scale λ* for the same ε.
    laplace_objective, laplace_mean_abs : float
        The loss and ``E|Z|`` of discrete Laplace(λ*).
    ratio : float
        ``objective / laplace_objective`` (NaN when both are 0).
    tail_scale : float
        λ of the geometric tails (λ*, or L/ε' if larger, widened by 1e-4).
    core : tuple of int
        ``(lo, hi)``: where the tails start.
    dp_epsilon, dp_realised : float or None
        The plain-DP floor asked for and the sampled law's DP loss
        ``max_z |log f(z)/f(z ± d)|`` over every move d of one record.
    lp_rows, lp_rounds : int
        Constraint rows generated and LP solves.
    margin : float
        Relative tightening of ε in the LP whose quantised solution passed the audit.
    note : str
        Why no noise is needed, when none is; else empty.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework
    >>> from pufferfish_pgm.queries import Count
    >>> from pufferfish_pgm.mechanisms import OptimalNoiseMechanism
    >>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 8))
    >>> ev = OptimalNoiseMechanism(epsilon=1.0).calibrate(fw, Count(1)).evidence
    >>> ev.audit.epsilon <= 1.0, ev.ratio < 1.0, ev.core[0] < 0 < ev.core[1]
    (True, True, True)
    """

    __module__ = "pufferfish_pgm.mechanisms.evidence"   # its public home

    loss: str
    objective: float
    mean_abs: float
    laplace_scale: float
    laplace_objective: float
    laplace_mean_abs: float
    ratio: float
    tail_scale: float
    core: tuple[int, int]
    dp_epsilon: float | None = None
    dp_realised: float | None = None
    lp_rows: int = 0
    lp_rounds: int = 0
    margin: float = 0.0
    note: str = ""


@dataclass(frozen=True, kw_only=True)
class DistanceEvidence(AuditedEvidence):
    """Why a transport scale is ``factor · distance / ε`` (Wasserstein, Kantorovich; §3.5).

    Attributes
    ----------
    audit, coverage, skipped : see :class:`AuditedEvidence`
        The exact audit of the calibrated release (None without noise), what it covers, and
        the (pair, θ) combinations skipped because a secret is impossible under θ.
    distance : float
        The largest distance over pairs and scenarios: W∞ (Wasserstein), ``sup Δ*``
        (Kantorovich) or ε times the largest relaxed θ (relaxed Kantorovich).
    worst : WorstPair or None
        The pair and scenario where it is reached (None when no pair is possible).
    plan_support : numpy.ndarray or None
        Rows ``(x, x', mass)`` of the optimal (monotone) transport plan there (left out of
        ``==`` and ``hash``: an array).
    distances : tuple
        Wasserstein: ``(pair, θ, scenario, W∞)`` for every pair and scenario; else empty.
    relaxed_theta : float or None
        Relaxed Kantorovich: the scale θ solving eq. 20 (equal to the calibrated scale).

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework
    >>> from pufferfish_pgm.queries import Count
    >>> from pufferfish_pgm.mechanisms import WassersteinMechanism
    >>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 5))
    >>> ev = WassersteinMechanism(epsilon=1.0).calibrate(fw, Count(1)).evidence
    >>> ev.distance, ev.worst.theta, ev.plan_support.shape[1]
    (5.0, 0, 3)
    """

    __module__ = "pufferfish_pgm.mechanisms.evidence"   # its public home

    distance: float
    worst: WorstPair | None
    plan_support: np.ndarray | None = field(compare=False)   # an array: not compared
    distances: tuple = ()
    relaxed_theta: float | None = None
