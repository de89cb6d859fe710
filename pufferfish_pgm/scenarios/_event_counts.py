"""Counts of a state per (user, day), or per window of a day, straight from an event log.

:func:`event_counts` gives what ``Count(state)`` or ``WindowedCount(state, width)`` answers
on the table :func:`~pufferfish_pgm.scenarios.sequences_from_events` would build, without
building it: a day of one-minute slots is 1,440 labels, but a day of activity is ~50
intervals. It reads and validates the log as ``sequences_from_events`` does (same columns,
same errors) and labels slots by the same rule, by overlap arithmetic on intervals:

* ``"midpoint"``: slot ``j`` belongs to the interval ``[s, e)`` holding its midpoint, so an
  interval owns the slots ``ceil((2s - slot) / 2slot) <= j < ceil((2e - slot) / 2slot)``, a
  range; the intervals of a user are disjoint, so the ranges are too.
* ``"majority"``: a slot inside one interval takes its state; the only slots several intervals
  (or a gap) share are the first and last slot an interval touches, at most two per interval.
  Those *mixed* slots are labelled by the slotted path's own rule (the same function, on the
  mixed slots alone), the others by ranges.

The count of a state in a window is then a difference of a prefix sum over sorted ranges,
``O((intervals + windows) log intervals)`` time and memory whatever the slot length; uncovered
slots count for ``fill``.

Examples
--------
>>> import pandas as pd
>>> events = pd.DataFrame({
...     "user": ["ann", "ann", "ann", "ann"],
...     "start": ["2024-01-01 22:00", "2024-01-02 08:30", "2024-01-02 09:30",
...               "2024-01-02 19:00"],
...     "end": ["2024-01-02 07:00", "2024-01-02 09:15", "2024-01-02 13:30",
...             "2024-01-03 07:00"],
...     "state": ["sleep", "eat", "work", "sleep"]})
>>> event_counts(events, "sleep", slot="1min", fill="idle").tolist()   # 7 h + 5 h
[720]
>>> event_counts(events, "work", slot="6h", fill="idle", rule="majority", width=2)
... # doctest: +NORMALIZE_WHITESPACE
                 count(work)@[0,2)  count(work)@[2,4)
user day
ann  2024-01-02                  1                  0
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from ..errors import InvalidDataError, InvalidParameterError, ParameterTypeError
from ._event_files import _load
from ._event_records import DAY_NS, _is_missing, _validate
from ._event_slots import RULES, _gap_error, _majority, _slot_labels, _slot_ns
from ._events import _check_columns
from ._fit import _state_list
from ._time_varying import block_count, check_period
from ._transition_counts import TransitionCounts

__all__ = ["event_counts", "event_transition_counts"]


def event_counts(events: Any, count: Any, *, slot: Any, width: int | None = None,
                 user: Hashable = "user", start: Hashable = "start", end: Hashable = "end",
                 state: Hashable = "state", fill: Any = None, rule: str = "midpoint") -> Any:
    """How many slots of each (user, day) have the state ``count``, from intervals.

    Parameters
    ----------
    events, slot, user, start, end, state, fill, rule
        As for :func:`~pufferfish_pgm.scenarios.sequences_from_events` (the same log, slot
        rule, days and errors).
    count : hashable
        The state counted (a state of the log or ``fill``; another label counts 0).
    width : int, optional
        Slots per window, as :class:`~pufferfish_pgm.queries.WindowedCount` takes it; None
        counts the whole day, as :class:`~pufferfish_pgm.queries.Count` does.

    Returns
    -------
    pandas.Series or pandas.DataFrame
        Indexed by (user, day) like ``sequences_from_events``; a Series named
        ``'count(<count>)'`` for the whole day, else a DataFrame with one int64 column per
        window named ``'count(<count>)@[lo,hi)'`` (slot numbers): equal to what the release
        evaluates on the slotted table.

    Raises
    ------
    InvalidDataError, InvalidParameterError, ParameterTypeError
        As ``sequences_from_events``, and a ``width`` that is not 1 .. slots per day.
    """
    slots, days, per_day, step = _read(events, slot, width, user, start, end, state, fill,
                                       rule)
    edges = _edges(days, per_day, step)
    covered = slots.count(edges, None)
    uncovered = np.diff(edges, axis=1) - covered
    if fill is None and uncovered.any():
        raise slots.gap_error(edges, uncovered)
    target = [i for i, s in enumerate(slots.log.state_names) if bool(s == count)]
    hits = slots.count(edges, target[0]) if target else np.zeros_like(covered)
    if fill is not None and bool(fill == count):
        hits += uncovered
    return _labelled(hits, slots.log, days, user, count, width, per_day, step)


def _read(events: Any, slot: Any, width: int | None, user: Hashable, start: Hashable,
          end: Hashable, state: Hashable, fill: Any, rule: str
          ) -> tuple[_Slots, np.ndarray, int, int]:
    """The log as slot ranges, the whole days per user, the slots per day and per window."""
    slot_ns = _slot_ns(slot)
    per_day = DAY_NS // slot_ns
    step = _check(rule, fill, width, per_day)
    names = _check_columns({"user": user, "start": start, "end": end, "state": state})
    table, where, hint = _load(events, names)
    log = _validate(table, names, where, hint)
    days = np.clip(log.last_day - log.first_day - 1, 0, None).astype(np.int64)
    if not days.any():
        raise InvalidDataError(
            "no user has a whole calendar day between their first and last day with an event "
            f"(users: {list(log.user_names)[:10]}); the partial first and last days are dropped, "
            "so give a log that spans at least three calendar days")
    return _Slots(log, days, per_day, slot_ns, rule), days, per_day, step


def _check(rule: Any, fill: Any, width: Any, per_day: int) -> int:
    """The window width in slots after checking ``rule``, ``fill`` and ``width``."""
    if not isinstance(rule, str) or rule not in RULES:
        raise InvalidParameterError(
            f"rule must be one of {list(RULES)}, got {rule!r}; 'midpoint' labels a slot by the "
            "interval covering its midpoint, 'majority' by the state covering most of it")
    if fill is not None and (not isinstance(fill, Hashable) or _is_missing(fill)):
        raise InvalidParameterError(
            f"fill must be a state label such as 'Idle' (or None to forbid gaps), got {fill!r}")
    if width is None:
        return per_day
    if isinstance(width, (bool, np.bool_)) or not isinstance(width, (int, np.integer)):
        raise ParameterTypeError(f"width must be a whole number of slots, got {width!r}")
    if not 1 <= width <= per_day:
        raise InvalidParameterError(f"width must be 1 .. {per_day} slots (a day), got {width}")
    return int(width)


def _edges(days: np.ndarray, per_day: int, step: int) -> np.ndarray:
    """Global slot numbers of the window edges, one row per (user, day): ``(rows, w + 1)``."""
    day_starts = np.arange(int(days.sum()), dtype=np.int64) * per_day
    cuts = np.append(np.arange(0, per_day, step, dtype=np.int64), per_day)
    return day_starts[:, None] + cuts[None, :]


class _Slots:
    """A log's slot labels as sorted ranges ``[lo, hi)`` of global slot numbers (a user's
    whole days end to end) plus, for the majority rule, single mixed slots."""

    def __init__(self, log: Any, days: np.ndarray, per_day: int, slot: int, rule: str) -> None:
        self.log, self.slot, self.rule, self.per_day = log, slot, rule, per_day
        owner = np.repeat(np.arange(len(days)), np.diff(log.bounds))
        self.base = np.concatenate([[0], np.cumsum(days * per_day)])
        n = (days * per_day)[owner]
        origin = (log.first_day[owner] + 1) * DAY_NS
        s, e = log.start - origin, log.end - origin
        if rule == "midpoint":
            lo, hi = -((slot - 2 * s) // (2 * slot)), -((slot - 2 * e) // (2 * slot))
            self.single = np.zeros(0, dtype=np.int64)
            self.single_code = np.zeros(0, dtype=np.int64)
        else:
            s, e = np.clip(s, 0, n * slot), np.clip(e, 0, n * slot)
            lo, hi = -(-s // slot), e // slot
            self._mixed(s, e, log.code, self.base[owner])
        self.lo = np.clip(lo, 0, n) + self.base[owner]
        self.hi = np.maximum(np.clip(hi, 0, n) + self.base[owner], self.lo)
        self.code = np.asarray(log.code, dtype=np.int64)

    def _mixed(self, s: np.ndarray, e: np.ndarray, code: np.ndarray, base: np.ndarray) -> None:
        """Label the slots no single interval covers by the slotted path's majority rule."""
        slot = self.slot
        real = e > s
        first, last = s // slot, (e - 1) // slot
        head = real & ~((s % slot == 0) & (e >= (first + 1) * slot))
        tail = real & ~((e % slot == 0) & (s <= last * slot)) & (last != first)
        which = np.concatenate([np.flatnonzero(head), np.flatnonzero(tail)])
        at = np.concatenate([first[head], last[tail]])
        order = np.lexsort((at, which))                 # by interval, then slot: time order
        which, at = which[order], at[order]
        glob = at + base[which]
        self.single = np.unique(glob)
        rank = np.searchsorted(self.single, glob)
        lo = rank * slot + np.maximum(s[which], at * slot) - at * slot
        hi = rank * slot + np.minimum(e[which], (at + 1) * slot) - at * slot
        self.single_code = _majority(lo, hi, np.asarray(code)[which], slot, len(self.single),
                                     len(self.log.state_names))

    def count(self, edges: np.ndarray, code: int | None) -> np.ndarray:
        """Slots labelled ``code`` (any state for None) in each window between ``edges``."""
        keep = slice(None) if code is None else self.code == code
        lo, hi = self.lo[keep], self.hi[keep]
        cum = np.concatenate([[0], np.cumsum(hi - lo)])
        k = np.searchsorted(lo, edges, side="right") - 1
        safe = np.maximum(k, 0)
        inside = np.where(k >= 0, np.clip(edges - lo[safe], 0, (hi - lo)[safe]), 0)
        total = np.where(k >= 0, cum[safe], 0) + inside
        marks = self.single[(self.single_code >= 0) if code is None else self.single_code == code]
        total = total + np.searchsorted(marks, edges)
        return np.diff(total, axis=1)

    def gap_error(self, edges: np.ndarray, uncovered: np.ndarray) -> InvalidDataError:
        """The slotted path's error for the first uncovered slot, naming user, day and slot."""
        row = int(np.flatnonzero(uncovered.any(axis=1))[0])
        a, b = int(edges[row, 0]), int(edges[row, -1])
        covered = np.zeros(b - a, dtype=bool)
        for lo, hi in zip(self.lo.tolist(), self.hi.tolist(), strict=True):
            if hi > a and lo < b:
                covered[max(lo, a) - a:min(hi, b) - a] = True
        marks = self.single[self.single_code >= 0]
        covered[marks[(marks >= a) & (marks < b)] - a] = True
        u = int(np.searchsorted(self.base, a, side="right") - 1)
        origin = int((self.log.first_day[u] + 1) * DAY_NS)
        total = int(uncovered[self._rows_of(u)].sum())
        return _gap_error(self.log.user_names[u], origin, a - int(self.base[u])
                          + int(np.argmin(covered)), total, self.slot,
                          _slot_labels(self.slot, self.per_day), self.rule)

    def _rows_of(self, u: int) -> slice:
        return slice(int(self.base[u]) // self.per_day, int(self.base[u + 1]) // self.per_day)


def _labelled(hits: np.ndarray, log: Any, days: np.ndarray, user: Hashable, count: Any,
              width: int | None, per_day: int, step: int) -> Any:
    """The counts as pandas, indexed by (user, day) like ``sequences_from_events``."""
    import pandas as pd  # type: ignore[import-untyped]

    owner = np.repeat(np.arange(len(days)), days)
    first = np.arange(int(days.sum())) - np.repeat(np.cumsum(days) - days, days)
    day = (log.first_day[owner] + 1 + first) * DAY_NS
    index = pd.MultiIndex.from_arrays(
        [np.asarray(log.user_names, dtype=object)[owner], pd.to_datetime(day, unit="ns")],
        names=[user, "day"])
    if width is None:
        return pd.Series(hits[:, 0].astype(np.int64), index=index, name=f"count({count})")
    cols = [f"count({count})@[{lo},{min(lo + step, per_day)})"
            for lo in range(0, per_day, step)]
    return pd.DataFrame(hits.astype(np.int64), index=index, columns=cols)


def event_transition_counts(events: Any, *, slot: Any, user: Hashable = "user",
                            start: Hashable = "start", end: Hashable = "end",
                            state: Hashable = "state", fill: Any = None, rule: str = "midpoint",
                            states: Sequence | None = None,
                            period: int | None = None) -> TransitionCounts:
    """The transition counts of the days of an event log, from its intervals: Θ's partial.

    Equal to ``transition_counts(sequences_from_events(events, ...), states)`` (one sequence
    per (user, day), so no transition across midnight) without building the slots: inside an
    interval's slots every step stays in its state, so the counts need one pass over the
    intervals and the days, ``O((intervals + days) log intervals)``.

    Parameters
    ----------
    events, slot, user, start, end, state, fill, rule
        As for :func:`~pufferfish_pgm.scenarios.sequences_from_events`.
    states : sequence, optional
        The states and their order; by default the labels that occur in the slots, sorted.
    period : int, optional
        Count per block of ``period`` start slots of the day, as
        ``transition_counts(..., period=period)``: ``.chain(shrinkage=...)`` then fits the
        time-of-day chain of ``MarkovChainScenario.fit(..., period=period)``.

    Returns
    -------
    TransitionCounts
        Add the partials of several batches with ``+``; ``.chain()`` fits the chain.

    Raises
    ------
    InvalidDataError, InvalidParameterError
        As ``sequences_from_events``; a slot label outside ``states``.

    Examples
    --------
    >>> import pandas as pd
    >>> log = pd.DataFrame({"user": ["ann"] * 2, "start": ["2024-01-01", "2024-01-02 18:00"],
    ...                     "end": ["2024-01-02 18:00", "2024-01-04"], "state": ["up", "down"]})
    >>> counts = event_transition_counts(log, slot="6h")   # one whole day: up, up, up, down
    >>> counts.states, counts.transitions.tolist(), counts.initial.tolist(), counts.longest
    (('down', 'up'), [[0, 0], [1, 2]], [0, 1], 4)
    >>> event_transition_counts(log, slot="6h", period=2).transitions.tolist()  # slots 0-1, 2-3
    [[[0, 0], [0, 2]], [[0, 0], [1, 0]]]
    """
    period = None if period is None else check_period(period)
    slots, days, per_day, _ = _read(events, slot, None, user, start, end, state, fill, rule)
    bounds, codes = _runs(slots, days, per_day)
    names = list(slots.log.state_names)
    if (codes < 0).any():
        if fill is None:
            edges = _edges(days, per_day, per_day)
            raise slots.gap_error(edges, np.diff(edges, axis=1) - slots.count(edges, None))
        where = [i for i, s in enumerate(names) if bool(s == fill)]
        codes = np.where(codes < 0, where[0] if where else len(names), codes)
        names += [] if where else [fill]
    return _tally(bounds, codes, names, per_day, states, period)


def _runs(slots: _Slots, days: np.ndarray, per_day: int) -> tuple[np.ndarray, np.ndarray]:
    """The slots of every whole day as runs of one label: the run bounds (day starts among
    them) and each run's state code, -1 where no interval covers it."""
    full = slots.hi > slots.lo
    lo, hi, code = slots.lo[full], slots.hi[full], slots.code[full]
    marked = slots.single_code >= 0
    single, single_code = slots.single[marked], slots.single_code[marked]
    day_starts = np.arange(int(days.sum()) + 1, dtype=np.int64) * per_day
    bounds = np.sort(np.concatenate([lo, hi, single, single + 1, day_starts]))
    bounds = bounds[np.append(True, bounds[1:] != bounds[:-1])]   # np.unique hashes: slower
    bounds = bounds[bounds <= day_starts[-1]]
    at = bounds[:-1]
    r = np.searchsorted(lo, at, side="right") - 1
    inside = (r >= 0) & (at < hi[np.maximum(r, 0)]) if len(lo) else np.zeros(len(at), bool)
    q = np.minimum(np.searchsorted(single, at), max(len(single) - 1, 0))
    marks = (single[q] == at) if len(single) else np.zeros(len(at), bool)
    codes = np.where(inside, code[np.maximum(r, 0)] if len(lo) else -1,
                     np.where(marks, single_code[q] if len(single) else -1, -1))
    return bounds, codes.astype(np.int64)


def _tally(bounds: np.ndarray, codes: np.ndarray, names: list, per_day: int,
           states: Sequence | None, period: int | None = None) -> TransitionCounts:
    """Self-steps inside runs, one step between runs of a day, the first run of each day;
    per block of ``period`` start slots when given."""
    k = len(names)
    blocks = 1 if period is None else block_count(per_day, period)
    trans = _self_steps(bounds, codes, k, per_day, period) if period else np.zeros(
        (1, k, k), dtype=np.int64)
    if period is None:
        trans[0][np.diag_indices(k)] = np.bincount(codes, weights=np.diff(bounds) - 1,
                                                   minlength=k)
    inner = bounds[1:-1] % per_day != 0
    block = ((bounds[1:-1][inner] - 1) % per_day) // (period or per_day)   # the step's start
    pairs = (block * k + codes[:-1][inner]) * k + codes[1:][inner]
    trans += np.bincount(pairs, minlength=blocks * k * k).reshape(blocks, k, k)
    first = np.bincount(codes[bounds[:-1] % per_day == 0], minlength=k).astype(np.int64)
    used = trans.any(axis=(0, 2)) | trans.any(axis=(0, 1)) | (first > 0)
    seen = np.flatnonzero(used)
    table = trans[:, seen[:, None], seen[None, :]]
    found = TransitionCounts(tuple(names[i] for i in seen), table if period else table[0],
                             first[seen], per_day, period)
    if states is not None:
        outside = [s for s in found.states if s not in set(states)]
        if outside:
            raise InvalidDataError(f"state {outside[0]!r} labels slots of the log but is not "
                                   f"among the given states {list(states)}; add it to states "
                                   "or clean the data")
    return found.over(_state_list([list(found.states)], None) if states is None else states)


def _self_steps(bounds: np.ndarray, codes: np.ndarray, k: int, per_day: int,
                period: int) -> np.ndarray:
    """``(H, k, k)`` with the steps that stay in a run on the diagonal, per block of their
    start slot: each run adds +1 from its first slot to (not including) its last in a
    difference array over (state, slot of the day), summed over runs by one bincount."""
    first = bounds[:-1] % per_day
    last = first + np.diff(bounds) - 1              # a run never crosses a day start
    where = np.concatenate([codes * (per_day + 1) + first, codes * (per_day + 1) + last])
    sign = np.concatenate([np.ones(len(first)), -np.ones(len(last))])
    diff = np.bincount(where, weights=sign, minlength=k * (per_day + 1)).reshape(k, per_day + 1)
    per_slot = np.cumsum(diff, axis=1)[:, :per_day].round().astype(np.int64)
    blocks = block_count(per_day, period)
    padded = np.zeros((k, blocks * period), dtype=np.int64)
    padded[:, :per_day] = per_slot
    trans = np.zeros((blocks, k, k), dtype=np.int64)
    trans[:, np.arange(k), np.arange(k)] = padded.reshape(k, blocks, period).sum(axis=2).T
    return trans
