"""The smallest scale meeting exponential-moment constraints (relaxed Kantorovich, multi-user).

Both the relaxed Kantorovich condition (``004_*`` eq. 20) and Theorem 3's equation (13) ask for
the smallest ``theta`` with ``log sum_j m_j exp(d_j / theta) - log sum_j m_j <= epsilon`` in every
group of (distance, mass) pairs.
"""

from __future__ import annotations

import numpy as np

__all__ = ["smallest_exp_moment_scale"]


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
    # imported here: scipy.optimize takes ~1 s to import; scipy ships no type hints
    from scipy.optimize import brentq  # type: ignore[import-untyped]

    theta = brentq(_group_excess, lo, hi, args=args, xtol=1e-15 * hi, rtol=1e-15)
    while _group_excess(theta, *args) > 0.0:
        theta = min(hi, theta * (1.0 + 1e-13))
    return float(theta)
