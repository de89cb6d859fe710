"""The Kantorovich mechanism, plain (004_* Prop. 2) and relaxed (eq. 20)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import random_chain, random_network

from pufferfish_pgm.errors import InvalidParameterError, ParameterTypeError, PufferfishError
from pufferfish_pgm.mechanisms.exact import ExactLaplaceMechanism
from pufferfish_pgm.mechanisms.kantorovich import KantorovichMechanism
from pufferfish_pgm.mechanisms.wasserstein import WassersteinMechanism
from pufferfish_pgm.queries import Count, Histogram, LinearQuery
from pufferfish_pgm.scenarios import MarkovChainScenario, ScenarioClass
from pufferfish_pgm.secrets import Framework


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(2, 3), length=st.integers(2, 6),
       eps=st.sampled_from([0.5, 1.0, 3.0]))
@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_plain_equals_wasserstein_and_relaxed_sits_between_exact_and_plain(seed, k, length,
                                                                           eps):
    rng = np.random.default_rng(seed)
    fw = Framework(ScenarioClass([random_chain(rng, k, length) for _ in range(2)]))
    query = LinearQuery({s: int(w) for s, w in zip(range(k), rng.integers(0, 3, k),
                                                    strict=True)})
    plain = KantorovichMechanism(epsilon=eps).calibrate(fw, query)
    relaxed = KantorovichMechanism(epsilon=eps, relaxed=True).calibrate(fw, query)
    exact = ExactLaplaceMechanism(epsilon=eps).calibrate(fw, query)
    wasserstein = WassersteinMechanism(epsilon=eps).calibrate(fw, query)
    assert plain.scale == pytest.approx(wasserstein.scale)
    assert exact.scale <= relaxed.scale * (1 + 1e-9)
    assert relaxed.scale <= plain.scale * (1 + 1e-12)
    for cal in (plain, relaxed):
        if cal.scale > 0:
            assert cal.evidence.audit.passes(eps)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 5))
def test_networks_relaxed_passes(seed, n):
    fw = Framework(random_network(np.random.default_rng(seed), n))
    cal = KantorovichMechanism(epsilon=1.0, relaxed=True).calibrate(fw, Count("s1"))
    if cal.scale > 0:
        assert cal.evidence.audit.passes(1.0)
    assert cal.evidence.relaxed_theta == cal.scale


def test_ding_example_plan_support():
    iid = MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 3)
    cal = KantorovichMechanism(epsilon=1.0).calibrate(Framework(iid), Count(1))
    assert cal.scale == 1.0 and cal.evidence.distance == 1.0
    plan = cal.evidence.plan_support
    assert plan[:, 2].sum() == pytest.approx(1.0)
    assert cal.mechanism == "Kantorovich"
    assert KantorovichMechanism(epsilon=1.0, relaxed=True).name == "KantorovichRelaxed"


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_two_state_histogram():
    mc = MarkovChainScenario([[0.8, 0.2], [0.3, 0.7]], "stationary", 5)
    fw = Framework(mc)
    for relaxed in (False, True):
        count = KantorovichMechanism(epsilon=1.0, relaxed=relaxed).calibrate(fw, Count(1))
        hist = KantorovichMechanism(epsilon=1.0, relaxed=relaxed).calibrate(fw, Histogram())
        assert hist.scale == pytest.approx(2 * count.scale)
        assert hist.evidence.audit.passes(1.0)


def test_bad_input():
    with pytest.raises(ParameterTypeError):
        KantorovichMechanism(epsilon=1.0, relaxed="yes")
    with pytest.raises(InvalidParameterError):
        KantorovichMechanism(epsilon=-1.0)
    mc = MarkovChainScenario(np.full((3, 3), 1 / 3), "stationary", 3)
    with pytest.raises(InvalidParameterError, match="bars"):
        KantorovichMechanism(epsilon=1.0).calibrate(Framework(mc), Histogram())


@pytest.mark.parametrize("relaxed", [False, True])
@pytest.mark.parametrize(("value", "error"), [(-5, InvalidParameterError),
                                              (0, InvalidParameterError),
                                              (1e6, ParameterTypeError),
                                              (None, ParameterTypeError)])
def test_max_grid_is_checked_when_the_mechanism_is_made(relaxed, value, error):
    with pytest.raises(error, match="max_grid") as info:
        KantorovichMechanism(epsilon=1.0, relaxed=relaxed, max_grid=value)
    assert isinstance(info.value, PufferfishError)
