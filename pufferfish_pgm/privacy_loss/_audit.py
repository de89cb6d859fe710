"""Exact realised-ε audit of Laplace releases (DESIGN §3.7).

For a finite class Θ, every discriminative pair and every θ where both secrets are possible,
the audit computes the exact distributions ``μ_a``, ``μ_b`` of the query given each secret
(:mod:`pufferfish_pgm.queries`) and the exact supremum over all outputs ``w`` of
``|log p_a(w) / p_b(w)|`` for ``F + Laplace(scale)``. Between consecutive support points the
density ratio is a monotone Möbius map of ``e^{2w/scale}`` and beyond the extremes it is
constant, so the supremum sits on a support point and costs O(n) per pair (cumulative
recursions, in log space so that no tail mass is lost). This is the theorem behind
:func:`pufferfish_pgm.privacy_loss.laplace_pair_epsilon`; the audit applies it to all pairs at
once as arrays.

Vector releases (a :class:`Histogram`, a windowed count or histogram, or several releases
audited jointly with :func:`audit_releases`) add independent Laplace noise to each
coordinate. Fixing all other coordinates, the ratio is again monotone between grid values of
one coordinate, so the supremum sits on the product grid of the coordinates' support values;
the audit evaluates the joint density there (one recursion per axis). That grid grows as the
product of the coordinates' ranges, so vector audits are for small models
(:class:`LimitExceededError` beyond ``max_grid`` cells).

Discrete Laplace noise on integer answers gives the same realised ε (the support points are
integers and the ratio is monotone between them).

For chains with ``initial="any"`` the audit covers the point-mass starts and the stationary
start (:func:`pufferfish_pgm.queries.fixed_start_variants`): a lower bound on the
supremum over all starts, stated in :attr:`AuditReport.coverage`.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> from pufferfish_pgm.secrets import Framework
>>> from pufferfish_pgm.queries import Count
>>> mc = MarkovChainScenario([[0.9, 0.1], [0.1, 0.9]], "stationary", 10)
>>> rep = audit(Framework(mc), Count(1), scale=1.0)      # entry-DP noise at ε = 1
>>> rep.epsilon > 1.0, rep.worst.pair.node in (4, 5)   # the middle of the chain
(True, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .._parallel import run_map
from .._validation import positive_finite
from ..errors import InvalidParameterError, ParameterTypeError
from ..queries import GroupCount, Histogram, WindowedQuery
from ..scenarios import MarkovChainScenario
from ._audit_report import AuditReport, PairAudit
from ._pair_rows import MAX_GRID, Group, build_groups
from ._streamed_exact import STREAM_CELLS, chain_streams, streamed_audit

__all__ = ["AuditReport", "PairAudit", "audit", "audit_releases", "release_layout"]


def release_layout(framework: Any, query: Any) -> tuple[list, np.ndarray, np.ndarray, list]:
    """Engine queries and the map to released coordinates for one query.

    A Count or LinearQuery is one coordinate. A Histogram is its bars; the last bar is
    ``len(nodes) - Σ other bars``, so only the others are computed jointly. A windowed query
    is its per-window parts (Counts or Histograms) laid out one after the other.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework
    >>> fw = Framework(MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 4))
    >>> q, m, s, names = release_layout(fw, Histogram())
    >>> m.tolist(), s.tolist(), names
    ([[1], [-1]], [0, 4], ['count(0)', 'count(1)'])
    """
    if isinstance(query, (WindowedQuery, GroupCount)):   # its parts side by side
        engine, matrix, shift, _ = _joint_layout(framework, query.parts(framework.scenarios))
        return engine, matrix, shift, list(query.coordinates(framework.scenarios))
    if isinstance(query, Histogram):
        bars = list(query.bars(framework.scenarios))
        d = len(bars)
        matrix = np.vstack([np.eye(d - 1, dtype=np.int64), -np.ones((1, d - 1), np.int64)])
        shift = np.zeros(d, np.int64)
        shift[-1] = len(query.node_list(framework.scenarios))
        return bars[:-1], matrix, shift, [b.name for b in bars]
    if not hasattr(query, "weights"):
        raise ParameterTypeError(
            f"expected a Count, LinearQuery, Histogram or windowed query, got "
            f"{type(query).__name__}"
        )
    return [query], np.ones((1, 1), np.int64), np.zeros(1, np.int64), [query.name]


def _joint_layout(framework: Any,
                  queries: Sequence) -> tuple[list[Any], np.ndarray, np.ndarray, list[str]]:
    engine: list[Any] = []
    blocks: list[tuple[int, np.ndarray]] = []
    shifts: list[np.ndarray] = []
    names: list[str] = []
    for q in queries:
        e, m, s, n = release_layout(framework, q)
        blocks.append((len(engine), m))
        engine += e
        shifts.append(s)
        names += n
    matrix = np.zeros((len(names), len(engine)), np.int64)
    row = 0
    for start, m in blocks:
        matrix[row:row + m.shape[0], start:start + m.shape[1]] = m
        row += m.shape[0]
    return engine, matrix, np.concatenate(shifts), names


def coverage_note(framework: Any) -> str:
    """How much of the class an audit covers (``initial="any"`` chains: fixed starts only)."""
    if any(isinstance(m, MarkovChainScenario) and m.initial_is_any
           for m in framework.scenarios):
        return ("chains with initial='any' are audited over their point-mass starts and their "
                "stationary start only: a lower bound on the supremum over all starts")
    return "every scenario of the class"


def _group_entries(task: tuple) -> list[PairAudit]:
    """The audit rows of one group at the given scales (one argument: executors run it)."""
    g, scales = task
    eps, where = g.epsilons(scales)
    return [PairAudit(pair=p, theta=g.theta, scenario=g.scenario, epsilon=float(e),
                      output=g.output_at(w)) for p, e, w in zip(g.pairs, eps, where, strict=True)]


def report_from_groups(groups: list[Group], scales: np.ndarray, names: list,
                       skipped: tuple, coverage: str, discrete: bool,
                       executor: Any = None) -> AuditReport:
    """Evaluate every group at ``scales`` (on ``executor`` if given) and collect the report."""
    entries = [e for part in run_map(_group_entries, [(g, scales) for g in groups], executor)
               for e in part]
    worst = max(entries, key=lambda e: e.epsilon, default=None)
    return AuditReport(epsilon=0.0 if worst is None else worst.epsilon, worst=worst,
                       pairs=tuple(entries), scales=tuple(float(s) for s in scales),
                       coordinates=tuple(names), discrete=discrete, skipped=skipped,
                       coverage=coverage)


def _check_discrete(discrete: object) -> bool:
    if not isinstance(discrete, bool):
        raise ParameterTypeError(f"discrete must be True or False, got {discrete!r}")
    return discrete


def audit_releases(framework: Any, releases: Sequence, *, discrete: bool = False,
                   max_grid: int = MAX_GRID) -> AuditReport:
    """Exact realised ε of several releases made together, each with its own Laplace scale.

    Parameters
    ----------
    framework : Framework
        Scenarios and discriminative pairs.
    releases : sequence of (query, scale)
        Each query (Count, LinearQuery, Histogram or windowed) is released with independent
        Laplace(scale) noise on each of its coordinates, all on the same data.
    discrete : bool
        Discrete Laplace noise on the integers (same realised ε; see the module notes).
    max_grid : int
        Cap on the cells (distributions × product-grid points) of one scenario.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework
    >>> from pufferfish_pgm.queries import Count
    >>> fw = Framework(MarkovChainScenario([[0.8, 0.2], [0.3, 0.7]], "stationary", 4))
    >>> one = audit(fw, Count(1), 3.0).epsilon
    >>> both = audit_releases(fw, [(Count(1), 3.0), (Count(1), 3.0)]).epsilon
    >>> one < both <= 2 * one
    True
    """
    _check_discrete(discrete)
    if isinstance(releases, (str, bytes)) or not isinstance(releases, Sequence) or not releases:
        raise InvalidParameterError(
            f"releases must be a non-empty list of (query, scale) pairs, got {releases!r}"
        )
    queries, scales = [], []
    for item in releases:
        if not isinstance(item, Sequence) or len(item) != 2:
            raise InvalidParameterError(f"each release is a (query, scale) pair, got {item!r}")
        queries.append(item[0])
        scales.append(positive_finite("scale", item[1]))
    engine, matrix, shift, names = _joint_layout(framework, queries)
    per_coord = np.concatenate([np.full(len(release_layout(framework, q)[3]), s)
                                for q, s in zip(queries, scales, strict=True)])
    groups, skipped = build_groups(framework, engine, matrix, shift, max_grid)
    return report_from_groups(groups, per_coord, names, skipped, coverage_note(framework),
                              discrete)


def audit(framework: Any, query: Any, scale: float, *, discrete: bool = False,
          max_grid: int = MAX_GRID) -> AuditReport:
    """Exact realised ε of ``query + Laplace(scale)`` (on every coordinate of a histogram).

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework
    >>> from pufferfish_pgm.queries import Count
    >>> iid = MarkovChainScenario([[0.7, 0.3], [0.7, 0.3]], "stationary", 20)
    >>> round(audit(Framework(iid), Count(1), scale=2.0).epsilon, 6)   # independent: ≤ 1/2
    0.5

    A count on chains whose laws would pass ``STREAM_CELLS`` cells (a day of minutes and
    more) is audited node by node without holding the laws (see
    :mod:`pufferfish_pgm.privacy_loss._streamed_exact`); same report.
    """
    streams = chain_streams(framework, query)
    if streams is not None and sum(s.cells for s in streams) > STREAM_CELLS:
        _check_discrete(discrete)
        names = release_layout(framework, query)[3]
        return streamed_audit(framework, streams, positive_finite("scale", scale), names,
                              coverage_note(framework), discrete)
    return audit_releases(framework, [(query, scale)], discrete=discrete, max_grid=max_grid)
