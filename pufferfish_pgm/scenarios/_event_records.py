"""Validation of event logs: every row checked, times parsed, errors naming the row (internal).

Split from :mod:`pufferfish_pgm.scenarios._events`, which turns a validated log into slots
(:mod:`._event_slots`).
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import AmbiguousDateWarning, InvalidDataError, InvalidParameterError

if TYPE_CHECKING:
    import pandas as pd  # type: ignore[import-untyped]  # (no pandas-stubs installed)

#: Nanoseconds in a day and in a second (times are int64 nanoseconds throughout).
DAY_NS = 86_400 * 10**9
SECOND_NS = 10**9


class _Log:
    """A validated log, sorted by (user, start): codes and int64 nanosecond times."""

    def __init__(self, user: np.ndarray, start: np.ndarray, end: np.ndarray, code: np.ndarray,
                 user_names: np.ndarray, state_names: np.ndarray) -> None:
        self.start, self.end, self.code = start, end, code
        cuts = np.flatnonzero(np.diff(user)) + 1
        self.bounds = np.concatenate([[0], cuts, [len(user)]])
        # one name per group of rows: a user whose intervals were all empty has no group
        self.user_names, self.state_names = user_names[user[self.bounds[:-1]]], state_names
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
    """The log's columns checked (present, unique, no missing value, no interval backwards,
    no overlap within a user) and coded, sorted by user, start and end."""
    columns = _columns(table, names)
    for arg, col in columns.items():
        _check_missing(table, arg, col, names, where)
    start, end = _parse_log_times(columns, names, where)
    _check_forward(table, columns, start, end, where, hint)
    user_codes, user_names = _factorize(columns["user"])
    state_codes, state_names = _factorize(columns["state"])
    keep = np.flatnonzero(end > start)  # an empty interval covers nothing
    if not len(keep):
        raise InvalidDataError("events has no interval of positive length; nothing to slot")
    order = keep[np.lexsort((end[keep], start[keep], user_codes[keep]))]
    _check_overlaps(table, columns, order, user_codes, user_names, (start, end), where, hint)
    return _Log(user_codes[order], start[order], end[order], state_codes[order], user_names,
                state_names)


def _columns(table: pd.DataFrame, names: dict[str, Hashable]) -> dict[str, pd.Series]:
    """The named columns, each present exactly once."""
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
    return columns


def _check_missing(table: pd.DataFrame, arg: str, col: pd.Series, names: dict,
                   where: Any) -> None:
    """No missing value; a blank user or state label counts as missing."""
    import pandas as pd

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


def _check_forward(table: pd.DataFrame, columns: dict, start: np.ndarray, end: np.ndarray,
                   where: Any, hint: str) -> None:
    """No interval ends before it starts."""
    backwards = end < start
    if backwards.any():
        i = int(np.argmax(backwards))
        raise InvalidDataError(
            f"{where(table.index[i])}: the interval ends before it starts "
            f"({columns['state'].iloc[i]!r} from {_show(start[i])} to {_show(end[i])}"
            + (f"; {int(backwards.sum())} such rows in all" if backwards.sum() > 1 else "")
            + "); correct the times or drop the row"
            + hint)


def _check_overlaps(table: pd.DataFrame, columns: dict, order: np.ndarray,
                    user_codes: np.ndarray, user_names: np.ndarray, times: tuple,
                    where: Any, hint: str) -> None:
    """No two intervals of one user overlap (``order``: rows sorted by user, start, end)."""
    import pandas as pd

    start, end = times
    u, s, e = user_codes[order], start[order], end[order]
    same = u[1:] == u[:-1]
    # latest end among a user's earlier intervals (the running maximum restarts per user)
    run = pd.Series(e).groupby(u).cummax().to_numpy()
    clash = same & (s[1:] < run[:-1])
    if not clash.any():
        return
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


def _factorize(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes and sorted unique values (in first-seen order if they do not sort)."""
    import pandas as pd

    try:
        codes, uniques = pd.factorize(column, sort=True)
    except TypeError:
        codes, uniques = pd.factorize(column, sort=False)
    return np.asarray(codes, dtype=np.int64), np.asarray(uniques, dtype=object)


#: A numeric date with day and month before the year, "01/02/2024", "1.2.24 10:00": the two
#: numbers are groups 2 and 4.
_DMY = r"^(\s*)(\d{1,2})([/.-])(\d{1,2})([/.-]\d{2,4})(?!\d)"
#: A time of day followed by a UTC offset or zone: "10:00:00+01:00", "10:00Z", "10:00 UTC".
_OFFSET = r"(?i):\d\d(?:[.,]\d+)?\s*(?:z|utc|gmt|[+-]\d\d(?::?\d\d)?)\s*$"
_ISO = "'2024-03-31 01:30:00'"
#: The whole seconds of pandas' nanosecond timestamps (pd.Timestamp.min and .max).
_RANGE = "1677-09-21 00:12:44 to 2262-04-11 23:47:16"


def _parse_log_times(columns: dict[str, pd.Series], names: dict[str, Hashable],
                     where: Any) -> tuple[np.ndarray, np.ndarray]:
    """Start and end as int64 nanoseconds, read one way for the whole log.

    Naive times stay local wall-clock times; times with a UTC offset or time zone become UTC
    (all of them must have one, or none). Numeric dates are read day first or month first as
    the log decides (:func:`_day_first`).
    """
    pair = {arg: columns[arg] for arg in ("start", "end")}
    swap = _day_first(pair, names, where)
    parsed = {arg: _read_column(col, arg, names[arg], where, swap.get(arg))
              for arg, col in pair.items()}
    aware = {arg: _is_aware(times) for arg, times in parsed.items()}
    for arg in (a for a in pair if aware[a]):
        _check_offsets(pair[arg], arg, names[arg], where)
    if aware["start"] != aware["end"]:
        a, b = ("start", "end") if aware["start"] else ("end", "start")
        raise InvalidDataError(
            f"the {a} times ({names[a]!r}) carry a UTC offset or time zone (e.g. "
            f"{_plain(pair[a].iloc[0])!r}) but the {b} times ({names[b]!r}) do not (e.g. "
            f"{_plain(pair[b].iloc[0])!r}); give every time its offset, or none")
    out = []
    for arg, col in pair.items():
        times = parsed[arg]
        if aware[arg]:
            times = times.dt.tz_convert("UTC").dt.tz_localize(None)
        out.append(_to_ns(times, col, arg, names[arg], where))
    return out[0], out[1]


def _is_aware(times: pd.Series) -> bool:
    return getattr(times.dtype, "tz", None) is not None


def _dmy_fields(column: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Positions, first and second numbers of the values written like ``01/02/2024``.

    Values starting with a four-digit year and a separator (ISO) are skipped by a vectorised
    test of their first five characters, so ISO logs pay no regular expression.
    """
    import pandas as pd

    empty = np.zeros(0, dtype=np.int64)
    if not len(column) or not (column.dtype == object
                               or pd.api.types.is_string_dtype(column.dtype)):
        return empty, empty, empty
    values = column.to_numpy(dtype=object)
    head = np.asarray(values, dtype="U5").view(np.uint32).reshape(len(values), 5)
    digits = ((head[:, :4] >= ord("0")) & (head[:, :4] <= ord("9"))).all(axis=1)
    year_first = digits & np.isin(head[:, 4], [ord("-"), ord("/"), ord(".")])
    maybe = np.flatnonzero(~year_first)
    if not len(maybe):
        return empty, empty, empty
    # the first ten characters hold a whole date; logs repeat dates, so read each one once
    codes, heads = pd.factorize(np.asarray(values[maybe], dtype="U10"))
    fields = pd.Series(heads, dtype=object).astype(str).str.extract(_DMY)
    found = fields[1].notna().to_numpy(dtype=bool)
    numbers = fields[[1, 3]].to_numpy(dtype=object)
    numbers[~found] = "0"
    hit = found[codes]
    first, second = numbers[codes[hit]].astype(np.int64).T
    return maybe[hit], first, second


def _day_first(pair: dict[str, pd.Series], names: dict[str, Hashable],
               where: Any) -> dict[str, np.ndarray]:
    """Positions of the dates to read day first (none: month first, the pandas default).

    The log decides: a first number above 12 is a day, a second above 12 is a day. When
    nothing decides and some date could be read both ways, an :class:`AmbiguousDateWarning`.
    """
    found = {arg: _dmy_fields(col) for arg, col in pair.items()}
    day = [(arg, pos[f > 12][0]) for arg, (pos, f, _) in found.items() if (f > 12).any()]
    month = [(arg, pos[s > 12][0]) for arg, (pos, _, s) in found.items() if (s > 12).any()]

    def show(arg: str, i: int) -> str:
        return f"{where(pair[arg].index[i])} ({pair[arg].iloc[i]!r})"
    if day and month:
        raise InvalidDataError(
            f"the dates are written day first at {show(*day[0])} and month first at "
            f"{show(*month[0])}; write every date the same way, best as ISO dates like {_ISO}")
    if day:
        return {arg: pos for arg, (pos, _, _) in found.items()}
    both = [(arg, int(np.argmax(f != s))) for arg, (_, f, s) in found.items() if (f != s).any()]
    if not month and both:
        arg, k = both[0]
        pos, first, second = found[arg]
        warnings.warn(AmbiguousDateWarning(
            f"the {arg} time at {show(arg, pos[k])} can be read day first or month first and "
            f"no date of the log has a number above 12 to decide: read month first (month "
            f"{first[k]}, day {second[k]}), as are all such dates of the log; write ISO dates "
            f"like {_ISO} to make the reading explicit"), stacklevel=5)
    return {}


def _read_column(column: pd.Series, arg: str, name: Hashable, where: Any,
                 swap: np.ndarray | None) -> pd.Series:
    """The column as datetimes, naive or (some value has an offset) tz-aware; NaT unread."""
    import pandas as pd

    kind = column.dtype
    if pd.api.types.is_datetime64_any_dtype(kind):
        return column
    if pd.api.types.is_bool_dtype(kind) or pd.api.types.is_numeric_dtype(kind):
        raise InvalidDataError(
            f"the {arg} times ({name!r}) are numbers ({kind}), e.g. {_plain(column.iloc[0])!r} at "
            f"{where(column.index[0])}; convert them first, e.g. pd.to_datetime(col, unit='s')")
    text, dayfirst = column, swap is not None and len(swap) == len(column)
    if swap is not None and 0 < len(swap) < len(column):  # some ISO dates: dayfirst misreads them
        values = column.to_numpy(dtype=object, copy=True)
        values[swap] = pd.Series(values[swap]).astype(str).str.replace(
            _DMY, r"\1\4\3\2\5", regex=True).to_numpy(dtype=object)   # day/month -> month/day
        text = pd.Series(values, index=column.index)
    naive = _parse_text(text, False, dayfirst)
    return naive if naive is not None else _parse_text(text, True, dayfirst)


def _parse_text(text: pd.Series, utc: bool, dayfirst: bool) -> Any:
    """Datetimes (UTC if ``utc``), NaT where unreadable; None when offsets turn up unasked."""
    import pandas as pd

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "could not infer format": handled just below
        try:
            parsed = pd.to_datetime(text, errors="coerce", utc=utc, dayfirst=dayfirst)
        except ValueError:  # pandas >= 2 on mixed UTC offsets, which utc=True converts
            return None
        if not pd.api.types.is_datetime64_any_dtype(parsed.dtype) or _is_aware(parsed) != utc:
            return None   # (pandas 1.5 gives objects for mixed offsets)
        failed = parsed.isna().to_numpy()
        if failed.any() and int(pd.__version__.split(".")[0]) >= 2:
            # the format pandas infers from the first row did not fit: read these one by one
            try:
                again = pd.to_datetime(text[failed], errors="coerce", format="mixed", utc=utc,
                                       dayfirst=dayfirst)
            except ValueError:
                return None
            if not pd.api.types.is_datetime64_any_dtype(again.dtype) or _is_aware(again) != utc:
                return None
            unit = "ns" if str(parsed.dtype) == str(again.dtype) == "datetime64[ns]" else "us"
            common = f"datetime64[{unit}, UTC]" if utc else f"datetime64[{unit}]"
            parsed = parsed.astype(common)
            parsed[failed] = again.astype(common).to_numpy()
    return parsed


def _check_offsets(column: pd.Series, arg: str, name: Hashable, where: Any) -> None:
    """Every string of a column read as offset times has an offset (else naive times passed
    as UTC)."""
    import pandas as pd

    if pd.api.types.is_datetime64_any_dtype(column.dtype):
        return
    has = column.astype(str).str.contains(_OFFSET, regex=True).to_numpy(dtype=bool)
    if not has.any():   # pandas saw a zone that is not written as an offset, Z, UTC or GMT
        raise InvalidDataError(
            f"{where(column.index[0])}: the {arg} time {column.iloc[0]!r} ({name!r}) carries a "
            "time zone that is not a UTC offset; write offsets like "
            "'2024-03-31T03:30:00+02:00', or naive local times")
    if not has.all():
        i, j = int(np.argmin(has)), int(np.argmax(has))
        raise InvalidDataError(
            f"{where(column.index[i])}: the {arg} time {column.iloc[i]!r} ({name!r}) has no UTC "
            f"offset but {where(column.index[j])} has one ({column.iloc[j]!r}); give every "
            "time its offset (e.g. '2024-03-31T03:30:00+02:00'), or none")


def _to_ns(times: pd.Series, column: pd.Series, arg: str, name: Hashable,
           where: Any) -> np.ndarray:
    """int64 nanoseconds of naive datetimes; an error names the first row out of range or
    unread."""
    import pandas as pd

    raw = times.to_numpy()
    unit, count = np.datetime_data(raw.dtype)
    per = {"s": SECOND_NS, "ms": 10**6, "us": 10**3, "ns": 1}[unit] * count  # pandas' units
    ints = raw.view(np.int64)
    nat = np.isnat(raw)
    lo, hi = -(-pd.Timestamp.min.value // per), pd.Timestamp.max.value // per
    far = ~nat & ((ints < lo) | (ints > hi))
    if not far.any() and nat.any():
        far = np.zeros(len(raw), dtype=bool)
        far[int(np.argmax(nat))] = _beyond(column.iloc[int(np.argmax(nat))])
    if far.any():
        i = int(np.argmax(far))
        raise InvalidDataError(
            f"{where(column.index[i])}: the {arg} time {_plain(column.iloc[i])!r} ({name!r}) "
            f"is outside the times that can be slotted, {_RANGE} (pandas' nanosecond "
            "timestamps)"
            + (f"; {int(far.sum())} such times in all" if far.sum() > 1 else "")
            + "; correct it (a typo in the year?)")
    if nat.any():
        i = int(np.argmax(nat))
        raise InvalidDataError(
            f"{where(column.index[i])}: cannot read the {arg} time {column.iloc[i]!r} "
            f"({name!r}); write times like '2011-11-28 02:27:59'"
            + (f" ({int(nat.sum())} such rows in all)" if nat.sum() > 1 else ""))
    return ints * per


def _beyond(value: Any) -> bool:
    """Whether a value pandas could not read as a nanosecond time is a time out of range."""
    import pandas as pd

    try:
        stamp = pd.Timestamp(value)
        if stamp is pd.NaT:
            return False
        if stamp.tzinfo is not None:
            stamp = stamp.tz_convert("UTC").tz_localize(None)
        return not pd.Timestamp.min <= stamp <= pd.Timestamp.max
    except (ValueError, TypeError, OverflowError) as err:   # OutOfBoundsDatetime (pandas < 2)
        return isinstance(err, pd.errors.OutOfBoundsDatetime)


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value (messages show 5, not np.int64(5))."""
    return value.item() if isinstance(value, np.generic) else value


def _show(ns: Any) -> str:
    return str(np.datetime64(int(ns), "ns").astype("datetime64[s]")).replace("T", " ")


def _row(columns: dict, i: int, start: np.ndarray, end: np.ndarray) -> str:
    return f"{columns['state'].iloc[i]!r} from {_show(start[i])} to {_show(end[i])}"
