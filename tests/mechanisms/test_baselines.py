"""Group DP and entry DP baselines: formulas, brute-force privacy, and entry DP's failure."""

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
    UnknownStateError,
)
from pufferfish_pgm.mechanisms.baselines import EntryDPMechanism, GroupDPMechanism
from pufferfish_pgm.mechanisms.markov_quilt import MarkovQuiltMechanism
from pufferfish_pgm.queries import Count, Histogram, LinearQuery
from pufferfish_pgm.scenarios import MarkovChainScenario
from pufferfish_pgm.secrets import Framework

STICKY = MarkovChainScenario([[0.9, 0.1], [0.1, 0.9]], "stationary", 6)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_scales():
    fw = Framework(STICKY)
    assert GroupDPMechanism(epsilon=2.0).calibrate(fw, Count(1)).scale == 3.0      # 1·6/2
    assert GroupDPMechanism(epsilon=2.0).calibrate(fw, Histogram()).scale == 6.0   # 2·6/2
    assert GroupDPMechanism(epsilon=1.0).calibrate(
        fw, LinearQuery({0: 3, 1: -1}, nodes=[0, 1])).scale == 8.0                # 4·2/1
    assert EntryDPMechanism(epsilon=0.5).calibrate(fw, Count(1)).scale == 2.0
    assert EntryDPMechanism(epsilon=0.5).calibrate(fw, Histogram()).scale == 4.0
    # Group DP over every node is MQM's trivial quilt.
    trivial = MarkovQuiltMechanism(epsilon=1.0).calibrate(
        Framework(MarkovChainScenario([[0, 1], [1, 0]], "stationary", 6)), Count(1))
    assert trivial.scale == GroupDPMechanism(epsilon=1.0).calibrate(fw, Count(1)).scale


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), length=st.integers(1, 6),
       epsilon=st.sampled_from([0.3, 1.0, 3.0]), network=st.booleans())
@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_group_dp_is_private(seed, length, epsilon, network):
    rng = np.random.default_rng(seed)
    if network:
        scen = random_network(rng, length, edge_prob=0.4, concentration=0.6, zero_prob=0.1)
        query = Count("s0")
    else:
        scen = MarkovChainScenario(rng.dirichlet(np.ones(3) * 0.3, size=3), "any", length)
        query = Histogram()
    try:
        fw = Framework(scen)
        cal = GroupDPMechanism(epsilon=epsilon).calibrate(fw, query)
        assert realised_epsilon(fw, query, cal.scale) <= epsilon + 1e-9
    except ImpossibleSecretError:
        pass


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0])
def test_entry_dp_leaks_under_correlation(epsilon):
    fw = Framework(STICKY)
    cal = EntryDPMechanism(epsilon=epsilon).calibrate(fw, Count(1))
    leak = realised_epsilon(fw, Count(1), cal.scale)
    assert leak > 1.5 * epsilon
    try:
        from pufferfish_pgm.privacy_loss import audit
    except ImportError:  # the auditor is optional here
        return
    assert audit(fw, Count(1), cal.scale).epsilon == pytest.approx(leak, rel=1e-9)


def test_entry_dp_is_fine_without_correlation():
    independent = MarkovChainScenario([[0.3, 0.7], [0.3, 0.7]], "stationary", 5)
    fw = Framework(independent)
    cal = EntryDPMechanism(epsilon=1.0).calibrate(fw, Count(1))
    assert realised_epsilon(fw, Count(1), cal.scale) <= 1.0 + 1e-9


def test_bad_input():
    for bad in (0, -2, math.nan, math.inf):
        with pytest.raises(InvalidParameterError):
            GroupDPMechanism(epsilon=bad)
        with pytest.raises(InvalidParameterError):
            EntryDPMechanism(epsilon=bad)
    for bad in ("1", False, None):
        with pytest.raises(ParameterTypeError):
            GroupDPMechanism(epsilon=bad)
    with pytest.raises(UnknownStateError):
        GroupDPMechanism(epsilon=1.0).calibrate(Framework(STICKY), Count("walk"))
    with pytest.raises(ParameterTypeError):
        EntryDPMechanism(epsilon=1.0).calibrate(STICKY, Count(1))
