"""The linear program behind :class:`~pufferfish_pgm.mechanisms.OptimalNoiseMechanism` (internal).

Variables: the masses ``v = (t_L, f(lo+1), ..., f(hi-1), t_R)`` of an integer noise law whose
tails ``f(hi + j) = t_R (1 - r) r^j`` and ``f(lo - j) = t_L (1 - r) r^j`` have a fixed ratio
``r = e^{-1/λ}`` (``docs/optimal-noise.md``). Every output density ``p(w)`` is linear in
``v`` (:meth:`~pufferfish_pgm.privacy_loss._pmf_audit.PmfGroup.term_logs`), so each constraint
``p_a(w) <= e^ε p_b(w)`` is one row. The outputs beyond the core's reach need no rows: the
ratio there is constant and equal to the one at the last row (the auditor's theorem).

Rows are generated: solve with the rows found so far (one warm-started solver,
:mod:`._optimal_highs`), evaluate the pairs at the solution with the exact auditor, add at
every output and in each direction the row of the pair violated the most there (the most
violated first, at most ``batch`` rows a round: 400 or four per column, whichever is more),
and repeat until none is violated by more than ``tol``. Rounds evaluate the active pairs
(those cut so far and the ``ACTIVE`` most violated of each group) until they hold, then every
pair; pairs whose noiseless loss is at most the target never violate and are skipped
(:mod:`._optimal_groups`, ``docs/optimal-noise.md``).

Numerics: each row is scaled to a largest coefficient of 1 and each column by the discrete
Laplace law's mass on the same core (the masses span hundreds of orders of magnitude; scaling
does not change a constraint). A row's terms can still span more than the solver resolves (it
drops coefficients below 1e-9 of the largest), so every mass is kept at least ``FLOOR`` times
that Laplace mass: a term the solver neglects is then at most ~1e-9/``FLOOR`` of the density
it is compared with, and the exact audit with tightening absorbs the rest (the cost is at most
``FLOOR`` times the Laplace loss).

The plain-DP floor ``f(z) <= e^{ε'} f(z ± d)`` adds, for every move ``d`` one record can
cause (:func:`dp_shifts`; :func:`dp_loss` checks the sampled law), two sparse rows per ``z``
in ``[lo - d, hi]``; beyond, both points are in one tail, where the ratio is ``e^{d/λ}``
(``λ >= max d / ε'`` is the caller's job). On the scaled columns a row reads
``x_p <= c x_q``; it is written ``x_p / c - x_q <= 0`` (largest coefficient 1), dropped when
the bounds ``x_p <= 1/unit_p``, ``x_q >= FLOOR`` already imply it (so a floor that cannot
bind never reaches the solver, however large ``e^{ε'}``), and ``1/c`` is raised to
``1/MAX_RATIO`` when smaller (a stronger row, still sound, that the solver resolves; it
changes nothing for ε' <= 8, see ``docs/optimal-noise.md``).

Examples
--------
>>> from pufferfish_pgm.privacy_loss._pair_rows import Group
>>> g = Group.from_distributions([({0: 1.0}, {1: 1.0})])          # a shift by one: plain DP
>>> lp = NoiseLP.build([g], lo=-3, hi=3, tail_scale=1.0, objective=("abs",))
>>> v, rounds = lp.solve(1.0 - 1e-9, tol=1e-9)
>>> round(float(objective_value(lp.objective, v)), 4)   # the geometric law: 2r/(1 - r²), r = 1/e
0.8509
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InvalidParameterError, SolverError
from ..noise import IntegerNoise
from ..privacy_loss._engine import Group, PmfGroup, TailedLaw
from ..queries import Query
from ..secrets import Framework
from ._optimal_groups import build_lean, noiseless_losses, pair_blocks
from ._optimal_highs import WarmLP

__all__ = ["NoiseLP", "SolverError", "dp_loss", "dp_rows", "dp_shift", "dp_shifts",
           "laplace_unit", "loss_vector", "objective_value"]

#: Rows added per round of constraint generation (at least; see NoiseLP.build).
BATCH = 400
#: Pairs per group evaluated in the rounds between full evaluations (besides those cut).
ACTIVE = 256
#: Rounds of constraint generation before giving up.
MAX_ROUNDS = 200
#: Every mass is at least this fraction of the discrete Laplace law's mass there (see below).
FLOOR = 1e-6
#: A DP-floor row ``x_p <= c x_q`` on the scaled columns with ``c`` above this is tightened to
#: ``c = MAX_RATIO`` (HiGHS drops coefficients below 1e-9 and refuses those above 1e15).
MAX_RATIO = 1e7


def loss_vector(loss: tuple, lo: int, hi: int, tail_scale: float) -> np.ndarray:
    """The objective's coefficients on ``v``: E|Z|, E Z² or P(|Z| > t) are linear in ``v``.

    Examples
    --------
    >>> loss_vector(("abs",), -2, 2, 1.0).round(4).tolist()
    [2.582, 1.0, 0.0, 1.0, 2.582]
    """
    z = np.arange(lo + 1, hi).astype(float)
    r = math.exp(-1.0 / tail_scale)
    ej, ej2 = r / (1 - r), r * (1 + r) / (1 - r) ** 2
    if loss[0] == "abs":
        return np.concatenate(([-lo + ej], np.abs(z), [hi + ej]))
    if loss[0] == "square":
        return np.concatenate(([lo * lo - 2 * lo * ej + ej2], z * z, [hi * hi + 2 * hi * ej + ej2]))
    t = loss[1]
    return np.concatenate(([r ** max(t + 1 + lo, 0)], (np.abs(z) > t).astype(float),
                           [r ** max(t + 1 - hi, 0)]))


def objective_value(objective: np.ndarray, v: np.ndarray) -> float:
    """The loss of the masses ``v`` (normalised)."""
    return float(objective @ v / v.sum())


def laplace_unit(lo: int, hi: int, tail_scale: float) -> np.ndarray:
    """The column scales: the masses ``v`` of the discrete Laplace law with the tails' scale
    on the core ``lo .. hi`` (tails summed into the edges; every entry positive).

    Examples
    --------
    >>> laplace_unit(-1, 1, 1.0).round(4).tolist()   # r/(1+r), (1-r)/(1+r), r/(1+r)
    [0.2689, 0.4621, 0.2689]
    """
    z = np.arange(lo + 1, hi)
    r = math.exp(-1.0 / tail_scale)
    edge = np.array([r ** -lo, r ** hi]) / (1 + r)
    inner = (1 - r) / (1 + r) * np.exp(-np.abs(z) / tail_scale)
    return np.concatenate(([edge[0]], inner, [edge[1]]))[:hi - lo + 1]


def dp_shift(framework: Framework, query: Query, floor: bool = True) -> int:
    """L, the query's Lipschitz constant (at least 1): the largest of :func:`dp_shifts`
    for a weighted query; with ``floor`` a non-integer L is refused.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.queries import Count, LinearQuery
    >>> fw = Framework(MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 3))
    >>> dp_shift(fw, Count(1)), dp_shift(fw, LinearQuery({0: 2, 1: -1}))
    (1, 3)
    """
    lipschitz = float(query.lipschitz_for(framework.scenarios))
    if floor and lipschitz != round(lipschitz):
        raise InvalidParameterError(f"dp_epsilon needs an integer Lipschitz constant, the "
                                    f"query {query.name} has {lipschitz!r}")
    return max(int(round(lipschitz)), 1)


def dp_shifts(framework: Framework, query: Query) -> tuple[int, ...]:
    """Every ``|F(x') - F(x)| > 0`` one record's change can cause, which the DP floor
    constrains (``docs/optimal-noise.md``, "The DP floor"): the positive differences of
    the weights of one node's states, over every node; ``1 .. L`` for a query without
    weights. A non-integer difference is refused.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.queries import Count, LinearQuery
    >>> fw = Framework(MarkovChainScenario([[0.2, 0.3, 0.5]] * 3, "stationary", 3))
    >>> dp_shifts(fw, Count(1)), dp_shifts(fw, LinearQuery({0: 0, 1: 1, 2: 3}))
    ((1,), (1, 2, 3))
    """
    if not hasattr(query, "weights_of"):
        return tuple(range(1, dp_shift(framework, query) + 1))
    scenarios = framework.scenarios
    rows = {tuple(query.weights_of(scenarios, v)) for v in query.node_list(scenarios)}
    gaps = {abs(a - b) for row in rows for a in row for b in row if a != b}
    odd = next((g for g in sorted(gaps) if g != round(g)), None)
    if odd is not None:
        raise InvalidParameterError(f"dp_epsilon needs integer moves of the query, but one "
                                    f"record moves {query.name} by {odd!r}; use integer "
                                    "weights")
    return tuple(sorted({int(round(g)) for g in gaps}))


def dp_loss(noise: IntegerNoise, shifts: tuple[int, ...]) -> float:
    """The plain-DP loss of ``F + noise`` when one record moves F by any of ``shifts``:
    ``max_d max_z |log f(z)/f(z + d)|`` (0 for no shift).

    Examples
    --------
    >>> noise = IntegerNoise(lo=-1, weights=(1, 2, 1), tail_scale=1.0)
    >>> round(dp_loss(noise, (1, 2)), 6), dp_loss(noise, ())   # log(f(0)/f(2)), d = 2
    (2.151822, 0.0)
    """
    return max((noise.shift_loss(d) for d in shifts), default=0.0)


def _floor_terms(lo: int, hi: int, tail_scale: float, shifts: tuple[int, ...],
                 dp_epsilon: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Columns ``p``, ``q`` and ``log c`` of the rows ``x_p <= c x_q`` (scaled columns) that
    say ``f(z) <= e^{ε'} f(y)``, ``|z - y| = d``: ``log c = ε' - (|y| - |z|)/λ``, the
    Laplace masses being ``∝ e^{-|z|/λ}`` inside the core and along its tails."""
    m, parts = hi - lo, []
    for d in shifts:
        z = np.arange(lo - d, hi + 1)
        parts += [(z, z + d), (z + d, z)]
    here = np.concatenate([a for a, _ in parts])
    there = np.concatenate([b for _, b in parts])
    log_c = dp_epsilon - (np.abs(there) - np.abs(here)) / tail_scale
    return np.clip(here - lo, 0, m), np.clip(there - lo, 0, m), log_c


def dp_rows(lo: int, hi: int, tail_scale: float, shifts: tuple[int, ...],
            dp_epsilon: float) -> Any:
    """The DP floor's rows on the scaled columns (module docstring): ``x_p / c - x_q <= 0``
    for ``f(z) <= e^{ε'} f(z ± d)``, ``d`` in ``shifts``, ``z`` in ``[lo - d, hi]``, less
    those the bounds imply and those within one tail; None when none is left.

    Examples
    --------
    >>> dp_rows(-3, 3, 1.0, (1,), 2.0).shape            # 2 x 8 rows, 4 within one tail
    (12, 7)
    >>> dp_rows(-3, 3, 1.0, (1,), 1e6) is None          # e^{1e6}: no row can bind
    True
    """
    from scipy import sparse  # type: ignore[import-untyped]

    if not shifts:
        return None
    p, q, log_c = _floor_terms(lo, hi, tail_scale, tuple(shifts), dp_epsilon)
    # x_p <= 1/unit_p and x_q >= FLOOR imply the row when c FLOOR >= 1/unit_p (x2 to spare)
    implied = log_c + math.log(FLOOR / 2) >= -np.log(laplace_unit(lo, hi, tail_scale))[p]
    keep = (p != q) & ~implied
    if not keep.any():
        return None
    n = int(keep.sum())
    inverse = np.exp(-np.minimum(log_c[keep], math.log(MAX_RATIO)))
    rows = np.repeat(np.arange(n), 2)
    cols = np.column_stack([p[keep], q[keep]]).ravel()
    vals = np.column_stack([inverse, -np.ones(n)]).ravel()
    return sparse.csr_matrix((vals, (rows, cols)), shape=(n, hi - lo + 1))


def _running_max(top: tuple, excess: np.ndarray, block: np.ndarray) -> tuple:
    """Per output, the largest ``excess`` so far and its pair: ``top`` updated by one block
    (``excess`` one row per pair of ``block``)."""
    best, pair = top
    pair = np.zeros(best.size, dtype=np.int64) if pair.size == 0 else pair
    if block.size == 0:
        return best, pair
    row = np.argmax(excess, axis=0)
    value = excess[row, np.arange(best.size)]
    better = value > best
    return np.where(better, value, best), np.where(better, block[row], pair)


@dataclass(eq=False)
class NoiseLP:
    """The LP of the module docstring with its generated rows (mutable: rows accumulate)."""

    groups: list[PmfGroup]
    lo: int
    hi: int
    objective: np.ndarray
    extra: Any = None                 # fixed rows on the scaled columns (the DP floor) or None
    batch: int = BATCH
    rounds: int = 0                   # LP solves so far (set by the caller)
    cuts: set = field(default_factory=set)
    active: list = field(default_factory=list)   # per group: pairs evaluated every round
    noiseless: list = field(default_factory=list)  # per group: each pair's noiseless loss
    logs: list = field(default_factory=list)     # blocks (log terms of a, of b), a row per cut
    backend: str = "auto"                        # see _optimal_highs.highs_module
    solver: Any = None                           # ((epsilon, extra id), WarmLP, blocks sent)

    @classmethod
    def build(cls, groups: list[Group], *, lo: int, hi: int, tail_scale: float,
              objective: tuple, extra: Any = None, batch: int = BATCH) -> NoiseLP:
        """The LP for ``groups`` (pairs of one coordinate) and a core ``lo .. hi``."""
        pmf = [build_lean(g, tail_scale) for g in groups]
        return cls(pmf, lo, hi, loss_vector(objective, lo, hi, tail_scale), extra,
                   max(batch, 4 * (hi - lo + 1)),
                   noiseless=[noiseless_losses(g) for g in groups])

    @property
    def tail_scale(self) -> float:
        return self.groups[0].tail_scale

    def law(self, v: np.ndarray) -> TailedLaw:
        """The masses ``v`` as a law (for the auditor)."""
        return TailedLaw.from_masses(self.lo, v, self.tail_scale)

    @property
    def unit(self) -> np.ndarray:
        """The column scales: the masses of the discrete Laplace law with the tails' scale on
        the same core (every entry positive), so that a row's scaled coefficients are the
        parts of that law's output density and no term is negligible for the solver only
        because the masses differ by orders of magnitude."""
        return laplace_unit(self.lo, self.hi, self.tail_scale)

    def _scaled_rows(self, epsilon: float, start: int) -> np.ndarray:
        """The generated rows from ``start`` on, at ``epsilon``, on the scaled columns, each
        scaled to a largest coefficient of 1."""
        log_unit = np.log(self.unit)[None, :]
        la = np.vstack([a for a, _ in self.logs[start:]]) + log_unit
        lb = np.vstack([b for _, b in self.logs[start:]]) + log_unit
        top = np.maximum(la.max(axis=1), lb.max(axis=1))[:, None]
        return np.exp(la - top) - math.exp(epsilon) * np.exp(lb - top)

    def _solve_once(self, epsilon: float) -> np.ndarray:
        """Optimal masses for the rows so far at ``epsilon``: the same solver instance (and
        its basis) while ``epsilon`` and the fixed rows stay, a new one otherwise."""
        key = (epsilon, id(self.extra))
        if self.solver is None or self.solver[0] != key:
            unit = self.unit
            self.solver = (key, WarmLP(self.objective * unit, unit, FLOOR, self.backend), 0)
            self.solver[1].add(self.extra)
        key, lp, sent = self.solver
        total = len(self.logs)
        if total > sent:
            lp.add(self._scaled_rows(epsilon, sent))
        self.solver = (key, lp, total)
        return np.clip(lp.solve(), 0.0, None) * self.unit

    def _group_cuts(self, gi: int, law: TailedLaw, epsilon: float, tol: float,
                    full: bool) -> np.ndarray:
        """Rows ``(excess, group, pair, direction, output index)``: at every output and in
        each direction the pair of group ``gi`` (of all that need rows, or of the active
        ones) violated the most, if by more than ``tol``. A full evaluation also renews the
        active pairs."""
        g = self.groups[gi]
        live = self.noiseless[gi] > epsilon            # the others never violate (proof)
        pick = np.flatnonzero(live if full else live & self.active[gi])
        worst = np.full(live.size, -np.inf)
        top = {s: (np.full(g.width + self.hi - self.lo, -np.inf), np.zeros(0)) for s in (1, -1)}
        for block, gap in pair_blocks(g, law, pick):
            worst[block] = np.abs(gap).max(axis=1) - epsilon
            for sign in (1, -1):
                top[sign] = _running_max(top[sign], sign * gap - epsilon, block)
        if full:
            self.active[gi] = self._renewed(gi, worst)
        parts = []
        for sign, (best, pair) in top.items():
            j = np.flatnonzero(best > tol)
            parts.append(np.column_stack([best[j], np.full(j.size, gi), pair[j],
                                          np.full(j.size, sign), j]))
        return np.vstack(parts)

    def _renewed(self, gi: int, worst: np.ndarray) -> np.ndarray:
        """The active pairs of group ``gi`` after a full evaluation: those cut so far and the
        ``ACTIVE`` of largest violation (``worst``: each pair's, all pairs)."""
        active = np.zeros(worst.size, dtype=bool)
        active[np.argsort(-worst, kind="stable")[:ACTIVE]] = True
        active[[p for g, p, _, _ in self.cuts if g == gi]] = True
        return active

    def _violations(self, v: np.ndarray, epsilon: float, tol: float,
                    full: bool = True) -> list[tuple]:
        """New cuts ``(group, pair, direction, output index)`` at ``v`` (see
        :meth:`_group_cuts`), the most violated first, at most ``batch``."""
        law = self.law(v)
        if not self.active:
            self.active = [np.zeros(len(g.group.pairs), dtype=bool) for g in self.groups]
            full = True
        table = np.vstack([self._group_cuts(gi, law, epsilon, tol, full)
                           for gi in range(len(self.groups))])
        table = table[np.argsort(-table[:, 0], kind="stable")]
        keys = (tuple(int(x) for x in row[1:]) for row in table)
        fresh = (k for k in keys if k not in self.cuts)
        return [k for k, _ in zip(fresh, range(self.batch), strict=False)]

    def _add(self, cuts: list[tuple]) -> None:
        """Append the rows of ``cuts`` (their log terms, computed once per group)."""
        m, new_a, new_b = self.hi - self.lo, [], []
        table = np.array(cuts, dtype=np.int64).reshape(-1, 4)
        for gi in np.unique(table[:, 0]):
            g, (p, sign, j) = self.groups[gi], table[table[:, 0] == gi, 1:].T
            a = np.where(sign > 0, g.group.first[p], g.group.second[p])
            b = np.where(sign > 0, g.group.second[p], g.group.first[p])
            new_a.append(g.term_logs(a, j, m))
            new_b.append(g.term_logs(b, j, m))
        self.cuts.update(cuts)
        self.logs.append((np.vstack(new_a), np.vstack(new_b)))

    def solve(self, epsilon: float, tol: float, max_rounds: int = MAX_ROUNDS,
              tick: Callable[[], None] | None = None) -> tuple[np.ndarray, int]:
        """Masses optimal for the rows generated until no (pair, θ, output) is violated by
        more than ``tol`` nats at ``epsilon``; returns them and the rounds used. Rounds after
        the first look at the active pairs only; when those hold, every pair is evaluated
        (so the answer is the same), and the active pairs are renewed. ``tick`` is called
        after each round (progress)."""
        for rounds in range(1, max_rounds + 1):
            v = self._solve_once(epsilon)
            cuts = self._violations(v, epsilon, tol, full=False)
            if not cuts:
                cuts = self._violations(v, epsilon, tol, full=True)
            if tick is not None:
                tick()
            if not cuts:
                return v, rounds
            self._add(cuts)
        raise SolverError(f"constraint generation did not settle in {max_rounds} rounds")
