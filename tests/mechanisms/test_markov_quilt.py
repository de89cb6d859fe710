"""The Markov Quilt Mechanism: realised ε by brute force, plans, fallbacks and bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import random_network, realised_epsilon

from pufferfish_pgm.errors import (
    ImpossibleSecretError,
    InvalidParameterError,
    ParameterTypeError,
    PufferfishError,
    UnknownNodeError,
    UnknownStateError,
)
from pufferfish_pgm.mechanisms.markov_quilt import (
    MarkovQuiltMechanism,
    MQMApproxMechanism,
    chain_mixing,
    mqm_approx_scale,
)
from pufferfish_pgm.queries import Count, Histogram, LinearQuery
from pufferfish_pgm.scenarios import BayesianNetworkScenario, MarkovChainScenario, ScenarioClass
from pufferfish_pgm.scenarios._scenarios import default_model_path
from pufferfish_pgm.secrets import Framework, secret_pairs

TOLERANCE = 1e-9


def chain_class(rng, k, length, initial, members, zeros):
    chains = []
    for _ in range(members):
        p = rng.dirichlet(np.ones(k) * 0.5, size=k)
        if zeros:
            p[rng.random((k, k)) < 0.25] = 0.0
            p[np.arange(k), rng.integers(0, k, k)] += 0.3
            p /= p.sum(axis=1, keepdims=True)
        q0 = rng.dirichlet(np.ones(k)) if initial == "fixed" else initial
        try:
            chains.append(MarkovChainScenario(p, q0, length))
        except ValueError:
            chains.append(MarkovChainScenario(p, np.ones(k) / k, length))
    return ScenarioClass(chains)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(2, 3), length=st.integers(1, 7),
       initial=st.sampled_from(["stationary", "fixed", "any"]), members=st.integers(1, 2),
       zeros=st.booleans(), epsilon=st.sampled_from([0.3, 1.0, 2.0, 5.0]),
       query_kind=st.sampled_from(["count", "subset", "linear", "histogram"]))
@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_mqm_chain_realised_epsilon_at_most_epsilon(seed, k, length, initial, members, zeros,
                                                    epsilon, query_kind):
    rng = np.random.default_rng(seed)
    cls = chain_class(rng, k, length, initial, members, zeros)
    if length > 5 and k == 3:
        cls = ScenarioClass([m.with_length(5) for m in cls])
    query = {"count": Count(1), "subset": Count(0, nodes=sorted({0, cls[0].length - 1})),
             "linear": LinearQuery({0: 2, 1: -1}), "histogram": Histogram()}[query_kind]
    try:
        fw = Framework(cls, secret_pairs(cls, nodes=rng.permutation(cls[0].length)[:3]))
        cal = MarkovQuiltMechanism(epsilon=epsilon).calibrate(fw, query)
    except ImpossibleSecretError:
        return
    assert realised_epsilon(fw, query, cal.scale) <= epsilon + TOLERANCE


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 6), zeros=st.booleans(),
       epsilon=st.sampled_from([0.5, 1.0, 3.0]))
@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_mqm_network_realised_epsilon_at_most_epsilon(seed, n, zeros, epsilon):
    rng = np.random.default_rng(seed)
    bn = random_network(rng, n, edge_prob=0.4, concentration=0.6,
                        zero_prob=0.15 if zeros else 0.0)
    query = Count("s0", nodes=[v for v in bn.nodes if rng.random() < 0.7] or [bn.nodes[0]])
    try:
        fw = Framework(bn)
        cal = MarkovQuiltMechanism(epsilon=epsilon).calibrate(fw, query)
    except ImpossibleSecretError:
        return
    assert realised_epsilon(fw, query, cal.scale) <= epsilon + TOLERANCE


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), length=st.integers(2, 7),
       initial=st.sampled_from(["stationary", "fixed", "any"]),
       epsilon=st.sampled_from([0.5, 1.0, 3.0]))
@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_mqm_approx_realised_epsilon_at_most_epsilon(seed, length, initial, epsilon):
    rng = np.random.default_rng(seed)
    cls = chain_class(rng, 2, length, initial, 2, False)
    fw = Framework(cls)
    cal = MQMApproxMechanism(epsilon=epsilon).calibrate(fw, Count(1))
    assert realised_epsilon(fw, Count(1), cal.scale) <= epsilon + TOLERANCE
    exact = MarkovQuiltMechanism(epsilon=epsilon).calibrate(fw, Count(1))
    assert exact.scale <= cal.scale * (1 + 1e-12)  # the exact planner never needs more


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_calibration_contents_and_release():
    mc = MarkovChainScenario([[0.9, 0.1], [0.1, 0.9]], "stationary", 200)
    fw = Framework(mc)
    cal = MarkovQuiltMechanism(epsilon=1.0).calibrate(fw, Count(1))
    assert cal.mechanism == "MarkovQuilt" and cal.epsilon == 1.0
    assert len(cal.plan) == 200 and cal.scale == pytest.approx(cal.evidence.sigma_max)
    assert cal.scale == max(e.sigma for e in cal.plan)
    hist = MarkovQuiltMechanism(epsilon=1.0).calibrate(fw, Histogram())
    assert hist.scale == pytest.approx(2 * cal.scale)  # Laplace(2σ) per bar
    rel = cal.release([0, 1] * 100, rng=np.random.default_rng(0))
    assert rel.scale == cal.scale and np.isfinite(rel.value)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_no_usable_quilt_falls_back_to_trivial():
    # A periodic chain: X_i determines every other node, every quilt has influence +inf.
    mc = MarkovChainScenario([[0.0, 1.0], [1.0, 0.0]], "stationary", 6)
    cal = MarkovQuiltMechanism(epsilon=1.0).calibrate(Framework(mc), Count(1))
    assert all(e.trivial and e.quilt == () and len(e.nearby) == 6 for e in cal.plan)
    assert cal.evidence.trivial_nodes == 6 and cal.scale == 6.0
    # A tiny ε makes every finite influence too large as well.
    sticky = MarkovChainScenario([[0.99, 0.01], [0.01, 0.99]], "stationary", 5)
    cal = MarkovQuiltMechanism(epsilon=0.01).calibrate(Framework(sticky), Count(1))
    assert all(e.trivial for e in cal.plan) and cal.scale == pytest.approx(500.0)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_network_calibration_on_asia():
    asia = BayesianNetworkScenario.from_file(default_model_path("asia.bif"))
    fw = Framework(asia, secret_pairs(asia, nodes=["smoke", "lung"]))
    cal = MarkovQuiltMechanism(epsilon=2.0, max_quilt_states=64).calibrate(fw, Count("yes"))
    assert [e.node for e in cal.plan] == ["smoke", "lung"]
    assert cal.evidence.planner == "network"
    assert realised_epsilon(fw, Count("yes"), cal.scale) <= 2.0 + TOLERANCE


@pytest.mark.parametrize("bad", [0, -1.0, math.nan, math.inf, -math.inf])
def test_bad_epsilon_values(bad):
    with pytest.raises(InvalidParameterError):
        MarkovQuiltMechanism(epsilon=bad)
    with pytest.raises(InvalidParameterError):
        MQMApproxMechanism(epsilon=bad)


@pytest.mark.parametrize("bad", ["1.0", True, None, [1.0]])
def test_bad_epsilon_types(bad):
    with pytest.raises(ParameterTypeError):
        MarkovQuiltMechanism(epsilon=bad)


def test_bad_options_and_queries():
    with pytest.raises(InvalidParameterError):
        MarkovQuiltMechanism(epsilon=1.0, max_quilt_states=0)
    with pytest.raises(ParameterTypeError):
        MarkovQuiltMechanism(epsilon=1.0, extra_quilts=[[1, 2]])
    mc = MarkovChainScenario([[0.9, 0.1], [0.1, 0.9]], "stationary", 4, states=["a", "b"])
    mech = MarkovQuiltMechanism(epsilon=1.0)
    with pytest.raises(UnknownStateError):
        mech.calibrate(Framework(mc), Count("zzz"))
    with pytest.raises(ParameterTypeError):
        mech.calibrate(mc, Count("a"))
    with pytest.raises(ParameterTypeError):
        mech.calibrate(Framework(mc), "count")


def test_impossible_secret_is_refused():
    mc = MarkovChainScenario([[1.0, 0.0], [0.5, 0.5]], [1.0, 0.0], 3)
    with pytest.raises(ImpossibleSecretError, match="0=1"):
        MarkovQuiltMechanism(epsilon=1.0).calibrate(Framework(mc), Count(1))


def test_mqm_approx_scale_and_mixing():
    # Symmetric 2-state chain: π = (1/2, 1/2), eigenvalues 1 and 0.8, reversible: g = 0.2.
    mc = MarkovChainScenario([[0.9, 0.1], [0.1, 0.9]], "stationary", 50)
    pi_min, gap = chain_mixing(mc)
    assert pi_min == pytest.approx(0.5) and gap == pytest.approx(0.2)
    # No gap: nothing mixes, MQMApprox is group DP.
    assert mqm_approx_scale(pi_min=0.5, eigengap=0.0, epsilon=2.0, length=10) == 5.0
    # A one-node chain has only the trivial quilt.
    assert mqm_approx_scale(pi_min=0.5, eigengap=0.9, epsilon=1.0, length=1) == 1.0
    # Faster mixing never needs more noise.
    slow = mqm_approx_scale(pi_min=0.3, eigengap=0.2, epsilon=1.0, length=300)
    fast = mqm_approx_scale(pi_min=0.3, eigengap=0.6, epsilon=1.0, length=300)
    assert fast < slow < 300
    with pytest.raises(InvalidParameterError):
        mqm_approx_scale(pi_min=0.0, eigengap=0.5, epsilon=1.0, length=10)
    with pytest.raises(ParameterTypeError):
        mqm_approx_scale(pi_min=0.5, eigengap="0.5", epsilon=1.0, length=10)


def test_non_reversible_eigengap():
    p = np.array([[0.1, 0.8, 0.1], [0.1, 0.1, 0.8], [0.8, 0.1, 0.1]])  # a biased rotation
    pi_min, gap = chain_mixing(MarkovChainScenario(p, "stationary", 5))
    pi = np.ones(3) / 3
    reverse = (p.T * pi[None, :]) / pi[:, None]
    lam = np.sort(np.abs(np.linalg.eigvals(p @ reverse)))[-2]
    assert pi_min == pytest.approx(1 / 3) and gap == pytest.approx((1 - lam) / 2)


def test_no_noise_needed_when_query_misses_every_nearby_block():
    # Secrets only on node 0, query only on node 5 of a fast-mixing chain: the quilt {X_1}
    # leaves no query node nearby (card 0), so σ = 0 and F itself is released.
    mc = MarkovChainScenario([[0.6, 0.4], [0.4, 0.6]], "stationary", 6)
    fw = Framework(mc, secret_pairs(mc, nodes=[0]))
    cal = MarkovQuiltMechanism(epsilon=1.0).calibrate(fw, Count(1, nodes=[5]))
    assert cal.scale == 0.0 and cal.plan[0].quilt == (1,) and cal.plan[0].nearby == range(0, 1)
    assert 0 < realised_epsilon(fw, Count(1, nodes=[5]), 0.0) <= 1.0


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_network_options_reach_the_planner():
    asia = BayesianNetworkScenario.from_file(default_model_path("asia.bif"))
    fw = Framework(asia, secret_pairs(asia, nodes=["lung"]))
    with pytest.raises(UnknownNodeError):
        MarkovQuiltMechanism(epsilon=1.0, extra_quilts={"lung": [["nowhere"]]}).calibrate(
            fw, Count("yes"))
    capped = MarkovQuiltMechanism(epsilon=3.0, max_quilt_states=1).calibrate(fw, Count("yes"))
    assert capped.evidence.skipped_quilts.get("lung", 0) > 0 and capped.plan[0].quilt == ()
    cut = MarkovQuiltMechanism(epsilon=3.0, max_candidates=1).calibrate(fw, Count("yes"))
    assert cut.evidence.cut_candidates == ("lung",)


@pytest.mark.parametrize("option", ["max_quilt_states", "max_candidates", "max_window"])
@pytest.mark.parametrize(("value", "error"), [(-5, InvalidParameterError),
                                              (0, InvalidParameterError),
                                              (2.5, ParameterTypeError),
                                              (False, ParameterTypeError)])
def test_mqm_options_are_checked_and_named(option, value, error):
    with pytest.raises(error, match=option) as info:
        MarkovQuiltMechanism(epsilon=1.0, **{option: value})
    assert isinstance(info.value, PufferfishError)
    if option == "max_window":
        with pytest.raises(error, match=option):
            MQMApproxMechanism(epsilon=1.0, max_window=value)


def test_extra_quilts_must_be_a_mapping():
    with pytest.raises(ParameterTypeError, match="extra_quilts"):
        MarkovQuiltMechanism(epsilon=1.0, extra_quilts=[("a", ("b",))])


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_a_start_state_that_never_occurs_is_left_out_of_the_plan():
    # Golden value (issue 14, new-user item 3). X_0 is always 0, so only the pair of X_1 is
    # left. Its best quilt is {X_0}: nearby {X_1} (card 1), influence 0 because X_0 never
    # varies, σ = 1 / (1 - 0) = 1, where the empty quilt gives 2 / 1.
    mc = MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], [1.0, 0.0], 2)
    cal = MarkovQuiltMechanism(epsilon=1.0).calibrate(Framework(mc), Count(1))
    [entry] = list(cal.plan)
    assert (entry.node, entry.quilt, entry.influence, entry.sigma) == (1, (0,), 0.0, 1.0)
    assert cal.scale == 1.0 and "0=1" in cal.notes()[-1]
