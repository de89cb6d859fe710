"""Activity event logs to fixed time slots: one row of state labels per (user, day).

Real activity data arrive as event logs, one row per interval: who, from when, until when,
doing what. Mechanisms and chain fitting take the *wide* format instead: one row per sequence
(here one calendar day of one user) and one column per time slot.
:func:`sequences_from_events` turns the first into the second; :func:`read_ordonez` reads the
Ordóñez ADL files (``OrdonezA_ADLs.txt``, ``OrdonezB_ADLs.txt``) into the long format and can
repair their known defects, saying what it changed.

pandas is imported inside the functions, as elsewhere in the package, so that importing
``pufferfish_pgm`` stays fast.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Hashable
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InvalidDataError, InvalidParameterError, ParameterTypeError

if TYPE_CHECKING:
    import pandas as pd  # type: ignore[import-untyped]  # (no pandas-stubs installed)

__all__ = ["read_ordonez", "sequences_from_events"]

RULES = ("midpoint", "majority")
DAY_NS = 86_400 * 10**9
SECOND_NS = 10**9
ORDONEZ_HEADER = ("start time", "end time", "activity")
# the largest dense (segment x event) block built at once when repairing overlaps
_REPAIR_BLOCK = 4_000_000


def sequences_from_events(events: Any, *, slot: Any, user: Hashable = "user",
                          start: Hashable = "start", end: Hashable = "end",
                          state: Hashable = "state", fill: Any = None,
                          rule: str = "midpoint") -> pd.DataFrame:
    """One row of slot labels per (user, calendar day) from a log of activity intervals.

    Parameters
    ----------
    events : pandas.DataFrame, str or os.PathLike
        The log in long format, one interval per row, with the columns named by ``user``,
        ``start``, ``end`` and ``state`` (other columns are ignored). A path is read as an
        Ordóñez ADL file when its first line is the header ``Start time  End time  Activity``
        (see :func:`read_ordonez`; the whole file is one user, named after the file, e.g.
        ``"OrdonezA"``), else as a CSV file with a header line. Times are datetimes or strings
        pandas can read (``"2011-11-28 02:27:59"``), naive (local wall-clock time).
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
    slot cells). One year of one-minute slots of one user takes about 0.1 s from 100,000
    intervals and 0.2 to 0.6 s from 525,600 (one a minute).

    Raises
    ------
    InvalidDataError
        The log is malformed (see Notes), a slot is uncovered and ``fill`` is ``None``, or no
        user has a whole day.
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
    if not isinstance(rule, str) or rule not in RULES:
        raise InvalidParameterError(
            f"rule must be one of {list(RULES)}, got {rule!r}; 'midpoint' labels a slot by the "
            "interval covering its midpoint, 'majority' by the state covering most of it")
    if fill is not None and (not isinstance(fill, Hashable) or _is_missing(fill)):
        raise InvalidParameterError(
            f"fill must be a state label such as 'Idle' (or None to forbid gaps), got {fill!r}")
    names = {"user": user, "start": start, "end": end, "state": state}
    for arg, col in names.items():
        if not isinstance(col, Hashable):
            raise ParameterTypeError(
                f"{arg}= must be a column name, got the {type(col).__name__} {col!r}")
    if len(set(names.values())) < len(names):
        raise InvalidParameterError(
            f"user, start, end and state must name four different columns, got {names}")
    table, where, hint = _load(events, names)
    log = _validate(table, names, where, hint)

    per_day = DAY_NS // slot_ns
    labels = _slot_labels(slot_ns, per_day)
    states = log.state_names
    fill_code = len(states)
    if fill is not None:
        known = np.flatnonzero(np.asarray([bool(s == fill) for s in states], dtype=bool))
        fill_code = int(known[0]) if len(known) else fill_code

    rows_codes, rows_user, rows_day = [], [], []
    # One iteration per user, not per slot: each user has their own range of days, and all of
    # a user's slots are labelled at once (vectorised); users are few next to slots.
    for u in range(len(log.user_names)):
        lo, hi = log.bounds[u], log.bounds[u + 1]
        first, last = log.first_day[u], log.last_day[u]
        n_days = int(last - first - 1)
        if n_days <= 0:
            continue
        origin = (first + 1) * DAY_NS
        s, e, code = log.start[lo:hi] - origin, log.end[lo:hi] - origin, log.code[lo:hi]
        if rule == "midpoint":
            slots = _midpoint(s, e, code, slot_ns, n_days * per_day)
        else:
            slots = _majority(s, e, code, slot_ns, n_days * per_day, len(states))
        missing = np.flatnonzero(slots < 0)
        if len(missing):
            if fill is None:
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

    lookup = np.empty(len(states) + 1, dtype=object)
    lookup[:len(states)] = states
    lookup[len(states)] = fill
    values = lookup[np.concatenate(rows_codes)]
    users = np.asarray(log.user_names, dtype=object)[np.concatenate(rows_user)]
    days = pd.to_datetime(np.concatenate(rows_day) * DAY_NS, unit="ns")
    index = pd.MultiIndex.from_arrays([users, days], names=[user, "day"])
    return pd.DataFrame(values, index=index, columns=pd.Index(labels.tolist()))


def read_ordonez(path: str | os.PathLike, *, user: Hashable | None = None,
                 repair: bool = False) -> pd.DataFrame:
    """Read an Ordóñez ADL label file into the long format of :func:`sequences_from_events`.

    The format: a header line ``Start time  End time  Activity`` (optionally followed by a line
    of dashes), then one interval per line, ``YYYY-MM-DD hh:mm:ss`` start and end and the
    activity, separated by tabs (stray and doubled tabs are fine) or by runs of spaces.

    Parameters
    ----------
    path : str or os.PathLike
        The file, e.g. ``OrdonezA_ADLs.txt``.
    user : hashable, optional
        The user's name (the file has one user). Default: the file name without ``_ADLs``
        and the extension, e.g. ``"OrdonezA"``.
    repair : bool
        ``False`` (default): the rows as written (defects are left for
        :func:`sequences_from_events` to report). ``True``: rows that end before they start
        are dropped (their true times cannot be recovered), and where intervals overlap the
        one that starts later wins for the time they share (ties: the later line); an
        interval cut by a shorter one nested inside it resumes after it. Every change is
        reported in a :class:`UserWarning` and listed in ``result.attrs["repairs"]``. The
        repair compares every interval with every boundary (quadratic, in bounded blocks):
        meant for hand-labelled files of some thousands of lines.

    Returns
    -------
    pandas.DataFrame
        Columns ``user, start, end, state`` (times as ``datetime64[ns]``), indexed by the
        line number in the file (``"line"``; a repaired interval split in two keeps its line
        number on both pieces), so errors downstream name the line.

    Raises
    ------
    InvalidDataError
        The file is not in this format, a line does not have three fields, or a time cannot
        be read (the message names the line).
    InvalidParameterError
        No file at ``path``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> text = ("Start time\\t\\tEnd time\\t\\tActivity\\t\\r\\n"
    ...         "2011-11-28 02:27:59\\t\\t2011-11-28 10:18:11\\t\\tSleeping\\t\\t\\r\\n"
    ...         "2011-11-28 10:21:24\\t\\t2011-11-28 10:23:36\\t\\tToileting\\t\\r\\n")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "OrdonezA_ADLs.txt"
    ...     _ = path.write_text(text, encoding="utf-8", newline="")
    ...     read_ordonez(path)  # doctest: +NORMALIZE_WHITESPACE
              user               start                 end      state
    line
    2     OrdonezA 2011-11-28 02:27:59 2011-11-28 10:18:11   Sleeping
    3     OrdonezA 2011-11-28 10:21:24 2011-11-28 10:23:36  Toileting
    """
    import pandas as pd

    file = _existing_file(path)
    if not isinstance(repair, bool):
        raise ParameterTypeError(f"repair must be True or False, got {repair!r}")
    name = user if user is not None else re.sub(r"_ADLs$", "", file.stem, flags=re.IGNORECASE)
    if not isinstance(name, Hashable) or _is_missing(name):
        raise InvalidParameterError(f"user must be a name such as 'A', got {user!r}")
    lines = _read_text(file).splitlines()
    body = _ordonez_body(lines, file.name)
    table = pd.DataFrame(
        {"user": [name] * len(body), "start": [f[1] for f in body],
         "end": [f[2] for f in body], "state": [f[3] for f in body]},
        index=pd.Index([f[0] for f in body], name="line"))

    def where(label: Any) -> str:
        return f"line {label} of {file.name}"

    for col in ("start", "end"):
        ns = _parse_times(table[col], col, col, where)
        table[col] = ns.astype("datetime64[ns]")
    if repair:
        table = _repair(table, file.name)
    return table


# ---------------------------------------------------------------------------------------------
# arguments and input


def _slot_ns(slot: Any) -> int:
    import pandas as pd

    if isinstance(slot, str):
        text = slot.strip()
        if re.fullmatch(r"[+-]?[\d.]+", text):
            raise InvalidParameterError(
                f"slot {slot!r} has no unit; write e.g. '{text}min' or '{text}s'")
        try:
            length = pd.Timedelta(text)
        except (ValueError, TypeError) as err:
            raise InvalidParameterError(
                f"slot {slot!r} is not a duration ({err}); pass e.g. '10min', '1min', '1h' or "
                "pd.Timedelta(minutes=10)") from None
    elif isinstance(slot, (timedelta, np.timedelta64)):
        length = pd.Timedelta(slot)
    else:
        raise ParameterTypeError(
            f"slot must be a duration such as '10min' or pd.Timedelta(minutes=10), got the "
            f"{type(slot).__name__} {slot!r}")
    if length is pd.NaT:
        raise InvalidParameterError("slot is NaT; pass a duration such as '10min'")
    ns = int(length.value)
    if ns <= 0:
        raise InvalidParameterError(f"slot must be a positive duration, got {slot!r}")
    if ns < SECOND_NS:
        raise InvalidParameterError(
            f"slot {slot!r} is shorter than one second (86,400 slots a day at most); "
            "pass e.g. '1s' or '1min'")
    if DAY_NS % ns:
        raise InvalidParameterError(
            f"slot {slot!r} does not divide a day evenly ({DAY_NS / ns:.4g} slots a day); "
            "every day must have the same slots: pass a divisor of 24 h such as '1min', '5min', "
            "'10min', '15min', '30min' or '1h'")
    return ns


def _slot_labels(slot_ns: int, per_day: int) -> np.ndarray:
    offsets = np.arange(per_day, dtype=np.int64) * (slot_ns // SECOND_NS)
    hours, rest = np.divmod(offsets, 3600)
    minutes, seconds = np.divmod(rest, 60)
    text = np.char.add(np.char.add(np.char.mod("%02d", hours), ":"),
                       np.char.mod("%02d", minutes))
    if slot_ns % (60 * SECOND_NS):
        text = np.char.add(np.char.add(text, ":"), np.char.mod("%02d", seconds))
    return text.astype(object)


def _existing_file(path: Any) -> Path:
    file = Path(path)
    if not file.is_file():
        raise InvalidParameterError(
            f"no file at {str(path)!r}; pass an existing CSV or Ordóñez ADL file, or a DataFrame")
    return file


def _read_text(file: Path) -> str:
    try:
        return file.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as err:
        raise InvalidDataError(
            f"{file.name} is not UTF-8 text ({err}); re-save it as UTF-8") from None


def _header_fields(line: str) -> tuple[str, ...]:
    return tuple(f.strip().lower() for f in re.split(r"\t|\s{2,}", line.strip()) if f.strip())


def _is_ordonez(file: Path) -> bool:
    with open(file, encoding="utf-8-sig", errors="replace") as handle:
        for line in handle:
            if line.strip():
                return _header_fields(line) == ORDONEZ_HEADER
    return False


def _ordonez_body(lines: list[str], name: str) -> list[tuple[int, str, str, str]]:
    """(line number, start, end, activity) of every non-blank line after the header."""
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None or _header_fields(lines[first]) != ORDONEZ_HEADER:
        seen = lines[first].strip() if first is not None else ""
        raise InvalidDataError(
            f"{name} is not an Ordóñez ADL file: its first line should be the header "
            f"'Start time  End time  Activity', got {seen!r}")
    skip = first + 1
    if skip < len(lines) and re.fullmatch(r"[\s-]*-[\s-]*", lines[skip]):
        skip += 1  # the dashed line under the header in the original UCI files
    out = []
    # a reader of small hand-labelled files: one pass over the lines
    for number, line in enumerate(lines[skip:], start=skip + 1):
        if not line.strip():
            continue
        if "\t" in line:
            fields = [f.strip() for f in line.split("\t") if f.strip()]
        else:
            match = re.fullmatch(r"\s*(\S+\s\S+)\s+(\S+\s\S+)\s+(\S.*?)\s*", line)
            fields = list(match.groups()) if match else [line.strip()]
        if len(fields) != 3:
            raise InvalidDataError(
                f"line {number} of {name}: expected three fields (start, end, activity) "
                f"separated by tabs, got {fields}; correct or delete the line")
        out.append((number, fields[0], fields[1], fields[2]))
    return out


def _load(events: Any, names: dict[str, Hashable]) -> tuple[pd.DataFrame, Any, str]:
    """The events as a DataFrame, a function naming a row by its index label, and a hint.

    The hint ends the messages about defects that :func:`read_ordonez` can repair.
    """
    import pandas as pd

    if isinstance(events, pd.DataFrame):
        def where(label: Any) -> str:
            return f"row {label!r}"
        return events, where, ""
    if not isinstance(events, (str, os.PathLike)):
        raise ParameterTypeError(
            f"events must be a pandas DataFrame or the path of a CSV or Ordóñez ADL file, got "
            f"the {type(events).__name__}")
    file = _existing_file(events)
    hint = ""
    if _is_ordonez(file):
        hint = (f" (or read the file with read_ordonez({str(file)!r}, repair=True), which "
                "drops backwards rows and resolves overlaps, and pass its result)")
        table = read_ordonez(file)
        table.columns = pd.Index([names["user"], names["start"], names["end"], names["state"]])
    else:
        try:
            table = pd.read_csv(file, skip_blank_lines=False, encoding="utf-8-sig")
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
            raise InvalidDataError(f"{file.name} cannot be read as CSV: {err}") from None
        table.index = pd.RangeIndex(2, len(table) + 2, name="line")  # line 1 is the header
        table = table[~table.isna().all(axis=1)]                         # blank lines

    def where_in_file(label: Any) -> str:
        return f"line {label} of {file.name}"
    return table, where_in_file, hint


# ---------------------------------------------------------------------------------------------
# validation


class _Log:
    """A validated log, sorted by (user, start): codes and int64 nanosecond times."""

    def __init__(self, user: np.ndarray, start: np.ndarray, end: np.ndarray, code: np.ndarray,
                 user_names: np.ndarray, state_names: np.ndarray) -> None:
        self.start, self.end, self.code = start, end, code
        self.user_names, self.state_names = user_names, state_names
        cuts = np.flatnonzero(np.diff(user)) + 1
        self.bounds = np.concatenate([[0], cuts, [len(user)]])
        heads = self.bounds[:-1]
        self.first_day = np.minimum.reduceat(start, heads) // DAY_NS
        self.last_day = np.maximum.reduceat(end - 1, heads) // DAY_NS  # last instant covered


def _is_missing(value: Any) -> bool:
    import pandas as pd

    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _validate(table: pd.DataFrame, names: dict[str, Hashable], where: Any, hint: str) -> _Log:
    import pandas as pd

    for arg, col in names.items():
        if col not in table.columns:
            extra = (" (a single user's log: add one with events.assign(user='me'))"
                     if arg == "user" else "")
            raise InvalidParameterError(
                f"events has no column {col!r} (the {arg}= argument); its columns are "
                f"{list(table.columns)[:10]}: pass {arg}=<column name>{extra}")
    columns = {arg: table[col] for arg, col in names.items()}
    for col in columns.values():
        if isinstance(col, pd.DataFrame):
            raise InvalidDataError(
                f"events has more than one column named {col.columns[0]!r}; rename them")
    for arg, col in columns.items():
        bad = col.isna().to_numpy().copy()
        if arg in ("user", "state") and (col.dtype == object
                                          or pd.api.types.is_string_dtype(col.dtype)):
            # a blank label is a missing one (checked on the distinct labels, which are few)
            blank = [v for v in pd.unique(col[~bad]) if isinstance(v, str) and not v.strip()]
            if blank:
                bad |= col.isin(blank).to_numpy()
        if bad.any():
            i = int(np.argmax(bad))
            raise InvalidDataError(
                f"{where(table.index[i])}: the {arg} ({names[arg]!r}) is missing "
                f"({_plain(col.iloc[i])!r}); fill it in or drop the row"
                + (f" ({int(bad.sum())} rows in all)" if bad.sum() > 1 else ""))
    start = _parse_times(columns["start"], "start", names["start"], where)
    end = _parse_times(columns["end"], "end", names["end"], where)
    backwards = end < start
    if backwards.any():
        i = int(np.argmax(backwards))
        raise InvalidDataError(
            f"{where(table.index[i])}: the interval ends before it starts "
            f"({columns['state'].iloc[i]!r} from {_show(start[i])} to {_show(end[i])}"
            + (f"; {int(backwards.sum())} such rows in all" if backwards.sum() > 1 else "")
            + "); correct the times or drop the row"
            + hint)

    user_codes, user_names = _factorize(columns["user"])
    state_codes, state_names = _factorize(columns["state"])
    keep = np.flatnonzero(end > start)  # an empty interval covers nothing
    if not len(keep):
        raise InvalidDataError("events has no interval of positive length; nothing to slot")
    order = keep[np.lexsort((end[keep], start[keep], user_codes[keep]))]
    u, s, e = user_codes[order], start[order], end[order]
    same = u[1:] == u[:-1]
    # latest end among a user's earlier intervals (the running maximum restarts per user)
    run = pd.Series(e).groupby(u).cummax().to_numpy()
    clash = same & (s[1:] < run[:-1])
    if clash.any():
        k = int(np.argmax(clash)) + 1
        lo = int(np.searchsorted(u, u[k], side="left"))    # the user's first interval
        j = lo + int(np.argmax(e[lo:k] > s[k]))
        a, b = order[j], order[k]
        raise InvalidDataError(
            f"{where(table.index[b])} ({_row(columns, b, start, end)}) overlaps "
            f"{where(table.index[a])} ({_row(columns, a, start, end)}) of user "
            f"{user_names[u[k]]!r}; one user's intervals must not overlap"
            + (f" ({int(clash.sum())} overlapping rows in all)" if clash.sum() > 1 else "")
            + ": correct the times or drop one of them"
            + hint)
    return _Log(u, s, e, state_codes[order], user_names, state_names)


def _factorize(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes and sorted unique values (in first-seen order if they do not sort)."""
    import pandas as pd

    try:
        codes, uniques = pd.factorize(column, sort=True)
    except TypeError:
        codes, uniques = pd.factorize(column, sort=False)
    return np.asarray(codes, dtype=np.int64), np.asarray(uniques, dtype=object)


def _parse_times(column: pd.Series, arg: str, name: Hashable, where: Any) -> np.ndarray:
    """int64 nanoseconds of naive times; an error names the first row that cannot be read."""
    import pandas as pd

    kind = column.dtype
    if getattr(kind, "tz", None) is not None:
        raise InvalidDataError(
            f"the {arg} times ({name!r}) carry a time zone ({kind}); days are local calendar "
            "days: convert with .dt.tz_convert(<zone>).dt.tz_localize(None)")
    if pd.api.types.is_bool_dtype(kind) or pd.api.types.is_numeric_dtype(kind):
        raise InvalidDataError(
            f"the {arg} times ({name!r}) are numbers ({kind}), e.g. {_plain(column.iloc[0])!r} at "
            f"{where(column.index[0])}; convert them first, e.g. pd.to_datetime(col, unit='s')")
    if pd.api.types.is_datetime64_dtype(kind):
        parsed = column
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "could not infer format": handled just below
            try:
                parsed = pd.to_datetime(column, errors="coerce")
            except (ValueError, TypeError, OverflowError):
                parsed = pd.Series(pd.NaT, index=column.index, dtype="datetime64[ns]")
            if not pd.api.types.is_datetime64_dtype(parsed.dtype):
                raise InvalidDataError(
                    f"the {arg} times ({name!r}) mix time zones or carry one (e.g. "
                    f"{column.iloc[0]!r}); give naive local times such as '2011-11-28 02:27:59'")
            failed = parsed.isna().to_numpy()
            if failed.any() and int(pd.__version__.split(".")[0]) >= 2:
                # the format pandas infers from the first row did not fit: read these one by one
                again = pd.to_datetime(column[failed], errors="coerce", format="mixed")
                if pd.api.types.is_datetime64_dtype(again.dtype):
                    parsed = parsed.astype("datetime64[ns]")
                    parsed[failed] = again.astype("datetime64[ns]")
    try:
        ns = parsed.to_numpy(dtype="datetime64[ns]")
    except (ValueError, OverflowError):  # out of the nanosecond range (years 1678 to 2261)
        raw = parsed.to_numpy()
        far = (raw < np.datetime64("1677-09-22")) | (raw > np.datetime64("2262-04-11"))
        i = int(np.argmax(far))
        raise InvalidDataError(
            f"{where(column.index[i])}: the {arg} time {column.iloc[i]!r} ({name!r}) is outside "
            "the years 1678 to 2261 that can be handled; correct it") from None
    bad = np.isnat(ns)
    if bad.any():
        i = int(np.argmax(bad))
        raise InvalidDataError(
            f"{where(column.index[i])}: cannot read the {arg} time {column.iloc[i]!r} "
            f"({name!r}); write times like '2011-11-28 02:27:59'"
            + (f" ({int(bad.sum())} such rows in all)" if bad.sum() > 1 else ""))
    return ns.astype(np.int64)


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value (messages show 5, not np.int64(5))."""
    return value.item() if isinstance(value, np.generic) else value


def _show(ns: Any) -> str:
    return str(np.datetime64(int(ns), "ns").astype("datetime64[s]")).replace("T", " ")


def _row(columns: dict, i: int, start: np.ndarray, end: np.ndarray) -> str:
    return f"{columns['state'].iloc[i]!r} from {_show(start[i])} to {_show(end[i])}"


# ---------------------------------------------------------------------------------------------
# slotting (times in int64 nanoseconds from the user's first whole day)


def _midpoint(s: np.ndarray, e: np.ndarray, code: np.ndarray, slot: int, n: int) -> np.ndarray:
    """State code per slot, -1 where no interval covers the midpoint.

    Intervals are sorted and disjoint, so the only candidate for a midpoint is the last
    interval starting at or before it. Times are doubled so midpoints stay integers.
    """
    mid2 = (2 * np.arange(n, dtype=np.int64) + 1) * slot
    idx = np.searchsorted(2 * s, mid2, side="right") - 1
    safe = np.maximum(idx, 0)
    covered = (idx >= 0) & (mid2 < 2 * e[safe])
    return np.where(covered, code[safe], -1)


def _majority(s: np.ndarray, e: np.ndarray, code: np.ndarray, slot: int, n: int,
              n_states: int) -> np.ndarray:
    """State code per slot, -1 where the uncovered part is strictly the largest."""
    cs, ce = np.clip(s, 0, n * slot), np.clip(e, 0, n * slot)
    inside = ce > cs
    cs, ce, code = cs[inside], ce[inside], code[inside]
    k0, k1 = cs // slot, (ce - 1) // slot
    counts = k1 - k0 + 1
    ev = np.repeat(np.arange(len(cs)), counts)                    # one entry per (interval, slot)
    heads = np.repeat(np.cumsum(counts) - counts, counts)
    k = k0[ev] + np.arange(len(ev)) - heads
    begin = np.maximum(cs[ev], k * slot)
    part = np.minimum(ce[ev], (k + 1) * slot) - begin
    key = k * (n_states + 1) + code[ev]
    groups, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    spent = np.rint(np.bincount(inverse.ravel(), weights=part)).astype(np.int64)  # exact: < 2^53
    g_slot, g_code, g_first = groups // (n_states + 1), groups % (n_states + 1), begin[first]
    order = np.lexsort((g_first, -spent, g_slot))                # per slot: most time, earliest
    lead = order[np.flatnonzero(np.diff(g_slot[order], prepend=-1))]  # first row of each slot
    out = np.full(n, -1, dtype=np.int64)
    best = np.zeros(n, dtype=np.int64)
    out[g_slot[lead]] = g_code[lead]
    best[g_slot[lead]] = spent[lead]
    covered = np.rint(np.bincount(k, weights=part, minlength=n)).astype(np.int64)
    out[slot - covered > best] = -1
    return out


def _gap_error(user: Any, origin: int, k: int, count: int, slot: int, labels: np.ndarray,
               rule: str) -> InvalidDataError:
    day = _show(origin + (k // len(labels)) * DAY_NS)[:10]
    label = labels[k % len(labels)]
    if rule == "midpoint":
        mid = _show(origin + k * slot + slot // 2)[11:]
        what = f"no interval covers the slot's midpoint ({mid})"
    else:
        what = "no state covers more of the slot than the uncovered part"
    plural = "slot of this user is" if count == 1 else "slots of this user are"
    return InvalidDataError(
        f"user {user!r}, day {day}, slot {label!r}: {what}; {count} {plural} uncovered in all; "
        "pass fill=<state> (e.g. fill='Idle') to label gaps, or complete the log")


# ---------------------------------------------------------------------------------------------
# repairing the Ordóñez files


def _repair(table: pd.DataFrame, name: str) -> pd.DataFrame:
    """Drop backwards and empty rows; the later-starting interval wins where two overlap."""

    notes = []
    start = table["start"].to_numpy(dtype="datetime64[ns]").astype(np.int64)
    end = table["end"].to_numpy(dtype="datetime64[ns]").astype(np.int64)
    lines = table.index.to_numpy()
    for bad, what in ((end < start, "end before they start"), (end == start, "are empty")):
        if bad.any():
            notes.append(f"dropped {int(bad.sum())} rows that {what} (lines "
                         f"{', '.join(str(x) for x in lines[bad])})")
    keep = np.flatnonzero(end > start)
    rows = keep[np.lexsort((lines[keep], start[keep]))]
    s, e = start[rows], end[rows]
    pieces = np.arange(len(rows))
    pairs = _overlapping_pairs(s, e)
    if pairs:
        shown = ", ".join(f"{lines[rows[a]]}/{lines[rows[b]]}" for a, b in pairs[:12])
        more = f" and {len(pairs) - 12} more" if len(pairs) > 12 else ""
        notes.append(f"resolved {len(pairs)} overlapping pairs (earlier/later line: {shown}"
                     f"{more}): the later-starting interval wins the shared time, an interval "
                     "cut by one nested in it resumes after it")
        s, e, pieces = _latest_start_wins(s, e)
    out = table.iloc[rows[pieces]].copy()
    out["start"] = s.astype("datetime64[ns]")  # arrays: a split interval repeats its label
    out["end"] = e.astype("datetime64[ns]")
    if notes:
        out.attrs["repairs"] = tuple(notes)
        warnings.warn(f"{name}: " + "; ".join(notes), UserWarning, stacklevel=3)
    return out


def _overlapping_pairs(s: np.ndarray, e: np.ndarray) -> list[tuple[int, int]]:
    """(earlier, later) positions of intervals (sorted by start) that overlap."""
    later = np.arange(len(s))
    # for each interval, the intervals starting before its end: a contiguous block after it
    stop = np.searchsorted(s, e, side="left")
    counts = np.maximum(stop - later - 1, 0)
    a = np.repeat(later, counts)
    b = a + np.arange(len(a)) - np.repeat(np.cumsum(counts) - counts, counts) + 1
    return list(zip(a.tolist(), b.tolist(), strict=True))


def _latest_start_wins(s: np.ndarray, e: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Disjoint pieces (start, end, source position) of intervals sorted by (start, line).

    Between consecutive boundaries the covering interval with the largest position wins;
    consecutive segments won by the same interval are merged back into one piece.
    """
    bounds = np.unique(np.concatenate([s, e]))
    left, right = bounds[:-1], bounds[1:]
    winner = np.full(len(left), -1, dtype=np.int64)
    step = max(1, _REPAIR_BLOCK // max(len(s), 1))
    # blocks of segments, to bound the dense (segment x interval) table's memory
    for lo in range(0, len(left), step):
        at = left[lo:lo + step, None]
        cover = (s[None, :] <= at) & (at < e[None, :])
        last = len(s) - 1 - np.argmax(cover[:, ::-1], axis=1)
        winner[lo:lo + step] = np.where(cover.any(axis=1), last, -1)
    used = winner >= 0
    left, right, winner = left[used], right[used], winner[used]
    new = np.concatenate([[True], (winner[1:] != winner[:-1]) | (left[1:] != right[:-1])])
    heads = np.flatnonzero(new)
    tails = np.concatenate([heads[1:], [len(left)]]) - 1
    return left[heads], right[tails], winner[heads]
