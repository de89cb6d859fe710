"""Every (pair, scenario) of a framework as rows of log masses on a grid (internal).

The audit and the exact calibration evaluate thousands of pairs at many noise scales, so the
distributions are laid out once, per fixed-start scenario (a *group*), as an array ``rows``
of log masses on a shared grid (one grid per released coordinate), with two index arrays
naming the rows of each pair's two secrets. The realised ε of every pair at a given scale is
then a handful of vectorised numpy operations (DESIGN §3.7): log densities of the noisy
release at every grid point (cumulative recursions along each coordinate), and the largest
absolute difference of each pair's two rows.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> from pufferfish_pgm.secrets import Framework
>>> from pufferfish_pgm.queries import Count
>>> mc = MarkovChainScenario([[0.9, 0.1], [0.1, 0.9]], "stationary", 3)
>>> groups, skipped = build_groups(Framework(mc), [Count(1)], [[1]], [0])
>>> g = groups[0]
>>> g.rows.shape, len(g.pairs)
((6, 4), 3)
>>> eps, where = g.epsilons(np.array([10.0]))
>>> eps.round(4).tolist()
[0.2438, 0.26, 0.2438]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..distributions import as_distribution
from ..distributions._log_space import logsumexp
from ..errors import InvalidParameterError, LimitExceededError
from ..queries import fixed_start_variants, log_joint_engine
from ..queries._packed_weights import PackedWeights, pack_queries
from ..scenarios import Scenario
from ..secrets import Framework, SecretPair, SkippedPair, check_possible
from ._laplace_kernel import log_laplace_density

__all__ = ["Group", "build_groups", "MAX_GRID", "refuse_any_start"]

#: Default cap on the cells of one group's rows (rows × grid points).
MAX_GRID = 50_000_000


def _rows_on_grid(raw: list[np.ndarray], packed: PackedWeights, matrix: np.ndarray,
                  shift: np.ndarray, max_grid: int) -> tuple[tuple, np.ndarray]:
    """Place packed log-mass vectors on per-coordinate grids: coords = matrix @ q + shift."""
    stacked = np.array(raw)
    where = np.flatnonzero(np.isfinite(stacked).any(axis=0))
    coords = packed.unpack(where) @ matrix.T + shift
    grids, index = [], []
    for j in range(coords.shape[1]):
        grid, inv = np.unique(coords[:, j], return_inverse=True)
        grids.append(grid.astype(float))
        index.append(inv.ravel())
    cells = len(raw) * int(np.prod([g.size for g in grids]))
    if cells > max_grid:
        raise LimitExceededError(
            f"the joint grid of support points needs {cells:,} cells ({len(raw)} conditional "
            f"distributions on a {' x '.join(str(g.size) for g in grids)} grid); the limit is "
            f"max_grid={max_grid:,}: release fewer coordinates jointly or raise max_grid"
        )
    rows = np.full((len(raw),) + tuple(g.size for g in grids), -np.inf)
    if len(grids) == 1 and np.all(np.diff(index[0]) == 1):
        rows[:, :] = stacked[:, where]          # the usual scalar case: already in order
    else:
        target: Any = (slice(None), *index)  # ufunc.at takes tuple indices; numpy's hints don't
        np.logaddexp.at(rows, target, stacked[:, where])
    return tuple(grids), rows


def _variant_group(theta: int, variant: Scenario, framework: Framework, packed: PackedWeights,
                   layout: tuple[np.ndarray, np.ndarray], max_grid: int,
                   skipped: list[SkippedPair], possible: set) -> Group | None:
    """One group; a pair is skipped where a secret has probability 0 (the compiler's rule,
    with the probabilities read off the engine's totals instead of separate queries)."""
    engine = log_joint_engine(variant, packed)
    keys: dict[tuple, int] = {}
    raw: list[np.ndarray] = []
    first: list[int] = []
    second: list[int] = []
    pairs: list[SecretPair] = []
    for pair in framework.pairs:
        slots = []
        for secret in (pair.first, pair.second):
            codes = {variant.check_node(n): variant.state_index(n, s)
                     for n, s in secret.evidence.items()}
            key = tuple(sorted(codes.items(), key=repr))
            if key not in keys:
                log_joint = engine.log_joint(codes)
                total = float(logsumexp(log_joint))
                keys[key] = len(raw) if np.isfinite(total) else -1
                if np.isfinite(total):
                    raw.append(log_joint - total)
            if keys[key] >= 0:
                possible.add(secret)
            slots.append(keys[key])
        if min(slots) < 0:
            zero = pair.first if slots[0] < 0 else pair.second
            skipped.append(SkippedPair(pair, theta, f"P({zero}) = 0 under {variant.name!r}"))
            continue
        first.append(slots[0])
        second.append(slots[1])
        pairs.append(pair)
    if not pairs:
        return None
    grids, rows = _rows_on_grid(raw, packed, *layout, max_grid)
    return Group(theta, variant.name, grids, rows, np.array(first), np.array(second),
                 tuple(pairs))


def refuse_any_start(framework: Any, mechanism: str) -> None:
    """Distribution-based calibration needs a finite class: refuse chains with ``"any"`` start.

    The class of all initial distributions is infinite and a mixed start can leak more than
    every point-mass start (the weights of the mixture depend on the secret), so auditing the
    fixed starts would under-protect.
    """
    for m in framework.scenarios:
        if getattr(m, "initial_is_any", False):
            raise InvalidParameterError(
                f"{mechanism} needs a finite class of scenarios, but chain {m.name!r} has "
                "initial='any' (every initial distribution); give the initial distributions "
                "explicitly (e.g. one chain per start state in a ScenarioClass), or use "
                "MarkovQuiltMechanism, which covers 'any' exactly"
            )


def build_groups(framework: Any, engine_queries: list, matrix: Any, shift: Any,
                 max_grid: int = MAX_GRID) -> tuple[list[Group], tuple]:
    """Groups for every fixed-start scenario of the framework (see the module docstring).

    The released coordinates are ``matrix @ (engine query values) + shift``. For chains with
    ``initial="any"`` only the point-mass and stationary starts are covered (a lower bound;
    calibration refuses such chains with :func:`refuse_any_start`).
    """
    skipped: list = []
    possible: set = set()
    matrix = np.atleast_2d(np.asarray(matrix, dtype=np.int64))
    layout = (matrix, np.atleast_1d(np.asarray(shift, dtype=np.int64)))
    packed = pack_queries(framework.scenarios, engine_queries)
    groups = []
    for theta, scenario in enumerate(framework.scenarios):
        for variant in fixed_start_variants(scenario):
            group = _variant_group(theta, variant, framework, packed, layout, max_grid,
                                   skipped, possible)
            if group is not None:
                groups.append(group)
    check_possible(framework.pairs, possible)
    return groups, tuple(skipped)


@dataclass(frozen=True, eq=False)
class Group:
    """The pairs of one fixed-start scenario, as rows of log masses on per-axis grids."""

    theta: int
    scenario: str
    grids: tuple
    rows: np.ndarray
    first: np.ndarray
    second: np.ndarray
    pairs: tuple

    @classmethod
    def from_distributions(cls, pairs: Sequence, discrete: bool = False) -> Group:
        """One group holding explicit pairs of distributions (dicts value -> probability or
        :class:`~pufferfish_pgm.distributions.DiscreteDistribution`) on their joint grid."""
        if not isinstance(pairs, Sequence) or isinstance(pairs, str) or not pairs:
            raise InvalidParameterError(
                f"pairs must be a non-empty sequence of (mu_a, mu_b) tuples, got {pairs!r}")
        dists = []
        for k, pair in enumerate(pairs):
            if not isinstance(pair, Sequence) or len(pair) != 2:
                raise InvalidParameterError(
                    f"pairs[{k}] must be a (mu_a, mu_b) tuple, got {pair!r}")
            for j in (0, 1):
                d = as_distribution(pair[j], f"pairs[{k}][{j}]")
                if discrete and not d.is_integer():
                    raise InvalidParameterError(
                        f"discrete Laplace noise needs integer-valued answers, got support "
                        f"{d.support.tolist()!r}; rescale the query to integers or use "
                        "Laplace noise")
                dists.append(d)
        grid = np.unique(np.concatenate([d.support for d in dists]))
        rows = np.full((len(dists), grid.size), -np.inf)
        for r, d in enumerate(dists):
            rows[r, np.searchsorted(grid, d.support)] = np.log(d.probs)
        n = len(pairs)
        return cls(0, "pairs", (grid,), rows, np.arange(0, 2 * n, 2), np.arange(1, 2 * n, 2),
                   tuple(range(n)))

    def log_densities(self, scales: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """Log densities of the noisy release at every grid point (up to a constant)."""
        out = self.rows if rows is None else self.rows[rows]
        for axis, (grid, scale) in enumerate(zip(self.grids, scales, strict=True)):
            out = log_laplace_density(grid, out, float(scale), axis=axis + 1)
        return out

    def epsilons(self, scales: np.ndarray, active: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
        """Realised ε of each (active) pair and the flat grid index where it is reached.

        One coordinate: only support points of either law are compared (the supremum sits
        there, and elsewhere both densities may underflow together). Vectors: every point of
        the product grid; a 0/0 there counts as ``inf`` (conservative; only at scales far
        below the floor of :func:`scale_floor`).
        """
        pick = np.arange(len(self.pairs)) if active is None else np.flatnonzero(active)
        used, inverse = np.unique(np.concatenate((self.first[pick], self.second[pick])),
                                  return_inverse=True)
        dens = self.log_densities(scales, used).reshape(used.size, -1)
        a, b = inverse[:pick.size], inverse[pick.size:]
        with np.errstate(invalid="ignore"):
            gap = np.abs(dens[a] - dens[b])
        scalar = len(self.grids) == 1
        gap = np.where(np.isnan(gap), 0.0 if scalar else np.inf, gap)   # 0/0: both underflow
        if scalar and np.isinf(gap).any():   # only at absurd scales: compare mass points only
            mass = np.isfinite(self.rows[self.first[pick]]) | np.isfinite(
                self.rows[self.second[pick]])
            gap = np.where(mass, gap, 0.0)
        where = np.argmax(gap, axis=1)
        return gap[np.arange(pick.size), where], where

    def output_at(self, flat: int) -> float | tuple:
        """The release value (a float, or a tuple for vectors) at a flat grid index."""
        index = np.unravel_index(int(flat), tuple(g.size for g in self.grids))
        values = tuple(float(g[i]) for g, i in zip(self.grids, index, strict=True))
        return values[0] if len(values) == 1 else values
