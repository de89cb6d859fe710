"""The advisor (issue 23 item 3): noise at ε, the ε for a target error, and the users or days
to sum for a relative error on the total, each checked by calibrating what it promises."""

from __future__ import annotations

import json
import sys
import warnings

import pytest
from helpers import ROOT

import pufferfish_pgm as pp
from pufferfish_pgm.advisor import advise, cohort, cohort_size
from pufferfish_pgm.cli._main import main
from pufferfish_pgm.mechanisms._registry import mechanism
from pufferfish_pgm.mechanisms._usefulness import quiet

ROOT = ROOT
DATA = ROOT.parent / "shared" / "data-real"
ORDONEZ = all((DATA / f"Ordonez{h}_ADLs.txt").is_file() for h in "AB")
CHAIN = pp.MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 24)


def _error(name: str, framework: pp.Framework, epsilon: float) -> float:
    with quiet():
        return mechanism(name, epsilon).calibrate(framework, pp.Count(1)) \
            .usefulness().mean_abs_error


@pytest.fixture(scope="module")
def advice() -> pp.advisor.Advice:
    return advise(pp.Framework(CHAIN), pp.Count(1), mechanisms=["group", "mqm", "exact"],
                  target_relative=0.1)


def test_the_noise_at_epsilon_is_the_calibrations(advice) -> None:
    fw = pp.Framework(CHAIN)
    for row, name in zip(advice.rows, ("group", "mqm", "exact"), strict=True):
        with quiet():
            cal = mechanism(name, 1.0).calibrate(fw, pp.Count(1))
        assert (row.scale, row.mean_abs_error) == (cal.scale, cal.usefulness().mean_abs_error)
    # count of 24 steps, stationary (2/3, 1/3): mean 8
    assert advice.mean == pytest.approx(8.0) and advice.target_error == advice.spread


def test_the_epsilon_for_the_target_is_enough_and_nearly_the_least(advice) -> None:
    fw = pp.Framework(CHAIN)
    slack = {"closed form c/ε": 1.001, "exact audit of the target": 1.02,
             "bisection (1 %)": 1.011}
    for row, name in zip(advice.rows, ("group", "mqm", "exact"), strict=True):
        eps = row.epsilon_for_target
        assert _error(name, fw, eps) <= advice.target_error, row
        assert _error(name, fw, eps / slack[row.epsilon_method]) > advice.target_error, row
    assert [r.epsilon_method for r in advice.rows] == [
        "closed form c/ε", "bisection (1 %)", "exact audit of the target"]


def test_the_cohort_size_against_the_exact_calibration_of_the_total(advice) -> None:
    # n = ceil(E|Z| / (0.1 · 8)); the total over n independent users, calibrated exactly on
    # the network of n chains, has E|Z| <= 10 % of its mean n · 8, and n - 1 users do not
    # reach it with the one-user noise
    exact = advice.rows[2]
    n = exact.cohort
    assert n == cohort_size(exact.mean_abs_error, 8.0, 0.1) == 8    # 5.784 / 0.8 = 7.2
    total = pp.Framework(cohort(CHAIN, n))
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # the total is useful: no warning
        cal = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(total, pp.Count(1))
    report = cal.usefulness()
    assert report.mean == pytest.approx(n * 8.0)
    assert report.mean_abs_error <= 0.1 * report.mean
    assert report.mean_abs_error <= exact.mean_abs_error + 1e-9   # one-user noise covers it
    assert exact.mean_abs_error > 0.1 * (n - 1) * 8.0


def test_the_total_is_useful_from_useful_from_users(advice) -> None:
    # useful n: the smallest n with E|Z| <= sqrt(n) sd; exact's 5.784 against sd 5.174 -> 2
    exact = advice.rows[2]
    assert exact.useful_from == 2
    with pytest.warns(pp.UsefulnessWarning):
        pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(pp.Framework(CHAIN), pp.Count(1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cal = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(pp.Framework(cohort(CHAIN, 2)),
                                                              pp.Count(1))
    assert cal.usefulness().useful is True


def test_table_json_plot_and_a_failed_mechanism(tmp_path) -> None:
    fw = pp.Framework(pp.MarkovChainScenario([[0.8, 0.1, 0.1]] * 3, "stationary", 6))
    out = advise(fw, pp.Count(1), mechanisms=["group", "gk16"], target_error=2.0,
                 curve=[0.5, 1.0, 2.0])
    assert out.rows[1].error and "gk16" in out.table().lower() or "GK16" in out.table()
    assert json.loads(json.dumps(out.to_json(), default=str))["rows"][0]["mechanism"] == \
        "GroupDP"
    assert out.curves["GroupDP"][0] == [0.5, 1.0, 2.0]
    assert out.plot(tmp_path / "noise.png").stat().st_size > 0


def test_cohort_refuses_what_it_cannot_build() -> None:
    with pytest.raises(pp.InvalidParameterError, match="whole number"):
        cohort(CHAIN, 0)


def test_the_cli(capsys, tmp_path) -> None:
    assert main(["advise", "--length", "24", "--mechanisms", "group,exact", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    assert [r["mechanism"] for r in rows] == ["GroupDP", "ExactLaplace"]
    picture = tmp_path / "a.png"
    assert main(["advise", "--length", "24", "--mechanisms", "exact", "--plot",
                 str(picture)]) == 0
    assert picture.stat().st_size > 0 and "useful n" in capsys.readouterr().out
    assert main(["advise", "--mechanisms", "nope"]) == 2


@pytest.mark.slow
@pytest.mark.skipif(not ORDONEZ, reason="the Ordóñez logs are not in ../shared/data-real")
def test_the_ordonez_total_over_two_people_is_quiet() -> None:
    # per person: exact E|Z| 52.9 > the count's sd 38.7 (warns); two independent people
    # (advisor's useful n = 2): sd 38.7 · sqrt 2 = 54.7 > 52.9, calibrated exactly (~40 s)
    sys.path.insert(0, str(ROOT / "examples"))
    from _activity_data import load_days

    days, homes, _ = load_days(10, DATA)
    theta = pp.ScenarioClass.fit_groups(days, homes, pseudocount=0.5, initial="stationary")
    row = advise(pp.Framework(theta), pp.Count("Sleeping"), mechanisms=["exact"]).rows[0]
    assert row.useful_from == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cal = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(pp.Framework(cohort(theta, 2)),
                                                              pp.Count("Sleeping"))
    assert cal.usefulness().useful is True
