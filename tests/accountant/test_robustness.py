"""pp.robustness (accountant/_robustness.py): the realised ε of a calibration under beliefs
outside its class, checked against brute-force enumeration, with its summary and refusals."""

from __future__ import annotations

import numpy as np
import pytest
from oracle import realised_epsilon

import pufferfish_pgm as pp

pytestmark = pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")

CALM = pp.MarkovChainScenario([[0.8, 0.2], [0.3, 0.7]], "stationary", 5, name="calm")
STICKY = pp.MarkovChainScenario([[0.95, 0.05], [0.1, 0.9]], [0.5, 0.5], 5, name="sticky")
MIXING = pp.MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 5, name="mixing")


def test_realised_epsilon_of_each_belief_matches_brute_force() -> None:
    cal = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(pp.Framework(CALM), pp.Count(1))
    report = pp.robustness(cal, [CALM, STICKY, MIXING])
    brute = [realised_epsilon(pp.Framework(b), pp.Count(1), cal.scale)
             for b in (CALM, STICKY, MIXING)]
    np.testing.assert_allclose(report.realised, brute, rtol=1e-9)
    assert report.realised[0] == pytest.approx(1.0, rel=1e-6)   # calibrated on it: exactly ε
    assert report.realised[1] > 1.0 > report.realised[2]        # stickier: more; iid: less
    assert report.names == ("calm", "sticky", "mixing") and report.worst == "sticky"
    assert report.exceed == pytest.approx(1 / 3)
    assert (report.epsilon, report.scale) == (1.0, cal.scale)


def test_quantiles_are_order_statistics() -> None:
    cal = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(pp.Framework(CALM), pp.Count(1))
    report = pp.robustness(cal, [CALM, STICKY, MIXING], levels=(0.0, 0.5, 1.0))
    low, mid, high = sorted(report.realised)
    assert report.quantiles == ((0.0, low), (0.5, mid), (1.0, high))
    assert "3 beliefs off Θ" in report.summary() and "33.3% realise more than ε" in \
        report.summary()


def test_listed_pairs_are_the_ones_audited_off_theta() -> None:
    pairs = pp.secret_pairs(CALM, nodes=[0])
    cal = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(pp.Framework(CALM, pairs),
                                                          pp.Count(1))
    report = pp.robustness(cal, STICKY)
    brute = realised_epsilon(pp.Framework(STICKY, pairs), pp.Count(1), cal.scale)
    assert report.realised[0] == pytest.approx(brute, rel=1e-9)


def test_integer_noise_is_audited_on_its_pmf() -> None:
    cal = pp.OptimalNoiseMechanism(epsilon=1.0).calibrate(pp.Framework(CALM), pp.Count(1))
    report = pp.robustness(cal, [CALM, STICKY])
    assert report.realised[0] <= 1.0 + 1e-9
    assert report.realised[1] == pytest.approx(
        pp.privacy_loss.audit_integer_noise(pp.Framework(STICKY), pp.Count(1),
                                            cal.noise).epsilon)


def test_posterior_draws_off_theta() -> None:
    cls = pp.ScenarioClass.from_posterior([[0, 1, 1, 0, 0], [1, 1, 1, 0, 1]], coverage=0.5,
                                          confidence=0.9, seed=3)
    cal = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(pp.Framework(cls), pp.Count(1))
    inside = pp.robustness(cal, cls)
    assert inside.exceed == 0.0 and max(inside.realised) <= 1.0 * (1 + 1e-9)
    fresh = pp.robustness(cal, cls.posterior.draw(40, seed=4))
    assert len(fresh.realised) == 40 and fresh.names[0] == "posterior 0"


@pytest.mark.parametrize(("beliefs", "error", "words"), [
    (pp.MarkovChainScenario([[0.9, 0.1], [0.1, 0.9]], "stationary", 6), pp.ScenarioClassError,
     "different nodes"),
    (pp.MarkovChainScenario([[0.9, 0.1], [0.1, 0.9]], "stationary", 5, states=["a", "b"]),
     pp.ScenarioClassError, "share state spaces"),
    ("calm", pp.ParameterTypeError, "expected a scenario"),
])
def test_beliefs_that_do_not_fit_are_refused(beliefs: object, error: type, words: str) -> None:
    cal = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(pp.Framework(CALM), pp.Count(1))
    with pytest.raises(error, match=words):
        pp.robustness(cal, beliefs)


def test_bad_calibration_and_levels_are_refused() -> None:
    cal = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(pp.Framework(CALM), pp.Count(1))
    with pytest.raises(pp.ParameterTypeError, match="audits a Calibration"):
        pp.robustness(1.5, CALM)      # type: ignore[arg-type]
    with pytest.raises(pp.InvalidParameterError, match="levels"):
        pp.robustness(cal, CALM, levels=(0.5, 2.0))


def test_plot_of_a_report(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    from pufferfish_pgm.plots import plot_robustness

    cal = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(pp.Framework(CALM), pp.Count(1))
    out = plot_robustness(pp.robustness(cal, [CALM, STICKY, MIXING]), tmp_path / "r.png")
    assert out.read_bytes()[:4] == b"\x89PNG" and out.stat().st_size > 5000


def test_a_belief_that_makes_a_listed_secret_impossible_is_named() -> None:
    stuck = pp.MarkovChainScenario([[1.0, 0.0], [0.2, 0.8]], [1.0, 0.0], 5, name="stuck")
    cal = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(
        pp.Framework(CALM, pp.secret_pairs(CALM, nodes=[1])), pp.Count(1))
    with pytest.raises(pp.ImpossibleSecretError, match="belief 'stuck'"):
        pp.robustness(cal, stuck)
