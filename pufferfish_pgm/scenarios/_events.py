"""Activity event logs to fixed time slots: one row of state labels per (user, day).

Real activity data arrive as event logs, one row per interval: who, from when, until when,
doing what. Mechanisms and chain fitting take the *wide* format instead: one row per sequence
(here one calendar day of one user) and one column per time slot.
:func:`sequences_from_events` turns the first into the second; :func:`read_ordonez` reads the
Ordóñez ADL files (``OrdonezA_ADLs.txt``, ``OrdonezB_ADLs.txt``) into the long format and can
repair their known defects, saying what it changed.
The slot length, the slot labels and the two slot rules are in :mod:`._event_slots`.

pandas is imported inside the functions, as elsewhere in the package, so that importing
``pufferfish_pgm`` stays fast.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

import numpy as np

from .._budget import check_allocation
from ..errors import InvalidDataError, InvalidParameterError, ParameterTypeError
from ._event_files import _load, read_ordonez  # noqa: F401  (imported from here too)
from ._event_records import DAY_NS, _is_missing, _validate
from ._event_slots import RULES, _gap_error, _majority, _midpoint, _slot_labels, _slot_ns

if TYPE_CHECKING:
    import pandas as pd  # type: ignore[import-untyped]  # (no pandas-stubs installed)

__all__ = ["sequences_from_events"]


def sequences_from_events(events: Any, *, slot: Any, user: Hashable = "user",
                          start: Hashable = "start", end: Hashable = "end",
                          state: Hashable = "state", fill: Any = None,
                          rule: str = "midpoint",
                          memory_budget: int | float | str | None = None) -> pd.DataFrame:
    """One row of slot labels per (user, calendar day) from a log of activity intervals.

    Parameters
    ----------
    events : pandas.DataFrame, str or os.PathLike
        The log in long format, one interval per row, with the columns named by ``user``,
        ``start``, ``end`` and ``state`` (other columns are ignored). A path is read as an
        Ordóñez ADL file when its first line is the header ``Start time  End time  Activity``
        (see :func:`read_ordonez`; the whole file is one user, named after the file, e.g.
        ``"OrdonezA"``), else as a CSV file with a header line. Times are datetimes or strings
        pandas can read (``"2011-11-28 02:27:59"``). Naive times are local wall-clock times;
        times with a UTC offset or a time zone are converted to UTC (see Notes, *Times*).
    slot : str or pandas.Timedelta or datetime.timedelta
        Slot length: a pandas duration string such as ``"10min"``, ``"1min"``, ``"1h"``. It
        must divide a day evenly and be at least one second.
    user, start, end, state : hashable
        Column names in ``events``.
    fill : optional
        State for slots the log does not cover (a gap between intervals), e.g. ``"Idle"``.
        With ``None`` (the default) such a slot is an error that names the user, day and slot.
    rule : {"midpoint", "majority"}
        ``"midpoint"``: a slot takes the state of the interval ``[start, end)`` (start
        inclusive, end exclusive) that covers the slot's midpoint, ``fill`` if none does.
        ``"majority"``: a slot takes the state that covers the largest part of it (the time of
        several intervals with the same state in one slot is added up); ``fill`` takes it when
        the uncovered part is strictly larger than every state's part. Ties between states go
        to the state that occurs first within the slot, and a state beats ``fill`` on a tie
        (an observation is preferred to the absence of one): the result never depends on row
        order or on how states are named.
    memory_budget : int, float or str, optional
        The most the table of slots may take (bytes or e.g. ``"2GB"``; about 40 bytes per
        slot while it is built): a longer log raises
        :class:`~pufferfish_pgm.errors.LimitExceededError` before any slot is built. Default:
        ``PUFFERFISH_PGM_MEMORY_BUDGET``, else a quarter of the machine's memory.

    Returns
    -------
    pandas.DataFrame
        Index: a MultiIndex of (user, day), named ``(user, "day")``, the day a
        ``datetime64`` midnight; rows are sorted by user, then day. Columns: the slot start
        times as strings, ``"00:00", "00:10", ...`` (``"hh:mm:ss"`` when the slot is not a
        whole number of minutes). Values: the states (and ``fill``).

        This is the wide format that :meth:`Calibration.release`,
        :meth:`MarkovChainScenario.fit` and :meth:`ScenarioClass.fit_groups` read: one row
        per sequence, the columns in time order (for one chain per user, pass
        ``result.index.get_level_values(0)`` as the groups).

    Notes
    -----
    **Days.** The rows are the whole calendar days strictly between a user's first day with an
    event (the day of the earliest start) and last day with an event (the day of the latest
    instant covered, so an interval ending at midnight does not count for the next day). The
    first and last days are dropped because the log only starts (and stops) part way through
    them: the time before the first interval is not a gap in the activity but a time nobody
    recorded, so filling it would invent states, and every row must have the same number of
    slots. The days in between are kept even when they have no event at all (their slots take
    ``fill``). A user with fewer than three calendar days contributes no row.

    **Times.** The whole log is read one way. *Offsets*: times with a UTC offset
    (``"2024-03-31T03:30:00+02:00"``, also several offsets in one log, as across a
    daylight-saving change) and tz-aware columns are converted to UTC, and the days and slots
    are then UTC days and times. UTC keeps the slot arithmetic exact: every day has 24 hours
    and every interval its real length, where local wall-clock times would give the day of a
    change 23 or 25 hours (an hour of slots that never happened, or an hour that happens
    twice, whose intervals overlap or run backwards). For slots in local time convert first,
    ``pd.to_datetime(col, utc=True).dt.tz_convert("Europe/Madrid").dt.tz_localize(None)``,
    and settle the repeated autumn hour yourself. Every time carries an offset, or none does.
    *Dates*: numeric dates with day and month before the year (``01/02/2024``) are read in
    one order for the whole log: day first when some date has a first number above 12, month
    first when some has a second number above 12 (both is an error); when no date decides,
    month first as pandas does (``01/02/2024`` is 2 January), with an
    :class:`~pufferfish_pgm.errors.AmbiguousDateWarning`. ISO dates are never ambiguous.
    *Range*: slots are computed in pandas' nanosecond timestamps, so times must lie between
    1677-09-21 00:12:44 and 2262-04-11 23:47:16 (pandas 1.5, still supported, has no coarser
    unit); a time outside is an error naming the row, never moved. In an activity log it is a
    typo (2300 for 2030), and a log from 2030 to 2300 would be a hundred thousand days.

    **Clean logs only.** An error names the row (the index label of a DataFrame, the line of a
    file) and the value, and says how to fix it: a missing value, an unreadable time, an end
    before its start, and two intervals of one user that overlap (touching intervals, one
    ending when the next starts, are fine; an empty interval ``start == end`` covers nothing
    and is ignored). For the Ordóñez files, which have such defects, see
    ``read_ordonez(path, repair=True)``.

    **Cost.** Memory is linear in the number of slots plus intervals and time is that times
    a logarithm (a sort and binary searches; no Python loop over slots or intervals, one over
    users): the midpoint rule locates every slot midpoint with one binary search over a user's
    sorted interval starts; the majority rule adds up, for every interval, its overlap with
    each slot it touches (a user's disjoint intervals touch at most slots + 2 x intervals
    slot cells). One year of one-minute slots of one user takes about 0.1 s (midpoint) to
    0.3 s (majority) of CPU from 100,000 intervals with ISO string times and 0.35 to 0.6 s
    from 525,600 (one a minute); datetime columns save the parsing, month-first strings take
    about 2 s (``benchmarks/bench_events.py``, which also measures the peak memory).

    Warns
    -----
    AmbiguousDateWarning
        The day and month of the log's numeric dates can be swapped (see Notes, *Times*).

    Raises
    ------
    InvalidDataError
        The log is malformed (see Notes), a time is out of range, dates are written both day
        first and month first, only some times carry a UTC offset, a slot is uncovered and
        ``fill`` is ``None``, or no user has a whole day.
    InvalidParameterError, ParameterTypeError
        A bad ``slot``, ``rule`` or ``fill``, a column name that ``events`` does not have, or
        ``events`` of a type that is not read.

    Examples
    --------
    Ann's log covers 1 to 3 January; only the 2nd is a whole day. Six-hour slots:

    >>> import pandas as pd
    >>> events = pd.DataFrame({
    ...     "user": ["ann", "ann", "ann", "ann"],
    ...     "start": ["2024-01-01 22:00", "2024-01-02 08:30", "2024-01-02 09:30",
    ...               "2024-01-02 19:00"],
    ...     "end": ["2024-01-02 07:00", "2024-01-02 09:15", "2024-01-02 13:30",
    ...             "2024-01-03 07:00"],
    ...     "state": ["sleep", "eat", "work", "sleep"]})
    >>> sequences_from_events(events, slot="6h", fill="idle")  # doctest: +NORMALIZE_WHITESPACE
                     00:00 06:00 12:00  18:00
    user day
    ann  2024-01-02  sleep   eat  idle  sleep
    >>> sequences_from_events(events, slot="6h", fill="idle", rule="majority")
    ... # doctest: +NORMALIZE_WHITESPACE
                     00:00 06:00 12:00  18:00
    user day
    ann  2024-01-02  sleep  work  idle  sleep

    The 06:00 slot's midpoint (09:00) falls in the meal, but work covers most of the slot
    (2.5 h against 1.75 h uncovered, 1 h asleep and 0.75 h eating). Without ``fill`` the gap
    from 13:30 to 19:00 is an error:

    >>> sequences_from_events(events, slot="6h")
    Traceback (most recent call last):
    ...
    pufferfish_pgm.errors.InvalidDataError: user 'ann', day 2024-01-02, slot '12:00': no \
interval covers the slot's midpoint (15:00:00); 1 slot of this user is uncovered in all; pass \
fill=<state> (e.g. fill='Idle') to label gaps, or complete the log

    The result feeds a chain fit (one sequence per row) and a release directly:

    >>> import pufferfish_pgm as pp
    >>> wide = sequences_from_events(events, slot="6h", fill="idle")
    >>> chain = pp.MarkovChainScenario.fit(wide, pseudocount=0.5)
    >>> chain.states, chain.length
    (('eat', 'idle', 'sleep'), 4)
    """
    import pandas as pd

    slot_ns = _slot_ns(slot)
    names = _check_options(rule, fill, {"user": user, "start": start, "end": end,
                                        "state": state})
    table, where, hint = _load(events, names)
    log = _validate(table, names, where, hint)
    per_day = DAY_NS // slot_ns
    _check_slot_memory(log, per_day, memory_budget)
    labels = _slot_labels(slot_ns, per_day)
    codes, owners, day_numbers = _user_days(log, slot_ns, labels, rule, fill)
    states = log.state_names
    lookup = np.empty(len(states) + 1, dtype=object)
    lookup[:len(states)] = states
    lookup[len(states)] = fill
    users = np.asarray(log.user_names, dtype=object)[owners]
    days = pd.to_datetime(day_numbers * DAY_NS, unit="ns")
    index = pd.MultiIndex.from_arrays([users, days], names=[user, "day"])
    return pd.DataFrame(lookup[codes], index=index, columns=pd.Index(labels.tolist()))


def _check_options(rule: Any, fill: Any, names: dict[str, Any]) -> dict[str, Hashable]:
    """The slot rule, the fill label and the four column names, checked."""
    if not isinstance(rule, str) or rule not in RULES:
        raise InvalidParameterError(
            f"rule must be one of {list(RULES)}, got {rule!r}; 'midpoint' labels a slot by the "
            "interval covering its midpoint, 'majority' by the state covering most of it")
    if fill is not None and (not isinstance(fill, Hashable) or _is_missing(fill)):
        raise InvalidParameterError(
            f"fill must be a state label such as 'Idle' (or None to forbid gaps), got {fill!r}")
    return _check_columns(names)


def _check_columns(names: dict[str, Any]) -> dict[str, Hashable]:
    """The four column names (``{"user": ..., "start": ..., ...}``), checked: hashable and
    different."""
    for arg, col in names.items():
        if not isinstance(col, Hashable):
            raise ParameterTypeError(
                f"{arg}= must be a column name, got the {type(col).__name__} {col!r}")
    if len(set(names.values())) < len(names):
        raise InvalidParameterError(
            f"user, start, end and state must name four different columns, got {names}")
    return names


def _user_days(log: Any, slot_ns: int, labels: np.ndarray, rule: str,
               fill: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every whole day's slot codes (``(days, per_day)``; ``len(states)`` for ``fill``), the
    user code and the day number of each row.

    One iteration per user, not per slot: each user has their own range of days, and all of
    a user's slots are labelled at once (vectorised); users are few next to slots."""
    per_day = DAY_NS // slot_ns
    states = log.state_names
    known = np.flatnonzero(np.asarray([bool(s == fill) for s in states], dtype=bool))
    fill_code = int(known[0]) if fill is not None and len(known) else len(states)
    rows_codes, rows_user, rows_day = [], [], []
    for u in range(len(log.user_names)):
        first, n_days = log.first_day[u], int(log.last_day[u] - log.first_day[u] - 1)
        if n_days <= 0:
            continue
        origin = (first + 1) * DAY_NS
        slots = _label_user(log, u, origin, slot_ns, n_days * per_day, rule)
        missing = np.flatnonzero(slots < 0)
        if len(missing) and fill is None:
            raise _gap_error(log.user_names[u], origin, int(missing[0]), len(missing),
                             slot_ns, labels, rule)
        slots[missing] = fill_code
        rows_codes.append(slots.reshape(n_days, per_day))
        rows_user.append(np.full(n_days, u))
        rows_day.append(first + 1 + np.arange(n_days))
    if not rows_codes:
        raise InvalidDataError(
            "no user has a whole calendar day between their first and last day with an event "
            f"(users: {list(log.user_names)[:10]}); the partial first and last days are dropped, "
            "so give a log that spans at least three calendar days")
    return np.concatenate(rows_codes), np.concatenate(rows_user), np.concatenate(rows_day)


def _label_user(log: Any, u: int, origin: int, slot_ns: int, total: int,
                rule: str) -> np.ndarray:
    """User ``u``'s slot codes from ``origin`` on (-1 where no interval labels a slot)."""
    lo, hi = log.bounds[u], log.bounds[u + 1]
    s, e, code = log.start[lo:hi] - origin, log.end[lo:hi] - origin, log.code[lo:hi]
    if rule == "midpoint":
        return _midpoint(s, e, code, slot_ns, total)
    return _majority(s, e, code, slot_ns, total, len(log.state_names))


# ---------------------------------------------------------------------------------------------
# memory


#: Bytes held per slot while the table is built: the codes (int64), their concatenation, the
#: object array of labels and pandas' copy of it.
SLOT_BYTES = 40


def _check_slot_memory(log: Any, per_day: int, budget: int | float | str | None) -> None:
    """Refuse, before any slot is built, a table of slots past the memory budget (a typo year
    such as 2204 for 2024 would make 65,000 days of slots per user)."""
    days = np.clip(np.asarray(log.last_day) - np.asarray(log.first_day) - 1, 0, None)
    longest = int(np.argmax(days)) if len(days) else 0
    check_allocation(float(days.sum()) * per_day * SLOT_BYTES, budget=budget, what=(
        f"the table of {int(days.sum()):,} days x {per_day:,} slots (user "
        f"{log.user_names[longest]!r} alone spans {int(days[longest]):,} days: check the "
        "log's dates for a typo)"))
