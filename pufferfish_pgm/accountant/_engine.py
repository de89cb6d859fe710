"""The accountant stage's engine face: what the other stages of the library may import from
it beyond the public ``__all__`` of :mod:`pufferfish_pgm.accountant`.

Not a user API: names here may change between releases. ``tests/package/test_layers.py`` fails when
another stage imports one of this stage's private modules directly.
"""

from ._accountant import full_range, pair_range

__all__ = [
    "full_range",
    "pair_range",
]
