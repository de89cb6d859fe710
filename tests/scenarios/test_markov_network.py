"""Undirected priors (issue 24, item 3): MarkovNetworkScenario, its validation, the pgmpy
adapter, inference, count laws and quilts on it, checked against the brute-force oracle."""

from __future__ import annotations

import math
import warnings

import networkx as nx
import numpy as np
import pytest
from oracle import (
    brute_conditional,
    brute_pmf,
    brute_probability,
    query_weight_fns,
    random_markov_network,
    realised_epsilon,
)

import pufferfish_pgm as pp
from pufferfish_pgm.errors import (
    InvalidModelError,
    LimitExceededError,
    ParameterTypeError,
    UnknownNodeError,
    UnknownStateError,
)
from pufferfish_pgm.inference import conditional, secret_probability
from pufferfish_pgm.queries import query_log_pmf
from pufferfish_pgm.quilts import plan_network
from pufferfish_pgm.quilts._engine import partition

BIN = {"a": (0, 1), "b": (0, 1), "c": (0, 1)}


def _collider_mn() -> pp.MarkovNetworkScenario:
    """a - c - b: a and b are dependent (through c) unless c is observed."""
    return pp.MarkovNetworkScenario.from_factors(
        [(("a", "c"), [[4.0, 1.0], [1.0, 4.0]]), (("b", "c"), [[4.0, 1.0], [1.0, 4.0]])], BIN)


# ---------------------------------------------------------------------- validation


@pytest.mark.parametrize(("factors", "error", "words"), [
    ([(("a", "z"), np.ones((2, 2)))], UnknownNodeError, "unknown node 'z'"),
    ([(("a",), [1.0, -0.5]), (("b", "c"), np.ones((2, 2)))], InvalidModelError, "-0.5"),
    ([(("a",), [1.0, np.inf]), (("b", "c"), np.ones((2, 2)))], InvalidModelError, "inf"),
    ([(("a", "b"), np.ones((2, 3))), (("c",), [1, 1])], InvalidModelError, "shape (2, 3)"),
    ([(("a", "b"), np.ones((2, 2)))], InvalidModelError, "['c'] are in no factor"),
    ([(("a", "a"), np.ones((2, 2))), (("b", "c"), np.ones((2, 2)))], InvalidModelError,
     "twice"),
    ([(("a", "b"), [[1, 0], [0, 0]]), (("b", "c"), [[0, 0], [1, 1]]), (("c",), [1, 1])],
     InvalidModelError, "partition function 0"),
    (["a"], ParameterTypeError, "(scope, values) pair"),
])
def test_bad_factors_are_refused_naming_the_culprit(factors, error, words):
    with pytest.raises(error, match=None) as info:
        pp.MarkovNetworkScenario.from_factors(factors, BIN)
    assert words in str(info.value)


def test_every_node_needs_named_states():
    with pytest.raises(InvalidModelError, match="node 'b' has no state names"):
        pp.MarkovNetworkScenario.from_factors([(("a", "b"), np.ones((2, 2)))], {"a": (0, 1)},
                                              nodes=["a", "b"])
    mn = _collider_mn()
    with pytest.raises(UnknownStateError, match="no state 7"):
        conditional(mn, ["a"], {"b": 7})
    with pytest.raises(UnknownNodeError, match="unknown node 'q'"):
        conditional(mn, ["q"])


def test_the_partition_check_is_bounded_by_the_memory_budget():
    # a 12-clique of binary nodes with one zero: eliminating the first node builds a table
    # over the other 11 (2^11 cells, 16 KiB), more than a 1 KiB budget
    nodes = [f"x{i}" for i in range(12)]
    table = np.ones((2,) * 12)
    table[(0,) * 12] = 0.0
    with pytest.raises(LimitExceededError, match="partition function is positive"):
        pp.MarkovNetworkScenario.from_factors([(tuple(nodes), table)],
                                              dict.fromkeys(nodes, (0, 1)), memory_budget=1024)


def test_pgmpy_round_trip_and_refusals():
    from pgmpy.factors.discrete import DiscreteFactor
    from pgmpy.models import DiscreteMarkovNetwork, FactorGraph

    mn = _collider_mn()
    back = pp.MarkovNetworkScenario(mn.to_pgmpy())
    assert back.nodes == mn.nodes
    for (s1, v1), (s2, v2) in zip(back.factors(), mn.factors(), strict=True):
        assert s1 == s2 and np.array_equal(v1, v2)
    fg = FactorGraph()
    phi = DiscreteFactor(["a", "b"], [2, 2], [1, 2, 3, 4])
    fg.add_nodes_from(["a", "b"])
    fg.add_factors(phi)
    fg.add_edges_from([("a", phi), ("b", phi)])
    assert pp.MarkovNetworkScenario(fg).factors()[0][1].tolist() == [[1, 2], [3, 4]]
    bad = DiscreteMarkovNetwork([("a", "b"), ("b", "c")])
    bad.add_factors(DiscreteFactor(["a", "b"], [2, 2], [1, 1, 1, 1],
                                   state_names={"a": ["x", "y"], "b": [0, 1]}),
                    DiscreteFactor(["b", "c"], [2, 2], [1, 1, 1, 1],
                                   state_names={"b": ["u", "v"], "c": [0, 1]}))
    with pytest.raises(InvalidModelError, match="states of 'b'"):
        pp.MarkovNetworkScenario(bad)
    with pytest.raises(ParameterTypeError, match="BayesianNetworkScenario"):
        pp.MarkovNetworkScenario(pp.BayesianNetworkScenario.from_file(
            pp.scenarios.default_model_path("asia.bif")).to_pgmpy())


# ---------------------------------------------------------------------- inference


@pytest.mark.parametrize("seed", range(4))
def test_conditionals_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    mn = random_markov_network(rng, 6, zero_prob=0.15)
    nodes = list(mn.nodes)
    for targets, evidence in [([nodes[1]], {}), ([nodes[0], nodes[4]], {nodes[2]: "s0"}),
                              ([nodes[5]], {nodes[0]: "s1", nodes[3]: "s0"})]:
        if evidence and brute_probability(mn, evidence) == 0:
            continue
        assert np.allclose(conditional(mn, targets, evidence),
                           brute_conditional(mn, targets, evidence), atol=1e-12)
        assert math.isclose(secret_probability(mn, evidence) if evidence else 1.0,
                            brute_probability(mn, evidence), rel_tol=1e-9, abs_tol=1e-15)


@pytest.mark.parametrize("seed", range(4))
def test_count_laws_match_brute_force(seed):
    rng = np.random.default_rng(10 + seed)
    mn = random_markov_network(rng, 6, zero_prob=0.15)
    query = pp.Count("s1")
    fns = query_weight_fns(pp.ScenarioClass([mn]), query)
    for evidence in [None, {"v2": "s0"}, {"v0": "s1", "v5": "s0"}]:
        if evidence and brute_probability(mn, evidence) == 0:
            continue
        want = {k[0]: p for k, p in brute_pmf(mn, fns, evidence).items() if p > 0}
        got = query_log_pmf(mn, query, evidence)
        assert dict(zip(got.support.tolist(), got.probs.tolist(), strict=True)) == \
            pytest.approx(want, rel=1e-9, abs=1e-15)


def test_count_law_of_two_components_cancels_the_other_partition_function():
    # a - b and an independent c with unary weights (1, 3): P(c = 1) = 3/4 whatever a, b
    mn = pp.MarkovNetworkScenario.from_factors(
        [(("a", "b"), [[3.0, 1.0], [1.0, 3.0]]), (("c",), [1.0, 3.0])], BIN)
    pmf = query_log_pmf(mn, pp.Count(1, nodes=["c"]), {"a": 1})
    assert pmf.probs.tolist() == pytest.approx([0.25, 0.75], rel=1e-12)


# ---------------------------------------------------------------------- quilts and mechanisms


def test_quilts_use_graph_separation_not_an_orientation():
    # Read as the DAG a -> c <- b (the order of the edges), b would be d-separated from a by
    # the empty quilt; in the Markov network a and b are dependent through c.
    mn = _collider_mn()
    nearby, _, remote = partition(mn, "a", [])
    assert "b" in nearby and remote == ()
    assert conditional(mn, ["b"], {"a": 0})[0] != pytest.approx(
        conditional(mn, ["b"], {"a": 1})[0])
    nearby, quilt, remote = partition(mn, "a", ["c"])
    assert (nearby, quilt, remote) == (("a",), ("c",), ("b",))


def test_mqm_and_exact_hold_on_an_undirected_class_by_brute_force():
    theta = pp.ScenarioClass([random_markov_network(np.random.default_rng(s), 5, max_states=2,
                                                    edges=[("v0", "v1"), ("v1", "v2"),
                                                           ("v2", "v3"), ("v3", "v4")])
                              for s in (1, 2)])
    framework, query = pp.Framework(theta), pp.Count("s1")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mqm = pp.MarkovQuiltMechanism(epsilon=1.0).calibrate(framework, query)
        exact = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(framework, query)
    assert realised_epsilon(framework, query, mqm.scale) <= 1.0 + 1e-9
    assert realised_epsilon(framework, query, exact.scale) == pytest.approx(1.0, rel=1e-6)
    assert pp.audit(framework, query, exact.scale).epsilon == pytest.approx(
        realised_epsilon(framework, query, exact.scale), rel=1e-9)
    plan = plan_network(framework, query, 1.0)
    for entry in plan.entries:   # every remote set is separated by its quilt in the path
        for r in entry.remote:
            lo, hi = sorted([int(entry.node[1:]), int(r[1:])])
            assert any(lo < int(q[1:]) < hi for q in entry.quilt)


# ---------------------------------------------------------------------- the builder


def test_undirected_contagion_is_an_ising_model():
    graph = nx.path_graph(3)
    mn = pp.scenarios.contagion(graph, base=0.2, spread=0.5, directed=False)
    assert isinstance(mn, pp.MarkovNetworkScenario) and mn.edges() == [(0, 1), (1, 2)]
    # P(x) ∝ Π 0.2^x_v 0.8^(1-x_v) · 2^(x_0 x_1 + x_1 x_2): brute force by hand
    weights = {x: math.prod(0.2 if b else 0.8 for b in x) * 2.0 ** (x[0] * x[1] + x[1] * x[2])
               for x in np.ndindex(2, 2, 2)}
    z = sum(weights.values())
    p1 = sum(w for x, w in weights.items() if x[1]) / z
    assert conditional(mn, [1])[1] == pytest.approx(p1, rel=1e-12)
    free = pp.scenarios.contagion(graph, base=0.2, spread=0.0, directed=False)
    assert conditional(free, [0, 2]) == pytest.approx(np.outer([0.8, 0.2], [0.8, 0.2]))
    with pytest.raises(pp.InvalidParameterError, match="spread < 1"):
        pp.scenarios.contagion(graph, spread=1.0, directed=False)
    with pytest.raises(pp.InvalidParameterError, match="0 < base < 1"):
        pp.scenarios.contagion(graph, base=0.0, directed=False)


def test_possible_states_are_read_off_positive_factors_without_inference():
    # A 40-clique of pairwise factors: inference of one node's marginal needs a table of
    # 2^39 cells, refused under a 1 MiB budget; the framework's possibility check must not
    # need it (every factor positive: every state possible).
    nodes = [f"x{i}" for i in range(40)]
    factors = [((u, v), [[2.0, 1.0], [1.0, 2.0]]) for i, u in enumerate(nodes)
               for v in nodes[i + 1:]]
    mn = pp.MarkovNetworkScenario.from_factors(factors, dict.fromkeys(nodes, (0, 1)))
    from pufferfish_pgm.secrets._possible import node_support

    assert node_support(mn, "x3").tolist() == [True, True]
    with pytest.raises(LimitExceededError):
        conditional(mn, ["x3"], memory_budget=2**20)
