"""Chain count laws cut to the counts a Laplace scale ``>= λ_lo`` can see (internal).

The exact audit of ``F + Laplace(λ)`` needs every mass of the law of ``F`` given a secret to
*relative* precision, because the supremum of the density ratio often sits in a tail where
the masses are tiny but weighted by ``e^{|w - c| / λ}``. Far enough out, though, a tail decays
faster than the kernel can lift it, and it can be dropped with a proven bound.

**Truncation lemma.** Let ``G(w) = Σ_c m(c) H(w - c)`` with ``m >= 0`` and ``H > 0``
log-Lipschitz with constant ``1/λ`` (``H(u') <= H(u) e^{|u - u'|/λ}``). Drop a set ``D`` of
counts and keep a count ``r`` with ``Σ_{c ∈ D} m(c) e^{|c - r|/λ} <= δ m(r)``. Then for every
``w``, ``G(w) <= (1 + δ) G_kept(w)``: each dropped term is at most ``m(c) e^{|c - r|/λ}
H(w - r)``, and ``m(r) H(w - r)`` is a kept term.

Every quantity the audit uses has this form at every step of the forward–backward recursion:
the smoothed law ``E[K(w - F); X_t = a, evidence]`` is a sum over the partial count ``c`` of
a forward (or backward) row entry times ``E[K(w - c - rest); ...]``, and the Laplace kernel
``K(u) = e^{-|u|/λ}`` makes that continuation log-Lipschitz with constant ``1/λ``; so is the
constant 1 (total mass), with constant 0. The condition weakens as λ grows, so a cut made for
``λ_lo`` holds for every larger scale. Rows are cut every ``CUT_EVERY`` steps in each
direction (each state's row against its own kept mass), so a law given a secret has passed
at most ``2T + 1`` cuts: its smoothed density and its total mass are each within a factor
``(1 + 2δ)^{2T+1}`` below the truth, and the log ratio of two normalised densities moves by
at most ``8 (2T + 1) δ`` (:func:`loss_error_bound`), which the calibrator adds to every
realised ε it compares. (Float rounding of the audit, shared with the stored path, is of the
order of 1e-16 nats per step of the recursions and is not part of this bound.)

Examples
--------
>>> import numpy as np
>>> rows = np.log([[1e-30, 0.5, 0.5, 1e-30]])    # two tails one count away
>>> keep_bounds(rows, 0.01)      # at scale 0.01 the kernel lifts them by e^100: kept
(0, 4)
>>> keep_bounds(rows, 1.0)       # at scale 1 only by e: 1e-30 e <= 1e-20 · 0.5, dropped
(1, 3)
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np

from .._budget import describe_bytes, memory_budget
from ..distributions._engine import log_convolve
from ..errors import LimitExceededError
from ._count_engine import (
    ChainSteps,
    backward,
    count_lift,
    fits_linear,
    forward,
)

__all__ = ["LOG_DELTA", "convolve_rows", "forward_bytes", "keep_bounds", "loss_error_bound",
           "stream_node_laws"]

#: Log of the relative mass one cut may drop (about 1e-20).
LOG_DELTA = -46.0
#: Rows are cut every this many steps (a row cut later is only wider, never wrong).
CUT_EVERY = 8


def forward_bytes(weights: np.ndarray) -> int:
    """Most bytes the forward rows of :func:`stream_node_laws` can hold on a chain with these
    weights (T, k): the uncut rows, ``Σ_t k (1 + Σ_{u<=t} max_s w[u, s])`` float64 values.
    Cuts only shrink rows, so this bounds the held rows from the sizes alone, before any law
    is computed; on sticky chains at large scales the cuts remove almost nothing and the
    rows come close to it.

    Examples
    --------
    >>> forward_bytes(np.array([[0, 1]] * 3))        # 2 states x (2 + 3 + 4) counts x 8 bytes
    144
    """
    w = np.asarray(weights, dtype=np.int64)
    widths = 1 + np.cumsum(w.max(axis=1))
    return int(w.shape[1] * int(widths.sum()) * 8)


def loss_error_bound(length: int, log_delta: float = LOG_DELTA) -> float:
    """Largest change the cuts can make to a pair's realised ε on a chain of ``length``.

    Examples
    --------
    >>> loss_error_bound(10_080) < 1e-14
    True
    """
    return 8.0 * (2 * length + 1) * float(np.exp(log_delta))


def keep_bounds(rows: np.ndarray, scale: float, log_delta: float = LOG_DELTA) -> tuple[int, int]:
    """Columns ``[lo, hi)`` of the log-mass rows (k, n) that must be kept for scales >= ``scale``.

    Per row, with ``s_c = x_c + c/λ`` (the law tilted towards the right), the right tail beyond
    the first ``r`` with ``log Σ_{c>r} e^{s_c} <= log δ + max s`` goes: the lemma of the module
    docstring with the kept reference ``r* = argmax s``, since ``m(c) e^{(c - r*)/λ} / m(r*) =
    e^{s_c - s_{r*}}``. The left tail likewise with ``x_c - c/λ``. The union over the rows is
    kept. Rows of ``-inf`` only keep nothing; all-``-inf`` input gives ``(0, 0)``.
    """
    finite = np.isfinite(rows)
    live = finite.any(axis=1)
    if not live.any():
        return 0, 0
    x = np.where(finite, rows, -np.inf)[live]
    ok = finite[live]
    position = (np.arange(x.shape[1]) - x.shape[1] / 2.0) / scale
    right = _last_cut(x + position, ok, log_delta)
    left = x.shape[1] - 1 - _last_cut((x - position)[:, ::-1], ok[:, ::-1], log_delta)
    return left, right + 1


def _first_cut(s: np.ndarray, ok: np.ndarray, log_delta: float) -> np.ndarray:
    """Per row, the first column ``r`` with ``log Σ_{c>r} e^{s_c} - max_c s_c <= log δ``.

    Only the columns after ``r1``, the last one whose own ``s`` is above that level, are
    scanned: for ``r < r1`` the sum includes ``e^{s_{r1}}`` (a ``logaddexp`` is never below
    its larger input), so no such ``r`` qualifies, and the scan from the right over columns
    ``> r1`` gives exactly the values of a full scan there. On sticky chains at large scales
    that is a few columns per row where the full scan (a ``logaddexp`` per entry) was the
    largest cost of the streamed calibration."""
    peak = np.max(s, axis=1, keepdims=True)
    slack = 1e-12 * (np.abs(np.where(ok, s, 0.0)).max(axis=1, keepdims=True) + 1.0)
    level = peak + log_delta - slack
    above = s > level
    r1 = s.shape[1] - 1 - np.argmax(above[:, ::-1], axis=1)     # peak itself is above
    start = int(r1.min()) + 1
    part = s[:, start:]
    inclusive = np.flip(np.logaddexp.accumulate(np.flip(part, axis=1), axis=1), axis=1)
    beyond = np.concatenate([inclusive, np.full((s.shape[0], 1), -np.inf)], axis=1)
    column = start - 1 + np.arange(beyond.shape[1])        # beyond[:, j] is Σ_{c > column}
    hit = (beyond <= level) & (column[None, :] >= r1[:, None])
    return start - 1 + np.argmax(hit, axis=1)


def _last_cut(s: np.ndarray, ok: np.ndarray, log_delta: float) -> int:
    """``max(_first_cut(s, ok, log_delta))``, scanning only the columns after ``top``, the
    largest ``r1`` of :func:`_first_cut` over the rows (all that :func:`keep_bounds` needs).

    The row of ``r1 = top`` has its cut at ``top`` or later, so the maximum is at least
    ``top``. The tail sums ``Σ_{c>r}`` never increase with ``r`` (a ``logaddexp`` is never
    below an input), so a row whose sum beyond ``top`` is already at its level has its cut
    at or before ``top``; any other row has it at its first ``r > top`` at its level, and
    the accumulation from the right gives the same sums whichever column it starts at. One
    row whose own ``r1`` is early (a state with a short law) no longer makes every row
    scan from there (the node laws' cut cost 0.3 ms each on sticky chains at T = 1,440)."""
    peak = np.max(s, axis=1, keepdims=True)
    slack = 1e-12 * (np.abs(np.where(ok, s, 0.0)).max(axis=1, keepdims=True) + 1.0)
    level = peak + log_delta - slack
    r1 = s.shape[1] - 1 - np.argmax((s > level)[:, ::-1], axis=1)    # peak itself is above
    top = int(r1.max())
    part = s[:, top + 1:]
    if not part.shape[1]:
        return top
    inclusive = np.flip(np.logaddexp.accumulate(np.flip(part, axis=1), axis=1), axis=1)
    beyond = np.concatenate([inclusive, np.full((s.shape[0], 1), -np.inf)], axis=1)
    return top + int(np.argmax(beyond <= level, axis=1).max())     # beyond[:, j]: Σ_{c>top+j}


def _trim(offset: int, rows: np.ndarray, scale: float, log_delta: float,
          t: int = 0) -> tuple[int, np.ndarray]:
    """Cut the rows (every ``CUT_EVERY`` steps, and always at step 0)."""
    if t % CUT_EVERY:
        return offset, rows
    lo, hi = keep_bounds(rows, scale, log_delta)
    return offset + lo, rows[:, lo:hi]


def _trimmer(scale: float, log_delta: float):
    def trim(t: int, offset: int, rows: np.ndarray) -> tuple[int, np.ndarray]:
        return _trim(offset, rows, scale, log_delta, t)
    return trim


def _forward(steps: ChainSteps, log_q0: np.ndarray, weights: np.ndarray, scale: float,
             log_delta: float, limit: int, name: str,
             keep: Mapping[int, Sequence[int]]) -> list[tuple[int, np.ndarray]]:
    """Cut forward rows ``log P(X_t = s, Σ_{u<=t} w = offset + j)``, held for the t of
    ``keep`` only (empty for the others)."""
    out: list[tuple[int, np.ndarray]] = []
    held, last = 0, max(keep, default=-1)
    for t, offset, rows in forward(steps, log_q0, count_lift(weights), len(weights),
                                   _trimmer(scale, log_delta), reuse=True):
        rows = rows.copy() if t in keep else np.empty((rows.shape[0], 0))   # buffers reused
        out.append((offset, rows))
        held += rows.nbytes
        if held > limit:
            raise LimitExceededError(
                f"the cut forward count rows of {name!r} need more than {describe_bytes(held)} "
                f"by step {t} of {len(weights)}, more than the memory budget of "
                f"{describe_bytes(limit)}; raise the budget (memory_budget=... or "
                "PUFFERFISH_PGM_MEMORY_BUDGET) or calibrate with ExactQuiltMechanism")
        if t >= last:               # no later row is wanted: the backward rows cover them
            break
    return out


def stream_node_laws(transition: np.ndarray, initial: np.ndarray, weights: np.ndarray,
                     wanted: Mapping[int, Sequence[int]], scale: float, *,
                     log_delta: float = LOG_DELTA, name: str = "chain",
                     budget: int | float | str | None = None,
                     shared: list | None = None, hold: frozenset = frozenset()
                     ) -> Iterator[tuple[int, int, np.ndarray]]:
    """``(t, offset, rows)`` for every node ``t`` of ``wanted``, t descending.

    ``rows[j, c] = log P(F = offset + c, X_t = wanted[t][j])`` (unnormalised; ``-inf`` for
    an impossible state), cut for Laplace scales >= ``scale`` in count units (see the module
    docstring). ``transition`` is one (k, k) matrix or one per step, (T - 1, k, k). The cut
    forward rows are held (checked against the memory budget as they grow); the backward
    rows are advanced one step at a time and never stored. The forward pass stops at the
    last wanted node and the backward pass at the first (the steps beyond serve no law).

    ``shared`` passes forward rows from one call to a later one on the same chain: an empty
    list is filled with this call's rows, kept for ``wanted`` and the nodes of ``hold``
    (none is freed); a filled one is read instead of a forward pass (the caller makes sure
    it holds every wanted node's rows, cut for a scale at most ``scale``: a cut made for a
    scale holds for every larger one) and freed as the backward pass goes.

    Examples
    --------
    >>> p = np.array([[0.9, 0.1], [0.2, 0.8]])
    >>> out = list(stream_node_laws(p, np.array([2 / 3, 1 / 3]), np.array([[0, 1]] * 3),
    ...                             {1: [0, 1]}, scale=0.5))
    >>> t, offset, rows = out[0]
    >>> t, offset, np.exp(rows).sum(axis=1).round(12).tolist()   # P(X_1 = 0), P(X_1 = 1)
    (1, 0, [0.666666666667, 0.333333333333])
    """
    with np.errstate(divide="ignore"):
        log_q0 = np.log(initial)
    weights = np.asarray(weights, dtype=np.int64)
    steps = ChainSteps(transition)
    keep = shared is not None and not shared
    if shared:
        rows_f = shared
    else:
        kept = {**{t: () for t in hold}, **wanted} if keep else wanted
        rows_f = _forward(steps, log_q0, weights, scale, log_delta, memory_budget(budget),
                          name, kept)
        if shared is not None:
            shared += rows_f
    first = min(wanted, default=len(weights))
    for t, b_offset, beta in backward(steps, (len(log_q0), 1), count_lift(weights),
                                      len(weights), _trimmer(scale, log_delta), reuse=True):
        if t in wanted:
            f_offset, alpha = rows_f[t]
            if not keep:
                rows_f[t] = (f_offset, np.empty((len(alpha), 0)))   # free it (a view would not)
            yield (t, *_node_laws(alpha, f_offset, beta, b_offset, wanted[t], scale, log_delta))
        if t <= first:              # no earlier node is wanted
            return


def _node_laws(alpha: np.ndarray, f_offset: int, beta: np.ndarray, b_offset: int,
               states: Sequence[int], scale: float, log_delta: float) -> tuple[int, np.ndarray]:
    """The joint laws of one node's wanted states on one shared (cut) grid."""
    rows = convolve_rows(alpha[list(states)], beta[list(states)])
    lo, hi = keep_bounds(rows, scale, log_delta)
    if hi <= lo:
        return f_offset + b_offset, rows[:, :1]
    return f_offset + b_offset + lo, rows[:, lo:hi]


def convolve_rows(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """``convolve(xs[j], ys[j])`` for every row ``j`` of xs (J, n) and ys (J, m), as one
    (J, n + m - 1) array: the same values as :func:`convolve` row by row (the same linear-
    space products where :func:`fits_linear` holds, :func:`log_convolve` elsewhere), with
    the exponentials, logarithms and range tests done once for all rows.

    Examples
    --------
    >>> from pufferfish_pgm.queries._count_engine import convolve
    >>> x = np.log([[0.5, 0.5], [1.0, 1e-300]])
    >>> bool((convolve_rows(x, x) == np.stack([convolve(r, r) for r in x])).all())
    True
    """
    n, m = xs.shape[1], ys.shape[1]
    if not (n and m):
        return np.full((len(xs), max(n + m - 1, 1)), -np.inf)
    out = np.full((len(xs), n + m - 1), -np.inf)
    top_x, top_y = xs.max(axis=1), ys.max(axis=1)
    live = np.isfinite(top_x) & np.isfinite(top_y)
    low_x = np.min(xs, axis=1, where=np.isfinite(xs), initial=np.inf)
    low_y = np.min(ys, axis=1, where=np.isfinite(ys), initial=np.inf)
    linear = live & fits_linear(top_x - low_x, top_y - low_y)
    if linear.any():
        ex = np.exp(xs[linear] - top_x[linear, None])
        ey = np.exp(ys[linear] - top_y[linear, None])
        acc = np.stack([np.convolve(a, b) for a, b in zip(ex, ey, strict=True)])
        with np.errstate(divide="ignore"):
            out[linear] = np.log(acc) + (top_x[linear] + top_y[linear])[:, None]
    for j in np.flatnonzero(live & ~linear):
        out[j] = log_convolve(xs[j], ys[j])
    return out

