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

from .._budget import check_allocation
from .._parallel import run_map
from ..distributions import as_distribution
from ..distributions._engine import logsumexp
from ..errors import InvalidParameterError, LimitExceededError
from ..queries._engine import PackedWeights, fixed_start_variants, log_joint_engine, pack_queries
from ..scenarios import MarkovChainScenario, Scenario
from ..secrets import Framework, SecretPair, SkippedPair, check_possible
from ._laplace_kernel import log_laplace_density

__all__ = ["Group", "build_groups", "MAX_GRID", "refuse_any_start"]

#: Default cap on the cells of one group's rows (rows × grid points).
MAX_GRID = 50_000_000
#: Cells of the per-pair temporaries handled at once (pairs × grid points).
CHUNK_CELLS = 1 << 22


def _rows_on_grid(stacked: np.ndarray, packed: PackedWeights, matrix: np.ndarray,
                  shift: np.ndarray, max_grid: int) -> tuple[tuple, np.ndarray]:
    """Place packed log-mass rows on per-coordinate grids: coords = matrix @ q + shift.

    In the usual scalar case (every packed value is its own grid point, in order) the rows
    are ``stacked`` itself, not a copy."""
    where = np.flatnonzero(np.isfinite(stacked).any(axis=0))
    coords = packed.unpack(where) @ matrix.T + shift
    grids, index = [], []
    for j in range(coords.shape[1]):
        grid, inv = np.unique(coords[:, j], return_inverse=True)
        grids.append(grid.astype(float))
        index.append(inv.ravel())
    cells = len(stacked) * int(np.prod([g.size for g in grids]))
    if cells > max_grid:
        raise LimitExceededError(
            f"the joint grid of support points needs {cells:,} cells ({len(stacked)} "
            f"conditional distributions on a {' x '.join(str(g.size) for g in grids)} grid); "
            f"the limit is max_grid={max_grid:,}: release fewer coordinates jointly or raise "
            "max_grid"
        )
    if len(grids) == 1 and np.all(np.diff(index[0]) == 1):
        if where.size == stacked.shape[1]:
            return tuple(grids), stacked        # already in order, every column used
        return tuple(grids), stacked[:, where]
    rows = np.full((len(stacked),) + tuple(g.size for g in grids), -np.inf)
    target: Any = (slice(None), *index)  # ufunc.at takes tuple indices; numpy's hints don't
    np.logaddexp.at(rows, target, stacked[:, where])
    return tuple(grids), rows


def _secret_slots(variant: Scenario, framework: Framework,
                  engine: Any = None) -> tuple[list[dict], list[tuple]]:
    """The distinct secrets' evidence codes, and for each pair the slots of its two secrets
    (secrets the ``engine`` knows to have the same law, such as members of a plate, share
    one slot)."""
    keys: dict[tuple, int] = {}
    wanted: list[dict] = []
    slots = []
    for pair in framework.pairs:
        both = []
        for secret in (pair.first, pair.second):
            codes = {variant.check_node(n): variant.state_index(n, s)
                     for n, s in secret.evidence.items()}
            key = (engine.secret_key(codes) if engine is not None
                   else tuple(sorted(codes.items(), key=repr)))
            if key not in keys:
                keys[key] = len(wanted)
                wanted.append(codes)
            both.append(keys[key])
        slots.append(tuple(both))
    return wanted, slots


def _normalised_rows(engine: Any, wanted: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    """Every secret's conditional log masses as one array (filled in place), and which
    secrets are possible (probability > 0)."""
    stacked: np.ndarray | None = None
    possible = np.zeros(len(wanted), dtype=bool)
    for i, log_joint in engine.secret_log_joints(wanted):
        if stacked is None:
            stacked = np.full((len(wanted), log_joint.size), -np.inf)
        total = float(logsumexp(log_joint))
        if np.isfinite(total):
            stacked[i] = log_joint - total
            possible[i] = True
    assert stacked is not None
    return stacked, possible


def _variant_group(task: tuple) -> tuple[Group | None, list[SkippedPair], set]:
    """One group, the pairs skipped and the secrets found possible (a module-level function of
    one argument, so that an executor can run it). A pair is skipped where a secret has
    probability 0 (the compiler's rule, with the probabilities read off the engine's totals
    instead of separate queries)."""
    theta, variant, framework, packed, layout, max_grid = task
    skipped: list[SkippedPair] = []
    possible: set = set()
    engine = log_joint_engine(variant, packed)
    wanted, slots = _secret_slots(variant, framework, engine)
    stacked, ok = _normalised_rows(engine, wanted)
    first: list[int] = []
    second: list[int] = []
    pairs: list[SecretPair] = []
    for pair, (i, j) in zip(framework.pairs, slots, strict=True):
        possible.update(s for s, k in ((pair.first, i), (pair.second, j)) if ok[k])
        if not (ok[i] and ok[j]):
            zero = pair.first if not ok[i] else pair.second
            skipped.append(SkippedPair(pair, theta, f"P({zero}) = 0 under {variant.name!r}"))
            continue
        first.append(i)
        second.append(j)
        pairs.append(pair)
    if not pairs:
        return None, skipped, possible
    matrix, shift = layout
    grids, rows = _rows_on_grid(stacked, packed, matrix, shift, max_grid)
    return (Group(theta, variant.name, grids, rows, np.array(first), np.array(second),
                  tuple(pairs)), skipped, possible)


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


def _check_size(framework: Any, packed: PackedWeights, variants: int) -> None:
    """Refuse, before computing any law, layouts whose laws would pass the memory budget (all
    groups' rows are held together through a calibration)."""
    secrets = len({s for p in framework.pairs for s in (p.first, p.second)})
    width = sum(int(w.max()) for w in packed.weights.values()) + 1
    try:
        check_allocation(secrets * width * variants * 8,
                         what=f"the exact laws of {secrets:,} secrets under {variants} "
                              f"scenario(s) ({width:,} values each)")
    except LimitExceededError:
        # a network whose count law no budget can hold says so first (a larger budget for
        # the stored laws would only meet that refusal next); its capped order refuses fast
        for scenario in framework.scenarios:
            if not isinstance(scenario, MarkovChainScenario):
                log_joint_engine(scenario, packed).log_joint({})
        raise


def build_groups(framework: Any, engine_queries: list, matrix: Any, shift: Any,
                 max_grid: int = MAX_GRID, executor: Any = None) -> tuple[list[Group], tuple]:
    """Groups for every fixed-start scenario of the framework (see the module docstring).

    The released coordinates are ``matrix @ (engine query values) + shift``. For chains with
    ``initial="any"`` only the point-mass and stationary starts are covered (a lower bound;
    calibration refuses such chains with :func:`refuse_any_start`). ``executor`` builds the
    scenarios' groups in parallel (see :mod:`pufferfish_pgm._parallel`); same result.
    """
    matrix = np.atleast_2d(np.asarray(matrix, dtype=np.int64))
    layout = (matrix, np.atleast_1d(np.asarray(shift, dtype=np.int64)))
    packed = pack_queries(framework.scenarios, engine_queries)
    tasks = [(theta, variant, framework, packed, layout, max_grid)
             for theta, scenario in enumerate(framework.scenarios)
             for variant in fixed_start_variants(scenario)]
    _check_size(framework, packed, len(tasks))
    groups, skipped, possible = [], [], set()
    for group, lost, found in run_map(_variant_group, tasks, executor):
        skipped += lost
        possible |= found
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
        """Log densities of the noisy release at every grid point (up to a constant), computed
        a block of rows at a time so the kernel's temporaries stay bounded."""
        pick = np.arange(len(self.rows)) if rows is None else np.asarray(rows)
        out = np.empty((pick.size,) + self.rows.shape[1:])
        step = max(1, CHUNK_CELLS // max(int(np.prod(self.rows.shape[1:])), 1))
        for lo in range(0, pick.size, step):
            block = self.rows[pick[lo:lo + step]]
            for axis, (grid, scale) in enumerate(zip(self.grids, scales, strict=True)):
                block = log_laplace_density(grid, block, float(scale), axis=axis + 1)
            out[lo:lo + step] = block
        return out

    def distinct(self, pick: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The distinct (first, second) rows of the pairs ``pick`` (default all) and, per
        pair, which of them it is: pairs whose secrets share their laws (members of a plate,
        DESIGN §3.6) are evaluated once."""
        pick = np.arange(len(self.pairs)) if pick is None else pick
        first, second = self.first[pick], self.second[pick]
        base = int(second.max(initial=0)) + 1     # one integer per (first, second): the same
        keys, inverse = np.unique(first * base + second, return_inverse=True)   # sorted order
        return keys // base, keys % base, inverse.ravel()

    def epsilons(self, scales: np.ndarray, active: np.ndarray | None = None
                 ) -> tuple[np.ndarray, np.ndarray]:
        """Realised ε of each (active) pair and the flat grid index where it is reached.

        One coordinate: only support points of either law are compared (the supremum sits
        there, and elsewhere both densities may underflow together). Vectors: every point of
        the product grid; a 0/0 there counts as ``inf`` (conservative; only at scales far
        below the floor of :func:`scale_floor`).
        """
        pick = np.arange(len(self.pairs)) if active is None else np.flatnonzero(active)
        first, second, back = self.distinct(pick)
        used, inverse = np.unique(np.concatenate((first, second)), return_inverse=True)
        dens = self.log_densities(scales, used).reshape(used.size, -1)
        a, b = inverse[:first.size], inverse[first.size:]
        eps, where = np.empty(first.size), np.empty(first.size, dtype=np.int64)
        step = max(1, CHUNK_CELLS // max(dens.shape[1], 1))
        for lo in range(0, first.size, step):   # chunks of pairs: bounded temporaries
            part = slice(lo, lo + step)
            eps[part], where[part] = self._largest_gap(dens[a[part]], dens[b[part]],
                                                       first[part], second[part])
        return eps[back], where[back]

    def _largest_gap(self, da: np.ndarray, db: np.ndarray, first: np.ndarray,
                     second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per row, the largest ``|da - db|`` and where (``da`` is overwritten).

        Fast path, exact: ``argmax`` stops at the first NaN and an ``inf`` is the largest
        value, so when every row's maximum found is finite no row holds a NaN or an ``inf``,
        and the replacements of :meth:`_special_gap` change nothing; otherwise it runs."""
        with np.errstate(invalid="ignore"):
            gap = np.subtract(da, db, out=da)
        np.abs(gap, out=gap)
        where = np.argmax(gap, axis=1)
        best = gap[np.arange(first.size), where]
        if np.isfinite(best).all():
            return best, where
        return self._special_gap(gap, first, second)

    def _special_gap(self, gap: np.ndarray, first: np.ndarray,
                     second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_largest_gap` where a gap is NaN (both densities underflow: 0 for one
        coordinate, ``inf`` for vectors) or ``inf`` (one coordinate: mass points only)."""
        scalar = len(self.grids) == 1
        gap = np.where(np.isnan(gap), 0.0 if scalar else np.inf, gap)   # 0/0: both underflow
        if scalar and np.isinf(gap).any():   # only at absurd scales: compare mass points only
            mass = np.isfinite(self.rows[first]) | np.isfinite(self.rows[second])
            gap = np.where(mass, gap, 0.0)
        where = np.argmax(gap, axis=1)
        return gap[np.arange(first.size), where], where

    def output_at(self, flat: int) -> float | tuple:
        """The release value (a float, or a tuple for vectors) at a flat grid index."""
        index = np.unravel_index(int(flat), tuple(g.size for g in self.grids))
        values = tuple(float(g[i]) for g, i in zip(self.grids, index, strict=True))
        return values[0] if len(values) == 1 else values
