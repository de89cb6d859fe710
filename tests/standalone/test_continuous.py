"""Tests for the continuous-attribute sum mechanism (002_* §7.1, Lemma 7.1)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pufferfish_pgm.noise as noise
import pufferfish_pgm.standalone.continuous as continuous
from pufferfish_pgm.distributions import DiscreteDistribution
from pufferfish_pgm.errors import (
    InvalidDataError,
    InvalidParameterError,
    ParameterTypeError,
    PufferfishError,
)
from pufferfish_pgm.noise import Release
from pufferfish_pgm.privacy_loss import laplace_pair_epsilon
from pufferfish_pgm.standalone.continuous import ContinuousSum


def test_scale_is_four_k_over_epsilon():
    m = ContinuousSum(epsilon=0.5, k=1000.0)
    assert m.scale == 8000.0 and m.sensitivity == 4000.0 and not m.relative
    rel = ContinuousSum.from_factor(epsilon=2.0, c=0.5)
    assert rel.relative and rel.k == pytest.approx(math.log(2.0))
    assert rel.scale == pytest.approx(4 * math.log(2.0) / 2.0)


@pytest.mark.parametrize(
    ("args", "kwargs", "error"),
    [
        (("1", 1.0), {}, ParameterTypeError),
        ((True, 1.0), {}, ParameterTypeError),
        ((1.0, 0.0), {}, InvalidParameterError),
        ((1.0, -2.0), {}, InvalidParameterError),
        ((float("nan"), 1.0), {}, InvalidParameterError),
        ((1.0, 1.0), {"relative": "yes"}, ParameterTypeError),
    ],
)
def test_bad_parameters(args, kwargs, error):
    with pytest.raises(error):
        ContinuousSum(epsilon=args[0], k=args[1], **kwargs)


@pytest.mark.parametrize("c", [0.0, 1.0, 1.5, "0.5"])
def test_bad_factor(c):
    with pytest.raises(PufferfishError):
        ContinuousSum.from_factor(epsilon=1.0, c=c)


@pytest.mark.parametrize(
    ("values", "relative", "fragment"),
    [
        ([1.0, 2.0, float("nan")], False, "values[2] = nan"),
        ([float("inf"), 2.0], False, "values[0] = inf"),
        ([3.0, 0.0], True, "values[1] = 0.0"),
        ([3.0, -2.0, 1.0], True, "values[1] = -2.0"),
        ([], False, "empty"),
        (["a", "b"], False, "real numbers"),
        ([[1.0, 2.0]], False, "1-D"),
    ],
)
def test_bad_values_name_the_row(values, relative, fragment):
    m = ContinuousSum(epsilon=1.0, k=1.0, relative=relative)
    with pytest.raises(InvalidDataError) as err:
        m.release(values, rng=np.random.default_rng(0))
    assert fragment in str(err.value)


def test_release_calls_add_noise_with_scale_and_sensitivity(monkeypatch):
    calls = []

    def stub(answer, scale, rng=None, sensitivity=1.0, grid=None):
        calls.append((answer, scale, rng, sensitivity))
        return answer + 1.0

    monkeypatch.setattr(continuous, "add_noise", stub)   # the name the mechanism calls
    rng = np.random.default_rng(0)
    out = ContinuousSum(epsilon=2.0, k=5.0).release([1.0, 2.5, 3.5], rng=rng)
    assert calls == [(7.0, 10.0, rng, 20.0)]
    assert out == Release(
        value=8.0, scale=10.0, epsilon=2.0, mechanism="ContinuousSum", query="sum"
    )
    # relative: the sum of logs gets the noise; value is the noisy geometric mean
    out = ContinuousSum(epsilon=1.0, k=0.1, relative=True).release([2.0, 8.0], rng=rng)
    assert calls[-1][0] == pytest.approx(math.log(16.0))
    assert calls[-1][1:] == (pytest.approx(0.4), rng, pytest.approx(0.4))
    assert 2 * math.log(out.value) == pytest.approx(math.log(16.0) + 1.0)  # n log(value)
    assert out.value == pytest.approx(4.0 * math.exp(0.5))
    assert (out.mechanism, out.query) == ("ContinuousSum(relative)", "geometric_mean")


def test_release_with_the_real_sampler_is_reproducible_and_centred():
    m = ContinuousSum(epsilon=1.0, k=2.0)
    values = [10.0, 20.0, 12.5]
    one = m.release(values, rng=np.random.default_rng(42))
    two = m.release(values, rng=np.random.default_rng(42))
    assert one == two and isinstance(one.value, float)
    rng = np.random.default_rng(1)
    draws = np.array([m.release(values, rng=rng).value for _ in range(400)])
    # Laplace(8): sd = 8·sqrt(2) ≈ 11.3; the mean of 400 draws has sd ≈ 0.57 (5 sd: 3)
    assert abs(draws.mean() - 42.5) < 3.0
    assert 8.0 < draws.std() < 15.0
    secure = m.release(values)  # rng=None: OS randomness
    assert math.isfinite(secure.value)


def test_relative_release_with_the_real_sampler():
    m = ContinuousSum.from_factor(epsilon=1.0, c=0.9)
    rng = np.random.default_rng(3)
    values = [50_000.0, 60_000.0, 40_000.0, 55_000.0]
    rel = m.release(values, rng=rng)
    geo = math.exp(np.mean(np.log(values)))
    assert 0.2 * geo < rel.value < 5 * geo
    # value = exp(A / n) with A = sum log t_i + X on add_noise's grid: n log(value) / grid is
    # an integer up to the rounding of exp and log
    cells = 4 * math.log(rel.value) / noise.default_grid(min(m.scale, m.sensitivity))
    assert abs(cells - round(cells)) < 1e-6


@pytest.mark.parametrize("relative", [False, True])
def test_release_is_the_shared_release_without_the_exact_answer(relative):
    m = ContinuousSum(epsilon=0.5, k=2.0, relative=relative)
    values = [10.0, 20.0, 12.5]
    rel = m.release(values, rng=np.random.default_rng(5))
    assert type(rel) is Release
    assert [f.name for f in dataclasses.fields(rel)] == [
        "value", "scale", "epsilon", "mechanism", "query", "coordinates"
    ]
    assert not hasattr(rel, "answer")
    exact = float(np.sum(np.log(values))) if relative else 42.5
    shown = math.exp(exact / 3) if relative else exact
    assert exact not in dataclasses.astuple(rel) and shown not in dataclasses.astuple(rel)
    assert (rel.scale, rel.epsilon) == (m.scale, 0.5)
    assert rel.query == ("geometric_mean" if relative else "sum")
    with pytest.raises(dataclasses.FrozenInstanceError):
        rel.value = 0.0  # type: ignore[misc]


@pytest.mark.parametrize("relative", [False, True])
def test_low_bits_of_the_values_do_not_reach_the_release(relative):
    # the noisy answer lies on add_noise's grid: sums differing in their last bits give the
    # same release under the same seed
    m = ContinuousSum(epsilon=1.0, k=2.0, relative=relative)
    base = [10.0, 20.0, 12.5]
    nudged = [10.0 + 1e-12, 20.0, math.nextafter(12.5, 13.0)]
    for seed in range(50):
        one = m.release(base, rng=np.random.default_rng(seed))
        two = m.release(nudged, rng=np.random.default_rng(seed))
        assert one == two


@settings(max_examples=60, deadline=None)
@given(
    st.floats(-100, 100),
    st.floats(0.1, 20),
    st.sampled_from([0.1, 0.5, 1.0, 2.0]),
    st.lists(st.floats(0, 0.999), min_size=1, max_size=4),
    st.lists(st.floats(0, 0.999), min_size=1, max_size=4),
    st.lists(st.integers(-50, 50), min_size=1, max_size=4, unique=True),
)
def test_lemma_7_1_audit(x, k, eps, u, v, rest_support):
    # Secret pair: t in [x - k, x + k) versus t in [x + k, x + 3k), any independent priors.
    # Audit the released sum (t + other records + Laplace(4k/ε)) exactly.
    rest = DiscreteDistribution.from_arrays(
        rest_support, np.full(len(rest_support), 1 / len(rest_support))
    )

    def prior(offsets, lo):
        pts = lo + 2 * k * np.asarray(offsets)
        return DiscreteDistribution.from_arrays(pts, np.full(pts.size, 1 / pts.size))

    a = rest.convolve(prior(u, x - k))
    b = rest.convolve(prior(v, x + k))
    scale = ContinuousSum(epsilon=eps, k=k).scale
    assert laplace_pair_epsilon(a, b, scale)[0] <= eps + 1e-9


def test_lemma_7_1_is_tight():
    # the extreme values x - k and x + 3k - δ differ by almost 4k: the loss approaches ε
    k, eps = 3.0, 0.7
    scale = ContinuousSum(epsilon=eps, k=k).scale
    loss, _ = laplace_pair_epsilon({-k: 1.0}, {3 * k - 1e-9: 1.0}, scale)
    assert eps - 1e-8 < loss <= eps
