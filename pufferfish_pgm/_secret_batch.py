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

from typing import Any

import numpy as np

from ._calibrate import Group
from ._logpoly import logsumexp
from ._qd_weights import pack_queries
from .errors import InvalidParameterError, LimitExceededError
from .query_distributions import fixed_start_variants, log_joint_engine
from .secrets import SkippedPair, check_possible

__all__ = ["Group", "build_groups", "MAX_GRID", "refuse_any_start"]

#: Default cap on the cells of one group's rows (rows × grid points).
MAX_GRID = 50_000_000


def _rows_on_grid(raw: list, packed: Any, matrix: np.ndarray, shift: np.ndarray,
                  max_grid: int) -> tuple[tuple, np.ndarray]:
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
        target = (slice(None),) + tuple(index)
        np.logaddexp.at(rows, target, stacked[:, where])
    return tuple(grids), rows


def _variant_group(theta: int, variant: Any, framework: Any, packed: Any, layout: tuple,
                   max_grid: int, skipped: list, possible: set) -> Group | None:
    """One group; a pair is skipped where a secret has probability 0 (the compiler's rule,
    with the probabilities read off the engine's totals instead of separate queries)."""
    engine = log_joint_engine(variant, packed)
    keys: dict = {}
    raw, first, second, pairs = [], [], [], []
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
