"""Validation of Markov chain parameters (internal to :mod:`pufferfish_pgm.scenarios`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._tolerances import PROBABILITY_SUM
from ..errors import InvalidModelError

__all__ = ["TOLERANCE", "check_initial", "check_steps", "check_stochastic",
           "stationary_distribution"]

TOLERANCE = PROBABILITY_SUM


def check_stochastic(matrix: Any) -> np.ndarray:
    try:
        p = np.array(matrix, dtype=float)
    except (TypeError, ValueError) as err:
        raise InvalidModelError(f"the transition matrix is not numeric: {err}") from None
    if p.ndim != 2 or p.shape[0] != p.shape[1] or p.shape[0] == 0:
        raise InvalidModelError(
            f"the transition matrix must be square k x k with k >= 1, got shape {p.shape}"
        )
    bad = np.argwhere(~np.isfinite(p) | (p < 0))
    if len(bad):
        i, j = (int(x) for x in bad[0])
        raise InvalidModelError(
            f"transition[{i}, {j}] = {float(p[i, j])!r} is not a probability; use values in "
            "[0, 1]"
        )
    off = np.abs(p.sum(axis=1) - 1.0)
    if (off > TOLERANCE).any():
        i = int(np.argmax(off))
        raise InvalidModelError(
            f"row {i} of the transition matrix sums to {float(p[i].sum())!r} (off by "
            f"{off[i]:.3g}); every row must sum to 1 within 1e-9"
        )
    return p / p.sum(axis=1, keepdims=True)


def check_steps(matrices: Any, length: int) -> np.ndarray:
    """A time-varying chain's ``(length - 1, k, k)`` stack, each step checked like a matrix.

    ``matrices[t]`` is the transition from X_t to X_{t+1}; every entry must be in [0, 1] and
    every row of every step sum to 1 within 1e-9 (the message names the step and the row).

    Examples
    --------
    >>> check_steps([[[0.5, 0.5], [0.0, 1.0]], [[1.0, 0.0], [0.3, 0.7]]], 3).shape
    (2, 2, 2)
    >>> check_steps([[[0.5, 0.5], [0.0, 1.0]], [[1.0, 0.0], [0.3, 0.6]]], 3)
    Traceback (most recent call last):
    ...
    pufferfish_pgm.errors.InvalidModelError: step 1 (X_1 -> X_2), row 1 of the transition ...
    """
    try:
        p = np.array(matrices, dtype=float)
    except (TypeError, ValueError) as err:
        raise InvalidModelError(f"the transition matrices are not numeric: {err}") from None
    if p.ndim != 3 or p.shape[1] != p.shape[2] or p.shape[1] == 0 or len(p) != length - 1:
        raise InvalidModelError(
            f"a time-varying chain of length {length} needs transition of shape "
            f"({length - 1}, k, k) (one k x k matrix per step t -> t+1), got shape {p.shape}")
    bad = np.argwhere(~np.isfinite(p) | (p < 0))
    if len(bad):
        t, i, j = (int(x) for x in bad[0])
        raise InvalidModelError(
            f"step {t} (X_{t} -> X_{t + 1}): transition[{t}, {i}, {j}] = {float(p[t, i, j])!r} "
            "is not a probability; use values in [0, 1]")
    off = np.abs(p.sum(axis=2) - 1.0)
    if (off > TOLERANCE).any():
        t, i = (int(x) for x in np.unravel_index(int(np.argmax(off)), off.shape))
        raise InvalidModelError(
            f"step {t} (X_{t} -> X_{t + 1}), row {i} of the transition sums to "
            f"{float(p[t, i].sum())!r} (off by {off[t, i]:.3g}); every row of every step must "
            "sum to 1 within 1e-9")
    return p / p.sum(axis=2, keepdims=True)


def check_initial(initial: Any, k: int) -> np.ndarray:
    try:
        q = np.array(initial, dtype=float).ravel()
    except (TypeError, ValueError) as err:
        raise InvalidModelError(f"the initial distribution is not numeric: {err}") from None
    if q.shape != (k,):
        raise InvalidModelError(
            f"the initial distribution has {q.size} entries but the chain has {k} states"
        )
    bad = np.argwhere(~np.isfinite(q) | (q < 0))
    if len(bad):
        i = int(bad[0][0])
        raise InvalidModelError(f"initial[{i}] = {float(q[i])!r} is not a probability")
    if abs(q.sum() - 1.0) > TOLERANCE:
        raise InvalidModelError(
            f"the initial distribution sums to {float(q.sum())!r}; it must sum to 1 within 1e-9"
        )
    return q / q.sum()


def _closed_classes(transition: np.ndarray) -> list[np.ndarray]:
    """The closed communicating classes (no positive transition leaves them)."""
    # scipy ships no type hints (scipy-stubs is not a dependency)
    from scipy.sparse.csgraph import connected_components  # type: ignore[import-untyped]

    positive = transition > 0
    _, label = connected_components(positive, directed=True, connection="strong")
    out = []
    for c in np.unique(label):
        members = np.flatnonzero(label == c)
        if not positive[np.ix_(members, np.flatnonzero(label != c))].any():
            out.append(members)
    return out


def stationary_distribution(transition: np.ndarray) -> np.ndarray:
    """The unique stationary distribution π = π P (error if it is not unique).

    A stationary distribution lives on the chain's closed communicating classes; it is unique
    exactly when there is one such class. The transient states get an exact 0 (not a rounding
    residue such as 1e-16, which would make impossible secrets look possible), and π on the
    closed class solves the linear system of that class alone.

    Examples
    --------
    >>> stationary_distribution(np.array([[0.5, 0.5], [0.25, 0.75]])).round(4).tolist()
    [0.3333, 0.6667]
    >>> stationary_distribution(np.array([[0.3, 0.7], [0.0, 1.0]])).tolist()   # 0 transient
    [0.0, 1.0]
    """
    closed = _closed_classes(transition)
    if len(closed) > 1:
        shown = " and ".join(str(c.tolist()) for c in closed[:2])
        raise InvalidModelError(
            f"the chain has several stationary distributions (it is reducible: the state "
            f"indices {shown} are closed classes that never reach each other); pass the "
            "initial distribution explicitly instead of 'stationary'"
        )
    members = closed[0]
    k = members.size
    sub = transition[np.ix_(members, members)]
    a = np.vstack([sub.T - np.eye(k), np.ones((1, k))])
    pi_c = np.linalg.lstsq(a, np.r_[np.zeros(k), 1.0], rcond=None)[0]
    pi_c = np.clip(pi_c, 0.0, None)
    pi = np.zeros(transition.shape[0])
    pi[members] = pi_c / pi_c.sum()
    return pi
