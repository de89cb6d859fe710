"""The Wasserstein mechanism: W∞ against brute force, and its releases pass the audit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import brute_pmf, random_chain

from pufferfish_pgm.errors import InvalidParameterError, ParameterTypeError, PufferfishError
from pufferfish_pgm.mechanisms.wasserstein import WassersteinMechanism
from pufferfish_pgm.queries import Count, Histogram
from pufferfish_pgm.scenarios import MarkovChainScenario, ScenarioClass
from pufferfish_pgm.secrets import Framework


def _brute_w_inf(pmf_a: dict, pmf_b: dict) -> float:
    """Largest gap between the quantile functions, on a fine grid of levels."""
    def quantiles(pmf, u):
        xs = np.array(sorted(k[0] for k in pmf), dtype=float)
        cdf = np.cumsum([pmf[(x,)] for x in xs.astype(int)])
        return xs[np.minimum(np.searchsorted(cdf, u - 1e-12), xs.size - 1)]

    levels = np.unique(np.concatenate([np.cumsum([v for _, v in sorted(p.items())])
                                       for p in (pmf_a, pmf_b)]))
    mids = np.concatenate(([0.0], levels))
    mids = 0.5 * (mids[:-1] + mids[1:])
    mids = mids[np.diff(np.concatenate(([0.0], levels))) > 1e-12]
    return float(np.max(np.abs(quantiles(pmf_a, mids) - quantiles(pmf_b, mids))))


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6), length=st.integers(2, 6))
def test_distance_matches_brute_force_and_release_passes(seed, length):
    rng = np.random.default_rng(seed)
    chains = [random_chain(rng, 2, length) for _ in range(2)]
    fw = Framework(ScenarioClass(chains))
    cal = WassersteinMechanism(epsilon=1.0).calibrate(fw, Count(1))
    want = max(_brute_w_inf(*(brute_pmf(mc, [lambda v, s: int(s == 1)], sec.evidence)
                              for sec in (p.first, p.second)))
               for mc in chains for p in fw.pairs)
    assert cal.evidence.distance == pytest.approx(want)
    assert cal.scale == pytest.approx(want)
    assert cal.evidence.audit.passes(1.0)


# Networks (and chains, classes, histograms): the realised ε of the calibrated scale is
# checked by brute force in the seeded campaign of tests/mechanisms/test_privacy_regression.py.


def test_independent_records_shift_by_one():
    iid = MarkovChainScenario([[0.4, 0.6], [0.4, 0.6]], "stationary", 6)
    cal = WassersteinMechanism(epsilon=2.0).calibrate(Framework(iid), Count(1))
    assert cal.scale == 0.5 and cal.evidence.distance == 1.0
    assert cal.evidence.worst.theta == 0
    plan = cal.evidence.plan_support
    assert np.all(np.abs(plan[:, 0] - plan[:, 1]) <= 1.0)
    assert len(cal.evidence.distances) == len(Framework(iid).pairs)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_two_state_histogram_doubles_the_distance():
    mc = MarkovChainScenario([[0.8, 0.2], [0.3, 0.7]], "stationary", 5)
    fw = Framework(mc)
    count = WassersteinMechanism(epsilon=1.0).calibrate(fw, Count(1))
    hist = WassersteinMechanism(epsilon=1.0).calibrate(fw, Histogram())
    assert hist.scale == pytest.approx(2 * count.scale)
    assert hist.evidence.audit.passes(1.0)
    assert len(hist.evidence.audit.scales) == 2


def test_larger_histograms_are_refused():
    mc = MarkovChainScenario(np.full((3, 3), 1 / 3), "stationary", 3)
    with pytest.raises(InvalidParameterError, match="ExactLaplaceMechanism"):
        WassersteinMechanism(epsilon=1.0).calibrate(Framework(mc), Histogram())


def test_exact_w_infinity_matches_distributions_and_sees_slivers():
    from pufferfish_pgm.distributions import DiscreteDistribution, w_infinity
    from pufferfish_pgm.distributions._w_infinity import exact_w_infinity

    rng = np.random.default_rng(4)
    for uneven in (False, True):
        grid = np.arange(6, dtype=float) + (np.arange(6) ** 2 * 0.1 if uneven else 0.0)
        for _ in range(200):
            rows = []
            for _ in range(2):
                m = rng.random(6) * (rng.random(6) < 0.7)
                m[rng.integers(6)] += 0.1
                rows.append(m / m.sum())
            dists = [DiscreteDistribution.from_arrays(grid, r) for r in rows]
            with np.errstate(divide="ignore"):
                got = exact_w_infinity(grid, np.log(rows[0])[None], np.log(rows[1])[None])
            assert got[0] == w_infinity(*dists)
    # a support point only one law has, with mass 1e-13: W∞ is 1, not 0
    sliver = np.log([[1 - 1e-13, 1e-13]])
    assert exact_w_infinity(np.array([0.0, 1.0]), sliver, np.array([[0.0, -np.inf]]))[0] == 1


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_a_sliver_of_mass_still_gets_noise():
    t = 1e-13
    mc = MarkovChainScenario([[1 - t, t], [1.0, 0.0]], [0.5, 0.5], 2)
    fw = Framework(mc, [p for p in Framework(mc).pairs if p.node == 0])
    cal = WassersteinMechanism(epsilon=1.0).calibrate(fw, Count(1, nodes=[1]))
    assert cal.scale == 1.0 and cal.evidence.audit.passes(1.0)


@pytest.mark.parametrize(("value", "error"), [(-5, InvalidParameterError),
                                              (0, InvalidParameterError),
                                              (2.5, ParameterTypeError),
                                              (True, ParameterTypeError),
                                              ("10", ParameterTypeError)])
def test_max_grid_is_checked_when_the_mechanism_is_made(value, error):
    with pytest.raises(error, match="max_grid") as info:
        WassersteinMechanism(epsilon=1.0, max_grid=value)
    assert isinstance(info.value, PufferfishError)
