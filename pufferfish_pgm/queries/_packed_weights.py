"""Integer weights of linear queries, packed into one non-negative integer (internal).

A query ``F_j = Σ_v w_j(v, X_v)`` is shifted so each node's weights are ``>= 0`` (the shifts
add up to ``offset_j``) and divided by the gcd ``step_j`` of what remains; it then ranges over
``0..R_j - 1``. Several queries are packed as the digits of a mixed-radix number,
``c = Σ_j F'_j · Π_{l<j} R_l``: no digit can overflow, so sums of packed weights are exactly
the packed sums and a single count axis carries the joint distribution.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> from pufferfish_pgm.queries import Count, LinearQuery
>>> mc = MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 2)
>>> p = pack_queries(mc, [LinearQuery({0: 3, 1: -3}), Count(1)])
>>> p.offsets.tolist(), p.steps.tolist(), p.radices.tolist()
([-6, 0], [6, 1], [3, 3])
>>> p.unpack(np.array([0, 4, 8])).tolist()
[[-6, 0], [0, 1], [6, 2]]
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidParameterError, LimitExceededError, ParameterTypeError
from ..scenarios import as_class

__all__ = ["PackedWeights", "node_weights", "pack_queries"]

#: Default cap on the number of packed values (the product of the radices).
MAX_PACKED = 20_000_000


def node_weights(cls: Any, query: Any) -> dict:
    """``{node: int64 array over its states}`` for a Count or integer LinearQuery."""
    if not hasattr(query, "weights") or not hasattr(query, "node_list"):
        raise ParameterTypeError(
            f"expected a Count or LinearQuery, got {type(query).__name__}; a Histogram is a "
            "vector of Counts (use its bars())"
        )
    out = {}
    for v in query.node_list(cls):
        row = np.zeros(len(cls.states_of(v)))
        for s, w in query.weights:
            row[cls.state_index(v, s)] = w
        if not np.all(np.isfinite(row)) or np.any(row != np.round(row)):
            bad = row[np.flatnonzero(row != np.round(row))[0]]
            raise InvalidParameterError(
                f"query {query.name} gives node {v!r} the weight {bad!r}, which is not an "
                "integer; the exact distributions need integer weights (scale the weights)"
            )
        out[v] = row.astype(np.int64)
    return out


@dataclass(frozen=True, eq=False)
class PackedWeights:
    """Packed non-negative integer weights per node and how to unpack them."""

    weights: dict
    offsets: np.ndarray
    steps: np.ndarray
    radices: np.ndarray
    key: tuple

    def unpack(self, packed: np.ndarray) -> np.ndarray:
        """Query values (m, d) for packed values ``packed`` (m,)."""
        packed = np.asarray(packed, dtype=np.int64)
        place = np.concatenate(([1], np.cumprod(self.radices)[:-1])).astype(np.int64)
        digits = (packed[:, None] // place[None, :]) % self.radices[None, :]
        return self.offsets[None, :] + self.steps[None, :] * digits


def pack_queries(scenarios: Any, queries: list, max_packed: int = MAX_PACKED) -> PackedWeights:
    """Pack integer linear queries (see the module docstring)."""
    cls = as_class(scenarios)
    per_query = [node_weights(cls, q) for q in queries]
    offsets, steps, radices, shifted = [], [], [], []
    for table in per_query:
        rows = {v: w - w.min() for v, w in table.items()}
        step = math.gcd(*(int(x) for w in rows.values() for x in w)) or 1
        rows = {v: w // step for v, w in rows.items()}
        offsets.append(sum(int(w.min()) for w in table.values()))
        steps.append(step)
        radices.append(sum(int(w.max()) for w in rows.values()) + 1)
        shifted.append(rows)
    total = math.prod(radices)
    if total > max_packed:
        raise LimitExceededError(
            f"the joint distribution of {len(queries)} queries has {total:,} possible values "
            f"(limit {max_packed:,}); release fewer coordinates jointly or raise the limit"
        )
    packed: dict = {}
    place = 1
    for rows, radix in zip(shifted, radices, strict=True):
        for v, w in rows.items():
            packed[v] = packed.get(v, 0) + w * place
        place *= radix
    packed = {v: np.asarray(w, dtype=np.int64) for v, w in packed.items()}
    key = tuple((repr(v), w.tobytes()) for v, w in packed.items())
    return PackedWeights(packed, np.array(offsets, np.int64), np.array(steps, np.int64),
                         np.array(radices, np.int64), key)
