"""MQMExact on time-varying chains: every node's terms from its own step products.

With one matrix per step, the closed form of DESIGN §3.3 holds with powers replaced by
products M_{u→v} = P_u P_{u+1} ... P_{v-1}: for node i, left node X_{i-a}, right node X_{i+b}

    U_a(i) = max_{x ∈ S_{i-a}} log M_{i-a→i}[x,s] / M_{i-a→i}[x,s']  +  c_i(s, s')
    D_b(i) = max_y log M_{i→i+b}[s,y] / M_{i→i+b}[s',y]

with c_i = log q_i(s')/q_i(s) (for ``initial="any"`` its supremum over starts,
max_z log M_{0→i}[z,s']/M_{0→i}[z,s]). Both one-sided terms are >= 0 (q_i is a mixture of
the rows M_{i-a→i}[x, ·]), so the window pruning of :mod:`._chain_nodes` stays proven. Nothing is
shared between nodes (the terms of every node differ): each round builds, for a batch of nodes,
the products for a, b <= W by one batched matrix product per distance, and hands the
``(n, W, J)`` terms to the per-node kernel. A day of 10-minute slots (T = 144, k = 10, 90
pairs) takes seconds.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> steps = np.array([[[0.9, 0.1], [0.2, 0.8]], [[0.5, 0.5], [0.5, 0.5]]] * 2)
>>> mc = MarkovChainScenario(steps, [0.5, 0.5], 5)
>>> u, d, act = chain_terms(mc, np.array([[0, 1], [1, 0]]), np.array([2]), 1)
>>> d[0, 0].round(4).tolist()              # step 2 is [[0.9, 0.1], [0.2, 0.8]]: log(.9/.2)
[1.5041, 2.0794]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..scenarios import MarkovChainScenario
from ..secrets._engine import support_at
from ._chain_nodes import MAX_ROUND_WORK, Prefix, _batches, _kernel
from ._chain_windows import BestWindows, grow_window
from ._influence import log_ratio

__all__ = ["chain_terms", "search_varying"]


def _prior(chain: MarkovChainScenario, pairs: np.ndarray) -> np.ndarray:
    """c_i ``(T, m)`` for every node (see the module docstring)."""
    s, s2 = pairs[:, 0], pairs[:, 1]
    steps = chain.steps
    if chain.initial_is_any:
        out = np.empty((chain.length, len(pairs)))
        m = np.eye(chain.k)
        for t in range(chain.length):
            out[t] = log_ratio(m[:, s2], m[:, s]).max(axis=0)
            if t < chain.length - 1:
                m = m @ steps[t]
        return out
    q = np.empty((chain.length, chain.k))
    q[0] = chain.initial_distribution
    for t in range(chain.length - 1):
        q[t + 1] = q[t] @ steps[t]
    return log_ratio(q[:, s2], q[:, s])


def chain_terms(chain: MarkovChainScenario, pairs: np.ndarray, nodes: np.ndarray, window: int,
                prior: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """U ``(n, W, m)``, D ``(n, W, m)`` and active ``(n, m)`` of ``nodes`` for a, b <= W.

    Options past a chain end get meaningless finite-or-infinite terms (never NaN); the
    kernel masks them. ``prior``: :func:`_prior`, if already computed.
    """
    prior = _prior(chain, pairs) if prior is None else prior
    return class_terms(_Members.of([chain], [prior]), pairs, nodes, window)


@dataclass(frozen=True, eq=False)
class _Members:
    """The members' step stacks ``(M, T - 1, k, k)``, supports ``(M, T, k)`` and priors
    ``(M, T, m)``, stacked once per search so that a round is one batched product per
    distance over every member (a loop over members cost 0.24 s per member at T = 144)."""

    steps: np.ndarray
    supports: np.ndarray
    priors: np.ndarray

    @classmethod
    def of(cls, members: Sequence, priors: Sequence) -> _Members:
        length, k = members[0].length, members[0].k
        steps = np.stack([m.steps if length > 1 else np.eye(k)[None] for m in members])
        supports = np.stack([support_at(m, np.arange(length)) for m in members])
        return cls(steps, supports, np.stack(priors))


def class_terms(members: _Members, pairs: np.ndarray, nodes: np.ndarray,
                window: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`chain_terms` of every member at once, the members' terms side by side on the
    last axis (member-major): U, D ``(n, W, M m)`` and active ``(n, M m)``."""
    s, s2 = pairs[:, 0], pairs[:, 1]
    size, length, k = len(members.steps), members.supports.shape[1], members.steps.shape[-1]
    n, last = len(nodes), max(length - 2, 0)
    u = np.empty((size, n, window, len(pairs)))
    d = np.empty((size, n, window, len(pairs)))
    back = np.broadcast_to(np.eye(k), (size, n, k, k))
    ahead = back
    for a in range(1, window + 1):
        back = members.steps[:, np.clip(nodes - a, 0, last)] @ back        # M_{i-a -> i}
        ahead = ahead @ members.steps[:, np.clip(nodes + a - 1, 0, last)]  # M_{i -> i+a}
        seen = members.supports[:, np.clip(nodes - a, 0, length - 1)]      # S_{i-a}
        ratio = _column_ratio(back, s, s2)                                 # (M, n, k, m)
        u[:, :, a - 1] = np.where(seen[..., None], ratio, -np.inf).max(axis=2)
        d[:, :, a - 1] = _column_ratio(ahead.swapaxes(-1, -2), s, s2).max(axis=2)
    with np.errstate(invalid="ignore"):
        u += members.priors[:, nodes][:, :, None, :]
    u = np.nan_to_num(u, nan=-np.inf)    # -inf + inf at an unreachable x: never chosen
    here = members.supports[:, nodes]                                      # (M, n, k)
    active = here[:, :, s] & here[:, :, s2]
    side = (n, window, size * len(pairs))
    return (u.transpose(1, 2, 0, 3).reshape(side), d.transpose(1, 2, 0, 3).reshape(side),
            active.transpose(1, 0, 2).reshape(n, -1))


def _column_ratio(products: np.ndarray, s: np.ndarray, s2: np.ndarray) -> np.ndarray:
    """``log_ratio(products[..., s], products[..., s2])`` from one log of the k × k products
    (k² logs per node instead of 2 k m): ``-inf`` where the numerator is 0, ``+inf`` where
    only the denominator is."""
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log(products)
        num = logs[..., s]
        return np.where(num == -np.inf, -np.inf, num - logs[..., s2])


@dataclass(frozen=True, eq=False)
class _VaryingSearch:
    """What the rounds of one pair group share: members, nodes, pairs, query, ε."""

    members: _Members
    nodes: np.ndarray
    pairs: np.ndarray
    prefix: Prefix
    epsilon: float

    def too_costly(self, window: int, rows: np.ndarray) -> bool:
        """Whether a round at ``window`` over ``rows`` would exceed MAX_ROUND_WORK."""
        work = len(rows) * (window + 1) ** 2 * len(self.members.steps) * len(self.pairs)
        return work > MAX_ROUND_WORK

    def round(self, window: int, rows: np.ndarray) -> tuple[BestWindows, np.ndarray]:
        nodes = self.nodes[rows]
        best = BestWindows.trivial(len(nodes), self.prefix.total / self.epsilon)
        lower = np.full(len(nodes), np.inf)
        count = len(self.members.steps) * len(self.pairs)
        for part in _batches(np.arange(len(nodes)), nodes, window, count):
            u, d, active = class_terms(self.members, self.pairs, nodes[part], window)
            one, lower[part] = _kernel(u, active, d, nodes[part], self.prefix, window,
                                       self.epsilon)
            best.offer(part, one.sigma, one.left, one.right, one.influence)
        return best, lower >= best.sigma


def search_varying(members: Sequence, nodes: np.ndarray, pairs: np.ndarray, prefix: Prefix,
                   epsilon: float, max_window: int) -> tuple[Any, np.ndarray]:
    """MQMExact for one pair group of a class with time-varying members (every node alone)."""
    stacked = _Members.of(members, [_prior(m, pairs) for m in members])
    search = _VaryingSearch(stacked, nodes, pairs, prefix, epsilon)
    return grow_window(search.round, len(nodes), prefix.length, prefix.total / epsilon,
                       max_window, search.too_costly)
