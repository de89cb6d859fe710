"""Geo-indistinguishability: the planar Laplace mechanism (Andrés et al., 2013).

A location x in the plane is released as x + Z, where Z has density proportional to
exp(-epsilon * ||z|| / r). Two locations at distance d then give output densities that differ
by a factor of at most exp(epsilon * d / r): locations within distance r are epsilon
indistinguishable, which is the Pufferfish framework with secret pairs (x, x'), ||x - x'|| <= r,
and independent locations (seed ``003_*`` §3.2).

Sampling uses polar coordinates: the radius of Z follows Gamma(shape 2, scale r / epsilon),
drawn as the sum of two exponentials -scale * (log(1 - U1) + log(1 - U2)), and the angle is
2 * pi * U3. With ``rng=None`` the uniforms U are ``j * 2**-53`` with j built from 53 bits of
``secrets.token_bytes`` (the OS's secure source); a ``numpy.random.Generator`` makes the draws
reproducible and is meant for tests, not production.

Without ``grid`` the output is the raw floating-point sum, whose low-order bits could in
principle carry information about the true location (as with textbook floating-point Laplace
noise); pass a ``grid`` (any spacing much finer than r / epsilon) for production releases.

Examples
--------
>>> import numpy as np
>>> from pufferfish_pgm.mechanisms.geo import PlanarLaplaceMechanism
>>> mech = PlanarLaplaceMechanism(epsilon=1.0, r=0.5)
>>> rel = mech.release((2.0, 3.0), rng=np.random.default_rng(0), grid=0.25)
>>> rel.value, rel.scale
((2.75, 3.25), 0.5)
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from .._checks import positive_finite
from ..errors import InvalidDataError, ParameterTypeError
from ..noise import _source_for

__all__ = ["GeoRelease", "PlanarLaplaceMechanism"]


@dataclass(frozen=True, kw_only=True)
class GeoRelease:
    """A released location.

    Attributes
    ----------
    value : tuple of float
        The noisy location (x, y), snapped to the grid if one was given.
    scale : float
        The planar Laplace scale r / epsilon.
    epsilon : float
        Locations at distance r are epsilon-indistinguishable.
    mechanism : str
        ``"planar_laplace"``.
    """

    value: tuple[float, float]
    scale: float
    epsilon: float
    mechanism: str = "planar_laplace"


@dataclass(frozen=True)
class PlanarLaplaceMechanism:
    """Planar Laplace mechanism: epsilon-indistinguishability for locations within ``r``.

    Parameters
    ----------
    epsilon : float
        Privacy parameter for two locations at distance ``r`` (positive, finite).
    r : float
        The protection radius, in the units of the locations (positive, finite).

    Examples
    --------
    >>> mech = PlanarLaplaceMechanism(0.5, r=2.0)
    >>> mech.scale
    4.0
    >>> mech.epsilon_for(1.0)
    0.25
    """

    epsilon: float
    r: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", positive_finite("epsilon", self.epsilon))
        object.__setattr__(self, "r", positive_finite("r", self.r))

    @property
    def scale(self) -> float:
        """The scale r / epsilon of the noise (its radius has mean 2 * scale)."""
        return self.r / self.epsilon

    def epsilon_for(self, distance: float) -> float:
        """The guarantee epsilon * distance / r for two locations ``distance`` apart.

        Examples
        --------
        >>> PlanarLaplaceMechanism(1.0, r=10.0).epsilon_for(25.0)
        2.5
        """
        if not (_is_real(distance) and distance == 0):
            distance = positive_finite("distance", distance)
        return self.epsilon * float(distance) / self.r

    def density_ratio_bound(self, distance: float) -> float:
        """Largest ratio exp(epsilon * distance / r) between the output densities of two
        locations ``distance`` apart (``inf`` when it overflows).

        Examples
        --------
        >>> round(PlanarLaplaceMechanism(1.0).density_ratio_bound(2.0), 6)
        7.389056
        """
        exponent = self.epsilon_for(distance)
        return math.exp(exponent) if exponent < 709.0 else math.inf

    def release(
        self,
        location: tuple[float, float] | np.ndarray,
        rng: np.random.Generator | None = None,
        grid: float | None = None,
    ) -> GeoRelease:
        """Release ``location`` plus planar Laplace noise.

        Parameters
        ----------
        location : pair of float
            The true location (x, y), two finite numbers.
        rng : numpy.random.Generator, optional
            ``None`` (default) uses the OS's secure randomness; a Generator is reproducible
            and NOT for production.
        grid : float, optional
            If given, each coordinate of the output is snapped to the nearest multiple of
            ``grid`` (for locations on a grid). Snapping is post-processing, and it keeps the
            low-order floating-point bits of the noisy point out of the release.

        Returns
        -------
        GeoRelease

        Examples
        --------
        >>> import numpy as np
        >>> rel = PlanarLaplaceMechanism(1.0).release([0.0, 0.0], rng=np.random.default_rng(1))
        >>> [round(v, 4) for v in rel.value]
        [2.2968, 2.929]
        """
        x, y = _location(location)
        step = None if grid is None else positive_finite("grid", grid)
        u = _source_for(rng).uniform(3)
        radius = -self.scale * (math.log1p(-u[0]) + math.log1p(-u[1]))  # Gamma(2, scale)
        angle = 2.0 * math.pi * u[2]
        point = (x + radius * math.cos(angle), y + radius * math.sin(angle))
        if step is not None:
            point = tuple(step * round(c / step) for c in point)
        return GeoRelease(
            value=(float(point[0]), float(point[1])), scale=self.scale, epsilon=self.epsilon
        )


def _is_real(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _location(location: object) -> tuple[float, float]:
    """Check that ``location`` is two finite real numbers and return them as floats."""
    if isinstance(location, (str, bytes)) or not hasattr(location, "__len__"):
        raise ParameterTypeError(f"location must be a pair (x, y) of numbers, got {location!r}")
    if len(location) != 2 or not all(_is_real(c) for c in location):
        raise InvalidDataError(
            f"location must be exactly two real numbers (x, y), got {location!r}"
        )
    x, y = (float(c) for c in location)
    if not (math.isfinite(x) and math.isfinite(y)):
        raise InvalidDataError(f"location must be two finite numbers, got {location!r}")
    return x, y
