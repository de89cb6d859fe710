"""The exact privacy loss of ``F + Laplace(scale)`` between two explicit distributions.

Between consecutive support points the density ratio is monotone and beyond the extremes it is
constant, so the supremum over outputs sits on a support point (DESIGN §3.7).

Examples
--------
>>> eps, where = laplace_pair_epsilon({0: 0.5, 1: 0.5}, {1: 0.5, 2: 0.5}, 1.0)
>>> round(eps, 6), where
(1.0, 0.0)
"""

from __future__ import annotations

import numpy as np

from .._validation import positive_finite
from ..distributions import DiscreteDistribution, as_distribution
from ..errors import InvalidParameterError
from . import _laplace_kernel as _lossfn

__all__ = ["discrete_laplace_pair_epsilon", "laplace_pair_epsilon"]


def laplace_pair_epsilon(mu_a: object, mu_b: object, scale: float) -> tuple[float, float]:
    """Realised ε of ``F + Laplace(scale)`` between ``F ~ mu_a`` and ``F ~ mu_b``.

    Returns ``(max_w |log p_a(w) / p_b(w)|, w)`` over all real outputs ``w``, both directions.
    Between consecutive support points the density ratio is a Möbius map of
    ``z = e^{2w/scale}`` (monotone), and beyond the extremes it is constant, so the supremum
    is reached at a support point of ``mu_a`` or ``mu_b`` (DESIGN §3.7). Densities there come
    from O(n) cumulative recursions in log space; the result is never NaN (+inf on overflow).

    Examples
    --------
    >>> eps, w = laplace_pair_epsilon({5: 1.0}, {3: 1.0}, scale=2.0)   # |5 - 3| / 2
    >>> round(eps, 12), w
    (1.0, 3.0)
    """
    a, b = as_distribution(mu_a, "mu_a"), as_distribution(mu_b, "mu_b")
    return _lossfn.pair_epsilon(*_union_log_masses(a, b), positive_finite("scale", scale))


def _require_integer(*dists: DiscreteDistribution) -> None:
    for d in dists:
        if not d.is_integer():
            raise InvalidParameterError(
                f"discrete Laplace noise needs integer-valued answers, got support "
                f"{d.support.tolist()!r}; rescale the query to integers or use Laplace noise"
            )


def discrete_laplace_pair_epsilon(
    mu_a: object, mu_b: object, scale: float
) -> tuple[float, float]:
    """Realised ε of ``F + DiscreteLaplace(scale)``, ``P(k) ∝ exp(-|k| / scale)``.

    Both supports must be integers. The output pmf at an integer ``w`` is proportional to the
    continuous Laplace density there, with the same constant for both laws, and the integer
    support points of :func:`laplace_pair_epsilon` are valid outputs; so the value is the same.

    Examples
    --------
    >>> eps, w = discrete_laplace_pair_epsilon({0: 0.5, 1: 0.5}, {1: 0.5, 2: 0.5}, 1.0)
    >>> round(eps, 12)
    1.0
    """
    a, b = as_distribution(mu_a, "mu_a"), as_distribution(mu_b, "mu_b")
    _require_integer(a, b)
    return _lossfn.pair_epsilon(*_union_log_masses(a, b), positive_finite("scale", scale))


def _union_log_masses(a: DiscreteDistribution,
                      b: DiscreteDistribution) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The union of both supports and each law's log masses on it (``-inf``: no mass)."""
    grid = np.union1d(a.support, b.support)
    out = []
    for d in (a, b):
        log_mass = np.full(grid.size, -np.inf)
        log_mass[np.searchsorted(grid, d.support)] = np.log(d.probs)
        out.append(log_mass)
    return grid, out[0], out[1]
