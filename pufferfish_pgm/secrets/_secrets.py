"""Secrets, discriminative pairs, Blowfish secret graphs and the secret compiler.

A secret is a statement about the data ("node X_i is in state a"); a discriminative pair is
two mutually exclusive secrets the attacker must not tell apart. The compiler turns every pair
and every scenario θ into the two conditional queries (evidence {X_i: a} and {X_i: b}) and,
following the definition of Pufferfish privacy, skips θ where either secret has probability 0.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> mc = MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 3)
>>> pairs = secret_pairs(mc, nodes=[1])
>>> [str(p) for p in pairs]
['(1=0, 1=1)']
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx  # type: ignore[import-untyped]  # networkx ships no type hints
import numpy as np

from .._validation import node_tuple
from ..errors import ImpossibleSecretError, InvalidParameterError, ParameterTypeError
from ..inference import conditional, secret_probability
from ..scenarios import MarkovChainScenario, Scenario, ScenarioClass, as_class

__all__ = ["CompiledPair", "Framework", "JointSecret", "NodeSecret", "SecretPair",
           "SkippedPair", "check_possible", "compile_secrets", "complete_graph",
           "distance_threshold_graph", "partition_graph", "possible_secrets", "secret_pairs"]


@dataclass(frozen=True, slots=True)
class NodeSecret:
    """The secret "node is in state"."""

    node: Any
    state: Any

    @property
    def evidence(self) -> dict:
        return {self.node: self.state}

    def __str__(self) -> str:
        return f"{self.node}={self.state}"


@dataclass(frozen=True)
class JointSecret:
    """A secret on several nodes at once, e.g. ``{"A": "yes", "B": "no"}``."""

    assignment: tuple

    def __init__(self, assignment: Mapping | Iterable) -> None:
        items = assignment.items() if isinstance(assignment, Mapping) else assignment
        pairs = tuple(sorted(((n, s) for n, s in items), key=lambda x: repr(x[0])))
        if not pairs:
            raise InvalidParameterError("a joint secret needs at least one node=state")
        nodes = [n for n, _ in pairs]
        if len(set(nodes)) != len(nodes):
            twice = next(n for n in nodes if nodes.count(n) > 1)
            raise InvalidParameterError(
                f"the joint secret gives node {twice!r} more than one state; give each node once"
            )
        object.__setattr__(self, "assignment", pairs)

    @property
    def evidence(self) -> dict:
        return dict(self.assignment)

    def __str__(self) -> str:
        return "{" + ", ".join(f"{n}={s}" for n, s in self.assignment) + "}"


Secret = NodeSecret | JointSecret


@dataclass(frozen=True, slots=True)
class SecretPair:
    """A discriminative pair (s_i, s_j) of mutually exclusive secrets."""

    first: Secret
    second: Secret

    def __post_init__(self) -> None:
        for s in (self.first, self.second):
            if not isinstance(s, (NodeSecret, JointSecret)):
                raise ParameterTypeError(
                    f"a secret pair holds NodeSecret or JointSecret objects, got {s!r}"
                )
        a, b = self.first.evidence, self.second.evidence
        if not any(n in b and b[n] != s for n, s in a.items()):
            raise InvalidParameterError(
                f"the secrets {self.first} and {self.second} are not mutually exclusive; a "
                "discriminative pair must give some node two different states"
            )

    @property
    def node(self) -> Any:
        """The node of a single-node pair (error for joint secrets)."""
        if isinstance(self.first, NodeSecret) and isinstance(self.second, NodeSecret):
            return self.first.node
        raise InvalidParameterError(f"the pair {self} is over several nodes; it has no .node")

    def __str__(self) -> str:
        return f"({self.first}, {self.second})"


def complete_graph(states: Iterable) -> nx.Graph:
    """Blowfish full-domain policy: every two states are a pair.

    Examples
    --------
    >>> sorted(complete_graph(["a", "b", "c"]).edges())
    [('a', 'b'), ('a', 'c'), ('b', 'c')]
    """
    return nx.complete_graph(list(states))


def partition_graph(partition: Iterable[Iterable]) -> nx.Graph:
    """Blowfish partitioned policy: states are pairs only within the same block.

    Examples
    --------
    >>> sorted(partition_graph([["flu", "cold"], ["healthy"]]).edges())
    [('flu', 'cold')]
    """
    graph = nx.Graph()
    for block in partition:
        block = list(block)
        graph.add_nodes_from(block)
        graph.add_edges_from(itertools.combinations(block, 2))
    return graph


def distance_threshold_graph(states: Iterable, distance: Callable[[Any, Any], float],
                             threshold: float) -> nx.Graph:
    """Blowfish distance-threshold policy: an edge when ``distance(x, y) <= threshold``.

    Examples
    --------
    >>> g = distance_threshold_graph(range(5), lambda x, y: abs(x - y), 1)
    >>> sorted(g.edges())
    [(0, 1), (1, 2), (2, 3), (3, 4)]
    """
    states = list(states)
    graph = nx.Graph()
    graph.add_nodes_from(states)
    graph.add_edges_from((x, y) for x, y in itertools.combinations(states, 2)
                         if distance(x, y) <= threshold)
    return graph


def _graph_for(graph: Any, node: Any) -> Any:
    if isinstance(graph, Mapping):
        return graph.get(node)
    return graph


def secret_pairs(scenarios: Any, nodes: Iterable | None = None,
                 graph: nx.Graph | Mapping | None = None) -> tuple[SecretPair, ...]:
    """All discriminative pairs (X=a, X=b), a != b, of the given nodes.

    ``graph`` (a networkx graph over a node's states, or a dict node -> graph) keeps only the
    pairs along its edges (a Blowfish policy).

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> mc = MarkovChainScenario([[1/3] * 3] * 3, "stationary", 2)
    >>> len(secret_pairs(mc)), len(secret_pairs(mc, graph=partition_graph([[0, 1], [2]])))
    (6, 2)
    """
    cls = as_class(scenarios)
    chosen = cls.nodes if nodes is None else node_tuple(nodes, "the secret nodes") or ()
    pairs: list[SecretPair] = []
    check = cls.members[0].check_node
    for v in chosen:
        states = cls.states_of(check(v))
        g = _graph_for(graph, v)
        edges: Iterable[Sequence]
        if g is None:
            edges = itertools.combinations(states, 2)
        else:
            for s in g.nodes:
                cls.state_index(v, s)
            ranked = (sorted(e, key=states.index) for e in g.edges())  # (lower, higher) state
            edges = sorted(ranked, key=lambda e: (states.index(e[0]), states.index(e[1])))
        secrets = {s: _trusted_secret(v, s) for s in states}
        pairs.extend(_trusted_pair(secrets[a], secrets[b]) for a, b in edges)
    return tuple(pairs)


def _trusted_secret(node: Any, state: Any) -> NodeSecret:
    secret = object.__new__(NodeSecret)
    object.__setattr__(secret, "node", node)
    object.__setattr__(secret, "state", state)
    return secret


def _trusted_pair(first: NodeSecret, second: NodeSecret) -> SecretPair:
    """A pair known to be valid by construction (same node, two different states)."""
    pair = object.__new__(SecretPair)
    object.__setattr__(pair, "first", first)
    object.__setattr__(pair, "second", second)
    return pair


@dataclass(eq=False)
class _PairIndex:
    """What a :class:`Framework` derives from its pairs on first use (written by it only)."""

    pairs: tuple[SecretPair, ...] | None = None   # all pairs, when they are implicit
    by_node: dict[Any, tuple[SecretPair, ...]] | None = None
    nodes: tuple | None = None


@dataclass(frozen=True, eq=False)
class Framework:
    """A Pufferfish framework (S, S_pairs, Θ): scenarios and discriminative pairs.

    ``pairs=None`` means every pair of states of every node; those pairs are then only built
    as objects when :attr:`pairs` is first read (planners use :meth:`node_pair_codes`, which
    never builds them: a day of seconds has 6 M pairs).

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 4))
    >>> fw.pair_count, len(fw.pairs), fw.secret_nodes
    (4, 4, (0, 1, 2, 3))
    """

    scenarios: ScenarioClass
    _explicit: tuple[SecretPair, ...] | None = field(repr=False)
    _index: _PairIndex = field(init=False, repr=False, compare=False)

    def __init__(self, scenarios: Any, pairs: Iterable[SecretPair] | None = None) -> None:
        cls = as_class(scenarios)
        chosen = None if pairs is None else tuple(pairs)
        if chosen is not None:
            if not chosen:
                raise InvalidParameterError("the framework has no secret pairs; give at least "
                                            "one")
            _check_pairs(cls, chosen)
        elif all(len(cls.states_of(v)) < 2 for v in _sample_nodes(cls)):
            raise InvalidParameterError("the framework has no secret pairs: every node has a "
                                        "single state")
        object.__setattr__(self, "scenarios", cls)
        object.__setattr__(self, "_explicit", chosen)
        object.__setattr__(self, "_index", _PairIndex())

    @property
    def pairs(self) -> tuple[SecretPair, ...]:
        """Every discriminative pair, as SecretPair objects."""
        if self._explicit is not None:
            return self._explicit
        if self._index.pairs is None:
            self._index.pairs = secret_pairs(self.scenarios)
        return self._index.pairs

    @property
    def pair_count(self) -> int:
        """Number of pairs (without building them when they are all pairs of all nodes)."""
        if self._explicit is not None:
            return len(self._explicit)
        cls = self.scenarios
        if cls.kind == "chain":
            k = len(cls.states_of(0))
            return len(cls.nodes) * k * (k - 1) // 2
        return sum(len(cls.states_of(v)) * (len(cls.states_of(v)) - 1) // 2 for v in cls.nodes)

    def node_pair_codes(self) -> tuple[np.ndarray | list, np.ndarray, np.ndarray] | None:
        """(node of each pair, state index of its first, of its second) for single-node pairs.

        None when some pair is over several nodes (a JointSecret).
        """
        cls = self.scenarios
        if self._explicit is None and cls.kind == "chain":
            k = len(cls.states_of(0))
            a, b = np.triu_indices(k, 1)
            steps = np.repeat(np.arange(len(cls.nodes)), len(a))
            return steps, np.tile(a, len(cls.nodes)), np.tile(b, len(cls.nodes))
        pairs = self.pairs
        single = [(p.first, p.second) for p in pairs
                  if isinstance(p.first, NodeSecret) and isinstance(p.second, NodeSecret)]
        if len(single) < len(pairs):
            return None
        index = {v: {s: i for i, s in enumerate(cls.states_of(v))} for v in self.secret_nodes}
        nodes = [x.node for x, _ in single]
        first = np.array([index[x.node][x.state] for x, _ in single], dtype=np.int64)
        second = np.array([index[x.node][y.state] for x, y in single], dtype=np.int64)
        return nodes, first, second

    def _by_node(self) -> dict[Any, tuple[SecretPair, ...]]:
        """Single-node pairs grouped by node (built once, on first use)."""
        if self._index.by_node is None:
            groups: dict[Any, list[SecretPair]] = {}
            for p in self.pairs:
                if type(p.first) is NodeSecret and type(p.second) is NodeSecret:
                    groups.setdefault(p.first.node, []).append(p)
            self._index.by_node = {v: tuple(ps) for v, ps in groups.items()}
        return self._index.by_node

    @property
    def secret_nodes(self) -> tuple:
        """The nodes that appear in some secret, in model order."""
        if self._explicit is None:
            cls = self.scenarios
            return tuple(v for v in cls.nodes if len(cls.states_of(v)) > 1)
        if self._index.nodes is None:
            used = set(self._by_node())
            used.update(n for p in self.pairs if type(p.first) is not NodeSecret
                        or type(p.second) is not NodeSecret
                        for s in (p.first, p.second) for n in s.evidence)
            self._index.nodes = tuple(v for v in self.scenarios.nodes if v in used)
        return self._index.nodes

    def pairs_of(self, node: Any) -> tuple[SecretPair, ...]:
        """The single-node pairs on ``node``."""
        if self._explicit is None and self._index.pairs is None:
            cls = self.scenarios
            return secret_pairs(cls, nodes=[node]) if node in cls.nodes else ()
        return self._by_node().get(node, ())


def _sample_nodes(cls: ScenarioClass) -> tuple:
    """The nodes whose state counts decide whether any pair exists (one node for chains)."""
    return cls.nodes[:1] if cls.kind == "chain" else cls.nodes


def _check_pairs(cls: ScenarioClass, pairs: tuple) -> None:
    """Every pair is a SecretPair over known nodes and states (each secret checked once)."""
    seen: set = set()
    for p in pairs:
        if not isinstance(p, SecretPair):
            raise ParameterTypeError(f"pairs must be SecretPair objects, got {p!r}")
        for secret in (p.first, p.second):
            if secret in seen:
                continue
            for node, state in secret.evidence.items():
                cls.state_index(cls.members[0].check_node(node), state)
            seen.add(secret)


@dataclass(frozen=True)
class CompiledPair:
    """One pair under one scenario: the two evidence sets and their probabilities."""

    pair: SecretPair
    theta: int
    evidence_first: dict
    evidence_second: dict
    prob_first: float
    prob_second: float


@dataclass(frozen=True)
class SkippedPair:
    """A pair skipped for one scenario because a secret has probability 0 there."""

    pair: SecretPair
    theta: int
    reason: str


def compile_secrets(framework: Framework) -> tuple[tuple[CompiledPair, ...],
                                                   tuple[SkippedPair, ...]]:
    """Compile every (pair, θ) into conditional queries; skip θ where P(s|θ) = 0.

    Raises :class:`ImpossibleSecretError` for a secret that has probability 0 under every θ.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> mc = MarkovChainScenario([[1.0, 0.0], [0.5, 0.5]], [1.0, 0.0], 2)
    >>> fw = Framework(mc, secret_pairs(mc, nodes=[0, 1]))
    >>> compile_secrets(fw)
    Traceback (most recent call last):
    ...
    pufferfish_pgm.errors.ImpossibleSecretError: secret 0=1 has probability 0 under every ...
    """

    compiled, skipped, possible = [], [], set()
    for pair in framework.pairs:
        for theta, scenario in enumerate(framework.scenarios):
            probs = [secret_probability(scenario, s.evidence) for s in (pair.first, pair.second)]
            for s, p in zip((pair.first, pair.second), probs, strict=True):
                if p > 0:
                    possible.add(s)
            if min(probs) > 0:
                compiled.append(CompiledPair(pair, theta, pair.first.evidence,
                                             pair.second.evidence, *probs))
            else:
                zero = pair.first if probs[0] == 0 else pair.second
                skipped.append(SkippedPair(pair, theta, f"P({zero}) = 0 under {scenario.name!r}"))
    check_possible(framework.pairs, possible)
    return tuple(compiled), tuple(skipped)


def possible_secrets(framework: Framework) -> set[Secret]:
    """The secrets of the framework's pairs that have positive probability under some θ.

    What :func:`compile_secrets` learns about possibility, without its full pass of
    probabilities: each distinct secret is checked once, stopping at the first θ under which
    it is possible, and a single-node secret is read off the support of its node's marginal
    (one inference per node and θ, shared by all its states; for a chain with
    ``initial="any"``, the states reachable from some start).

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> mc = MarkovChainScenario([[1.0, 0.0], [0.5, 0.5]], [1.0, 0.0], 2)
    >>> sorted(map(str, possible_secrets(Framework(mc))))
    ['0=0', '1=0']
    """
    supports: dict[tuple[int, Any], np.ndarray] = {}
    possible: set[Secret] = set()
    seen: set[Secret] = set()
    for pair in framework.pairs:
        for secret in (pair.first, pair.second):
            if secret in seen:
                continue
            seen.add(secret)
            for theta, scenario in enumerate(framework.scenarios):
                if isinstance(secret, NodeSecret):
                    node = scenario.check_node(secret.node)
                    if (theta, node) not in supports:
                        supports[theta, node] = _node_support(scenario, node)
                    ok = bool(supports[theta, node][scenario.state_index(node, secret.state)])
                else:
                    ok = secret_probability(scenario, secret.evidence) > 0
                if ok:
                    possible.add(secret)
                    break
    return possible


def _node_support(scenario: Scenario, node: Any) -> np.ndarray:
    """Which states of ``node`` have positive probability (for "any": from some start)."""
    if isinstance(scenario, MarkovChainScenario) and scenario.initial_is_any:
        return np.asarray((scenario.power(node) > 0).any(axis=0))
    return conditional(scenario, [node]) > 0


def check_possible(pairs: Iterable[SecretPair], possible: set) -> None:
    """Raise :class:`ImpossibleSecretError` for a secret of ``pairs`` not in ``possible``.

    ``possible`` holds the secrets with positive probability under at least one θ.
    """
    for pair in pairs:
        for s in (pair.first, pair.second):
            if s not in possible:
                raise ImpossibleSecretError(
                    f"secret {s} has probability 0 under every scenario of the class; remove "
                    "it from the pairs (it cannot be true, so there is nothing to protect)"
                )
