"""Secrets, discriminative pairs, Blowfish secret graphs, frameworks and the secret compiler."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest
from helpers import load_network, small_chains, small_networks
from hypothesis import given, settings
from hypothesis import strategies as st

import pufferfish_pgm as pp
from pufferfish_pgm.errors import (
    ImpossibleSecretError,
    InvalidParameterError,
    ParameterTypeError,
    UnknownNodeError,
    UnknownStateError,
)
from pufferfish_pgm.inference import secret_probability
from pufferfish_pgm.secrets import (
    CompiledPair,
    JointSecret,
    NodeSecret,
    SecretPair,
    SkippedPair,
    compile_secrets,
    complete_graph,
    distance_threshold_graph,
    partition_graph,
    possible_secrets,
)


def chain3(length: int = 4, initial="stationary", states=None) -> pp.MarkovChainScenario:
    p = [[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]]
    return pp.MarkovChainScenario(p, initial, length, states)


def as_tuples(pairs) -> list[tuple]:
    return [(p.first.node, p.first.state, p.second.state) for p in pairs]


# ----------------------------------------------------------------------------- counting pairs

def test_all_pairs_of_a_chain() -> None:
    pairs = pp.secret_pairs(chain3(length=4))
    assert len(pairs) == 4 * 3  # T nodes x C(3, 2)
    assert as_tuples(pairs[:3]) == [(0, 0, 1), (0, 0, 2), (0, 1, 2)]


@pytest.mark.parametrize("name", ["asia", "child", "alarm"])
def test_all_pairs_of_a_network(name: str) -> None:
    bn = load_network(name)
    expected = sum(math.comb(len(bn.states_of(v)), 2) for v in bn.nodes)
    pairs = pp.secret_pairs(bn)
    assert len(pairs) == expected
    assert len(set(pairs)) == expected  # no duplicates (pairs are hashable values)


def test_pairs_of_chosen_nodes_in_the_given_order(asia) -> None:
    pairs = pp.secret_pairs(asia, nodes=["smoke", "asia"])
    assert as_tuples(pairs) == [("smoke", "yes", "no"), ("asia", "yes", "no")]
    assert str(pairs[0]) == "(smoke=yes, smoke=no)"
    assert pairs[0].node == "smoke"


def test_pairs_accept_a_class() -> None:
    cls = pp.ScenarioClass([chain3(), chain3(initial="any")])
    assert len(pp.secret_pairs(cls, nodes=[2])) == 3


# ----------------------------------------------------------------------------- Blowfish graphs

def test_complete_graph_gives_all_pairs() -> None:
    mc = chain3(length=2)
    assert pp.secret_pairs(mc, graph=complete_graph(range(3))) == pp.secret_pairs(mc)


def test_partition_graph_keeps_pairs_within_blocks() -> None:
    mc = chain3(length=2, states=["flu", "cold", "healthy"])
    pairs = pp.secret_pairs(mc, graph=partition_graph([["flu", "cold"], ["healthy"]]))
    assert as_tuples(pairs) == [(0, "flu", "cold"), (1, "flu", "cold")]


def test_partition_pairs_are_ordered_as_the_model_orders_states() -> None:
    # the graph lists (cold, flu); the pair follows the model's order (flu before cold)
    mc = chain3(length=1, states=["flu", "cold", "healthy"])
    graph = nx.Graph([("cold", "flu")])
    assert as_tuples(pp.secret_pairs(mc, graph=graph)) == [(0, "flu", "cold")]


def test_distance_threshold_graph() -> None:
    mc = pp.MarkovChainScenario(np.full((5, 5), 0.2), "stationary", 3)
    graph = distance_threshold_graph(range(5), lambda x, y: abs(x - y), 2)
    pairs = pp.secret_pairs(mc, nodes=[1], graph=graph)
    assert as_tuples(pairs) == [(1, 0, 1), (1, 0, 2), (1, 1, 2), (1, 1, 3), (1, 2, 3),
                                (1, 2, 4), (1, 3, 4)]


def test_graph_per_node() -> None:
    mc = chain3(length=3)
    graphs = {0: nx.Graph([(0, 1)]), 2: nx.Graph([(1, 2)])}
    pairs = pp.secret_pairs(mc, graph=graphs)
    # node 1 is not in the dict: all its pairs
    assert as_tuples(pairs) == [(0, 0, 1), (1, 0, 1), (1, 0, 2), (1, 1, 2), (2, 1, 2)]


def test_graph_with_isolated_states_gives_no_pairs_for_them() -> None:
    graph = nx.Graph()
    graph.add_nodes_from([0, 1, 2])
    assert pp.secret_pairs(chain3(length=2), graph=graph) == ()


def test_unknown_state_in_a_graph(asia) -> None:
    with pytest.raises(UnknownStateError, match="node 'smoke' has no state 'maybe'"):
        pp.secret_pairs(asia, nodes=["smoke"], graph=nx.Graph([("yes", "maybe")]))
    with pytest.raises(UnknownStateError, match="no state 'z'"):  # isolated unknown state too
        graph = nx.Graph([("yes", "no")])
        graph.add_node("z")
        pp.secret_pairs(asia, nodes=["smoke"], graph=graph)


def test_unknown_node_in_pairs() -> None:
    with pytest.raises(UnknownNodeError, match="unknown node 9"):
        pp.secret_pairs(chain3(length=4), nodes=[9])


# ----------------------------------------------------------------------------- secrets

def test_node_secret_is_a_value() -> None:
    s = NodeSecret("smoke", "yes")
    assert s.evidence == {"smoke": "yes"} and str(s) == "smoke=yes"
    assert s == NodeSecret("smoke", "yes") and hash(s) == hash(NodeSecret("smoke", "yes"))


def test_joint_secret_normalises_its_assignment() -> None:
    a = JointSecret({"lung": "yes", "bronc": "no"})
    b = JointSecret([("bronc", "no"), ("lung", "yes")])
    assert a == b and hash(a) == hash(b)
    assert a.evidence == {"bronc": "no", "lung": "yes"}
    assert str(a) == "{bronc=no, lung=yes}"


def test_joint_secret_errors() -> None:
    with pytest.raises(InvalidParameterError, match="at least one"):
        JointSecret({})
    with pytest.raises(InvalidParameterError, match="node 'lung' more than one state"):
        JointSecret([("lung", "yes"), ("lung", "no")])


def test_joint_secret_pairs() -> None:
    first = JointSecret({"lung": "yes", "bronc": "no"})
    second = JointSecret({"lung": "no", "bronc": "no"})
    pair = SecretPair(first, second)
    assert str(pair) == "({bronc=no, lung=yes}, {bronc=no, lung=no})"
    with pytest.raises(InvalidParameterError, match="several nodes"):
        _ = pair.node
    # mixed: a node secret against a joint secret that contradicts it
    SecretPair(NodeSecret("lung", "yes"), second)


@pytest.mark.parametrize(("first", "second"), [
    (NodeSecret("lung", "yes"), NodeSecret("lung", "yes")),
    (NodeSecret("lung", "yes"), NodeSecret("smoke", "no")),
    (JointSecret({"lung": "yes", "bronc": "no"}), JointSecret({"lung": "yes", "smoke": "no"})),
    (NodeSecret("lung", "yes"), JointSecret({"lung": "yes", "smoke": "no"})),
], ids=["same", "different-nodes", "joint-compatible", "node-inside-joint"])
def test_pairs_must_be_mutually_exclusive(first, second) -> None:
    with pytest.raises(InvalidParameterError, match="not mutually exclusive"):
        SecretPair(first, second)


def test_pair_holds_secrets_only() -> None:
    with pytest.raises(ParameterTypeError, match="NodeSecret or JointSecret"):
        SecretPair(("lung", "yes"), NodeSecret("lung", "no"))


# ----------------------------------------------------------------------------- framework

def test_framework_defaults_to_all_pairs(asia) -> None:
    fw = pp.Framework(asia)
    assert len(fw.pairs) == 8 and fw.secret_nodes == asia.nodes
    assert isinstance(fw.scenarios, pp.ScenarioClass)


def test_framework_secret_nodes_and_pairs_of(asia) -> None:
    joint = SecretPair(JointSecret({"lung": "yes", "bronc": "no"}),
                       JointSecret({"lung": "no", "bronc": "no"}))
    fw = pp.Framework(asia, [*pp.secret_pairs(asia, nodes=["smoke"]), joint])
    assert set(fw.secret_nodes) == {"smoke", "lung", "bronc"}
    order = {v: i for i, v in enumerate(asia.nodes)}
    assert list(fw.secret_nodes) == sorted(fw.secret_nodes, key=order.__getitem__)
    assert fw.pairs_of("smoke") == pp.secret_pairs(asia, nodes=["smoke"])
    assert fw.pairs_of("lung") == ()  # joint pairs are not single-node pairs


def test_framework_errors(asia) -> None:
    with pytest.raises(InvalidParameterError, match="no secret pairs"):
        pp.Framework(asia, [])
    with pytest.raises(ParameterTypeError, match="SecretPair"):
        pp.Framework(asia, [("smoke", "yes", "no")])
    with pytest.raises(UnknownStateError, match="'lung' has no state 'maybe'"):
        pp.Framework(asia, [SecretPair(JointSecret({"lung": "maybe", "bronc": "no"}),
                                       JointSecret({"lung": "no", "bronc": "no"}))])


# ----------------------------------------------------------------------------- compiler

def test_compile_gives_both_probabilities() -> None:
    mc = chain3(length=3, initial=[1.0, 0.0, 0.0])
    compiled, skipped = compile_secrets(pp.Framework(mc, pp.secret_pairs(mc, nodes=[1])))
    assert skipped == ()
    assert len(compiled) == 3 and all(isinstance(c, CompiledPair) for c in compiled)
    first = compiled[0]  # (1=0, 1=1): P(X_1=0) = 0.5, P(X_1=1) = 0.25 (first row of P)
    assert first.theta == 0 and first.evidence_first == {1: 0} and first.evidence_second == {1: 1}
    assert (first.prob_first, first.prob_second) == (0.5, 0.25)


def test_compile_skips_a_theta_where_a_secret_is_impossible() -> None:
    # theta 0 starts in state 0, so X_0 = 1 and X_0 = 2 are impossible; theta 1 is stationary
    p = [[0.5, 0.25, 0.25], [0.25, 0.5, 0.25], [0.25, 0.25, 0.5]]
    start = pp.MarkovChainScenario(p, [1.0, 0.0, 0.0], 3, name="start")
    mixing = pp.MarkovChainScenario(p, "stationary", 3, name="mixing")
    fw = pp.Framework([start, mixing], pp.secret_pairs(start, nodes=[0]))
    compiled, skipped = compile_secrets(fw)
    assert sorted((c.theta, str(c.pair)) for c in compiled) == [
        (1, "(0=0, 0=1)"), (1, "(0=0, 0=2)"), (1, "(0=1, 0=2)")]  # every pair under "mixing"
    # under "start" every pair involves an impossible X_0 = 1 or 2
    assert len(skipped) == 3 and all(isinstance(s, SkippedPair) for s in skipped)
    assert {s.theta for s in skipped} == {0}
    assert skipped[0].reason == "P(0=1) = 0 under 'start'"


def test_compile_raises_for_a_secret_impossible_under_every_theta() -> None:
    p = [[1.0, 0.0], [0.5, 0.5]]  # state 1 is never entered
    a = pp.MarkovChainScenario(p, [1.0, 0.0], 3, name="a")
    b = pp.MarkovChainScenario([[0.9, 0.1], [0.5, 0.5]], [1.0, 0.0], 3, name="b")
    with pytest.raises(ImpossibleSecretError, match="secret 0=1 has probability 0 under every"):
        compile_secrets(pp.Framework([a, b], pp.secret_pairs(a, nodes=[0])))
    # X_2 = 1 is possible under b only: compiled for b, skipped for a
    compiled, skipped = compile_secrets(pp.Framework([a, b], pp.secret_pairs(a, nodes=[2])))
    assert [c.theta for c in compiled] == [1] and [s.theta for s in skipped] == [0]


def test_compile_on_a_network_uses_exact_probabilities(asia) -> None:
    compiled, skipped = compile_secrets(pp.Framework(asia))
    assert skipped == () and len(compiled) == 8
    for c in compiled:
        assert c.prob_first + c.prob_second == pytest.approx(1.0)  # binary nodes
    by_node = {c.pair.node: c for c in compiled}
    assert by_node["asia"].prob_first == pytest.approx(0.01)
    assert by_node["smoke"].prob_first == pytest.approx(0.5)


def test_compile_joint_secrets(asia) -> None:
    pair = SecretPair(JointSecret({"lung": "yes", "smoke": "yes"}),
                      JointSecret({"lung": "no", "smoke": "yes"}))
    (compiled,), _ = compile_secrets(pp.Framework(asia, [pair]))
    # P(lung=yes, smoke=yes) = 0.5 * 0.1; P(lung=no, smoke=yes) = 0.5 * 0.9
    assert compiled.prob_first == pytest.approx(0.05)
    assert compiled.prob_second == pytest.approx(0.45)


def test_compile_with_initial_any_takes_the_best_start() -> None:
    mc = pp.MarkovChainScenario([[1.0, 0.0], [0.5, 0.5]], "any", 3)
    (compiled,), _ = compile_secrets(pp.Framework(mc, pp.secret_pairs(mc, nodes=[2])))
    # X_2 = 1 is possible only from X_0 = 1: P = 0.25 (largest over the initial states)
    assert compiled.prob_second == 0.25
    assert compiled.prob_first == 1.0
    assert secret_probability(mc, {2: 1}) == 0.25


def _possible_by_compiling(fw: pp.Framework) -> set:
    return {s for p in fw.pairs for s in (p.first, p.second)
            if any(secret_probability(m, s.evidence) > 0 for m in fw.scenarios)}


def test_possible_secrets_without_compiling() -> None:
    a = pp.MarkovChainScenario([[1.0, 0.0], [0.5, 0.5]], [1.0, 0.0], 3, name="a")
    b = pp.MarkovChainScenario([[0.9, 0.1], [0.5, 0.5]], [1.0, 0.0], 3, name="b")
    fw = pp.Framework([a, b], list(pp.secret_pairs(a)))   # a list: kept as given
    # X_0 = 1 is impossible under both; X_2 = 1 only under b
    assert sorted(map(str, possible_secrets(fw))) == ["0=0", "1=0", "1=1", "2=0", "2=1"]
    assert possible_secrets(fw) == _possible_by_compiling(fw)
    # the default pairs leave X_0 = 1 out (and so the pair of X_0): every secret is possible
    default = pp.Framework([a, b])
    assert sorted(map(str, possible_secrets(default))) == ["1=0", "1=1", "2=0", "2=1"]
    joint = SecretPair(JointSecret({0: 0, 2: 1}), JointSecret({0: 1, 2: 1}))
    assert possible_secrets(pp.Framework([a, b], [joint])) == {joint.first}
    anywhere = pp.MarkovChainScenario([[1.0, 0.0], [0.5, 0.5]], "any", 3)
    assert len(possible_secrets(pp.Framework(anywhere))) == 6   # every state from some start


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_possible_secrets_agree_with_the_secret_probabilities(data: st.DataObject) -> None:
    scenario = data.draw(st.one_of(small_networks(max_nodes=4),
                                   small_chains(max_length=4, fixed_initial=False)))
    try:
        fw = pp.Framework(scenario)
    except InvalidParameterError:   # a single state everywhere: no pairs
        return
    assert possible_secrets(fw) == _possible_by_compiling(fw)


def test_all_pairs_framework_is_lazy_and_its_codes_match_the_pair_objects() -> None:
    import numpy as np

    from pufferfish_pgm import BayesianNetworkScenario, Framework, MarkovChainScenario
    from pufferfish_pgm.scenarios._scenarios import default_model_path

    mc = MarkovChainScenario(np.full((3, 3), 1 / 3), "stationary", 5)
    asia = BayesianNetworkScenario.from_file(default_model_path("asia.bif"))
    for scenario, count in ((mc, 5 * 3), (asia, 8)):  # 3 pairs per chain step, 1 per asia node
        fw = Framework(scenario)
        assert fw.pair_count == count and fw._index.pairs is None  # nothing built yet
        nodes, first, second = fw.node_pair_codes()
        want = [(p.first.node, scenario.state_index(p.first.node, p.first.state),
                 scenario.state_index(p.first.node, p.second.state)) for p in fw.pairs]
        assert list(zip(list(nodes), first.tolist(), second.tolist(), strict=True)) == want
        assert fw.secret_nodes == tuple(scenario.nodes)
        assert fw.pairs_of(scenario.nodes[1]) == tuple(
            p for p in fw.pairs if p.first.node == scenario.nodes[1])


def test_framework_with_a_joint_pair_has_no_node_codes() -> None:
    from pufferfish_pgm import Framework, JointSecret, MarkovChainScenario, SecretPair

    mc = MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 3)
    pair = SecretPair(JointSecret({0: 0, 1: 0}), JointSecret({0: 1, 1: 0}))
    assert Framework(mc, [pair]).node_pair_codes() is None


# --- issue 14, new-user item 3: secrets impossible under every θ --------------------------

# Every fitted day starts asleep: the empirical start is (1, 0), so P(X_0 = awake) = 0 under
# the only θ. From asleep the days go 3 times to asleep and 3 times to awake, from awake once
# to each: P = [[1/2, 1/2], [1/2, 1/2]].
DAYS = [["asleep", "asleep", "awake"], ["asleep", "awake", "asleep"],
        ["asleep", "awake", "awake"], ["asleep", "asleep", "asleep"]]


def test_the_default_framework_skips_secrets_impossible_under_every_theta() -> None:
    mc = pp.MarkovChainScenario.fit(DAYS)
    assert mc.initial.tolist() == [1.0, 0.0] and mc.transition.tolist() == [[0.5, 0.5]] * 2
    fw = pp.Framework(mc)
    assert fw.pairs_of(0) == () and [str(p) for p in fw.pairs_of(1)] == ["(1=asleep, 1=awake)"]
    # 3 nodes with one pair each, less the pair of X_0 (its secret X_0 = awake cannot be true)
    assert fw.skipped_secrets == ((0, "awake"),)
    assert fw.pair_count == 2 and fw.secret_nodes == (1, 2)
    nodes, first, second = fw.node_pair_codes()
    assert (list(nodes), first.tolist(), second.tolist()) == ([1, 2], [0, 0], [1, 1])
    assert [str(p) for p in fw.pairs] == ["(1=asleep, 1=awake)", "(2=asleep, 2=awake)"]
    compiled, skipped = compile_secrets(fw)   # raised ImpossibleSecretError before the fix
    assert [c.prob_second for c in compiled] == [0.5, 0.5] and skipped == ()


def test_pairs_named_one_by_one_keep_an_impossible_secret_and_are_refused() -> None:
    mc = pp.MarkovChainScenario.fit(DAYS)
    fw = pp.Framework(mc, [SecretPair(NodeSecret(0, "asleep"), NodeSecret(0, "awake"))])
    assert fw.skipped_secrets == () and fw.pair_count == 1
    with pytest.raises(ImpossibleSecretError, match="secret 0=awake has probability 0"):
        compile_secrets(fw)
    with pytest.raises(ImpossibleSecretError, match="0=awake"):
        pp.MarkovQuiltMechanism(epsilon=1.0).calibrate(fw, pp.Count("awake"))
    # a policy graph names its pairs too
    policy = pp.secret_pairs(mc, nodes=[0, 1], graph=complete_graph(mc.states))
    with pytest.raises(ImpossibleSecretError, match="0=awake"):
        compile_secrets(pp.Framework(mc, policy))


def test_pairs_built_by_secret_pairs_skip_like_the_default() -> None:
    # the Python form of the CLI's --nodes: the nodes are named, the pairs built for them
    mc = pp.MarkovChainScenario.fit(DAYS)
    built = pp.secret_pairs(mc, nodes=[0, 2])
    assert isinstance(built, pp.secrets.GeneratedPairs)
    fw = pp.Framework(mc, built)
    assert fw.skipped_secrets == ((0, "awake"),) and fw.secret_nodes == (2,)
    assert [str(p) for p in fw.pairs] == ["(2=asleep, 2=awake)"]
    # written out as a list, the same pairs are explicit: kept as given
    assert pp.Framework(mc, list(built)).pair_count == 2


def test_when_every_pair_has_an_impossible_secret_the_framework_is_refused() -> None:
    # X_t = 1 can never happen: nothing could be protected, so the pairs are kept and any use
    # of them raises as it always did
    absorbed = pp.MarkovChainScenario([[1.0, 0.0], [0.5, 0.5]], [1.0, 0.0], 3)
    fw = pp.Framework(absorbed)
    assert fw.skipped_secrets == () and fw.pair_count == 3
    with pytest.raises(ImpossibleSecretError, match="secret 0=1 has probability 0"):
        compile_secrets(fw)
    with pytest.raises(ImpossibleSecretError, match="secret 0=1 has probability 0"):
        pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(fw, pp.Count(1))


def test_a_class_skips_only_the_secrets_no_member_makes_possible() -> None:
    # X_0 = awake is possible under "owl" only and X_0 = asleep under "lark" only: each secret
    # of the pair of X_0 is possible somewhere, so the pair stays, and is compiled under no θ
    # (the definition constrains it only where both secrets are possible)
    p = [[0.5, 0.5], [0.5, 0.5]]
    lark = pp.MarkovChainScenario(p, [1.0, 0.0], 2, ("asleep", "awake"), name="lark")
    owl = pp.MarkovChainScenario(p, [0.0, 1.0], 2, ("asleep", "awake"), name="owl")
    fw = pp.Framework([lark, owl])
    assert fw.skipped_secrets == () and fw.pair_count == 2
    compiled, skipped = compile_secrets(fw)
    assert sorted((str(c.pair), c.theta) for c in compiled) == [
        ("(1=asleep, 1=awake)", 0), ("(1=asleep, 1=awake)", 1)]
    assert sorted((str(s.pair), s.theta) for s in skipped) == [
        ("(0=asleep, 0=awake)", 0), ("(0=asleep, 0=awake)", 1)]
    assert pp.audit(fw, pp.Count("awake"), 2.0).epsilon <= 0.5 + 1e-12


def _brute_possible(scenarios, node, state) -> bool:
    from oracle import brute_probability, scenario_variants

    return any(brute_probability(v, {node: state}) > 0
               for m in scenarios for v in scenario_variants(m))


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_skipped_secrets_are_exactly_those_impossible_under_every_theta(
        data: st.DataObject) -> None:
    first = data.draw(st.one_of(small_networks(max_nodes=4),
                                small_chains(max_length=4, fixed_initial=False)))
    members = [first]
    if isinstance(first, pp.MarkovChainScenario) and data.draw(st.booleans()):
        from helpers import distributions

        k = first.k
        rows = np.array([data.draw(distributions(k)) for _ in range(k)])
        members.append(pp.MarkovChainScenario(rows, data.draw(distributions(k)), first.length,
                                              first.states, name="second"))
    try:
        fw = pp.Framework(pp.ScenarioClass(members))
    except InvalidParameterError:   # every node has a single state: no pair at all
        return
    cls = fw.scenarios
    possible = {v: [s for s in cls.states_of(v) if _brute_possible(cls, v, s)]
                for v in cls.nodes}
    impossible = tuple((v, s) for v in cls.nodes for s in cls.states_of(v)
                       if s not in possible[v])
    if any(len(states) > 1 for states in possible.values()):
        assert fw.skipped_secrets == impossible
        assert {(p.first.node, p.first.state, p.second.state) for p in fw.pairs} == {
            (v, a, b) for v, states in possible.items()
            for i, a in enumerate(states) for b in states[i + 1:]}
        assert fw.pair_count == len(fw.pairs)
    else:   # no pair would be left: every pair is kept (and refused when used)
        assert fw.skipped_secrets == ()
        assert fw.pair_count == sum(math.comb(len(cls.states_of(v)), 2) for v in cls.nodes)
