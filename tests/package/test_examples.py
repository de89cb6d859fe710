"""Every example runs (CI runs them all) and its privacy claims hold."""

from __future__ import annotations

import importlib.util
import sys

import pytest
from helpers import ROOT

EXAMPLES = ROOT / "examples"


def _load(name: str):
    sys.path.insert(0, str(EXAMPLES))
    try:
        spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(EXAMPLES))


@pytest.mark.slow
def test_activity_timeseries_every_mechanism_passes_its_audit(capsys, tmp_path):
    rows = _load("activity_timeseries").main(epsilon=1.0, picture=tmp_path / "profile.png")
    assert [r[0] for r in rows] == ["GroupDP", "MarkovQuilt", "Wasserstein", "ExactLaplace"]
    for _, scale, realised in rows:
        assert scale > 0 and realised <= 1.0 + 1e-9
    scales = dict((r[0], r[1]) for r in rows)
    # exact calibration never needs more noise than Wasserstein, which never needs more than
    # group DP (W_inf <= T for a count)
    assert scales["ExactLaplace"] <= scales["Wasserstein"] <= scales["GroupDP"]
    out = capsys.readouterr().out
    assert "released" in out and "14/14 days released" in out and "spent ε = 1" in out
    assert (tmp_path / "profile.png").is_file()


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_correlated_records_entry_dp_leaks_and_others_do_not():
    results = _load("correlated_records").main(epsilon=1.0)
    assert results["EntryDP"][1] > 1.0  # entry DP is not Pufferfish private here
    for name in ("GroupDP", "MarkovQuilt", "Wasserstein", "ExactLaplace"):
        assert results[name][1] <= 1.0 + 1e-9, name
    assert results["ExactLaplace"][0] <= results["Wasserstein"][0]


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_existing_bn_plans_every_secret_node():
    cal = _load("existing_bn").main(epsilon=1.0)
    assert {e.node for e in cal.plan} == {"HYPOVOLEMIA", "LVFAILURE", "ANAPHYLAXIS"}
    assert cal.scale <= 8.0  # never more than group DP over the 8 readings


def test_multi_user_reproduces_the_seed_numbers():
    rows = {r[0]: r[1:] for r in _load("multi_user").main(epsilon=1.0)}
    # seed 004: Theorem 1 gives |5 - 3|/eps = 2, Theorem 2 gives 5/eps, (14) gives max|t| = 5
    assert rows["Thm 1: reports 5 vs 3"][0] == pytest.approx(2.0)
    assert rows["Thm 2: reports 5 vs absent"][0] == pytest.approx(5.0)
    assert rows["Thm 3 (14): P4 vs absent"][0] == pytest.approx(5.0)
    for paper, exact, realised in rows.values():
        assert realised <= 1.0 + 1e-9 and exact <= paper * (1 + 1e-9)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_deterministic_constraints_dp_release_overshoots():
    leak = _load("deterministic_constraints").main(n=10, epsilon=1.0)
    # seed 002 Example 9.2: at omega = n the log-ratio is about n*eps - log n (8.156 here)
    assert leak.realised_uniform == pytest.approx(leak.paper_log_ratio_at_n, rel=1e-9)
    assert leak.realised_uniform > 8.0 and leak.realised_worst_prior > 9.0
    assert leak.exact_scale_uniform > leak.dp_scale


def test_activity_example_says_on_stderr_which_data_ran(tmp_path, monkeypatch, capsys):
    # issue 19 item 7f: without the Ordóñez files it fell back to synthetic days silently
    example = _load("activity_timeseries")
    data = sys.modules["_activity_data"]
    monkeypatch.setattr(data, "DATA", tmp_path)            # the default folder lacks the files
    days, homes, source = data.load_days(10)
    err = capsys.readouterr().err
    assert err.splitlines()[0].startswith("data: SYNTHETIC days, not the real logs")
    assert str(tmp_path) in err.splitlines()[0] and source.startswith("synthetic")
    assert example.run([str(tmp_path / "nowhere")]) == 2    # a folder asked for must hold them
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "OrdonezA_ADLs.txt" in err and "nowhere" in err


@pytest.mark.slow
def test_contact_network_entry_dp_leaks_and_pufferfish_mechanisms_do_not():
    results = _load("contact_network").main(epsilon=1.0, people=60)
    for prior in ("noisy-OR", "Ising"):
        assert results[prior, "EntryDP"][1] > 1.0, prior  # a neighbour tells on a person
        for name in ("ExactLaplace", "MarkovQuilt", "GroupDP"):
            assert results[prior, name][1] <= 1.0 + 1e-9, (prior, name)
        # exact is the least noise that passes; MQM never beats it, group DP bounds both
        scales = {name: results[prior, name][0] for name in ("ExactLaplace", "MarkovQuilt",
                                                                  "GroupDP")}
        assert scales["ExactLaplace"] <= scales["MarkovQuilt"] <= scales["GroupDP"] == 60
