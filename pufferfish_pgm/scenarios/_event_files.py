"""Reading activity logs from files: the Ordóñez ADL format and its repair (internal).

The UCI Ordóñez files (two homes) list one activity per line as ``start  end  activity``. Both
real files contain rows that end before they start and overlapping rows; :func:`read_ordonez`
refuses them unless ``repair=True``, which lists every change in a warning.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Hashable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InvalidDataError, InvalidParameterError, ParameterTypeError
from ._event_records import (
    _is_missing,
    _parse_log_times,
)

if TYPE_CHECKING:
    import pandas as pd  # type: ignore[import-untyped]  # (no pandas-stubs installed)

__all__ = ["read_ordonez"]


ORDONEZ_HEADER = ("start time", "end time", "activity")

# the largest dense (segment x event) block built at once when repairing overlaps
_REPAIR_BLOCK = 4_000_000


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

    start, end = _parse_log_times({"start": table["start"], "end": table["end"]},
                                  {"start": "start", "end": "end"}, where)
    table["start"], table["end"] = start.astype("datetime64[ns]"), end.astype("datetime64[ns]")
    if repair:
        table = _repair(table, file.name)
    return table


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
