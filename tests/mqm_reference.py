"""Straightforward reference implementations used by the tests and the benchmark.

``naive_chain_sigmas`` is DESIGN §3.3 written as directly as possible: for every secret node
i, every left distance a (or none) and every right distance b (or none), the influence
e(a, b) = max over θ and ordered pairs of U_a + D_b, and σ = card / (ε - e). O(T^3) options.
It shares no code with the package's planner (only scenario accessors).
"""

from __future__ import annotations

import itertools
import math

import numpy as np


def _lr(num: float, den: float) -> float:
    if num <= 0:
        return -math.inf
    if den <= 0:
        return math.inf
    return math.log(num) - math.log(den)


class _Cache:
    """Marginals q_t and powers P^n of one chain, computed once (plain loops)."""

    def __init__(self, chain) -> None:
        self.chain, self.powers = chain, [np.eye(chain.k)]
        for _ in range(chain.length):
            self.powers.append(self.powers[-1] @ chain.transition)
        if not chain.initial_is_any:
            self.q = [np.asarray(chain.initial, dtype=float) @ m for m in self.powers]


def _terms(cache, i: int, a: int | None, b: int | None, s: int, s2: int) -> float | None:
    """U_a + D_b for one chain and one ordered pair, or None when the pair is skipped."""
    chain, k, mp = cache.chain, cache.chain.k, cache.powers.__getitem__
    if chain.initial_is_any:
        pi_pow = mp(i)
        if not (pi_pow[:, s] > 0).any() or not (pi_pow[:, s2] > 0).any():
            return None
        prior = max(_lr(pi_pow[z, s2], pi_pow[z, s]) for z in range(k))
        left_support = (mp(i - a) > 0).any(axis=0) if a else None
    else:
        qs = cache.q
        if qs[i][s] <= 0 or qs[i][s2] <= 0:
            return None
        prior = _lr(qs[i][s2], qs[i][s])
        left_support = qs[i - a] > 0 if a else None
    total = 0.0
    if a:
        pa = mp(a)
        total += max(_lr(pa[x, s], pa[x, s2]) for x in range(k) if left_support[x]) + prior
    if b:
        pb = mp(b)
        total += max(_lr(pb[s, y], pb[s2, y]) for y in range(k))
    return total


def naive_chain_sigmas(framework, epsilon: float, query_nodes=None) -> dict:
    """node -> (sigma, influence) by exhaustive search over every (a, b) of every node."""
    cls = framework.scenarios
    length = cls.members[0].length
    in_query = set(range(length) if query_nodes is None else query_nodes)
    out, caches = {}, [_Cache(m) for m in cls]
    for i in framework.secret_nodes:
        pairs = set()
        for pr in framework.pairs_of(i):
            s, s2 = cls.state_index(i, pr.first.state), cls.state_index(i, pr.second.state)
            pairs |= {(s, s2), (s2, s)}
        best = (len(in_query) / epsilon, 0.0)
        for a, b in itertools.product([None, *range(1, i + 1)], [None, *range(1, length - i)]):
            values = [_terms(c, i, a, b, s, s2) for c in caches for s, s2 in pairs]
            e = max([0.0] + [v for v in values if v is not None])
            lo, hi = (i - a + 1 if a else 0), (i + b - 1 if b else length - 1)
            card = sum(1 for v in range(lo, hi + 1) if v in in_query)
            if e < epsilon and card / (epsilon - e) < best[0]:
                best = (card / (epsilon - e), e)
        out[i] = best
    return out
