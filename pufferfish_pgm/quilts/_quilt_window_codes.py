"""How the per-window values of a nearby block are packed, and the grid they are released on
(``docs/exact-quilt.md``, "Vector queries" and "Windowed histograms").

A windowed query releases, for every window W_j, some coordinates that are sums over the
window's slots, each plus independent Laplace(λ). The nearby block of a quilt meets a few
consecutive windows, with n_j of its slots in window j. Its joint law is computed by one
forward pass on a single *packed* count axis (``_quilt_vector_laws.block_law``): every free
value is a digit of a mixed-radix integer, and a slot in state x adds the packed weight
``shifts[j, x]`` of its window. A code says what the digits are, and how the packed
law becomes a law on the *released* coordinates, whose product grid of support values is where
the exact loss is evaluated.

* :class:`CountCode`: one digit per window, the window's weighted count (radix n_j·max w + 1);
  released as is, so the packed law reshaped is the law on the grid.
* :class:`HistogramCode`: k − 1 digits per window, the counts of states 0..k−2 (radix n_j + 1
  each; no digit overflows). State k−1's count is n_j minus the others: it is a function of
  the digits, but it is released with its own noise, so the grid has k axes per window (0..n_j
  each) and the law is placed on it at (c_0, …, c_{k−2}, n_j − Σ c).

Examples
--------
>>> code = HistogramCode(3).code([2])                 # one window, two slots, three states
>>> code.radix, code.shifts.tolist(), [g.size for g in code.grids]
((3, 3), [[3, 1, 0]], [3, 3, 3])
>>> CountCode(np.array([0, 1])).cells([2, 3]), HistogramCode(3).cells([2, 3])
((12, 12), (144, 1728))

Two states are the exception: the loss of a two-state histogram is exactly that of the count
of state 0 with half the noise, so :class:`HistogramCode` ``(2)`` has one axis per window.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["BlockCode", "CountCode", "HistogramCode"]


def _strides(radix: tuple[int, ...]) -> np.ndarray:
    """Place value of each digit, the first digit most significant."""
    return np.cumprod((1,) + radix[:0:-1])[::-1].astype(np.int64)


@dataclass(frozen=True, eq=False)
class BlockCode:
    """The packing of one block: digit radices (most significant first), the packed weight of
    each state in each window the block meets ``(windows, k)``, the released coordinates'
    grids and, for codes with dependent coordinates, the released value of every packed value
    (``place``: ``(coordinates, size)`` grid indices, -1 where a packed value is impossible)."""

    radix: tuple[int, ...]
    shifts: np.ndarray
    grids: tuple[np.ndarray, ...]
    place: np.ndarray | None = None

    @property
    def size(self) -> int:
        """Packed values (the length of the count axis)."""
        return math.prod(self.radix)

    def on_grid(self, rows: np.ndarray) -> np.ndarray:
        """Log-mass rows ``(m, size)`` as rows on the grid ``(m, *grid sizes)``.

        >>> code = HistogramCode(3).code([1])    # one slot: packed 2·c_0 + c_1 (not 3)
        >>> grid = np.exp(code.on_grid(np.log([[0.2, 0.3, 0.5, 1.0]])))  # at (c_0, c_1, c_2)
        >>> [float(grid[(0, *c)]) for c in ((0, 0, 1), (0, 1, 0), (1, 0, 0))], grid.sum()
        ([0.2, 0.3, 0.5], np.float64(1.0))
        """
        shape = tuple(g.size for g in self.grids)
        if self.place is None:
            return rows.reshape((len(rows),) + shape)
        ok = (self.place >= 0).all(axis=0)
        flat = np.ravel_multi_index(tuple(self.place[:, ok]), shape)
        out = np.full((len(rows), math.prod(shape)), -np.inf)
        out[:, flat] = rows[:, ok]
        return out.reshape((len(rows),) + shape)


@dataclass(frozen=True, eq=False)
class CountCode:
    """A windowed count of integer ``weights >= 0`` per state: one digit per window."""

    weights: np.ndarray

    @property
    def k(self) -> int:
        """States per slot."""
        return len(self.weights)

    def cells(self, sizes: list[int]) -> tuple[int, int]:
        """(packed values, grid points) of a block with ``sizes`` slots per window."""
        top = int(np.max(self.weights))
        n = math.prod(m * top + 1 for m in sizes)
        return n, n

    def code(self, sizes: list[int]) -> BlockCode:
        """The :class:`BlockCode` of a block with ``sizes`` slots per window."""
        radix = tuple(m * int(np.max(self.weights)) + 1 for m in sizes)
        shifts = _strides(radix)[:, None] * np.asarray(self.weights, dtype=np.int64)[None, :]
        return BlockCode(radix, shifts, tuple(np.arange(r, dtype=float) for r in radix))


@dataclass(frozen=True, eq=False)
class HistogramCode:
    """A windowed histogram over ``k`` states: k − 1 digits per window, k released axes.

    Two states: one digit per window (the count c of state 0) on the grid 2c, one axis: the
    exact loss of (c + Z_0, n − c + Z_1) with Laplace(λ) is that of c + Laplace(λ/2), i.e. of
    2c + Laplace(λ) (``docs/exact-quilt.md``, "Windowed histograms").

    >>> [g.tolist() for g in HistogramCode(2).code([2]).grids]
    [[0.0, 2.0, 4.0]]
    """

    k: int

    def cells(self, sizes: list[int]) -> tuple[int, int]:
        """(packed values, grid points) of a block with ``sizes`` slots per window."""
        axes = 1 if self.k == 2 else self.k
        return (math.prod((m + 1) ** (self.k - 1) for m in sizes),
                math.prod((m + 1) ** axes for m in sizes))

    def code(self, sizes: list[int]) -> BlockCode:
        """The :class:`BlockCode` of a block with ``sizes`` slots per window."""
        k = self.k
        radix = tuple(m + 1 for m in sizes for _ in range(k - 1))
        strides = _strides(radix).reshape(len(sizes), k - 1)
        shifts = np.concatenate([strides, np.zeros((len(sizes), 1), np.int64)], axis=1)
        if k == 2:
            return BlockCode(radix, shifts, tuple(2.0 * np.arange(r) for r in radix))
        digits = np.indices(radix).reshape(len(radix), -1).reshape(
            len(sizes), k - 1, -1) if radix else np.zeros((len(sizes), 0, 1), np.int64)
        last = np.asarray(sizes)[:, None] - digits.sum(axis=1)      # (windows, size)
        place = np.concatenate([digits, last[:, None, :]], axis=1)   # (windows, k, size)
        place = np.where(last[:, None, :] >= 0, place, -1).reshape(len(sizes) * k, -1)
        grids = tuple(np.arange(m + 1, dtype=float) for m in sizes for _ in range(k))
        return BlockCode(radix, shifts, grids, place)
