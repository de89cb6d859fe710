"""Tests for the planar Laplace mechanism (geo-indistinguishability)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy import stats

from pufferfish_pgm.errors import (
    InvalidDataError,
    InvalidParameterError,
    ParameterTypeError,
    PufferfishError,
)
from pufferfish_pgm.mechanisms.geo import GeoRelease, PlanarLaplaceMechanism


def noisy_offsets(mech: PlanarLaplaceMechanism, n: int, rng=None) -> np.ndarray:
    origin = (10.0, -4.0)
    points = np.array([mech.release(origin, rng=rng).value for _ in range(n)])
    return points - np.array(origin)


def test_radius_and_angle_distribution_seeded() -> None:
    mech = PlanarLaplaceMechanism(epsilon=0.8, r=2.0)
    offsets = noisy_offsets(mech, 20_000, rng=np.random.default_rng(11))
    radius = np.hypot(offsets[:, 0], offsets[:, 1])
    scale = 2.0 / 0.8
    assert mech.scale == scale
    # Gamma(2, scale): mean 2 scale, variance 2 scale^2
    assert abs(radius.mean() - 2 * scale) < 5 * math.sqrt(2) * scale / math.sqrt(radius.size)
    assert stats.kstest(radius, stats.gamma(a=2, scale=scale).cdf).pvalue > 1e-3
    angle = np.mod(np.arctan2(offsets[:, 1], offsets[:, 0]), 2 * math.pi) / (2 * math.pi)
    assert stats.kstest(angle, "uniform").pvalue > 1e-3


def test_radius_and_angle_distribution_secure() -> None:
    mech = PlanarLaplaceMechanism(epsilon=2.0)
    offsets = noisy_offsets(mech, 5_000)
    radius = np.hypot(offsets[:, 0], offsets[:, 1])
    assert stats.kstest(radius, stats.gamma(a=2, scale=0.5).cdf).pvalue > 1e-5
    angle = np.mod(np.arctan2(offsets[:, 1], offsets[:, 0]), 2 * math.pi) / (2 * math.pi)
    assert stats.kstest(angle, "uniform").pvalue > 1e-5


def test_release_fields_and_reproducibility() -> None:
    mech = PlanarLaplaceMechanism(1.5, r=3.0)
    one = mech.release([1, 2], rng=np.random.default_rng(3))
    two = mech.release(np.array([1.0, 2.0]), rng=np.random.default_rng(3))
    assert isinstance(one, GeoRelease) and one == two
    assert (one.scale, one.epsilon, one.mechanism) == (2.0, 1.5, "planar_laplace")
    assert all(isinstance(c, float) for c in one.value)
    assert mech.release((1, 2)).value != mech.release((1, 2)).value  # secure default
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.scale = 1.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        mech.epsilon = 2.0  # type: ignore[misc]


def test_grid_snapping() -> None:
    mech = PlanarLaplaceMechanism(0.5)
    rng = np.random.default_rng(4)
    for _ in range(200):
        x, y = mech.release((0.3, 0.7), rng=rng, grid=0.25).value
        assert x * 4 == round(x * 4) and y * 4 == round(y * 4)
    x, y = mech.release((3, 7), rng=np.random.default_rng(5), grid=10).value
    assert x % 10 == 0 and y % 10 == 0


def test_guarantee_helpers() -> None:
    mech = PlanarLaplaceMechanism(epsilon=0.5, r=2.0)
    assert mech.epsilon_for(2.0) == 0.5
    assert mech.epsilon_for(0) == 0.0
    assert mech.epsilon_for(6.0) == 1.5
    assert math.isclose(mech.density_ratio_bound(4.0), math.e)
    assert mech.density_ratio_bound(1e6) == math.inf
    with pytest.raises(PufferfishError, match="distance"):
        mech.epsilon_for(-1.0)
    with pytest.raises(PufferfishError, match="distance"):
        mech.density_ratio_bound(math.nan)


def test_density_ratio_bound_holds_for_the_density() -> None:
    # The planar Laplace density at an output w is proportional to exp(-|w - x| / scale).
    mech = PlanarLaplaceMechanism(epsilon=0.7, r=1.3)
    rng = np.random.default_rng(6)
    for _ in range(100):
        x, x2, w = rng.normal(size=(3, 2)) * 5
        log_ratio = (np.linalg.norm(w - x2) - np.linalg.norm(w - x)) / mech.scale
        assert log_ratio <= mech.epsilon_for(float(np.linalg.norm(x - x2))) + 1e-12


@pytest.mark.parametrize("value", [0, -1, math.nan, math.inf, "1", True, None])
def test_bad_epsilon_and_r(value) -> None:
    with pytest.raises(PufferfishError, match="epsilon"):
        PlanarLaplaceMechanism(value)
    with pytest.raises(PufferfishError, match="r must"):
        PlanarLaplaceMechanism(1.0, r=value)


@pytest.mark.parametrize(
    ("location", "error"),
    [
        ((math.nan, 0.0), InvalidDataError),
        ((0.0, math.inf), InvalidDataError),
        ((1.0,), InvalidDataError),
        ((1.0, 2.0, 3.0), InvalidDataError),
        ((True, 1.0), InvalidDataError),
        (("a", 1.0), InvalidDataError),
        (np.zeros((2, 2)), InvalidDataError),
        ("ab", ParameterTypeError),
        (None, ParameterTypeError),
        (5.0, ParameterTypeError),
    ],
)
def test_bad_location(location, error) -> None:
    with pytest.raises(error, match="location"):
        PlanarLaplaceMechanism(1.0).release(location)


@pytest.mark.parametrize("grid", [0, -1.0, math.nan, "0.5"])
def test_bad_grid(grid) -> None:
    with pytest.raises((InvalidParameterError, ParameterTypeError), match="grid"):
        PlanarLaplaceMechanism(1.0).release((0.0, 0.0), grid=grid)


def test_bad_rng() -> None:
    with pytest.raises(ParameterTypeError, match="Generator"):
        PlanarLaplaceMechanism(1.0).release((0.0, 0.0), rng=42)
