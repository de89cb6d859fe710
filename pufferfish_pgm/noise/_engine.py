"""The noise stage's engine face: what the other stages of the library may import from it beyond
the public ``__all__`` of :mod:`pufferfish_pgm.noise` (the secure uniform source, for samplers
outside this stage).

Not a user API: names here may change between releases. ``tests/package/test_layers.py`` fails when
another stage imports one of this stage's private modules directly.
"""

from ._additive import GRID_BITS
from ._discrete_laplace_sampler import source_for

__all__ = [
    "GRID_BITS",
    "source_for",
]
