"""Tests for pufferfish_pgm.noise: exact discrete Laplace, grid Laplace and add_noise."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats

from pufferfish_pgm.errors import (
    InvalidDataError,
    InvalidParameterError,
    LimitExceededError,
    ParameterTypeError,
    PufferfishError,
)
from pufferfish_pgm.noise import (
    MAX_SCALE,
    add_noise,
    default_grid,
    sample_discrete_laplace,
    sample_laplace,
)

BAD_SCALES = [0, -1, math.nan, math.inf, "1", True]


def pmf(k: np.ndarray, scale: float) -> np.ndarray:
    q = math.exp(-1.0 / scale)
    return (1 - q) / (1 + q) * q ** np.abs(k)


def abs_moments(scale: float) -> tuple[float, float]:
    """Exact E|K| and E K^2 of the discrete Laplace distribution."""
    q = math.exp(-1.0 / scale)
    return 2 * q / (1 - q * q), 2 * q / (1 - q) ** 2


def g_test_pvalue(draws: np.ndarray, scale: float) -> float:
    """G-test of draws against the pmf; k <= -K and k >= K are pooled so every bin expects >= 5."""
    n, q = draws.size, math.exp(-1.0 / scale)
    cutoff = 1
    while min(n * pmf(np.array(cutoff), scale), n * q ** (cutoff + 1) / (1 + q)) >= 5:
        cutoff += 1
    inner = np.arange(-cutoff + 1, cutoff)
    tail = q**cutoff / (1 + q)
    expected = n * np.concatenate([[tail], pmf(inner, scale), [tail]])
    observed = np.concatenate(
        [[np.sum(draws <= -cutoff)], [np.sum(draws == k) for k in inner], [np.sum(draws >= cutoff)]]
    )
    return stats.power_divergence(observed, expected, lambda_="log-likelihood").pvalue


# ---------------------------------------------------------------- distribution


@pytest.mark.parametrize("scale", [0.3, 1.0, 5.0])
def test_discrete_laplace_matches_pmf_seeded(scale: float) -> None:
    draws = sample_discrete_laplace(scale, size=50_000, rng=np.random.default_rng(12345))
    assert g_test_pvalue(draws, scale) > 1e-3


@pytest.mark.parametrize("scale", [0.3, 1.0, 5.0])
def test_discrete_laplace_matches_pmf_secure(scale: float) -> None:
    draws = sample_discrete_laplace(scale, size=50_000)  # OS randomness: not reproducible
    assert g_test_pvalue(draws, scale) > 1e-5


@pytest.mark.parametrize("scale", [0.5, 2.5, 1 / 3, 1000.1])
def test_discrete_laplace_other_scales(scale: float) -> None:
    draws = sample_discrete_laplace(scale, size=50_000, rng=np.random.default_rng(7))
    if scale < 100:
        assert g_test_pvalue(draws, scale) > 1e-3
    mean_abs, second = abs_moments(scale)
    std_err = math.sqrt((second - mean_abs**2) / draws.size)
    assert abs(np.abs(draws).mean() - mean_abs) < 5 * std_err


@pytest.mark.parametrize("scale", [1.0, 5.0])
def test_symmetry_and_variance(scale: float) -> None:
    draws = sample_discrete_laplace(scale, size=200_000, rng=np.random.default_rng(2024))
    q = math.exp(-1.0 / scale)
    variance = 2 * q / (1 - q) ** 2
    assert abs(draws.mean()) < 5 * math.sqrt(variance / draws.size)
    fourth = np.mean(draws.astype(float) ** 4)
    assert abs(draws.var() - variance) < 5 * math.sqrt((fourth - variance**2) / draws.size)
    for k in (1, 2, 3):
        plus, minus = int(np.sum(draws == k)), int(np.sum(draws == -k))
        assert stats.binomtest(plus, plus + minus).pvalue > 1e-3


def test_tiny_scale_is_almost_surely_zero() -> None:
    # Fraction(1e-5) and Fraction(1e-300) have denominators far above 2**63.
    assert not np.any(sample_discrete_laplace(1e-5, size=2000))
    assert not np.any(sample_discrete_laplace(1e-300, size=100, rng=np.random.default_rng(0)))


def test_secure_default_differs_between_calls() -> None:
    first, second = sample_discrete_laplace(10.0, size=20), sample_discrete_laplace(10.0, size=20)
    assert first.dtype == np.int64 and first.shape == (20,)
    assert not np.array_equal(first, second)


def test_seeded_generator_is_reproducible() -> None:
    one = sample_discrete_laplace(3.0, size=(4, 5), rng=np.random.default_rng(99))
    two = sample_discrete_laplace(3.0, size=(4, 5), rng=np.random.default_rng(99))
    np.testing.assert_array_equal(one, two)
    rng = np.random.default_rng(99)
    assert sample_discrete_laplace(3.0, rng=rng) == sample_discrete_laplace(
        3.0, rng=np.random.default_rng(99)
    )


def test_return_types_and_shapes() -> None:
    assert isinstance(sample_discrete_laplace(2.0), int)
    assert sample_discrete_laplace(2.0, size=0).shape == (0,)
    assert sample_discrete_laplace(2.0, size=(2, 0, 3)).shape == (2, 0, 3)
    assert sample_discrete_laplace(2.0, size=[3, 2]).shape == (3, 2)
    assert isinstance(sample_laplace(2.0), float)
    assert sample_laplace(2.0, size=(3, 2)).dtype == np.float64


def test_rare_overflow_branch_is_exact() -> None:
    # Only reachable with a geometric count v > 2**9 (probability below exp(-500)): test the
    # helper directly that computes (u + n * v) // d.
    from pufferfish_pgm.noise._discrete_laplace_sampler import floor_ratio as _floor_ratio

    n, d = 2**53 - 1, 2**20 + 1
    u, v = np.array([5, 7], dtype=np.int64), np.array([1, 4000], dtype=np.int64)
    assert _floor_ratio(u, v, n, d).tolist() == [(5 + n) // d, (7 + n * 4000) // d]
    assert _floor_ratio(u, v, n, 2**70).tolist() == [0, (7 + n * 4000) // 2**70]
    # a quotient beyond int64 is clamped, and the sampler then raises LimitExceededError
    assert _floor_ratio(u, v, n, 3).tolist() == [(5 + n) // 3, 2**63 - 1]


# ---------------------------------------------------------------- sample_laplace


def test_sample_laplace_on_grid() -> None:
    grid = default_grid(2.0)
    assert grid == 2.0**-19 and grid <= 2.0 * 2.0**-20
    draws = sample_laplace(2.0, size=100_000, rng=np.random.default_rng(3))
    np.testing.assert_array_equal(draws / grid, np.round(draws / grid))
    assert abs(np.abs(draws).mean() - 2.0) < 5 * 2.0 / math.sqrt(draws.size)
    coarse = sample_laplace(2.0, size=1000, rng=np.random.default_rng(3), grid=0.5)
    np.testing.assert_array_equal(coarse * 2, np.round(coarse * 2))


# ---------------------------------------------------------------- add_noise


def test_add_noise_integer_answers_stay_integers() -> None:
    assert isinstance(add_noise(5, 1.0), int)
    assert isinstance(add_noise(np.int32(5), 1.0), int)
    out = add_noise(np.arange(6, dtype=np.int32).reshape(2, 3), 2.0)
    assert out.dtype == np.int64 and out.shape == (2, 3)
    assert add_noise(np.array([3], dtype=np.uint64), 1.0).dtype == np.int64


def test_add_noise_float_answers_on_grid() -> None:
    grid = default_grid(1.0)
    out = add_noise(np.linspace(-3.3, 7.7, 50), 1.0, rng=np.random.default_rng(4))
    assert out.dtype == np.float64 and out.shape == (50,)
    np.testing.assert_array_equal(out / grid, np.round(out / grid))
    value = add_noise(0.123456789, 2.0, sensitivity=0.5)  # grid from min(scale, sensitivity)
    assert isinstance(value, float)
    assert value / default_grid(0.5) == round(value / default_grid(0.5))
    assert add_noise(1.3, 1.0, grid=0.25) * 4 % 1 == 0


def test_add_noise_path_depends_on_type_not_value() -> None:
    # A float that happens to be whole still takes the grid path (a value-based choice would
    # reveal whether the answer was whole).
    assert isinstance(add_noise(3.0, 1.0), float)
    assert isinstance(add_noise(3, 1.0), int)


def test_add_noise_hides_low_bits() -> None:
    low = add_noise(0.1, 1.0, rng=np.random.default_rng(5))
    high = add_noise(0.1 + 1e-12, 1.0, rng=np.random.default_rng(5))
    assert low == high
    near = [add_noise(np.full(8, a), 1.0, rng=np.random.default_rng(6)) for a in (0.7, 0.7 + 1e-9)]
    np.testing.assert_array_equal(*near)


def test_add_noise_mean_absolute_noise_integer() -> None:
    scale, n = 3.0, 100_000
    noise = add_noise(np.zeros(n, dtype=np.int64), scale, rng=np.random.default_rng(8))
    mean_abs, second = abs_moments(scale)
    assert abs(np.abs(noise).mean() - mean_abs) < 4 * math.sqrt((second - mean_abs**2) / n)
    assert abs(mean_abs - scale) < 0.03 * scale  # the discrete and continuous scales agree


def test_add_noise_mean_absolute_noise_float() -> None:
    scale, n = 3.0, 100_000
    noise = add_noise(np.full(n, 0.5), scale, rng=np.random.default_rng(9)) - 0.5
    assert abs(np.abs(noise).mean() - scale) < 4 * scale / math.sqrt(n)


def test_add_noise_large_answers_use_exact_integers() -> None:
    out = add_noise(np.array([1e15, -1e15]), 1.0, rng=np.random.default_rng(10))
    assert np.all(np.abs(np.abs(out) - 1e15) < 100)


@settings(max_examples=40, deadline=None)
@given(
    st.one_of(
        hnp.arrays(
            dtype=st.sampled_from([np.int8, np.int32, np.uint16, np.uint32]),
            shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
        ),
        hnp.arrays(  # int64 answers must lie within +-2**62
            dtype=np.int64,
            shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
            elements=st.integers(-(2**62), 2**62),
        ),
    ),
    st.floats(min_value=0.01, max_value=1e6),
)
def test_add_noise_integer_arrays_property(values: np.ndarray, scale: float) -> None:
    out = add_noise(values, scale, rng=np.random.default_rng(0))
    if values.ndim == 0:
        assert isinstance(out, int)
    else:
        assert out.dtype == np.int64 and out.shape == values.shape


@settings(max_examples=40, deadline=None)
@given(
    hnp.arrays(
        dtype=np.float64,
        shape=hnp.array_shapes(min_dims=1, max_dims=2, max_side=5),
        elements=st.floats(-1e6, 1e6),
    ),
    st.floats(min_value=0.01, max_value=100.0),
)
def test_add_noise_float_arrays_property(values: np.ndarray, scale: float) -> None:
    out = add_noise(values, scale, rng=np.random.default_rng(1))
    grid = default_grid(min(scale, 1.0))
    assert out.shape == values.shape and out.dtype == np.float64
    np.testing.assert_array_equal(out / grid, np.round(out / grid))


# ---------------------------------------------------------------- bad inputs


@pytest.mark.parametrize("value", BAD_SCALES)
@pytest.mark.parametrize(
    "call",
    [
        lambda s: sample_discrete_laplace(s),
        lambda s: sample_laplace(s),
        lambda s: add_noise(1, s),
        lambda s: add_noise(1.5, 1.0, sensitivity=s),
        lambda s: default_grid(s),
    ],
)
def test_bad_scale_rejected(call, value) -> None:
    with pytest.raises(PufferfishError, match=repr(value).replace("'", "'?")):
        call(value)


@pytest.mark.parametrize("value", ["1", True, None])
def test_bad_scale_types(value) -> None:
    with pytest.raises(ParameterTypeError):
        sample_discrete_laplace(value)


def test_too_large_scale() -> None:
    with pytest.raises(LimitExceededError, match="2\\*\\*52"):
        sample_discrete_laplace(MAX_SCALE * 2)
    with pytest.raises(LimitExceededError, match="grid"):
        sample_laplace(1.0, grid=2.0**-60)


@pytest.mark.parametrize("size", [-1, 2.5, "3", True, (2, -1), (2, 1.0)])
def test_bad_size(size) -> None:
    with pytest.raises(PufferfishError, match="size"):
        sample_discrete_laplace(1.0, size=size)


@pytest.mark.parametrize("rng", [0, np.random.RandomState(0), "secure"])
def test_bad_rng(rng) -> None:
    with pytest.raises(ParameterTypeError, match="Generator"):
        sample_discrete_laplace(1.0, rng=rng)


@pytest.mark.parametrize("grid", [0.1, 3.0, 0, -0.5, math.nan])
def test_bad_grid(grid) -> None:
    with pytest.raises(InvalidParameterError, match="grid"):
        add_noise(0.5, 1.0, grid=grid)
    with pytest.raises(InvalidParameterError, match="grid"):
        sample_laplace(1.0, grid=grid)


@pytest.mark.parametrize(
    ("answer", "error", "text"),
    [
        (math.nan, InvalidDataError, "nan"),
        (np.array([1.0, math.inf]), InvalidDataError, "inf"),
        ("3", ParameterTypeError, "'3'"),
        (True, ParameterTypeError, "True"),
        (np.array([1 + 2j]), ParameterTypeError, "complex"),
        (2**70, InvalidDataError, str(2**70)),
        (np.array([2**62 + 1]), InvalidDataError, "2\\*\\*62"),
    ],
)
def test_bad_answers(answer, error, text) -> None:
    with pytest.raises(error, match=text):
        add_noise(answer, 1.0)


def test_public_names_survive_the_split() -> None:
    # the sampler internals live in pufferfish_pgm.noise._discrete_laplace_sampler; noise's
    # public API is unchanged but for IntegerNoise (the optimal noise laws, issue 13), Release
    # (moved here in 0.2.0) and GRID_BITS (now in the engine face, issue 20)
    import pufferfish_pgm.noise as noise

    assert sorted(noise.__all__) == [
        "IntegerNoise", "MAX_SCALE", "Release", "add_noise", "check_confidence", "default_grid",
        "discrete_laplace_halfwidth", "discrete_laplace_tail", "grid_noise_scale",
        "laplace_halfwidth", "noise_halfwidth", "sample_discrete_laplace", "sample_laplace",
    ]  # fmt: skip
    assert all(hasattr(noise, name) for name in noise.__all__)
    # the same seeded draws as before the split (also pinned by the module's doctests)
    assert sample_discrete_laplace(3.0, size=5, rng=np.random.default_rng(0)).tolist() == [
        7, -2, 2, 4, 1]


# ---------------------------------------------------------------- half-widths


@pytest.mark.parametrize("scale", [0.2, 1.0, 2.5, 7.0])
def test_discrete_tail_closed_form_matches_summation(scale: float) -> None:
    # P(|Z| > h) = 2 q^(h+1) / (1 + q): derived from the geometric series of the pmf
    from pufferfish_pgm.noise import discrete_laplace_tail

    k = np.arange(-2000, 2001)
    for h in range(0, 30):
        by_sum = pmf(k[np.abs(k) > h], scale).sum()
        assert discrete_laplace_tail(scale, h) == pytest.approx(by_sum, rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("confidence", [0.5, 0.9, 0.999])
def test_laplace_halfwidth_is_the_continuous_quantile(confidence: float) -> None:
    from pufferfish_pgm.noise import laplace_halfwidth

    want = stats.laplace(scale=3.0).ppf(0.5 + confidence / 2)
    assert laplace_halfwidth(3.0, confidence) == pytest.approx(want, rel=1e-12)


def test_halfwidth_grows_with_simultaneous_coordinates() -> None:
    from pufferfish_pgm.noise import discrete_laplace_halfwidth, discrete_laplace_tail

    for n in (1, 2, 10, 1000):
        h = discrete_laplace_halfwidth(2.0, 0.9, coordinates=n)
        assert (1 - discrete_laplace_tail(2.0, h)) ** n >= 0.9
        assert h == 0 or (1 - discrete_laplace_tail(2.0, h - 1)) ** n < 0.9


def test_halfwidth_at_the_largest_scale_is_finite() -> None:
    from pufferfish_pgm.noise import noise_halfwidth

    h = noise_halfwidth(MAX_SCALE, 0.999999, integer=True)
    assert isinstance(h, int) and h == pytest.approx(-MAX_SCALE * math.log(1e-6), rel=1e-6)


def test_grid_noise_scale_rounds_up_exactly() -> None:
    from fractions import Fraction

    from pufferfish_pgm.noise import grid_noise_scale

    ratio = grid_noise_scale(0.1, 0.3, 2.0**-30)
    # all in Fractions: Fraction * float is a float (the bug this pins: the scale was rounded
    # in floats, not up)
    grid = Fraction(1, 2**30)
    exact = Fraction(0.1) * (Fraction(0.3) + grid) / (Fraction(0.3) * grid)
    assert Fraction(ratio) >= exact and Fraction(math.nextafter(ratio, 0)) < exact
