"""Exact inference: pgmpy's VariableElimination as the reference on real networks, golden values
derived by hand, and brute-force enumeration on random small networks and chains."""

from __future__ import annotations

import dataclasses
import gc
import weakref

import numpy as np
import pytest
from helpers import (
    has_model,
    load_network,
    queries,
    small_chains,
    small_networks,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle import brute_conditional, brute_probability

import pufferfish_pgm as pp
from pufferfish_pgm.errors import (
    ImpossibleSecretError,
    InvalidModelError,
    ParameterTypeError,
    UnknownNodeError,
    UnknownStateError,
)
from pufferfish_pgm.inference import conditional, elimination_order, secret_probability
from pufferfish_pgm.inference._engine import network_index

TOL = 1e-9

# pgmpy divides 0 by 0 on zero-probability evidence (its answer is then NaN, which we skip)
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")


# ----------------------------------------------------------------------------- pgmpy reference

def pgmpy_answer(engine, targets: list, evidence: dict) -> np.ndarray | None:
    """pgmpy's P(targets | evidence) with axes in the order of ``targets``; None when pgmpy
    cannot answer (it raises or returns NaN on zero-probability evidence)."""
    try:
        factor = engine.query(targets, evidence=evidence or None, show_progress=False)
    except Exception:  # noqa: BLE001 - pgmpy raises various errors on impossible evidence
        return None
    values = np.transpose(factor.values, [list(factor.variables).index(t) for t in targets])
    return values if np.isfinite(values).all() else None


def random_query(rng: np.random.Generator, bn: pp.BayesianNetworkScenario) -> tuple[list, dict]:
    nodes = list(bn.nodes)
    n_targets, n_evidence = int(rng.integers(1, 4)), int(rng.integers(0, 4))
    picked = rng.choice(len(nodes), n_targets + n_evidence, replace=False)
    targets = [nodes[i] for i in picked[:n_targets]]
    evidence = {}
    for i in picked[n_targets:]:
        states = bn.states_of(nodes[i])
        evidence[nodes[i]] = states[int(rng.integers(len(states)))]
    return targets, evidence


def check_against_pgmpy(bn: pp.BayesianNetworkScenario, engine, targets: list,
                        evidence: dict) -> bool:
    """Assert ours equals pgmpy's to 1e-9; True if the evidence was possible."""
    reference = pgmpy_answer(engine, targets, evidence)
    if reference is None:
        with pytest.raises(ImpossibleSecretError):
            conditional(bn, targets, evidence)
        assert secret_probability(bn, evidence) == 0.0
        return False
    try:
        ours = conditional(bn, targets, evidence)
    except ImpossibleSecretError:
        # pgmpy drops the part of the network that makes such evidence impossible and answers
        # anyway; we refuse. The evidence must really have probability 0.
        assert secret_probability(bn, evidence) == 0.0
        return False
    assert ours.shape == tuple(len(bn.states_of(t)) for t in targets)
    np.testing.assert_allclose(ours, reference, atol=TOL, rtol=0,
                               err_msg=f"P({targets} | {evidence})")
    assert ours.sum() == pytest.approx(1.0, abs=1e-12)
    return True


NETWORK_CASES = [
    pytest.param("asia", 300, id="asia"),
    pytest.param("sachs", 200, id="sachs"),
    pytest.param("child", 200, id="child"),
    pytest.param("insurance", 200, id="insurance"),
    pytest.param("alarm", 200, id="alarm"),
]


@pytest.mark.parametrize(("name", "count"), NETWORK_CASES)
def test_conditional_matches_pgmpy_variable_elimination(name: str, count: int) -> None:
    from pgmpy.inference import VariableElimination

    bn = load_network(name)
    engine = VariableElimination(bn.to_pgmpy())  # the same validated tables
    rng = np.random.default_rng(20240517)
    possible = sum(check_against_pgmpy(bn, engine, *random_query(rng, bn))
                   for _ in range(count))
    assert possible >= 0.8 * count  # the comparison is not vacuous


@pytest.mark.parametrize("name", ["asia", "child", "sachs"])
def test_every_single_node_marginal_and_conditional_matches_pgmpy(name: str) -> None:
    """Exhaustive on the small networks: every target, alone and given every other node's
    first state."""
    from pgmpy.inference import VariableElimination

    bn = load_network(name)
    engine = VariableElimination(bn.to_pgmpy())
    for target in bn.nodes:
        check_against_pgmpy(bn, engine, [target], {})
        for other in bn.nodes:
            if other != target:
                check_against_pgmpy(bn, engine, [target], {other: bn.states_of(other)[0]})


@pytest.mark.parametrize("name", ["hepar2", "win95pts"])
def test_larger_networks_match_pgmpy(name: str) -> None:
    from pgmpy.inference import VariableElimination

    if not has_model(name):
        pytest.skip(f"{name}.bif not available")
    bn = load_network(name)
    engine = VariableElimination(bn.to_pgmpy())
    rng = np.random.default_rng(7)
    possible = sum(check_against_pgmpy(bn, engine, *random_query(rng, bn)) for _ in range(40))
    assert possible >= 30


@pytest.mark.parametrize("name", ["asia", "sachs", "child"])
def test_secret_probability_matches_pgmpy(name: str) -> None:
    from pgmpy.inference import VariableElimination

    bn = load_network(name)
    engine = VariableElimination(bn.to_pgmpy())
    rng = np.random.default_rng(3)
    for _ in range(40):
        _, evidence = random_query(rng, bn)
        if not evidence:
            assert secret_probability(bn, {}) == 1.0
            continue
        nodes = list(evidence)
        factor = engine.query(nodes, show_progress=False)
        index = tuple(factor.state_names[v].index(evidence[v]) for v in factor.variables)
        assert secret_probability(bn, evidence) == pytest.approx(factor.values[index],
                                                                  abs=1e-12)


def test_sachs_two_components() -> None:
    """sachs has two connected components; evidence in one leaves the other unchanged."""
    bn = load_network("sachs")
    left, right = "Raf", "PIP3"  # {Raf, Mek, Erk, Akt, ...} and {Plcg, PIP2, PIP3}
    for state in bn.states_of(right):
        np.testing.assert_allclose(conditional(bn, [left], {right: state}),
                                   conditional(bn, [left]), atol=1e-15)
    joint = conditional(bn, [left, right])
    np.testing.assert_allclose(joint, np.outer(conditional(bn, [left]),
                                               conditional(bn, [right])), atol=1e-15)
    # and the evidence that does matter
    assert not np.allclose(conditional(bn, [left], {"Akt": "HIGH"}), conditional(bn, [left]))


# ----------------------------------------------------------------------------- golden values

def test_asia_golden_values(asia) -> None:
    # straight from the CPT of lung: P(lung=yes | smoke=yes) = 0.1, P(lung=yes | smoke=no) = 0.01
    np.testing.assert_allclose(conditional(asia, ["lung"], {"smoke": "yes"}), [0.1, 0.9],
                               atol=1e-15)
    np.testing.assert_allclose(conditional(asia, ["lung"], {"smoke": "no"}), [0.01, 0.99],
                               atol=1e-15)
    # P(tub=yes)  = 0.01 * 0.05 + 0.99 * 0.01 = 0.0104
    # P(lung=yes) = 0.5 * 0.1 + 0.5 * 0.01   = 0.055
    # either = tub OR lung (deterministic CPT), and tub, lung are independent (no common
    # ancestor), so P(either=yes) = 1 - (1 - 0.0104)(1 - 0.055) = 1 - 0.935172 = 0.064828
    assert conditional(asia, ["tub"])[0] == pytest.approx(0.0104, abs=1e-15)
    assert conditional(asia, ["lung"])[0] == pytest.approx(0.055, abs=1e-15)
    assert conditional(asia, ["either"])[0] == pytest.approx(0.064828, abs=1e-15)
    # Bayes: P(smoke=yes | lung=yes) = 0.5 * 0.1 / 0.055 = 10/11
    assert conditional(asia, ["smoke"], {"lung": "yes"})[0] == pytest.approx(10 / 11, abs=1e-15)
    # P(xray=yes) = 0.98 P(either=yes) + 0.05 P(either=no) = 0.06353144 + 0.0467586
    assert conditional(asia, ["xray"])[0] == pytest.approx(0.11029004, abs=1e-15)
    # explaining away in either = tub OR lung: given either=yes and lung=no, tub must be yes
    np.testing.assert_allclose(conditional(asia, ["tub"], {"either": "yes", "lung": "no"}),
                               [1.0, 0.0], atol=1e-15)
    # given either=no, both parents are no
    np.testing.assert_allclose(conditional(asia, ["tub", "lung"], {"either": "no"}),
                               [[0.0, 0.0], [0.0, 1.0]], atol=1e-15)


def test_asia_joint_of_two_independent_roots(asia) -> None:
    # asia and smoke are independent roots: P = outer([0.01, 0.99], [0.5, 0.5])
    np.testing.assert_allclose(conditional(asia, ["asia", "smoke"]),
                               [[0.005, 0.005], [0.495, 0.495]], atol=1e-15)


def test_target_order_gives_the_axis_order(asia) -> None:
    a = conditional(asia, ["smoke", "lung", "bronc"], {"dysp": "yes"})
    b = conditional(asia, ["bronc", "smoke", "lung"], {"dysp": "yes"})
    np.testing.assert_allclose(a, np.transpose(b, [1, 2, 0]), atol=1e-15)
    assert a.shape == (2, 2, 2)


def test_target_in_the_evidence_gets_a_one_hot_axis(asia) -> None:
    out = conditional(asia, ["smoke", "lung"], {"smoke": "no"})
    np.testing.assert_allclose(out, [[0.0, 0.0], [0.01, 0.99]], atol=1e-15)
    np.testing.assert_array_equal(conditional(asia, ["smoke"], {"smoke": "no"}), [0.0, 1.0])
    mc = pp.MarkovChainScenario([[0.9, 0.1], [0.5, 0.5]], [0.5, 0.5], 3)
    np.testing.assert_allclose(conditional(mc, [1, 2], {1: 1}), [[0.0, 0.0], [0.5, 0.5]])


def test_single_target_may_be_given_bare(asia) -> None:
    np.testing.assert_array_equal(conditional(asia, "lung", {"smoke": "yes"}),
                                  conditional(asia, ["lung"], {"smoke": "yes"}))
    mc = pp.MarkovChainScenario([[0.9, 0.1], [0.5, 0.5]], [1.0, 0.0], 3)
    np.testing.assert_allclose(conditional(mc, 2), [0.86, 0.14])


def test_chain_golden_values() -> None:
    # P = [[0.9, 0.1], [0.5, 0.5]];  P^2 = [[0.81 + 0.05, 0.09 + 0.05], [0.45 + 0.25, 0.05 + 0.25]]
    #                                    = [[0.86, 0.14], [0.70, 0.30]]
    mc = pp.MarkovChainScenario([[0.9, 0.1], [0.5, 0.5]], [0.5, 0.5], 5)
    np.testing.assert_allclose(conditional(mc, [2], {0: 0}), [0.86, 0.14], atol=1e-15)
    np.testing.assert_allclose(conditional(mc, [3], {1: 1}), [0.70, 0.30], atol=1e-15)
    # backwards, Bayes: P(X_0=0, X_1=1) = 0.5 * 0.1, P(X_0=1, X_1=1) = 0.5 * 0.5 -> (1/6, 5/6)
    np.testing.assert_allclose(conditional(mc, [0], {1: 1}), [1 / 6, 5 / 6], atol=1e-15)
    # a bridge: P(X_1 | X_0=0, X_2=1) ∝ P[0, x] P[x, 1] = (0.9 * 0.1, 0.1 * 0.5) -> (9/14, 5/14)
    np.testing.assert_allclose(conditional(mc, [1], {0: 0, 2: 1}), [9 / 14, 5 / 14],
                               atol=1e-15)
    # the joint of two steps: q_0[i] P[i, j]
    np.testing.assert_allclose(conditional(mc, [0, 1]), [[0.45, 0.05], [0.25, 0.25]],
                               atol=1e-15)
    # and in reversed order
    np.testing.assert_allclose(conditional(mc, [1, 0]), [[0.45, 0.25], [0.05, 0.25]],
                               atol=1e-15)


def test_chain_with_named_states() -> None:
    mc = pp.MarkovChainScenario([[0.9, 0.1], [0.5, 0.5]], [1.0, 0.0], 3, ["rest", "walk"])
    np.testing.assert_allclose(conditional(mc, [2], {1: "walk"}), [0.5, 0.5])
    with pytest.raises(UnknownStateError, match="no state 1"):
        conditional(mc, [2], {1: 1})


def test_stationary_chain_is_stationary() -> None:
    mc = pp.MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 30)
    for t in (0, 1, 17, 29):
        np.testing.assert_allclose(conditional(mc, [t]), [2 / 3, 1 / 3], atol=1e-12)


def test_secret_probability_golden(asia) -> None:
    assert secret_probability(asia, {"smoke": "yes", "lung": "yes"}) == pytest.approx(0.05)
    assert secret_probability(asia, {}) == pytest.approx(1.0)
    mc = pp.MarkovChainScenario([[0.9, 0.1], [0.5, 0.5]], [1.0, 0.0], 3)
    assert secret_probability(mc, {0: 0, 2: 1}) == pytest.approx(0.14)
    # initial "any": the best initial state; X_2 = 1 from X_0 = 1 has P^2[1, 1] = 0.3
    worst = pp.MarkovChainScenario([[0.9, 0.1], [0.5, 0.5]], "any", 3)
    assert secret_probability(worst, {2: 1}) == pytest.approx(0.3)
    assert secret_probability(worst, {0: 1, 1: 1}) == pytest.approx(0.5)


# ----------------------------------------------------------------------------- impossibility

def network(edges: list, cpds: dict) -> pp.BayesianNetworkScenario:
    """A binary network from edges and {node: 2-D CPD values} (parents in edge order)."""
    from pgmpy.factors.discrete import TabularCPD
    from pgmpy.models import DiscreteBayesianNetwork

    model = DiscreteBayesianNetwork(edges)
    model.add_nodes_from(cpds)
    for node, values in cpds.items():
        parents = [p for p, c in edges if c == node]
        model.add_cpds(TabularCPD(node, 2, values, evidence=parents or None,
                                  evidence_card=[2] * len(parents) or None))
    return pp.BayesianNetworkScenario(model)


def test_impossible_evidence_is_refused_even_outside_the_targets_part() -> None:
    # A -> B, A -> C with P(B=1 | A=0) = 0. Evidence {A: 0, B: 1} is impossible. The CPT of B
    # does not touch C's part of the network once A is observed, so an engine that prunes by
    # the moral graph would answer P(C | A=0) (pgmpy does).
    bn = network([("A", "B"), ("A", "C")], {
        "A": [[0.5], [0.5]],
        "B": [[1.0, 0.3], [0.0, 0.7]],
        "C": [[0.9, 0.2], [0.1, 0.8]],
    })
    with pytest.raises(ImpossibleSecretError, match="has probability 0"):
        conditional(bn, ["C"], {"A": 0, "B": 1})
    assert secret_probability(bn, {"A": 0, "B": 1}) == 0.0
    np.testing.assert_allclose(conditional(bn, ["C"], {"A": 0, "B": 0}), [0.9, 0.1])


def test_impossible_root_state_is_refused() -> None:
    # P(A=1) = 0: conditioning on it must fail, though the CPT of C has a column for A=1
    bn = network([("A", "C")], {"A": [[1.0], [0.0]], "C": [[0.9, 0.2], [0.1, 0.8]]})
    with pytest.raises(ImpossibleSecretError):
        conditional(bn, ["C"], {"A": 1})
    np.testing.assert_allclose(conditional(bn, ["C"], {"A": 0}), [0.9, 0.1])


def test_impossible_evidence_in_another_component() -> None:
    # two components {A, B} and {D}; D's state 1 is impossible
    bn = network([("A", "B")], {"A": [[0.5], [0.5]], "B": [[0.9, 0.2], [0.1, 0.8]],
                                "D": [[1.0], [0.0]]})
    with pytest.raises(ImpossibleSecretError):
        conditional(bn, ["B"], {"D": 1})
    with pytest.raises(ImpossibleSecretError):
        conditional(bn, ["B"], {"D": 1, "A": 0})
    np.testing.assert_allclose(conditional(bn, ["B"], {"D": 0}), [0.55, 0.45])


def test_impossible_evidence_on_a_real_network() -> None:
    if not has_model("win95pts"):
        pytest.skip("win95pts.bif not available")
    bn = load_network("win95pts")
    evidence = {"PrtSpool": "Disabled", "PrntPrcssTm": "Too_Long"}
    assert secret_probability(bn, evidence) == 0.0
    with pytest.raises(ImpossibleSecretError):
        conditional(bn, ["DataFile", "CmpltPgPrntd"], evidence)


def test_impossible_chain_evidence() -> None:
    mc = pp.MarkovChainScenario([[1.0, 0.0], [0.5, 0.5]], [0.5, 0.5], 4)
    with pytest.raises(ImpossibleSecretError, match=r"\{1: 0, 2: 1\} has probability 0"):
        conditional(mc, [3], {1: 0, 2: 1})
    assert secret_probability(mc, {1: 0, 2: 1}) == 0.0


# ----------------------------------------------------------------------------- argument errors

def test_argument_errors(asia) -> None:
    with pytest.raises(ParameterTypeError, match="repeat"):
        conditional(asia, ["lung", "lung"])
    with pytest.raises(ParameterTypeError, match="evidence must be a dict"):
        conditional(asia, ["lung"], [("smoke", "yes")])
    with pytest.raises(ParameterTypeError, match="got ScenarioClass"):
        conditional(pp.ScenarioClass(asia), ["lung"])
    with pytest.raises(ParameterTypeError, match="got str"):
        secret_probability("asia", {"lung": "yes"})
    with pytest.raises(UnknownNodeError, match="'lungs'"):
        conditional(asia, ["lungs"])
    with pytest.raises(UnknownNodeError, match="'smoker'"):
        conditional(asia, ["lung"], {"smoker": "yes"})
    mc = pp.MarkovChainScenario([[0.9, 0.1], [0.5, 0.5]], "any", 3)
    with pytest.raises(InvalidModelError, match="initial='any'"):
        conditional(mc, [2], {0: 0})
    with pytest.raises(UnknownNodeError):
        conditional(mc, [3])


def test_no_targets(asia) -> None:
    assert conditional(asia, []) == 1.0
    assert conditional(asia, [], {"smoke": "yes"}) == 1.0
    mc = pp.MarkovChainScenario([[0.9, 0.1], [0.5, 0.5]], [1.0, 0.0], 3)
    assert conditional(mc, [], {1: 1}) == 1.0


def test_results_are_fresh_arrays(asia) -> None:
    first = conditional(asia, ["lung"], {"smoke": "yes"})
    first[:] = -1.0
    np.testing.assert_allclose(conditional(asia, ["lung"], {"smoke": "yes"}), [0.1, 0.9])
    marginal = conditional(asia, ["smoke"])
    marginal[:] = 7.0
    np.testing.assert_allclose(conditional(asia, ["smoke"]), [0.5, 0.5])
    assert asia.cpt("smoke").tolist() == [0.5, 0.5]


def test_plans_are_reused_across_evidence_values(asia) -> None:
    fresh = pp.BayesianNetworkScenario(asia.tables)
    yes = conditional(fresh, ["lung"], {"smoke": "yes"})
    no = conditional(fresh, ["lung"], {"smoke": "no"})
    np.testing.assert_allclose(yes, [0.1, 0.9])
    np.testing.assert_allclose(no, [0.01, 0.99])
    plans = network_index(fresh).plans
    assert [key for key in plans if key[0] == ("lung",)] == [(("lung",), ("smoke",))]


def test_the_index_belongs_to_one_scenario_object_and_goes_with_it(asia) -> None:
    fresh = pp.BayesianNetworkScenario(asia.tables)
    conditional(fresh, ["lung"], {"smoke": "yes"})
    index = network_index(fresh)
    assert index.plans and network_index(fresh) is index
    renamed = dataclasses.replace(fresh, name="renamed")
    assert renamed.tables is fresh.tables and renamed.name == "renamed"
    assert network_index(renamed) is not index and not network_index(renamed).plans
    np.testing.assert_allclose(conditional(renamed, ["lung"], {"smoke": "yes"}), [0.1, 0.9])
    alive = weakref.ref(index)
    del fresh, index
    gc.collect()
    assert alive() is None   # the weak-keyed table does not keep a dropped scenario's index


def test_elimination_order_is_a_cached_permutation() -> None:
    bn = load_network("child")
    order = elimination_order(bn)
    assert sorted(order.values()) == list(range(len(bn.nodes))) and set(order) == set(bn.nodes)
    assert elimination_order(bn) is order
    ancestors = network_index(bn).ancestors
    for v in bn.nodes:
        assert v in ancestors[v]
        assert set(bn.parents_of(v)) <= ancestors[v]
        for p in bn.parents_of(v):
            assert ancestors[p] <= ancestors[v]


# ----------------------------------------------------------------------------- properties

PROPERTY_SETTINGS = settings(max_examples=150, deadline=None,
                             suppress_health_check=[HealthCheck.too_slow])


@PROPERTY_SETTINGS
@given(st.data())
def test_conditional_equals_enumeration_on_random_networks(data: st.DataObject) -> None:
    bn = data.draw(small_networks())
    targets, evidence = data.draw(queries(bn))
    expected = brute_conditional(bn, targets, evidence)
    if np.isnan(expected).any():
        with pytest.raises(ImpossibleSecretError):
            conditional(bn, targets, evidence)
        return
    np.testing.assert_allclose(conditional(bn, targets, evidence), expected, atol=TOL, rtol=0)


@PROPERTY_SETTINGS
@given(st.data())
def test_secret_probability_equals_enumeration_on_random_networks(data: st.DataObject) -> None:
    bn = data.draw(small_networks())
    _, evidence = data.draw(queries(bn, max_evidence=4))
    assert secret_probability(bn, evidence) == pytest.approx(brute_probability(bn, evidence),
                                                             abs=1e-12)


@PROPERTY_SETTINGS
@given(st.data())
def test_random_networks_survive_the_pgmpy_round_trip(data: st.DataObject) -> None:
    """The same random tables through pgmpy and back give the same answers."""
    bn = data.draw(small_networks(max_nodes=4))
    again = pp.BayesianNetworkScenario(bn.to_pgmpy())
    targets, evidence = data.draw(queries(bn))
    try:
        expected = conditional(bn, targets, evidence)
    except ImpossibleSecretError:
        with pytest.raises(ImpossibleSecretError):
            conditional(again, targets, evidence)
        return
    np.testing.assert_allclose(conditional(again, targets, evidence), expected, atol=1e-12)


@PROPERTY_SETTINGS
@given(st.data())
def test_chain_path_equals_the_unrolled_network(data: st.DataObject) -> None:
    mc = data.draw(small_chains())
    bn = mc.to_bayesian_network()
    targets, evidence = data.draw(queries(mc))
    try:
        expected = conditional(bn, targets, evidence)
    except ImpossibleSecretError:
        with pytest.raises(ImpossibleSecretError):
            conditional(mc, targets, evidence)
        return
    np.testing.assert_allclose(conditional(mc, targets, evidence), expected, atol=TOL, rtol=0)
    assert secret_probability(mc, evidence) == pytest.approx(secret_probability(bn, evidence),
                                                             abs=1e-12)


@PROPERTY_SETTINGS
@given(st.data())
def test_chain_conditionals_equal_enumeration(data: st.DataObject) -> None:
    mc = data.draw(small_chains(max_length=5))
    bn = mc.to_bayesian_network()
    targets, evidence = data.draw(queries(mc))
    expected = brute_conditional(bn, targets, evidence)
    if np.isnan(expected).any():
        with pytest.raises(ImpossibleSecretError):
            conditional(mc, targets, evidence)
        return
    np.testing.assert_allclose(conditional(mc, targets, evidence), expected, atol=TOL, rtol=0)


@PROPERTY_SETTINGS
@given(st.data())
def test_secret_probability_with_any_initial_is_the_best_start(data: st.DataObject) -> None:
    mc = data.draw(small_chains(fixed_initial=False))
    _, evidence = data.draw(queries(mc, max_evidence=4))
    best = max(brute_probability(
        pp.MarkovChainScenario(mc.transition, np.eye(mc.k)[z], mc.length,
                               mc.states).to_bayesian_network(), evidence)
        for z in range(mc.k))
    if mc.initial_is_any:
        assert secret_probability(mc, evidence) == pytest.approx(best, abs=1e-12)
    else:
        assert secret_probability(mc, evidence) <= best + 1e-12
