"""How fast a guarantee degrades off Θ: the realised ε of a calibration under other beliefs.

A calibration is ε-Pufferfish private for its class Θ. :func:`robustness` audits the same
release exactly (:func:`pufferfish_pgm.privacy_loss.audit`, or the integer-noise audit of an
optimal-noise calibration) under beliefs *outside* Θ — fresh draws from the posterior the
class came from (``cls.posterior.draw(...)``, ``docs/posterior.md``), the homogeneous fit, a
chain the user supplies — one belief at a time, and summarises the realised ε of each in a
:class:`RobustnessReport` (quantiles, the share above the calibration's ε, the worst belief).
Nothing here widens the promise: a belief with realised ε above the calibration's ε is a
belief the release does not protect against (``docs/privacy-promise.md``).

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> from pufferfish_pgm.secrets import Framework
>>> from pufferfish_pgm.queries import Count
>>> from pufferfish_pgm.mechanisms import ExactLaplaceMechanism
>>> calm = MarkovChainScenario([[0.8, 0.2], [0.2, 0.8]], "stationary", 40)
>>> sticky = MarkovChainScenario([[0.95, 0.05], [0.05, 0.95]], "stationary", 40,
...                             name="sticky")
>>> cal = ExactLaplaceMechanism(epsilon=2.0).calibrate(Framework(calm), Count(1))
>>> report = robustness(cal, [calm, sticky])
>>> report.realised[0] <= 2.0 + 1e-9, report.realised[1] > 2.0, report.worst
(True, True, 'sticky')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ImpossibleSecretError, InvalidParameterError, ParameterTypeError
from ..mechanisms import Calibration, OptimalCalibration
from ..privacy_loss import audit, audit_integer_noise, noiseless_epsilon
from ..privacy_loss._engine import build_groups, release_layout
from ..scenarios import ScenarioClass, as_class
from ..secrets import Framework

__all__ = ["LEVELS", "RobustnessReport", "robustness"]

#: The quantiles a report states by default.
LEVELS = (0.0, 0.5, 0.9, 0.99, 1.0)


@dataclass(frozen=True)
class RobustnessReport:
    """The realised ε of one calibration under each of several beliefs.

    Attributes
    ----------
    epsilon, scale : float
        The calibration's ε and Laplace scale (NaN for integer noise).
    names : tuple of str
        The beliefs, in the order given.
    realised : tuple of float
        The exact realised ε under each belief (``inf`` where a secret pair is told apart).
    quantiles : tuple of (float, float)
        ``(level, value)``: the empirical quantiles of ``realised`` (order statistics, no
        interpolation: the smallest value with at least that share of beliefs at or below).
    exceed : float
        The share of beliefs whose realised ε is above ``epsilon`` (relative 1e-9).
    worst : str
        The belief with the largest realised ε.
    """

    epsilon: float
    scale: float
    names: tuple[str, ...]
    realised: tuple[float, ...]
    quantiles: tuple[tuple[float, float], ...]
    exceed: float
    worst: str

    def summary(self) -> str:
        """One line: how many beliefs, the share above ε and the quantiles."""
        parts = ", ".join(f"q{level:g} {value:.4g}" for level, value in self.quantiles)
        return (f"{len(self.names)} beliefs off Θ at ε={self.epsilon:g}: "
                f"{100 * self.exceed:.3g}% realise more than ε ({parts}; worst "
                f"{self.worst!r})")


def _framework_for(framework: Framework, belief: Any) -> Framework:
    """The calibration's framework with ``belief`` as its only scenario (same pairs)."""
    ScenarioClass([framework.scenarios[0], belief])   # same nodes and states, or a clear error
    explicit = framework._explicit      # the pairs the user listed, if any (None: every pair)
    return Framework(belief) if explicit is None else Framework(belief, explicit)


def _belief_epsilon(cal: Calibration, belief: Any) -> float:
    """The realised ε of ``cal``'s release under ``belief`` alone."""
    try:
        return _realised(cal, _framework_for(cal.framework, belief))
    except ImpossibleSecretError as err:
        raise ImpossibleSecretError(
            f"belief {belief.name!r}: {err}; the calibration lists its pairs and this belief "
            "makes one of their secrets impossible: audit it on pairs it makes possible (or "
            "calibrate with a default framework)") from None


def _realised(cal: Calibration, framework: Framework) -> float:
    if isinstance(cal, OptimalCalibration):
        return float(audit_integer_noise(framework, cal.query, cal.noise).epsilon)
    if cal.scale > 0:
        return float(audit(framework, cal.query, cal.scale).epsilon)
    engine, matrix, shift, _ = release_layout(framework, cal.query)
    return noiseless_epsilon(build_groups(framework, engine, matrix, shift)[0])


def robustness(calibration: Calibration, scenarios: Any, *,
               levels: tuple[float, ...] = LEVELS) -> RobustnessReport:
    """The realised ε of ``calibration``'s release under each belief in ``scenarios`` (a
    scenario, a list of them or a :class:`ScenarioClass`), audited exactly one at a time.

    Raises
    ------
    ParameterTypeError
        ``calibration`` is not a calibration.
    InvalidParameterError
        A level outside [0, 1].
    ScenarioClassError
        A belief does not share the calibration's nodes and states.
    ImpossibleSecretError
        The calibration lists its pairs and a belief makes one of their secrets impossible.
    """
    if not isinstance(calibration, Calibration):
        raise ParameterTypeError(f"robustness() audits a Calibration, got "
                                 f"{type(calibration).__name__}")
    beliefs = as_class(scenarios)
    if not all(isinstance(q, (int, float)) and 0.0 <= q <= 1.0 for q in levels):
        raise InvalidParameterError(f"levels must be quantile levels in [0, 1], got {levels!r}")
    realised = np.array([_belief_epsilon(calibration, b) for b in beliefs])
    quantiles = tuple((float(q), float(np.quantile(realised, q, method="inverted_cdf")))
                      for q in levels)
    eps = float(calibration.epsilon)
    return RobustnessReport(
        epsilon=eps, scale=float(calibration.scale), names=tuple(b.name for b in beliefs),
        realised=tuple(float(r) for r in realised), quantiles=quantiles,
        exceed=float(np.mean(realised > eps * (1 + 1e-9))),
        worst=beliefs[int(np.argmax(realised))].name)
