"""Tests for pufferfish_pgm.distributions: validation, transport, exact Laplace loss."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp

from pufferfish_pgm.distributions import (
    DiscreteDistribution,
    kantorovich_delta_star,
    optimal_plan,
    relaxed_kantorovich_scale,
    w_infinity,
)
from pufferfish_pgm.errors import (
    InvalidModelError,
    InvalidParameterError,
    ParameterTypeError,
    PufferfishError,
)
from pufferfish_pgm.privacy_loss import (
    discrete_laplace_pair_epsilon,
    exact_laplace_scale,
    laplace_pair_epsilon,
)

D = DiscreteDistribution.from_dict
# 004_* Appendix A, Table 4 (the paper's Table 5 prints F_i(2) = 0.42; it is 0.425)
TABLE4_I = {1: 0.2, 2: 0.225, 3: 0.5, 4: 0.075}
TABLE4_J = {2: 0.075, 3: 0.5, 4: 0.225, 5: 0.2}


# ------------------------------------------------------------------------ strategies


@st.composite
def small_dists(draw, lo: int = -6, hi: int = 6, max_size: int = 8):
    """Distributions on <= 8 integers with probabilities bounded away from 0 (>= 1/800)."""
    support = draw(st.lists(st.integers(lo, hi), min_size=1, max_size=max_size, unique=True))
    weights = draw(st.lists(st.integers(1, 100), min_size=len(support), max_size=len(support)))
    w = np.array(weights, dtype=float)
    return DiscreteDistribution.from_arrays(support, w / w.sum())


def dense_grid_epsilon(a: DiscreteDistribution, b: DiscreteDistribution, scale: float) -> float:
    """max |log p_a(w) / p_b(w)| on a fine grid that contains every support point."""
    lo = min(a.support[0], b.support[0]) - 5 * scale
    hi = max(a.support[-1], b.support[-1]) + 5 * scale
    w = np.union1d(np.linspace(lo, hi, 801), np.union1d(a.support, b.support))

    def log_density(d):
        return logsumexp(np.log(d.probs)[None, :] - np.abs(w[:, None] - d.support) / scale, 1)

    return float(np.max(np.abs(log_density(a) - log_density(b))))


def brute_w_infinity(a: DiscreteDistribution, b: DiscreteDistribution) -> int:
    """Smallest integer d with F_a(x - d) <= F_b(x) <= F_a(x + d) for all x (integer laws)."""
    xs = np.arange(-30, 31)
    for d in range(0, 30):
        if np.all(a.cdf(xs - d) <= b.cdf(xs) + 1e-12) and np.all(
            b.cdf(xs) <= a.cdf(xs + d) + 1e-12
        ) and np.all(b.cdf(xs - d) <= a.cdf(xs) + 1e-12) and np.all(
            a.cdf(xs) <= b.cdf(xs + d) + 1e-12
        ):
            return d
    raise AssertionError("no d found")


# ------------------------------------------------------------------------ construction


def test_from_dict_sorts_drops_zeros_and_renormalises():
    d = D({5: 0.4 + 5e-10, 1: 0.6, 3: 0.0})
    assert d.support.tolist() == [1.0, 5.0]
    assert math.fsum(d.probs) == 1.0
    assert d.support.dtype == np.float64 and d.probs.dtype == np.float64


def test_from_arrays_merges_equal_points():
    d = DiscreteDistribution.from_arrays([2, 0, 2, 7], [0.25, 0.5, 0.25, 0.0])
    assert d.support.tolist() == [0.0, 2.0]
    assert d.probs.tolist() == [0.5, 0.5]


def test_distribution_is_immutable():
    d = D({0: 0.5, 1: 0.5})
    with pytest.raises(ValueError):
        d.probs[0] = 1.0
    with pytest.raises(AttributeError):
        d.support = np.array([3.0])


@pytest.mark.parametrize(
    ("build", "fragment"),
    [
        (lambda: D({}), "empty"),
        (lambda: DiscreteDistribution.from_arrays([], []), "non-empty"),
        (lambda: D({0: 0.5, 1: float("nan")}), "nan"),
        (lambda: D({0: 0.5, 1: float("inf")}), "inf"),
        (lambda: D({0: 1.5, 1: -0.5}), "-0.5"),
        (lambda: D({0: 0.5, 1: 0.4}), "sum to 0.9"),
        (lambda: D({float("nan"): 1.0}), "nan"),
        (lambda: D({float("inf"): 1.0}), "inf"),
        (lambda: DiscreteDistribution([1.0, 0.0], [0.5, 0.5]), "strictly increasing"),
        (lambda: DiscreteDistribution([0.0, 1.0], [1.0, 0.0]), "> 0"),
        (lambda: DiscreteDistribution.from_arrays([0, 1], [1.0]), "one probability"),
    ],
)
def test_invalid_distributions_raise_clear_errors(build, fragment):
    with pytest.raises(InvalidModelError) as err:
        build()
    assert fragment in str(err.value)


@pytest.mark.parametrize(
    "build",
    [
        lambda: D([(0, 1.0)]),
        lambda: DiscreteDistribution.from_arrays([0, 1], ["a", "b"]),
        lambda: DiscreteDistribution.from_arrays([0], [True]),
    ],
)
def test_wrong_types_raise_parameter_type_error(build):
    with pytest.raises(ParameterTypeError):
        build()


def test_cdf_quantile_mean_integer():
    d = D({0: 0.25, 2: 0.5, 3: 0.25})
    assert d.cdf(-1) == 0.0 and d.cdf(2) == 0.75 and d.cdf(2.5) == 0.75 and d.cdf(9) == 1.0
    assert isinstance(d.cdf(1.0), float)
    assert d.quantile([0.0, 0.25, 0.2500001, 0.75, 1.0]).tolist() == [0, 0, 2, 2, 3]
    assert d.mean() == 1.75
    assert d.is_integer() and not D({0.5: 1.0}).is_integer()
    with pytest.raises(InvalidParameterError):
        d.quantile(1.5)
    with pytest.raises(InvalidParameterError):
        d.cdf(float("nan"))


def test_convolve_is_the_law_of_the_sum():
    die = D({k: 1 / 6 for k in range(1, 7)})
    two = die.convolve(die)
    assert two.support.tolist() == list(range(2, 13))
    np.testing.assert_allclose(two.probs, [min(s - 1, 13 - s) / 36 for s in range(2, 13)])
    assert two.mean() == pytest.approx(7.0)


# ------------------------------------------------------------------------ transport


def test_optimal_plan_reproduces_table_6():
    # 004_* Table 6: the Kantorovich plan between the two priors of Table 4
    expected = [
        (1, 2, 0.075), (1, 3, 0.125), (2, 3, 0.225), (3, 3, 0.15), (3, 4, 0.225),
        (3, 5, 0.125), (4, 5, 0.075),
    ]
    np.testing.assert_allclose(optimal_plan(TABLE4_I, TABLE4_J), expected, atol=1e-12)


def test_transport_golden_values():
    # Example 1 of 004_* Appendix A: sup Δ* = sup |x - x'| over supp(π*) = 2
    assert kantorovich_delta_star(TABLE4_I, TABLE4_J) == 2.0
    assert w_infinity(TABLE4_I, TABLE4_J) == 2.0
    # pure shifts in both directions; the second needs the "F_a < F_b" branch of eq. (25)
    assert kantorovich_delta_star({0: 1.0}, {5: 1.0}) == 5.0
    assert kantorovich_delta_star({5: 1.0}, {0: 1.0}) == 5.0
    assert w_infinity({5: 1.0}, {0: 1.0}) == 5.0


def test_rounding_slivers_do_not_create_transport():
    # cumsum([0.1, 0.2, 0.7]) = [0.1, 0.30000000000000004, 1]: a 4e-17 sliver would pair
    # a's value 1 with b's value 5 (distance 4); the true W∞ is 3 (2 -> 5).
    a, b = D({0: 0.1, 1: 0.2, 2: 0.7}), D({0: 0.3, 5: 0.7})
    assert w_infinity(a, b) == 3.0
    assert kantorovich_delta_star(a, b) == 3.0
    assert optimal_plan(a, b)[:, 2].sum() == pytest.approx(1.0)


@pytest.mark.parametrize("fa", [0.999999999999, 0.9999999999990001])
def test_delta_star_survives_a_cdf_that_rounds_above_one(fa):
    # b's cumulative sum reaches 1.0000000000000002 at x = 3 (before its 1e-20 tail), while
    # a's CDF there is 1 - 1e-12: the two differ only by rounding near 1. searchsorted on the
    # non-monotone cumsum used to return len(b) -> raw IndexError (now both the stored CDF is
    # capped at 1 and kantorovich_delta_star treats overshoots as ties).
    b = D(dict(enumerate([0.42545606663941493, 0.3177034284927794, 0.16253680678082733,
                          0.09430369808697836, 1e-20])))
    assert np.cumsum(b.probs)[-2] > 1.0  # the construction really overshoots (raw cumsum)
    assert np.all(np.diff(b._cum) >= 0)   # and the stored CDF is capped, so monotone
    a = D({3: fa, 5: 1 - fa})
    assert kantorovich_delta_star(a, b) == kantorovich_delta_star(b, a) == w_infinity(a, b) == 3.0


def test_relaxed_scale_golden():
    # a pure shift by 2: the only column has all mass at distance 2: e^{2/θ} = e^ε
    assert relaxed_kantorovich_scale({0: 1.0}, {2: 1.0}, 0.5) == pytest.approx(4.0)
    # identical laws: every column has its mass at distance 0
    assert relaxed_kantorovich_scale({0: 0.5, 1: 0.5}, {0: 0.5, 1: 0.5}, 1.0) == 0.0


@settings(max_examples=150, deadline=None)
@given(small_dists(), small_dists())
def test_w_infinity_equals_delta_star_and_brute_force(a, b):
    w = w_infinity(a, b)
    assert w == kantorovich_delta_star(a, b) == kantorovich_delta_star(b, a) == w_infinity(b, a)
    assert w == brute_w_infinity(a, b)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(-50, 50, allow_nan=False), min_size=1, max_size=6, unique=True),
    st.lists(st.floats(-50, 50, allow_nan=False), min_size=1, max_size=6, unique=True),
    st.data(),
)
def test_w_infinity_equals_delta_star_on_real_supports(sa, sb, data):
    def law(s):
        w = np.array(data.draw(st.lists(st.integers(1, 50), min_size=len(s), max_size=len(s))))
        return DiscreteDistribution.from_arrays(s, w / w.sum())

    a, b = law(sa), law(sb)
    assert w_infinity(a, b) == kantorovich_delta_star(a, b)


# ------------------------------------------------------------------------ exact loss


def test_shift_loss_is_exact():
    eps, w = laplace_pair_epsilon({5: 1.0}, {3: 1.0}, 0.5)
    assert eps == pytest.approx(4.0, rel=1e-12)
    assert w in (3.0, 5.0)


def test_tiny_and_huge_scales_stay_finite_and_exact():
    # spread 100 at scale 1e-3: e^{-1e5} underflows, the log-space recursions do not
    eps, _ = laplace_pair_epsilon({0: 1.0}, {100: 1.0}, 1e-3)
    assert eps == pytest.approx(1e5, rel=1e-12)
    # same supports: as the scale -> 0 the loss tends to max |log mu_a / mu_b| = log 1.25
    eps, _ = laplace_pair_epsilon({0: 0.5, 100: 0.5}, {0: 0.4, 100: 0.6}, 1e-3)
    assert eps == pytest.approx(math.log(1.25), rel=1e-12)
    # huge scale: the shift loss is 100 / 1e12 without cancellation
    eps, _ = laplace_pair_epsilon({0: 1.0}, {100: 1.0}, 1e12)
    assert eps == pytest.approx(1e-10, rel=1e-9)
    # absurd scale: overflow becomes +inf, never NaN
    eps, _ = laplace_pair_epsilon({0: 1.0}, {100: 1.0}, 5e-324)
    assert eps == math.inf


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_dists(), small_dists(), st.floats(0.05, 20.0))
def test_pair_epsilon_matches_dense_grid(a, b, scale):
    eps, w = laplace_pair_epsilon(a, b, scale)
    grid = dense_grid_epsilon(a, b, scale)
    assert eps >= grid * (1 - 1e-9) - 1e-12
    assert eps == pytest.approx(grid, rel=1e-9, abs=1e-12)
    assert w in set(a.support.tolist()) | set(b.support.tolist())
    assert laplace_pair_epsilon(b, a, scale)[0] == pytest.approx(eps, rel=1e-12, abs=1e-15)


@settings(max_examples=80, deadline=None)
@given(small_dists(), small_dists(), st.floats(0.1, 10.0))
def test_discrete_laplace_equals_continuous_on_integers(a, b, scale):
    eps, _ = discrete_laplace_pair_epsilon(a, b, scale)
    assert eps == laplace_pair_epsilon(a, b, scale)[0]
    # brute force: pmf of F + DiscreteLaplace on a wide integer range
    k = np.arange(-80, 81)

    def log_pmf(d):
        return logsumexp(np.log(d.probs)[None, :] - np.abs(k[:, None] - d.support) / scale, 1)

    brute = float(np.max(np.abs(log_pmf(a) - log_pmf(b))))
    assert eps == pytest.approx(brute, rel=1e-9, abs=1e-12)


def test_discrete_laplace_needs_integers():
    with pytest.raises(InvalidParameterError, match="integer"):
        discrete_laplace_pair_epsilon({0.5: 1.0}, {1: 1.0}, 1.0)
    with pytest.raises(InvalidParameterError, match="integer"):
        exact_laplace_scale([({0.5: 1.0}, {1: 1.0})], 1.0, discrete=True)


@settings(max_examples=25, deadline=None)
@given(small_dists(), small_dists(), st.floats(0.1, 10.0), st.floats(1.01, 5.0))
def test_loss_never_increases_with_scale(a, b, scale, factor):
    small = laplace_pair_epsilon(a, b, scale)[0]
    assert laplace_pair_epsilon(a, b, scale * factor)[0] <= small * (1 + 1e-12) + 1e-15


@settings(max_examples=80, deadline=None)
@given(small_dists(), small_dists(), st.sampled_from([0.1, 0.5, 1.0, 2.0]))
def test_exact_scale_passes_audit_is_minimal_and_below_w_infinity(a, b, eps):
    lam = exact_laplace_scale([(a, b)], eps)
    assert lam <= w_infinity(a, b) / eps * (1 + 1e-12)
    if lam == 0.0:  # releasing F itself is already ε-private
        both = np.array_equal(a.support, b.support)
        assert both and np.max(np.abs(np.log(a.probs / b.probs))) <= eps
        return
    assert laplace_pair_epsilon(a, b, lam)[0] <= eps + 1e-9
    assert laplace_pair_epsilon(a, b, lam * (1 - 1e-7))[0] > eps


@settings(max_examples=80, deadline=None)
@given(small_dists(), small_dists(), st.sampled_from([0.1, 0.5, 1.0, 3.0]))
def test_relaxed_condition_20_passes_the_audit(a, b, eps):
    # eq. (20) on columns gives p_a <= e^ε p_b and on rows p_b <= e^ε p_a: the audit agrees
    theta = relaxed_kantorovich_scale(a, b, eps)
    assert theta <= w_infinity(a, b) / eps * (1 + 1e-12)
    if theta > 0:
        assert laplace_pair_epsilon(a, b, theta)[0] <= eps + 1e-9
        assert theta >= exact_laplace_scale([(a, b)], eps) * (1 - 1e-8)


def test_exact_scale_multiple_pairs_and_options():
    pairs = [({0: 1.0}, {1: 1.0}), ({0: 1.0}, {3: 1.0})]
    assert exact_laplace_scale(pairs, 1.0) == pytest.approx(3.0, rel=1e-8)
    assert exact_laplace_scale(pairs, 1.0, discrete=True) == pytest.approx(3.0, rel=1e-8)
    assert exact_laplace_scale(pairs, 1.0, upper=10.0) == pytest.approx(3.0, rel=1e-8)
    loose = exact_laplace_scale(pairs, 1.0, rtol=1e-3)
    assert 3.0 <= loose <= 3.0 * (1 + 1e-3)
    # identical laws, or laws whose own likelihood ratio is within e^ε: no noise needed
    assert exact_laplace_scale([({0: 0.5, 1: 0.5}, {0: 0.5, 1: 0.5})], 1.0) == 0.0
    assert exact_laplace_scale([({0: 0.5, 1: 0.5}, {0: 0.6, 1: 0.4})], 1.0) == 0.0
    assert exact_laplace_scale([({0: 0.5, 1: 0.5}, {0: 0.6, 1: 0.4})], 0.1) > 0.0


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"epsilon": "1"}, ParameterTypeError),
        ({"epsilon": True}, ParameterTypeError),
        ({"epsilon": 0.0}, InvalidParameterError),
        ({"epsilon": float("nan")}, InvalidParameterError),
        ({"epsilon": 1.0, "upper": 0.5}, InvalidParameterError),
        ({"epsilon": 1.0, "rtol": 2.0}, InvalidParameterError),
        ({"epsilon": 1.0, "discrete": "yes"}, ParameterTypeError),
    ],
)
def test_exact_scale_bad_arguments(kwargs, error):
    with pytest.raises(error):
        exact_laplace_scale([({0: 1.0}, {1: 1.0})], **kwargs)


@pytest.mark.parametrize("pairs", [[], "ab", [({0: 1.0},)], [(1, 2)]])
def test_exact_scale_bad_pairs(pairs):
    with pytest.raises(PufferfishError):
        exact_laplace_scale(pairs, 1.0)


@pytest.mark.parametrize("scale", [0.0, -1.0, float("inf"), "2", False])
def test_pair_epsilon_bad_scale(scale):
    with pytest.raises(PufferfishError):
        laplace_pair_epsilon({0: 1.0}, {1: 1.0}, scale)


def test_functions_accept_dicts_and_reject_other_types():
    assert w_infinity({0: 1.0}, D({2: 1.0})) == 2.0
    with pytest.raises(ParameterTypeError):
        w_infinity([0, 1], {0: 1.0})
    with pytest.raises(InvalidModelError):
        laplace_pair_epsilon({0: 0.5}, {0: 1.0}, 1.0)


def test_w_infinity_sees_a_tiny_real_mass_at_a_point_the_other_lacks():
    # Regression: a mass of 1e-13 at 1 must be moved to 0, so W_inf = 1 (not 0, which would
    # release F with no noise and an infinite loss).
    from pufferfish_pgm.distributions import w_infinity

    assert w_infinity({0: 1 - 1e-13, 1: 1e-13}, {0: 1.0}) == 1.0
    assert w_infinity({0: 1.0}, {0: 1e-13, 5: 1 - 1e-13}) == 5.0
    # rounding ties (0.1 + 0.2 != 0.3) still create no fake transport
    assert w_infinity({0: 0.1, 1: 0.2, 2: 0.7}, {0: 0.3, 2: 0.7}) == 1.0
