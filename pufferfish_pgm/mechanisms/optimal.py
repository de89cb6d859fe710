"""Optimal additive integer noise: the least noise the exact auditor proves enough.

:class:`OptimalNoiseMechanism` solves a linear program over integer noise laws ``f`` with a
finite core and geometric tails (``docs/optimal-noise.md``): minimise ``E|Z|`` (or ``E Z²``,
or ``P(|Z| > t)``) subject to ``Σ_x μ_a(x) f(w - x) <= e^ε Σ_x μ_b(x) f(w - x)`` for every
secret pair, every θ and every integer output ``w``, optionally with the plain-DP floor
``f(z) <= e^{ε'} f(z ± d)`` for every move ``d`` one record can cause (:func:`dp_shifts`).
The tails' scale is that of the exact discrete Laplace calibration (or ``L/ε'`` if larger,
L the largest move), widened by 1e-4, so the far outputs are private by the
monotonicity of §3.7 and the discrete Laplace law itself is (nearly) feasible: the optimum is
never worse than it.

The guarantee is proven on what is sampled: the solver's masses are quantised to integer
weights (:class:`~pufferfish_pgm.noise.IntegerNoise`), the quantised law is audited exactly
(:mod:`~pufferfish_pgm.privacy_loss._pmf_audit`) on every pair and θ, and the LP is re-solved
with a tighter target until the audit (and the DP floor, checked on the pmf) passes. The
release draws from that very law with exact integer arithmetic.

``progress=`` (:mod:`pufferfish_pgm._progress`) counts the laws, the steps of the exact
Laplace calibration it is compared with, each round of constraint generation and each audit of
a quantised law (the rounds are found as they go: the total grows when they outlast the
estimate).

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> from pufferfish_pgm.secrets import Framework
>>> from pufferfish_pgm.queries import Count
>>> fw = Framework(MarkovChainScenario([[0.8, 0.2], [0.2, 0.8]], "stationary", 30))
>>> cal = OptimalNoiseMechanism(epsilon=1.0).calibrate(fw, Count(1))
>>> ev = cal.evidence
>>> ev.audit.epsilon <= 1.0, round(ev.ratio, 2)      # E|Z| about half that of Laplace
(True, 0.52)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._progress import Ticker, as_progress
from .._validation import positive_finite, positive_int
from ..errors import InvalidDataError, InvalidParameterError, SolverError
from ..noise import IntegerNoise, Release, check_confidence
from ..privacy_loss import AuditReport, noiseless_epsilon
from ..privacy_loss._engine import (
    MAX_GRID,
    NOISELESS_MARGIN,
    SLACK,
    TailedLaw,
    build_groups,
    coverage_note,
    refuse_any_start,
    release_layout,
)
from ..queries import Query
from ..scenarios._engine import posterior_of
from ..secrets import Framework
from ._optimal_groups import chunked_report
from ._optimal_lp import NoiseLP, dp_loss, dp_rows, dp_shift, dp_shifts
from .base import Calibration, Mechanism
from .evidence import OptimalNoiseEvidence
from .exact import ExactLaplaceMechanism

__all__ = ["OptimalCalibration", "OptimalNoiseMechanism", "OptimalRelease", "dp_loss",
           "dp_shift", "dp_shifts", "laplace_loss"]

#: Relative tightenings of the LP's target tried in turn until the sampled law passes.
MARGINS = (1e-7, 1e-5, 1e-3, 1e-2, 0.1)
#: Rounds of constraint generation planned for progress before the first LP (2 to 5 measured
#: on stationary chains of 30 to 200 steps; more are counted as they come).
ROUNDS_GUESS = 5
#: The tails' scale is the calibrated Laplace scale times the first of these (the next ones
#: when the LP is infeasible at the previous one).
WIDENINGS = (1.0 + 1e-4, 1.01, 1.1, 1.5)


def laplace_loss(loss: tuple, scale: float) -> float:
    """The loss of discrete Laplace(scale): ``E|Z| = 2r/(1-r²)``, ``E Z² = 2r/(1-r)²``,
    ``P(|Z| > t) = 2 r^{t+1}/(1+r)``, ``r = e^{-1/scale}`` (0 for scale 0).

    Examples
    --------
    >>> round(laplace_loss(("abs",), 1.0), 6)
    0.850918
    """
    if scale == 0:
        return 0.0
    r = math.exp(-1.0 / scale)
    if loss[0] == "abs":
        return 2 * r / (1 - r * r)
    if loss[0] == "square":
        return 2 * r / (1 - r) ** 2
    return 2 * r ** (loss[1] + 1) / (1 + r)


def _check_loss(loss: object) -> tuple:
    if loss in ("abs", "square"):
        return (loss,)
    if (isinstance(loss, tuple) and len(loss) == 2 and loss[0] == "tail"
            and isinstance(loss[1], int) and not isinstance(loss[1], bool) and loss[1] >= 0):
        return loss
    raise InvalidParameterError(f"loss must be 'abs', 'square' or ('tail', t) with an integer "
                                f"t >= 0, got {loss!r}")


@dataclass(frozen=True, kw_only=True)
class OptimalRelease(Release):
    """A release with optimal integer noise; :meth:`interval` uses that noise's law.

    ``scale`` is NaN: the noise is not Laplace (see ``noise``).

    Examples
    --------
    >>> noise = IntegerNoise(lo=-1, weights=(1, 2, 1), tail_scale=1.0)
    >>> OptimalRelease(value=10, scale=math.nan, epsilon=1.0, mechanism="m", query="q",
    ...                noise=noise).interval(0.9)
    (8, 12)
    """

    noise: IntegerNoise

    def interval(self, confidence: float = 0.95, *, simultaneous: bool = False) -> tuple[Any, Any]:
        """``value -+ h`` with ``h`` the smallest integer with ``P(|Z| <= h) >= confidence``
        (``confidence ** (1/n)`` for each of ``n`` entries when ``simultaneous``)."""
        values = np.asarray(self.value)
        n = values.size if simultaneous else 1
        h = self.noise.halfwidth(check_confidence(confidence) ** (1.0 / n))
        low, high = values - np.int64(h), values + np.int64(h)
        return (low.item(), high.item()) if low.ndim == 0 else (low, high)


@dataclass(frozen=True, kw_only=True)
class OptimalCalibration(Calibration[OptimalNoiseEvidence]):
    """A calibration whose noise is the audited integer law ``noise`` (``scale`` is NaN).

    Its release adds exact draws of ``noise`` to integer answers. Its certificate
    (:meth:`~Calibration.to_json`) records ``noise`` exactly, with ``"scale": null``;
    ``Calibration.from_json`` reads it back as an ``OptimalCalibration`` with the same law
    (``docs/certificates.md``).
    """

    noise: IntegerNoise

    def noisy(self, answers: Any, rng: Any = None) -> Any:
        """``answers`` (integers) plus exact draws of :attr:`noise`."""
        values = np.asarray(answers)
        if values.dtype.kind not in "iu":
            raise InvalidDataError(f"optimal integer noise needs integer answers, got dtype "
                                   f"{values.dtype}")
        out = values.astype(np.int64) + self.noise.sample(values.size, rng).reshape(values.shape)
        return out.item() if out.ndim == 0 else out

    def release(self, data: Any, rng: Any = None, **kwargs: Any) -> OptimalRelease:
        """As :meth:`Calibration.release`, with this calibration's noise; the result's
        interval uses the noise's law."""
        base = super().release(data, rng, **kwargs)
        return OptimalRelease(value=base.value, scale=math.nan, epsilon=base.epsilon,
                              mechanism=base.mechanism, query=base.query,
                              coordinates=base.coordinates, noise=self.noise)

    def summary(self) -> str:
        """One line: mechanism, the noise's E|Z| and ε (and, on a class drawn from a
        posterior, that only its drawn members are covered: docs/posterior.md)."""
        record = posterior_of(self.framework.scenarios)
        caveat = "" if record is None else (
            f"; proven for the {record.draws} drawn beliefs only: the posterior coverage "
            "statement (docs/posterior.md) is about Laplace scales, not integer noise; for it "
            "use ExactLaplaceMechanism on the class")
        return (f"{self.mechanism}: integer noise with E|Z| = {self.noise.mean_abs:.6g} for "
                f"{self.query.name} at ε={self.epsilon}{caveat}")


def _point_mass() -> IntegerNoise:
    """No noise: all mass on 0 (the exact answer is already ε-private)."""
    return IntegerNoise(lo=-1, weights=(0, 1, 0), tail_scale=1.0)


@dataclass(frozen=True, kw_only=True)
class _Problem:
    """What one calibration works with: the LP, the shifts of the DP floor and the names."""

    groups: tuple
    shifts: tuple[int, ...]
    names: list
    skipped: tuple
    coverage: str
    laplace_scale: float


@dataclass(frozen=True, kw_only=True)
class OptimalNoiseMechanism(Mechanism):
    """The integer noise of least loss whose exact realised ε is at most ``epsilon``.

    Parameters
    ----------
    epsilon : float
        Target Pufferfish privacy loss (> 0).
    loss : ``"abs"``, ``"square"`` or ``("tail", t)``
        Minimise ``E|Z|``, ``E Z²`` or ``P(|Z| > t)``.
    dp_epsilon : float, optional
        Also guarantee plain ε'-DP for a change of one record: ``f(z) <= e^{ε'} f(z ± d)``
        for every integer z and every move d one record can cause (:func:`dp_shifts`),
        against any attacker.
    core_width : int, optional
        Half-width K of the core ``-K .. K`` (default ``min(8 λ + 1, D + 1)``, λ the tails'
        scale and D the range of the answers). Wider cores can only lower the loss.
    max_grid : int
        Cap on the cells of the conditional distributions of one scenario.

    Raises
    ------
    InvalidParameterError
        A bad ``loss``, ``dp_epsilon`` or ``core_width``; at calibration, a query that is
        not one integer coordinate, or ``dp_epsilon`` with non-integer moves of the query.

    Examples
    --------
    >>> OptimalNoiseMechanism(epsilon=1.0, loss="max")
    Traceback (most recent call last):
    ...
    pufferfish_pgm.errors.InvalidParameterError: loss must be 'abs', 'square' or ('tail', t) ...
    """

    loss: Any = "abs"
    dp_epsilon: float | None = None
    core_width: int | None = None
    max_grid: int = MAX_GRID

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_loss(self.loss)
        if self.dp_epsilon is not None:
            object.__setattr__(self, "dp_epsilon", positive_finite("dp_epsilon",
                                                                   self.dp_epsilon))
        if self.core_width is not None:
            object.__setattr__(self, "core_width", positive_int("core_width", self.core_width))
        object.__setattr__(self, "max_grid", positive_int("max_grid", self.max_grid))

    def _shifts(self, framework: Framework, query: Query) -> tuple[int, ...]:
        return () if self.dp_epsilon is None else dp_shifts(framework, query)

    def _tail_scale(self, laplace_scale: float, shifts: tuple[int, ...]) -> float:
        floor = 0.0 if self.dp_epsilon is None else max(shifts, default=0) / self.dp_epsilon
        return max(laplace_scale, floor)

    def _problem(self, framework: Framework, query: Query, executor: Any, steps: Ticker
                 ) -> tuple[_Problem | None, Any]:
        """The LP for ``query`` (None when releasing F itself is already private) and the
        exact Laplace calibration it is compared with."""
        refuse_any_start(framework, "OptimalNoiseMechanism")
        engine, matrix, offset, names = release_layout(framework, query)
        if len(names) != 1:
            raise InvalidParameterError(f"OptimalNoiseMechanism releases one integer "
                                        f"coordinate; {query.name} has {len(names)}")
        shifts = self._shifts(framework, query)
        groups, skipped = build_groups(framework, engine, matrix, offset, self.max_grid,
                                       executor)
        steps.tick()
        laplace = ExactLaplaceMechanism(epsilon=self.epsilon, max_grid=self.max_grid
                                        ).calibrate_laws(framework, query,
                                                         (names, groups, skipped),
                                                         progress=steps.part() if steps.active
                                                         else None)
        steps.plan(ROUNDS_GUESS + 1)
        if not groups and shifts:
            raise InvalidParameterError(
                "no secret pair is possible under any one scenario, so nothing shapes the "
                "noise but the dp_epsilon floor; release with EntryDPMechanism("
                f"epsilon={self.dp_epsilon!r}) for that floor alone")
        quiet = noiseless_epsilon(groups) <= self.epsilon * (1 - NOISELESS_MARGIN)
        if not groups or (quiet and not shifts):       # no shifts: F is constant, or no floor
            return None, laplace
        return _Problem(groups=tuple(groups), shifts=shifts, names=names, skipped=skipped,
                        coverage=coverage_note(framework), laplace_scale=laplace.scale), laplace

    def _lp(self, problem: _Problem, widen: float) -> NoiseLP:
        """The LP with tails of scale ``max(λ*, L/ε') · widen`` and the default core."""
        tail = self._tail_scale(problem.laplace_scale, problem.shifts) * widen
        span = max(int(g.grids[0][-1] - g.grids[0][0]) for g in problem.groups)
        k = self.core_width or min(math.ceil(8 * tail) + 1, span + 1)
        return NoiseLP.build(list(problem.groups), lo=-k, hi=k, tail_scale=tail,
                             objective=_check_loss(self.loss))

    def _solve(self, problem: _Problem, steps: Ticker
               ) -> tuple[IntegerNoise, AuditReport, float, NoiseLP]:
        """:meth:`_solve_with` with the tails' scale widened by 1e-4, else (the LP is
        infeasible when the Laplace loss barely moves with the scale) by 1 %, 10 %, 50 %."""
        for widen in WIDENINGS[:-1]:
            try:
                return self._solve_with(self._lp(problem, widen), problem, steps)
            except SolverError:
                continue
        return self._solve_with(self._lp(problem, WIDENINGS[-1]), problem, steps)

    def _solve_with(self, lp: NoiseLP, problem: _Problem, steps: Ticker
                    ) -> tuple[IntegerNoise, AuditReport, float, NoiseLP]:
        """Solve, quantise and audit, tightening until the sampled law passes; returns the
        noise, its audit, the margin used and the LP."""
        rounds = 0
        for margin in MARGINS:
            if self.dp_epsilon is not None:
                lp.extra = dp_rows(lp.lo, lp.hi, lp.tail_scale, problem.shifts,
                                   self.dp_epsilon * (1 - margin))
            target = self.epsilon * (1 - margin)
            v, used = lp.solve(target, tol=0.5 * margin * self.epsilon, tick=steps.tick)
            rounds += used
            noise = IntegerNoise.quantise(lp.lo, v, lp.tail_scale)
            report = chunked_report(lp.groups, TailedLaw.of(noise), problem.names,
                                    problem.skipped, problem.coverage)
            steps.tick()
            dp = 0.0 if self.dp_epsilon is None else dp_loss(noise, problem.shifts)
            dp_ok = self.dp_epsilon is None or _within(dp, self.dp_epsilon)
            if report.passes(self.epsilon, SLACK) and dp_ok:
                lp.rounds = rounds
                return noise, report, margin, lp
        raise SolverError(
            f"no quantised noise law passed after tightening the LP by {MARGINS[-1]:g}: the "
            f"last had realised ε = {report.epsilon:.6g} for ε = {self.epsilon}"
            + ("" if self.dp_epsilon is None else
               f" and DP loss {dp:.6g} for dp_epsilon = {self.dp_epsilon}")
            + " (the LP's optimum does not survive rounding its masses to weights over "
              "2**61); ask for a smaller epsilon or dp_epsilon, or use ExactLaplaceMechanism")

    def calibrate(self, framework: Framework, query: Query, *, executor: Any = None,
                  progress: Any = None) -> OptimalCalibration:
        """Solve the LP, quantise, audit and tighten (see the module docstring); the laws
        are built on ``executor`` if given, once, and the exact Laplace comparison reads them.
        ``progress``: None, True (a bar on stderr) or a callable ``(done, total)``."""
        loss = _check_loss(self.loss)
        steps = Ticker(as_progress(progress, "optimal noise"), total=1)
        cal = self._calibrate(framework, query, loss, executor, steps)
        steps.finish()
        return cal

    def _calibrate(self, framework: Framework, query: Query, loss: tuple, executor: Any,
                   steps: Ticker) -> OptimalCalibration:
        """:meth:`calibrate` with ``progress`` as a ticker."""
        problem, laplace = self._problem(framework, query, executor, steps)
        lap = laplace_loss(loss, laplace.scale)
        if problem is None:
            noise = _point_mass()
            return self._calibration(framework, query, noise, OptimalNoiseEvidence(
                audit=None, coverage=coverage_note(framework), skipped=laplace.evidence.skipped,
                loss=repr(self.loss), objective=0.0, mean_abs=0.0,
                laplace_scale=laplace.scale, laplace_objective=lap, laplace_mean_abs=0.0,
                ratio=0.0 if lap else math.nan, tail_scale=noise.tail_scale, core=(-1, 1),
                dp_epsilon=self.dp_epsilon, dp_realised=None if self.dp_epsilon is None else 0.0,
                note="releasing F itself already meets epsilon: no noise needed"))
        noise, report, margin, lp = self._solve(problem, steps)
        objective = _loss_of(noise, loss)
        return self._calibration(framework, query, noise, OptimalNoiseEvidence(
            audit=report, coverage=problem.coverage, skipped=problem.skipped,
            loss=repr(self.loss), objective=objective, mean_abs=noise.mean_abs,
            laplace_scale=laplace.scale, laplace_objective=lap,
            laplace_mean_abs=laplace_loss(("abs",), laplace.scale),
            ratio=objective / lap if lap else math.nan, tail_scale=noise.tail_scale,
            core=(noise.lo, noise.hi), dp_epsilon=self.dp_epsilon,
            dp_realised=(None if self.dp_epsilon is None
                         else dp_loss(noise, problem.shifts)),
            lp_rows=len(lp.cuts), lp_rounds=lp.rounds, margin=margin))

    def _calibration(self, framework: Framework, query: Query, noise: IntegerNoise,
                     evidence: OptimalNoiseEvidence) -> OptimalCalibration:
        return OptimalCalibration(mechanism=self.name, epsilon=self.epsilon, scale=math.nan,
                                  query=query, framework=framework, evidence=evidence,
                                  noise=noise)


def _within(realised: float, dp_epsilon: float) -> bool:
    """Whether a DP loss keeps the floor (up to float rounding; an infinite loss never)."""
    return math.isfinite(realised) and realised <= dp_epsilon * (1 + SLACK)


def _loss_of(noise: IntegerNoise, loss: tuple) -> float:
    """The loss of the sampled law."""
    if loss[0] == "abs":
        return noise.mean_abs
    if loss[0] == "square":
        return noise.mean_square
    return noise.tail_probability(loss[1])
