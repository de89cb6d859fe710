"""Markov quilts (DESIGN §3.1–3.3): max-influence e_Θ(X_Q | X_i), the exact chain planner (shared
windows, proven pruning), the network planner (d-separation, per-branch candidates) and the
plan types they return (:class:`PlanEntry`, :class:`ChainPlan`).
"""

from typing import Any

from .._compat import moved_name
from ._chain_planner import plan_chain
from ._component_planner import plan_network
from ._influence import max_influence
from ._network_planner import NetworkPlan, candidate_quilts, d_connected, d_separated
from ._plan import ChainPlan, PlanEntry

__all__ = [
    "ChainPlan",
    "NetworkPlan",
    "PlanEntry",
    "candidate_quilts",
    "d_connected",
    "d_separated",
    "max_influence",
    "plan_chain",
    "plan_network",
]


def __getattr__(name: str) -> Any:
    """0.1.0 exported some engine names here; they moved to the stage's engine face."""
    return moved_name(__name__, name)
