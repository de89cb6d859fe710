"""Event logs at scale: a Parquet file or folder read in batches of whole users.

:func:`event_batches` streams a log that does not fit in memory as pandas DataFrames, each
holding every interval of its users (a user's days are only known from all of their
intervals), ready for :func:`~pufferfish_pgm.scenarios.event_counts`,
:func:`~pufferfish_pgm.scenarios.sequences_from_events` or
:func:`~pufferfish_pgm.scenarios.transition_counts`. It needs pyarrow (the ``arrow`` extra),
imported only here, and rows grouped by user (one contiguous run of rows per user, as a
dataset sorted or written by user is); a user met again after their run ended is an error.

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

from collections.abc import Hashable, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from .._budget import check_allocation
from ..errors import InvalidDataError, InvalidParameterError, MissingDependencyError

__all__ = ["event_batches"]

#: Bytes per row of a pending batch in memory (four columns, pandas' overhead included).
ROW_BYTES = 64


def event_batches(source: str | Path, *, user: Hashable = "user", start: Hashable = "start",
                  end: Hashable = "end", state: Hashable = "state",
                  batch_rows: int = 1_000_000,
                  memory_budget: int | float | str | None = None) -> Iterator[Any]:
    """Batches of whole users of a Parquet event log (a file or a folder of files).

    Parameters
    ----------
    source : str or os.PathLike
        A Parquet file, or a folder of them (read in name order, as one dataset).
    user, start, end, state : hashable
        The columns read (others are not).
    batch_rows : int
        Rows read at a time; a batch holds them less the last user's rows, which wait for
        the next read (a user with more rows than this makes a longer batch).
    memory_budget : int, float or str, optional
        The most a batch waiting for its last user may take (about 64 bytes a row); default
        ``PUFFERFISH_PGM_MEMORY_BUDGET``, else a quarter of the machine's memory.

    Yields
    ------
    pandas.DataFrame
        The four columns, every interval of the users in it.

    Raises
    ------
    MissingDependencyError
        pyarrow is not installed (``pip install "pufferfish_pgm[arrow]"``).
    InvalidDataError
        A user's rows are not contiguous, naming the user.
    InvalidParameterError
        ``source`` does not exist or ``batch_rows`` is not a positive integer.
    LimitExceededError
        One user's rows pass the memory budget.
    """
    if not isinstance(batch_rows, int) or isinstance(batch_rows, bool) or batch_rows < 1:
        raise InvalidParameterError(f"batch_rows must be a positive integer, got {batch_rows!r}")
    path = Path(source)
    if not path.exists():
        raise InvalidParameterError(f"event log {str(source)!r} does not exist; give a Parquet "
                                    "file or a folder of Parquet files")
    try:
        import pyarrow.dataset as pads  # type: ignore[import-not-found, import-untyped]
    except ImportError:
        raise MissingDependencyError(
            "reading Parquet event logs needs pyarrow: pip install 'pufferfish_pgm[arrow]'"
        ) from None
    columns = [user, start, end, state]
    dataset = pads.dataset(str(path), format="parquet")
    missing = [c for c in columns if c not in dataset.schema.names]
    if missing:
        raise InvalidParameterError(f"the Parquet log has no column {missing[0]!r}; its columns "
                                    f"are {dataset.schema.names[:10]}")
    frames = (b.to_pandas() for b in dataset.to_batches(columns=columns, batch_size=batch_rows))
    return _whole_users(frames, user, memory_budget)


def _whole_users(frames: Iterable[Any], user: Hashable,
                 budget: int | float | str | None) -> Iterator[Any]:
    """Regroup consecutive frames so that each yielded one ends with a whole user."""
    import pandas as pd  # type: ignore[import-untyped]

    done: set = set()
    pending = None
    for frame in frames:
        if not len(frame):
            continue
        frame = frame if pending is None else pd.concat([pending, frame], ignore_index=True)
        ids = frame[user].to_numpy()
        last = len(ids) - 1
        while last > 0 and ids[last - 1] == ids[-1]:
            last -= 1
        ready, pending = frame.iloc[:last], frame.iloc[last:]
        check_allocation(len(pending) * ROW_BYTES, budget=budget,
                         what=f"the rows of user {ids[-1]!r} (read so far)")
        if len(ready):
            _check_grouped(ready, user, done)
            yield ready.reset_index(drop=True)
    if pending is not None and len(pending):
        _check_grouped(pending, user, done)
        yield pending.reset_index(drop=True)


def _check_grouped(frame: Any, user: Hashable, done: set) -> None:
    """Refuse a user whose rows were already closed (met before, then other users)."""
    ids = frame[user].to_numpy()
    runs = ids[np.concatenate([[0], np.flatnonzero(ids[1:] != ids[:-1]) + 1])]
    seen = set()
    for u in runs.tolist():
        if u in done or u in seen:
            raise InvalidDataError(
                f"user {u!r} has rows in two places of the log, with other users between; "
                "event_batches needs each user's rows together: sort the dataset by user")
        seen.add(u)
    done.update(seen)
