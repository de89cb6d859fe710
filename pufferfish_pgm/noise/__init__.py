"""Noise samplers (DESIGN §3.11): the exact discrete Laplace of Canonne, Kamath & Steinke on the
OS's secure randomness, Laplace on a power-of-two grid with its rounding accounted for, and
:func:`add_noise`, which picks the integer path by dtype (never by value).
"""

from ._additive import (
    GRID_BITS,
    MAX_SCALE,
    add_noise,
    default_grid,
    sample_discrete_laplace,
    sample_laplace,
)

__all__ = [
    "GRID_BITS",
    "MAX_SCALE",
    "add_noise",
    "default_grid",
    "sample_discrete_laplace",
    "sample_laplace",
]
