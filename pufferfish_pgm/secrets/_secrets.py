"""Secrets, discriminative pairs and Blowfish secret graphs.

A secret is a statement about the data ("node X_i is in state a"); a discriminative pair is
two mutually exclusive secrets the attacker must not tell apart. :func:`secret_pairs` builds
every pair of states of some nodes; :mod:`._framework` holds the :class:`Framework` and the
compiler, :mod:`._possible` decides which secrets can be true at all.

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
from dataclasses import dataclass
from typing import Any

import networkx as nx  # type: ignore[import-untyped]  # networkx ships no type hints

from .._validation import node_tuple
from ..errors import InvalidParameterError, ParameterTypeError
from ..scenarios import as_class

__all__ = ["GeneratedPairs", "JointSecret", "NodeSecret", "SecretPair",
           "complete_graph", "distance_threshold_graph", "node_pairs", "partition_graph",
           "secret_pairs"]


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


class GeneratedPairs(tuple[SecretPair, ...]):
    """The pairs :func:`secret_pairs` builds without a policy graph: every pair of states of
    some nodes, named by node rather than one by one.

    A :class:`~pufferfish_pgm.secrets.Framework` given such a tuple skips the secrets that
    have probability 0 under every scenario (as it does for its default pairs); a tuple built
    any other way (written out, concatenated, filtered) is explicit, and an impossible secret
    in it is an error.
    """

    __slots__ = ()


def secret_pairs(scenarios: Any, nodes: Iterable | None = None,
                 graph: nx.Graph | Mapping | None = None) -> tuple[SecretPair, ...]:
    """All discriminative pairs (X=a, X=b), a != b, of the given nodes.

    ``graph`` (a networkx graph over a node's states, or a dict node -> graph) keeps only the
    pairs along its edges (a Blowfish policy). Without ``graph`` the result is a
    :class:`GeneratedPairs`: a framework built from it skips impossible secrets.

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
        if g is None:
            pairs.extend(node_pairs(v, states))
            continue
        for s in g.nodes:
            cls.state_index(v, s)
        ranked = (sorted(e, key=states.index) for e in g.edges())  # (lower, higher) state
        edges: Iterable[Sequence] = sorted(
            ranked, key=lambda e: (states.index(e[0]), states.index(e[1])))
        secrets = {s: _trusted_secret(v, s) for s in states}
        pairs.extend(_trusted_pair(secrets[a], secrets[b]) for a, b in edges)
    return GeneratedPairs(pairs) if graph is None else tuple(pairs)


def node_pairs(node: Any, states: Sequence) -> tuple[SecretPair, ...]:
    """Every pair of two of ``states`` on ``node``, in the order of ``states`` (no checks:
    the caller passes a known node and distinct states of it).

    Examples
    --------
    >>> [str(p) for p in node_pairs("A", ["x", "y", "z"])]
    ['(A=x, A=y)', '(A=x, A=z)', '(A=y, A=z)']
    """
    secrets = [_trusted_secret(node, s) for s in states]
    return tuple(_trusted_pair(a, b) for a, b in itertools.combinations(secrets, 2))


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
