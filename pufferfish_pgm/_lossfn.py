"""Array kernels behind :mod:`pufferfish_pgm.distributions` (internal).

Two computations live here, both on plain numpy arrays so that they can be shared without
import cycles:

* the log densities of ``F + Laplace(scale)`` at the points of a sorted grid, for a discrete
  ``F`` whose masses sit on that grid (the one kernel of
  :func:`pufferfish_pgm._logpoly.log_laplace_density`), and the largest log ratio of two;
* the smallest ``theta`` with ``log sum_j m_j exp(d_j / theta) - log sum_j m_j <= epsilon``
  for every group of (distance, mass) pairs: the relaxed Kantorovich condition (``004_*``
  eq. 20) and Theorem 3's equation (13) are both of this form.

Examples
--------
>>> import numpy as np
>>> grid = np.array([0.0, 1.0])
>>> la, lb = log_densities(grid, np.array([0.0, -np.inf]), np.array([-np.inf, 0.0]), 1.0)
>>> round(float(la[0] - lb[0]), 12)   # a point mass at 0 against one at 1: ratio e^{1/1}
1.0
"""

from __future__ import annotations

import numpy as np

from ._logpoly import log_laplace_density

__all__ = ["log_densities", "pair_epsilon", "smallest_exp_moment_scale"]


def log_densities(
    grid: np.ndarray, log_mass_a: np.ndarray, log_mass_b: np.ndarray, scale: float
) -> tuple[np.ndarray, np.ndarray]:
    """Log densities (up to the common ``-log(2 scale)``) of both laws at the grid points.

    ``grid`` is sorted and strictly increasing; ``log_mass_*`` hold ``log mu(x_k)`` with
    ``-inf`` where a law puts no mass.
    """
    return log_laplace_density(grid, log_mass_a, scale), log_laplace_density(grid, log_mass_b,
                                                                             scale)


def pair_epsilon(
    grid: np.ndarray, log_mass_a: np.ndarray, log_mass_b: np.ndarray, scale: float
) -> tuple[float, float]:
    """``max_k |log p_a(x_k) / p_b(x_k)|`` and the grid point where it is reached.

    Only grid points where at least one law has mass are compared: the supremum over all
    outputs sits on the union of the two supports (DESIGN §3.7), and elsewhere both densities
    may underflow together at tiny scales. ``inf`` means one density underflows where the
    other does not (supports that differ, at a scale far below their distance).
    """
    la, lb = log_densities(grid, log_mass_a, log_mass_b, scale)
    mass = np.isfinite(log_mass_a) | np.isfinite(log_mass_b)
    with np.errstate(invalid="ignore"):
        gap = np.where(mass, np.abs(la - lb), 0.0)
    k = int(np.argmax(gap))
    return float(gap[k]), float(grid[k])


def _group_excess(theta, log_m, dist, starts, log_total, epsilon) -> float:
    """``max_g [log sum_{j in g} m_j e^{d_j/theta} - log sum_{j in g} m_j] - epsilon``."""
    a = log_m + dist / theta
    peak = np.maximum.reduceat(a, starts)
    counts = np.diff(np.append(starts, a.size))
    lse = peak + np.log(np.add.reduceat(np.exp(a - np.repeat(peak, counts)), starts))
    return float(np.max(lse - log_total)) - epsilon


def smallest_exp_moment_scale(
    dist: np.ndarray, mass: np.ndarray, starts: np.ndarray, epsilon: float
) -> float:
    """Smallest ``theta > 0`` with ``sum_g m e^{d/theta} <= e^epsilon sum_g m`` in every group.

    ``dist`` (>= 0) and ``mass`` (> 0) are concatenated groups beginning at indices
    ``starts``. Each group's excess decreases in ``theta`` (every ``d >= 0``), so their maximum
    does too and one Brent solve on it gives the answer. Returns 0.0 when every distance is 0.
    The returned value satisfies every constraint (it is nudged up past Brent's tolerance).

    Examples
    --------
    >>> import numpy as np
    >>> smallest_exp_moment_scale(np.array([2.0]), np.array([1.0]), np.array([0]), 1.0)
    2.0
    """
    d_max = float(np.max(dist))
    if d_max <= 0.0:
        return 0.0
    log_m = np.log(mass)
    log_total = np.log(np.add.reduceat(mass, starts))
    args = (log_m, dist, starts, log_total, epsilon)
    hi = d_max / epsilon  # every term <= e^{d_max/theta} = e^epsilon
    if _group_excess(hi, *args) >= 0.0:
        return hi
    j = int(np.argmax(dist))  # the term with distance d_max alone already forces this bound
    lo = 0.5 * d_max / (epsilon + float(np.max(log_total)) - log_m[j])
    from scipy.optimize import brentq  # imported here: scipy.optimize takes ~1 s to import

    theta = brentq(_group_excess, lo, hi, args=args, xtol=1e-15 * hi, rtol=1e-15)
    while _group_excess(theta, *args) > 0.0:
        theta = min(hi, theta * (1.0 + 1e-13))
    return float(theta)
