"""Composition bookkeeping (DESIGN §3.10): :class:`PrivacyAccountant` adds ε only where a
composition theorem covers the releases, and :func:`joint_audit` gives the exact combined ε over a
finite class. Proofs of the rules: ``docs/composition.md``.
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

__all__ = [
    "GroupAccount",
    "PrivacyAccountant",
    "RecordedRelease",
    "full_range",
    "joint_audit",
    "pair_range",
    "quilt_bound",
]
