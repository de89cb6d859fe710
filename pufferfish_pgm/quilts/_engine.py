"""The quilts stage's engine face: what the other stages of the library may import from it beyond
the public ``__all__`` of :mod:`pufferfish_pgm.quilts` (the quilt node classes, quilt laws and
search internals the quilt-local exact mechanism reuses).

Not a user API: names here may change between releases. ``tests/package/test_layers.py`` fails when
another stage imports one of this stage's private modules directly.
"""

from ._chain_planner import pair_groups, plan_runs, query_prefix
from ._chain_windows import search_shared
from ._influence import (
    chain_influence,
    is_stationary,
    log_ratio,
    ordered_pairs,
    power_stack,
    quilt_table_size,
)
from ._network_planner import class_dags, partition
from ._plan import NodeRanges
from ._quilt_classes import NodeClass, chain_setup, key_shape, mixing_window, quilt_nodes
from ._quilt_laws import QuiltRows, whole_chain_cells, whole_chain_laws
from ._quilt_network import network_setup
from ._quilt_vector_laws import check_windowed, vector_chain_setup, window_code

__all__ = [
    "power_stack",
    "log_ratio",
    "query_prefix",
    "quilt_table_size",
    "class_dags",
    "ordered_pairs",
    "pair_groups",
    "NodeRanges",
    "is_stationary",
    "chain_influence",
    "partition",
    "NodeClass",
    "QuiltRows",
    "chain_setup",
    "check_windowed",
    "key_shape",
    "mixing_window",
    "network_setup",
    "pair_groups",
    "plan_runs",
    "quilt_nodes",
    "search_shared",
    "vector_chain_setup",
    "whole_chain_cells",
    "whole_chain_laws",
    "window_code",
]
