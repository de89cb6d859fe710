"""Exact nearby count laws of network Markov quilts (``docs/exact-quilt.md``).

The exact quilt bound needs the remote part independent of the nearby part *and* of the
secret given the quilt: ``X_R ⟂ (X_N, X_i) | X_Q``. d-separation of X_R from X_i alone (the
MQM planner's split, :func:`~pufferfish_pgm.quilts.partition`) is not enough: with
``X_i -> C <- R`` and an empty quilt, R is d-separated from X_i but not from C. So the nearby
set here is the closure of {X_i} under d-connection given X_Q in every member's DAG, and the
remote set is the rest. The nearby law for each quilt value x_Q and secret state s comes from
variable elimination with a count axis
(:func:`~pufferfish_pgm.queries._network_count_law.network_log_joint`) with evidence
(x_Q, X_i = s), whose total is also ``log P(x_Q, X_i = s)``.

Examples
--------
>>> import networkx as nx
>>> dag = nx.DiGraph([("x", "c"), ("r", "c")])
>>> closure([dag], ("x", "c", "r"), "x", frozenset())
(('x', 'c', 'r'), ())
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..distributions._engine import logsumexp
from ..queries._engine import network_log_joint, node_weights
from ._influence import ordered_pairs, quilt_table_size
from ._network_planner import candidate_quilts, class_dags, d_connected
from ._quilt_classes import NodeClass
from ._quilt_laws import QuiltRows

__all__ = ["NetworkQuiltLaws", "closure", "network_setup"]


def closure(dags: Sequence, nodes: tuple, node: Any, quilt: frozenset) -> tuple[tuple, tuple]:
    """(nearby, remote) in model order: nearby is the smallest set holding ``node`` that every
    other non-quilt node d-connected to it given ``quilt`` (in some DAG) belongs to."""
    near, todo = {node}, [node]
    while todo:
        v = todo.pop()
        for dag in dags:
            for x in d_connected(dag, v, quilt) - near - quilt:
                near.add(x)
                todo.append(x)
    return (tuple(v for v in nodes if v in near),
            tuple(v for v in nodes if v not in near and v not in quilt))


class NetworkQuiltLaws:
    """Rows of network quilts (key ``("net", node, quilt)``), built on demand and kept."""

    def __init__(self, framework: Any, query: Any, pairs_of: Any) -> None:
        self.cls = framework.scenarios
        self.dags = class_dags(self.cls)
        raw = node_weights(self.cls, query)
        self.weights = {v: w - w.min() for v, w in raw.items()}
        self.pairs_of = pairs_of
        self._rows: dict[tuple, QuiltRows] = {}

    def split(self, node: Any, quilt: frozenset) -> tuple[tuple, tuple]:
        return closure(self.dags, tuple(self.cls.nodes), node, quilt)

    def rows(self, key: tuple) -> QuiltRows:
        out = self._rows.get(key)
        if out is None:
            out = self._rows[key] = self._build(key[1], key[2])
        return out

    def forget(self, key: tuple) -> None:
        """Drop the rows of ``key`` (the next :meth:`rows` computes them again)."""
        self._rows.pop(key, None)

    def _laws(self, bn: Any, node: Any, quilt: tuple, weights: dict,
              states: list) -> dict:
        """{(x_Q, s): log P(F_N = c, x_Q, X_i = s)} for every quilt value and state."""
        ranges = [range(len(bn.states_of(q))) for q in quilt]
        return {(x, s): network_log_joint(bn, weights, {**dict(zip(quilt, x, strict=True)),
                                                        node: s})
                for x in itertools.product(*ranges) for s in states}

    def _build(self, node: Any, quilt: frozenset) -> QuiltRows:
        nearby, _ = self.split(node, quilt)
        weights = {v: self.weights[v] for v in nearby if v in self.weights}
        width = 1 + sum(int(w.max()) for w in weights.values())
        q = tuple(v for v in self.cls.nodes if v in quilt)
        pairs = self.pairs_of(node)
        states = sorted({s for p in pairs for s in p})
        rows: list[np.ndarray] = []
        cols: list[list] = [[] for _ in range(6)]
        blockers: list[tuple] = []
        for theta, bn in enumerate(self.cls):
            _scenario_rows(theta, self._laws(bn, node, q, weights, states), pairs, states,
                           rows, cols, blockers)
        return _quilt_rows(rows, cols, blockers, width)


def _scenario_rows(theta: int, laws: dict, pairs: list, states: list, rows: list,
                   cols: list, blockers: list) -> None:
    """Append one scenario's rows (each (quilt value, state) law normalised once), its pair
    columns (rows of the two secrets, θ, the states, the log ratio at the quilt value) and its
    blockers (a quilt value possible with one secret and not the other)."""
    total = {key: float(logsumexp(v)) for key, v in laws.items()}
    secret = {s: float(logsumexp(np.array([t for (x, t2), t in total.items() if t2 == s])))
              for s in states}
    index: dict = {}
    for s, s2 in pairs:
        if not (np.isfinite(secret[s]) and np.isfinite(secret[s2])):
            continue   # a secret impossible under θ: the pair is not constrained
        for x in {x for x, _ in laws}:
            one, two = total[(x, s)], total[(x, s2)]
            if np.isfinite(one) and not np.isfinite(two):
                blockers.append((theta, -1, s, s2))
            elif np.isfinite(one) and np.isfinite(two):
                for col, val in zip(cols, (_row(index, rows, laws, (x, s), total),
                                           _row(index, rows, laws, (x, s2), total),
                                           theta, s, s2,
                                           (one - secret[s]) - (two - secret[s2])),
                                    strict=True):
                    col.append(val)


def _quilt_rows(rows: list, cols: list, blockers: list, width: int) -> QuiltRows:
    """The collected rows and pair columns as a :class:`QuiltRows` (rows padded to ``width``)."""
    table = np.full((len(rows), width), -np.inf)
    for r, row in enumerate(rows):
        table[r, :row.size] = row
    m = len(cols[0])
    return QuiltRows(grid=np.arange(width, dtype=float), rows=table,
                     first=np.array(cols[0], dtype=np.int64),
                     second=np.array(cols[1], dtype=np.int64),
                     theta=np.array(cols[2], dtype=np.int64), left=np.full(m, -1),
                     state=np.array(cols[3], dtype=np.int64),
                     other=np.array(cols[4], dtype=np.int64),
                     r0=np.array(cols[5], dtype=float),
                     blockers=np.array(blockers, dtype=np.int64).reshape(-1, 4),
                     distance=0, prior=False)


def _row(index: dict, rows: list, laws: dict, key: tuple, total: dict) -> int:
    if key not in index:
        index[key] = len(rows)
        rows.append(laws[key] - total[key])
    return index[key]


def network_setup(framework: Any, query: Any, plan: Any, max_candidates: int,
                  max_assignments: int) -> tuple[list, list, list, dict, tuple]:
    """Classes (one per node of the MQM ``plan``), candidate keys (the empty quilt and the
    planner's quilts with at most ``max_assignments`` joint values, fewest nearby nodes
    first), laws, quilts skipped per node and nodes whose candidates were cut."""
    cls = framework.scenarios
    laws = NetworkQuiltLaws(framework, query, lambda v: ordered_pairs(framework, v))
    k = max(len(cls.states_of(v)) for v in cls.nodes)
    classes, candidates, skipped, cut = [], [], {}, []
    for entry in plan:
        node = entry.node
        quilts, was_cut = candidate_quilts(cls, node, max_candidates=max_candidates)
        keep = [q for q in quilts if quilt_table_size(cls, q) <= max_assignments]
        if len(keep) < len(quilts):
            skipped[node] = len(quilts) - len(keep)
        if was_cut:
            cut.append(node)
        classes.append(NodeClass(
            nodes=np.array([0]), node=node, head=-1, tail=-1,
            possible=np.ones((len(cls), k), bool), prior=np.zeros((len(cls), k, k)),
            support=np.ones((len(cls), 1, k), bool), mqm_sigma=float(entry.sigma), fixed=True))
        keys = [("net", node, frozenset())] + [("net", node, frozenset(q)) for q in keep]
        candidates.append(sorted(keys, key=lambda key: len(laws.split(node, key[2])[0])))
    return classes, candidates, [laws] * len(classes), skipped, tuple(cut)
