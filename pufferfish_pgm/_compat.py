"""Import paths of 0.1.0 that moved: they keep working, with a ``DeprecationWarning``.

The stages are read by name (``importlib``) when an old name is first used, so a stage that
lists its moved names does not import the stages above it; ``tests/package/test_layers.py`` checks
that every target here exists and sits where the table says.

Examples
--------
>>> import warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     cls = moved_name("pufferfish_pgm.mechanisms", "PlanarLaplaceMechanism")
>>> cls.__name__, caught[0].category.__name__
('PlanarLaplace', 'DeprecationWarning')
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

__all__ = ["ENGINE_NAMES", "MOVED_MODULES", "MOVED_NAMES", "moved_name"]

#: Public modules of 0.1.0 now in another stage: old dotted path -> new dotted path.
MOVED_MODULES = {
    "pufferfish_pgm.mechanisms.continuous": "pufferfish_pgm.standalone.continuous",
    "pufferfish_pgm.mechanisms.geo": "pufferfish_pgm.standalone.geo",
    "pufferfish_pgm.mechanisms.multiuser": "pufferfish_pgm.standalone.multiuser",
}

_STANDALONE = "pufferfish_pgm.standalone"
_CERTIFICATES = "pufferfish_pgm.certificates"
#: Public names of 0.1.0 that moved or were renamed: (old module, old name) -> (module, name).
MOVED_NAMES = {
    ("pufferfish_pgm", "ContinuousSumMechanism"): (_STANDALONE, "ContinuousSum"),
    ("pufferfish_pgm", "PlanarLaplaceMechanism"): (_STANDALONE, "PlanarLaplace"),
    ("pufferfish_pgm.mechanisms", "ContinuousSumMechanism"): (_STANDALONE, "ContinuousSum"),
    ("pufferfish_pgm.mechanisms", "PlanarLaplaceMechanism"): (_STANDALONE, "PlanarLaplace"),
    ("pufferfish_pgm.mechanisms", "GeoRelease"): (_STANDALONE, "GeoRelease"),
    ("pufferfish_pgm.mechanisms", "multiuser"): (_STANDALONE, "multiuser"),
    ("pufferfish_pgm.mechanisms", "Verification"): (_CERTIFICATES, "Verification"),
    ("pufferfish_pgm.mechanisms", "verify"): (_CERTIFICATES, "verify"),
}

#: Engine names 0.1.0 exported from a stage's package; now in the stage's ``_engine`` face.
ENGINE_NAMES = {
    "pufferfish_pgm.accountant": ("full_range", "pair_range"),
    "pufferfish_pgm.distributions": ("CDF_TOLERANCE",),
    "pufferfish_pgm.inference": ("NetworkIndex", "network_index"),
    "pufferfish_pgm.noise": ("GRID_BITS",),
    "pufferfish_pgm.privacy_loss": ("pair_noiseless", "release_layout", "scale_floor"),
    "pufferfish_pgm.queries": ("fixed_start_variants", "log_joint_engine"),
    "pufferfish_pgm.quilts": ("NodeRanges", "chain_influence", "class_dags", "is_stationary",
                              "log_ratio", "ordered_pairs", "pair_groups", "partition",
                              "power_stack", "query_prefix", "quilt_table_size"),
}
MOVED_NAMES.update({(stage, name): (f"{stage}._engine", name)
                    for stage, names in ENGINE_NAMES.items() for name in names})


def moved_name(module: str, name: str) -> Any:
    """The object an old ``module.name`` now is, with a ``DeprecationWarning`` naming the new
    path; ``AttributeError`` (as Python raises for a missing attribute) for any other name."""
    target = MOVED_NAMES.get((module, name))
    if target is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    new_module, new_name = target
    warnings.warn(f"{module}.{name} moved to {new_module}.{new_name} in 0.2.0; import it from "
                  "there (the old path will be removed in 0.3.0)", DeprecationWarning,
                  stacklevel=3)
    return getattr(importlib.import_module(new_module), new_name)
