"""Where ``release --events --theta cohort --output FILE`` writes: a CSV or Parquet file,
appended batch by batch (one row per (user, day) or per day, one column per window).

Examples
--------
>>> import pandas as pd, tempfile, pathlib
>>> part = pd.DataFrame({"count(walk)@[0,6)": [1, 2]}, index=pd.MultiIndex.from_tuples(
...     [("ann", pd.Timestamp("2024-01-02")), ("bob", pd.Timestamp("2024-01-02"))],
...     names=["user", "day"]))
>>> with tempfile.TemporaryDirectory() as tmp:
...     path = pathlib.Path(tmp) / "out.csv"
...     with Sink(path) as sink:
...         sink.write(part)
...         sink.write(part.iloc[:1])
...     print(path.read_text().strip())
user,day,"count(walk)@[0,6)"
ann,2024-01-02,1
bob,2024-01-02,2
ann,2024-01-02,1
"""

from __future__ import annotations

from pathlib import Path
from types import TracebackType
from typing import Any

from ..errors import InvalidParameterError, MissingDependencyError

__all__ = ["Sink", "is_parquet_name"]


def is_parquet_name(path: str | Path) -> bool:
    """A ``.parquet`` or ``.pq`` file name (anything else is written as CSV)."""
    return Path(path).suffix.lower() in (".parquet", ".pq")


class Sink:
    """An output file opened once and appended to: CSV (header once) or Parquet (one row
    group per write). Use as a context manager; ``rows`` and ``users`` count what was
    written."""

    def __init__(self, path: Path) -> None:
        if not path.parent.is_dir():
            raise InvalidParameterError(f"--output {path}: the folder {path.parent} does not "
                                        "exist")
        self.path, self.rows, self.users = path, 0, 0
        self._parquet = is_parquet_name(path)
        self._writer: Any = None

    @staticmethod
    def check_parquet() -> None:
        """Refuse a Parquet output without pyarrow, before any work."""
        try:
            import pyarrow  # type: ignore[import-not-found, import-untyped]  # noqa: F401
        except ImportError:
            raise MissingDependencyError(
                "writing Parquet needs pyarrow: pip install 'pufferfish_pgm[arrow]' (or give "
                "--output FILE.csv)") from None

    def __enter__(self) -> Sink:
        return self

    def write(self, frame: Any) -> None:
        """Append one batch's rows (the index becomes the first columns)."""
        flat = frame.reset_index()
        if "day" in flat.columns:
            flat["day"] = flat["day"].dt.strftime("%Y-%m-%d")
        self.rows += len(flat)
        if "user" in flat.columns:
            self.users += int(flat["user"].nunique())
        if self._parquet:
            self._write_parquet(flat)
        else:
            flat.to_csv(self.path, mode="w" if self._writer is None else "a",
                        header=self._writer is None, index=False)
            self._writer = True

    def _write_parquet(self, flat: Any) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq  # type: ignore[import-not-found, import-untyped]

        table = pa.Table.from_pandas(flat, preserve_index=False)
        if self._writer is None:
            self._writer = pq.ParquetWriter(str(self.path), table.schema)
        self._writer.write_table(table.cast(self._writer.schema))

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._parquet and self._writer is not None:
            self._writer.close()
        if self._writer is None and kind is None:     # nothing written: an empty file
            self.path.write_text("")
