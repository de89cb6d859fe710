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

**Grid (secure by default).** Every release is snapped to a grid: each coordinate of the
output is ``grid * round((x + Z) / grid)``, by default with ``grid`` the largest power of two
no larger than ``(r / epsilon) * 2**-20`` (:func:`pufferfish_pgm.noise.default_grid`).

*Accounting.* Rounding x + Z is post-processing of the planar-Laplace output, so it costs no
epsilon: :meth:`PlanarLaplace.epsilon_for` is unchanged. The floating-point side needs
care: the computed noise is a float from a finite, unevenly spaced set, and a raw float sum
``location + noise`` carries low-order bits that depend on the exact location (the
floating-point attack on textbook Laplace noise), so releasing it could tell apart locations
far closer than r. The release never outputs such a sum. Each coordinate is split exactly
(rational arithmetic) into ``grid * floor(x / grid)`` plus a fraction in ``[0, grid)``; only
the fraction is added to the noise in floating point, that sum is rounded to a whole number of
cells, and the output is ``grid`` times the resulting integer cell index. The output is thus a
function of the cell only; the float rounding of the sum (at most about 2**-46 * scale, over
2**20 times finer than the default grid) can change the cell only when x + Z lies that close
to a cell boundary, exactly where the ideal rounding is itself sensitive to x. Locations that
differ in their low-order bits give the same release for the same random draws (unless x + Z
falls within that difference of a cell boundary). Grids finer than ``scale * 2**-32`` are
refused: they would keep the noise's own floating-point structure in the output.

*Limits of the floating-point noise.* Z is computed from 53-bit uniforms, not sampled exactly
(unlike the discrete Laplace of :mod:`pufferfish_pgm.noise`): its radius cannot exceed about
73.4 * scale, an event of probability about 1e-30 under the exact distribution, and cell
probabilities match the exact mechanism's up to the float resolution of the noise.

Examples
--------
>>> import numpy as np
>>> from pufferfish_pgm.standalone.geo import PlanarLaplace
>>> mech = PlanarLaplace(epsilon=1.0, r=0.5)
>>> rel = mech.release((2.0, 3.0), rng=np.random.default_rng(0), grid=0.25)
>>> rel.value, rel.scale
((2.75, 3.25), 0.5)
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sized
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._validation import positive_finite
from ..errors import InvalidDataError, InvalidParameterError, ParameterTypeError
from ..noise import default_grid
from ..noise._engine import source_for

__all__ = ["GeoRelease", "PlanarLaplace"]

_FINEST_GRID_BITS = 32  # a grid must be at least scale * 2**-32 (see the module docstring)


@dataclass(frozen=True, kw_only=True)
class GeoRelease:
    """A released location.

    Attributes
    ----------
    value : tuple of float
        The noisy location (x, y), snapped to the grid (given, or the default grid).
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


@dataclass(frozen=True, kw_only=True)
class PlanarLaplace:
    """Planar Laplace mechanism: epsilon-indistinguishability for locations within ``r``.

    Parameters
    ----------
    epsilon : float
        Privacy parameter for two locations at distance ``r`` (positive, finite).
    r : float
        The protection radius, in the units of the locations (positive, finite).

    Examples
    --------
    >>> mech = PlanarLaplace(epsilon=0.5, r=2.0)
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
        >>> PlanarLaplace(epsilon=1.0, r=10.0).epsilon_for(25.0)
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
        >>> round(PlanarLaplace(epsilon=1.0).density_ratio_bound(2.0), 6)
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
        """Release ``location`` plus planar Laplace noise, snapped to a grid.

        Parameters
        ----------
        location : pair of float
            The true location (x, y), two finite numbers.
        rng : numpy.random.Generator, optional
            ``None`` (default) uses the OS's secure randomness; a Generator is reproducible
            and NOT for production.
        grid : float, optional
            Each coordinate of the output is ``grid * round((x + Z) / grid)``. Default: the
            largest power of two no larger than ``scale * 2**-20``
            (:func:`pufferfish_pgm.noise.default_grid`). Any grid of at least
            ``scale * 2**-32`` is accepted (a power of two keeps the arithmetic exact).
            Snapping is post-processing: no epsilon cost (see the module docstring). It also
            keeps the low-order floating-point bits of the location out of the release.

        Returns
        -------
        GeoRelease

        Examples
        --------
        >>> import numpy as np
        >>> mech = PlanarLaplace(epsilon=1.0)
        >>> rel = mech.release([0.0, 0.0], rng=np.random.default_rng(1))
        >>> [round(v, 4) for v in rel.value]
        [2.2968, 2.929]
        >>> all((v / 2.0**-20).is_integer() for v in rel.value)   # on the default grid
        True
        """
        x, y = _location(location)
        step = self._grid(grid)
        u = source_for(rng).uniform(3)
        radius = -self.scale * (math.log1p(-u[0]) + math.log1p(-u[1]))  # Gamma(2, scale)
        angle = 2.0 * math.pi * u[2]
        value = (_snap(x, radius * math.cos(angle), step), _snap(y, radius * math.sin(angle), step))
        return GeoRelease(value=value, scale=self.scale, epsilon=self.epsilon)

    def _grid(self, grid: object) -> float:
        """The grid to snap to: the default for ``None``, else ``grid`` once checked."""
        if grid is None:
            return default_grid(self.scale)
        step = positive_finite("grid", grid)
        finest = math.ldexp(self.scale, -_FINEST_GRID_BITS)
        if step < finest:
            raise InvalidParameterError(
                f"grid must be at least scale * 2**-{_FINEST_GRID_BITS} = {finest!r} for "
                f"scale {self.scale!r}, got {step!r}; a finer grid would keep floating-point "
                f"detail of the noise in the release (default: {default_grid(self.scale)!r})"
            )
        return step


def _snap(coordinate: float, noise: float, step: float) -> float:
    """``step * round((coordinate + noise) / step)``, computed from an integer cell index.

    ``coordinate = step * base + fraction`` exactly (rationals), with ``fraction`` in
    ``[0, step)``; only the fraction meets the noise in floating point.
    """
    grid = Fraction(step)
    base = math.floor(Fraction(coordinate) / grid)
    fraction = float(Fraction(coordinate) - base * grid)  # exact for a power-of-two grid
    cell = base + round((fraction + noise) / step)
    try:
        return float(cell * grid)
    except OverflowError:
        raise InvalidDataError(
            f"the noisy coordinate {cell} * {step!r} overflows float64; rescale the locations"
        ) from None


def _is_real(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _location(location: object) -> tuple[float, float]:
    """Check that ``location`` is two finite real numbers and return them as floats."""
    if isinstance(location, (str, bytes)) or not isinstance(location, Sized):
        raise ParameterTypeError(f"location must be a pair (x, y) of numbers, got {location!r}")
    if len(location) != 2 or not isinstance(location, Iterable) or \
            not all(_is_real(c) for c in location):
        raise InvalidDataError(
            f"location must be exactly two real numbers (x, y), got {location!r}"
        )
    x, y = (float(c) for c in location)
    if not (math.isfinite(x) and math.isfinite(y)):
        raise InvalidDataError(f"location must be two finite numbers, got {location!r}")
    return x, y
