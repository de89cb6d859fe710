"""Exact inference: joint conditionals P(targets | evidence) for networks and chains.

Networks use the numpy variable-elimination engine of :mod:`._network_engine` (per-model
elimination order and compiled query plans, every query's largest table checked against the
memory budget before anything is allocated). Chains use matrix powers: the involved time steps
form a chain whose links are powers of the transition matrix.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> mc = MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], [1.0, 0.0], 3)
>>> conditional(mc, [2], {0: 0}).round(3).tolist()   # first row of P^2
[0.83, 0.17]
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from .._budget import check_allocation
from ..errors import ImpossibleSecretError, InvalidModelError, ParameterTypeError
from ..scenarios import (
    BayesianNetworkScenario,
    MarkovChainScenario,
    MarkovNetworkScenario,
    Scenario,
)
from ._network_engine import CELL_BYTES, network_index, network_joint

__all__ = ["conditional", "elimination_order", "secret_probability"]

#: A size in bytes, or a string such as "2GB"; None: the default budget.
Budget = int | float | str | None

def _codes(scenario: Scenario, evidence: Mapping | None) -> dict:
    if evidence is None:
        return {}
    if not isinstance(evidence, Mapping):
        raise ParameterTypeError(f"evidence must be a dict node -> state, got {evidence!r}")
    return {scenario.check_node(n): scenario.state_index(n, s) for n, s in evidence.items()}


def _target_list(scenario: Scenario, targets: Any) -> list:
    if isinstance(targets, (str, int, np.integer)):
        targets = [targets]
    out = [scenario.check_node(t) for t in targets]
    if len(set(out)) != len(out):
        raise ParameterTypeError(f"targets repeat a node: {list(targets)}; list each node once")
    return out


def conditional(scenario: Any, targets: Sequence, evidence: Mapping | None = None, *,
                memory_budget: Budget = None) -> np.ndarray:
    """Joint distribution P(targets | evidence) as an array with one axis per target.

    Axes follow the order of ``targets``; states follow the model's order. A target that is
    also in the evidence gets a one-hot axis. A query whose largest table would exceed
    ``memory_budget`` (bytes or a string like ``"2GB"``; default
    ``$PUFFERFISH_PGM_MEMORY_BUDGET`` or a quarter of the free memory) raises
    :class:`~pufferfish_pgm.errors.LimitExceededError` before allocating it.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import BayesianNetworkScenario, default_model_path
    >>> asia = BayesianNetworkScenario.from_file(default_model_path("asia.bif"))
    >>> conditional(asia, ["lung"], {"smoke": "yes"}).tolist()
    [0.1, 0.9]
    """
    _check_scenario(scenario)
    tlist = _target_list(scenario, targets)
    codes = _codes(scenario, evidence)
    free = [t for t in tlist if t not in codes]
    if isinstance(scenario, MarkovChainScenario):
        _check_chain(scenario, free, memory_budget)
        joint = _chain_joint(scenario, free, codes)
    else:
        joint = network_joint(scenario, free, codes, memory_budget)
    total = joint.sum()
    if not total > 0:
        shown = {n: scenario.states_of(n)[c] for n, c in codes.items()}
        raise ImpossibleSecretError(
            f"the evidence {shown} has probability 0 under {scenario.name!r}; condition on "
            "something possible"
        )
    return _embed(scenario, tlist, free, codes, joint / total)


def _check_scenario(scenario: Any) -> None:
    if not isinstance(scenario, (BayesianNetworkScenario, MarkovChainScenario,
                                 MarkovNetworkScenario)):
        raise ParameterTypeError(
            f"expected a BayesianNetworkScenario, MarkovNetworkScenario or MarkovChainScenario, "
            f"got "
            f"{type(scenario).__name__}; pass one member of a class (e.g. cls[0])"
        )


def _embed(scenario: Any, tlist: list, free: list, codes: dict, joint: np.ndarray) -> np.ndarray:
    if len(free) == len(tlist):
        return joint
    shape = [len(scenario.states_of(t)) for t in tlist]
    out = np.zeros(shape)
    index = tuple(codes[t] if t in codes else slice(None) for t in tlist)
    out[index] = joint
    return out


def secret_probability(scenario: Any, evidence: Mapping, *,
                       memory_budget: Budget = None) -> float:
    """P(evidence | θ); for a chain with ``initial="any"`` the largest over initial states.

    A Markov network's value is read off the normalised joint of the evidence nodes.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> mc = MarkovChainScenario([[0.5, 0.5], [0.0, 1.0]], "any", 3)
    >>> secret_probability(mc, {2: 0})
    0.25
    """
    _check_scenario(scenario)
    codes = _codes(scenario, evidence)
    if isinstance(scenario, MarkovChainScenario):
        if scenario.initial_is_any:
            k = scenario.k
            return float(max(_chain_joint(scenario, [], codes, np.eye(k)[z]).sum()
                             for z in range(k)))
        return float(_chain_joint(scenario, [], codes).sum())
    if isinstance(scenario, MarkovNetworkScenario):   # unnormalised: read off the marginal
        nodes = list(codes)
        if not nodes:
            return 1.0
        joint = network_joint(scenario, nodes, {}, memory_budget)
        return float(joint[tuple(codes[v] for v in nodes)] / joint.sum())
    return float(network_joint(scenario, [], codes, memory_budget).sum())


# ----------------------------------------------------------------------------- chains

def _check_chain(chain: MarkovChainScenario, free: list, budget: Budget) -> None:
    """The chain contraction's largest table: the result times one more axis of k states."""
    cells = chain.k ** (len(free) + 1)
    check_allocation(cells * CELL_BYTES, budget=budget,
                     what=f"the joint table over {len(free)} time steps of chain {chain.name!r}")


def _chain_joint(chain: MarkovChainScenario, free: list, codes: dict,
                 initial: np.ndarray | None = None) -> np.ndarray:
    """Unnormalised P(free, evidence) for a chain: a product of transition matrices between
    consecutive steps of interest (per-step products for a time-varying chain)."""
    if initial is None:
        if isinstance(chain.initial, str):
            raise InvalidModelError(
                f"chain {chain.name!r} has initial='any', so it defines no single joint "
                "distribution; give an initial distribution"
            )
        initial = chain.initial
    steps = sorted(set(free) | set(codes))
    if not steps:
        return np.array(1.0)
    first = initial @ chain.product(0, steps[0])
    factors: list[Any] = [_pick(first, [steps[0]], codes), [steps[0]]]
    for s, t in zip(steps[:-1], steps[1:], strict=True):
        factors += [_pick(chain.product(s, t), [s, t], codes), [s, t]]
    return _contract(factors, free)


def _pick(table: np.ndarray, axes: list, codes: dict) -> np.ndarray:
    """Replace evidence axes by a one-hot mask (keeps axis bookkeeping simple)."""
    out = table
    for i, v in enumerate(axes):
        if v in codes:
            mask = np.zeros(table.shape[i])
            mask[codes[v]] = 1.0
            out = out * mask.reshape([-1 if j == i else 1 for j in range(table.ndim)])
    return out


def _contract(factors: list, free: list) -> np.ndarray:
    ids = {v: i for i, v in enumerate(dict.fromkeys(v for ax in factors[1::2] for v in ax))}
    operands = []
    for table, axes in zip(factors[0::2], factors[1::2], strict=True):
        operands += [table, [ids[v] for v in axes]]
    return np.einsum(*operands, [ids[v] for v in free], optimize=True)




def elimination_order(scenario: BayesianNetworkScenario | MarkovNetworkScenario
                      ) -> dict[Hashable, int]:
    """Rank of each node in a min-fill elimination order of the moral graph (cached).

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import BayesianNetworkScenario, default_model_path
    >>> asia = BayesianNetworkScenario.from_file(default_model_path("asia.bif"))
    >>> sorted(elimination_order(asia).values()) == list(range(8))
    True
    """
    return network_index(scenario).order
