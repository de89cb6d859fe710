"""Exact Laplace calibration: passes its own audit, is minimal, never above Wasserstein."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import random_chain, random_network

from pufferfish_pgm.errors import InvalidParameterError, ParameterTypeError, PufferfishError
from pufferfish_pgm.mechanisms.exact import ExactLaplaceMechanism
from pufferfish_pgm.mechanisms.wasserstein import WassersteinMechanism
from pufferfish_pgm.privacy_loss import audit, exact_laplace_scale
from pufferfish_pgm.queries import Count, Histogram, LinearQuery, query_distribution
from pufferfish_pgm.scenarios import MarkovChainScenario, ScenarioClass
from pufferfish_pgm.secrets import Framework, secret_pairs


def _check(fw, query, eps):
    cal = ExactLaplaceMechanism(epsilon=eps).calibrate(fw, query)
    rep = cal.evidence.audit
    assert rep.passes(eps)
    assert audit(fw, query, cal.scale).passes(eps)                  # an independent audit
    assert audit(fw, query, cal.scale * (1 - 1e-6)).epsilon > eps   # and it is minimal
    return cal


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(2, 3), length=st.integers(2, 7),
       eps=st.sampled_from([0.3, 1.0, 2.5]))
@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_chains_pass_own_audit_and_stay_below_wasserstein(seed, k, length, eps):
    rng = np.random.default_rng(seed)
    fw = Framework(ScenarioClass([random_chain(rng, k, length) for _ in range(2)]))
    query = LinearQuery({s: int(w) for s, w in zip(range(k), rng.integers(0, 3, k),
                                                    strict=True)})
    cal = ExactLaplaceMechanism(epsilon=eps).calibrate(fw, query)
    if cal.scale == 0.0:
        return
    assert cal.evidence.audit.passes(eps)
    assert audit(fw, query, cal.scale * (1 - 1e-6)).epsilon > eps
    assert cal.scale <= WassersteinMechanism(epsilon=eps).calibrate(fw, query).scale


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 5))
def test_networks_pass_own_audit(seed, n):
    rng = np.random.default_rng(seed)
    fw = Framework(random_network(rng, n))
    cal = _check(fw, Count("s1"), 1.0)
    assert cal.scale <= WassersteinMechanism(epsilon=1.0).calibrate(fw, Count("s1")).scale


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_agrees_with_distributions_exact_laplace_scale():
    mc = MarkovChainScenario([[0.8, 0.2], [0.3, 0.7]], "stationary", 8)
    fw = Framework(mc)
    pairs = [(query_distribution(mc, Count(1), p.first.evidence),
              query_distribution(mc, Count(1), p.second.evidence)) for p in fw.pairs]
    want = exact_laplace_scale(pairs, 0.7)
    cal = ExactLaplaceMechanism(epsilon=0.7).calibrate(fw, Count(1))
    assert cal.scale == pytest.approx(want, rel=1e-8)


def test_histogram_is_calibrated_on_the_joint_vector():
    mc = MarkovChainScenario([[0.7, 0.2, 0.1], [0.2, 0.6, 0.2], [0.1, 0.3, 0.6]],
                             "stationary", 4)
    fw = Framework(mc)
    cal = _check(fw, Histogram(), 1.0)
    assert cal.evidence.wasserstein_scale is None
    assert len(cal.evidence.audit.scales) == 3


def test_no_noise_needed_when_the_query_ignores_the_secret():
    iid = MarkovChainScenario([[0.3, 0.7], [0.3, 0.7]], "stationary", 4)
    fw = Framework(iid, secret_pairs(iid, nodes=[0]))
    cal = ExactLaplaceMechanism(epsilon=1.0).calibrate(fw, Count(1, nodes=[2, 3]))
    assert cal.scale == 0.0 and cal.evidence.audit is None


def test_independent_records_need_exactly_sensitivity_over_epsilon_or_less():
    iid = MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 10)
    cal = ExactLaplaceMechanism(epsilon=1.0).calibrate(Framework(iid), Count(1))
    assert cal.scale <= 1.0 + 1e-9
    assert cal.evidence.wasserstein_scale == 1.0


def test_any_start_is_refused_by_distribution_mechanisms_but_audited_as_a_lower_bound():
    # A mixed start can leak more than every point-mass start (the mixture weights depend on
    # the secret), so calibrating on the fixed starts would under-protect: refuse it.
    from pufferfish_pgm import KantorovichMechanism, WassersteinMechanism, audit

    mc = MarkovChainScenario([[0.9, 0.1], [0.3, 0.7]], "any", 5)
    fw = Framework(mc, secret_pairs(mc, nodes=[2, 3]))
    for mech in (ExactLaplaceMechanism(epsilon=1.0), WassersteinMechanism(epsilon=1.0),
                 KantorovichMechanism(epsilon=1.0),
                 KantorovichMechanism(epsilon=1.0, relaxed=True)):
        with pytest.raises(InvalidParameterError, match="initial='any'"):
            mech.calibrate(fw, Count(1))
    assert "lower bound" in audit(fw, Count(1), 3.0).coverage


def test_bad_parameters():
    for bad in (0, -1.0, float("inf")):
        with pytest.raises(InvalidParameterError):
            ExactLaplaceMechanism(epsilon=bad)
    with pytest.raises(ParameterTypeError):
        ExactLaplaceMechanism(epsilon="1")
    with pytest.raises(InvalidParameterError):
        ExactLaplaceMechanism(epsilon=1.0, rtol=2.0)


def test_long_chain_with_every_secret():
    rng = np.random.default_rng(5)
    chains = [MarkovChainScenario(rng.dirichlet(np.ones(3), size=3), "stationary", 300)
              for _ in range(2)]
    fw = Framework(ScenarioClass(chains))
    cal = ExactLaplaceMechanism(epsilon=1.0).calibrate(fw, Count(1))
    assert cal.evidence.audit.passes(1.0)
    assert cal.scale <= cal.evidence.wasserstein_scale


@pytest.mark.parametrize(("option", "value", "error"), [
    ("max_grid", -5, InvalidParameterError),
    ("max_grid", 0, InvalidParameterError),
    ("max_grid", 10.0, ParameterTypeError),
    ("rtol", 0.0, InvalidParameterError),
    ("rtol", -1e-9, InvalidParameterError),
    ("rtol", 1.0, InvalidParameterError),
    ("rtol", float("nan"), InvalidParameterError),
    ("rtol", "1e-9", ParameterTypeError),
])
def test_options_are_checked_when_the_mechanism_is_made(option, value, error):
    with pytest.raises(error, match=option) as info:
        ExactLaplaceMechanism(epsilon=1.0, **{option: value})
    assert isinstance(info.value, PufferfishError)


@pytest.mark.parametrize("eps", [3000.0, 1e6])
def test_huge_targets_find_the_smallest_scale_below_the_old_floor(eps):
    # differing supports (count 0 is impossible given X_0 = 1): the loss is about gap/λ, so
    # λ* ≈ 1/ε. The search used to stop at the floor gap/(R + 800), which passes once
    # ε > R + 800, returning up to twice λ* (found by review); the floor now includes ε
    rng = np.random.default_rng(2)
    fw = Framework(MarkovChainScenario(rng.dirichlet(np.ones(3), size=3), [0.2, 0.3, 0.5],
                                       30))
    cal = ExactLaplaceMechanism(epsilon=eps, streaming=False).calibrate(fw, Count(1))
    assert cal.evidence.audit.passes(eps)
    assert audit(fw, Count(1), cal.scale * (1 - 1e-6)).epsilon > eps      # minimal
