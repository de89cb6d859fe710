"""Mechanisms on time-varying chains: brute force, the unrolled network, and the refusals."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from oracle import realised_epsilon

import pufferfish_pgm as pp
from pufferfish_pgm.certificates._model import scenario_parts
from pufferfish_pgm.errors import InvalidModelError
from pufferfish_pgm.mechanisms.blowfish import dependence_reason
from pufferfish_pgm.queries import Count
from pufferfish_pgm.scenarios import MarkovChainScenario
from pufferfish_pgm.secrets import Framework

EPSILON = 1.0


def day_chain(seed: int = 1, length: int = 6, k: int = 3) -> MarkovChainScenario:
    rng = np.random.default_rng(seed)
    steps = rng.dirichlet(np.ones(k), size=(length - 1, k))
    return MarkovChainScenario(steps, rng.dirichlet(np.ones(k)), length)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # usefulness warnings of tiny examples
        yield


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_mqm_meets_epsilon_by_brute_force(seed) -> None:
    mc = day_chain(seed)
    cal = pp.MarkovQuiltMechanism(epsilon=EPSILON).calibrate(Framework(mc), Count(1))
    net = Framework(mc.to_network())
    assert realised_epsilon(net, Count(1), cal.scale) <= EPSILON * (1 + 1e-9)
    same = pp.MarkovQuiltMechanism(epsilon=EPSILON).calibrate(net, Count(1))
    assert cal.scale == pytest.approx(same.scale, rel=1e-9)


@pytest.mark.parametrize("seed", [1, 4])
def test_exact_laplace_is_brute_force_tight(seed) -> None:
    mc = day_chain(seed, length=5)
    cal = pp.ExactLaplaceMechanism(epsilon=EPSILON).calibrate(Framework(mc), Count(1))
    net = Framework(mc.to_network())
    assert realised_epsilon(net, Count(1), cal.scale) == pytest.approx(EPSILON, rel=1e-6)
    same = pp.ExactLaplaceMechanism(epsilon=EPSILON).calibrate(net, Count(1))
    assert cal.scale == pytest.approx(same.scale, rel=1e-6)
    assert pp.audit(Framework(mc), Count(1), 2.0).epsilon == pytest.approx(
        realised_epsilon(net, Count(1), 2.0), rel=1e-9)


@pytest.mark.parametrize("name", ["WassersteinMechanism", "KantorovichMechanism"])
def test_transport_mechanisms_equal_the_unrolled_network(name) -> None:
    mc = day_chain(5)
    mech = getattr(pp, name)(epsilon=EPSILON)
    got = mech.calibrate(Framework(mc), Count(1)).scale
    assert got == pytest.approx(mech.calibrate(Framework(mc.to_network()), Count(1)).scale,
                                rel=1e-9)
    assert realised_epsilon(Framework(mc.to_network()), Count(1), got) <= EPSILON * (1 + 1e-9)


def test_refusals_name_the_alternative() -> None:
    fw = Framework(day_chain(2, k=2))
    with pytest.raises(InvalidModelError, match="MarkovQuiltMechanism"):
        pp.MQMApproxMechanism(epsilon=EPSILON).calibrate(fw, Count(1))
    with pytest.raises(InvalidModelError, match="MarkovQuiltMechanism"):   # Count is native
        pp.ExactQuiltMechanism(epsilon=EPSILON).calibrate(fw, pp.WindowedCount(1, 2))


def test_blowfish_sees_dependence_in_every_step() -> None:
    # every step is the same dependent matrix: the old test compared the steps to step 0
    # (all equal) and called the records independent
    steps = np.array([[[0.9, 0.1], [0.2, 0.8]]] * 3)
    assert dependence_reason(MarkovChainScenario(steps, [0.5, 0.5], 4)) is not None
    iid = np.array([[[0.7, 0.3], [0.7, 0.3]], [[0.1, 0.9], [0.1, 0.9]]])
    assert dependence_reason(MarkovChainScenario(iid, [0.5, 0.5], 3)) is None


def test_fingerprint_covers_every_step() -> None:
    mc = day_chain(3)
    steps = mc.transition.copy()
    steps[-1] = steps[-1][::-1]          # only the last step changes
    other = MarkovChainScenario(steps, mc.initial, mc.length)
    assert scenario_parts(mc)["transition"] != scenario_parts(other)["transition"]


def test_large_chains_streamed_audit_and_stored_calibration(monkeypatch) -> None:
    # with every law "large" (STREAM_CELLS = 0): the streamed audit takes every step's matrix
    # (it agrees with brute force); the streamed calibration's bracket takes one matrix per
    # chain (it refuses a stack), so the exact mechanism keeps such chains on the stored laws
    import pufferfish_pgm.mechanisms.exact as exact
    import pufferfish_pgm.privacy_loss._audit as audit_module

    monkeypatch.setattr(audit_module, "STREAM_CELLS", 0)
    monkeypatch.setattr(exact, "STREAM_CELLS", 0)
    mc = day_chain(6, length=5)
    net = Framework(mc.to_network())
    assert pp.audit(Framework(mc), Count(1), 2.0).epsilon == pytest.approx(
        realised_epsilon(net, Count(1), 2.0), rel=1e-9)
    cal = pp.ExactLaplaceMechanism(epsilon=EPSILON).calibrate(Framework(mc), Count(1))
    assert realised_epsilon(net, Count(1), cal.scale) == pytest.approx(EPSILON, rel=1e-6)
