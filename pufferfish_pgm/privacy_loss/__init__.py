"""The exact auditor and its kernels (DESIGN §3.7): the realised ε of Laplace releases over every
secret pair and scenario of a finite class, exact at every noise scale
(``docs/auditor-precision.md``); the one calibrator that finds the smallest passing scale;
the loss between two explicit laws; the exact audit of any integer noise law with geometric
tails (``audit_integer_noise``, ``docs/optimal-noise.md``); the temporal leakage of per-slot DP
under a chain (Cao et al. 2017), the baseline (``docs/temporal-leakage.md``).
"""

from typing import Any

from .._compat import moved_name
from ._audit import AuditReport, PairAudit, audit, audit_releases
from ._bisection import exact_laplace_scale, noiseless_epsilon, smallest_passing_scale
from ._pair_loss import discrete_laplace_pair_epsilon, laplace_pair_epsilon
from ._pmf_audit import audit_integer_noise
from ._temporal_leakage import (
    LeakageSupremum,
    TemporalLeakage,
    backward_correlation,
    leakage_function,
    leakage_supremum,
    temporal_leakage,
)

__all__ = [
    "AuditReport",
    "LeakageSupremum",
    "PairAudit",
    "TemporalLeakage",
    "audit",
    "audit_integer_noise",
    "audit_releases",
    "backward_correlation",
    "discrete_laplace_pair_epsilon",
    "exact_laplace_scale",
    "laplace_pair_epsilon",
    "leakage_function",
    "leakage_supremum",
    "noiseless_epsilon",
    "smallest_passing_scale",
    "temporal_leakage",
]


def __getattr__(name: str) -> Any:
    """0.1.0 exported some engine names here; they moved to the stage's engine face."""
    return moved_name(__name__, name)
