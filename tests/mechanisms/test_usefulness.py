"""Every calibration states its usefulness (issue 23 item 2): E|Z| and the 95 % half-width of
the noise against the answer's largest standard deviation over θ; calibrate warns
(UsefulnessWarning) exactly when E|Z| > that spread, and the certificate records both."""

from __future__ import annotations

import json
import math
import sys
import warnings

import numpy as np
import pytest
from helpers import ROOT

import pufferfish_pgm as pp
from pufferfish_pgm.certificates._document import sha256
from pufferfish_pgm.cli._main import main
from pufferfish_pgm.mechanisms._usefulness import answer_spread, dl_mean_abs, noise_error
from pufferfish_pgm.queries import query_distribution
from pufferfish_pgm.scenarios import default_model_path

ROOT = ROOT
DATA = ROOT.parent / "shared" / "data-real"
ORDONEZ = all((DATA / f"Ordonez{h}_ADLs.txt").is_file() for h in "AB")
STICKY = pp.MarkovChainScenario([[0.99, 0.01], [0.01, 0.99]], "stationary", 4)
IID = pp.MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 100)


def _law_moments(scenario, query) -> tuple[float, float]:
    law = query_distribution(scenario, query)
    x, p = np.asarray(law.support, dtype=float), np.asarray(law.probs, dtype=float)
    mean = float(p @ x)
    return mean, math.sqrt(float(p @ (x - mean) ** 2))


@pytest.mark.parametrize("seed", range(6))
def test_chain_moments_equal_the_exact_law(seed: int) -> None:
    # the forward pass of (P(X=s), E[S;X=s], E[S²;X=s]) against the exact law of the answer,
    # on random chains with a random start, random integer weights and a random node subset
    rng = np.random.default_rng(seed)
    k, length = int(rng.integers(2, 4)), int(rng.integers(1, 9))
    p = rng.dirichlet(np.ones(k), size=k)
    start = "stationary" if seed % 2 else rng.dirichlet(np.ones(k))
    mc = pp.MarkovChainScenario(p, start, length)
    nodes = sorted(rng.choice(length, size=int(rng.integers(1, length + 1)), replace=False))
    query = pp.LinearQuery({s: int(rng.integers(-3, 4)) for s in range(k)},
                           nodes=[int(v) for v in nodes])
    (mean, sd), = answer_spread(mc, query)
    want = _law_moments(mc, query)
    assert mean == pytest.approx(want[0], abs=1e-9) and sd == pytest.approx(want[1], abs=1e-9)


def test_network_spread_is_the_laws_and_the_largest_scenario_is_named() -> None:
    asia = pp.BayesianNetworkScenario.from_file(default_model_path("asia.bif"), name="asia")
    query = pp.Count("yes", ["tub", "lung", "bronc"])
    (mean, sd), = answer_spread(asia, query)
    assert (mean, sd) == pytest.approx(_law_moments(asia, query), abs=1e-12)
    theta = pp.ScenarioClass([STICKY.with_length(10), IID.with_length(10)])
    cal = pp.Calibration(mechanism="m", epsilon=1.0, scale=0.5, query=pp.Count(1),
                         framework=pp.Framework(theta))
    # IID count over 10 steps: Binomial(10, 1/2), sd sqrt(2.5) = 1.58; the sticky chain's count
    # is nearly all-or-nothing (sd close to 5): the largest, and the one named
    report = cal.usefulness()
    assert report.spread_of == theta[0].name and report.spread > 4.0


def test_a_long_chain_needs_no_law() -> None:
    # 10^9 steps of an iid chain: the count is Binomial(10^9, 0.3), sd sqrt(10^9 · 0.21);
    # runs of equal steps go by matrix powers, so this takes a few dozen small products
    mc = pp.MarkovChainScenario([[0.7, 0.3], [0.7, 0.3]], "stationary", 10**9)
    (mean, sd), = answer_spread(mc, pp.Count(1))
    assert mean == pytest.approx(3e8, rel=1e-9)
    assert sd == pytest.approx(math.sqrt(1e9 * 0.21), rel=1e-6)


def test_noise_error_is_that_of_the_noise_added() -> None:
    # discrete Laplace: E|Z| = Σ |k| P(k) summed numerically; half-width from noise_halfwidth
    scale = 3.7
    k = np.arange(-400, 401)
    pmf = np.exp(-np.abs(k) / scale)
    assert dl_mean_abs(scale) == pytest.approx(float(np.abs(k) @ pmf / pmf.sum()), rel=1e-12)
    cal = pp.Calibration(mechanism="m", epsilon=1.0, scale=scale, query=pp.Count(1),
                         framework=pp.Framework(IID))
    assert noise_error(cal) == (dl_mean_abs(scale), 11.0)   # noise_halfwidth(3.7, .95) = 11
    real = pp.Calibration(mechanism="m", epsilon=1.0, scale=2.0,
                          query=pp.LinearQuery({1: 0.5}, integer=False),
                          framework=pp.Framework(IID))
    err, half = noise_error(real)      # the grid's discrete Laplace: E|Z| within 1e-5 of 2
    assert err == pytest.approx(2.0, rel=1e-5) and half == pytest.approx(-2 * math.log(0.05),
                                                                          rel=1e-5)
    opt = pp.OptimalNoiseMechanism(epsilon=1.0).calibrate(
        pp.Framework(IID.with_length(6)), pp.Count(1))
    assert noise_error(opt) == (opt.noise.mean_abs, opt.noise.halfwidth(0.95))


def test_calibrate_warns_when_the_noise_is_larger_than_the_spread() -> None:
    # sticky chain of 4 steps: group DP's scale 4 (E|Z| 3.96) against sd 1.975 (sum of the
    # covariances 0.25 · 0.98^|i-j|: Var = 3.901)
    with pytest.warns(pp.UsefulnessWarning, match=r"E\|Z\| 3\.959.* deviation 1\.975") as got:
        cal = pp.GroupDPMechanism(epsilon=1.0).calibrate(pp.Framework(STICKY), pp.Count(1))
    assert len(got) == 1 and got[0].filename == __file__      # points at the caller
    assert cal.usefulness().useful is False


def test_quiet_when_useful_or_unknown() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # Binomial(100, 1/2): sd 5 against exact Laplace's E|Z| 0.85
        assert pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(
            pp.Framework(IID), pp.Count(1)).usefulness().useful is True
        # a histogram and a chain with any start: spread unknown, no warning
        hist = pp.GroupDPMechanism(epsilon=1.0).calibrate(pp.Framework(STICKY), pp.Histogram())
        anyone = pp.MarkovChainScenario([[0.99, 0.01], [0.01, 0.99]], "any", 4)
        cal = pp.GroupDPMechanism(epsilon=1.0).calibrate(pp.Framework(anyone), pp.Count(1))
    assert hist.usefulness().spread is None and cal.usefulness().useful is None


def test_a_calibration_inside_another_is_not_checked_again() -> None:
    # MQMApprox calls MarkovQuilt's calibrate, ExactQuilt calls MQM's: one warning each
    for mech in (pp.MQMApproxMechanism(epsilon=1.0), pp.ExactQuiltMechanism(epsilon=1.0)):
        with pytest.warns(pp.UsefulnessWarning) as got:
            mech.calibrate(pp.Framework(STICKY), pp.Count(1))
        assert len(got) == 1, [str(w.message) for w in got]


def test_usefulness_from_data() -> None:
    cal = pp.Calibration(mechanism="m", epsilon=1.0, scale=2.0, query=pp.Count(1),
                         framework=pp.Framework(STICKY))
    report = cal.usefulness([[0, 0, 0, 0], [1, 1, 1, 1], [0, 1, 1, 1]])
    # answers 0, 4, 3: sample sd sqrt(((0-7/3)² + (4-7/3)² + (3-7/3)²) / 2) = 2.08
    assert report.spread_of == "data" and report.spread == pytest.approx(2.0816660, rel=1e-6)


def test_the_certificate_records_both_numbers_and_old_ones_load() -> None:
    fw = pp.Framework(IID.with_length(10))
    mech = pp.ExactLaplaceMechanism(epsilon=1.0)
    cal = mech.calibrate(fw, pp.Count(1))
    doc = json.loads(cal.to_json(mechanism=mech))
    report = cal.usefulness()
    assert doc["usefulness"] == {"mean_abs_error": report.mean_abs_error,
                                 "halfwidth_95": report.halfwidth, "spread": report.spread,
                                 "spread_of": "chain"}
    old = {k: v for k, v in doc.items() if k not in ("usefulness", "fingerprint")}
    old["fingerprint"] = sha256(old)        # a certificate written before the field existed
    assert pp.Calibration.from_json(json.dumps(old), fw).scale == cal.scale
    bad = dict(doc, usefulness={**doc["usefulness"], "spread": "large"})
    bad.pop("fingerprint")
    bad["fingerprint"] = sha256(bad)
    with pytest.raises(pp.CertificateError, match="usefulness.spread"):
        pp.Calibration.from_json(json.dumps(bad), fw)


def test_the_cli_prints_one_line_under_a_useless_result(capsys) -> None:
    assert main(["calibrate", "--length", "24", "--mechanism", "group"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1].startswith("useless: the noise's E|Z| 23.99")
    assert main(["calibrate", "--length", "24", "--mechanism", "group", "--epsilon", "20",
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["usefulness"]
    assert data["useful"] is True and data["mean_abs_error"] < data["spread"]
    assert main(["calibrate", "--length", "24", "--mechanism", "group", "--epsilon", "20"]) == 0
    assert "useless" not in capsys.readouterr().out


@pytest.mark.skipif(not ORDONEZ, reason="the Ordóñez logs are not in ../shared/data-real")
def test_the_ordonez_per_person_daily_count_warns() -> None:
    sys.path.insert(0, str(ROOT / "examples"))
    from _activity_data import load_days

    days, homes, _ = load_days(10, DATA)
    theta = pp.ScenarioClass.fit_groups(days, homes, pseudocount=0.5, initial="stationary")
    # measured: exact Laplace E|Z| 52.9 against the count's largest sd 38.7 (home A)
    with pytest.warns(pp.UsefulnessWarning, match="Sleeping"):
        cal = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(pp.Framework(theta),
                                                               pp.Count("Sleeping"))
    report = cal.usefulness()
    assert report.mean_abs_error > report.spread > 30
    # the days themselves vary even less (sample sd of the count over the 33 days)
    assert cal.usefulness(days).spread < report.spread
