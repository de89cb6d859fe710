"""A failing Laplace scale for every node of a chain at once, from moment generating functions.

Beyond the largest support point ``x_max`` of two laws, the Laplace density ratio is constant:
``p_a(w)/p_b(w) = Σ μ_a(x) e^{x/λ} / Σ μ_b(x) e^{x/λ} = M_a(1/λ) / M_b(1/λ)``, the ratio of the
moment generating functions, and below the smallest it is ``M_a(-1/λ) / M_b(-1/λ)``. The exact
audit takes the supremum over all outputs, so

    ``ε_pair(λ) >= max(|log M_a(1/λ) - log M_b(1/λ)|, |log M_a(-1/λ) - log M_b(-1/λ)|)``,

and a scale where this *limit loss* exceeds ε fails the audit. On a chain, ``M`` given ``X_t =
a`` for every node at once is one forward–backward pass with the transition weights multiplied
by ``e^{γ w(s)}``: the traversal of the count-law engine
(:mod:`pufferfish_pgm.queries._count_engine`) along a tilt axis instead of a count axis, O(T
k²) per γ, with every chain of the same length and size advanced together and each gap taken
less a rounding allowance, so a whole grid of scales costs one pass. :func:`failing_scale`
searches it for the largest failing scale: a lower bracket for the exact calibration that costs
no count law, and the scale at which the streamed calibrator cuts the count laws
(:mod:`pufferfish_pgm.queries._truncated_count_law`).

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

from .._budget import check_allocation, memory_budget
from ..queries._engine import ChainSteps, backward, forward, tilt_lift

__all__ = ["MgfTask", "failing_scale", "limit_losses", "node_limit_losses"]

#: A limit loss must exceed ε by this relative margin to count as failing (rounding).
MARGIN = 1e-9
#: Relative rounding allowed per step of the recursion on a log generating function: a gap
#: must exceed ε by more than 4 T u (|log M_a| + |log M_b|) to count (u = 2^-52).
ROUNDING = 4.0 * 2.0 ** -52
#: Points per refinement round of the scale grid, and rounds after the octave grid.
POINTS, ROUNDS = 32, 3
#: Least bytes of generating-function tables held at once (more γ run in several passes);
#: up to an eighth of the memory budget is used when that is larger (a pass costs the same
#: per step for 2 or 65 points: at T = 43,200, 32 MB held one point per pass, and the bracket
#: made about 220 passes).
TABLE_BYTES = 1 << 25
#: Octaves of the first grid evaluated per pass (the first failing one is looked for).
OCTAVE_BLOCK = 16


@dataclass(frozen=True, eq=False)
class MgfTask:
    """One fixed-start chain and its single-node pairs (state indices at node ``node[i]``);
    ``transition`` is one (k, k) matrix or one per step, (T - 1, k, k)."""

    transition: np.ndarray
    initial: np.ndarray
    weights: np.ndarray
    node: np.ndarray
    first: np.ndarray
    second: np.ndarray
    spacing: float = 1.0


def _log_mgf(tasks: Sequence[MgfTask], gammas: np.ndarray) -> np.ndarray:
    """``log E[e^{γ s F}; X_t = s]`` as an array (T, n, k, G) for tasks of one length and
    size (``s`` each task's spacing), from one tilted forward–backward pass of them all."""
    length, k = tasks[0].weights.shape
    n = len(tasks)
    check_allocation(length * n * k * gammas.size * 8,
                     what=f"the generating-function tables of {n} chain(s) (T={length}, "
                          f"k={k}, {gammas.size} points)")
    steps = ChainSteps(np.stack([np.asarray(x.transition, dtype=float) for x in tasks],
                                axis=-3), batched=True)    # (n, k, k) or (T - 1, n, k, k)
    weights = np.stack([x.spacing * np.asarray(x.weights, dtype=float) for x in tasks])
    with np.errstate(divide="ignore"):
        log_q0 = np.log(np.stack([x.initial for x in tasks]))
    lift = tilt_lift(weights, gammas)
    out = np.empty((length, n, k, gammas.size))
    for t, _, phi in forward(steps, log_q0, lift, length, tilt=gammas.size):
        out[t] = phi
    for t, _, psi in backward(steps, (n, k, gammas.size), lift, length):
        out[t] += psi
    return out


def _gaps_by_task(tasks: Sequence[MgfTask], gammas: np.ndarray,
                  largest: bool = False) -> list[np.ndarray]:
    """Per task, ``|log M_a(γ) - log M_b(γ)|`` per pair and γ less the rounding allowance
    (0 for an impossible secret), or with ``largest`` only its maximum over the pairs per γ;
    tasks of one length and size run together, in chunks of γ whose tables fit
    ``TABLE_BYTES`` or an eighth of the memory budget, whichever is larger."""
    out: list = [None] * len(tasks)
    batches: dict[tuple, list[int]] = {}
    for i, task in enumerate(tasks):     # one matrix or one per step: separate batches
        batches.setdefault((*np.shape(task.weights), np.ndim(task.transition)), []).append(i)
    for (length, k, _), members in batches.items():
        held = max(TABLE_BYTES, memory_budget() // 8)
        chunk = max(1, held // (8 * length * len(members) * k) - 1)
        parts: list[list[np.ndarray]] = [[] for _ in members]
        for lo in range(0, gammas.size, chunk):
            g = np.concatenate(([0.0], gammas[lo:lo + chunk]))
            log_m = _log_mgf([tasks[i] for i in members], g)
            for j, i in enumerate(members):
                gaps = _pair_gaps(tasks[i], log_m[:, j])
                parts[j].append(gaps.max(axis=0, initial=0.0) if largest else gaps)
        for j, i in enumerate(members):
            out[i] = np.concatenate(parts[j], axis=-1)
    return out


def limit_losses(task: MgfTask, gammas: np.ndarray) -> np.ndarray:
    """Per γ, the largest ``|log M_a(γ) - log M_b(γ)|`` over the task's possible pairs, less
    the rounding the recursion may have made (so a gap above ε is one the audit also sees)."""
    return _gaps_by_task([task], np.asarray(gammas, dtype=float), largest=True)[0]


def node_limit_losses(task: MgfTask, scale: float) -> dict:
    """Per node of the task, its largest limit loss at ``scale`` (either sign)."""
    gaps = _gaps_by_task([task], np.array([1.0 / scale, -1.0 / scale]))[0].max(axis=1)
    out = np.zeros(int(task.node.max()) + 1)
    np.maximum.at(out, task.node, gaps)
    return {int(t): float(out[t]) for t in np.unique(task.node)}


def _pair_gaps(task: MgfTask, log_m: np.ndarray) -> np.ndarray:
    """The gaps of one task's pairs from its table ``log_m`` (T, k, 1 + G), γ = 0 first."""
    with np.errstate(invalid="ignore"):
        log_m = log_m[:, :, 1:] - log_m[:, :, :1]       # given X_t = s
    a = log_m[task.node, task.first]                    # (pairs, G)
    b = log_m[task.node, task.second]
    with np.errstate(invalid="ignore"):   # less a rounding allowance: at tiny scales the
        gap = a - b                       # two logs of ~γ·F cancel; in place, same values
        np.abs(gap, out=gap)
        np.abs(a, out=a)
        a += np.abs(b)
        a *= ROUNDING * len(task.weights)
        gap -= a
    return np.fmax(gap, 0.0, out=gap)                   # NaN (impossible secret): 0


def _fails(tasks: Sequence[MgfTask], scales: np.ndarray, epsilon: float) -> np.ndarray:
    """Which scales fail by the limit loss (either sign) on some task."""
    gammas = np.concatenate((1.0 / scales, -1.0 / scales))
    worst = np.zeros(gammas.size)
    for gaps in _gaps_by_task(tasks, gammas, largest=True):
        worst = np.maximum(worst, gaps)
    worst = np.maximum(worst[:scales.size], worst[scales.size:])
    return worst > epsilon * (1.0 + MARGIN)


def _first_failing(tasks: Sequence[MgfTask], scales: np.ndarray, epsilon: float) -> int | None:
    """The first of ``scales`` that fails (None: none), evaluated in blocks of
    ``OCTAVE_BLOCK`` scales: a failing scale in a block ends the search, since every later
    block holds only later scales. The same index as one evaluation of them all, for a
    fraction of its tilt columns when the exact scale is within ``2^OCTAVE_BLOCK`` of the
    upper end (the usual case)."""
    for lo in range(0, scales.size, OCTAVE_BLOCK):
        fails = _fails(tasks, scales[lo:lo + OCTAVE_BLOCK], epsilon)
        if fails.any():
            return lo + int(np.argmax(fails))
    return None


def failing_scale(tasks: Sequence[MgfTask], epsilon: float, upper: float) -> float | None:
    """The largest scale found below ``upper`` whose limit loss exceeds ε (None: none).

    An octave grid ``upper · 2^-j`` (j = 0..60) finds the largest failing octave; each round
    then splits the gap above the failing point into ``POINTS`` geometric steps and moves to
    the largest failing one. The result always fails (by its own evaluation), so the exact
    scale is above it.
    """
    scales = upper * 2.0 ** -np.arange(61.0)
    j = _first_failing(tasks, scales, epsilon)
    if j is None:
        return None
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
