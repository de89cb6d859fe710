"""What the quilt planners return: one :class:`PlanEntry` per secret node (DESIGN §3.2–3.3).

A :class:`ChainPlan` stores the entries of a long chain compactly as arrays whose nearby and
remote sets are ranges (:class:`NodeRanges`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

import numpy as np

from .._budget import check_allocation, memory_budget

__all__ = ["ChainPlan", "NodeRanges", "OtherNodes", "PlanEntry", "PlanLedger", "dict_bytes",
           "entry_bytes", "set_bytes"]


@dataclass(frozen=True, kw_only=True)
class PlanEntry:
    """The Markov quilt chosen for one secret node.

    ``quilt``, ``nearby`` and ``remote`` partition the nodes (the secret node is nearby);
    ``influence`` is e_Θ(quilt | node) and ``sigma`` the node's σ_i for L = 1.
    ``trivial`` is True when no quilt beat the trivial one (quilt = ∅, nearby = all nodes).
    """

    node: Any
    quilt: tuple
    nearby: tuple | range
    remote: tuple | range | NodeRanges | Sequence   # Sequence: networks of components
    influence: float
    sigma: float
    trivial: bool = False

    @property
    def card_nearby(self) -> int:
        return len(self.nearby)


@dataclass(frozen=True)
class NodeRanges(Sequence[int]):
    """A set of chain nodes stored as disjoint ranges (O(1) memory for a remote set).

    Examples
    --------
    >>> r = NodeRanges((range(0, 3), range(7, 9)))
    >>> len(r), list(r), 8 in r, r[3]
    (5, [0, 1, 2, 7, 8], True, 7)
    """

    ranges: tuple

    def __len__(self) -> int:
        return sum(len(r) for r in self.ranges)

    @overload
    def __getitem__(self, k: int) -> int: ...

    @overload
    def __getitem__(self, k: slice) -> list[int]: ...

    def __getitem__(self, k: int | slice) -> int | list[int]:
        if isinstance(k, slice):
            return list(self)[k]
        k = k + len(self) if k < 0 else k
        for r in self.ranges:
            if k < len(r):
                return r[k]
            k -= len(r)
        raise IndexError("node index out of range")

    def __iter__(self) -> Iterator[int]:
        for r in self.ranges:
            yield from r

    def __contains__(self, node: object) -> bool:
        return any(node in r for r in self.ranges)


@dataclass(frozen=True, eq=False)
class ChainPlan(Sequence[PlanEntry]):
    """One :class:`PlanEntry` per secret node of a chain, stored as node classes (runs).

    A run is a range ``starts[r] .. stops[r] - 1`` of consecutive secret nodes that share
    one option: ``run_left``/``run_right`` the distances a, b of the quilt nodes (0 for an
    absent side), ``run_influence``, ``run_sigma`` and ``run_truncated`` (the search reached
    ``max_window`` before it could prove optimality; σ is still valid). The planner's answer
    is decided by the nodes near either end and one class for the stationary middle, so a
    plan takes O(max_window) memory whatever T. Entries are built on access.

    ``nodes``, ``left``, ``right``, ``influence``, ``sigma`` and ``truncated`` give the
    per-node arrays (length = number of secret nodes), built on access and checked against
    the memory budget; ``sigma_max``, ``worst_node``, :meth:`count_where` and indexing never
    build them.

    Examples
    --------
    >>> plan = ChainPlan.from_nodes(nodes=np.arange(4), left=np.array([0, 1, 1, 0]),
    ...                             right=np.array([1, 1, 1, 0]), influence=np.zeros(4),
    ...                             sigma=np.array([2.0, 3.0, 3.0, 4.0]),
    ...                             truncated=np.zeros(4, dtype=bool), length=4)
    >>> len(plan), plan.run_count, plan[2].quilt, plan.worst_node, plan.sigma.tolist()
    (4, 3, (1, 3), 3, [2.0, 3.0, 3.0, 4.0])
    """

    starts: np.ndarray
    stops: np.ndarray
    run_left: np.ndarray
    run_right: np.ndarray
    run_influence: np.ndarray
    run_sigma: np.ndarray
    run_truncated: np.ndarray
    length: int
    offsets: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        sizes = np.asarray(self.stops) - np.asarray(self.starts)
        object.__setattr__(self, "offsets", np.concatenate([[0], np.cumsum(sizes)]))

    @classmethod
    def from_nodes(cls, *, nodes: np.ndarray, left: np.ndarray, right: np.ndarray,
                   influence: np.ndarray, sigma: np.ndarray, truncated: np.ndarray,
                   length: int) -> ChainPlan:
        """A plan from per-node arrays (nodes sorted); consecutive equal nodes merge."""
        nodes = np.asarray(nodes, dtype=np.int64)
        values = [np.asarray(v) for v in (left, right, influence, sigma, truncated)]
        new = np.ones(len(nodes), dtype=bool)
        new[1:] = np.diff(nodes) != 1
        for v in values:
            new[1:] |= v[1:] != v[:-1]
        first = np.flatnonzero(new)
        last = np.append(first[1:], len(nodes)) - 1
        run = dict(zip(("run_left", "run_right", "run_influence", "run_sigma", "run_truncated"),
                       (v[first] for v in values), strict=True))
        return cls(starts=nodes[first], stops=nodes[last] + 1, length=length, **run)

    def __len__(self) -> int:
        return int(self.offsets[-1])

    @property
    def run_count(self) -> int:
        """Number of node classes (runs) stored."""
        return len(self.starts)

    def _per_node(self, values: np.ndarray) -> np.ndarray:
        check_allocation(8 * len(self), what=f"a per-node array of the chain plan "
                         f"({len(self)} secret nodes; the plan itself keeps {self.run_count} "
                         "node classes: use starts/stops and the run_ fields)")
        return np.repeat(values, np.diff(self.offsets))

    @property
    def nodes(self) -> np.ndarray:
        """The secret nodes, sorted (built on access)."""
        check_allocation(8 * len(self), what=f"the node list of the chain plan ({len(self)} "
                         "secret nodes)")
        if self.run_count == 1:
            return np.arange(self.starts[0], self.stops[0])
        return np.concatenate([np.arange(a, b) for a, b in zip(self.starts, self.stops,
                                                               strict=True)])

    @property
    def left(self) -> np.ndarray:
        return self._per_node(self.run_left)

    @property
    def right(self) -> np.ndarray:
        return self._per_node(self.run_right)

    @property
    def influence(self) -> np.ndarray:
        return self._per_node(self.run_influence)

    @property
    def sigma(self) -> np.ndarray:
        return self._per_node(self.run_sigma)

    @property
    def truncated(self) -> np.ndarray:
        return self._per_node(self.run_truncated)

    def count_where(self, mask: np.ndarray) -> int:
        """Number of secret nodes in the runs where ``mask`` (one boolean per run) holds."""
        return int(np.diff(self.offsets)[np.asarray(mask, dtype=bool)].sum())

    @overload
    def __getitem__(self, k: int) -> PlanEntry: ...

    @overload
    def __getitem__(self, k: slice) -> list[PlanEntry]: ...

    def __getitem__(self, k: int | slice) -> PlanEntry | list[PlanEntry]:
        if isinstance(k, slice):
            return [self[j] for j in range(len(self))[k]]
        k = int(k) + len(self) if k < 0 else int(k)
        if not 0 <= k < len(self):
            raise IndexError("plan index out of range")
        r = int(np.searchsorted(self.offsets, k, side="right")) - 1
        i = int(self.starts[r]) + k - int(self.offsets[r])
        a, b = int(self.run_left[r]), int(self.run_right[r])
        quilt = tuple(v for v, d in ((i - a, a), (i + b, b)) if d)
        lo, hi = (i - a + 1 if a else 0), (i + b if b else self.length)
        remote = tuple(r for r in (range(0, lo - 1 if a else 0),
                                   range(hi + 1 if b else self.length, self.length)) if r)
        return PlanEntry(node=i, quilt=quilt, nearby=range(lo, hi), remote=NodeRanges(remote),
                         influence=float(self.run_influence[r]),
                         sigma=float(self.run_sigma[r]), trivial=not (a or b))

    def __iter__(self) -> Iterator[PlanEntry]:
        return (self[k] for k in range(len(self)))

    @property
    def sigma_max(self) -> float:
        """σ_max = max_i σ_i (0 for an empty plan)."""
        return float(self.run_sigma.max(initial=0.0))

    @property
    def worst_node(self) -> int | None:
        """The first node reaching σ_max."""
        return int(self.starts[np.argmax(self.run_sigma)]) if len(self) else None


@dataclass(frozen=True)
class OtherNodes(Sequence):
    """The nodes of ``nodes`` (model order) that are not in ``kept``, listed only on demand.

    Examples
    --------
    >>> r = OtherNodes(("a", "b", "c"), frozenset({"a", "b", "c"}), frozenset({"b"}))
    >>> len(r), list(r), "c" in r, "b" in r, r[1]
    (2, ['a', 'c'], True, False, 'c')
    """

    nodes: tuple
    universe: frozenset
    kept: frozenset

    def __len__(self) -> int:
        return len(self.nodes) - len(self.kept)

    def __iter__(self) -> Iterator:
        return (v for v in self.nodes if v not in self.kept)

    def __contains__(self, node: object) -> bool:
        return node in self.universe and node not in self.kept

    @overload
    def __getitem__(self, k: int) -> Any: ...

    @overload
    def __getitem__(self, k: slice) -> list: ...

    def __getitem__(self, k: int | slice) -> Any:
        return list(self)[k]


#: Bytes of one entry besides its node sets: the PlanEntry and OtherNodes objects with their
#: attribute dicts, the two floats, and the planner's (entry, counts, cut) result with its
#: Counter (879 bytes measured by tracemalloc on CPython 3.11; rounded up).
ENTRY_BYTES = 1024
_TUPLE, _SET = sys.getsizeof(()), sys.getsizeof(frozenset())


def set_bytes(size: int) -> int:
    """An upper bound of the bytes of a frozenset of ``size`` elements built from a tuple.

    CPython grows a set's table when it is 3/5 full, to the smallest power of two above four
    times the elements held (twice past 50,000), so the table never exceeds the smallest
    power of two above ``4 * size`` slots of 16 bytes; up to 4 elements fit the inline 8.

    Examples
    --------
    >>> set_bytes(500) >= sys.getsizeof(frozenset(range(500)))
    True
    """
    slots = 8 if size < 5 else 1 << (4 * size).bit_length()
    return _SET + (16 * slots if slots > 8 else 0)


def dict_bytes(size: int) -> int:
    """An upper bound of the bytes of a dict of ``size`` items built by insertion: CPython
    keeps at most the smallest power of two above ``3 * size`` slots (an 8-byte index and
    2/3 of a 24-byte entry each; 8 slots up to 5 items).

    Examples
    --------
    >>> dict_bytes(1000) >= sys.getsizeof(dict.fromkeys(range(1000)))
    True
    """
    slots = 8 if size <= 5 else 1 << (3 * size).bit_length()
    return 96 + 24 * slots


def entry_bytes(nearby: int, quilt: int) -> int:
    """An upper bound of the bytes one :class:`PlanEntry` holds beyond shared node sets: its
    nearby and quilt tuples (``nearby``, ``quilt`` nodes) and its remote set's frozenset of
    both (:class:`OtherNodes`); ``(0, 0)`` for an entry whose sets are all shared.

    Examples
    --------
    >>> entry_bytes(0, 0), entry_bytes(3, 2)
    (1024, 1872)
    """
    if not nearby and not quilt:
        return ENTRY_BYTES
    return ENTRY_BYTES + 2 * _TUPLE + 8 * (nearby + quilt) + set_bytes(nearby + quilt)


class PlanLedger:
    """The bytes a network plan holds so far, checked against the memory budget before each
    entry's node sets are built (the plan of n secret nodes grows by up to ``max_region``
    nearby nodes and a quilt per entry, so its total is what the budget must bound).

    Examples
    --------
    >>> ledger = PlanLedger(budget=3000, secret_nodes=3, max_region=500)
    >>> ledger.admit("a", 2, 1); ledger.held
    1344
    >>> ledger.admit("b", 30, 2)
    Traceback (most recent call last):
    ...
    pufferfish_pgm.errors.LimitExceededError: the plan of MQM (node 'b', entry 2 of 3: ...
    """

    def __init__(self, *, budget: int | float | str | None, secret_nodes: int,
                 max_region: int) -> None:
        self.limit = memory_budget(budget)
        self.secret_nodes, self.max_region = secret_nodes, max_region
        self.held = 0
        self.entries = 0

    def admit(self, node: Any, nearby: int, quilt: int) -> None:
        """Count one entry (``nearby``, ``quilt``: the sizes of its own node sets; 0, 0 when
        they are shared); raise LimitExceededError first when the plan would pass the budget.
        """
        self._add(entry_bytes(nearby, quilt), node, (
            f"entry {self.entries + 1} of {self.secret_nodes}: its nearby set holds {nearby} "
            f"nodes and its quilt {quilt}"))
        self.entries += 1

    def admit_component(self, node: Any, size: int) -> None:
        """Count the sets shared by the entries of the component of ``size`` nodes holding
        ``node`` (its node set, positions and renaming: a tuple, a frozenset, two dicts)."""
        self._add(entry_bytes(size, 0) + 2 * dict_bytes(size) + ENTRY_BYTES, node,
                  f"the shared sets of its component of {size} nodes")

    def _add(self, size: int, node: Any, part: str) -> None:
        if self.held + size > self.limit:
            check_allocation(self.held + size, budget=self.limit, what=(
                f"the plan of MQM (node {node!r}, {part}; entries keep nearby sets of up to "
                f"max_region = {self.max_region} nodes, so a smaller max_region or fewer "
                "secret nodes also shrink it)"))
        self.held += size
