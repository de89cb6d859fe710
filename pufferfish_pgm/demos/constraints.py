"""Deterministic constraints: how much a DP Laplace release leaks (``002_*`` Ex. 9.1–9.2).

Example 9.1 of Kifer and Machanavajjhala: n students take an oral exam in the order of their
ids, and record ``r_i`` becomes 1 once student i has taken it. The constraint allows only the
n + 1 datasets ``D_k`` (the first k records are 1, the rest 0). Releasing the number of
students who have taken the exam with Laplace(1/ε) noise is ε-differentially private (and
ε-induced-neighbours private), yet the records are perfectly correlated: learning ``r_1 = 0``
means the count is 0.

Under the constraint the records form a Markov chain ``r_1 → r_2 → ... → r_n`` in which a 0 is
never followed by a 1. A prior of the form of ``002_*`` eq. (17) (records independent given
the constraint, ``P(r_i = 1) = f_i(1)``) weighs ``D_k`` by ``Π_{j<=k} f_j(1) Π_{j>k} f_j(0)``,
which :func:`exam_scenario` turns into a :class:`BayesianNetworkScenario` (an
inhomogeneous chain). :func:`constraint_leakage` audits the DP release exactly:

* under the uniform prior of Example 9.2 (all ``D_k`` equally likely), for the pair
  ``(r_1 = 0, r_1 = 1)``, with the paper's ratio at the output ω = n for comparison (the
  supremum of the loss sits exactly there: about n·ε − log n + log(1/(1 − e^{−ε})));
* under the priors θ_i of the paper's necessity argument (``f_j(1) = 1 - δ`` for j <= i, else
  δ), whose realised ε approaches n·ε as δ → 0: no meaningful release is possible;
* and the exact Laplace scale that would be needed in each case.

Examples
--------
>>> leak = constraint_leakage(n=10, epsilon=1.0)
>>> round(leak.realised_uniform, 4), round(leak.paper_log_ratio_at_n, 4)   # ε = 1 promised
(8.156, 8.156)
>>> leak.realised_worst_prior > 9.0    # about n·ε
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._validation import positive_finite, positive_int
from ..errors import InvalidParameterError
from ..mechanisms.exact import ExactLaplaceMechanism
from ..privacy_loss import audit
from ..queries import Count
from ..scenarios import BayesianNetworkScenario, ScenarioClass
from ..scenarios._engine import NetworkTables
from ..secrets import Framework, NodeSecret, SecretPair

__all__ = ["ConstraintLeakage", "constraint_leakage", "exam_prior_class", "exam_scenario"]


def _dataset_weights(f1: np.ndarray) -> np.ndarray:
    """Unnormalised P(D_k), k = 0..n, for record probabilities f_i(1) (eq. 17, π_i = 1)."""
    with np.errstate(divide="ignore"):
        log_one, log_zero = np.log(f1), np.log1p(-f1)
    prefix = np.concatenate(([0.0], np.cumsum(log_one)))
    suffix = np.concatenate((np.cumsum(log_zero[::-1])[::-1], [0.0]))
    log_w = prefix + suffix
    return np.exp(log_w - np.max(log_w))


def exam_scenario(n: int, f1: Sequence[float] | np.ndarray | None = None, *,
                  name: str | None = None) -> BayesianNetworkScenario:
    """The exam records ``r1..rn`` under the constraint, as a Bayesian network (states 0/1).

    ``f1[i]`` is the prior ``f_{i+1}(1)``; the default 0.5 everywhere makes the n + 1
    allowed datasets equally likely (``002_*`` Example 9.2).

    Examples
    --------
    >>> bn = exam_scenario(3)
    >>> bn.nodes, bn.cpt("r2").round(4).tolist()     # columns: r1 = 0, r1 = 1
    (('r1', 'r2', 'r3'), [[1.0, 0.3333], [0.0, 0.6667]])
    """
    n = positive_int("n", n)
    probs = np.full(n, 0.5) if f1 is None else np.asarray(f1, dtype=float)
    if probs.shape != (n,) or np.any(~np.isfinite(probs)) or np.any((probs <= 0) | (probs >= 1)):
        raise InvalidParameterError(
            f"f1 must hold {n} probabilities strictly between 0 and 1, got {f1!r}"
        )
    w = _dataset_weights(probs)
    tail = np.cumsum(w[::-1])[::-1]              # tail[k] = Σ_{j>=k} w_j
    nodes = tuple(f"r{i}" for i in range(1, n + 1))
    cpts = {nodes[0]: np.array([w[0], tail[1]]) / tail[0]}
    for i in range(1, n):
        on = tail[i + 1] / tail[i] if tail[i] > 0 else 0.0   # P(r_{i+1}=1 | r_i=1)
        cpts[nodes[i]] = np.array([[1.0, 1.0 - on], [0.0, on]])
    tables = NetworkTables(nodes=nodes, states={v: (0, 1) for v in nodes},
                           parents={v: (() if i == 0 else (nodes[i - 1],))
                                    for i, v in enumerate(nodes)}, cpts=cpts)
    return BayesianNetworkScenario(tables, name=name or f"exam(n={n})")


def exam_prior_class(n: int, delta: float = 1e-6) -> ScenarioClass:
    """The priors θ_0..θ_n of ``002_*``'s necessity argument: ``f_j(1) = 1 - δ`` for
    ``j <= i`` and δ otherwise (an attacker nearly sure that i students took the exam).

    Examples
    --------
    >>> len(exam_prior_class(4))
    5
    """
    n = positive_int("n", n)
    d = positive_finite("delta", delta)
    if d >= 0.5:
        raise InvalidParameterError(f"delta must be < 0.5, got {d!r}")
    return ScenarioClass([exam_scenario(n, np.where(np.arange(1, n + 1) <= i, 1 - d, d),
                                        name=f"theta_{i}") for i in range(n + 1)])


@dataclass(frozen=True, kw_only=True)
class ConstraintLeakage:
    """Realised ε of the ε-DP Laplace count release under the exam constraint.

    Attributes
    ----------
    n, epsilon : the number of students and the DP parameter.
    dp_scale : 1/ε, the Laplace scale of the differentially private release.
    realised_uniform : realised ε for the pair (r1 = 0, r1 = 1) under the uniform prior.
    realised_uniform_all_records : the same over the pairs of every record.
    paper_log_ratio_at_n : log P(M = n | r1 = 1) / P(M = n | r1 = 0), Example 9.2.
    realised_worst_prior : realised ε for (r1 = 0, r1 = 1) over the priors θ_0..θ_n.
    exact_scale_uniform, exact_scale_worst_prior : the Laplace scales that would achieve ε.
    """

    n: int
    epsilon: float
    dp_scale: float
    realised_uniform: float
    realised_uniform_all_records: float
    paper_log_ratio_at_n: float
    realised_worst_prior: float
    exact_scale_uniform: float
    exact_scale_worst_prior: float


def _paper_ratio(n: int, epsilon: float) -> float:
    """Example 9.2: Σ_{j=1}^n (ε/2n) e^{-ε(n-j)} against (ε/2) e^{-εn}, as a log ratio."""
    j = np.arange(1, n + 1)
    return float(np.logaddexp.reduce(-epsilon * (n - j)) - math.log(n) + epsilon * n)


def constraint_leakage(n: int = 10, epsilon: float = 1.0, *,
                       delta: float = 1e-6) -> ConstraintLeakage:
    """Audit the ε-DP Laplace(1/ε) count of Example 9.1 under the constraint (see module).

    Examples
    --------
    >>> leak = constraint_leakage(n=5, epsilon=0.5)
    >>> leak.dp_scale, leak.realised_uniform >= leak.paper_log_ratio_at_n > leak.epsilon
    (2.0, True)
    """
    n = positive_int("n", n)
    eps = positive_finite("epsilon", epsilon)
    uniform = exam_scenario(n)
    first = SecretPair(NodeSecret("r1", 0), NodeSecret("r1", 1))
    paper_fw = Framework(uniform, [first])
    worst_fw = Framework(exam_prior_class(n, delta), [first])
    count = Count(1)
    exact = ExactLaplaceMechanism(epsilon=eps)
    return ConstraintLeakage(
        n=n, epsilon=eps, dp_scale=1.0 / eps,
        realised_uniform=audit(paper_fw, count, 1.0 / eps).epsilon,
        realised_uniform_all_records=audit(Framework(uniform), count, 1.0 / eps).epsilon,
        paper_log_ratio_at_n=_paper_ratio(n, eps),
        realised_worst_prior=audit(worst_fw, count, 1.0 / eps).epsilon,
        exact_scale_uniform=exact.calibrate(paper_fw, count).scale,
        exact_scale_worst_prior=exact.calibrate(worst_fw, count).scale,
    )
