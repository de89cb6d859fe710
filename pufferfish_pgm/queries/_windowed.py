"""Windowed queries: *when* as well as *how long* (docs/windowed-queries.md).

A chain's slots 0..T-1 are cut into consecutive windows of ``width`` slots,
``[0, w), [w, 2w), ...``; the last window is shorter when ``width`` does not divide T (a day
of 1,440 minutes in windows of 100 ends with one of 40). :class:`WindowedCount` releases the
count of one state in every window (minutes walked per hour), :class:`WindowedHistogram` the
count of every state in every window, window by window.

Both are vectors of counts, and one slot lies in exactly one window: changing it moves one
coordinate of a windowed count by 1 (L1 sensitivity L = 1) and two coordinates of a windowed
histogram by 1 each (L = 2). The Markov Quilt Mechanism and group DP therefore calibrate them
like a Count or a Histogram, one Laplace scale L·σ on every coordinate; the exact auditor
reads their joint law (small models only), and :meth:`~WindowedQuery.parts` gives the
per-window Counts or Histograms the engines compute.

Windows need time order, so these queries are for Markov chains; a Bayesian network's node
order is topological, not temporal, and networks are refused (release
``Count(state, nodes=[...])`` per group of nodes instead).

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> mc = MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 5, states=["rest", "walk"])
>>> q = WindowedCount("walk", 2)
>>> q.windows(mc), q.lipschitz_for(mc)
((range(0, 2), range(2, 4), range(4, 5)), 1.0)
>>> q.coordinates(mc)
('count(walk)@[0,2)', 'count(walk)@[2,4)', 'count(walk)@[4,5)')
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..errors import InvalidParameterError, ParameterTypeError
from ..scenarios import Scenario, ScenarioClass, as_class
from ._queries import Count, Histogram

__all__ = ["WindowedCount", "WindowedHistogram", "WindowedQuery"]


def _window_label(window: range) -> str:
    return f"@[{window.start},{window.stop})"


@dataclass(frozen=True, init=False)
class WindowedQuery(ABC):
    """What the windowed queries share: the width, the windows and the checks.

    Not used directly: build a :class:`WindowedCount` or a :class:`WindowedHistogram`. The
    query sums over every slot of the chain (``nodes`` is None) and its released vector is
    the concatenation of its :meth:`parts`, one per window, in time order.

    Examples
    --------
    >>> isinstance(WindowedCount(1, 3), WindowedQuery)
    True
    """

    width: int
    lipschitz: ClassVar[float] = 1.0

    def __init__(self, width: int) -> None:
        if isinstance(width, (bool, np.bool_)) or not isinstance(width, numbers.Integral):
            raise ParameterTypeError(f"width must be a whole number of slots (an int >= 1), "
                                     f"got the {type(width).__name__} {width!r}")
        if width < 1:
            raise InvalidParameterError(
                f"width must be >= 1 slot, got {width}; a window holds at least one slot")
        object.__setattr__(self, "width", int(width))

    @property
    def nodes(self) -> None:
        """None: the windows cover every slot of the chain."""
        return None

    def windows(self, scenarios: ScenarioClass | Scenario) -> tuple[range, ...]:
        """The windows ``[0, w), [w, 2w), ...`` of slots; the last may be shorter.

        Raises
        ------
        InvalidParameterError
            The scenarios are not Markov chains, or ``width`` exceeds the chain's length.
        """
        cls = as_class(scenarios)
        if cls.kind != "chain":
            raise InvalidParameterError(
                f"{self.name} needs Markov chains (slots in time order); a Bayesian network's "
                "node order is topological, not time, so it has no windows. Release "
                "Count(state, nodes=[...]) for each group of nodes instead")
        length = len(cls.nodes)
        if self.width > length:
            raise InvalidParameterError(
                f"window width {self.width} exceeds the chain's length {length}; use a width "
                f"between 1 and {length}")
        return tuple(range(lo, min(lo + self.width, length))
                     for lo in range(0, length, self.width))

    def node_list(self, scenarios: ScenarioClass | Scenario) -> Sequence:
        """Every slot of the chain, in time order (each lies in exactly one window)."""
        self.windows(scenarios)
        return tuple(as_class(scenarios).nodes)

    def lipschitz_for(self, scenarios: ScenarioClass | Scenario) -> float:
        """L: the L1 distance the vector moves when one slot changes (checks the query)."""
        self.windows(scenarios)
        return self.lipschitz

    def answer_codes(self, scenarios: ScenarioClass | Scenario,
                     codes: np.ndarray) -> np.ndarray:
        """The exact answers ``(n, len(coordinates))`` for state codes ``(n, T)`` (time order).

        Examples
        --------
        >>> from pufferfish_pgm.scenarios import MarkovChainScenario
        >>> mc = MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 5)
        >>> codes = np.array([[0, 1, 1, 0, 1]])
        >>> WindowedCount(1, 2).answer_codes(mc, codes).tolist()
        [[1, 1, 1]]
        >>> WindowedHistogram(3).answer_codes(mc, codes).tolist()
        [[1, 2, 1, 1]]
        """
        cls = as_class(scenarios)
        starts = [w.start for w in self.windows(cls)]
        hits = self._indicators(cls, np.asarray(codes, dtype=np.int64))  # (n, T, per window)
        return np.add.reduceat(hits, starts, axis=1).reshape(len(codes), -1)

    @abstractmethod
    def _indicators(self, cls: ScenarioClass, codes: np.ndarray) -> np.ndarray:
        """``(n, T, c)`` 0/1 array: slot t counts towards the window's c coordinates."""

    @property
    @abstractmethod
    def name(self) -> str:
        """A short label, e.g. ``'windowed_count(walk, width=60)'``."""

    @abstractmethod
    def parts(self, scenarios: ScenarioClass | Scenario) -> tuple:
        """The per-window queries whose answers, concatenated, are the released vector."""

    @abstractmethod
    def coordinates(self, scenarios: ScenarioClass | Scenario) -> tuple[str, ...]:
        """Names of the released coordinates, e.g. ``'count(walk)@[0,60)'``."""


@dataclass(frozen=True, init=False)
class WindowedCount(WindowedQuery):
    """The count of ``state`` in each window of ``width`` slots: a vector, L = 1 in L1.

    Parameters
    ----------
    state : hashable
        The state counted (a state of the chain).
    width : int
        Slots per window (≥ 1, at most the chain's length); the last window is shorter when
        ``width`` does not divide the length.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> mc = MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 4)
    >>> q = WindowedCount(1, 2)
    >>> q.name, [p.name for p in q.parts(mc)], [p.nodes for p in q.parts(mc)]
    ('windowed_count(1, width=2)', ['count(1)', 'count(1)'], [(0, 1), (2, 3)])
    >>> WindowedCount(1, 0)
    Traceback (most recent call last):
    ...
    pufferfish_pgm.errors.InvalidParameterError: width must be >= 1 slot, got 0; a window ...
    """

    state: Any = None

    def __init__(self, state: Any, width: int) -> None:
        super().__init__(width)
        object.__setattr__(self, "state", state)

    @property
    def name(self) -> str:
        return f"windowed_count({self.state}, width={self.width})"

    def lipschitz_for(self, scenarios: ScenarioClass | Scenario) -> float:
        """1.0, after checking the windows and the state (a chain's slots share the states)."""
        cls = as_class(scenarios)
        lipschitz = super().lipschitz_for(cls)
        cls.state_index(cls.nodes[0], self.state)
        return lipschitz

    def _indicators(self, cls: ScenarioClass, codes: np.ndarray) -> np.ndarray:
        code = cls.state_index(cls.nodes[0], self.state)
        return (codes == code).astype(np.int64)[:, :, None]

    def parts(self, scenarios: ScenarioClass | Scenario) -> tuple[Count, ...]:
        """One :class:`Count` of ``state`` per window."""
        return tuple(Count(self.state, tuple(w)) for w in self.windows(scenarios))

    def coordinates(self, scenarios: ScenarioClass | Scenario) -> tuple[str, ...]:
        """``'count(state)@[lo,hi)'`` per window."""
        return tuple(f"count({self.state}){_window_label(w)}"
                     for w in self.windows(scenarios))


@dataclass(frozen=True, init=False)
class WindowedHistogram(WindowedQuery):
    """The count of every state in each window: windows × states, L = 2 in L1.

    The vector lists window 0's counts in the model's state order, then window 1's, and so
    on; ``value.reshape(-1, k)`` of a single record's release gives one row per window.

    Parameters
    ----------
    width : int
        Slots per window (≥ 1, at most the chain's length); the last window is shorter when
        ``width`` does not divide the length.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> mc = MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 3, states=["a", "b"])
    >>> q = WindowedHistogram(2)
    >>> q.lipschitz_for(mc), q.coordinates(mc)
    (2.0, ('count(a)@[0,2)', 'count(b)@[0,2)', 'count(a)@[2,3)', 'count(b)@[2,3)'))
    """

    lipschitz: ClassVar[float] = 2.0

    @property
    def name(self) -> str:
        return f"windowed_histogram(width={self.width})"

    def _indicators(self, cls: ScenarioClass, codes: np.ndarray) -> np.ndarray:
        k = len(cls.states_of(cls.nodes[0]))
        return (codes[:, :, None] == np.arange(k)).astype(np.int64)

    def parts(self, scenarios: ScenarioClass | Scenario) -> tuple[Histogram, ...]:
        """One :class:`Histogram` per window."""
        return tuple(Histogram(tuple(w)) for w in self.windows(scenarios))

    def coordinates(self, scenarios: ScenarioClass | Scenario) -> tuple[str, ...]:
        """``'count(state)@[lo,hi)'`` per window and state, window by window."""
        cls = as_class(scenarios)
        states = cls.states_of(cls.nodes[0])
        return tuple(f"count({s}){_window_label(w)}"
                     for w in self.windows(cls) for s in states)
