"""Max-influence e_Θ(X_Q | X_i): how much a secret node can move the distribution of a set.

For a node X_i, a set X_Q and a finite class Θ (DESIGN §3.1)::

    e_Θ(X_Q | X_i) = sup_θ max_(a,b) max_(x_Q) log P(X_Q=x_Q | X_i=a, θ) / P(X_Q=x_Q | X_i=b, θ)

over the framework's pairs on X_i, in both directions, skipping θ where either secret has
probability 0. Everything is computed in log space; a zero in the denominator against a
nonzero numerator gives +inf (the set is then useless as a Markov quilt), never NaN.

Chains use closed forms (DESIGN §3.3): only the nearest quilt node on each side of X_i matters,
and with left node X_{i-a} and right node X_{i+b} the influence splits into a left term
``U_a`` and a right term ``D_b``. Networks use exact conditionals
(:func:`pufferfish_pgm.inference.conditional`).

Probabilities below the float64 range (about 1e-308) are treated as zero.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> from pufferfish_pgm.secrets import Framework
>>> mc = MarkovChainScenario([[0.9, 0.1], [0.1, 0.9]], "stationary", 5)
>>> round(max_influence(Framework(mc), 2, [3]), 4)    # log(0.9 / 0.1)
2.1972
>>> max_influence(Framework(mc), 2, [])
0.0
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from .._tolerances import STATIONARITY
from ..errors import InvalidParameterError, LimitExceededError
from ..inference import conditional, secret_probability
from ..scenarios import BayesianNetworkScenario, MarkovChainScenario

__all__ = ["chain_influence", "is_stationary", "log_ratio", "max_influence", "ordered_pairs",
           "power_stack", "quilt_table_size"]

STATIONARY_TOLERANCE = STATIONARITY


def log_ratio(num: Any, den: Any) -> np.ndarray:
    """Elementwise ``log(num / den)`` for probabilities, with the conventions of DESIGN §3.1.

    ``+inf`` where ``num > 0 = den``; ``-inf`` where ``num = 0`` (whatever ``den``), so that
    points outside both supports (0/0) never win a maximum. Never NaN.

    Examples
    --------
    >>> log_ratio([0.5, 0.2, 0.0, 0.0], [0.25, 0.0, 0.3, 0.0]).round(4).tolist()
    [0.6931, inf, -inf, -inf]
    """
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(num) - np.log(den)
    return np.where(num <= 0, -np.inf, out)


def ordered_pairs(framework: Any, node: Any) -> list[tuple[int, int]]:
    """State-index pairs ``(a, b)`` of the framework's pairs on ``node``, both directions.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework, secret_pairs
    >>> mc = MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 3)
    >>> ordered_pairs(Framework(mc, secret_pairs(mc, nodes=[1])), 1)
    [(0, 1), (1, 0)]
    """
    cls = framework.scenarios
    out: dict = {}
    for pair in framework.pairs_of(node):
        a = cls.state_index(node, pair.first.state)
        b = cls.state_index(node, pair.second.state)
        out[(a, b)] = out[(b, a)] = None
    return list(out)


def quilt_table_size(scenarios: Any, quilt: Iterable) -> int:
    """Number of cells of the joint table over ``quilt`` (product of the state counts)."""
    return math.prod(len(scenarios.states_of(v)) for v in quilt)


# ----------------------------------------------------------------------------- chains

def power_stack(transition: np.ndarray, n: int) -> np.ndarray:
    """``P^0, ..., P^(n-1)`` as an array ``(n, k, k)``, by doubling (O(log n) numpy calls).

    Examples
    --------
    >>> power_stack(np.array([[0.0, 1.0], [1.0, 0.0]]), 3)[2].tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    k = transition.shape[0]
    stack = np.eye(k)[None]
    while len(stack) < n:
        step = stack[-1] @ transition  # P^len(stack)
        stack = np.concatenate([stack, stack @ step])
    return stack[:max(n, 0)]


def is_stationary(chain: MarkovChainScenario) -> bool:
    """True when the chain's initial distribution q0 satisfies q0 P = q0 (within 1e-12).

    Such a chain has q_t = q0 at every t; the planners then treat every marginal as q0
    exactly (the residual is float rounding of the stationary solve).

    Examples
    --------
    >>> is_stationary(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 3))
    True
    >>> is_stationary(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], [1.0, 0.0], 3))
    False
    """
    if chain.initial_is_any or chain.time_varying:
        return False
    q0 = chain.initial
    return bool(np.max(np.abs(q0 @ chain.transition - q0)) <= STATIONARY_TOLERANCE)


def _marginal(chain: MarkovChainScenario, t: int) -> np.ndarray:
    return chain.initial_distribution if is_stationary(chain) else chain.marginal(t)


def _support(chain: MarkovChainScenario, t: int) -> np.ndarray:
    """States X_t can take: supp(q_t), or for initial='any' those reachable in t steps."""
    if chain.initial_is_any:
        return np.asarray((chain.product(0, t) > 0).any(axis=0))
    return _marginal(chain, t) > 0


def _prior_term(chain: MarkovChainScenario, i: int, s: int, s2: int) -> float:
    """log q_i(s')/q_i(s), or for initial='any' its supremum max_z log P^i[z,s']/P^i[z,s]."""
    if chain.initial_is_any:
        p = chain.product(0, i)
        return float(log_ratio(p[:, s2], p[:, s]).max())
    q = _marginal(chain, i)
    return float(log_ratio(q[s2], q[s]))


def chain_influence(chain: MarkovChainScenario, node: int, left: int | None,
                    right: int | None, pairs: Sequence[tuple[int, int]]) -> float:
    """e_θ({X_{i-left}, X_{i+right}} | X_i) for one chain in closed form (DESIGN §3.3); a
    time-varying chain uses the step products M_{i-a→i} and M_{i→i+b} for P^a and P^b.

    ``left``/``right`` are distances a, b >= 1 or None for an absent side. Pairs whose
    secrets are impossible at ``node`` under this chain are skipped.

    Examples
    --------
    >>> mc = MarkovChainScenario([[0.8, 0.2], [0.4, 0.6]], "stationary", 6)
    >>> round(chain_influence(mc, 3, None, 1, [(0, 1), (1, 0)]), 4)   # log(0.6/0.2)
    1.0986
    """
    i = int(node)
    support_i = _support(chain, i)
    best = 0.0
    for s, s2 in pairs:
        if not (support_i[s] and support_i[s2]):
            continue
        total = 0.0
        if left is not None:
            pa = chain.product(i - left, i)
            ratios = log_ratio(pa[:, s], pa[:, s2])[_support(chain, i - left)]
            total += float(ratios.max()) + _prior_term(chain, i, s, s2)
        if right is not None:
            pb = chain.product(i, i + right)
            total += float(log_ratio(pb[s], pb[s2]).max())
        best = max(best, total)
    return best


def _chain_sides(node: int, quilt: Sequence) -> tuple[int | None, int | None]:
    before = [q for q in quilt if q < node]
    after = [q for q in quilt if q > node]
    return (node - max(before) if before else None, min(after) - node if after else None)


# ----------------------------------------------------------------------------- networks

def _network_influence(bn: BayesianNetworkScenario, node: Any, quilt: Sequence,
                       pairs: Sequence[tuple[int, int]], budget: Any) -> float:
    states = bn.states_of(node)
    tables: dict = {}
    for s in {s for pair in pairs for s in pair}:
        if secret_probability(bn, {node: states[s]}, memory_budget=budget) > 0:
            tables[s] = conditional(bn, list(quilt), {node: states[s]}, memory_budget=budget)
    values = [float(log_ratio(tables[s], tables[s2]).max())
              for s, s2 in pairs if s in tables and s2 in tables]
    return max(values, default=0.0)


def member_influence(member: Any, node: Any, quilt: Sequence,
                     pairs: Sequence[tuple[int, int]], *,
                     memory_budget: int | float | str | None = None) -> float:
    """e_θ(quilt | node) for one scenario θ (chain closed form or network conditionals;
    ``memory_budget`` bounds the network's inference tables, see
    :func:`pufferfish_pgm.inference.conditional`)."""
    if isinstance(member, MarkovChainScenario):
        left, right = _chain_sides(node, quilt)
        return chain_influence(member, node, left, right, pairs)
    return _network_influence(member, node, quilt, pairs, memory_budget)


def _check_quilt(cls: Any, node: Any, quilt: Iterable) -> tuple:
    first = cls.members[0]
    out = tuple(dict.fromkeys(first.check_node(v) for v in quilt))
    if node in out:
        raise InvalidParameterError(
            f"the quilt {list(out)} contains the secret node {node!r}; a Markov quilt of a node "
            "must not contain the node itself"
        )
    return out


def max_influence(framework: Any, node: Any, quilt: Iterable, *,
                  max_quilt_states: int | None = None,
                  memory_budget: int | float | str | None = None) -> float:
    """e_Θ(quilt | node) over the framework's pairs on ``node`` and every θ of its class.

    Parameters
    ----------
    framework : Framework
        Scenarios (the finite class Θ) and discriminative pairs.
    node : node name
        The secret node X_i.
    quilt : iterable of node names
        The set X_Q (must not contain ``node``). An empty set has influence 0.
    max_quilt_states : int, optional
        Refuse (:class:`LimitExceededError`) when the joint table over a network quilt would
        have more cells than this.
    memory_budget : int, float or str, optional
        Refuse (:class:`LimitExceededError`) when an inference table would need more bytes
        (see :func:`pufferfish_pgm.inference.conditional`).

    Returns
    -------
    float
        The max-influence in nats, >= 0; ``inf`` when some secret makes a quilt value
        possible that the other secret of its pair rules out. 0 when ``node`` has no pairs.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework
    >>> sticky = MarkovChainScenario([[1.0, 0.0], [0.5, 0.5]], [0.5, 0.5], 4)
    >>> max_influence(Framework(sticky), 1, [2])    # state 0 is absorbing
    inf
    """
    cls = framework.scenarios
    node = cls.members[0].check_node(node)
    quilt = _check_quilt(cls, node, quilt)
    pairs = ordered_pairs(framework, node)
    if not quilt or not pairs:
        return 0.0
    if cls.kind == "network" and max_quilt_states is not None:
        size = quilt_table_size(cls, quilt)
        if size > max_quilt_states:
            raise LimitExceededError(
                f"the joint table over the quilt of node {node!r} has {size} cells, more than "
                f"max_quilt_states={max_quilt_states}; raise the limit or use a smaller quilt"
            )
    return max(0.0, max(member_influence(m, node, quilt, pairs, memory_budget=memory_budget)
                        for m in cls))
