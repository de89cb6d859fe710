"""Tests for Blowfish policies: policy sensitivity, the Blowfish Laplace mechanism, and the
policy graph wired through the pairs into the correlated-data mechanisms."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from pufferfish_pgm.errors import (
    InvalidParameterError,
    ParameterTypeError,
    UnknownNodeError,
    UnknownStateError,
)
from pufferfish_pgm.mechanisms.blowfish import (
    BlowfishLaplaceMechanism,
    dependence_reason,
    independent_records,
    policy_edges,
    policy_sensitivity,
)
from pufferfish_pgm.mechanisms.exact import ExactLaplaceMechanism
from pufferfish_pgm.mechanisms.wasserstein import WassersteinMechanism
from pufferfish_pgm.privacy_loss import audit
from pufferfish_pgm.queries import Count, Histogram, LinearQuery
from pufferfish_pgm.scenarios import BayesianNetworkScenario, MarkovChainScenario, ScenarioClass
from pufferfish_pgm.scenarios._network_tables import NetworkTables
from pufferfish_pgm.secrets import (
    Framework,
    JointSecret,
    SecretPair,
    complete_graph,
    distance_threshold_graph,
    partition_graph,
    secret_pairs,
)

STATES = ("healthy", "flu", "cold", "cancer")
IID = MarkovChainScenario([[0.6, 0.2, 0.15, 0.05]] * 4, "stationary", 6, states=STATES,
                          name="iid")
PARTITION = partition_graph([["healthy"], ["flu", "cold"], ["cancer"]])
STICKY = MarkovChainScenario([[0.8, 0.1, 0.1], [0.15, 0.7, 0.15], [0.1, 0.2, 0.7]],
                             "stationary", 6, name="sticky")
STICKY_B = MarkovChainScenario([[0.6, 0.3, 0.1], [0.2, 0.6, 0.2], [0.3, 0.1, 0.6]],
                               [1 / 3] * 3, 6, name="sticky b")


def network(edges: bool) -> BayesianNetworkScenario:
    """A -> B, or A and B independent (B's CPT constant along A) when ``edges`` is False."""
    cpt_b = np.array([[0.9, 0.2], [0.1, 0.8]]) if edges else np.array([[0.4, 0.4], [0.6, 0.6]])
    tables = NetworkTables(nodes=("A", "B"), states={"A": ("n", "y"), "B": ("n", "y")},
                           parents={"A": (), "B": ("A",)},
                           cpts={"A": np.array([0.3, 0.7]), "B": cpt_b})
    return BayesianNetworkScenario(tables, name="ab")

# ---------------------------------------------------------------- policy sensitivity


def test_count_sensitivity_under_a_partition() -> None:
    assert policy_sensitivity(Count("cancer"), PARTITION, IID) == 0.0   # alone in its block
    assert policy_sensitivity(Count("healthy"), PARTITION, IID) == 0.0
    assert policy_sensitivity(Count("flu"), PARTITION, IID) == 1.0
    assert policy_sensitivity(Count("cancer"), complete_graph(STATES), IID) == 1.0


def test_histogram_sensitivity_is_two_with_an_edge_and_zero_without() -> None:
    assert policy_sensitivity(Histogram(), PARTITION, IID) == 2.0
    singletons = partition_graph([[s] for s in STATES])
    assert policy_sensitivity(Histogram(), singletons, IID) == 0.0
    assert policy_sensitivity(Histogram(), None, IID) == 2.0            # None: complete graph


def test_linear_sensitivity_is_the_largest_weight_gap_along_an_edge() -> None:
    ages = MarkovChainScenario(np.full((6, 6), 1 / 6), "stationary", 3)
    weights = LinearQuery({s: 10 * s for s in range(6)})
    near = distance_threshold_graph(range(6), lambda x, y: abs(x - y), 2)
    assert policy_sensitivity(weights, near, ages) == 20.0
    assert policy_sensitivity(weights, complete_graph(range(6)), ages) == 50.0
    odd = LinearQuery({0: 5, 1: -3, 2: 4})
    assert policy_sensitivity(odd, partition_graph([[0, 2], [1, 3, 4, 5]]), ages) == 3.0


def test_per_node_policies_and_query_nodes() -> None:
    policy = {0: complete_graph(STATES), 1: PARTITION}   # other nodes: complete (missing)
    assert policy_sensitivity(Count("cancer", nodes=[1]), policy, IID) == 0.0
    assert policy_sensitivity(Count("cancer", nodes=[0, 1]), policy, IID) == 1.0
    assert policy_sensitivity(Count("cancer", nodes=[2]), policy, IID) == 1.0
    edges = policy_edges(policy, IID, 1)
    assert edges == (("flu", "cold"),)


def test_unknown_states_and_nodes_are_named() -> None:
    with pytest.raises(UnknownStateError, match="measles"):
        policy_sensitivity(Count("flu"), partition_graph([["flu", "measles"]]), IID)
    with pytest.raises(UnknownStateError, match="measles"):
        BlowfishLaplaceMechanism(epsilon=1.0,
                                 graph=partition_graph([["flu", "measles"]])).calibrate(
            Framework(IID), Count("flu"))
    with pytest.raises(UnknownNodeError):
        policy_sensitivity(Count("flu"), {99: PARTITION}, IID)
    with pytest.raises(ParameterTypeError):
        policy_sensitivity(Count("flu"), [("flu", "cold")], IID)
    with pytest.raises(ParameterTypeError):
        BlowfishLaplaceMechanism(epsilon=1.0, graph={0: "flu-cold"})

# ---------------------------------------------------------------- independence check


def test_independence_check() -> None:
    assert independent_records(IID) and independent_records(network(edges=False))
    assert not independent_records(STICKY)
    assert "rank 1" in dependence_reason(ScenarioClass([STICKY, STICKY_B]))
    assert "depends on its parents" in dependence_reason(network(edges=True))
    assert independent_records(STICKY.with_length(1))

# ---------------------------------------------------------------- the mechanism


def policy_framework(scenarios, policy=PARTITION) -> Framework:
    return Framework(scenarios, secret_pairs(scenarios, graph=policy))


@pytest.mark.parametrize("bad, error", [("1", ParameterTypeError), (True, ParameterTypeError),
                                        (0, InvalidParameterError), (-1.0, InvalidParameterError),
                                        (float("inf"), InvalidParameterError),
                                        (float("nan"), InvalidParameterError)])
def test_epsilon_is_validated(bad, error) -> None:
    with pytest.raises(error):
        BlowfishLaplaceMechanism(epsilon=bad, graph=PARTITION)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_calibration_scale_evidence_and_audit() -> None:
    fw = policy_framework(IID)
    for query, eps, delta in [(Count("flu"), 0.5, 1.0), (Histogram(), 2.0, 2.0),
                              (LinearQuery({"flu": 3, "cold": -2, "cancer": 7}), 1.0, 5.0)]:
        cal = BlowfishLaplaceMechanism(epsilon=eps, graph=PARTITION).calibrate(fw, query)
        assert cal.scale == delta / eps and cal.evidence.sensitivity == delta
        assert cal.evidence.edges == (("flu", "cold"),)
        assert cal.mechanism == "BlowfishLaplace" and cal.epsilon == eps
        realised = audit(fw, query, cal.scale).epsilon
        assert realised == pytest.approx(eps, rel=1e-9)          # tight: records independent


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_complete_policy_is_bounded_dp_and_audits() -> None:
    fw = Framework(IID)
    cal = BlowfishLaplaceMechanism(epsilon=0.7).calibrate(fw, LinearQuery({"flu": 3, "cancer": -1}))
    assert cal.scale == pytest.approx(4 / 0.7)
    assert audit(fw, cal.query, cal.scale).epsilon <= 0.7 * (1 + 1e-9)
    independent_bn = network(edges=False)
    cal = BlowfishLaplaceMechanism(epsilon=1.0).calibrate(Framework(independent_bn), Count("y"))
    assert cal.scale == 1.0
    assert audit(Framework(independent_bn), Count("y"), 1.0).epsilon <= 1.0 + 1e-9


def test_zero_sensitivity_releases_the_exact_answer() -> None:
    fw = policy_framework(IID)
    cal = BlowfishLaplaceMechanism(epsilon=1.0, graph=PARTITION).calibrate(fw, Count("cancer"))
    assert cal.scale == 0.0
    data = ["cancer", "flu", "cancer", "healthy", "cold", "cancer"]
    assert cal.release(data).value == 3
    noisy = BlowfishLaplaceMechanism(epsilon=1.0, graph=PARTITION).calibrate(fw, Count("flu"))
    out = noisy.release([data, data], rng=np.random.default_rng(3))
    assert out.value.shape == (2,) and out.scale == 1.0
    assert isinstance(noisy.release(data, rng=np.random.default_rng(3), per_user=False).value,
                      int)


def test_correlated_scenarios_are_refused_with_advice() -> None:
    for scen in (STICKY, network(edges=True)):
        states = scen.states_of(scen.nodes[0])
        policy = partition_graph([states[:2], states[2:]])
        with pytest.raises(InvalidParameterError, match="MarkovQuiltMechanism") as err:
            BlowfishLaplaceMechanism(epsilon=1.0, graph=policy).calibrate(
                policy_framework(scen, policy), Count(states[0]))
        assert "secret_pairs" in str(err.value)


def test_framework_must_protect_only_policy_edges() -> None:
    with pytest.raises(InvalidParameterError, match="not an edge"):
        BlowfishLaplaceMechanism(epsilon=1.0, graph=PARTITION).calibrate(Framework(IID),
                                                                         Count("flu"))
    joint = SecretPair(JointSecret({0: "flu", 1: "flu"}), JointSecret({0: "cold", 1: "cold"}))
    with pytest.raises(InvalidParameterError, match="several nodes"):
        BlowfishLaplaceMechanism(epsilon=1.0, graph=PARTITION).calibrate(
            Framework(IID, [joint]), Count("flu"))
    with pytest.raises(ParameterTypeError):
        BlowfishLaplaceMechanism(epsilon=1.0, graph=PARTITION).calibrate(IID, Count("flu"))

# ---------------------------------------------------------------- wire-through: policies as pairs


POLICIES = [partition_graph([[0, 1], [2]]), distance_threshold_graph(range(3),
                                                                      lambda x, y: abs(x - y), 1)]


def correlated_frameworks(policy: nx.Graph) -> tuple[Framework, Framework]:
    cls = ScenarioClass([STICKY, STICKY_B])
    sparse = Framework(cls, secret_pairs(cls, graph=policy))
    assert len(sparse.pairs) == policy.number_of_edges() * len(cls.nodes)
    return Framework(cls), sparse


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("make", [lambda e: WassersteinMechanism(epsilon=e),
                                  lambda e: ExactLaplaceMechanism(epsilon=e)])
@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_sparser_policy_needs_no_more_noise(policy, make) -> None:
    full, sparse = correlated_frameworks(policy)
    for query in (Count(1), Count(2, nodes=[1, 2, 3])):
        cal_full = make(1.0).calibrate(full, query)
        cal_sparse = make(1.0).calibrate(sparse, query)
        assert cal_sparse.scale <= cal_full.scale * (1 + 1e-9)
        assert audit(sparse, query, cal_sparse.scale).epsilon <= 1.0 * (1 + 1e-9)
        assert audit(full, query, cal_full.scale).epsilon <= 1.0 * (1 + 1e-9)
    # the sparse calibration is not private for the pairs it was not asked to protect
    strict = ExactLaplaceMechanism(epsilon=1.0).calibrate(sparse, Count(2))
    if strict.scale < ExactLaplaceMechanism(epsilon=1.0).calibrate(full, Count(2)).scale:
        assert audit(full, Count(2), strict.scale).epsilon > 1.0


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
@pytest.mark.parametrize("policy", POLICIES)
def test_sparser_policy_needs_no_more_noise_with_markov_quilts(policy) -> None:
    module = pytest.importorskip("pufferfish_pgm.mechanisms.markov_quilt")
    full, sparse = correlated_frameworks(policy)
    for query in (Count(1), Histogram()):
        cal_full = module.MarkovQuiltMechanism(epsilon=1.0).calibrate(full, query)
        cal_sparse = module.MarkovQuiltMechanism(epsilon=1.0).calibrate(sparse, query)
        assert cal_sparse.scale <= cal_full.scale * (1 + 1e-9)
        for entry_s, entry_f in zip(cal_sparse.plan, cal_full.plan, strict=True):
            assert entry_s.sigma <= entry_f.sigma * (1 + 1e-9)
        assert audit(sparse, query, cal_sparse.scale).epsilon <= 1.0 * (1 + 1e-9)
        assert audit(full, query, cal_full.scale).epsilon <= 1.0 * (1 + 1e-9)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_markov_quilts_use_only_the_policy_pairs_on_a_long_chain() -> None:
    module = pytest.importorskip("pufferfish_pgm.mechanisms.markov_quilt")
    cls = ScenarioClass([STICKY.with_length(40), STICKY_B.with_length(40)])
    policy = partition_graph([[0], [1, 2]])          # hide 1 vs 2; 0 may be told apart
    full, sparse = Framework(cls), Framework(cls, secret_pairs(cls, graph=policy))
    cal_full = module.MarkovQuiltMechanism(epsilon=1.0).calibrate(full, Count(1))
    cal_sparse = module.MarkovQuiltMechanism(epsilon=1.0).calibrate(sparse, Count(1))
    assert cal_sparse.scale < 0.7 * cal_full.scale       # 12.59 against 19.32
    assert audit(sparse, Count(1), cal_sparse.scale).epsilon <= 1.0
    assert audit(full, Count(1), cal_full.scale).epsilon <= 1.0
