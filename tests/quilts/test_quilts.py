"""Network quilts: d-separation, partitions, candidates, and the planner against the chain one."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import random_network

from pufferfish_pgm.errors import ImpossibleSecretError, InvalidParameterError
from pufferfish_pgm.queries import Count
from pufferfish_pgm.quilts import (
    candidate_quilts,
    d_connected,
    d_separated,
    max_influence,
    plan_chain,
    plan_network,
)
from pufferfish_pgm.quilts._engine import class_dags, partition
from pufferfish_pgm.scenarios import BayesianNetworkScenario, MarkovChainScenario, ScenarioClass
from pufferfish_pgm.scenarios._scenarios import default_model_path
from pufferfish_pgm.secrets import Framework, JointSecret, SecretPair, secret_pairs


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 9))
def test_d_connected_agrees_with_networkx(seed, n):
    rng = np.random.default_rng(seed)
    dag = class_dags(random_network(rng, n, edge_prob=0.5, concentration=0.6))[0]
    nodes = list(dag.nodes)
    source = nodes[int(rng.integers(n))]
    given_ = {v for v in nodes if v != source and rng.random() < 0.3}
    reach = d_connected(dag, source, given_)
    for v in nodes:
        if v != source and v not in given_:
            assert (v not in reach) == nx.is_d_separator(dag, {source}, {v}, given_)


def test_partition_collider_and_markov_blanket():
    asia = BayesianNetworkScenario.from_file(default_model_path("asia.bif"))
    nearby, quilt, remote = partition(asia, "either", ["tub", "lung", "xray", "dysp", "bronc"])
    assert nearby == ("either",) and set(remote) == {"asia", "smoke"}
    # The empty quilt: 'smoke' and 'asia' are marginally independent of 'asia'... of each other.
    nearby, _, remote = partition(asia, "asia", [])
    assert set(remote) == {"smoke", "lung", "bronc"} and "either" in nearby
    with pytest.raises(InvalidParameterError):
        partition(asia, "asia", ["asia"])


def test_candidates_per_branch_and_extra():
    bn = MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 6).to_bayesian_network()
    quilts, cut = candidate_quilts(bn, 2, extra=[[0, 5]])
    got = {tuple(sorted(q)) for q in quilts}
    # every (left, right) pair, one-sided quilts, and the extra candidate
    assert {(1, 3), (0, 5), (1, 5), (0, 3), (1,), (4,), (0,)} <= got and not cut
    few, cut = candidate_quilts(bn, 2, max_candidates=3)
    assert cut


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(2, 3), length=st.integers(1, 8),
       members=st.integers(1, 2), epsilon=st.sampled_from([0.3, 1.0, 4.0]),
       subset=st.booleans())
def test_network_planner_equals_chain_planner(seed, k, length, members, epsilon, subset):
    rng = np.random.default_rng(seed)
    chains = []
    for _ in range(members):
        p = rng.dirichlet(np.ones(k) * 0.6, size=k)
        p[rng.random((k, k)) < 0.2] = 0.0
        p[np.arange(k), rng.integers(0, k, k)] += 0.3
        p /= p.sum(axis=1, keepdims=True)
        q0 = "stationary" if rng.random() < 0.5 else rng.dirichlet(np.ones(k))
        try:
            chains.append(MarkovChainScenario(p, q0, length))
        except ValueError:
            chains.append(MarkovChainScenario(p, np.ones(k) / k, length))
    query = Count(0, nodes=sorted({0, length - 1}) if subset else None)
    nets = ScenarioClass([c.to_bayesian_network() for c in chains])
    try:
        chain_plan = plan_chain(Framework(ScenarioClass(chains)), query, epsilon)
    except ImpossibleSecretError:  # both planners refuse the same impossible secrets
        with pytest.raises(ImpossibleSecretError):
            plan_network(Framework(nets), query, epsilon)
        return
    net_plan = plan_network(Framework(nets), query, epsilon).entries
    assert [e.node for e in net_plan] == [e.node for e in chain_plan]
    for c, b in zip(chain_plan, net_plan, strict=True):
        assert b.sigma == pytest.approx(c.sigma, rel=1e-9)
    assert max(e.sigma for e in net_plan) == pytest.approx(chain_plan.sigma_max, rel=1e-9)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 7))
def test_network_plan_entries_are_valid_quilts(seed, n):
    rng = np.random.default_rng(seed)
    bn = random_network(rng, n, edge_prob=0.4, concentration=0.6, zero_prob=0.1)
    fw = Framework(bn)
    try:
        plan = plan_network(fw, Count("s0"), 1.0)
    except ImpossibleSecretError:
        return
    dag = class_dags(bn)[0]
    for e in plan.entries:
        assert set(e.nearby) | set(e.quilt) | set(e.remote) == set(bn.nodes)
        assert len(e.nearby) + len(e.quilt) + len(e.remote) == n
        assert e.node in e.nearby
        if e.remote:
            assert d_separated(dag, {e.node}, set(e.remote), set(e.quilt))
        assert e.influence == pytest.approx(max_influence(fw, e.node, e.quilt))
        card = sum(1 for v in e.nearby)
        assert e.sigma == pytest.approx(card / (1.0 - e.influence))


def test_max_quilt_states_skips_and_reports():
    # an alternating chain: not attractive, so the influence needs the table over the quilt
    bn = MarkovChainScenario([[0.1, 0.9], [0.9, 0.1]], "stationary", 9).to_bayesian_network()
    fw = Framework(bn, secret_pairs(bn, nodes=[4]))
    full = plan_network(fw, Count(1), 5.0)   # {3, 5}: 1 / (5 - 2 log 9) < 9 / 5 (trivial)
    capped = plan_network(fw, Count(1), 5.0, max_quilt_states=1)
    assert not full.skipped and capped.skipped[4] > 0
    assert capped.entries[0].trivial and not full.entries[0].trivial


def test_joint_secrets_are_refused():
    asia = BayesianNetworkScenario.from_file(default_model_path("asia.bif"))
    pair = SecretPair(JointSecret({"asia": "yes", "smoke": "yes"}),
                      JointSecret({"asia": "no", "smoke": "yes"}))
    with pytest.raises(InvalidParameterError, match="single-node"):
        plan_network(Framework(asia, [pair]), Count("yes", nodes=["asia"]), 1.0)


def test_the_planner_checks_possibility_without_compiling_every_pair(monkeypatch):
    import pufferfish_pgm.secrets._framework as framework_module
    import pufferfish_pgm.secrets._possible as possible_module

    asia = BayesianNetworkScenario.from_file(default_model_path("asia.bif"))
    calls = []
    real = possible_module.secret_probability
    for module in (framework_module, possible_module):
        monkeypatch.setattr(module, "secret_probability",
                            lambda *args: calls.append(args) or real(*args))
    plan_network(Framework(asia), Count("yes"), 1.0)
    assert calls == []   # node secrets are read off one marginal per node
    bn = MarkovChainScenario([[1.0, 0.0], [0.5, 0.5]], [1.0, 0.0], 3).to_bayesian_network()
    with pytest.raises(ImpossibleSecretError, match="secret 0=1 has probability 0"):
        plan_network(Framework(bn), Count(1), 1.0)


def test_asia_plan():
    asia = BayesianNetworkScenario.from_file(default_model_path("asia.bif"))
    plan = plan_network(Framework(asia), Count("yes"), 1.0)
    assert len(plan.entries) == 8
    assert all(e.sigma <= 8.0 for e in plan.entries)


def test_both_planners_leave_out_a_start_state_that_never_occurs():
    # issue 14, new-user item 3: X_0 is always 0, so the pair of X_0 constrains nothing and
    # node 0 gets no plan; the chain planner (supports) and the network planner (marginals)
    # agree on that and on every other node
    mc = MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], [1.0, 0.0], 5)
    chain_plan = plan_chain(Framework(mc), Count(1), 1.0)
    net_plan = plan_network(Framework(mc.to_bayesian_network()), Count(1), 1.0).entries
    assert [e.node for e in chain_plan] == [e.node for e in net_plan] == [1, 2, 3, 4]
    for c, b in zip(chain_plan, net_plan, strict=True):
        assert b.sigma == pytest.approx(c.sigma, rel=1e-9)
