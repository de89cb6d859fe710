"""The mechanisms stage's engine face: what the other stages of the library may import from it
beyond the public ``__all__`` of :mod:`pufferfish_pgm.mechanisms` (the registry of mechanisms,
the usefulness internals and the DP-floor checks of optimal noise, for the certificates, the
CLI, the plots and the advisor).

Not a user API: names here may change between releases. ``tests/package/test_layers.py`` fails when
another stage imports one of this stage's private modules directly.
"""

from ._registry import EXTRA_NAMES, MECHANISM_ORDER, mechanism
from ._usefulness import answer_spread, quiet
from .optimal import dp_loss, dp_shifts

__all__ = [
    "EXTRA_NAMES",
    "MECHANISM_ORDER",
    "answer_spread",
    "dp_loss",
    "dp_shifts",
    "mechanism",
    "quiet",
]
