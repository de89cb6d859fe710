"""Whether a calibration's noise leaves anything to learn: its error against the answer's spread.

A release is ``answer + Z``. :func:`noise_error` gives E|Z| and the half-width of the 95 %
interval of the noise actually added: exact discrete Laplace for integer answers
(``E|Z| = 2r/(1-r²)``, ``r = e^{-1/scale}``), discrete Laplace on add_noise's grid for real
answers, the certified law's own moments for optimal integer noise.

:func:`answer_spread` gives, per scenario θ, the mean and the standard deviation of the query's
answer under θ (a scalar linear query only): on a chain from the first two moments carried by
a forward pass (``O(k)`` memory, runs of equal steps by matrix powers, so a chain of 10^9 steps
costs a few dozen products of ``3k x 3k`` matrices), on a network from the exact law of the
answer (:func:`~pufferfish_pgm.queries._laws.query_log_pmf`, which checks the memory budget
first; a refused law means "spread unknown").

The rule (:meth:`Usefulness.useful`): a release is **useless** when ``E|Z| > σ_max``, with
``σ_max`` the largest standard deviation of the answer over θ. The model alone predicts the
answer by its mean under θ with expected absolute error ``E|F - E F| <= σ_θ <= σ_max``
(Cauchy-Schwarz), so a useless release is, for every θ, less accurate than a guess that looks
at no data. :func:`checked` wraps every mechanism's ``calibrate`` to warn
(:class:`~pufferfish_pgm.errors.UsefulnessWarning`) on a useless calibration; it is silent
when the spread is unknown (vectors, ``initial="any"``, a law over the budget) and for
calibrations made inside another calibration (the outermost one alone is checked).

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> from pufferfish_pgm.queries import Count
>>> mc = MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 100)
>>> [round(x, 6) for x in answer_spread(mc, Count(1))[0]]   # Binomial(100, 1/2): 50, 5
[50.0, 5.0]
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import math
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import LimitExceededError, PufferfishError, UsefulnessWarning
from ..noise import MAX_SCALE, IntegerNoise, default_grid, grid_noise_scale, noise_halfwidth
from ..queries import LinearQuery, Query
from ..queries._engine import query_log_pmf
from ..scenarios import MarkovChainScenario, ScenarioClass

__all__ = ["CONFIDENCE", "Usefulness", "answer_spread", "checked", "dl_mean_abs",
           "noise_error", "quiet", "usefulness"]

#: The confidence of the half-width every usefulness report gives.
CONFIDENCE = 0.95
#: A chain query whose nodes break into more runs than this gets no spread (unknown).
MAX_RUNS = 1_000_000
#: Set while a calibration is checked: calibrations made inside it are not checked again.
_INSIDE: contextvars.ContextVar[bool] = contextvars.ContextVar("pufferfish_usefulness",
                                                              default=False)


def dl_mean_abs(scale: float) -> float:
    """E|Z| of the discrete Laplace law P(k) ∝ exp(-|k|/scale): ``2r/(1-r²)``, r = e^{-1/scale}.

    Examples
    --------
    >>> round(dl_mean_abs(1.0), 6), dl_mean_abs(0.0)
    (0.850918, 0.0)
    """
    if scale <= 0:
        return 0.0
    x = 1.0 / scale
    return 2.0 * math.exp(-x) / -math.expm1(-2.0 * x)


def noise_error(cal: Any) -> tuple[float, float]:
    """(E|Z|, 95 % half-width) of the noise ``cal`` adds to each coordinate of its answer."""
    noise = getattr(cal, "noise", None)
    if isinstance(noise, IntegerNoise):
        return float(noise.mean_abs), float(noise.halfwidth(CONFIDENCE))
    scale = float(cal.scale)
    if scale == 0:
        return 0.0, 0.0
    if scale > MAX_SCALE:   # no sampler draws this (add_noise refuses it): Laplace's numbers
        return scale, -scale * math.log1p(-CONFIDENCE)
    if getattr(cal.query, "integer", True):
        return dl_mean_abs(scale), float(noise_halfwidth(scale, CONFIDENCE, integer=True))
    delta = float(cal.noise_sensitivity())
    if delta <= 0:
        return scale, float(noise_halfwidth(scale, CONFIDENCE, integer=False))
    grid = default_grid(min(scale, delta))
    half = noise_halfwidth(scale, CONFIDENCE, integer=False, sensitivity=delta)
    return grid * dl_mean_abs(grid_noise_scale(scale, delta, grid)), float(half)


def _runs(nodes: Any, length: int) -> list[tuple[bool, int]] | None:
    """Steps 1..T-1 as runs (counted?, length); None past :data:`MAX_RUNS`."""
    if isinstance(nodes, range) and nodes.step == 1:
        marks = [(False, nodes.start - 1), (True, len(nodes)), (False, length - nodes.stop)]
        if nodes.start == 0:
            marks = [(True, len(nodes) - 1), (False, length - nodes.stop)]
        return [(on, n) for on, n in marks if n > 0]
    on = np.zeros(length, dtype=bool)
    on[np.asarray(list(nodes), dtype=np.int64)] = True
    cuts = np.flatnonzero(np.diff(on[1:].astype(np.int8))) + 1
    if len(cuts) >= MAX_RUNS:
        return None
    bounds = np.concatenate([[0], cuts, [length - 1]])
    return [(bool(on[1 + a]), int(b - a)) for a, b in zip(bounds[:-1], bounds[1:], strict=True)
            if b > a]


def _step_matrix(p: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The linear map of (P(X=s), E[S; X=s], E[S²; X=s]) over one step adding w(X)."""
    k = len(w)
    m = np.zeros((3 * k, 3 * k))
    for i in range(3):
        m[i * k:(i + 1) * k, i * k:(i + 1) * k] = p
    m[:k, k:2 * k], m[:k, 2 * k:], m[k:2 * k, 2 * k:] = p * w, p * w * w, 2 * p * w
    return m


def _chain_moments(chain: MarkovChainScenario, query: LinearQuery) -> tuple[float, float] | None:
    """(mean, sd) of Σ_t w(X_t) over the query's steps of ``chain`` (weights centred at the
    start's mean for accuracy on long chains)."""
    nodes = query.node_list(chain)
    runs = _runs(nodes, chain.length)
    if runs is None or chain.initial_is_any:
        return None
    q0 = np.asarray(chain.initial_distribution, dtype=float)
    w = query.weights_of(chain, 0)
    c = float(q0 @ w)
    wc = w - c
    w0 = wc if 0 in nodes else np.zeros_like(wc)
    v = np.concatenate([q0, w0 * q0, w0 * w0 * q0])
    if chain.time_varying:      # one step at a time, each with its own matrix
        counted = np.zeros(chain.length, dtype=bool)
        counted[np.asarray(nodes, dtype=np.int64)] = True
        for t in range(chain.length - 1):
            v = v @ _step_matrix(chain.step(t), wc if counted[t + 1] else np.zeros_like(wc))
    else:
        steps = {on: _step_matrix(chain.transition, wc if on else np.zeros_like(wc))
                 for on in (False, True)}
        for on, n in runs:
            v = v @ (steps[on] if n == 1 else np.linalg.matrix_power(steps[on], n))
    k = chain.k
    m1, m2 = float(v[k:2 * k].sum()), float(v[2 * k:].sum())
    return m1 + c * len(nodes), math.sqrt(max(m2 - m1 * m1, 0.0))


def _law_moments(scenario: Any, query: LinearQuery) -> tuple[float, float] | None:
    """(mean, sd) of the answer from its exact law; None if the law is over the budget."""
    if not query.integer:
        return None
    try:
        pmf = query_log_pmf(scenario, query)
    except LimitExceededError:
        return None
    x, p = pmf.support.astype(float), pmf.probs
    p = p / p.sum()
    mean = float(p @ x)
    return mean, math.sqrt(max(float(p @ (x - mean) ** 2), 0.0))


def answer_spread(scenarios: Any, query: Query) -> list[tuple[float, float]] | None:
    """(mean, standard deviation) of ``query``'s answer under each scenario, or None when
    unknown (not a scalar linear query, a chain with ``initial="any"``, a law over budget)."""
    if not isinstance(query, LinearQuery):
        return None
    members = list(scenarios) if isinstance(scenarios, ScenarioClass) else [scenarios]
    out = []
    for m in members:
        got = (_chain_moments(m, query) if isinstance(m, MarkovChainScenario)
               else _law_moments(m, query))
        if got is None:
            return None
        out.append(got)
    return out


@dataclass(frozen=True)
class Usefulness:
    """How large a calibration's noise is against the answer it hides.

    Attributes
    ----------
    mean_abs_error : float
        E|Z| of the noise added to each coordinate of the answer.
    halfwidth : float
        The half-width of the 95 % interval of that noise (P(|Z| <= h) >= 0.95).
    spread : float or None
        σ_max, the largest standard deviation of the answer over the scenarios (from the
        model), or the sample standard deviation of the answers on the data given; None when
        unknown.
    spread_of : str or None
        The scenario with that largest spread (``"data"`` when it came from data).
    mean : float or None
        The smallest mean answer over the scenarios (the mean over the data).
    """

    mean_abs_error: float
    halfwidth: float
    spread: float | None = None
    spread_of: str | None = None
    mean: float | None = None

    @property
    def useful(self) -> bool | None:
        """``E|Z| <= σ_max`` (None when the spread is unknown)."""
        return None if self.spread is None else self.mean_abs_error <= self.spread

    def summary(self) -> str:
        """One line: the noise's E|Z| and 95 % half-width against the answer's spread."""
        line = (f"noise E|Z| {self.mean_abs_error:.4g}, 95% within ±{self.halfwidth:.4g}")
        if self.spread is None:
            return line + "; the answer's spread is unknown"
        verdict = ("useless: the noise is larger than the answer's spread, so a release says "
                   "less than the model's mean" if not self.useful else "useful")
        return (f"{line}; the answer's standard deviation {self.spread:.4g} (largest, "
                f"{self.spread_of}): {verdict}")


def usefulness(cal: Any, data: Any = None) -> Usefulness:
    """The :class:`Usefulness` of ``cal`` (see :meth:`Calibration.usefulness`)."""
    err, half = noise_error(cal)
    if data is not None:
        answers = np.asarray(cal.answer(data), dtype=float).ravel()
        if answers.size >= 2:
            return Usefulness(err, half, float(np.std(answers, ddof=1)), "data",
                              float(answers.mean()))
    moments = answer_spread(cal.framework.scenarios, cal.query)
    if moments is None:
        return Usefulness(err, half)
    names = [m.name for m in cal.framework.scenarios]
    worst = max(range(len(moments)), key=lambda i: moments[i][1])
    return Usefulness(err, half, moments[worst][1], names[worst], min(m for m, _ in moments))


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Calibrations made in this block are not checked (the caller checks what it reports)."""
    token = _INSIDE.set(True)
    try:
        yield
    finally:
        _INSIDE.reset(token)


def checked(calibrate: Callable, stacklevel: int = 2) -> Callable:
    """``calibrate`` that warns (:class:`UsefulnessWarning`) when its result is useless;
    ``stacklevel`` as in :func:`warnings.warn`, counted from the returned wrapper."""
    if getattr(calibrate, "_usefulness_checked", False):
        return calibrate

    @functools.wraps(calibrate)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        if _INSIDE.get():
            return calibrate(self, *args, **kwargs)
        with quiet():
            cal = calibrate(self, *args, **kwargs)
            try:
                report = usefulness(cal)
            except PufferfishError:   # e.g. a law over the limits: the spread is unknown
                return cal
        if report.useful is False:
            warnings.warn(f"{cal.mechanism} at ε={cal.epsilon:g} for {cal.query.name}: "
                          f"{report.summary()}; sum over users or days, use a coarser query "
                          "or a larger ε (pufferfish_pgm.advise says how much)",
                          UsefulnessWarning, stacklevel=stacklevel)
        return cal

    wrapper._usefulness_checked = True  # type: ignore[attr-defined]
    return wrapper
