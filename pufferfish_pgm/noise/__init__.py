"""Noise samplers (DESIGN §3.11): the exact discrete Laplace of Canonne, Kamath & Steinke on the
OS's secure randomness, Laplace on a power-of-two grid with its rounding accounted for, and
:func:`add_noise`, which picks the integer path by dtype (never by value). The half-widths of
``_accuracy`` say how far the noise can move an answer at a given confidence.
:class:`IntegerNoise` is any integer law with a finite core and geometric tails (the optimal
noise of ``OptimalNoiseMechanism``), sampled exactly from uniform integers. :class:`Release` is a
released answer with its noise scale and confidence intervals.
"""

from typing import Any

from .._compat import moved_name
from ._accuracy import (
    check_confidence,
    discrete_laplace_halfwidth,
    discrete_laplace_tail,
    laplace_halfwidth,
    noise_halfwidth,
)
from ._additive import (
    MAX_SCALE,
    add_noise,
    default_grid,
    grid_noise_scale,
    sample_discrete_laplace,
    sample_laplace,
)
from ._integer_noise import IntegerNoise
from ._release import Release

__all__ = [
    "IntegerNoise",
    "MAX_SCALE",
    "Release",
    "add_noise",
    "check_confidence",
    "default_grid",
    "discrete_laplace_halfwidth",
    "discrete_laplace_tail",
    "grid_noise_scale",
    "laplace_halfwidth",
    "noise_halfwidth",
    "sample_discrete_laplace",
    "sample_laplace",
]


def __getattr__(name: str) -> Any:
    """0.1.0 exported some engine names here; they moved to the stage's engine face."""
    return moved_name(__name__, name)
