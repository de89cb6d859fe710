"""The secrets stage's engine face: what the other stages of the library may import from it beyond
the public ``__all__`` of :mod:`pufferfish_pgm.secrets` (the possible-state supports the chain
planners share).

Not a user API: names here may change between releases. ``tests/package/test_layers.py`` fails when
another stage imports one of this stage's private modules directly.
"""

from ._possible import support_at, support_cycle

__all__ = [
    "support_at",
    "support_cycle",
]
