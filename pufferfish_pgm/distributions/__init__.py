"""One-dimensional discrete distributions and optimal transport between them (DESIGN §3.5):
:class:`DiscreteDistribution`, W∞, the monotone (Kantorovich) plan, Δ* of seed 004 Prop. 2 and
the relaxed Kantorovich scale. Log-space arithmetic for the exact engine lives in
``_log_space``; the exact W∞ on rows of log masses in ``_w_infinity``.
"""

from typing import Any

from .._compat import moved_name
from ._discrete import DiscreteDistribution, as_distribution
from ._transport import kantorovich_delta_star, optimal_plan, relaxed_kantorovich_scale, w_infinity

__all__ = [
    "DiscreteDistribution",
    "as_distribution",
    "kantorovich_delta_star",
    "optimal_plan",
    "relaxed_kantorovich_scale",
    "w_infinity",
]


def __getattr__(name: str) -> Any:
    """0.1.0 exported some engine names here; they moved to the stage's engine face."""
    return moved_name(__name__, name)
