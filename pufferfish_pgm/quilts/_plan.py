"""What the quilt planners return: one :class:`PlanEntry` per secret node (DESIGN §3.2–3.3).

A :class:`ChainPlan` stores the entries of a long chain compactly as arrays whose nearby and
remote sets are ranges (:class:`NodeRanges`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np

__all__ = ["ChainPlan", "NodeRanges", "PlanEntry"]


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
    remote: tuple | range | NodeRanges
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
    """One :class:`PlanEntry` per secret node of a chain, stored compactly as arrays.

    ``left``/``right`` hold the distances a, b of the quilt nodes (0 for an absent side);
    entries are built on access, so memory stays linear in T. ``truncated`` flags nodes whose
    search reached ``max_window`` before it could prove optimality (their σ is still valid).
    """

    nodes: np.ndarray
    left: np.ndarray
    right: np.ndarray
    influence: np.ndarray
    sigma: np.ndarray
    truncated: np.ndarray
    length: int

    def __len__(self) -> int:
        return len(self.nodes)

    @overload
    def __getitem__(self, k: int) -> PlanEntry: ...

    @overload
    def __getitem__(self, k: slice) -> list[PlanEntry]: ...

    def __getitem__(self, k: int | slice) -> PlanEntry | list[PlanEntry]:
        if isinstance(k, slice):
            return [self[j] for j in range(len(self))[k]]
        i, a, b = int(self.nodes[k]), int(self.left[k]), int(self.right[k])
        quilt = tuple(v for v, d in ((i - a, a), (i + b, b)) if d)
        lo, hi = (i - a + 1 if a else 0), (i + b if b else self.length)
        remote = tuple(r for r in (range(0, lo - 1 if a else 0),
                                   range(hi + 1 if b else self.length, self.length)) if r)
        return PlanEntry(node=i, quilt=quilt, nearby=range(lo, hi), remote=NodeRanges(remote),
                         influence=float(self.influence[k]), sigma=float(self.sigma[k]),
                         trivial=not (a or b))

    def __iter__(self) -> Iterator[PlanEntry]:
        return (self[k] for k in range(len(self)))

    @property
    def sigma_max(self) -> float:
        """σ_max = max_i σ_i (0 for an empty plan)."""
        return float(self.sigma.max(initial=0.0))

    @property
    def worst_node(self) -> int | None:
        """A node reaching σ_max."""
        return int(self.nodes[np.argmax(self.sigma)]) if len(self) else None
