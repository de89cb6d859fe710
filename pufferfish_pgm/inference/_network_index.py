"""What the network elimination engine computes once per model: its index (internal).

Split from :mod:`._network_engine`, which compiles and runs the queries. The index of a
network is kept per scenario *object* in a weak-keyed table (:func:`network_index`): the
frozen scenario holds no cache, an index lives exactly as long as its scenario. The
evidence-free tables it caches are shared between query shapes and never exceed one memory
budget in all: past it the cache starts afresh.
"""

from __future__ import annotations

import weakref
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from ..scenarios import MarkovNetworkScenario
from ._elimination_order import Schedule, min_fill
from ._factor_models import Ancestors, Model, connected_parts, factor_tables

__all__ = ["NetworkIndex", "network_index"]

#: An einsum operand list: (slot of an array, its axis ids).
_Operands = list[tuple[int, list[int]]]


class _Step(NamedTuple):
    """One einsum of a plan that depends on the evidence values."""

    slot: int
    inputs: _Operands
    output: list[int]
    path: list | bool


class _Plan(NamedTuple):
    """A compiled query shape (see :func:`._network_engine._plan`)."""

    arrays: list[np.ndarray | None]   # evidence-free tables and results; None: filled per query
    sliced: list[tuple[int, Hashable, tuple]]   # (slot, node, axes) of CPTs touching evidence
    steps: list[_Step]
    final: _Operands
    partial: bool
    schedule: Schedule


#: Evidence-free einsum result shared between plans: (memo id, table, its axes).
_Static = tuple[int, np.ndarray, tuple]


@dataclass(eq=False)
class NetworkIndex:
    """What the elimination engine derives from one network, computed once per model.

    Built by :func:`network_index` on first use and written only by this stage; other
    stages may read it (the count-law engine of :mod:`pufferfish_pgm.queries` uses
    ``order`` and ``ancestors``). It holds no reference to its scenario, so the weak-keyed
    table that maps scenarios to indices lets both go together.

    Attributes
    ----------
    moral : dict
        The moral graph (node -> neighbours).
    order : dict
        Rank of each node in a min-fill elimination order of the moral graph, computed on
        first use (a property: on a network of thousands of nodes it costs seconds, which a
        query refused from its own capped order never pays).
    ancestors : dict
        Each node's ancestors, itself included (Markov network: its connected component,
        every node whose factors can matter).
    children : dict
        Each node's children, in model order (Markov network: its neighbours).
    families, tables : dict
        The scope and the table of each factor (:func:`factor_tables`), read once.
    plans, marginals, static
        Compiled query shapes by (targets, evidence nodes); single-node marginals (for
        the zero-probability check); evidence-free intermediate tables shared between
        plans (see :func:`._network_engine._plan`).
    static_bytes, next_id
        Bytes held by ``static``; the next memo id (never reused, so a memo key made before
        the cache was emptied cannot name a newer table).
    """

    moral: dict[Hashable, set]
    ancestors: Mapping[Hashable, frozenset]
    children: dict[Hashable, tuple]
    families: dict[Hashable, tuple] = field(default_factory=dict)
    tables: dict[Hashable, np.ndarray] = field(default_factory=dict)
    plans: dict[tuple[tuple, tuple], _Plan] = field(default_factory=dict)
    marginals: dict[Hashable, np.ndarray] = field(default_factory=dict)
    static: dict[tuple, _Static] = field(default_factory=dict)
    static_bytes: int = 0
    next_id: int = 0
    _order: dict[Hashable, int] | None = None

    @property
    def order(self) -> dict[Hashable, int]:
        """Rank of each node in the min-fill order of ``moral`` (computed once)."""
        if self._order is None:
            ranks = min_fill({v: set(n) for v, n in self.moral.items()})
            self._order = {v: r for r, v in enumerate(ranks)}
        return self._order

    def remember(self, key: tuple, table: np.ndarray, axes: tuple,
                 budget: int | None) -> _Static:
        """Cache an evidence-free table (emptying the cache first if it would pass ``budget``
        bytes); ``budget`` None: a table the model owns (a CPT), not counted."""
        size = 0 if budget is None else table.nbytes
        if budget is not None and self.static_bytes + size > budget:
            self.static.clear()
            self.plans.clear()
            self.static_bytes = 0
        entry = self.static[key] = (self.next_id, table, axes)
        self.next_id += 1
        self.static_bytes += size
        return entry


_NETWORK_INDEX: weakref.WeakKeyDictionary[Model, NetworkIndex] = (
    weakref.WeakKeyDictionary())


def network_index(bn: Model) -> NetworkIndex:
    """The :class:`NetworkIndex` of ``bn`` (built on the first call for this object).

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import BayesianNetworkScenario, default_model_path
    >>> asia = BayesianNetworkScenario.from_file(default_model_path("asia.bif"))
    >>> index = network_index(asia)
    >>> network_index(asia) is index, sorted(index.ancestors["either"])
    (True, ['asia', 'either', 'lung', 'smoke', 'tub'])
    """
    index = _NETWORK_INDEX.get(bn)
    if index is None:
        index = _build_index(bn)
        _NETWORK_INDEX[bn] = index
    return index


def _build_index(bn: Model) -> NetworkIndex:
    families, tables = factor_tables(bn)
    moral: dict[Hashable, set] = {v: set() for v in bn.nodes}
    for family in families.values():
        for i, a in enumerate(family):
            for b in family[i + 1:]:
                if b != a:   # no self loops (min_fill counts on it)
                    moral[a].add(b)
                    moral[b].add(a)
    if isinstance(bn, MarkovNetworkScenario):   # no direction: a node's component
        return NetworkIndex(moral=moral, ancestors=connected_parts(moral, bn.nodes),
                            children=dict(bn.tables.neighbours), families=families, tables=tables)
    parents = bn.tables.parents
    ancestors = Ancestors(parents)
    kids: dict[Hashable, list] = {v: [] for v in bn.nodes}
    for c in bn.nodes:   # model order, as before; one pass instead of one per node
        for p in dict.fromkeys(parents[c]):
            kids[p].append(c)
    children = {v: tuple(kids[v]) for v in bn.nodes}
    return NetworkIndex(moral=moral, ancestors=ancestors, children=children,
                        families=families, tables=tables)
