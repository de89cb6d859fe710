"""One-dimensional discrete distributions and optimal transport between them (DESIGN §3.5):
:class:`DiscreteDistribution`, W∞, the monotone (Kantorovich) plan, Δ* of seed 004 Prop. 2 and
the relaxed Kantorovich scale. Log-space arithmetic for the exact engine lives in
``_log_space``; the exact W∞ on rows of log masses in ``_w_infinity``.
"""

from ._discrete import DiscreteDistribution, as_distribution
from ._transport import (
    CDF_TOLERANCE,
    kantorovich_delta_star,
    optimal_plan,
    relaxed_kantorovich_scale,
    w_infinity,
)

__all__ = [
    "CDF_TOLERANCE",
    "DiscreteDistribution",
    "as_distribution",
    "kantorovich_delta_star",
    "optimal_plan",
    "relaxed_kantorovich_scale",
    "w_infinity",
]
