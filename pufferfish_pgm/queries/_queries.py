"""Queries: counts, integer-weighted linear queries and histograms over the model's nodes.

Every query here is a sum over nodes, ``F = Σ_v w_v(X_v)``, where ``w_v`` gives a number per
state of node v. Its Lipschitz constant L (the most F moves when one node changes) drives
the noise of the Markov Quilt Mechanism and the baselines.

What the mechanisms rely on is the :class:`Query` protocol (a name, the nodes summed over and
L); the scalar queries also satisfy :class:`WeightedQuery` (a weight per node and state).
:class:`Histogram` is a vector of counts and only a :class:`Query`.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> mc = MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 3, states=["rest", "walk"])
>>> q = Count("walk")
>>> q.lipschitz, q.weight_table(mc).tolist()
(1.0, [[0.0, 1.0], [0.0, 1.0], [0.0, 1.0]])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .._validation import node_tuple
from ..errors import InvalidParameterError, ParameterTypeError
from ..scenarios import Scenario, ScenarioClass, as_class

__all__ = ["Count", "Histogram", "LinearQuery", "Query", "WeightedQuery", "GroupCount"]


@runtime_checkable
class Query(Protocol):
    """What every query offers the mechanisms: :class:`Count`, :class:`LinearQuery` and
    :class:`Histogram` all satisfy it.

    Attributes
    ----------
    name : str
        A short label (``"count(walk)"``, ``"histogram"``), used in releases and reports.
    nodes : tuple or None
        The nodes summed over, as given (None: every node of the model).

    Examples
    --------
    >>> isinstance(Count("walk"), Query), isinstance(Histogram(), Query)
    (True, True)
    >>> isinstance("count(walk)", Query)
    False
    """

    @property
    def name(self) -> str: ...

    @property
    def nodes(self) -> tuple | None: ...

    def node_list(self, scenarios: ScenarioClass | Scenario) -> Sequence:
        """The nodes the query sums over, checked against the model, in model order."""
        ...

    def lipschitz_for(self, scenarios: ScenarioClass | Scenario) -> float:
        """L: the most the query moves (L1 over a vector) when one node changes state."""
        ...


@runtime_checkable
class WeightedQuery(Query, Protocol):
    """A scalar sum ``F = Σ_v w_v(X_v)`` with a weight per node and state (:class:`Count`,
    :class:`LinearQuery`); the release evaluates it from :meth:`weight_table`.

    Attributes
    ----------
    integer : bool
        Whether every weight is an integer (the exact engine needs integer weights).

    Examples
    --------
    >>> isinstance(LinearQuery({"a": 2}), WeightedQuery), isinstance(Histogram(), WeightedQuery)
    (True, False)
    """

    @property
    def integer(self) -> bool: ...

    def weights_of(self, scenarios: ScenarioClass | Scenario, node: Any) -> np.ndarray:
        """Weights of ``node``'s states, in model order."""
        ...

    def weight_table(self, scenarios: ScenarioClass | Scenario) -> np.ndarray:
        """Array ``(len(node_list), max k)`` of weights per node and state."""
        ...


def _nodes(cls: ScenarioClass, nodes: tuple | None) -> Sequence:
    if nodes is None:
        nodes_all = cls.nodes
        return nodes_all if isinstance(nodes_all, range) else tuple(nodes_all)
    out = tuple(cls.members[0].check_node(v) for v in nodes)
    if len(set(out)) != len(out):
        twice = next(v for i, v in enumerate(out) if v in out[:i])
        raise InvalidParameterError(
            f"node {twice!r} is listed twice in the query's nodes; list each node once (a "
            "node counted twice would double the query's sensitivity)"
        )
    return out


@dataclass(frozen=True)
class LinearQuery:
    """``F = Σ_{v in nodes} weights[X_v]`` for a dict ``weights`` state -> number.

    States missing from ``weights`` weigh 0. ``integer=True`` (the default) requires integer
    weights, which the exact engine needs.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> mc = MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 2, states=["a", "b"])
    >>> LinearQuery({"a": 2, "b": -1}).lipschitz_for(mc)
    3.0
    """

    weights: tuple
    nodes: tuple | None = None
    integer: bool = True

    def __init__(self, weights: Mapping, nodes: Any = None, integer: bool = True) -> None:
        if not isinstance(weights, Mapping) or not weights:
            raise ParameterTypeError(f"weights must be a non-empty dict state -> number, got "
                                     f"{weights!r}")
        for s, w in weights.items():
            if isinstance(w, bool) or not isinstance(w, (int, float, np.integer, np.floating)):
                raise ParameterTypeError(f"the weight of state {s!r} is {w!r}; use a number")
            if not np.isfinite(w):
                raise InvalidParameterError(f"the weight of state {s!r} is {w!r}; use a finite "
                                            "number")
            if integer and float(w) != int(w):
                raise InvalidParameterError(
                    f"the weight of state {s!r} is {w!r}, not an integer; the exact engine needs "
                    "integer weights (scale them, or pass integer=False for MQM-only use)"
                )
        object.__setattr__(self, "weights", tuple(weights.items()))
        object.__setattr__(self, "nodes", node_tuple(nodes))
        object.__setattr__(self, "integer", bool(integer))

    @property
    def name(self) -> str:
        return "linear(" + ", ".join(f"{s}:{w}" for s, w in self.weights) + ")"

    def weights_of(self, scenarios: ScenarioClass | Scenario, node: Any) -> np.ndarray:
        """Weights of ``node``'s states (length = its number of states), in model order."""
        cls = as_class(scenarios)
        row = np.zeros(len(cls.states_of(node)))
        for s, w in self.weights:
            row[cls.state_index(node, s)] = w
        return row

    def weight_table(self, scenarios: ScenarioClass | Scenario) -> np.ndarray:
        """Array ``(len(nodes), max k)`` of weights per node and state (order of ``nodes``).

        Rows of nodes with fewer states are padded with zeros on the right. On a chain every
        node has the same states: the table is one row broadcast (a read-only view, no memory
        per node).
        """
        cls = as_class(scenarios)
        nodes = _nodes(cls, self.nodes)
        if cls.kind == "chain":
            row = self.weights_of(cls, nodes[0])
            return np.broadcast_to(row, (len(nodes), len(row)))
        rows = [self.weights_of(cls, v) for v in nodes]
        table = np.zeros((len(rows), max(len(r) for r in rows)))
        for i, r in enumerate(rows):
            table[i, :len(r)] = r
        return table

    def node_list(self, scenarios: ScenarioClass | Scenario) -> Sequence:
        """The nodes the query sums over."""
        return _nodes(as_class(scenarios), self.nodes)

    def lipschitz_for(self, scenarios: ScenarioClass | Scenario) -> float:
        """The most F changes when a single node changes state."""
        cls = as_class(scenarios)
        spans = [np.ptp(self.weights_of(cls, v)) for v in _nodes(cls, self.nodes)]
        return float(max(spans, default=0.0))


@dataclass(frozen=True)
class Count(LinearQuery):
    """Number of nodes (all when ``nodes`` is None) in ``state``; L = 1.

    Examples
    --------
    >>> Count("walk").name
    'count(walk)'
    """

    state: Any = None

    def __init__(self, state: Any, nodes: Any = None) -> None:
        super().__init__({state: 1}, nodes)
        object.__setattr__(self, "state", state)

    @property
    def name(self) -> str:
        return f"count({self.state})"

    @property
    def lipschitz(self) -> float:
        return 1.0

    def lipschitz_for(self, scenarios: ScenarioClass | Scenario) -> float:
        cls = as_class(scenarios)
        nodes = _nodes(cls, self.nodes)
        if cls.kind == "chain":  # one shared state space: check the state once
            cls.state_index(nodes[0], self.state)
        else:
            for v in nodes:
                cls.state_index(v, self.state)
        return 1.0


@dataclass(frozen=True)
class Histogram:
    """The count of every state: a vector; one node change moves one unit between two bars.

    L = 2 in L1, so each bar gets Laplace(2σ) with σ computed for L = 1.

    Examples
    --------
    >>> Histogram().lipschitz
    2.0
    """

    nodes: tuple | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "nodes", node_tuple(self.nodes))

    @property
    def name(self) -> str:
        return "histogram"

    @property
    def lipschitz(self) -> float:
        return 2.0

    def lipschitz_for(self, scenarios: ScenarioClass | Scenario) -> float:
        """2, after checking the nodes share one state space (so a calibration that would fail
        at release fails now)."""
        self.bars(scenarios)
        return 2.0

    def node_list(self, scenarios: ScenarioClass | Scenario) -> Sequence:
        return _nodes(as_class(scenarios), self.nodes)

    def bars(self, scenarios: ScenarioClass | Scenario) -> tuple[Count, ...]:
        """One Count per state of the (shared) state space."""
        cls = as_class(scenarios)
        nodes = self.node_list(cls)
        states = cls.states_of(nodes[0])
        other = next((v for v in nodes if cls.states_of(v) != states), None)
        if other is not None:
            raise InvalidParameterError(
                f"a histogram needs nodes that share one state space, but node {nodes[0]!r} has "
                f"{list(states)} and node {other!r} has {list(cls.states_of(other))}; pass "
                "Histogram(nodes=[...]) over nodes of one kind, or one Count per state")
        return tuple(Count(s, self.nodes) for s in states)



@dataclass(frozen=True, init=False)
class GroupCount:
    """The count of ``state`` in every group of nodes: a vector with one bar per group
    ("infected per community").

    ``groups`` maps each node counted to its group (any hashable label), e.g. a networkx
    node attribute: ``GroupCount("infected", nx.get_node_attributes(g, "community"))``.
    Nodes left out are not counted. A node lies in one group, so when one node changes
    state one bar moves by at most 1: the L1 sensitivity is L = 1, and the Markov Quilt
    Mechanism and group/entry DP put Laplace(σ) on every bar. The exact mechanisms read the
    joint law of all bars (correlation across groups moves every bar's law), so they are for
    small models; bars are in the order groups first appear in ``groups``.

    Examples
    --------
    >>> q = GroupCount("yes", {"a": "north", "b": "south", "c": "north"})
    >>> q.name, q.group_names(), q.lipschitz
    ('group_count(yes)', ('north', 'south'), 1.0)
    >>> [bar.nodes for bar in q.parts(None)]
    [('a', 'c'), ('b',)]
    """

    state: Any
    groups: tuple
    lipschitz: float = 1.0

    def __init__(self, state: Any, groups: Mapping) -> None:
        if not isinstance(groups, Mapping) or not groups:
            raise ParameterTypeError(
                f"groups must be a non-empty dict node -> group (e.g. "
                f"nx.get_node_attributes(graph, 'community')), got {groups!r}")
        for v, g in groups.items():
            try:
                hash(g)
            except TypeError:
                raise ParameterTypeError(f"the group of node {v!r} is {g!r}, which cannot "
                                         "label a bar; use a string or a number") from None
        object.__setattr__(self, "state", state)
        object.__setattr__(self, "groups", tuple(groups.items()))
        object.__setattr__(self, "lipschitz", 1.0)

    @property
    def name(self) -> str:
        return f"group_count({self.state})"

    @property
    def nodes(self) -> tuple:
        """Every node counted, as given."""
        return tuple(v for v, _ in self.groups)

    def group_names(self) -> tuple:
        """The groups, in the order they first appear (the order of the bars)."""
        return tuple(dict.fromkeys(g for _, g in self.groups))

    def parts(self, scenarios: ScenarioClass | Scenario | None) -> tuple[Count, ...]:
        """One :class:`Count` of ``state`` per group over its nodes (the bars)."""
        members: dict = {}
        for v, g in self.groups:
            members.setdefault(g, []).append(v)
        return tuple(Count(self.state, members[g]) for g in self.group_names())

    def bars(self, scenarios: ScenarioClass | Scenario | None) -> tuple[Count, ...]:
        """The same as :meth:`parts` (the name :class:`Histogram` uses)."""
        return self.parts(scenarios)

    def coordinates(self, scenarios: ScenarioClass | Scenario | None) -> tuple[str, ...]:
        """Names of the bars: ``count(state)@group``."""
        return tuple(f"count({self.state})@{g}" for g in self.group_names())

    def node_list(self, scenarios: ScenarioClass | Scenario) -> Sequence:
        """The nodes counted, checked against the model (each once)."""
        return _nodes(as_class(scenarios), self.nodes)

    def lipschitz_for(self, scenarios: ScenarioClass | Scenario) -> float:
        """1 (each node in one group), after checking the nodes and the state."""
        cls = as_class(scenarios)
        self.node_list(cls)
        for bar in self.parts(cls):
            bar.lipschitz_for(cls)
        return 1.0
