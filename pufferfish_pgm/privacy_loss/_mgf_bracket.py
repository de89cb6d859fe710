"""A failing Laplace scale for every node of a chain at once, from moment generating functions.

Beyond the largest support point ``x_max`` of two laws, the Laplace density ratio is constant:
``p_a(w)/p_b(w) = Σ μ_a(x) e^{x/λ} / Σ μ_b(x) e^{x/λ} = M_a(1/λ) / M_b(1/λ)``, the ratio of
the moment generating functions, and below the smallest it is ``M_a(-1/λ) / M_b(-1/λ)``. The
exact audit takes the supremum over all outputs, so

    ``ε_pair(λ) >= max(|log M_a(1/λ) - log M_b(1/λ)|, |log M_a(-1/λ) - log M_b(-1/λ)|)``,

and a scale where this *limit loss* exceeds ε fails the audit. On a chain, ``M`` given
``X_t = a`` for every node at once is one forward–backward pass with the transition weights
multiplied by ``e^{γ w(s)}`` (O(T k²) per γ, scaled products in linear space with a log-space
fallback; each gap is taken less a rounding allowance), so a whole grid of scales costs
one pass. :func:`failing_scale` searches it for the largest failing scale: a lower bracket
for the exact calibration that costs no count law, and the scale at which the streamed
calibrator cuts the count laws (:mod:`pufferfish_pgm.queries._truncated_count_law`).

Examples
--------
>>> import numpy as np
>>> p = np.array([[0.9, 0.1], [0.1, 0.9]])
>>> task = MgfTask(p, np.array([0.5, 0.5]), np.array([[0, 1]] * 10),
...                np.array([5]), np.array([0]), np.array([1]))
>>> lam = failing_scale([task], epsilon=1.0, upper=10.0)
>>> 1.0 < lam < 10.0 and bool(limit_losses(task, np.array([1 / lam]))[0] > 1.0)
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._budget import check_allocation
from ..queries._truncated_count_law import linear_step

__all__ = ["MgfTask", "failing_scale", "limit_losses", "node_limit_losses"]

#: A limit loss must exceed ε by this relative margin to count as failing (rounding).
MARGIN = 1e-9
#: Relative rounding allowed per step of the recursion on a log generating function: a gap
#: must exceed ε by more than 4 T u (|log M_a| + |log M_b|) to count (u = 2^-52).
ROUNDING = 4.0 * 2.0 ** -52
#: Points per refinement round of the scale grid, and rounds after the octave grid.
POINTS, ROUNDS = 32, 3


@dataclass(frozen=True, eq=False)
class MgfTask:
    """One fixed-start chain and its single-node pairs (state indices at node ``node[i]``)."""

    transition: np.ndarray
    initial: np.ndarray
    weights: np.ndarray
    node: np.ndarray
    first: np.ndarray
    second: np.ndarray
    spacing: float = 1.0


def _passes(task: MgfTask, gammas: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Forward ``φ[t, g, s]`` and backward ``ψ[t, g, s]`` log tables (γ-weighted)."""
    length, k = task.weights.shape
    check_allocation(3 * length * gammas.size * k * 8,
                     what=f"the generating-function tables of a chain (T={length}, k={k}, "
                          f"{gammas.size} points)")
    p = np.asarray(task.transition, dtype=float)
    low = float(np.log(p[p > 0].min()))
    with np.errstate(divide="ignore"):
        log_q0 = np.log(task.initial)
    lift = gammas[None, :, None] * task.weights[:, None, :]        # (T, G, k)
    phi = np.empty((length, gammas.size, k))
    psi = np.empty_like(phi)
    phi[0] = log_q0[None, :] + lift[0]
    for t in range(1, length):    # a loop over time: each step needs the one before
        phi[t] = linear_step(p, low, phi[t - 1].T).T + lift[t]
    psi[-1] = 0.0
    for t in range(length - 2, -1, -1):
        psi[t] = linear_step(p.T, low, (lift[t + 1] + psi[t + 1]).T).T
    return phi, psi


def limit_losses(task: MgfTask, gammas: np.ndarray) -> np.ndarray:
    """Per γ, the largest ``|log M_a(γ) - log M_b(γ)|`` over the task's possible pairs, less
    the rounding the recursion may have made (so a gap above ε is one the audit also sees)."""
    return _pair_gaps(task, gammas).max(axis=0, initial=0.0)


def node_limit_losses(task: MgfTask, scale: float) -> dict:
    """Per node of the task, its largest limit loss at ``scale`` (either sign)."""
    gaps = _pair_gaps(task, np.array([1.0 / scale, -1.0 / scale])).max(axis=1)
    out = np.zeros(int(task.node.max()) + 1)
    np.maximum.at(out, task.node, gaps)
    return {int(t): float(out[t]) for t in np.unique(task.node)}


def _pair_gaps(task: MgfTask, gammas: np.ndarray) -> np.ndarray:
    """``|log M_a(γ) - log M_b(γ)|`` per pair and γ (0 for an impossible secret)."""
    g = np.concatenate(([0.0], np.asarray(gammas, dtype=float) * task.spacing))
    phi, psi = _passes(task, g)
    log_m = phi + psi                                   # log E[e^{γF}; X_t = s]
    with np.errstate(invalid="ignore"):
        log_m = log_m[:, 1:, :] - log_m[:, :1, :]       # given X_t = s
    by_state = np.ascontiguousarray(log_m.transpose(0, 2, 1))   # (T, k, G)
    a = by_state[task.node, task.first]                 # (pairs, G)
    b = by_state[task.node, task.second]
    with np.errstate(invalid="ignore"):   # less a rounding allowance: at tiny scales the
        gap = np.abs(a - b) - ROUNDING * len(task.weights) * (np.abs(a) + np.abs(b))
    return np.where(np.isnan(gap), 0.0, np.maximum(gap, 0.0))   # two logs of ~γ·F cancel


def _fails(tasks: Sequence[MgfTask], scales: np.ndarray, epsilon: float) -> np.ndarray:
    """Which scales fail by the limit loss (either sign) on some task."""
    gammas = np.concatenate((1.0 / scales, -1.0 / scales))
    worst = np.zeros(gammas.size)
    for task in tasks:
        worst = np.maximum(worst, limit_losses(task, gammas))
    worst = np.maximum(worst[:scales.size], worst[scales.size:])
    return worst > epsilon * (1.0 + MARGIN)


def failing_scale(tasks: Sequence[MgfTask], epsilon: float, upper: float) -> float | None:
    """The largest scale found below ``upper`` whose limit loss exceeds ε (None: none).

    An octave grid ``upper · 2^-j`` (j = 0..60) finds the largest failing octave; each round
    then splits the gap above the failing point into ``POINTS`` geometric steps and moves to
    the largest failing one. The result always fails (by its own evaluation), so the exact
    scale is above it.
    """
    scales = upper * 2.0 ** -np.arange(61.0)
    fails = _fails(tasks, scales, epsilon)
    if not fails.any():
        return None
    j = int(np.argmax(fails))
    low = float(scales[j])
    high = float(scales[j - 1]) if j > 0 else 2.0 * upper
    for _ in range(ROUNDS):
        grid = low * (high / low) ** (np.arange(1, POINTS + 1) / (POINTS + 1))
        fails = _fails(tasks, grid, epsilon)
        if fails.any():
            i = int(np.flatnonzero(fails)[-1])
            low = float(grid[i])
            high = float(grid[i + 1]) if i + 1 < POINTS else high
        else:
            high = float(grid[0])
    return low
