"""What a release costs and what would make it useful: :func:`advise` (``docs/advisor.md``).

For each mechanism, :func:`advise` reports

* the noise at the given ε: the Laplace scale, E|Z| and the 95 % half-width of the noise
  actually added (:meth:`~pufferfish_pgm.mechanisms.Calibration.usefulness`);
* the smallest ε whose noise has ``E|Z| <= target_error`` (default: the answer's largest
  standard deviation σ_max over the scenarios, where a release starts to say more than the
  model's mean). Every mechanism's scale falls as ε grows. For the mechanisms whose scale is
  ``c/ε`` (group DP, entry DP, Wasserstein) ε is solved in closed form, for exact Laplace it is
  the exact audit's ε of the target scale, for the others a bisection on ε (to 1 %); every
  answer is then calibrated and checked, so the ε returned meets the target;
* the number n of independent users (or days, under a model with independent days) whose
  answers must be summed for a relative error ``target_relative`` on the total. The total is
  released with one draw of the same noise (``release(..., per_user=False)``): the other users'
  answers are independent of any one user's secrets under every scenario, so adding them to a
  private release of that user's answer is post-processing (parallel composition), and the
  one-user calibration covers the total. The total's mean is ``n μ`` with μ the smallest mean
  answer over the scenarios, so n is the smallest integer with ``E|Z| <= target_relative · n μ``:
  ``n = ceil(E|Z| / (target_relative · μ))``. ``useful_from`` is the smallest n with
  ``E|Z| <= sqrt(n) σ_max`` (the total's spread), from which the total is no longer useless.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> from pufferfish_pgm.secrets import Framework
>>> from pufferfish_pgm.queries import Count
>>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 24))
>>> advice = advise(fw, Count(1), mechanisms=["group", "exact"], target_relative=0.1)
>>> [(row.mechanism, round(row.mean_abs_error, 2), row.cohort) for row in advice.rows]
[('GroupDP', 23.99, 30), ('ExactLaplace', 5.78, 8)]
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ._validation import positive_finite
from .errors import InvalidParameterError, PufferfishError
from .mechanisms._engine import answer_spread, mechanism, quiet
from .mechanisms.base import Calibration, Mechanism
from .privacy_loss import audit
from .queries import Query
from .scenarios import BayesianNetworkScenario, MarkovChainScenario, ScenarioClass
from .scenarios._engine import validate_tables
from .secrets import Framework

__all__ = ["Advice", "MechanismAdvice", "advise", "cohort", "cohort_size"]

#: The mechanisms :func:`advise` compares by default (command-line names).
DEFAULT_MECHANISMS = ("group", "mqm", "wasserstein", "exact")
#: Mechanisms whose Laplace scale is c/ε: the ε for a target scale is solved in closed form.
PROPORTIONAL = frozenset({"GroupDP", "EntryDP", "Wasserstein", "BlowfishLaplace"})
BISECTION = "bisection (1 %)"
#: The largest ε the search for a target error tries.
MAX_EPSILON = 1e4


@dataclass(frozen=True)
class MechanismAdvice:
    """One mechanism's row of :class:`Advice` (see :func:`advise`); ``error`` says why a
    mechanism gave no numbers (its calibration failed)."""

    mechanism: str
    scale: float = math.nan
    mean_abs_error: float = math.nan
    halfwidth: float = math.nan
    epsilon_for_target: float | None = None
    epsilon_method: str = ""
    cohort: int | None = None
    useful_from: int | None = None
    error: str | None = None


@dataclass(frozen=True)
class Advice:
    """The advisor's answer: one :class:`MechanismAdvice` per mechanism, and the answer's
    spread (σ_max, the largest standard deviation over the scenarios, and μ, the smallest
    mean; None when unknown)."""

    query: str
    epsilon: float
    target_error: float | None
    target_relative: float
    spread: float | None
    mean: float | None
    rows: tuple[MechanismAdvice, ...]
    curves: dict = dataclasses.field(default_factory=dict, repr=False)

    def table(self) -> str:
        """The rows as a text table, with the answer's spread above it."""
        head = (f"{self.query} at ε={self.epsilon:g}: the answer's mean "
                f"{_fmt(self.mean)}, standard deviation {_fmt(self.spread)} (largest over θ)")
        lines = [head, f"{'mechanism':>14} {'scale':>9} {'E|Z|':>9} {'95% ±':>8} "
                       f"{'ε for E|Z|<=' + _fmt(self.target_error):>16} "
                       f"{'n for ' + format(self.target_relative, '.0%'):>9} {'useful n':>9}"]
        for r in self.rows:
            if r.error is not None:
                lines.append(f"{r.mechanism:>14} failed: {r.error}")
                continue
            lines.append(f"{r.mechanism:>14} {_fmt(r.scale):>9} {_fmt(r.mean_abs_error):>9} "
                         f"{_fmt(r.halfwidth):>8} {_fmt(r.epsilon_for_target):>16} "
                         f"{_fmt(r.cohort):>9} {_fmt(r.useful_from):>9}")
        return "\n".join(lines)

    def to_json(self) -> dict:
        """The advice in JSON types (NaN where a mechanism failed)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
               if f.name not in ("rows", "curves")}
        out["rows"] = [dataclasses.asdict(r) for r in self.rows]
        return out

    def plot(self, path: str | Path) -> Path:
        """E|Z| against ε per mechanism (log-log), with σ_max and the target drawn in; needs
        ``advise(..., curve=...)`` and matplotlib (the ``plot`` extra)."""
        from .plots import plot_noise_curves

        return plot_noise_curves(self.curves, path, spread=self.spread,
                                 target=self.target_error, title=self.query)


def _fmt(x: Any) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.4g}" if isinstance(x, float) else str(x)


def _make(spec: str | Mechanism, epsilon: float) -> Mechanism:
    if isinstance(spec, Mechanism):
        return dataclasses.replace(spec, epsilon=epsilon)
    return mechanism(spec, epsilon)


def _error_at(spec: str | Mechanism, framework: Framework, query: Query,
              epsilon: float) -> tuple[Calibration, float]:
    """The calibration at ``epsilon`` and its noise's E|Z| (not checked for usefulness)."""
    with quiet():
        cal = _make(spec, epsilon).calibrate(framework, query)
    return cal, cal.usefulness().mean_abs_error if cal.scale != 0 else 0.0


def _scale_for(target: float) -> float:
    """The discrete Laplace scale whose E|Z| is ``target``: r = (sqrt(1 + m²) - 1) / m."""
    r = (math.sqrt(1.0 + target * target) - 1.0) / target
    return -1.0 / math.log(r)


def _guess(cal: Calibration, framework: Framework, target: float) -> tuple[float, str]:
    """A first ε for ``E|Z| = target`` and how it was found."""
    eps, scale = cal.epsilon, cal.scale
    wanted = _scale_for(target) if getattr(cal.query, "integer", True) else target
    if cal.mechanism in PROPORTIONAL and scale > 0:
        return scale * eps / wanted, "closed form c/ε"
    if cal.mechanism == "ExactLaplace":
        return float(audit(framework, cal.query, wanted).epsilon), "exact audit of the target"
    err = cal.usefulness().mean_abs_error
    return (eps * err / target if err > 0 else eps), BISECTION


def _epsilon_for(spec: str | Mechanism, framework: Framework, query: Query,
                 first: Calibration, target: float) -> tuple[float | None, str]:
    """The smallest ε (closed form, audit, or bisection to 1 %) whose E|Z| <= ``target``,
    checked by calibrating at it; None past :data:`MAX_EPSILON`."""
    guess, method = _guess(first, framework, target)
    hi = max(guess * (1.0 + 1e-9), 1e-9)
    tries = (1.0, 1.001, 1.01) if method != BISECTION else ()
    passed = next((f for f in tries if _error_at(spec, framework, query, hi * f)[1] <= target),
                  None)
    if passed is not None:
        return hi * passed, method
    method = BISECTION
    while _error_at(spec, framework, query, hi)[1] > target:
        hi *= 2.0
        if hi > MAX_EPSILON:
            return None, method
    lo = hi / 2.0
    while lo > 1e-9 and _error_at(spec, framework, query, lo)[1] <= target:
        hi, lo = lo, lo / 2.0
    while hi / lo > 1.01:
        mid = math.sqrt(hi * lo)
        if _error_at(spec, framework, query, mid)[1] <= target:
            hi = mid
        else:
            lo = mid
    return hi, method


def cohort_size(mean_abs_error: float, mean: float | None, target_relative: float) -> int | None:
    """The smallest n with ``mean_abs_error <= target_relative · n · mean`` (None if mean <= 0).

    Examples
    --------
    >>> cohort_size(52.9, 49.8, 0.1)      # 52.9 / 4.98 = 10.6
    11
    """
    if mean is None or mean <= 0:
        return None
    n = max(1, math.ceil(mean_abs_error / (target_relative * mean)))
    while n > 1 and mean_abs_error <= target_relative * (n - 1) * mean:  # float rounding
        n -= 1
    return n


def _useful_from(mean_abs_error: float, spread: float | None) -> int | None:
    """The smallest n with ``mean_abs_error <= sqrt(n) · spread``."""
    if spread is None or spread <= 0:
        return None
    n = max(1, math.ceil((mean_abs_error / spread) ** 2))
    while n > 1 and mean_abs_error <= math.sqrt(n - 1) * spread:
        n -= 1
    return n


def _row(spec: str | Mechanism, framework: Framework, query: Query, epsilon: float,
         target: float | None, relative: float, spread: tuple) -> MechanismAdvice:
    try:
        cal, err = _error_at(spec, framework, query, epsilon)
        eps_needed, method = (None, "") if target is None else _epsilon_for(
            spec, framework, query, cal, target)
    except PufferfishError as failure:
        name = spec if isinstance(spec, str) else spec.name
        return MechanismAdvice(mechanism=str(name), error=" ".join(str(failure).split()))
    return MechanismAdvice(
        mechanism=cal.mechanism, scale=cal.scale, mean_abs_error=err,
        halfwidth=cal.usefulness().halfwidth, epsilon_for_target=eps_needed,
        epsilon_method=method, cohort=cohort_size(err, spread[1], relative),
        useful_from=_useful_from(err, spread[0]))


def _curve(spec: str | Mechanism, framework: Framework, query: Query,
           epsilons: np.ndarray) -> tuple[list, list]:
    xs, ys = [], []
    for e in epsilons:
        try:
            ys.append(_error_at(spec, framework, query, float(e))[1])
            xs.append(float(e))
        except PufferfishError:
            continue
    return xs, ys


def advise(framework: Framework, query: Query, *, epsilon: float = 1.0,
           target_error: float | None = None, target_relative: float = 0.1,
           mechanisms: Sequence[str | Mechanism] = DEFAULT_MECHANISMS,
           curve: Sequence[float] | None = None) -> Advice:
    """For each mechanism: its noise at ``epsilon``, the ε for ``E|Z| <= target_error`` and the
    number of users or days to sum for ``target_relative`` error on the total (module doc).

    ``mechanisms`` are command-line names (``"group"``, ``"mqm"``, ``"exact"``, ...) or
    mechanism objects (remade at each ε). ``target_error`` defaults to the answer's σ_max.
    ``curve``, a list of ε, adds each mechanism's E|Z| there (for :meth:`Advice.plot`).
    """
    eps = positive_finite("epsilon", epsilon)
    relative = positive_finite("target_relative", target_relative)
    moments = answer_spread(framework.scenarios, query)
    spread = (None, None) if moments is None else (max(s for _, s in moments),
                                                     min(m for m, _ in moments))
    target = spread[0] if target_error is None else positive_finite("target_error",
                                                                    target_error)
    rows = tuple(_row(m, framework, query, eps, target, relative, spread) for m in mechanisms)
    curves = {} if curve is None else {
        r.mechanism: _curve(m, framework, query, np.asarray(curve, dtype=float))
        for m, r in zip(mechanisms, rows, strict=True)}
    return Advice(query=query.name, epsilon=eps, target_error=target,
                  target_relative=relative, spread=spread[0], mean=spread[1], rows=rows,
                  curves=curves)


def cohort(scenarios: ScenarioClass | MarkovChainScenario, n: int) -> ScenarioClass:
    """``n`` independent copies of each chain of ``scenarios`` as one network per scenario
    (node ``"u/t"``: step t of user u), for the exact calibration of a total over users.

    Examples
    --------
    >>> mc = MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 3)
    >>> cohort(mc, 2).nodes[:4]
    ('0/0', '0/1', '0/2', '1/0')
    """
    members = list(scenarios) if isinstance(scenarios, ScenarioClass) else [scenarios]
    chains = [m for m in members if isinstance(m, MarkovChainScenario)]
    if len(chains) < len(members) or isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InvalidParameterError(f"cohort needs Markov chains and a whole number n >= 1 of "
                                    f"users, got {type(members[0]).__name__} and n={n!r}")
    return ScenarioClass([_copies(m, n) for m in chains])


def _copies(chain: MarkovChainScenario, n: int) -> BayesianNetworkScenario:
    nodes, parents, raw = [], {}, {}
    q0 = chain.marginal(0)
    for u in range(n):
        for t in chain.nodes:
            node = f"{u}/{t}"
            nodes.append(node)
            parents[node] = () if t == 0 else (f"{u}/{t - 1}",)
            raw[node] = q0 if t == 0 else chain.transition.T
    tables = validate_tables(nodes, dict.fromkeys(nodes, chain.states), parents, raw)
    return BayesianNetworkScenario(tables, name=f"{n} x {chain.name}")
