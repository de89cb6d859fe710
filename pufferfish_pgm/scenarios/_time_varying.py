"""Time-of-day chains: one transition matrix per block of slots, shrunk to the pooled fit.

A day of D slots is cut into blocks of ``period`` consecutive slots (``period=6`` at 10-minute
slots: one block per hour); block h holds the transitions whose *start* slot t (the move
X_t -> X_{t+1}) has ``t // period == h``. With C_h the transition counts of block h and P̄
the pooled (homogeneous) fit, with its pseudocount rule, each row is shrunk to P̄:

    P_h(i, j) = (C_h(i, j) + s · P̄(i, j)) / (Σ_j C_h(i, j) + s)

s (``shrinkage``, default :data:`DEFAULT_SHRINKAGE` = 10) acts as s pseudo-transitions per row
drawn from the pooled fit: a block row seen n times weighs n / (n + s) on its own counts. A
row never seen in block h (and s = 0) is P̄'s row, the limit of the formula as s -> 0. With
s > 0 every transition the pooled fit allows stays possible in every hour (no zero that the
data of one hour alone would create). A chain longer than a day repeats the day: step t uses
block ``(t mod D) // period``; the step from the last slot to the next day's first slot,
t = D - 1 (mod D), is in the last block (it is never observed within a day of data, so that
block may be P̄ alone).

Examples
--------
>>> blocks = np.array([[[2.0, 0.0], [0.0, 1.0]], [[0.0, 0.0], [1.0, 1.0]]])
>>> pooled = np.array([[0.5, 0.5], [0.25, 0.75]])
>>> shrunk_blocks(blocks, pooled, 2.0)[0].tolist()       # (2 + 2·0.5)/(2 + 2), (0 + 1)/4
[[0.75, 0.25], [0.16666666666666666, 0.8333333333333334]]
>>> day_stack(np.arange(2)[:, None, None] * np.ones((2, 1, 1)), 2, 3, 7)[:, 0, 0].tolist()
[0.0, 0.0, 1.0, 0.0, 0.0, 1.0]
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from .._budget import check_allocation
from ..errors import InvalidDataError, InvalidParameterError, ParameterTypeError

__all__ = ["DEFAULT_SHRINKAGE", "block_count", "check_period", "check_shrinkage", "day_stack",
           "shrunk_blocks"]

#: Pseudo-transitions per row from the pooled fit (see the module docstring).
DEFAULT_SHRINKAGE = 10.0


def check_period(period: Any) -> int:
    """``period`` after checking it is an int >= 1."""
    if isinstance(period, bool) or not isinstance(period, numbers.Integral) or period < 1:
        raise InvalidParameterError(
            f"period must be a whole number of slots >= 1 (e.g. 6 for hours of 10-minute "
            f"slots), got {period!r}")
    return int(period)


def check_shrinkage(shrinkage: Any) -> float:
    """``shrinkage`` (None: the default) after checking it is a finite number >= 0."""
    if shrinkage is None:
        return DEFAULT_SHRINKAGE
    if isinstance(shrinkage, bool) or not isinstance(shrinkage, numbers.Real):
        raise ParameterTypeError(f"shrinkage must be a number, got {shrinkage!r}")
    value = float(shrinkage)
    if not np.isfinite(value) or value < 0:
        raise InvalidParameterError(f"shrinkage must be a finite number >= 0 (pseudo-"
                                    f"transitions per row), got {shrinkage!r}")
    return value


def block_count(day: int, period: int) -> int:
    """H = ceil(D / period): the blocks of a day of ``day`` slots (the last holds the
    overnight step D - 1)."""
    return -(-day // period)


def shrunk_blocks(blocks: np.ndarray, pooled: np.ndarray, shrinkage: float) -> np.ndarray:
    """``(H, k, k)``: every block's rows shrunk to ``pooled`` (the formula of the module)."""
    rows = blocks.sum(axis=2, keepdims=True)
    num = blocks + shrinkage * pooled[None]
    den = rows + shrinkage
    with np.errstate(invalid="ignore", divide="ignore"):
        out = num / den
    return np.where(den > 0, out, pooled[None])


def day_stack(blocks: np.ndarray, period: int, day: int, length: int) -> np.ndarray:
    """``(length - 1, k, k)``: step t is ``blocks[(t mod day) // period]``."""
    h, k = blocks.shape[0], blocks.shape[-1]
    if h != block_count(day, period):
        raise InvalidDataError(
            f"{h} blocks of transition counts, but a day of {day} slots in blocks of {period} "
            f"has {block_count(day, period)}; give one (k, k) table per block")
    check_allocation(8 * max(length - 1, 0) * k * k,
                     what=f"the {length - 1} per-step transition matrices of the chain")
    t = np.arange(max(length - 1, 0))
    return blocks[(t % day) // period]
