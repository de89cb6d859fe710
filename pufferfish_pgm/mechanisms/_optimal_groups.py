"""The noise LP's pairs, built and evaluated in bounded memory (internal).

:class:`~pufferfish_pgm.privacy_loss._pmf_audit.PmfGroup` holds, per fixed-start scenario,
every secret's law of the answer and its two one-sided tail sums. Here they are built a block
of rows at a time (the same scan, row by row, so the same numbers) and without a copy of the
laws when the answers are already the integers ``x_0 .. x_0 + D`` in order. The gaps
``log p_a(w) - log p_b(w)`` are evaluated a block of pairs at a time, so the temporaries stay
near ``CHUNK_CELLS`` cells whatever the number of pairs; :func:`chunked_report` is the exact
audit of :func:`~pufferfish_pgm.privacy_loss._pmf_audit.noise_report` assembled from the
same per-pair evaluations, block by block.

**Pruned pairs** (``docs/optimal-noise.md``, "Pairs that need no rows"): a pair whose laws
satisfy ``μ_a(x) <= e^ε μ_b(x)`` and ``μ_b(x) <= e^ε μ_a(x)`` at every answer ``x`` (its
noiseless loss is at most ε) meets every constraint of the LP for *every* noise law, so it
never yields a row and is left out of the rounds (:func:`noiseless_losses` gives each pair's
``max_x |log μ_a(x)/μ_b(x)|``); the final audit still evaluates it.

Examples
--------
>>> from pufferfish_pgm.privacy_loss._pair_rows import Group
>>> g = Group.from_distributions([({0: 0.5, 1: 0.5}, {0: 0.6, 1: 0.4}),
...                               ({0: 1.0}, {1: 1.0})])
>>> [round(float(x), 4) for x in noiseless_losses(g)]   # log(0.5/0.4); a shift: inf
[0.2231, inf]
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ..privacy_loss import AuditReport
from ..privacy_loss._engine import (
    Group,
    PairAudit,
    PmfGroup,
    TailedLaw,
    decay_scan,
    dense_rows,
)

__all__ = ["CHUNK_CELLS", "build_lean", "chunked_report", "noiseless_losses", "pair_blocks"]

#: Cells (rows x outputs) of the temporaries of one block of the evaluation.
CHUNK_CELLS = 1 << 21


def _scan(dense: np.ndarray, gaps: np.ndarray, flip: bool) -> np.ndarray:
    """``decay_scan`` of every row (right to left when ``flip``), a block of rows at a time."""
    out = np.empty_like(dense)
    step = max(1, CHUNK_CELLS // max(dense.shape[1], 1))
    for i in range(0, dense.shape[0], step):
        block = dense[i:i + step]
        out[i:i + step] = (np.flip(decay_scan(np.flip(block, axis=1), gaps), axis=1) if flip
                           else decay_scan(block, gaps))
    return out


def build_lean(group: Group, tail_scale: float) -> PmfGroup:
    """``PmfGroup.build(group, tail_scale)``, the same arrays, in bounded temporaries and
    sharing ``group.rows`` when the answers are consecutive integers from ``x_0``."""
    grid = group.grids[0] if len(group.grids) == 1 else None
    if grid is not None and np.array_equal(grid, grid[0] + np.arange(grid.size)):
        x0, dense = int(grid[0]), group.rows
    else:
        x0, dense = dense_rows(group)
    with np.errstate(over="ignore"):
        gaps = np.full(dense.shape[1], 1.0 / tail_scale)
    gaps[0] = 0.0
    return PmfGroup(group, x0, dense, _scan(dense, gaps, False), _scan(dense, gaps, True),
                    float(tail_scale))


def noiseless_losses(group: Group) -> np.ndarray:
    """Per pair, ``max_x |log μ_a(x) - log μ_b(x)|`` over the answers (0/0 counts as equal):
    a pair at most ε here needs no rows at ε (module docstring)."""
    out = np.empty(len(group.pairs))
    step = max(1, CHUNK_CELLS // max(group.rows.shape[1], 1))
    for i in range(0, out.size, step):
        a, b = group.rows[group.first[i:i + step]], group.rows[group.second[i:i + step]]
        with np.errstate(invalid="ignore"):
            gap = np.abs(a - b)
        gap = np.where(np.isneginf(a) & np.isneginf(b), 0.0, gap)
        out[i:i + step] = gap.max(axis=1, initial=0.0)
    return out


def pair_blocks(g: PmfGroup, law: TailedLaw, pick: np.ndarray) -> Iterator[tuple]:
    """``(pairs, gaps)`` for consecutive blocks of the pairs ``pick``: ``gaps`` is
    :meth:`PmfGroup.gaps` of those pairs (one row each, every output)."""
    outputs = g.width + law.hi - law.lo
    step = max(1, CHUNK_CELLS // max(3 * outputs, 1))
    for i in range(0, pick.size, step):
        block = pick[i:i + step]
        mask = np.zeros(len(g.group.pairs), dtype=bool)
        mask[block] = True
        yield block, g.gaps(law, mask)


def chunked_report(groups: list[PmfGroup], law: TailedLaw, names: Any, skipped: tuple,
                   coverage: str) -> AuditReport:
    """The exact audit of ``law`` on every pair (as ``noise_report``), block by block."""
    entries = []
    for g in groups:
        outputs = g.outputs(law)
        for block, gap in pair_blocks(g, law, np.arange(len(g.group.pairs))):
            gap = np.abs(gap)
            where = np.argmax(gap, axis=1)
            eps = gap[np.arange(gap.shape[0]), where]
            entries += [PairAudit(pair=g.group.pairs[p], theta=g.group.theta,
                                  scenario=g.group.scenario, epsilon=float(e),
                                  output=float(outputs[w]))
                        for p, e, w in zip(block, eps, where, strict=True)]
    worst = max(entries, key=lambda e: e.epsilon, default=None)
    return AuditReport(epsilon=0.0 if worst is None else worst.epsilon, worst=worst,
                       pairs=tuple(entries), scales=(), coordinates=tuple(names),
                       discrete=True, skipped=skipped, coverage=coverage)
