"""Per-pair conditional distributions of a query, shared by the distribution-based mechanisms.

The Wasserstein, Kantorovich and exact mechanisms all start from the exact distributions
``μ_a``, ``μ_b`` of the query under the two secrets of every (pair, scenario); this module lays
them out once (see :mod:`pufferfish_pgm._secret_batch`) and evaluates a distance on every pair.

A :class:`Histogram` over a two-state space is the vector ``(N - c, c)`` of one count ``c``:
its L1 distances are twice those of ``c``, so these mechanisms treat it as ``c`` with the
distance doubled. Histograms over three or more states need a transport plan between joint
count vectors; the Wasserstein and Kantorovich mechanisms refuse them and point to the exact
mechanism, which audits the joint vector.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> from pufferfish_pgm.secrets import Framework
>>> from pufferfish_pgm.queries import Count
>>> from pufferfish_pgm.distributions import w_infinity
>>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.1, 0.9]], "stationary", 3))
>>> layout = PairLayout.build(fw, Count(1))
>>> best = layout.max_over_pairs(w_infinity)
>>> best.value, str(best.pair)
(3.0, '(0=0, 0=1)')
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._secret_batch import MAX_GRID, Group, build_groups, refuse_any_start
from ..audit import coverage_note
from ..distributions import DiscreteDistribution
from ..errors import InvalidParameterError
from ..queries import Count, Histogram

__all__ = ["PairLayout", "PairValue", "exact_w_infinity", "group_w_infinity", "scalar_view"]

#: Quantile cells narrower than this (in log-odds of the level) are ties, not mass.
_LOGIT_TIE = 1e-9


def _logit_cdf(grid_rows: np.ndarray) -> np.ndarray:
    """``log F - log (1 - F)`` at every grid point of every row of log masses, accurate near
    both 0 and 1 (cumulative sums from the left and from the right, in log space)."""
    log_cdf = np.logaddexp.accumulate(grid_rows, axis=1)
    tail = np.flip(np.logaddexp.accumulate(np.flip(grid_rows, axis=1), axis=1), axis=1)
    log_sf = np.concatenate([tail[:, 1:], np.full((grid_rows.shape[0], 1), -np.inf)], axis=1)
    with np.errstate(invalid="ignore"):
        return log_cdf - log_sf


def _w_infinity_lattice(step: float, la: np.ndarray, lb: np.ndarray) -> np.ndarray:
    """W∞ on an evenly spaced grid: the smallest shift d (in steps) with
    ``F_a(x) <= F_b(x + d)`` and ``F_b(x) <= F_a(x + d)`` at every grid point ``x``."""
    n = la.shape[1]
    out = np.full(la.shape[0], float(n - 1))
    todo = np.arange(la.shape[0])
    for d in range(n):
        a, b = la[todo], lb[todo]
        ok = (np.all(a[:, :n - d] <= b[:, d:] + _LOGIT_TIE, axis=1)
              & np.all(b[:, :n - d] <= a[:, d:] + _LOGIT_TIE, axis=1))
        out[todo[ok]] = d
        todo = todo[~ok]
        if todo.size == 0:
            break
    return out * step


def group_w_infinity(group: Group) -> np.ndarray:
    """Exact W∞ of every pair of a scalar group (CDFs computed once per distinct row)."""
    logits = _logit_cdf(group.rows)
    return _w_infinity_logits(group.grids[0], logits[group.first], logits[group.second])


def exact_w_infinity(grid: np.ndarray, rows_a: np.ndarray, rows_b: np.ndarray) -> np.ndarray:
    """W∞ of every pair of rows of log masses on ``grid``, blind to no mass however small.

    The monotone coupling in 1-D: merge the CDF levels of both laws (as log-odds, accurate
    near 0 and 1); on each cell between consecutive levels the two quantiles are the grid
    points counted so far. Levels closer than 1e-9 in log-odds are ties (rounding), so a
    mass is ignored only if it is below 1e-9 of the smaller tail, never for being small.
    (:func:`pufferfish_pgm.distributions.w_infinity` ignores absolute masses below 1e-12,
    which can hide a support point that only one law has.)

    Examples
    --------
    >>> g = np.array([0.0, 1.0])
    >>> a = np.log([[1 - 1e-13, 1e-13]])
    >>> b = np.array([[0.0, -np.inf]])
    >>> exact_w_infinity(g, a, b).tolist()
    [1.0]
    """
    return _w_infinity_logits(grid, _logit_cdf(rows_a), _logit_cdf(rows_b))


def _w_infinity_logits(grid: np.ndarray, la: np.ndarray, lb: np.ndarray) -> np.ndarray:
    n = grid.size
    if n > 1 and np.all(np.diff(grid) == grid[1] - grid[0]):
        return _w_infinity_lattice(grid[1] - grid[0], la, lb)
    levels = np.concatenate([la, lb], axis=1)
    order = np.argsort(levels, axis=1, kind="stable")
    merged = np.take_along_axis(levels, order, axis=1)
    from_a = order < n
    count_a = np.cumsum(from_a, axis=1)
    count_b = np.cumsum(~from_a, axis=1)
    with np.errstate(invalid="ignore"):
        width = np.diff(merged, axis=1)
    valid = (width > _LOGIT_TIE) & (count_a[:, :-1] < n) & (count_b[:, :-1] < n)
    qa = grid[np.minimum(count_a[:, :-1], n - 1)]
    qb = grid[np.minimum(count_b[:, :-1], n - 1)]
    return np.where(valid, np.abs(qa - qb), 0.0).max(axis=1, initial=0.0)


@dataclass(frozen=True, kw_only=True)
class PairValue:
    """A per-pair quantity and the (pair, scenario) where its maximum is reached."""

    value: float
    pair: Any
    theta: int
    scenario: str
    mu_first: DiscreteDistribution | None = None
    mu_second: DiscreteDistribution | None = None


def scalar_view(framework: Any, query: Any, mechanism: str) -> tuple[Any, float]:
    """The scalar query a mechanism works on and the factor on its distances.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework
    >>> fw = Framework(MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 3))
    >>> q, factor = scalar_view(fw, Histogram(), "Wasserstein")
    >>> q.name, factor
    ('count(1)', 2.0)
    """
    if not isinstance(query, Histogram):
        return query, 1.0
    bars = query.bars(framework.scenarios)
    if len(bars) != 2:
        raise InvalidParameterError(
            f"the {mechanism} mechanism needs a transport plan between joint count vectors, "
            f"which is implemented for one count only; this histogram has {len(bars)} bars. "
            "Use ExactLaplaceMechanism (it audits the joint vector exactly) or release the "
            "bars as Count queries"
        )
    return Count(bars[1].state, query.nodes), 2.0


@dataclass(frozen=True, eq=False)
class PairLayout:
    """The groups of one scalar query plus cached DiscreteDistribution views of the rows."""

    groups: tuple
    skipped: tuple
    names: tuple
    coverage: str
    _views: dict

    @classmethod
    def build(cls, framework: Any, query: Any, max_grid: int = MAX_GRID,
              mechanism: str = "this mechanism") -> PairLayout:
        """Lay out every (pair, scenario) of ``framework`` for a Count or LinearQuery."""
        refuse_any_start(framework, mechanism)
        groups, skipped = build_groups(framework, [query], [[1]], [0], max_grid)
        return cls(tuple(groups), skipped, (query.name,), coverage_note(framework), {})

    def distribution(self, g: int, row: int) -> DiscreteDistribution:
        """Row ``row`` of group ``g`` as a DiscreteDistribution (float64 masses)."""
        key = (g, row)
        if key not in self._views:
            group: Group = self.groups[g]
            log_mass = group.rows[row]
            keep = np.isfinite(log_mass)
            self._views[key] = DiscreteDistribution.from_arrays(
                group.grids[0][keep], np.exp(log_mass[keep]))
        return self._views[key]

    def w_infinity(self) -> tuple[PairValue | None, list]:
        """The largest exact W∞ (see :func:`exact_w_infinity`) and every pair's value."""
        best, rows = None, []
        for g, group in enumerate(self.groups):
            w = group_w_infinity(group)
            rows += [(p, group.theta, group.scenario, float(x))
                     for p, x in zip(group.pairs, w, strict=True)]
            i = int(np.argmax(w))
            if best is None or w[i] > best.value:
                best = PairValue(value=float(w[i]), pair=group.pairs[i], theta=group.theta,
                                 scenario=group.scenario,
                                 mu_first=self.distribution(g, int(group.first[i])),
                                 mu_second=self.distribution(g, int(group.second[i])))
        return best, rows

    def pairs(self):
        """Yield ``(group index, pair index, μ_first, μ_second)`` for every pair."""
        for g, group in enumerate(self.groups):
            for i in range(len(group.pairs)):
                yield (g, i, self.distribution(g, int(group.first[i])),
                       self.distribution(g, int(group.second[i])))

    def max_over_pairs(self, fn: Callable[[Any, Any], float]) -> PairValue | None:
        """The largest ``fn(μ_a, μ_b)`` over all pairs (None when there are no pairs)."""
        best: PairValue | None = None
        for g, i, mu_a, mu_b in self.pairs():
            value = float(fn(mu_a, mu_b))
            if best is None or value > best.value:
                group = self.groups[g]
                best = PairValue(value=value, pair=group.pairs[i], theta=group.theta,
                                 scenario=group.scenario, mu_first=mu_a, mu_second=mu_b)
        return best
