"""The inference stage's engine face: what the other stages of the library may import from it
beyond the public ``__all__`` of :mod:`pufferfish_pgm.inference` (network components and
elimination schedules for the count laws and planners).

Not a user API: names here may change between releases. ``tests/package/test_layers.py`` fails when
another stage imports one of this stage's private modules directly.
"""

from ._components import NetworkParts, component_signature, linked_parts, network_parts, sub_tables
from ._elimination_order import Schedule, schedule
from ._factor_models import connected_parts
from ._network_engine import Ancestors, NetworkIndex, network_index

__all__ = [
    "NetworkIndex",
    "network_index",
    "NetworkParts",
    "component_signature",
    "linked_parts",
    "network_parts",
    "schedule",
    "sub_tables",
    "Schedule",
    "Ancestors",
    "connected_parts",
]
