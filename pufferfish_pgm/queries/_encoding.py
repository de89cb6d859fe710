"""Release on real data: encode records and evaluate the query exactly (no noise here:
:meth:`pufferfish_pgm.mechanisms.Calibration.release` adds the calibrated noise).

Data forms accepted (nothing is released if any record is invalid):

* one record: a dict node -> state, a pandas Series indexed by node, or (chains) a sequence of
  T states (list, 1-D numpy array, Series);
* many users: a 2-D numpy array (one row per user), a list of such sequences or dicts, or a
  pandas DataFrame with one row per user (columns = nodes for a network, T columns in time
  order for a chain). A network's DataFrame needs a column only for the nodes the query reads
  (its other nodes do not change the answer); a missing column the query reads is an error
  naming it, raised when the answers are evaluated.

Users are independent of each other and each follows the same class Θ. ``per_user=False``
releases one noisy aggregate: other users' contributions are independent of a user's secret,
so the aggregate is post-processing of that user's own release and keeps its guarantee.

Examples
--------
>>> import numpy as np
>>> import pufferfish_pgm as pp
>>> mc = pp.MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 4)
>>> fw = pp.Framework(mc)
>>> from pufferfish_pgm.queries import Count
>>> evaluate(fw, Count(1), [[0, 1, 1, 0], [1, 1, 1, 1]]).tolist()
[2, 4]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import InvalidDataError, ParameterTypeError
from ..scenarios import Scenario, ScenarioClass, as_class
from ._integer_answers import per_node_sums, row_blocks, weighted_counts, window_counts
from ._queries import GroupCount, Histogram, Query, WeightedQuery
from ._state_codes import ABSENT, _Absent, _code_dtype, _codes_for
from ._windowed import WindowedCount, WindowedHistogram, WindowedQuery

__all__ = ["ABSENT", "as_table", "batch_answers", "coordinate_names", "encode", "encode_rows",
           "evaluate", "evaluate_codes", "read_nodes", "records"]


def _is_table(data: Any) -> bool:
    return type(data).__name__ == "DataFrame"


def _rows(cls: ScenarioClass, data: Any) -> tuple[list | np.ndarray, bool]:
    """Return (rows, single) where rows is a 2-D array-like in model node order."""
    nodes = cls.nodes
    if isinstance(data, Mapping):
        return [_from_mapping(nodes, data, 0)], True
    if _is_table(data):
        return _table_rows(cls, data), False
    if type(data).__name__ == "Series":
        if cls.kind == "network":
            return [_from_mapping(nodes, data.to_dict(), 0)], True
        return [data.to_numpy()], True
    if isinstance(data, np.ndarray):
        if data.ndim not in (1, 2):
            raise InvalidDataError(f"data arrays must be 1-D (one user) or 2-D (one row per "
                                   f"user), got {data.ndim} dimensions")
        return (data[None, :], True) if data.ndim == 1 else (data, False)
    if isinstance(data, (list, tuple)):
        if data and all(isinstance(r, Mapping) for r in data):
            return [_from_mapping(nodes, r, i) for i, r in enumerate(data)], False
        if data and all(hasattr(r, "__len__") and not isinstance(r, str) for r in data):
            return [list(r) for r in data], False
        return [list(data)], True
    raise ParameterTypeError(f"cannot read data of type {type(data).__name__}; pass a dict, a "
                             "sequence, a numpy array or a pandas Series/DataFrame")


def _table_rows(cls: ScenarioClass, frame: Any) -> np.ndarray:
    """A DataFrame's rows in node order: columns named by node (networks) or in time order.

    A node without a column gets :attr:`_Absent.COLUMN` (code :data:`ABSENT`): only the
    columns the query reads are needed, which :func:`evaluate_codes` checks.
    """
    if cls.kind != "network":
        return frame.to_numpy()
    nodes = cls.nodes
    unknown = [c for c in frame.columns if c not in set(nodes)]
    if unknown:
        raise InvalidDataError(f"the data has a column {unknown[0]!r} that is not a "
                               f"node of the model; nodes are {list(nodes)[:10]}")
    if all(v in frame.columns for v in nodes):
        return frame[list(nodes)].to_numpy()
    rows = np.full((len(frame), len(nodes)), _Absent.COLUMN, dtype=object)
    for j, v in enumerate(nodes):
        if v in frame.columns:
            rows[:, j] = frame[v].to_numpy()
    return rows


def _from_mapping(nodes: Sequence, record: Mapping, row: int) -> list:
    known = set(nodes)
    unknown = [k for k in record if k not in known]
    if unknown:
        raise InvalidDataError(f"record {row}: unknown node {unknown[0]!r}; nodes are "
                               f"{list(nodes)[:10]}")
    missing = [v for v in nodes if v not in record]
    if missing:
        raise InvalidDataError(f"record {row}: no value for node {missing[0]!r}; give every node")
    return [record[v] for v in nodes]


def encode(scenarios: ScenarioClass | Scenario, data: Any) -> tuple[np.ndarray, bool]:
    """State codes ``(n_users, n_nodes)`` for ``data``, and whether it was a single record.

    Raises :class:`InvalidDataError` naming the row, node and value of the first bad entry.

    Examples
    --------
    >>> import pufferfish_pgm as pp
    >>> mc = pp.MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 3, states=["a", "b"])
    >>> encode(pp.ScenarioClass(mc), ["a", "b", "b"])
    (array([[0, 1, 1]]), True)
    """

    cls = as_class(scenarios)
    rows, single = _rows(cls, data)
    return np.array(encode_rows(cls, rows), dtype=np.int64), single


def records(scenarios: ScenarioClass | Scenario, data: Any) -> tuple[Any, bool]:
    """The records of ``data`` in node order, not yet checked (a 2-D array or a list of rows,
    sliceable into chunks for :func:`encode_rows`), and whether it was a single record."""
    return _rows(as_class(scenarios), data)


def encode_rows(cls: ScenarioClass, rows: Any, first: int = 0) -> np.ndarray:
    """State codes of already read records (see :func:`records`); ``first`` is the number of
    the first record, for the messages.

    The codes have the narrowest signed dtype that holds them (int8 for up to 127 states), and
    a chain's integer array whose values already are its codes is returned as it is (no copy:
    the release only reads it).
    """
    width = len(cls.nodes)
    if len(rows) == 0:
        raise InvalidDataError("no records given; pass at least one")
    lengths = {len(r) for r in rows} if isinstance(rows, list) else {rows.shape[1]}
    if lengths != {width}:
        bad = next(i for i, r in enumerate(rows) if len(r) != width)
        raise InvalidDataError(f"record {first + bad} has {len(rows[bad])} values but the model "
                               f"has {width} nodes; give one value per node (time step)")
    array = np.asarray(rows, dtype=object) if isinstance(rows, list) else rows
    if len(array) == 0:
        raise InvalidDataError("no records given; pass at least one")
    if cls.kind == "chain":
        return _codes_for(array, cls.states_of(cls.nodes[0]), None, cls.nodes, first)
    k = max(len(cls.states_of(v)) for v in cls.nodes)
    codes = np.empty(array.shape, dtype=_code_dtype(k))
    for j, v in enumerate(cls.nodes):
        codes[:, j] = _codes_for(array[:, j:j + 1], cls.states_of(v), v, cls.nodes,
                                 first)[:, 0]
    return codes


def evaluate(scenarios: Any, query: Query, data: Any) -> np.ndarray:
    """Exact answers of ``query`` on each user's record (no noise): shape (n,) or (n, d) for a
    vector (d bars of a histogram, or the coordinates of a windowed query).

    ``scenarios`` is a scenario, a class Θ, or anything holding one as ``.scenarios`` (a
    ``Framework``)."""
    cls = as_class(getattr(scenarios, "scenarios", scenarios))
    codes, _ = encode(cls, data)
    return evaluate_codes(cls, query, codes)


def evaluate_codes(cls: ScenarioClass, query: Query, codes: np.ndarray) -> np.ndarray:
    """Exact answers from already encoded state codes ``(n_users, n_nodes)``, of any integer
    dtype (integer queries by integer arithmetic, block by block: see
    :mod:`~pufferfish_pgm.queries._integer_answers`).

    Raises :class:`InvalidDataError` naming the node when a column the query reads was absent
    from the data (code :data:`ABSENT`).
    """
    _check_read(cls, query, codes)
    if isinstance(query, Histogram):
        return np.stack([evaluate_codes(cls, bar, codes) for bar in query.bars(cls)], axis=-1)
    if isinstance(query, GroupCount):   # one bar per group
        return np.stack([evaluate_codes(cls, bar, codes) for bar in query.parts(cls)], axis=-1)
    if isinstance(query, WindowedQuery):   # the parts' answers side by side, window by window
        return _windowed(cls, query, codes)
    if not isinstance(query, WeightedQuery):
        raise ParameterTypeError(f"cannot evaluate a {type(query).__name__}: a scalar query "
                                 "needs weights per node and state (weight_table)")
    index = {v: j for j, v in enumerate(cls.nodes)}
    nodes = query.node_list(cls)
    cols = range(len(nodes)) if nodes == cls.nodes else [index[v] for v in nodes]
    weights = query.weight_table(cls)
    if query.integer:
        if bool(np.all(weights == weights[:1])):    # one weight per state: count the states
            return weighted_counts(codes, cols, weights[0])
        return per_node_sums(codes, cols, weights)
    out = np.empty(len(codes))
    for rows in row_blocks(len(codes), len(cols)):
        block = codes[rows][:, cols].astype(np.intp).T
        out[rows] = np.take_along_axis(weights, block, axis=1).sum(axis=0)
    return out


def _windowed(cls: ScenarioClass, query: WindowedQuery, codes: np.ndarray) -> np.ndarray:
    """A windowed count or histogram by integer window sums; other windowed queries by their
    own :meth:`~pufferfish_pgm.queries.WindowedQuery.answer_codes`."""
    query.windows(cls)                     # checks the chain and the width
    if isinstance(query, WindowedCount):
        return window_counts(codes, [cls.state_index(cls.nodes[0], query.state)], query.width)
    if isinstance(query, WindowedHistogram):
        return window_counts(codes, range(len(cls.states_of(cls.nodes[0]))), query.width)
    return query.answer_codes(cls, codes)


def read_nodes(cls: ScenarioClass, query: Query) -> tuple:
    """The nodes whose values ``query`` reads, in model order (every node when it does not
    say).

    Examples
    --------
    >>> import pufferfish_pgm as pp
    >>> from pufferfish_pgm.scenarios import default_model_path, load_scenarios
    >>> asia = load_scenarios(default_model_path("asia.bif"))
    >>> read_nodes(asia, pp.Count("yes", ("lung", "tub")))
    ('tub', 'lung')
    """
    if isinstance(query, (Histogram, GroupCount)):
        bars = query.bars(cls) if isinstance(query, Histogram) else query.parts(cls)
        used = {v for bar in bars for v in read_nodes(cls, bar)}
    elif isinstance(query, WeightedQuery):
        used = set(query.node_list(cls))
    else:
        return tuple(cls.nodes)
    return tuple(v for v in cls.nodes if v in used)


def _check_read(cls: ScenarioClass, query: Query, codes: np.ndarray) -> None:
    """Refuse answers that would read a node the data has no column for."""
    if cls.kind == "chain" or codes.size == 0 or int(codes.min()) != ABSENT:
        return                             # only a network's table can lack a column
    read = read_nodes(cls, query)
    index = {v: j for j, v in enumerate(cls.nodes)}
    absent = [v for v in read if bool(np.any(codes[:, index[v]] == ABSENT))]
    if absent:
        shown = ", ".join(map(str, read[:12])) + (", ..." if len(read) > 12 else "")
        raise InvalidDataError(
            f"the data has no column for node {absent[0]!r}, which the query {query.name} "
            f"reads; give a column for each of the {len(read)} nodes it reads ({shown})")


def coordinate_names(cls: ScenarioClass, query: Query) -> tuple[str, ...]:
    """Names of the coordinates of a vector query's answer; ``()`` for a scalar query.

    Examples
    --------
    >>> import pufferfish_pgm as pp
    >>> mc = pp.MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 3)
    >>> coordinate_names(pp.ScenarioClass(mc), pp.WindowedCount(1, 2))
    ('count(1)@[0,2)', 'count(1)@[2,3)')
    """
    if isinstance(query, (WindowedQuery, GroupCount)):
        return query.coordinates(cls)
    if isinstance(query, Histogram):
        return tuple(bar.name for bar in query.bars(cls))
    return ()


def as_table(batch: Any) -> Any:
    """A pandas DataFrame for an Arrow ``Table``/``RecordBatch`` or a Polars ``DataFrame``
    (through each column's numpy conversion; neither library is imported here); any other
    batch as it is.

    Examples
    --------
    >>> as_table([[0, 1]])
    [[0, 1]]
    """
    module = type(batch).__module__.split(".")[0]
    if module not in ("pyarrow", "polars"):
        return batch
    import pandas as pd  # type: ignore[import-untyped]

    if module == "pyarrow":      # Arrays copy when they must (strings, nulls): not zero-copy
        names = list(batch.column_names)
        columns = [col.to_numpy(zero_copy_only=False) for col in batch.columns]
    else:
        names = list(batch.columns)
        columns = [col.to_numpy() for col in batch.get_columns()]
    return pd.DataFrame({name: np.asarray(col) for name, col in
                         zip(names, columns, strict=True)})


def batch_answers(cls: ScenarioClass, query: Query, batch: Any) -> Any:
    """The exact integer answers of ``query`` on every user of ``batch``, no noise (the
    partition kernel behind ``Calibration.answers``).

    A table (pandas, Arrow or Polars; one row per user) gives pandas: a Series named by the
    query for a scalar query, a DataFrame with one column per coordinate (histogram bar,
    window) for a vector query, on the pandas batch's index (a fresh RangeIndex for Arrow and
    Polars). Other data (the forms ``Calibration.release`` reads) gives numpy: ``(n,)`` or
    ``(n, d)``, or one answer for a single record. Bad records raise
    :class:`~pufferfish_pgm.errors.InvalidDataError` naming the record, node and value.
    """
    table = as_table(batch)
    rows, single = records(cls, table)
    out = evaluate_codes(cls, query, encode_rows(cls, rows))
    if single:
        return out[0]
    if type(table).__name__ != "DataFrame":
        return out
    import pandas as pd

    if out.ndim == 1:
        return pd.Series(out, index=table.index, name=query.name)
    return pd.DataFrame(out, index=table.index, columns=list(coordinate_names(cls, query)))
