"""Composition bookkeeping (DESIGN §3.10): :class:`PrivacyAccountant` adds ε only where a
composition theorem covers the releases, and :func:`joint_audit` gives the exact combined ε over a
finite class. :class:`ContinualRelease` releases a query day after day (or window after
window of a long chain) under a total budget. Proofs of the rules: ``docs/composition.md``.
"""

from ._accountant import (
    GroupAccount,
    PrivacyAccountant,
    RecordedRelease,
    full_range,
    joint_audit,
    pair_range,
    quilt_bound,
)
from ._continual import ContinualRelease

__all__ = [
    "ContinualRelease",
    "GroupAccount",
    "PrivacyAccountant",
    "RecordedRelease",
    "full_range",
    "joint_audit",
    "pair_range",
    "quilt_bound",
]
