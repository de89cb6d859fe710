"""Joint per-window laws of a chain quilt's nearby block (``docs/exact-quilt.md``, "Vector
queries" and "Windowed histograms").

A windowed count releases the count of one state in every window of ``width`` slots, a
windowed histogram the count of every state in every window, each coordinate plus
independent Laplace noise. For a secret node X_i and a chain quilt, the nearby block (the
slots strictly between the quilt nodes, X_i included; an open side runs to the end of the
chain) meets a few consecutive windows, and the exact quilt bound needs the *joint* law of the
block's values in each window it meets, given the quilt values and X_i = s.

It comes from one forward pass over the block per θ. The free values are packed as the digits
of one integer (:mod:`~pufferfish_pgm.quilts._quilt_window_codes`: one digit of radix
n_j·max w + 1 per window for a count, k − 1 digits of radix n_j + 1 for a histogram, n_j the
block's slots in window j, so a digit never overflows), a slot adds its state's packed weight
in its window, and every step is the count-law engine's lift and step
(:mod:`pufferfish_pgm.queries._count_engine`; sums of positive terms: exact to relative
precision, never FFT). The rows are then placed on the grid of the *released*
coordinates (a histogram's dependent last count has its own axes). The prior part
``log P(x_Q|s)/P(x_Q|s')`` depends on the quilt values only and is the scalar one
(:class:`~pufferfish_pgm.quilts._quilt_laws.ChainQuiltLaws`).

Window boundaries are the multiples of ``width``, so a two-sided quilt's law depends on its
node only through the offset ``i mod width`` (one-sided and empty keys name their node): there
is one laws object per offset, and node classes are split by offset. Joint laws above
``max_cells`` grid points (default ``MAX_VECTOR_CELLS``; or whose forward pass would exceed
``MAX_PASS_CELLS``) are not computed: :meth:`ChainVectorLaws.fits` rules their quilts out;
laws over the memory budget raise :class:`~pufferfish_pgm.errors.LimitExceededError`.

Examples
--------
>>> p = np.array([[0.5, 0.5], [0.5, 0.5]])
>>> laws = ChainVectorLaws([ChainBridges(p, np.array([0.5, 0.5]), np.array([0, 1]))],
...                        np.array([[0, 1], [1, 0]]), width=2, offset=1, length=8)
>>> lo, i, hi, _, _ = laws.block(("two", 2, 2))      # nearby {X_{i-1}, X_i, X_{i+1}}, i odd
>>> window_sizes(lo, hi, 2)
[2, 1]
>>> rows = laws.rows(("two", 2, 2))
>>> rows.table().shape[1:], [g.tolist() for g in rows.axes()]
((3, 2), [[0.0, 1.0, 2.0], [0.0, 1.0]])
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from .._budget import check_allocation
from ..distributions._engine import logsumexp
from ..queries import WindowedCount, WindowedHistogram, WindowedQuery
from ..queries._engine import count_lift, step
from ..scenarios import MarkovChainScenario
from ._chain_planner import pair_groups
from ._quilt_classes import NodeClass, chain_candidates, chain_classes
from ._quilt_laws import ChainBridges, ChainQuiltLaws, QuiltRows, quilt_rows
from ._quilt_window_codes import BlockCode, CountCode, HistogramCode

__all__ = ["ChainVectorLaws", "MAX_PASS_CELLS", "MAX_VECTOR_CELLS", "block_law",
           "check_windowed", "fitting_window", "vector_chain_setup", "window_code",
           "window_sizes", "windowed_weights"]

Code = CountCode | HistogramCode

#: Default largest joint grid (points per law) of a nearby block's window counts.
MAX_VECTOR_CELLS = 1 << 14
#: Largest k⁴·C of a forward pass (its temporaries: quilt value, X_i, two states, counts).
MAX_PASS_CELLS = 1 << 24


def window_sizes(lo: int, hi: int, width: int) -> list[int]:
    """Slots of ``[lo, hi]`` in each window of ``width`` slots it meets, in time order.

    >>> window_sizes(3, 9, 4)        # [3, 4), [4, 8), [8, 10)
    [1, 4, 2]
    """
    return [min(hi, (j + 1) * width - 1) - max(lo, j * width) + 1
            for j in range(lo // width, hi // width + 1)]


def check_windowed(query: Any, cls: Any) -> bool:
    """Is ``query`` a windowed query (True) or not (False)? Windows on networks and widths
    above T are refused, saying why and what to use.

    >>> cls = MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 4)
    >>> from pufferfish_pgm.queries import Count, WindowedHistogram
    >>> check_windowed(WindowedCount(1, 2), cls), check_windowed(WindowedHistogram(2), cls)
    (True, True)
    >>> check_windowed(Count(1), cls)
    False
    """
    if not isinstance(query, WindowedQuery):
        return False
    query.windows(cls)   # networks (no time order) and widths above T: refused, with why
    return True


def windowed_weights(framework: Any, query: WindowedCount) -> np.ndarray:
    """The 0/1 weight of every state: 1 for the state the windowed count counts.

    >>> from pufferfish_pgm.secrets import Framework
    >>> fw = Framework(MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 4))
    >>> windowed_weights(fw, WindowedCount(1, 2)).tolist()
    [0, 1]
    """
    cls = framework.scenarios
    node = cls.nodes[0]
    code = cls.state_index(node, query.state)
    return (np.arange(len(cls.states_of(node))) == code).astype(np.int64)


def window_code(framework: Any, query: WindowedQuery) -> Code:
    """The packing of a windowed count or histogram (:mod:`._quilt_window_codes`).

    >>> from pufferfish_pgm.secrets import Framework
    >>> fw = Framework(MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 4))
    >>> window_code(fw, WindowedHistogram(2)).k, window_code(fw, WindowedCount(1, 2)).k
    (2, 2)
    """
    if isinstance(query, WindowedHistogram):
        cls = framework.scenarios
        return HistogramCode(len(cls.states_of(cls.nodes[0])))
    assert isinstance(query, WindowedCount)
    return CountCode(windowed_weights(framework, query))


def _step(table: np.ndarray, br: ChainBridges | None, shift: np.ndarray,
          size: int) -> np.ndarray:
    """Add each state's packed weight ``shift`` to the counts, then move one step of ``br``'s
    chain (or stay put: ``br`` None), by the count-law engine's lift and step; counts never
    leave ``size`` (digits do not overflow)."""
    lifted = count_lift(np.asarray(shift, dtype=np.int64)[None])(table, 0)
    if br is None:
        return lifted[..., :size]
    return step(lifted, br.transition, br.steps.log_min)[..., :size]


def _fix(table: np.ndarray) -> np.ndarray:
    """(kl, k, C) -> (kl, k_s, k, C): a new axis s holding the event X_i = s."""
    k = table.shape[-2]
    out = np.full(table.shape[:-2] + (k, k, table.shape[-1]), -np.inf)
    idx = np.arange(k)
    out[:, idx, idx, :] = table[:, idx, :]
    return out


def _forward(br: ChainBridges, block: tuple[int, int, int, bool, bool], width: int,
             code: BlockCode) -> np.ndarray:
    """The law of :func:`block_law` for the block's packing ``code``."""
    lo, node, hi, closed_left, closed_right = block
    size, k = code.size, br.k
    if closed_left:   # the quilt node X_{lo-1} = u: not counted
        table = np.full((k, k, size), -np.inf)
        table[np.arange(k), np.arange(k), 0] = 0.0
        table = _step(table, br, np.zeros(k, dtype=np.int64), size)
    else:
        table = np.full((1, k, size), -np.inf)
        table[0, :, 0] = br.start(0)[:, 0]
    for t in range(lo, hi + 1):   # one step per slot: each is vectorised over every state
        if t == node:
            table = _fix(table)
        last = t == hi and not closed_right
        table = _step(table, None if last else br,
                      code.shifts[t // width - lo // width], size)
    if not closed_right:
        table = logsumexp(table, axis=-2)[..., None, :]
    return table


def block_law(br: ChainBridges, block: tuple[int, int, int, bool, bool], width: int,
              coding: Code | None = None) -> tuple[np.ndarray, tuple[int, ...]]:
    """``log P(values = c, X_i = s, X_{hi+1} = v | X_{lo-1} = u)`` of the block
    ``(lo, i, hi, closed_left, closed_right)``, shape (kl, k, kr, C) (an open side has size
    1; the open left starts from the chain's start law), and the radices of the packed values
    (``coding``: the windowed query's code, by default the count of ``br.weights``).

    >>> br = ChainBridges(np.full((2, 2), 0.5), np.array([0.5, 0.5]), np.array([0, 1]))
    >>> law, radix = block_law(br, (0, 0, 1, False, False), 2)  # both slots, X_0 = s
    >>> radix, np.exp(law[0, 1, 0]).round(3).tolist()           # count of window [0, 2)
    ((3,), [0.0, 0.25, 0.25])
    """
    code = (coding or CountCode(br.weights)).code(window_sizes(block[0], block[2], width))
    return _forward(br, block, width, code), code.radix


def _vector_table(jobs: list[tuple], count: int, block: tuple, width: int,
                  code: BlockCode) -> np.ndarray:
    """The normalised joint laws of every job's rows (numbered in order) on the released
    grid, shape (rows, *grid sizes)."""
    table = np.full((count, code.size), -np.inf)
    start = 0
    for br, _, _, keys in jobs:
        if keys:
            law = _forward(br, block, width, code)
            u, s, v = (np.array(x, dtype=np.int64) for x in zip(*keys, strict=True))
            rows = law[u, s, v]
            table[start:start + len(keys)] = rows - logsumexp(rows, axis=1)[:, None]
        start += len(keys)
    return code.on_grid(table)


class ChainVectorLaws(ChainQuiltLaws):
    """Joint per-window laws of the nearby blocks of the quilts of nodes at offset ``offset``
    (``i mod width``) of a chain of ``length`` slots (keys as
    :class:`~pufferfish_pgm.quilts._quilt_laws.ChainQuiltLaws`), packed by ``coding`` (default:
    the count of the bridges' weights); laws of more than ``max_cells`` grid points do not
    :meth:`fit`, and building laws past the memory ``budget`` raises LimitExceededError."""

    def __init__(self, bridges: list[ChainBridges], pairs: np.ndarray, *, width: int,
                 offset: int, length: int, max_cells: int = MAX_VECTOR_CELLS,
                 coding: Code | None = None, budget: int | float | str | None = None,
                 shared: dict | None = None) -> None:
        super().__init__(bridges, pairs)
        self.width, self.offset, self.length = width, offset, length
        self.max_cells, self.budget = max_cells, budget
        self.coding = coding or CountCode(bridges[0].weights)
        self.shared = {} if shared is None else shared

    def rows(self, key: tuple) -> QuiltRows:
        """The rows of ``key``. A two-sided quilt's rows depend on its offset only through
        the block's slots per window, so offsets with the same ones share them (``shared``,
        one dict for the laws objects of one pair group)."""
        if key[0] != "two":
            return super().rows(key)
        lo, _, hi, _, _ = self.block(key)
        tag = (key, tuple(window_sizes(lo, hi, self.width)))
        out = self.shared.get(tag)
        if out is None:
            out = self.shared[tag] = super().rows(key)
        return out

    def block(self, key: tuple) -> tuple[int, int, int, bool, bool]:
        """``(lo, i, hi, closed_left, closed_right)``: the nearby slots ``[lo, hi]`` and the
        node (a two-sided key's node is placed at some slot of its offset)."""
        kind = key[0]
        if kind == "two":
            i = self.offset + self.width * (key[1] // self.width + 1)
            return i - key[1] + 1, i, i + key[2] - 1, True, True
        if kind == "right":   # ("right", i, b)
            return 0, key[1], key[1] + key[2] - 1, False, True
        if kind == "left":    # ("left", d, a), d = T - 1 - i
            i = self.length - 1 - key[1]
            return i - key[2] + 1, i, self.length - 1, True, False
        return 0, key[1], self.length - 1, False, False   # ("empty", i, d)

    def fits(self, key: tuple) -> bool:
        """Is the joint law of ``key``'s nearby block within the caps?"""
        lo, _, hi, _, _ = self.block(key)
        packed, grid = self.coding.cells(window_sizes(lo, hi, self.width))
        return grid <= self.max_cells and self.coding.k ** 4 * packed <= MAX_PASS_CELLS

    def _build(self, key: tuple) -> QuiltRows:
        parts, jobs, count = self._comparisons(key)
        block = self.block(key)
        code = self.coding.code(window_sizes(block[0], block[2], self.width))

        def rows() -> np.ndarray:
            self._check_budget(key, block, count, code)
            return _vector_table(jobs, count, block, self.width, code)
        return quilt_rows(key, parts, code.grids, rows)

    def _check_budget(self, key: tuple, block: tuple, count: int, code: BlockCode) -> None:
        """Refuse, before computing them, laws whose table, densities or forward pass would
        exceed the memory budget, naming the quilt, its windows and its size."""
        lo, i, hi = block[:3]
        grid = math.prod(g.size for g in code.grids)
        shift = int(code.shifts.max()) if code.shifts.size else 0
        cells = 2 * count * grid + 2 * self.coding.k ** 4 * (code.size + shift)
        windows = ", ".join(f"[{j * self.width}, {min((j + 1) * self.width, self.length)})"
                            for j in range(lo // self.width, hi // self.width + 1))
        check_allocation(8 * cells, budget=self.budget, what=(
            f"the exact laws of quilt {key} of node {i} (nearby slots {lo}..{hi}, windows "
            f"{windows}: {count} laws on a grid of {grid:,} points; a smaller "
            f"max_window_cells skips such quilts)"))


def fitting_window(width: int, window: int, max_cells: int, coding: Code) -> int:
    """The longest block (at most ``window`` slots, at least 1) whose window values fit the
    caps for some alignment. A longer block never fits (the grid grows with the block), so
    quilt distances beyond it and the start or end tables of nodes beyond it are never
    candidates: it is the window of the classes.

    >>> fitting_window(2, 256, 100, CountCode(np.array([0, 1])))   # 4 windows: 3^4 = 81
    8
    >>> fitting_window(2, 256, 100, HistogramCode(3))   # 3 states: 3^3 = 27, 3^3·2^3 = 216
    2
    """
    def fits(n: int) -> bool:
        return any(grid <= max_cells and coding.k ** 4 * packed <= MAX_PASS_CELLS
                   for packed, grid in (coding.cells(window_sizes(r, r + n - 1, width))
                                        for r in range(width)))
    n = 1
    while n < window and fits(n + 1):
        n += 1
    return n


def _by_offset(cl: NodeClass, width: int, plan_nodes: np.ndarray,
               sigma: np.ndarray) -> list[NodeClass]:
    """A class split by ``node mod width`` (a node's laws depend on its offset)."""
    if len(cl.nodes) == 1:
        return [cl]
    out = []
    for r in np.unique(cl.nodes % width):
        nodes = cl.nodes[cl.nodes % width == r]
        own = float(sigma[np.searchsorted(plan_nodes, nodes)].max())
        out.append(dataclasses.replace(cl, nodes=nodes, node=int(nodes[0]), mqm_sigma=own))
    return out


def vector_chain_setup(framework: Any, coding: Code, width: int, window: int,
                       plan_nodes: np.ndarray, sigma: np.ndarray,
                       max_cells: int = MAX_VECTOR_CELLS,
                       budget: int | float | str | None = None) -> tuple[list, list, list, int]:
    """Classes (split by offset), their candidate keys (those whose joint laws have at most
    ``max_cells`` grid points), the laws behind them and the window of the classes
    (:func:`fitting_window`), for a windowed query of ``width`` packed by ``coding`` (as
    :func:`~pufferfish_pgm.quilts._quilt_classes.chain_setup`)."""
    chains = [m for m in framework.scenarios if isinstance(m, MarkovChainScenario)]
    # the prior part needs the quilt's probabilities only: bridges without a count axis
    bridges = [ChainBridges(m.transition, None if m.initial_is_any else m.initial_distribution,
                            np.zeros(m.k, dtype=np.int64)) for m in chains]
    length = chains[0].length
    window = fitting_window(width, window, max_cells, coding)
    classes, candidates, laws = [], [], []
    for nodes, pairs in pair_groups(framework):
        by_offset: dict[int, ChainVectorLaws] = {}
        shared: dict = {}
        own = sigma[np.searchsorted(plan_nodes, nodes)]
        for c in chain_classes(chains, nodes, pairs, window, own):
            for sub in _by_offset(c, width, plan_nodes, sigma):
                r = sub.node % width
                if r not in by_offset:
                    by_offset[r] = ChainVectorLaws(bridges, pairs, width=width, offset=r,
                                                   length=length, max_cells=max_cells,
                                                   coding=coding, budget=budget,
                                                   shared=shared)
                classes.append(sub)
                candidates.append(chain_candidates(sub, window, length, by_offset[r].fits))
                laws.append(by_offset[r])
    return classes, candidates, laws, window
