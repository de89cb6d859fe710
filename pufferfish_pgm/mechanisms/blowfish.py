"""Blowfish policies: policy-specific sensitivity and the Blowfish Laplace mechanism (``001_*``).

A Blowfish policy is a *discriminative secret graph* G over the states a record can take: an
edge (x, y) says "changing one record from x to y must not change the output distribution by
more than e^ε". Two datasets are G-neighbours when they differ in one record along an edge.
The constructors live in :mod:`pufferfish_pgm.secrets` (:func:`complete_graph`,
:func:`partition_graph`, :func:`distance_threshold_graph`).

The **policy-specific sensitivity** of a query F is the most F changes between G-neighbours:

* ``Count(s)``: 1 if some edge joins s to another state, else 0 (e.g. s alone in its block of a
  partition policy);
* ``LinearQuery(w)``: ``max |w(x) - w(y)|`` over the edges;
* ``Histogram()``: 2 if the graph has an edge between two different states, else 0.

Adding Laplace(sensitivity / ε) noise is ε-Blowfish private. When the records (nodes) are
independent under every scenario θ, it is also ε-Pufferfish private for every pair
(X_i = x, X_i = y) along an edge: with X_{-i} independent of X_i,
``P(M = ω | X_i = x) = Σ_{x_{-i}} P(x_{-i}) p(ω - F(x, x_{-i}))``, and each term changes by at
most e^ε when x becomes y (the argument of Kifer & Machanavajjhala 2014, Theorem 6.1, for
substitution pairs). Under correlated scenarios this fails (their Theorem 6.2), so
:class:`BlowfishLaplaceMechanism` refuses them; a policy is then expressed through the pairs,
``secret_pairs(scenarios, graph=G)``, and calibrated with the Markov quilt, Wasserstein or exact
mechanisms, which use only those pairs.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> from pufferfish_pgm.secrets import Framework, partition_graph, secret_pairs
>>> from pufferfish_pgm.queries import Count
>>> iid = MarkovChainScenario([[0.5, 0.3, 0.2]] * 3, "stationary", 10)
>>> policy = partition_graph([[0, 1], [2]])
>>> policy_sensitivity(Count(2), policy, iid), policy_sensitivity(Count(1), policy, iid)
(0.0, 1.0)
>>> fw = Framework(iid, secret_pairs(iid, graph=policy))
>>> BlowfishLaplaceMechanism(epsilon=0.5, graph=policy).calibrate(fw, Count(1)).scale
2.0
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

import networkx as nx  # type: ignore[import-untyped]
import numpy as np

from .._parallel import check_executor
from ..errors import InvalidParameterError, ParameterTypeError
from ..queries import Histogram, Query, WeightedQuery
from ..scenarios import (
    BayesianNetworkScenario,
    MarkovChainScenario,
    MarkovNetworkScenario,
    Scenario,
    ScenarioClass,
    as_class,
)
from ..secrets import Framework, NodeSecret
from .base import Calibration, Mechanism
from .evidence import BlowfishEvidence

__all__ = ["BlowfishCalibration", "BlowfishLaplaceMechanism", "dependence_reason",
           "independent_records", "policy_edges", "policy_sensitivity"]


#: A Blowfish policy: one graph over a node's states for every node, a dict node -> graph
#: (a missing node or None: the complete graph), or None (every node: the complete graph).
Policy: TypeAlias = "nx.Graph | Mapping[Hashable, nx.Graph | None] | None"


def _check_policy(graph: Policy) -> None:
    """Type check of a policy: a networkx graph, a dict node -> graph (or None), or None."""
    values = graph.values() if isinstance(graph, Mapping) else [graph]
    for g in values:
        if g is not None and not isinstance(g, nx.Graph):
            raise ParameterTypeError(
                f"a Blowfish policy is a networkx Graph over a node's states (or a dict node -> "
                f"Graph), got {type(g).__name__}; build one with complete_graph, "
                "partition_graph or distance_threshold_graph"
            )


def policy_edges(graph: Policy, scenarios: ScenarioClass | Scenario,
                 node: Hashable) -> tuple[tuple, ...]:
    """The edges (x, y), x != y, of ``node``'s policy graph, in the node's state order.

    ``graph`` is a networkx graph over the node's states, a dict node -> graph, or None; a
    missing node or None means the complete graph (every two states), as in
    :func:`pufferfish_pgm.secrets.secret_pairs`. Every state of the graph is checked.

    Raises
    ------
    UnknownStateError
        A vertex of the graph is not a state of ``node`` (the message names both).

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import partition_graph
    >>> mc = MarkovChainScenario([[1/3] * 3] * 3, "stationary", 2, states=["a", "b", "c"])
    >>> policy_edges(partition_graph([["c", "a"], ["b"]]), mc, 0)
    (('a', 'c'),)
    """
    _check_policy(graph)
    cls = as_class(scenarios)
    states = cls.states_of(cls.members[0].check_node(node))
    g = graph.get(node) if isinstance(graph, Mapping) else graph
    if g is None:
        return tuple((x, y) for i, x in enumerate(states) for y in states[i + 1:])
    order = {s: cls.state_index(node, s) for s in g.nodes}   # UnknownStateError if foreign
    edges = {tuple(sorted((x, y), key=order.__getitem__)) for x, y in g.edges() if x != y}
    return tuple(sorted(edges, key=lambda e: (order[e[0]], order[e[1]])))


def _check_mapping_nodes(graph: Policy, scenarios: ScenarioClass | Scenario) -> None:
    if isinstance(graph, Mapping):
        cls = as_class(scenarios)
        for v in graph:
            policy_edges(graph, cls, cls.members[0].check_node(v))


def policy_sensitivity(query: Query, graph: Policy, scenarios: ScenarioClass | Scenario) -> float:
    """Most the query changes when one record moves along an edge of the policy graph.

    Parameters
    ----------
    query : Count, LinearQuery or Histogram
        The released statistic (a sum over its nodes).
    graph : networkx.Graph, dict node -> Graph, or None
        The policy (None: the complete graph, i.e. bounded differential privacy).
    scenarios : scenario or ScenarioClass
        Gives the nodes and their states.

    Returns
    -------
    float
        ``max |w_v(x) - w_v(y)|`` over the query's nodes v and edges (x, y); for a histogram 2
        (L1: one unit leaves a bar and enters another) if any edge exists, else 0.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import distance_threshold_graph, partition_graph
    >>> from pufferfish_pgm.queries import Histogram, LinearQuery
    >>> ages = MarkovChainScenario(np.full((5, 5), 0.2), "stationary", 4)
    >>> near = distance_threshold_graph(range(5), lambda x, y: abs(x - y), 1)
    >>> policy_sensitivity(LinearQuery({s: 10 * s for s in range(5)}), near, ages)
    10.0
    >>> policy_sensitivity(Histogram(), partition_graph([[s] for s in range(5)]), ages)
    0.0
    """
    cls = as_class(scenarios)
    _check_mapping_nodes(graph, cls)
    if isinstance(query, Histogram):
        nodes = query.node_list(cls)
        return 2.0 if any(policy_edges(graph, cls, v) for v in nodes) else 0.0
    if not isinstance(query, WeightedQuery):
        raise ParameterTypeError(
            f"expected a Count, LinearQuery or Histogram, got {type(query).__name__}"
        )
    worst = 0.0
    for v in query.node_list(cls):
        row = query.weights_of(cls, v)
        for x, y in policy_edges(graph, cls, v):
            worst = max(worst, abs(float(row[cls.state_index(v, x)] - row[cls.state_index(v, y)])))
    return worst


def dependence_reason(scenarios: ScenarioClass | Scenario) -> str | None:
    """Why the nodes are not independent under some scenario, or None when they are.

    A Markov chain has independent nodes iff its transition matrix has identical rows (rank 1);
    a Bayesian network iff every CPT is constant along its parent axes (in particular, one
    without edges). Checked exactly, without tolerance: a near-independent model is treated as
    dependent.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> dependence_reason(MarkovChainScenario([[0.7, 0.3], [0.7, 0.3]], "stationary", 5)) is None
    True
    >>> print(dependence_reason(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 5)))
    chain 'chain' has a transition matrix with different rows (not rank 1): X_t depends on X_(t-1)
    """
    for m in as_class(scenarios):
        if isinstance(m, MarkovChainScenario):
            p = m.steps          # (T - 1, k, k): every step must have equal rows
            if m.length > 1 and not np.array_equal(p, np.broadcast_to(p[:, :1], p.shape)):
                return (f"chain {m.name!r} has a transition matrix with different rows (not "
                        "rank 1): X_t depends on X_(t-1)")
        elif isinstance(m, BayesianNetworkScenario):
            for v in m.nodes:
                cpt = m.tables.cpts[v].reshape(len(m.states_of(v)), -1)
                if not np.array_equal(cpt, np.broadcast_to(cpt[:, :1], cpt.shape)):
                    return (f"network {m.name!r}: node {v!r} depends on its parents "
                            f"{list(m.parents_of(v))}")
        elif isinstance(m, MarkovNetworkScenario):   # a factor over two nodes may link them
            scope = next((s for s in m.tables.scopes if len(s) > 1), None)
            if scope is not None:
                return (f"Markov network {m.name!r}: the factor over {list(scope)} links "
                        "its nodes")
    return None


def independent_records(scenarios: ScenarioClass | Scenario) -> bool:
    """True when every scenario makes all nodes mutually independent (see
    :func:`dependence_reason`).

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> independent_records(MarkovChainScenario([[0.7, 0.3], [0.7, 0.3]], "stationary", 5))
    True
    """
    return dependence_reason(scenarios) is None


def _check_pairs_on_policy(framework: Framework, graph: Policy) -> dict[Hashable, set]:
    """Every pair must be a single-node pair along a policy edge; returns node -> edges."""
    cls = framework.scenarios
    edges: dict[Hashable, set] = {}
    for p in framework.pairs:
        if not (isinstance(p.first, NodeSecret) and isinstance(p.second, NodeSecret)):
            raise InvalidParameterError(
                f"the pair {p} is over several nodes; the Blowfish Laplace mechanism protects "
                "one record at a time. Use ExactLaplaceMechanism for joint secrets"
            )
        v = p.first.node
        if v not in edges:
            edges[v] = set(policy_edges(graph, cls, v))
        if (p.first.state, p.second.state) not in edges[v] and \
                (p.second.state, p.first.state) not in edges[v]:
            raise InvalidParameterError(
                f"the framework protects the pair {p}, which is not an edge of the policy graph "
                f"of node {v!r}; build the framework with secret_pairs(scenarios, graph=policy) "
                "so that it protects exactly the policy's edges"
            )
    return edges


@dataclass(frozen=True, kw_only=True)
class BlowfishCalibration(Calibration[BlowfishEvidence]):
    """A Blowfish calibration: ``scale = sensitivity / ε``, possibly 0.

    ``sensitivity`` is the policy-specific sensitivity. A scale of 0 (the query does not change
    along any edge) releases the exact answer, which is then 0-private for the policy.
    """

    sensitivity: float = 0.0

    def noise_sensitivity(self) -> float:
        """The policy-specific sensitivity: real-valued answers are rounded to a grid with it
        as the distance between neighbours (see :func:`pufferfish_pgm.noise.add_noise`)."""
        return self.sensitivity


@dataclass(frozen=True, kw_only=True)
class BlowfishLaplaceMechanism(Mechanism):
    """Laplace noise scaled to the policy-specific sensitivity: ε-Blowfish private.

    Parameters
    ----------
    epsilon : float
        Privacy parameter (> 0).
    graph : networkx.Graph, dict node -> Graph, or None
        The discriminative secret graph over a node's states (None: complete graph).

    Notes
    -----
    Meant for independent records. :meth:`calibrate` raises
    :class:`~pufferfish_pgm.errors.InvalidParameterError` when some scenario correlates the
    nodes, and when the framework protects a pair that is not an edge of the policy.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework, partition_graph, secret_pairs
    >>> from pufferfish_pgm.queries import Histogram
    >>> iid = MarkovChainScenario([[0.5, 0.3, 0.2]] * 3, "stationary", 10)
    >>> policy = partition_graph([[0, 1], [2]])
    >>> cal = BlowfishLaplaceMechanism(epsilon=1.0, graph=policy).calibrate(
    ...     Framework(iid, secret_pairs(iid, graph=policy)), Histogram())
    >>> cal.scale, cal.evidence.edges
    (2.0, ((0, 1),))
    """

    graph: Policy = None

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_policy(self.graph)

    def calibrate(self, framework: Framework, query: Query, *,
                  executor: Any = None) -> BlowfishCalibration:
        """Scale = policy sensitivity / ε, with the sensitivity and the edges as evidence."""
        check_executor(executor)   # no loop to scale out here; a bad value still errs
        if not isinstance(framework, Framework):
            raise ParameterTypeError(f"framework must be a Framework, got "
                                     f"{type(framework).__name__}")
        reason = dependence_reason(framework.scenarios)
        if reason is not None:
            raise InvalidParameterError(
                f"the Blowfish Laplace mechanism assumes independent records, but {reason}. "
                "Under correlation Laplace(sensitivity/ε) is not Pufferfish private; express the "
                "policy as pairs, Framework(scenarios, secret_pairs(scenarios, graph=policy)), "
                "and calibrate with MarkovQuiltMechanism, WassersteinMechanism or "
                "ExactLaplaceMechanism"
            )
        _check_pairs_on_policy(framework, self.graph)
        sensitivity = policy_sensitivity(query, self.graph, framework.scenarios)
        edges = self._edges_evidence(framework, query)
        return BlowfishCalibration(
            mechanism=self.name, epsilon=self.epsilon, scale=sensitivity / self.epsilon,
            query=query, framework=framework, sensitivity=sensitivity,
            evidence=BlowfishEvidence(
                sensitivity=sensitivity, edges=edges,
                lipschitz=float(query.lipschitz_for(framework.scenarios)),
                formula="scale = policy sensitivity / epsilon"))

    def _edges_evidence(self, framework: Framework, query: Query) -> tuple | dict:
        """The policy's edges: one tuple for a shared graph, else a dict node -> edges."""
        cls = framework.scenarios
        nodes = query.node_list(cls)
        if not isinstance(self.graph, Mapping):
            return policy_edges(self.graph, cls, nodes[0])
        return {v: policy_edges(self.graph, cls, v) for v in nodes}
