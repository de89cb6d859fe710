"""State codes of a block of values: one table lookup, in the narrowest dtype (internal).

:func:`pufferfish_pgm.queries._encoding.encode_rows` reads records through these: integer
values that already are the codes are returned as they are; other integers go through a
table indexed by ``value - min``; anything else (labels, floats, the absent-column marker) is
factorised by pandas first. A value that is not a state raises :class:`InvalidDataError`
naming the record, the node and the value.

Examples
--------
>>> _codes_for(np.array([[0, 1], [1, 1]], dtype=np.int8), (0, 1), None, (0, 1)).dtype
dtype('int8')
>>> _codes_for(np.array([["b", "a"]], dtype=object), ("a", "b"), None, (0, 1)).tolist()
[[1, 0]]
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import Any

import numpy as np

from ..errors import InvalidDataError
from ._integer_answers import row_blocks

__all__ = ["ABSENT"]

#: The code of an entry whose node has no column in a DataFrame (see :func:`evaluate_codes`).
ABSENT = -2


class _Absent(Enum):
    """The value of a node a DataFrame has no column for (an Enum member: it pickles to
    itself, so chunks released on other processes still recognise it)."""

    COLUMN = "no column"



def _code_dtype(states: int) -> type:
    """The narrowest signed integer dtype holding the codes ``-2 .. states - 1``."""
    return next(t for t in (np.int8, np.int16, np.int32, np.int64)
                if states - 1 <= np.iinfo(t).max)


def _codes_for(values: np.ndarray, states: tuple, node: Any, nodes: Sequence,
               first: int = 0) -> np.ndarray:
    if values.dtype.kind in "iu" and values.size and all(type(s) is int for s in states):
        low, high = int(values.min()), int(values.max())
        if states == tuple(range(len(states))) and low >= 0 and high < len(states):
            return values          # the values are the codes: read them as they are
        if high - low < 4096:      # a table indexed by value - min (no hashing of entries)
            lookup = {s: i for i, s in enumerate(states)}
            index: np.ndarray = np.array(
                [lookup.get(v, -1) for v in range(low, high + 1)], dtype=_code_dtype(len(states)))
            return _check_codes(_lookup(index, values, low), values, states, node, nodes,
                                first)
    import pandas as pd  # type: ignore[import-untyped]

    flat = values.ravel()
    labels, uniques = pd.factorize(flat, use_na_sentinel=True)
    lookup = {s: i for i, s in enumerate(states)}
    lookup[_Absent.COLUMN] = ABSENT
    table: np.ndarray = np.array([lookup.get(u, -1) for u in uniques] + [-1],
                                 dtype=_code_dtype(len(states)))
    return _check_codes(table[labels].reshape(values.shape), values, states, node, nodes,
                        first)


def _lookup(table: np.ndarray, values: np.ndarray, low: int) -> np.ndarray:
    """``table[values - low]`` block by block (no int64 copy of the whole array)."""
    out = np.empty(values.shape, dtype=table.dtype)
    for rows in row_blocks(len(values), values.shape[1]):
        out[rows] = table[values[rows].astype(np.intp) - low]
    return out


def _check_codes(codes: np.ndarray, values: np.ndarray, states: tuple, node: Any,
                 nodes: Sequence, first: int) -> np.ndarray:
    """``codes`` after checking none is -1 (a value that is not a state), else the error."""
    if int(codes.min()) >= ABSENT + 2 or not bool(np.any(codes == -1)):
        return codes
    row, col = divmod(int(np.argmax(codes.ravel() == -1)), values.shape[1])
    where = node if node is not None else nodes[col]
    value = values[row, col]
    value = value.item() if isinstance(value, np.generic) else value  # not np.int64(5)
    raise InvalidDataError(
        f"record {first + row}, node {where!r}: value {value!r} is not a state of the model "
        f"(states: {list(states)}); clean or recode the data"
    )
