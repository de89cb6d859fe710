"""Markov quilts (DESIGN §3.1–3.3): max-influence e_Θ(X_Q | X_i), the exact chain planner (shared
windows, proven pruning), the network planner (d-separation, per-branch candidates) and the
plan types they return (:class:`PlanEntry`, :class:`ChainPlan`).
"""

from ._chain_planner import pair_groups, plan_chain, query_prefix
from ._component_planner import plan_network
from ._influence import (
    chain_influence,
    is_stationary,
    log_ratio,
    max_influence,
    ordered_pairs,
    power_stack,
    quilt_table_size,
)
from ._network_planner import (
    NetworkPlan,
    candidate_quilts,
    class_dags,
    d_connected,
    d_separated,
    partition,
)
from ._plan import ChainPlan, NodeRanges, PlanEntry

__all__ = [
    "ChainPlan",
    "NetworkPlan",
    "NodeRanges",
    "PlanEntry",
    "candidate_quilts",
    "chain_influence",
    "class_dags",
    "d_connected",
    "d_separated",
    "is_stationary",
    "log_ratio",
    "max_influence",
    "ordered_pairs",
    "pair_groups",
    "partition",
    "plan_chain",
    "plan_network",
    "power_stack",
    "query_prefix",
    "quilt_table_size",
]
