"""How far apart the privacy losses of two nodes of a chain are: what is proven (internal).

Three bounds hold on any fixed-start chain with integer weights (proofs in
``docs/middle-nodes.md``). The first two need both nodes' laws or cover only the extreme
outputs; the third (:class:`MiddleClass`) bounds every node far from the ends at once and is
what the streamed calibrator uses (:func:`middle_plan`) to skip the middle nodes' laws:

* **Transfer** (:func:`transfer_gap`): for nodes ``i``, ``j`` and a pair of states ``(a, b)``,
  ``|ε_i(λ) - ε_j(λ)| <= g_λ(a) + g_λ(b)``, where ``g_λ(s)`` is the realised ε of the release
  between the laws of ``F`` given ``X_i = s`` and given ``X_j = s`` (the same state at two
  nodes). Exact, every λ; it needs both nodes' laws.
* **Limit losses** (:func:`limit_loss_drift`): the loss beyond the extreme outputs (the
  generating-function limit of :mod:`pufferfish_pgm.privacy_loss._mgf_bracket`) of two
  nodes with at least ``left`` nodes before and ``right`` after differs by at most a
  Birkhoff-contracted Hilbert diameter, ``τ^{⌊n/m⌋-1} Δ`` per side, with ``Δ`` and ``τ`` of
  the ``m``-step block of the tilted transition ``P diag(e^{γw})``. A block with a zero
  entry has ``Δ = ∞``, ``τ = 1``: the bound is ``inf`` (it refuses itself).
* **Middle class** (:class:`MiddleClass`): for every node with ``d`` nodes on each side,
  ``ε_i(λ) <= B(λ)``, the two-sided quilt ``{X_{i-d}, X_{i+d}}`` bound of
  ``docs/exact-quilt.md`` with its prior term bounded over the middle nodes; ``inf`` on a
  blocker (a zero transition that makes a quilt value possible under one secret only).

Examples
--------
>>> p = np.array([[0.9, 0.1], [0.2, 0.8]])
>>> round(birkhoff_coefficient(p), 6)    # tanh(log 36 / 4) = (6 - 1)/(6 + 1)
0.714286
>>> birkhoff_coefficient(np.array([[1.0, 0.0], [0.5, 0.5]]))   # a zero transition
1.0
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ..distributions._engine import logsumexp
from ..queries._engine import ChainSteps, convolve, forward_bytes, step
from ._laplace_kernel import pair_epsilon
from ._pair_rows import Group

__all__ = ["MiddleClass", "MiddlePlan", "birkhoff_coefficient", "bridge_laws", "held_bytes",
           "hilbert_diameter", "hilbert_distance", "limit_loss_drift", "middle_note",
           "middle_plan", "tilted_block", "transfer_gap"]


def hilbert_distance(log_x: np.ndarray, log_y: np.ndarray) -> float:
    """Hilbert's projective distance ``max log(x/y) - min log(x/y)`` of two nonnegative
    vectors given as logarithms; entries zero in both are ignored, an entry zero in one only
    gives ``inf``. It bounds ``|log x_a/x_b - log y_a/y_b|`` for every ``a, b``.

    Examples
    --------
    >>> hilbert_distance(np.log([1.0, 2.0]), np.log([2.0, 2.0]))   # log 2 - log 1
    0.6931471805599453
    """
    x, y = np.asarray(log_x, dtype=float), np.asarray(log_y, dtype=float)
    both = np.isfinite(x) & np.isfinite(y)
    if (np.isfinite(x) != np.isfinite(y)).any():
        return float("inf")
    if not both.any():
        return 0.0
    d = x[both] - y[both]
    return float(d.max() - d.min())


def hilbert_diameter(matrix: np.ndarray) -> float:
    """Birkhoff's ``Δ(M) = max log(M_ij M_kl / (M_il M_kj))``, the largest projective
    distance between two rows (equally two columns); ``inf`` when an entry is zero.
    Unchanged by positive diagonal scaling of rows and columns (each factor cancels).

    Examples
    --------
    >>> round(hilbert_diameter(np.array([[0.9, 0.1], [0.2, 0.8]])), 6)   # log 36
    3.583519
    """
    m = np.asarray(matrix, dtype=float)
    if (m <= 0).any():
        return float("inf")
    log_m = np.log(m)
    diff = log_m[:, None, :] - log_m[None, :, :]          # (row i, row k, column)
    return float((diff.max(axis=2) - diff.min(axis=2)).max())


def birkhoff_coefficient(matrix: np.ndarray) -> float:
    """``τ(M) = tanh(Δ(M)/4)``: ``d_H(xM, yM) <= τ d_H(x, y)`` for positive x, y (and the
    same for columns); 1 when an entry is zero (no contraction proven)."""
    delta = hilbert_diameter(matrix)
    return 1.0 if not np.isfinite(delta) else float(np.tanh(delta / 4.0))


def tilted_block(transition: np.ndarray, weights: np.ndarray, gamma: float,
                 block: int) -> np.ndarray:
    """``(P diag(e^{γ w}))^block``, rescaled by its largest entry at every step (Δ and τ
    do not see the scale); entries that underflow are zero, so the block then refuses.

    Examples
    --------
    >>> tilted_block(np.eye(2), np.array([0, 1]), 0.0, 3).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    a = np.asarray(transition, dtype=float) * np.exp(gamma * np.asarray(weights, float))
    out = np.eye(len(a))
    for _ in range(block):
        out = out @ a
        out /= out.max()
    return out


def _contracted(tau: float, delta: float, distance: int, block: int) -> float:
    """``τ^{⌊n/m⌋ - 1} Δ`` (inf below one block or when Δ is infinite)."""
    if distance < block or not np.isfinite(delta):
        return float("inf")
    return float(tau ** (distance // block - 1) * delta)


def limit_loss_drift(transition: np.ndarray, weights: np.ndarray, scale: float, block: int,
                     left: int, right: int, stationary: bool) -> float:
    """Upper bound on ``|ℓ_i - ℓ_j|`` for the limit losses ``ℓ(γ) = log M_a(γ) - log M_b(γ)``
    (``γ = ±1/scale``, either pair order) of any two nodes each with at least ``left`` nodes
    before and ``right`` after, on a homogeneous chain with per-state ``weights``; the start
    term is 0 for a stationary start. ``inf``: not proven (a block with a zero entry, or a
    side shorter than a block)."""
    p = np.asarray(transition, dtype=float)
    start = 0.0
    if not stationary:
        plain = tilted_block(p, np.zeros(len(p)), 0.0, block)
        start = _contracted(birkhoff_coefficient(plain), hilbert_diameter(plain), left, block)
    worst = 0.0
    for gamma in (1.0 / scale, -1.0 / scale):
        b = tilted_block(p, weights, gamma, block)
        tau, delta = birkhoff_coefficient(b), hilbert_diameter(b)
        worst = max(worst, _contracted(tau, delta, left, block)
                    + _contracted(tau, delta, right, block))
    return worst + start


def transfer_gap(law_i: np.ndarray, law_j: np.ndarray, scale: float) -> float:
    """Realised ε at ``scale`` between two normalised log-mass vectors of ``F`` on the grid
    ``0, 1, ...`` (given the same state at two nodes): ``g_λ(s)`` of the transfer bound.

    Examples
    --------
    >>> round(transfer_gap(np.log([0.5, 0.5]), np.log([0.5, 0.5]), 1.0), 12)
    0.0
    """
    n = max(len(law_i), len(law_j))
    pad = [np.concatenate([x, np.full(n - len(x), -np.inf)]) for x in (law_i, law_j)]
    return pair_epsilon(np.arange(n, dtype=float), pad[0], pad[1], scale)[0]


def bridge_laws(transition: np.ndarray, weights: np.ndarray, distance: int) -> np.ndarray:
    """``G[u, v, c] = log P(Σ_{t=1}^{d-1} w(X_t) = c, X_d = v | X_0 = u)`` for ``d =
    distance >= 1`` (the weights of the nodes strictly between), shape (k, k, C).

    Examples
    --------
    >>> g = bridge_laws(np.full((2, 2), 0.5), np.array([0, 1]), 2)
    >>> np.exp(g[0, 1]).round(6).tolist()       # X_1 is state 0 or 1, then X_2 = 1
    [0.25, 0.25]
    """
    p = np.asarray(transition, dtype=float)
    w = np.asarray(weights, dtype=np.int64)
    steps = ChainSteps(p)
    with np.errstate(divide="ignore"):
        table = np.log(np.eye(len(p)))[:, :, None]
    for t in range(1, distance + 1):
        table = step(table, p, steps.log_min)
        if t < distance:
            table = _shift(table, w)
    return table


def _shift(table: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Each state's rows (axis 1) moved right along the count axis by its weight."""
    out = np.full(table.shape[:2] + (table.shape[2] + int(w.max()),), -np.inf)
    for d in np.unique(w).tolist():
        out[:, w == d, d:d + table.shape[2]] = table[:, w == d]
    return out


@dataclass(frozen=True, eq=False)
class MiddleClass:
    """One proven bound for every node ``i`` with ``d <= i <= T - 1 - d`` of a fixed-start
    homogeneous chain: the two-sided quilt ``{X_{i-d}, X_{i+d}}`` of ``docs/exact-quilt.md``
    (Steps 1-3), whose nearby law given ``(u, s, v)`` does not depend on ``i`` and whose prior
    term is bounded over the middle nodes (``docs/middle-nodes.md``, Lemma 3).

    ``bound(λ) >= ε_i(λ)`` for each such node and every pair; ``inf`` when some quilt value
    is possible under one secret of a pair only (a blocker) or a secret is impossible at a
    middle node: then nothing is proven and every node needs its own law.
    """

    group: Group | None
    prior: np.ndarray
    blocked: bool

    @classmethod
    def build(cls, transition: np.ndarray, initial: np.ndarray, weights: np.ndarray,
              pairs: np.ndarray, distance: int, length: int,
              log_q: np.ndarray | None = None) -> MiddleClass:
        """``log_q``: the table of :func:`start_table` if already computed."""
        p = np.asarray(transition, dtype=float)
        g = bridge_laws(p, weights, distance)
        log_q = start_table(p, initial, length) if log_q is None else log_q
        found = _prior(logsumexp(g, axis=2), log_q, pairs, distance)
        if found is None:
            return cls(None, np.empty(0), True)
        first, second, prior = found
        rows, k = _nearby_rows(g, np.asarray(weights, dtype=np.int64)), len(p)
        grid = np.arange(rows.shape[-1], dtype=float)
        group = Group(0, "middle", (grid,), rows.reshape(k ** 3, -1), first, second,
                      tuple(range(len(first))))
        return cls(group, prior, False)

    def bound(self, scale: float) -> float:
        """``max(|prior| + ℓ_λ)`` over the pairs and quilt values (0 with no pair)."""
        if self.blocked:
            return float("inf")
        if self.group is None or not len(self.prior):
            return 0.0
        return float((self.prior + self.group.epsilons(np.array([scale]))[0]).max())


def _nearby_rows(g: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Normalised log laws of the nearby count given ``(u, s, v)``, (k, k, k, C):
    ``G[u, s] ⊛ G[s, v]`` moved right by ``w(s)``."""
    k = len(w)
    width = 2 * g.shape[2] - 1 + int(w.max())
    out = np.full((k, k, k, width), -np.inf)
    for u, s, v in itertools.product(range(k), repeat=3):
        law = convolve(g[u, s], g[s, v])
        out[u, s, v, w[s]:w[s] + law.size] = law
    total = logsumexp(out, axis=3)
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(total)[..., None], out - total[..., None], -np.inf)


def start_table(p: np.ndarray, initial: np.ndarray, length: int) -> np.ndarray:
    """``log P(X_t = s)`` for every node, (T, k)."""
    out = np.empty((length, len(p)))
    q = np.asarray(initial, dtype=float)
    with np.errstate(divide="ignore"):
        for t in range(length):
            out[t] = np.log(q)
            q = q @ p
    return out


def _prior(log_pd: np.ndarray, log_q: np.ndarray, pairs: np.ndarray,
           distance: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Row indices ``(u, s, v)`` of both secrets per pair and quilt value, and the bound on
    ``|log P(u, v | s) / P(u, v | s')|`` over the middle nodes; None on a blocker or a state
    impossible at some middle node."""
    mid = log_q[distance:len(log_q) - distance]
    if not np.isfinite(mid).all():
        return None
    if not len(mid):                                      # no middle node: nothing to bound
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0)
    lo, hi, k = mid.min(axis=0), mid.max(axis=0), len(log_pd)
    first, second, prior = [], [], []
    for s, s2 in np.asarray(pairs, dtype=np.int64).reshape(-1, 2).tolist():
        one = log_pd[:, s][:, None] + log_pd[s][None, :]           # (u, v) under s
        two = log_pd[:, s2][:, None] + log_pd[s2][None, :]
        if (np.isfinite(one) != np.isfinite(two)).any():
            return None
        u, v = np.nonzero(np.isfinite(one))
        first += (u * k * k + s * k + v).tolist()
        second += (u * k * k + s2 * k + v).tolist()
        a = one[u, v] - two[u, v]          # + log q_i(s') - log q_i(s), in [lo2 - hi, hi2 - lo]
        prior += np.maximum(np.abs(a + lo[s2] - hi[s]), np.abs(a + hi[s2] - lo[s])).tolist()
    return np.array(first, dtype=np.int64), np.array(second, dtype=np.int64), np.array(prior)


#: Quilt distances tried for the middle class, and the largest prior term accepted (relative
#: to ε): the bound then exceeds the exact middle loss by about twice that (measured), far
#: below the bisection's rtol; the calibrator still checks the result against a lower end.
DISTANCES = (16, 32, 64, 96, 128, 192, 256, 320, 384, 448, 512, 640, 768, 1024, 1536, 2048)
PRIOR_LEVEL = 1e-11


@dataclass(frozen=True, eq=False)
class MiddlePlan:
    """The middle nodes ``[distance, T - 1 - distance]`` of one chain, bounded together."""

    distance: int
    cls: MiddleClass

    def nodes(self, length: int) -> range:
        return range(self.distance, length - self.distance)

    def least_scale(self, lower: float, limit: float, rtol: float, slack: float) -> float:
        """The smallest scale (to ``rtol``, from above) with ``bound <= limit (1 + slack)``;
        ``lower`` if that passes already. The bound never increases with the scale."""
        def ok(x: float) -> bool:
            return self.cls.bound(x) <= limit * (1.0 + slack)
        if ok(lower):
            return lower
        lo, hi = lower, 2.0 * lower
        while not ok(hi):
            lo, hi = hi, 2.0 * hi
            if hi > 1e300:
                return float("inf")
        while hi - lo > rtol * hi:
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if ok(mid) else (mid, hi)
        return hi


def middle_plan(transition: np.ndarray, initial: np.ndarray, weights: np.ndarray,
                nodes: dict | np.ndarray, epsilon: float) -> MiddlePlan | None:
    """A middle class for a homogeneous chain whose nodes share their weights, or None
    (per-step matrices or weights, a blocker, no distance with a prior term below
    ``PRIOR_LEVEL · ε`` that leaves a third of the nodes in the middle). ``nodes``
    maps a node to its pairs ``(pair, a, b)``, or is an array of rows ``(node, a, b)``."""
    p, w = np.asarray(transition, dtype=float), np.asarray(weights, dtype=np.int64)
    length = len(w)
    if p.ndim != 2 or (w != w[0]).any():
        return None
    log_q, sets = start_table(p, initial, length), _pair_sets(nodes)
    for d in DISTANCES:
        if 3 * d > length:
            return None
        pairs = _middle_pairs(sets, d, length)
        with np.errstate(divide="ignore"):
            log_pd = np.log(np.linalg.matrix_power(p, d))
        found = _prior(log_pd, log_q, pairs, d)
        if found is None:
            return None
        if not found[2].size or found[2].max() <= PRIOR_LEVEL * epsilon:
            return MiddlePlan(d, MiddleClass.build(p, initial, w[0], pairs, d, length, log_q))
    return None


def _pair_sets(nodes: dict | np.ndarray) -> list[tuple[tuple, np.ndarray]]:
    """Each distinct set of state pairs (a < b) and the nodes that have it; ``nodes`` maps
    a node to its pairs ``(pair, a, b)``, or is an array of rows ``(node, a, b)``."""
    if isinstance(nodes, np.ndarray):
        return _code_sets(nodes)
    by_set: dict[tuple, list[int]] = {}
    for t, ps in nodes.items():
        by_set.setdefault(tuple(sorted({(min(a, b), max(a, b)) for _, a, b in ps})),
                          []).append(t)
    return [(k, np.array(v)) for k, v in by_set.items()]


def _code_sets(codes: np.ndarray) -> list[tuple[tuple, np.ndarray]]:
    """:func:`_pair_sets` of rows ``(node, a, b)``, grouped by arrays (a Python loop over
    the nodes, not over their pairs)."""
    lo, hi = np.minimum(codes[:, 1], codes[:, 2]), np.maximum(codes[:, 1], codes[:, 2])
    rows = np.unique(np.stack([codes[:, 0], lo, hi], axis=1).reshape(-1, 3), axis=0)
    nodes, starts = np.unique(rows[:, 0], return_index=True)
    by_set: dict[bytes, tuple[np.ndarray, list[int]]] = {}
    for t, part in zip(nodes.tolist(), np.split(rows[:, 1:], starts[1:]), strict=True):
        by_set.setdefault(part.tobytes(), (part, []))[1].append(t)
    return [(tuple(map(tuple, part.tolist())), np.array(at)) for part, at in by_set.values()]


def _middle_pairs(sets: list, distance: int, length: int) -> np.ndarray:
    """The distinct state pairs of the nodes in the middle range, (n, 2)."""
    used = {x for pairs, at in sets if ((at >= distance) & (at < length - distance)).any()
            for x in pairs}
    return np.array(sorted(used), dtype=np.int64).reshape(-1, 2)


def held_bytes(weights: np.ndarray, plan: MiddlePlan | None) -> int:
    """Bytes of the forward rows a stream holds: every node's uncut rows without a plan
    (:func:`~pufferfish_pgm.queries._truncated_count_law.forward_bytes`), else those of the
    nodes audited one by one (near the ends, and the representative)."""
    if plan is None:
        return forward_bytes(weights)
    w = np.asarray(weights, dtype=np.int64)
    widths = 1 + np.cumsum(w.max(axis=1))
    held = np.ones(len(w), dtype=bool)
    held[list(plan.nodes(len(w)))] = False
    return int(8 * w.shape[1] * int(widths[held].sum() + widths[len(w) // 2]))


def middle_note(skips: list) -> str:
    """The coverage note on middle nodes bounded together ("" when none)."""
    n = sum(len(k) for k in skips)
    if not n:
        return ""
    return (f"; {n:,} middle nodes of {sum(bool(k) for k in skips)} chain(s) bounded together "
            "by a two-sided quilt (docs/middle-nodes.md), not audited pair by pair")
