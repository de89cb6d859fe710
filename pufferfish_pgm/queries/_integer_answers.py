"""Exact answers from state codes by integer arithmetic, block by block (internal).

The release path (:func:`pufferfish_pgm.queries._encoding.evaluate_codes`) calls these on
codes of any integer dtype (int8 codes of a chain are read as given, never widened): a count
is ``count_nonzero(block == code, axis=1)``, a linear query with the same weights on every
node is ``Σ_s w_s · count_s``, a windowed count sums the hits of each window. Work is done on
blocks of about :data:`BLOCK_CELLS` cells, so the temporaries stay a few megabytes whatever
the number of users, and the answers are int64.

Examples
--------
>>> codes = np.array([[0, 1, 1, 0, 1], [2, 2, 1, 0, 0]], dtype=np.int8)
>>> weighted_counts(codes, range(5), np.array([0, 1, 0])).tolist()
[3, 1]
>>> window_counts(codes, [1, 2], 2).tolist()      # per window: count(1), count(2)
[[1, 0, 1, 0, 1, 0], [0, 2, 1, 0, 0, 0]]
>>> per_node_sums(codes, [0, 2], np.array([[5, 1, 0], [0, 0, 7]])).tolist()
[5, 0]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

__all__ = ["BLOCK_CELLS", "per_node_sums", "row_blocks", "weighted_counts", "window_counts"]

#: Cells (users × slots) per block of work: the boolean temporaries stay near 8 MB.
BLOCK_CELLS = 1 << 23


def row_blocks(n: int, width: int) -> Iterator[slice]:
    """Consecutive row slices of about :data:`BLOCK_CELLS` cells each.

    Examples
    --------
    >>> list(row_blocks(5, 2**22))
    [slice(0, 2, None), slice(2, 4, None), slice(4, 5, None)]
    """
    step = max(1, BLOCK_CELLS // max(width, 1))
    for lo in range(0, n, step):
        yield slice(lo, min(lo + step, n))


def _columns(block: np.ndarray, cols: Sequence[int]) -> np.ndarray:
    """``block[:, cols]``, a view (no copy) when ``cols`` are consecutive."""
    if isinstance(cols, range) and cols.step == 1:
        return block[:, cols.start:cols.stop]
    cols = list(cols)
    if cols and cols == list(range(cols[0], cols[0] + len(cols))):
        return block[:, cols[0]:cols[0] + len(cols)]
    return block[:, cols]


def weighted_counts(codes: np.ndarray, cols: Sequence[int], weights: np.ndarray) -> np.ndarray:
    """``Σ_{v in cols} weights[codes[:, v]]`` per row, int64, for one weight per code shared by
    every column: ``Σ_s weights[s] · #{v : codes[:, v] == s}``."""
    out = np.zeros(len(codes), dtype=np.int64)
    terms = [(s, int(w)) for s, w in enumerate(weights.tolist()) if w != 0]
    for rows in row_blocks(len(codes), len(cols)):
        block = _columns(codes[rows], cols)
        for s, w in terms:
            hits = np.count_nonzero(block == s, axis=1)
            out[rows] += hits if w == 1 else w * hits
    return out


def per_node_sums(codes: np.ndarray, cols: Sequence[int], table: np.ndarray) -> np.ndarray:
    """``Σ_j table[j, codes[:, cols[j]]]`` per row (weights that differ by node), int64."""
    table = np.asarray(table, dtype=np.int64)
    out = np.zeros(len(codes), dtype=np.int64)
    for rows in row_blocks(len(codes), len(cols)):
        block = codes[rows]
        for j, c in enumerate(cols):
            out[rows] += table[j][block[:, c].astype(np.intp)]
    return out


def _window_sums(hits: np.ndarray, width: int) -> np.ndarray:
    """Hits per window of ``width`` columns (the last window may be shorter)."""
    n, length = hits.shape
    full = length // width * width
    sums = hits[:, :full].reshape(n, -1, width).sum(axis=2)
    if full < length:
        sums = np.concatenate([sums, hits[:, full:].sum(axis=1)[:, None]], axis=1)
    return sums


def window_counts(codes: np.ndarray, counted: Sequence[int], width: int) -> np.ndarray:
    """Counts of each code of ``counted`` in each window of ``width`` columns: shape
    ``(n, windows · len(counted))``, window by window, the codes in the given order."""
    n, length = codes.shape
    c = len(counted)
    out = np.empty((n, -(-length // width) * c), dtype=np.int64)
    for rows in row_blocks(n, length):
        block = codes[rows]
        for j, code in enumerate(counted):
            out[rows, j::c] = _window_sums(block == code, width)
    return out
