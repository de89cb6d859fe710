"""Event logs at scale: a Parquet file or folder, or a CSV file, read in batches of whole users.

:func:`event_batches` streams a log that does not fit in memory as pandas DataFrames, each
holding every interval of its users (a user's days are only known from all of their
intervals), ready for :func:`~pufferfish_pgm.scenarios.event_counts`,
:func:`~pufferfish_pgm.scenarios.sequences_from_events` or
:func:`~pufferfish_pgm.scenarios.transition_counts`. It needs pyarrow (the ``arrow`` extra),
imported only here (a CSV file is read by pandas), and rows grouped by user (one contiguous
run of rows per user, as a dataset sorted or written by user is); a user met again after
their run ended is an error. A CSV file read in one batch may be in any order.

Examples
--------
>>> import pandas as pd
>>> log = pd.DataFrame({"user": ["a", "a", "b", "c"], "start": [0, 1, 0, 0],
...                     "end": [1, 2, 1, 1], "state": ["x", "y", "x", "x"]})
>>> [list(b["user"]) for b in _whole_users([log.iloc[:1], log.iloc[1:3], log.iloc[3:]],
...                                        "user", None)]
[['a', 'a'], ['b'], ['c']]
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from .._budget import check_allocation
from ..errors import InvalidDataError, InvalidParameterError, MissingDependencyError
from ._events import _check_columns

__all__ = ["event_batches", "is_parquet"]

#: Bytes per row of a pending batch in memory (four columns, pandas' overhead included).
ROW_BYTES = 64


def event_batches(source: str | Path, *, user: Hashable = "user", start: Hashable = "start",
                  end: Hashable = "end", state: Hashable = "state",
                  batch_rows: int = 1_000_000, row_bytes: int = ROW_BYTES,
                  memory_budget: int | float | str | None = None) -> Iterator[Any]:
    """Batches of whole users of an event log: a Parquet file or folder, or a CSV file.

    Parameters
    ----------
    source : str or os.PathLike
        A Parquet file, a folder of them (read in name order, as one dataset), or a CSV file
        (any other file; its times are parsed per batch as ``sequences_from_events`` does).
    user, start, end, state : hashable
        The columns read (others are not).
    batch_rows : int
        Rows read at a time; a batch holds them less the last user's rows, which wait for
        the next read (a user with more rows than this makes a longer batch).
    row_bytes : int
        Bytes counted per row of a batch against ``memory_budget`` (64, a batch's own size, by
        default; more when the caller's work on a batch takes more per row).
    memory_budget : int, float or str, optional
        The most a batch waiting for its last user may take (``row_bytes`` a row); default
        ``PUFFERFISH_PGM_MEMORY_BUDGET``, else a quarter of the machine's memory.

    Yields
    ------
    pandas.DataFrame
        The four columns, every interval of the users in it.

    Raises
    ------
    MissingDependencyError
        A Parquet log and pyarrow is not installed (``pip install "pufferfish_pgm[arrow]"``).
    InvalidDataError
        A user's rows are not contiguous, naming the user.
    InvalidParameterError
        ``source`` does not exist or lacks a column, two of the four columns are the same, or
        ``batch_rows`` or ``row_bytes`` is not a positive integer.
    ParameterTypeError
        A column name that is not hashable.
    LimitExceededError
        One user's rows pass the memory budget.
    """
    for name, value in (("batch_rows", batch_rows), ("row_bytes", row_bytes)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise InvalidParameterError(f"{name} must be a positive integer, got {value!r}")
    path = Path(source)
    if not path.exists():
        raise InvalidParameterError(f"event log {str(source)!r} does not exist; give a Parquet "
                                    "file, a folder of Parquet files or a CSV file")
    columns = list(_check_columns({"user": user, "start": start, "end": end,
                                   "state": state}).values())
    if is_parquet(path):
        frames = _parquet_frames(path, columns, batch_rows)
    else:
        frames = _csv_frames(path, columns, batch_rows)
    return _whole_users(frames, user, memory_budget, row_bytes)


def is_parquet(path: Path) -> bool:
    """A folder (a dataset), a ``.parquet``/``.pq`` file, or a file starting with ``PAR1``."""
    if path.is_dir() or path.suffix.lower() in (".parquet", ".pq"):
        return True
    with path.open("rb") as handle:
        return handle.read(4) == b"PAR1"


def _parquet_frames(path: Path, columns: list, batch_rows: int) -> Iterator[Any]:
    try:
        import pyarrow.dataset as pads  # type: ignore[import-not-found, import-untyped]
    except ImportError:
        raise MissingDependencyError(
            "reading Parquet event logs needs pyarrow: pip install 'pufferfish_pgm[arrow]'"
        ) from None
    dataset = pads.dataset(str(path), format="parquet")
    missing = [c for c in columns if c not in dataset.schema.names]
    if missing:
        raise InvalidParameterError(f"the Parquet log has no column {missing[0]!r}; its columns "
                                    f"are {dataset.schema.names[:10]}")
    return (b.to_pandas() for b in dataset.to_batches(columns=columns, batch_size=batch_rows))


def _csv_frames(path: Path, columns: list, batch_rows: int) -> Iterator[Any]:
    """The CSV's rows ``batch_rows`` at a time; a file read in one batch sorted by user."""
    import pandas as pd  # type: ignore[import-untyped]

    header = pd.read_csv(path, nrows=0, encoding="utf-8-sig").columns
    missing = [c for c in columns if c not in header]
    if missing:
        raise InvalidParameterError(f"the CSV log has no column {missing[0]!r}; its columns are "
                                    f"{list(header)[:10]}: a log needs the header "
                                    "user,start,end,state")
    return _csv_chunks(path, columns, batch_rows)


def _csv_chunks(path: Path, columns: list, batch_rows: int) -> Iterator[Any]:
    import pandas as pd

    with pd.read_csv(path, usecols=columns, chunksize=batch_rows,
                     encoding="utf-8-sig") as reader:
        first = next(reader, None)
        second = None if first is None else next(reader, None)
        if first is not None and second is None:
            yield first.sort_values(columns[0], kind="stable")
        elif first is not None:
            yield from itertools.chain([first, second], reader)


def _whole_users(frames: Iterable[Any], user: Hashable, budget: int | float | str | None,
                 row_bytes: int = ROW_BYTES) -> Iterator[Any]:
    """Regroup consecutive frames so that each yielded one ends with a whole user."""
    import pandas as pd  # type: ignore[import-untyped]

    done: set = set()
    pending = None
    for frame in frames:
        if not len(frame):
            continue
        frame = frame if pending is None else pd.concat([pending, frame], ignore_index=True)
        ids = frame[user].to_numpy()
        others = np.flatnonzero(ids != ids[-1])
        last = int(others[-1]) + 1 if len(others) else 0
        ready, pending = frame.iloc[:last], frame.iloc[last:]
        check_allocation(len(pending) * row_bytes, budget=budget,
                         what=f"the rows of user {ids[-1]!r} (read so far)")
        if len(ready):
            _check_grouped(ready, user, done, budget, row_bytes)
            yield ready.reset_index(drop=True)
    if pending is not None and len(pending):
        _check_grouped(pending, user, done, budget, row_bytes)
        yield pending.reset_index(drop=True)


def _check_grouped(frame: Any, user: Hashable, done: set, budget: int | float | str | None,
                   row_bytes: int) -> None:
    """Refuse a user whose rows were already closed (met before, then other users), or
    whose rows alone pass the budget."""
    ids = frame[user].to_numpy()
    starts = np.concatenate([[0], np.flatnonzero(ids[1:] != ids[:-1]) + 1])
    sizes = np.diff(np.append(starts, len(ids)))
    biggest = int(np.argmax(sizes))
    check_allocation(int(sizes[biggest]) * row_bytes, budget=budget,
                     what=f"the rows of user {ids[starts[biggest]]!r}")
    runs = ids[starts]
    seen = set()
    for u in runs.tolist():
        if u in done or u in seen:
            raise InvalidDataError(
                f"user {u!r} has rows in two places of the log, with other users between; "
                "event_batches needs each user's rows together: sort the dataset by user")
        seen.add(u)
    done.update(seen)
