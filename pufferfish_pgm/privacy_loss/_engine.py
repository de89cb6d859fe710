"""The privacy_loss stage's engine face: what the other stages of the library may import from it
beyond the public ``__all__`` of :mod:`pufferfish_pgm.privacy_loss` (the pair-row layout, the
bisection constants, the streamed engine and the per-pair laws the mechanisms calibrate with).

Not a user API: names here may change between releases. ``tests/package/test_layers.py`` fails when
another stage imports one of this stage's private modules directly.
"""

from ._audit import PairAudit, coverage_note, release_layout, report_from_groups
from ._bisection import NOISELESS_MARGIN, SLACK, group_w_infinity, pair_noiseless, scale_floor
from ._laplace_kernel import decay_scan
from ._pair_laws import PairLayout, PairValue, scalar_view
from ._pair_rows import MAX_GRID, Group, build_groups, refuse_any_start
from ._pmf_audit import PmfGroup, TailedLaw, dense_rows
from ._streamed_exact import STREAM_CELLS, chain_streams, streamed_calibration

__all__ = [
    "pair_noiseless",
    "scale_floor",
    "release_layout",
    "Group",
    "MAX_GRID",
    "NOISELESS_MARGIN",
    "PairAudit",
    "PairLayout",
    "PairValue",
    "PmfGroup",
    "SLACK",
    "STREAM_CELLS",
    "TailedLaw",
    "build_groups",
    "chain_streams",
    "coverage_note",
    "decay_scan",
    "dense_rows",
    "group_w_infinity",
    "refuse_any_start",
    "report_from_groups",
    "scalar_view",
    "streamed_calibration",
]
