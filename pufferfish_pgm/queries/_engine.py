"""The queries stage's engine face: what the other stages of the library may import from it beyond
the public ``__all__`` of :mod:`pufferfish_pgm.queries` (the chain count-law engine, the count
laws and the data encoding that the audits, quilts and mechanisms build on).

Not a user API: names here may change between releases. ``tests/package/test_layers.py`` fails when
another stage imports one of this stage's private modules directly.
"""

from ._chain_count_law import ChainCountTables
from ._count_engine import (
    ChainSteps,
    backward,
    batch_convolve,
    convolve,
    count_lift,
    forward,
    step,
    tilt_lift,
)
from ._encoding import (
    batch_answers,
    coordinate_names,
    encode_rows,
    evaluate,
    evaluate_codes,
    records,
)
from ._laws import fixed_start_variants, log_joint_engine, query_log_pmf
from ._network_count_law import network_log_joint
from ._packed_weights import PackedWeights, node_weights, pack_queries
from ._truncated_count_law import LOG_DELTA, forward_bytes, loss_error_bound, stream_node_laws

__all__ = [
    "log_joint_engine",
    "fixed_start_variants",
    "ChainCountTables",
    "ChainSteps",
    "LOG_DELTA",
    "PackedWeights",
    "backward",
    "batch_answers",
    "convolve",
    "coordinate_names",
    "encode_rows",
    "evaluate",
    "evaluate_codes",
    "forward",
    "forward_bytes",
    "loss_error_bound",
    "network_log_joint",
    "node_weights",
    "pack_queries",
    "query_log_pmf",
    "records",
    "step",
    "stream_node_laws",
    "tilt_lift",
    "batch_convolve",
    "count_lift",
]
