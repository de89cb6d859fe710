"""Temporal privacy leakage of per-slot differential privacy under a Markov chain.

The baseline of Cao, Yoshikawa, Xiao & Xiong, "Quantifying Differential Privacy under Temporal
Correlations" (ICDE 2017): every slot ``t`` of one person's chain is released by its own
``ε_t``-DP mechanism (neighbouring values: any two states of that slot), and an attacker who
knows the transition matrix sees all the releases. What they learn about the state at ``t`` is

* the backward leakage ``BPL_t = L^B_t(BPL_{t-1}) + ε_t`` (releases up to ``t``),
  ``BPL_0 = ε_0``;
* the forward leakage ``FPL_t = L^F(FPL_{t+1}) + ε_t`` (releases from ``t`` on),
  ``FPL_{T-1} = ε_{T-1}``;
* the total ``TPL_t = BPL_t + FPL_t - ε_t``.

``L^B_t`` and ``L^F`` are the leakage function ``L_C`` of a row-stochastic correlation matrix
``C`` (rows: the state being protected, columns: the neighbouring slot's state):

    L_C(α) = max over rows q, d of C and y in [1, e^α]^k of log (q·y) / (d·y),

where ``C = P`` for the forward direction and ``C[i, j] = P(X_{t-1} = j | X_t = i) =
π_{t-1}(j) P[j, i] / π_t(i)`` for the backward one (the time reversal; time-invariant for a
stationary chain). The ratio is linear-fractional in ``y``, so the maximum sits at a vertex,
``y = 1 + (e^α - 1)·1_S``, and for a fixed pair the best ``S`` is a prefix of the states sorted
by ``q_j / d_j`` decreasing (a state belongs to ``S`` exactly when its ratio beats the value of
the objective). Hence, with ``q(S) = Σ_{j∈S} q_j``,

    L_C(α) = max over pairs and prefixes S of log [(q(S) e^α + 1 - q(S)) / (d(S) e^α + 1 - d(S))].

The prefixes do not depend on α; they are computed once per matrix. Derivation, worked numbers
and the condition for a finite supremum over an unbounded horizon: ``docs/temporal-leakage.md``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._tolerances import PROBABILITY_SUM
from .._validation import positive_finite
from ..errors import InvalidParameterError
from ..scenarios._engine import check_initial, check_stochastic, stationary_distribution

__all__ = [
    "LeakageSupremum",
    "TemporalLeakage",
    "backward_correlation",
    "leakage_function",
    "leakage_supremum",
    "temporal_leakage",
]


@dataclass(frozen=True)
class TemporalLeakage:
    """Per-step leakage of a sequence of per-slot DP releases (arrays of length T, read-only)."""

    epsilons: np.ndarray
    backward: np.ndarray
    forward: np.ndarray
    total: np.ndarray

    @property
    def max_total(self) -> float:
        """The largest total leakage over the steps: the guarantee the whole sequence gives."""
        return float(self.total.max())


@dataclass(frozen=True)
class LeakageSupremum:
    """Suprema of the leakage over an unbounded horizon at a constant per-slot ε (inf: none)."""

    epsilon: float
    backward: float
    forward: float
    total: float


@dataclass(frozen=True)
class _Prefixes:
    """(q(S), 1 - q(S), d(S), 1 - d(S)) for every ordered pair of rows and proper prefix S."""

    q: np.ndarray
    q_rest: np.ndarray
    d: np.ndarray
    d_rest: np.ndarray

    @classmethod
    def of(cls, correlation: np.ndarray, rows: np.ndarray) -> _Prefixes:
        parts: list[list[float]] = [[], [], [], []]
        for i in rows:
            for i2 in rows:
                if i == i2:
                    continue
                q, d = correlation[i], correlation[i2]
                keep = (q > 0) | (d > 0)          # states neither row reaches add nothing
                q, d = q[keep], d[keep]
                with np.errstate(divide="ignore"):
                    order = np.argsort(-(q / d), kind="stable")   # q_j / d_j decreasing
                q, d = q[order], d[order]
                # suffix sums keep 1 - q(S) exact when q(S) is close to 1
                q_rest = np.cumsum(q[::-1])[::-1]
                d_rest = np.cumsum(d[::-1])[::-1]
                for m in range(1, q.size):       # proper prefixes: S = first m states
                    parts[0].append(float(q[:m].sum()))
                    parts[1].append(float(q_rest[m]))
                    parts[2].append(float(d[:m].sum()))
                    parts[3].append(float(d_rest[m]))
        arrays = [np.array(p, dtype=float) for p in parts]
        return cls(*arrays)

    def __call__(self, alpha: float) -> float:
        if self.q.size == 0:
            return 0.0
        with np.errstate(divide="ignore"):
            top = np.logaddexp(np.log(self.q_rest), np.log(self.q) + alpha)
            bottom = np.logaddexp(np.log(self.d_rest), np.log(self.d) + alpha)
        return max(0.0, float(np.max(top - bottom)))

    def fixed_point(self, epsilon: float) -> float:
        """The least α with α = L(α) + ε (inf when there is none).

        Each term ``f(α) = log[(q e^α + 1 - q) / (d e^α + 1 - d)]`` has slope in [0, 1), so
        ``f(α) + ε - α`` decreases from ε > 0 at α = 0 and crosses 0 once, where ``z = e^α``
        solves ``d z² + (1 - d - e^ε q) z - e^ε (1 - q) = 0``; the maximum of the terms crosses
        0 at the largest of these roots. A term with ``d = 0`` has a root only when
        ``e^ε q < 1`` (``z = e^ε (1 - q) / (1 - e^ε q)``); otherwise the iteration diverges.
        """
        best = epsilon                       # L >= 0, so the fixed point is at least ε
        e = math.exp(epsilon)
        for q, q_rest, d, d_rest in zip(self.q, self.q_rest, self.d, self.d_rest, strict=True):
            if q <= d:
                continue                     # f <= 0: root <= ε
            if d == 0.0:
                if e * q >= 1.0:
                    return math.inf
                z = e * q_rest / (1.0 - e * q)
            else:
                b = d_rest - e * q
                c = e * q_rest               # the equation is d z² + b z - c = 0, c >= 0
                root = math.sqrt(b * b + 4.0 * d * c)
                z = (root - b) / (2.0 * d) if b <= 0 else 2.0 * c / (b + root)
            best = max(best, math.log(z))
        return best


def backward_correlation(transition: Any, before: Any, now: Any | None = None) -> np.ndarray:
    """``C[i, j] = P(X_{t-1} = j | X_t = i)`` from ``P`` and the law ``before`` of ``X_{t-1}``.

    Rows of states with ``P(X_t = i) = 0`` are all zero (no secret to protect there).

    Examples
    --------
    >>> backward_correlation([[0.5, 0.5], [0.0, 1.0]], [1.0, 0.0]).tolist()
    [[1.0, 0.0], [1.0, 0.0]]
    """
    p = check_stochastic(transition)
    prior = check_initial(before, p.shape[0])
    joint = prior[:, None] * p                   # joint[j, i] = P(X_{t-1} = j, X_t = i)
    marginal = joint.sum(axis=0) if now is None else np.asarray(now, dtype=float)
    out = np.zeros_like(p)
    live = marginal > 0
    out[live] = joint[:, live].T / joint[:, live].sum(axis=0)[:, None]
    return out


def leakage_function(correlation: Any, alpha: float) -> float:
    """``L_C(α)``: the most the previous leakage ``α`` adds through the correlation ``C``.

    ``correlation`` is row-stochastic (rows that are all zero are skipped: impossible states).

    Examples
    --------
    >>> round(leakage_function([[0.8, 0.2], [0.1, 0.9]], 1.0), 4)
    0.7063
    >>> leakage_function([[1.0, 0.0], [0.0, 1.0]], 2.5)    # perfect correlation passes it all
    2.5
    """
    c = np.asarray(correlation, dtype=float)
    a = float(alpha)
    if not a >= 0:
        raise InvalidParameterError(f"alpha must be a number >= 0, got {alpha!r}")
    return _Prefixes.of(c, _live_rows(c))(a)


def _live_rows(c: np.ndarray) -> np.ndarray:
    if c.ndim != 2 or c.shape[0] != c.shape[1] or (c < 0).any() or not np.isfinite(c).all():
        raise InvalidParameterError(
            f"the correlation must be a square matrix of probabilities, got shape {c.shape}"
        )
    sums = c.sum(axis=1)
    live = sums > 0
    if (np.abs(sums[live] - 1.0) > PROBABILITY_SUM).any():
        raise InvalidParameterError("every non-zero row of the correlation must sum to 1")
    return np.flatnonzero(live)


def _epsilons(epsilons: Any) -> np.ndarray:
    eps = np.atleast_1d(np.asarray(epsilons, dtype=float))
    if eps.ndim != 1 or eps.size == 0:
        raise InvalidParameterError("epsilons must be a non-empty sequence, one per slot")
    for e in eps:
        positive_finite("every per-slot epsilon", float(e))
    return eps


def temporal_leakage(transition: Any, epsilons: Any, *, initial: Any = None) -> TemporalLeakage:
    """Backward, forward and total leakage at every slot of a sequence of per-slot DP releases.

    ``epsilons[t]`` is the ε of slot ``t``'s release (the horizon is ``len(epsilons)``);
    ``initial`` is the law of the first slot (default: the stationary law, so the backward
    correlation is the same at every step).

    Examples
    --------
    >>> tl = temporal_leakage([[0.8, 0.2], [0.1, 0.9]], [1.0, 1.0, 1.0])
    >>> tl.backward.round(4).tolist(), tl.total.round(4).tolist()
    ([1.0, 1.7063, 2.1554], [2.1554, 2.4125, 2.1554])
    """
    p = check_stochastic(transition)
    eps = _epsilons(epsilons)
    k, horizon = p.shape[0], eps.size
    stationary = initial is None
    law = stationary_distribution(p) if stationary else check_initial(initial, k)
    laws = [law]
    for _ in range(1, horizon):
        laws.append(laws[-1] @ p)
    live = [np.flatnonzero(m > 0) for m in laws]
    backward = _backward_leakage(p, eps, laws, live, stationary)
    forward = _forward_leakage(p, eps, live)
    total = backward + forward - eps
    for a in (eps, backward, forward, total):
        a.setflags(write=False)
    return TemporalLeakage(eps, backward, forward, total)


def _backward_leakage(p: np.ndarray, eps: np.ndarray, laws: list, live: list,
                      stationary: bool) -> np.ndarray:
    """BPL at every slot: ``BPL_t = L^B_t(BPL_{t-1}) + ε_t`` with the backward correlation of
    slot t (the same at every step under the stationary law)."""
    backward = np.empty(eps.size)
    backward[0] = eps[0]
    if stationary:
        fixed = _Prefixes.of(backward_correlation(p, laws[0], laws[0]), live[0])
    for t in range(1, eps.size):
        step = fixed if stationary else _Prefixes.of(
            backward_correlation(p, laws[t - 1], laws[t]), live[t])
        backward[t] = step(backward[t - 1]) + eps[t]
    return backward


def _forward_leakage(p: np.ndarray, eps: np.ndarray, live: list) -> np.ndarray:
    """FPL at every slot: ``FPL_t = L^F(FPL_{t+1}) + ε_t`` (one prefix table per set of
    possible states)."""
    forward = np.empty(eps.size)
    forward[-1] = eps[-1]
    cache: dict[bytes, _Prefixes] = {}
    for t in range(eps.size - 2, -1, -1):
        key = live[t].tobytes()
        if key not in cache:
            cache[key] = _Prefixes.of(p, live[t])
        forward[t] = cache[key](forward[t + 1]) + eps[t]
    return forward


def leakage_supremum(transition: Any, epsilon: float) -> LeakageSupremum:
    """Suprema over an unbounded horizon of the stationary chain at ε per slot.

    ``backward`` is ``lim BPL_t`` (the least fixed point of ``α = L^B(α) + ε``), ``forward`` the
    same for ``L^F``, ``total = backward + forward - ε``. A supremum is finite exactly when for
    every ordered pair of states (i, i') possible under the stationary law, the mass ``q`` that
    row i of the correlation puts where row i' puts none satisfies ``e^ε q < 1``; in particular
    always when the matrix is positive, never when two rows have disjoint supports.

    Examples
    --------
    >>> s = leakage_supremum([[0.8, 0.2], [0.1, 0.9]], 1.0)
    >>> round(s.backward, 4), round(s.total, 4)
    (2.5771, 4.1543)
    """
    p = check_stochastic(transition)
    eps = positive_finite("epsilon", epsilon)
    law = stationary_distribution(p)
    live = np.flatnonzero(law > 0)
    back = _Prefixes.of(backward_correlation(p, law, law), live).fixed_point(eps)
    fwd = _Prefixes.of(p, live).fixed_point(eps)
    return LeakageSupremum(eps, back, fwd, back + fwd - eps)
