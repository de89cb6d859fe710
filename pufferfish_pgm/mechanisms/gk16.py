"""GK16: the inferential-privacy baseline of Song, Wang & Chaudhuri's experiments (binary chains).

Ghosh & Kleinberg (2016, "Inferential privacy guarantees for differentially private
mechanisms") bound what an ε_DP-differentially private release lets an attacker who knows the
correlation infer: on a Markov random field whose *influence matrix* Γ (Γ_ij: how much X_j can
move the conditional law of X_i, in nats) has spectral norm below 1, an ε_DP-DP mechanism is
ε-inferentially private with ``ε = 2 ε_DP · max_i Σ_j ((I − Γ)^{-1})_ij``. So the baseline
releases with Laplace noise of ``L / ε_DP``, ``ε_DP = ε / (2 max_i Σ_j ((I − Γ)^{-1})_ij)``.

For a binary chain with ``p = P(1 → 1)`` and ``q = P(0 → 1)`` (the parameterisation of the
authors' experiments, released as MATLAB code with the paper), Γ is tridiagonal with one value
γ next to the diagonal, ``γ = ½ log max_k max(f_k, 1/f_k)`` over four ratios of two-step
probabilities ``f_1..f_4`` (see :func:`gk16_gamma`). When ``‖Γ‖₂ >= 1`` (strong correlation)
the theorem gives nothing and the mechanism refuses. For a class Θ every member needs its own
guarantee: the scale is the largest over the members.

This is a baseline, like group DP, for comparisons; its ε is audited in the tests like every
other mechanism's (``tests/mechanisms/test_gk16.py``).

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> from pufferfish_pgm.secrets import Framework
>>> from pufferfish_pgm.queries import Count
>>> iid = MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 10)
>>> GK16Mechanism(epsilon=1.0).calibrate(Framework(iid), Count(1)).scale   # γ = 0: 2/ε
2.0
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._budget import check_allocation
from .._parallel import check_executor
from ..errors import InvalidModelError, InvalidParameterError
from ..queries import Query
from ..scenarios import MarkovChainScenario
from ..secrets import Framework
from .base import Calibration, Mechanism
from .baselines import check_inputs
from .evidence import BaselineEvidence

__all__ = ["GK16Mechanism", "gk16_dp_epsilon", "gk16_gamma", "row_sums", "spectral_norm"]


def gk16_gamma(p: float, q: float) -> float:
    """The influence γ of one neighbour in a binary chain, p = P(1→1), q = P(0→1).

    The four ratios compare the two-step laws through X_i given either value of a neighbour;
    γ is half the largest absolute log-ratio.

    Examples
    --------
    >>> gk16_gamma(0.5, 0.5)
    0.0
    >>> round(gk16_gamma(0.9, 0.1), 4)
    1.8568
    """
    if not (0 < p < 1 and 0 < q < 1):
        raise InvalidParameterError(f"GK16 needs 0 < p, q < 1, got p={p!r}, q={q!r} (a "
                                    "deterministic transition has unbounded influence)")
    ratios = np.array([
        (p**2 + p * (1 - q)) / (p**2 + q * (1 - p)),
        (p / q) * ((1 - q) ** 2 + q * (1 - p)) / ((1 - p) * (1 - q) + p * (1 - p)),
        (1 - p) / (1 - q) * ((1 - q) * q + q * p) / ((1 - p) * q + p**2),
        ((1 - q) ** 2 + p * (1 - q)) / ((1 - q) ** 2 + q * (1 - p)),
    ])
    return float(np.log(np.maximum(ratios, 1 / ratios).max()) / 2)


def gk16_dp_epsilon(gamma: float, length: int, epsilon: float) -> float:
    """ε_DP = ε / (2 max_i Σ_j ((I − Γ)^{-1})_ij) for the tridiagonal Γ of a chain.

    Γ is tridiagonal Toeplitz (0 on the diagonal, γ >= 0 beside it), so its eigenvalues are
    2γ cos(jπ/(T+1)), j = 1..T, and ``‖Γ‖₂ = 2γ cos(π/(T+1))`` in closed form; the row sums
    are the solution x of the banded system (I − Γ) x = 1, solved in O(T) time and memory
    (no T × T matrix: a year of 10-minute slots, T = 52,704, would need 22 GB dense).

    Examples
    --------
    >>> gk16_dp_epsilon(0.0, 5, 1.0)
    0.5
    >>> round(gk16_dp_epsilon(0.3, 52_704, 1.0), 6)   # 1 / (2 · 1/(1 - 2γ)) in the middle
    0.2
    >>> gk16_dp_epsilon(0.6, 5, 1.0)
    Traceback (most recent call last):
    ...
    pufferfish_pgm.errors.InvalidModelError: GK16 does not apply: the influence matrix has ...
    """
    norm = spectral_norm(gamma, length)
    if norm >= 1:
        raise InvalidModelError(
            f"GK16 does not apply: the influence matrix has spectral norm {norm:.4g} >= 1 "
            f"(γ = {gamma:.4g}, T = {length}); the chain is too correlated for Ghosh & "
            "Kleinberg's bound; use MarkovQuiltMechanism or ExactLaplaceMechanism")
    return epsilon / (2 * float(row_sums(gamma, length).max()))


def spectral_norm(gamma: float, length: int) -> float:
    """‖Γ‖₂ = 2γ cos(π/(T+1)) for the T × T tridiagonal Γ with γ >= 0 beside the diagonal.

    >>> round(spectral_norm(0.5, 2), 12)    # [[0, .5], [.5, 0]] has eigenvalues ±0.5
    0.5
    """
    return 2 * gamma * math.cos(math.pi / (length + 1)) if length > 1 else 0.0


def row_sums(gamma: float, length: int) -> np.ndarray:
    """Σ_j ((I − Γ)^{-1})_ij for every row i: the banded solve of (I − Γ) x = 1.

    Needs ‖Γ‖₂ < 1 (then I − Γ is positive definite). Memory: four length-T float arrays,
    checked against the memory budget first.

    >>> row_sums(0.25, 2).tolist()    # [[1, -.25], [-.25, 1]] x = 1: x = 1 / 0.75
    [1.3333333333333333, 1.3333333333333333]
    """
    # imported here: importing the package (and the CLI's --version) needs no scipy
    from scipy.linalg import solve_banded  # type: ignore[import-untyped]

    check_allocation(4 * 8 * length, what=f"the GK16 row sums over T = {length} slots")
    bands = np.zeros((3, length))
    bands[0, 1:] = bands[2, :-1] = -gamma
    bands[1] = 1.0
    return np.asarray(solve_banded((1, 1), bands, np.ones(length)))


def _member_scale(chain: Any, epsilon: float) -> tuple[float, float]:
    if not isinstance(chain, MarkovChainScenario) or chain.k != 2:
        raise InvalidModelError(
            f"GK16 is defined here for binary Markov chains (as in Song et al.'s experiments); "
            f"{getattr(chain, 'name', chain)!r} is not one; use MarkovQuiltMechanism")
    chain.require_homogeneous("GK16 (its γ comes from one 2 x 2 matrix)",
                              "use MarkovQuiltMechanism, which takes every step's matrix")
    gamma = gk16_gamma(float(chain.transition[1, 1]), float(chain.transition[0, 1]))
    return 1.0 / gk16_dp_epsilon(gamma, chain.length, epsilon), gamma


@dataclass(frozen=True, kw_only=True)
class GK16Mechanism(Mechanism):
    """Laplace(L / ε_DP) with Ghosh & Kleinberg's ε_DP for each binary chain of the class.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework
    >>> from pufferfish_pgm.queries import Count
    >>> mc = MarkovChainScenario([[0.6, 0.4], [0.4, 0.6]], "stationary", 100)   # p=0.6, q=0.4
    >>> cal = GK16Mechanism(epsilon=1.0).calibrate(Framework(mc), Count(1))
    >>> round(cal.scale, 4), cal.evidence.formula
    (3.8873, 'L * 2 * max_i sum_j ((I - Gamma)^-1)_ij / epsilon')
    """

    def calibrate(self, framework: Framework, query: Query, *,
                  executor: Any = None) -> Calibration[BaselineEvidence]:
        """The largest GK16 scale over the class's members (refused where GK16 does not apply)."""
        check_executor(executor)   # no loop to scale out here; a bad value still errs
        cls = check_inputs(framework, query)
        sigma = max(_member_scale(m, self.epsilon)[0] for m in cls)
        if not math.isfinite(sigma):
            raise InvalidModelError("GK16 gives no finite scale for this class")
        return Calibration(
            mechanism=self.name, epsilon=self.epsilon, scale=self.scale_for(query, cls, sigma),
            query=query, framework=framework,
            evidence=BaselineEvidence(
                lipschitz=self.scale_for(query, cls, 1.0), sigma=sigma,
                formula="L * 2 * max_i sum_j ((I - Gamma)^-1)_ij / epsilon"))
