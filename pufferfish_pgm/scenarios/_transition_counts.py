"""Θ by map-reduce: transition counts per partition, summed exactly, then the fitted chain.

Fitting a Markov chain is counting transitions, so it splits like a release does: each
partition gives :func:`transition_counts` (a :class:`TransitionCounts`), partials add up with
``+`` (or ``sum``), and :meth:`TransitionCounts.chain` (or
:meth:`MarkovChainScenario.from_counts <pufferfish_pgm.scenarios.MarkovChainScenario.from_counts>`)
turns the total into the chain :meth:`~pufferfish_pgm.scenarios.MarkovChainScenario.fit`
would fit to the union of the partitions, bit for bit (same states, same pseudocount rule,
same length default: the longest sequence).

Examples
--------
>>> a = transition_counts([["rest", "walk", "walk"]])
>>> b = transition_counts([["walk", "rest", "rest", "rest"]])
>>> total = a + b
>>> total.states, total.transitions.tolist(), total.initial.tolist(), total.longest
(('rest', 'walk'), [[2, 1], [1, 1]], [1, 1], 4)
>>> total.chain().transition.tolist()
[[0.6666666666666666, 0.3333333333333333], [0.5, 0.5]]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidDataError
from ._fit import _state_list, as_sequences
from ._time_varying import block_count, check_period

__all__ = ["TransitionCounts", "transition_counts"]

#: Values per block of a table being counted (the int64 codes of a block stay near 64 MB).
BLOCK_VALUES = 1 << 23


@dataclass(frozen=True, eq=False)
class TransitionCounts:
    """Exact counts of a set of state sequences: add partials with ``+``.

    Attributes
    ----------
    states : tuple
        The states, in the order of the rows and columns (sorted, or as given).
    transitions : numpy.ndarray
        ``(k, k)`` int64: ``transitions[s, t]`` is the number of steps from ``s`` to ``t``.
    initial : numpy.ndarray
        ``(k,)`` int64: how many sequences start in each state.
    longest : int
        The length of the longest sequence (the default length of the fitted chain).
    period : int or None
        Counted per block of ``period`` start slots (``transition_counts(..., period=p)``):
        ``transitions`` is then ``(H, k, k)``, ``transitions[h]`` the steps X_t -> X_{t+1}
        with ``t // period == h``, H = ceil(longest / period). None: one ``(k, k)`` table.
    """

    states: tuple
    transitions: np.ndarray
    initial: np.ndarray
    longest: int
    period: int | None = None

    def __add__(self, other: TransitionCounts) -> TransitionCounts:
        if not isinstance(other, TransitionCounts):
            return NotImplemented
        if self.period != other.period:
            raise InvalidDataError(f"cannot add counts per block of {self.period} slots to "
                                   f"counts per block of {other.period}; count both alike")
        if self.states == other.states:
            names = self.states
        else:       # the union, sorted as fit sorts the states it finds
            names = _state_list([list(self.states) + list(other.states)], None)
        a, b = self.over(names), other.over(names)
        longest = max(self.longest, other.longest)
        return TransitionCounts(names, _blocks(a, longest) + _blocks(b, longest),
                                a.initial + b.initial, longest, self.period)

    def __radd__(self, other: Any) -> TransitionCounts:
        if isinstance(other, int) and other == 0:     # sum(partials) starts from 0
            return self
        return NotImplemented

    def over(self, states: Sequence) -> TransitionCounts:
        """The same counts over ``states`` (which must include every state of these)."""
        names = tuple(states)
        where = {s: i for i, s in enumerate(names)}
        missing = [s for s in self.states if s not in where]
        if missing:
            raise InvalidDataError(f"state {missing[0]!r} was counted but is not among the "
                                   f"states {list(names)}; add it")
        index = np.array([where[s] for s in self.states], dtype=np.intp)
        trans = np.zeros(self.transitions.shape[:-2] + (len(names), len(names)), np.int64)
        trans[..., index[:, None], index[None, :]] = self.transitions
        first = np.zeros(len(names), dtype=np.int64)
        first[index] = self.initial
        return TransitionCounts(names, trans, first, self.longest, self.period)

    def chain(self, *, length: int | None = None, pseudocount: float = 0.0,
              initial: str = "empirical", name: str = "fitted chain",
              shrinkage: float | None = None) -> Any:
        """The chain ``MarkovChainScenario.fit`` gives on the counted sequences (same
        options, ``period`` as counted; ``length`` defaults to :attr:`longest`)."""
        from ._scenarios import MarkovChainScenario

        start = self.initial if initial == "empirical" else initial
        day = None if self.period is None else self.longest
        return MarkovChainScenario.from_counts(
            self.transitions, start, self.longest if length is None else length,
            states=self.states, pseudocount=pseudocount, name=name, period=self.period,
            shrinkage=shrinkage, day=day)


def _blocks(counts: TransitionCounts, longest: int) -> np.ndarray:
    """The transitions, per-block tables padded with zero blocks to a day of ``longest``."""
    if counts.period is None:
        return counts.transitions
    missing = block_count(longest, counts.period) - len(counts.transitions)
    return np.concatenate([counts.transitions,
                           np.zeros((missing,) + counts.transitions.shape[1:], np.int64)])


def transition_counts(batch: Any, states: Sequence | None = None, *,
                      period: int | None = None) -> TransitionCounts:
    """The transition and first-state counts of the sequences in ``batch``: one partition's
    partial for a fit by map-reduce (see the module). With ``period=p``, one table per block
    of p start slots (for ``fit(..., period=p)``; partials of one day length add up).

    Examples
    --------
    >>> c = transition_counts([["a", "a", "b", "a", "a"]], period=2)
    >>> c.transitions.tolist()           # blocks of start slots {0, 1}, {2, 3}, {4}
    [[[1, 1], [0, 0]], [[1, 0], [1, 0]], [[0, 0], [0, 0]]]

    ``batch`` holds sequences as ``MarkovChainScenario.fit`` reads them (one row per user of
    a 2-D array or DataFrame, or a list of sequences). ``states`` fixes the states and their
    order (a value outside them is an error); by default the states found, sorted.

    Raises
    ------
    InvalidDataError
        An empty batch or sequence, a missing value, a state outside ``states``; naming the
        sequence and the position.
    """
    table = batch.to_numpy() if type(batch).__name__ == "DataFrame" else batch
    if isinstance(table, np.ndarray) and table.ndim == 2:
        blocks = [(i, table[i:i + _rows_per_block(table)]) for i in
                  range(0, len(table), _rows_per_block(table))]
    else:
        blocks = [(i, np.array([seq], dtype=object)) for i, seq in
                  enumerate(as_sequences(table))]
    if not blocks or any(block.shape[1] == 0 for _, block in blocks):
        raise InvalidDataError("no sequences (or an empty one) given; pass at least one "
                               "sequence of states")
    period = None if period is None else check_period(period)
    index: dict = {s: i for i, s in enumerate(states)} if states is not None else {}
    empty = np.zeros((0, 0) if period is None else (0, 0, 0), np.int64)
    total = TransitionCounts((), empty, np.zeros(0, np.int64), 0, period)
    for first, block in blocks:
        total = _grown(total, index) + _block_counts(block, index, first, states is not None,
                                                     period)
    names = tuple(states) if states is not None else _state_list([list(index)], None)
    return total.over(names)


def _rows_per_block(table: np.ndarray) -> int:
    return max(1, BLOCK_VALUES // max(table.shape[1], 1))


def _grown(counts: TransitionCounts, index: dict) -> TransitionCounts:
    return counts.over(tuple(index)) if counts.states != tuple(index) else counts


def _block_counts(block: np.ndarray, index: dict, first: int, fixed: bool,
                  period: int | None = None) -> TransitionCounts:
    """The counts of one block of equal-length sequences; new states join ``index``."""
    import pandas as pd  # type: ignore[import-untyped]

    labels, found = pd.factorize(block.ravel(), use_na_sentinel=True)
    uniques = found.tolist()              # Python values (1, not numpy.int64(1)), as fit has
    codes = labels.reshape(block.shape)
    if (labels < 0).any():
        row, t = divmod(int(np.argmax(labels < 0)), block.shape[1])
        raise InvalidDataError(f"sequence {first + row} has a missing value "
                               f"({block[row, t]!r}) at position {t}; fill or drop it")
    unknown = [u for u in uniques if u not in index]
    if unknown and fixed:
        row, t = np.argwhere(block == unknown[0])[0]
        raise InvalidDataError(
            f"sequence {first + row}, position {t}: state {unknown[0]!r} is not among the given "
            f"states {list(index)}; add it to states or clean the data")
    ids = np.array([index.setdefault(u, len(index)) for u in uniques], dtype=np.int64)
    codes = ids[codes]
    k, width = len(index), block.shape[1]
    hours = 1 if period is None else block_count(width, period)
    hour = np.zeros(width - 1, np.int64) if period is None else np.arange(width - 1) // period
    cells = (hour[None, :] * k + codes[:, :-1]) * k + codes[:, 1:]
    pairs = np.bincount(cells.ravel(), minlength=hours * k * k).reshape(hours, k, k)
    return TransitionCounts(tuple(index), (pairs[0] if period is None else pairs).astype(
        np.int64), np.bincount(codes[:, 0], minlength=k).astype(np.int64), width, period)
