"""Composition bookkeeping (DESIGN §3.10): :class:`PrivacyAccountant` adds ε only where a
composition theorem covers the releases, and :func:`joint_audit` gives the exact combined ε over a
finite class. :class:`ContinualRelease` releases a query day after day (or window after
window of a long chain) under a total budget. Proofs of the rules: ``docs/composition.md``.
"""

from typing import Any

from .._compat import moved_name
from ._accountant import GroupAccount, PrivacyAccountant, RecordedRelease, joint_audit, quilt_bound
from ._continual import ContinualRelease
from ._robustness import RobustnessReport, robustness

__all__ = [
    "ContinualRelease",
    "GroupAccount",
    "PrivacyAccountant",
    "RecordedRelease",
    "RobustnessReport",
    "joint_audit",
    "quilt_bound",
    "robustness",
]


def __getattr__(name: str) -> Any:
    """0.1.0 exported some engine names here; they moved to the stage's engine face."""
    return moved_name(__name__, name)
