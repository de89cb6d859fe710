"""The exact audit against brute force, dense grids and deliberately broken mechanisms."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import (
    brute_epsilon,
    brute_pmf,
    framework_epsilon,
    mqm_chain_sigma,
    random_chain,
    random_network,
)

from pufferfish_pgm.errors import (
    ImpossibleSecretError,
    InvalidParameterError,
    LimitExceededError,
    ParameterTypeError,
)
from pufferfish_pgm.privacy_loss import AuditReport, audit, audit_releases, laplace_pair_epsilon
from pufferfish_pgm.queries import Count, Histogram, LinearQuery, query_distribution
from pufferfish_pgm.scenarios import MarkovChainScenario, ScenarioClass
from pufferfish_pgm.secrets import Framework, secret_pairs


def _some_secret_impossible_everywhere(fw) -> bool:
    secrets = {s for p in fw.pairs for s in (p.first, p.second)}
    for secret in secrets:
        possible = False
        for scenario in fw.scenarios:
            possible |= bool(brute_pmf(scenario, [lambda v, s: 0], secret.evidence))
        if not possible:
            return True
    return False


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(2, 3), length=st.integers(1, 5),
       scale=st.floats(0.2, 6.0))
def test_chain_audit_matches_brute_force(seed, k, length, scale):
    rng = np.random.default_rng(seed)
    chains = [random_chain(rng, k, length, zeros=True) for _ in range(2)]
    weights = {s: int(w) for s, w in zip(range(k), rng.integers(-2, 3, k), strict=True)}
    fw = Framework(ScenarioClass(chains))
    try:
        rep = audit(fw, LinearQuery(weights), scale)
    except ImpossibleSecretError:
        # the definition leaves such a secret nothing to protect; brute force must agree
        assert _some_secret_impossible_everywhere(fw)
        return
    want = framework_epsilon(fw, [lambda v, s: weights[s]], [scale])
    assert rep.epsilon == pytest.approx(want, rel=1e-9, abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 5), scale=st.floats(0.3, 4.0))
def test_network_audit_matches_brute_force(seed, n, scale):
    rng = np.random.default_rng(seed)
    bn = random_network(rng, n)
    fw = Framework(bn)
    rep = audit(fw, Count("s0"), scale)
    want = framework_epsilon(fw, [lambda v, s: int(s == "s0")], [scale])
    assert rep.epsilon == pytest.approx(want, rel=1e-9, abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), length=st.integers(1, 4), scale=st.floats(0.5, 4.0))
def test_histogram_vector_audit_matches_brute_force(seed, length, scale):
    rng = np.random.default_rng(seed)
    mc = random_chain(rng, 3, length)
    fw = Framework(mc)
    rep = audit(fw, Histogram(), scale)
    fns = [lambda v, s, j=j: int(s == j) for j in range(3)]
    assert rep.epsilon == pytest.approx(framework_epsilon(fw, fns, [scale] * 3), rel=1e-9,
                                        abs=1e-12)
    assert len(rep.worst.output) == 3


def test_scalar_audit_agrees_with_distributions_and_a_dense_grid():
    rng = np.random.default_rng(7)
    mc = random_chain(rng, 3, 6)
    fw = Framework(mc)
    scale = 1.3
    rep = audit(fw, Count(2), scale)
    for entry in rep.pairs:
        mu_a = query_distribution(mc, Count(2), entry.pair.first.evidence)
        mu_b = query_distribution(mc, Count(2), entry.pair.second.evidence)
        eps, _ = laplace_pair_epsilon(mu_a, mu_b, scale)
        assert entry.epsilon == pytest.approx(eps, rel=1e-9, abs=1e-12)
        grid = np.union1d(np.linspace(-10, 16, 5201), mu_a.support)

        def log_density(mu, w=grid):
            terms = np.log(mu.probs)[None, :] - np.abs(w[:, None] - mu.support[None, :]) / scale
            return np.logaddexp.reduce(terms, axis=1)

        dense = np.max(np.abs(log_density(mu_a) - log_density(mu_b)))
        assert dense == pytest.approx(entry.epsilon, rel=1e-9, abs=1e-12)


def test_vector_audit_is_the_sup_over_random_outputs():
    rng = np.random.default_rng(1)
    mc = random_chain(rng, 3, 4)
    fw = Framework(mc, secret_pairs(mc, nodes=[1]))
    rep = audit(fw, Histogram(), 0.8)
    pair = rep.worst.pair
    pmfs = [brute_pmf(mc, [lambda v, s, j=j: int(s == j) for j in range(3)], s.evidence)
            for s in (pair.first, pair.second)]
    outputs = [tuple(x) for x in rng.uniform(-3, 7, size=(300, 3))]
    best_random = max(abs(np.log(_dens(pmfs[0], w)) - np.log(_dens(pmfs[1], w)))
                      for w in outputs)
    assert brute_epsilon(*pmfs, [0.8] * 3) == pytest.approx(rep.worst.epsilon, rel=1e-9)
    assert best_random <= rep.worst.epsilon + 1e-12


def _dens(pmf, w, scale=0.8):
    pts = np.array(list(pmf), dtype=float)
    m = np.array(list(pmf.values()))
    return np.sum(m * np.exp(-np.abs(np.array(w) - pts).sum(axis=1) / scale))


def test_joint_releases_match_brute_force():
    rng = np.random.default_rng(11)
    mc = random_chain(rng, 2, 4)
    fw = Framework(mc)
    rep = audit_releases(fw, [(Count(1), 1.5), (LinearQuery({0: 2, 1: -1}), 2.5)])
    fns = [lambda v, s: int(s == 1), lambda v, s: 2 if s == 0 else -1]
    assert rep.epsilon == pytest.approx(framework_epsilon(fw, fns, [1.5, 2.5]), rel=1e-9)
    assert rep.coordinates == ("count(1)", "linear(0:2, 1:-1)")
    single = audit(fw, Count(1), 1.5).epsilon
    assert single < rep.epsilon


def test_entry_dp_noise_leaks_on_a_correlated_chain():
    mc = MarkovChainScenario([[0.9, 0.1], [0.1, 0.9]], "stationary", 50)
    rep = audit(Framework(mc), Count(1), scale=1.0)     # Laplace(L/ε) with ε = 1
    assert rep.epsilon > 3.0
    assert isinstance(rep, AuditReport) and not rep.passes(1.0)
    iid = MarkovChainScenario([[0.9, 0.1], [0.9, 0.1]], "stationary", 50)
    assert audit(Framework(iid), Count(1), scale=1.0).passes(1.0)


def test_mqm_sigma_divided_by_epsilon_again_is_caught():
    eps = 2.0
    mc = MarkovChainScenario([[0.6, 0.4], [0.4, 0.6]], "stationary", 20)
    sigma = mqm_chain_sigma([mc], eps)
    fw = Framework(mc)
    assert audit(fw, Count(1), sigma).passes(eps)
    broken = audit(fw, Count(1), sigma / eps)            # the typo of 003_* Algorithm 2
    assert broken.epsilon > eps * 1.2


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_mqm_mechanism_passes_the_audit_if_available():
    mq = pytest.importorskip("pufferfish_pgm.mechanisms.markov_quilt")
    mc = MarkovChainScenario([[0.8, 0.2], [0.3, 0.7]], "stationary", 15)
    fw = Framework(mc)
    cal = mq.MarkovQuiltMechanism(epsilon=1.0).calibrate(fw, Count(1))
    assert cal.scale == pytest.approx(mqm_chain_sigma([mc], 1.0), rel=1e-9)
    assert audit(fw, Count(1), cal.scale).passes(1.0)


def test_any_start_is_audited_over_fixed_starts():
    mc = MarkovChainScenario([[0.9, 0.1], [0.3, 0.7]], "any", 6)
    rep = audit(Framework(mc, secret_pairs(mc, nodes=range(1, 6))), Count(1), 2.0)
    assert "lower bound" in rep.coverage
    assert {e.scenario for e in rep.pairs} == {"chain[start=0]", "chain[start=1]",
                                               "chain[stationary start]"}
    fixed = MarkovChainScenario(mc.transition, [1.0, 0.0], 6)
    fixed_fw = Framework(fixed, secret_pairs(fixed, nodes=range(1, 6)))
    assert audit(fixed_fw, Count(1), 2.0).epsilon <= rep.epsilon


def test_skipped_pairs_and_discrete_flag():
    mc = MarkovChainScenario([[0.5, 0.5], [0.0, 1.0]], [1.0, 0.0], 3)
    fw = Framework(mc, secret_pairs(mc, nodes=[1, 2]))
    rep = audit(fw, Count(1), 1.0, discrete=True)
    assert rep.discrete and rep.epsilon > 0
    assert rep.summary().startswith("realised ε")


def test_bad_input():
    mc = MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 3)
    fw = Framework(mc)
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(InvalidParameterError):
            audit(fw, Count(1), bad)
    with pytest.raises(ParameterTypeError):
        audit(fw, Count(1), "1")
    with pytest.raises(ParameterTypeError):
        audit(fw, Count(1), 1.0, discrete="yes")
    with pytest.raises(InvalidParameterError, match="not an integer"):
        audit(fw, LinearQuery({1: 0.5}, integer=False), 1.0)
    with pytest.raises(InvalidParameterError):
        audit_releases(fw, [])
    with pytest.raises(InvalidParameterError):
        audit_releases(fw, [(Count(1),)])
    big = Framework(MarkovChainScenario(np.full((4, 4), 0.25), "stationary", 12))
    with pytest.raises(LimitExceededError, match="max_grid"):
        audit(big, Histogram(), 1.0, max_grid=10_000)
    with pytest.raises(ParameterTypeError):
        audit(fw, object(), 1.0)


def test_any_start_vertex_audit_is_only_a_lower_bound():
    # documented limitation: a mixed start can leak more than every audited start
    p = [[0.995, 0.005], [0.818, 0.182]]
    mc = MarkovChainScenario(p, "any", 4)
    vertices = audit(Framework(mc, secret_pairs(mc, nodes=[2])), Count(1), 0.77).epsilon
    mixed = max(audit(Framework(m, secret_pairs(m, nodes=[2])), Count(1), 0.77).epsilon
                for m in (MarkovChainScenario(p, [q, 1 - q], 4)
                          for q in np.linspace(0.01, 0.99, 99)))
    assert mixed > vertices + 0.3
