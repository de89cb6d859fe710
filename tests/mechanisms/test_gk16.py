"""GK16 (Ghosh & Kleinberg's inferential privacy), the baseline of Song et al.'s experiments:
golden values derived by hand, refusals where the theorem gives nothing, and the exact auditor
on every binary chain where it applies."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import load_network
from hypothesis import given, settings
from hypothesis import strategies as st

import pufferfish_pgm as pp
from pufferfish_pgm.errors import InvalidModelError, InvalidParameterError
from pufferfish_pgm.mechanisms.gk16 import (
    GK16Mechanism,
    gk16_dp_epsilon,
    gk16_gamma,
    spectral_norm,
)


def binary(p: float, q: float, length: int, initial="stationary") -> pp.MarkovChainScenario:
    """p = P(1 -> 1), q = P(0 -> 1), the parameterisation of the paper's experiments."""
    return pp.MarkovChainScenario([[1 - q, q], [1 - p, p]], initial, length)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_independent_slots_need_twice_the_dp_noise() -> None:
    # p = q: X_i does not depend on X_{i-1}, every ratio f_k is 1, γ = 0, Γ = 0, (I - Γ)^-1 = I,
    # row sums 1: ε_DP = ε / 2, so a count gets Laplace(2/ε)
    assert gk16_gamma(0.3, 0.3) == 0.0
    cal = GK16Mechanism(epsilon=0.5).calibrate(pp.Framework(binary(0.3, 0.3, 20)), pp.Count(1))
    assert cal.scale == pytest.approx(4.0)


def test_two_slots_in_closed_form() -> None:
    # T = 2: Γ = [[0, γ], [γ, 0]], (I - Γ)^-1 = [[1, γ], [γ, 1]] / (1 - γ²), row sums 1/(1 - γ),
    # so ε_DP = ε (1 - γ) / 2
    gamma = gk16_gamma(0.7, 0.2)
    assert gk16_dp_epsilon(gamma, 2, 1.0) == pytest.approx((1 - gamma) / 2, rel=1e-12)
    # γ itself: the largest of the four two-step ratios is f_2 here, by direct evaluation
    p, q = 0.7, 0.2
    f2 = (p / q) * ((1 - q) ** 2 + q * (1 - p)) / ((1 - p) * (1 - q) + p * (1 - p))
    assert gamma == pytest.approx(np.log(f2) / 2, rel=1e-12)


def test_strong_correlation_is_refused_with_the_reason() -> None:
    # p = 0.9, q = 0.1: γ = 1.857 > 1/2, and ‖Γ‖ = 2γ cos(π/(T+1)) >= 1 already at T = 2
    with pytest.raises(InvalidModelError, match="spectral norm .* >= 1"):
        GK16Mechanism(epsilon=1.0).calibrate(pp.Framework(binary(0.9, 0.1, 10)), pp.Count(1))


@pytest.mark.parametrize("bad", [
    lambda: pp.Framework(pp.MarkovChainScenario(np.full((3, 3), 1 / 3), "stationary", 5)),
    lambda: pp.Framework(load_network("asia")),
])
def test_only_binary_chains_are_taken(bad) -> None:
    fw = bad()
    with pytest.raises(InvalidModelError, match="binary Markov chains"):
        GK16Mechanism(epsilon=1.0).calibrate(fw, _any_count(fw))


def _any_count(fw: pp.Framework) -> pp.Count:
    cls = fw.scenarios
    return pp.Count(cls.states_of(cls.nodes[0])[0])


def test_deterministic_transitions_are_refused() -> None:
    with pytest.raises(InvalidParameterError, match="0 < p, q < 1"):
        gk16_gamma(1.0, 0.5)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_a_class_takes_the_largest_members_scale() -> None:
    members = [binary(0.6, 0.3, 30), binary(0.5, 0.5, 30)]
    scales = [GK16Mechanism(epsilon=1.0).calibrate(pp.Framework(m), pp.Count(1)).scale
              for m in members]
    both = GK16Mechanism(epsilon=1.0).calibrate(pp.Framework(pp.ScenarioClass(members)),
                                                pp.Count(1)).scale
    assert both == max(scales) and scales[0] > scales[1] == pytest.approx(2.0)


@settings(max_examples=60, deadline=None)
@given(p=st.floats(0.05, 0.95), q=st.floats(0.05, 0.95), length=st.integers(2, 9),
       epsilon=st.floats(0.1, 3.0), start=st.booleans())
@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_gk16_passes_the_exact_auditor_wherever_it_applies(p, q, length, epsilon, start) -> None:
    chain = binary(p, q, length, [1.0, 0.0] if start else "stationary")
    # with X_0 = 0 fixed, X_0 = 1 is impossible: protect the other slots
    fw = pp.Framework(chain, pp.secret_pairs(chain, nodes=range(1, length)) if start else None)
    try:
        cal = GK16Mechanism(epsilon=epsilon).calibrate(fw, pp.Count(1))
    except InvalidModelError:
        return      # ‖Γ‖ >= 1: the theorem gives nothing, and the mechanism says so
    assert pp.audit(fw, pp.Count(1), cal.scale).epsilon <= epsilon * (1 + 1e-9)


def _dense_dp_epsilon(gamma: float, length: int, epsilon: float) -> float:
    """The former dense computation: T x T Γ, its spectral norm, a dense solve (small T only)."""
    inf = np.diag(np.full(length - 1, gamma), -1) + np.diag(np.full(length - 1, gamma), 1)
    norm = float(np.linalg.norm(inf, 2)) if length > 1 else 0.0
    if norm >= 1:
        raise InvalidModelError("spectral norm >= 1")
    return epsilon / (2 * float(np.linalg.solve(np.eye(length) - inf, np.ones(length)).max()))


@settings(max_examples=80, deadline=None)
@given(gamma=st.floats(0.0, 0.6), length=st.integers(1, 200), epsilon=st.floats(0.1, 3.0))
def test_the_banded_solve_equals_the_dense_inverse(gamma, length, epsilon) -> None:
    try:
        want = _dense_dp_epsilon(gamma, length, epsilon)
    except InvalidModelError:
        # the closed-form norm 2γ cos(π/(T+1)) refuses too (up to rounding at exactly 1)
        assert spectral_norm(gamma, length) >= 1 - 1e-12
        return
    assert spectral_norm(gamma, length) < 1
    assert gk16_dp_epsilon(gamma, length, epsilon) == pytest.approx(want, rel=1e-12, abs=0)


@pytest.mark.parametrize("length", [2, 3, 7, 50])
def test_closed_form_spectral_norm_matches_the_dense_norm(length) -> None:
    gamma = 0.37
    dense = np.diag(np.full(length - 1, gamma), -1) + np.diag(np.full(length - 1, gamma), 1)
    assert spectral_norm(gamma, length) == pytest.approx(np.linalg.norm(dense, 2), rel=1e-12)


def test_a_year_of_ten_minute_slots_needs_no_dense_matrix() -> None:
    # T = 366 x 144 = 52,704: the dense Γ alone is 52,704² x 8 B = 22 GB (the process was
    # killed at 17 GB); the banded solve keeps a few length-T arrays (< 2 MB each)
    import tracemalloc

    chain = binary(0.6, 0.45, 52_704)
    tracemalloc.start()
    try:
        cal = GK16Mechanism(epsilon=1.0).calibrate(pp.Framework(chain), pp.Count(1))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 200 * 2**20
    # the middle rows sum to 1 / (1 - 2γ) (T large: the row-sum recursion's fixed point)
    gamma = gk16_gamma(0.6, 0.45)
    assert cal.scale == pytest.approx(2 / (1 - 2 * gamma), rel=1e-9)
