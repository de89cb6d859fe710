"""Validation of event logs: every row checked, times parsed, errors naming the row (internal).

Split from :mod:`pufferfish_pgm.scenarios._events`, which turns a validated log into slots.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InvalidDataError, InvalidParameterError

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
