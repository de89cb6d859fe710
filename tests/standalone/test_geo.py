"""Tests for the planar Laplace mechanism (geo-indistinguishability)."""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from pufferfish_pgm.errors import (
    InvalidDataError,
    InvalidParameterError,
    ParameterTypeError,
    PufferfishError,
)
from pufferfish_pgm.noise import default_grid
from pufferfish_pgm.noise._discrete_laplace_sampler import source_for
from pufferfish_pgm.standalone.geo import GeoRelease, PlanarLaplace


def noisy_offsets(mech: PlanarLaplace, n: int, rng=None) -> np.ndarray:
    origin = (10.0, -4.0)
    points = np.array([mech.release(origin, rng=rng).value for _ in range(n)])
    return points - np.array(origin)


def test_radius_and_angle_distribution_seeded() -> None:
    mech = PlanarLaplace(epsilon=0.8, r=2.0)
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
    mech = PlanarLaplace(epsilon=2.0)
    offsets = noisy_offsets(mech, 5_000)
    radius = np.hypot(offsets[:, 0], offsets[:, 1])
    assert stats.kstest(radius, stats.gamma(a=2, scale=0.5).cdf).pvalue > 1e-5
    angle = np.mod(np.arctan2(offsets[:, 1], offsets[:, 0]), 2 * math.pi) / (2 * math.pi)
    assert stats.kstest(angle, "uniform").pvalue > 1e-5


def test_release_fields_and_reproducibility() -> None:
    mech = PlanarLaplace(epsilon=1.5, r=3.0)
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
    mech = PlanarLaplace(epsilon=0.5)
    rng = np.random.default_rng(4)
    for _ in range(200):
        x, y = mech.release((0.3, 0.7), rng=rng, grid=0.25).value
        assert x * 4 == round(x * 4) and y * 4 == round(y * 4)
    x, y = mech.release((3, 7), rng=np.random.default_rng(5), grid=10).value
    assert x % 10 == 0 and y % 10 == 0


@pytest.mark.parametrize(("epsilon", "r"), [(0.8, 2.0), (1.0, 0.5), (3.0, 1e-4), (0.1, 5e4)])
def test_default_grid_is_a_power_of_two_below_scale_times_2_to_minus_20(epsilon, r) -> None:
    mech = PlanarLaplace(epsilon=epsilon, r=r)
    grid = default_grid(mech.scale)
    assert math.frexp(grid)[0] == 0.5  # a power of two
    assert mech.scale * 2.0**-21 < grid <= mech.scale * 2.0**-20
    rng = np.random.default_rng(8)
    for _ in range(50):
        for c in mech.release((r * 3.3, -r * 0.7), rng=rng).value:
            assert (c / grid).is_integer()


@pytest.mark.parametrize("grid", [None, 2.0**-10, 0.3])
def test_release_is_the_rounding_of_location_plus_noise(grid) -> None:
    # The same uniforms reproduce the float noise z; the release must be g * round((x + z) / g)
    # computed exactly, whatever the location's magnitude.
    mech = PlanarLaplace(epsilon=0.9, r=1.7)
    g = default_grid(mech.scale) if grid is None else grid
    for seed, location in enumerate([(0.1, 0.2), (-1234.567, 89.01), (3e9, -7.5e8), (1e-9, 0.0)]):
        u = source_for(np.random.default_rng(seed)).uniform(3)
        radius = -mech.scale * (math.log1p(-u[0]) + math.log1p(-u[1]))
        noise = (radius * math.cos(2 * math.pi * u[2]), radius * math.sin(2 * math.pi * u[2]))
        expected = tuple(
            float(round((Fraction(c) + Fraction(z)) / Fraction(g)) * Fraction(g))
            for c, z in zip(location, noise, strict=True)
        )
        rel = mech.release(location, rng=np.random.default_rng(seed), grid=grid)
        assert rel.value == expected


def test_low_bits_of_the_location_do_not_reach_the_release() -> None:
    # Raw float sums x + z differ between these locations; the gridded releases must not.
    mech = PlanarLaplace(epsilon=1.0, r=0.5)
    nearby = [
        ((2.3, -1.7), (2.3 + 1e-12, -1.7 - 1e-12)),
        ((12345.678, -9876.5), (math.nextafter(12345.678, 0.0), math.nextafter(-9876.5, 0.0))),
        ((0.0, 0.0), (1e-300, -5e-324)),
    ]
    for a, b in nearby:
        for seed in range(100):
            one = mech.release(a, rng=np.random.default_rng(seed))
            two = mech.release(b, rng=np.random.default_rng(seed))
            assert one == two
    # the ungridded sums would differ: the grid is what removes the difference
    u = source_for(np.random.default_rng(0)).uniform(3)
    z = -mech.scale * (math.log1p(-u[0]) + math.log1p(-u[1])) * math.cos(2 * math.pi * u[2])
    assert 2.3 + z != (2.3 + 1e-12) + z


def test_grid_bounds() -> None:
    mech = PlanarLaplace(epsilon=1.0, r=3.0)
    finest = 3.0 * 2.0**-32
    x, _ = mech.release((1.0, 2.0), rng=np.random.default_rng(0), grid=finest).value
    assert (x / finest).is_integer()
    with pytest.raises(InvalidParameterError, match=r"grid must be at least scale \* 2\*\*-32"):
        mech.release((1.0, 2.0), grid=finest / 2)
    x, y = mech.release((1.0, 2.0), rng=np.random.default_rng(0), grid=1e6).value
    assert (x, y) == (0.0, 0.0)  # a grid far coarser than the noise is allowed (post-processing)


def test_overflowing_release_raises() -> None:
    mech = PlanarLaplace(epsilon=1.0, r=1e307)
    with pytest.raises(InvalidDataError, match="overflows"):
        mech.release((1.79e308, 0.0), rng=np.random.default_rng(0))


def test_guarantee_helpers() -> None:
    mech = PlanarLaplace(epsilon=0.5, r=2.0)
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
    mech = PlanarLaplace(epsilon=0.7, r=1.3)
    rng = np.random.default_rng(6)
    for _ in range(100):
        x, x2, w = rng.normal(size=(3, 2)) * 5
        log_ratio = (np.linalg.norm(w - x2) - np.linalg.norm(w - x)) / mech.scale
        assert log_ratio <= mech.epsilon_for(float(np.linalg.norm(x - x2))) + 1e-12


@pytest.mark.parametrize("value", [0, -1, math.nan, math.inf, "1", True, None])
def test_bad_epsilon_and_r(value) -> None:
    with pytest.raises(PufferfishError, match="epsilon"):
        PlanarLaplace(epsilon=value)
    with pytest.raises(PufferfishError, match="r must"):
        PlanarLaplace(epsilon=1.0, r=value)


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
        PlanarLaplace(epsilon=1.0).release(location)


@pytest.mark.parametrize("grid", [0, -1.0, math.nan, "0.5"])
def test_bad_grid(grid) -> None:
    with pytest.raises((InvalidParameterError, ParameterTypeError), match="grid"):
        PlanarLaplace(epsilon=1.0).release((0.0, 0.0), grid=grid)


def test_bad_rng() -> None:
    with pytest.raises(ParameterTypeError, match="Generator"):
        PlanarLaplace(epsilon=1.0).release((0.0, 0.0), rng=42)
