"""Per-pair conditional distributions of a query, shared by the distribution-based mechanisms.

The Wasserstein, Kantorovich and exact mechanisms all start from the exact distributions
``μ_a``, ``μ_b`` of the query under the two secrets of every (pair, scenario); this module lays
them out once (see :mod:`._pair_rows`) and evaluates a distance on
every pair.

A :class:`Histogram` over a two-state space is the vector ``(N - c, c)`` of one count ``c``:
its L1 distances are twice those of ``c``, so these mechanisms treat it as ``c`` with the
distance doubled. Histograms over three or more states need a transport plan between joint
count vectors; the Wasserstein and Kantorovich mechanisms refuse them and point to the exact
mechanism, which audits the joint vector. Windowed counts and histograms (one count per
window) are refused for the same reason, naming the mechanisms that calibrate them.

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

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..distributions import DiscreteDistribution
from ..errors import InvalidParameterError
from ..queries import Count, Histogram, Query, WindowedQuery
from ..secrets import Framework, SecretPair
from ._audit import coverage_note
from ._bisection import group_w_infinity
from ._pair_rows import MAX_GRID, Group, build_groups, refuse_any_start

__all__ = ["PairLayout", "PairValue", "scalar_view"]


@dataclass(frozen=True, kw_only=True)
class PairValue:
    """A per-pair quantity and the (pair, scenario) where its maximum is reached."""

    value: float
    pair: SecretPair
    theta: int
    scenario: str
    mu_first: DiscreteDistribution | None = None
    mu_second: DiscreteDistribution | None = None


def scalar_view(framework: Framework, query: Query, mechanism: str) -> tuple[Query, float]:
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
    if isinstance(query, WindowedQuery):
        raise InvalidParameterError(
            f"the {mechanism} mechanism needs a transport plan between joint count vectors, "
            f"which is implemented for one count only; {query.name} releases one count per "
            "window. Use MarkovQuiltMechanism or GroupDPMechanism (one Laplace scale on every "
            "coordinate, proven for vectors), or ExactLaplaceMechanism on small models (it "
            "audits the joint vector exactly)"
        )
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

    groups: tuple[Group, ...]
    skipped: tuple
    names: tuple[str, ...]
    coverage: str
    _views: dict[tuple[int, int], DiscreteDistribution]

    @classmethod
    def build(cls, framework: Framework, query: Query, max_grid: int = MAX_GRID,
              mechanism: str = "this mechanism", executor: Any = None) -> PairLayout:
        """Lay out every (pair, scenario) of ``framework`` for a Count or LinearQuery
        (the scenarios on ``executor`` when one is given)."""
        refuse_any_start(framework, mechanism)
        groups, skipped = build_groups(framework, [query], [[1]], [0], max_grid, executor)
        return cls(tuple(groups), skipped, (query.name,), coverage_note(framework), {})

    def distribution(self, g: int, row: int) -> DiscreteDistribution:
        """Row ``row`` of group ``g`` as a DiscreteDistribution (float64 masses)."""
        key = (g, row)
        if key not in self._views:
            group = self.groups[g]
            log_mass = group.rows[row]
            keep = np.isfinite(log_mass)
            self._views[key] = DiscreteDistribution.from_arrays(
                group.grids[0][keep], np.exp(log_mass[keep]))
        return self._views[key]

    def w_infinity(self) -> tuple[PairValue | None, list[tuple]]:
        """The largest exact W∞ (see :func:`exact_w_infinity`) and every pair's value."""
        best: PairValue | None = None
        rows: list[tuple] = []
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

    def pairs(self) -> Iterator[tuple[int, int, DiscreteDistribution, DiscreteDistribution]]:
        """Yield ``(group index, pair index, μ_first, μ_second)`` for every pair."""
        for g, group in enumerate(self.groups):
            for i in range(len(group.pairs)):
                yield (g, i, self.distribution(g, int(group.first[i])),
                       self.distribution(g, int(group.second[i])))

    def max_over_rows(self, fn: Callable[..., np.ndarray]) -> PairValue | None:
        """The largest ``fn(grid, rows, first, second)`` (one value per pair of a group: the
        vectorised form of :meth:`max_over_pairs`) over all pairs, None when there are none."""
        best: PairValue | None = None
        for g, group in enumerate(self.groups):
            if not len(group.pairs):
                continue
            values = fn(group.grids[0], group.rows, group.first, group.second)
            i = int(np.argmax(values))
            if best is None or values[i] > best.value:
                best = PairValue(value=float(values[i]), pair=group.pairs[i], theta=group.theta,
                                 scenario=group.scenario,
                                 mu_first=self.distribution(g, int(group.first[i])),
                                 mu_second=self.distribution(g, int(group.second[i])))
        return best

    def max_over_pairs(self, fn: Callable[[DiscreteDistribution, DiscreteDistribution], float]
                       ) -> PairValue | None:
        """The largest ``fn(μ_a, μ_b)`` over all pairs (None when there are no pairs)."""
        best: PairValue | None = None
        for g, i, mu_a, mu_b in self.pairs():
            value = float(fn(mu_a, mu_b))
            if best is None or value > best.value:
                group = self.groups[g]
                best = PairValue(value=value, pair=group.pairs[i], theta=group.theta,
                                 scenario=group.scenario, mu_first=mu_a, mu_second=mu_b)
        return best
