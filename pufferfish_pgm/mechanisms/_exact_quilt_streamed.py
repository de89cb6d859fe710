"""Whole-chain laws streamed, for time-varying chains too long to hold them (internal).

On a time-varying chain every node is its own class of the quilt search (no two nodes share
their bridges), so the search costs a per-node quilt evaluation at every one of T nodes: 82
CPU s at T = 1,440 and k = 10, about ten minutes at T = 10,080. When the whole-chain laws
(the empty quilt of every node, the tightest option, ``docs/exact-quilt.md``) exceed the
memory budget, the streamed exact calibration computes the same scale without holding them
(node by node, :mod:`pufferfish_pgm.privacy_loss._streamed_exact`): about 50 CPU s at
T = 10,080. Its scale is the exact one, which every quilt bound is at least, so it is the
scale the whole-chain path would have returned; it is taken when it runs, and the quilt
search is the fallback when it is refused (the memory budget of its count rows, a framework
it does not cover, or a secret impossible under every scenario, which the exact calibration
refuses and the quilt search leaves unconstrained).
"""

from __future__ import annotations

import warnings
from typing import Any

from ..errors import (
    ImpossibleSecretError,
    InvalidParameterError,
    LimitExceededError,
    UsefulnessWarning,
)
from ..queries import WindowedQuery
from ..scenarios import MarkovChainScenario
from ..secrets import Framework
from .exact import ExactLaplaceMechanism

__all__ = ["streamed_whole_chain"]


def applies(max_chain_cells: int, framework: Framework, query: Any, why: str) -> bool:
    """Whether to stream: scalar queries on fixed-start chains with a time-varying member,
    whose whole-chain laws were refused (``why``) although the caller allows them
    (``max_chain_cells > 0``: 0 asks for the quilt search alone)."""
    chains = [m for m in framework.scenarios if isinstance(m, MarkovChainScenario)]
    return (bool(why) and max_chain_cells > 0 and not isinstance(query, WindowedQuery)
            and len(chains) == len(framework.scenarios)
            and not any(m.initial_is_any for m in chains)
            and any(m.time_varying for m in chains))


def streamed_whole_chain(epsilon: float, rtol: float, max_chain_cells: int,
                         framework: Framework, query: Any, why: str,
                         mqm_scale: float) -> tuple[float, dict] | None:
    """The streamed exact scale (capped at MQM's) and the evidence fields of the whole-chain
    path, or None when it does not apply or is refused (then the quilt search runs)."""
    if not applies(max_chain_cells, framework, query, why):
        return None
    mech = ExactLaplaceMechanism(epsilon=epsilon, rtol=rtol, streaming=True)
    try:
        with warnings.catch_warnings():     # the quilt mechanism says its own usefulness
            warnings.simplefilter("ignore", UsefulnessWarning)
            cal = mech.calibrate(framework, query)
    except (LimitExceededError, InvalidParameterError, ImpossibleSecretError):
        return None     # the quilt search decides (it skips a secret impossible under θ)
    ev = cal.evidence
    worst = None if ev.audit is None or ev.audit.worst is None else ev.audit.worst.pair
    nodes = framework.secret_nodes
    capped = cal.scale > mqm_scale
    return min(cal.scale, mqm_scale), {
        "worst_node": None if worst is None else next(iter(worst.first.evidence)),
        "worst_quilt": (), "classes": len(nodes), "evaluations": ev.bisection_steps,
        "mqm_bound_nodes": len(nodes) if capped else 0,
        "window": framework.scenarios.members[0].length - 1, "skipped_quilts": {},
        "cut_candidates": (), "whole_chain": "exact",
        "mqm_bound_reasons": {"the streamed whole-chain scale came out above MQM's "
                              "(rounding)": len(nodes)} if capped else {}}
