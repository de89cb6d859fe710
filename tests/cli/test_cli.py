"""The command line: every subcommand on the bundled default, --json, and bad-input exits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers import DATA_REAL, ROOT

import pufferfish_pgm as pp
from pufferfish_pgm.cli import main

MODELS = ROOT / "models"
SMALL = ["--length", "24"]  # the bundled chain, shortened so the tests stay quick


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_compare_json_parses_and_every_mechanism_is_audited(capsys):
    code, out, err = run(capsys, "compare", *SMALL, "--json")
    assert code == 0, err
    rows = json.loads(out)["rows"]
    names = [r["mechanism"] for r in rows]
    assert names == ["entry", "group", "mqm", "exact-quilt", "wasserstein", "kantorovich",
                     "kantorovich-relaxed", "exact"]
    for r in rows:
        if r["mechanism"] != "entry":
            assert r["private"] and r["realised_epsilon"] <= 1.0 + 1e-9, r
    assert not rows[0]["private"]  # entry DP leaks on the correlated activity chain


def test_demo_prints_the_table(capsys):
    code, out, _ = run(capsys, "demo", *SMALL)
    assert code == 0
    assert "mechanism" in out and "exact" in out and "realised eps" in out


def test_plan_calibrate_audit_on_a_network(capsys):
    model = str(MODELS / "asia.bif")
    code, out, _ = run(capsys, "plan", "--model", model, "--nodes", "lung,tub",
                       "--query", "count:yes", "--json")
    assert code == 0
    plan = json.loads(out)["plan"]
    assert {p["node"] for p in plan} == {"lung", "tub"}
    code, out, _ = run(capsys, "calibrate", "--model", model, "--nodes", "lung",
                       "--query", "count:yes", "--mechanism", "exact", "--json")
    assert code == 0
    scale = json.loads(out)["scale"]
    code, out, _ = run(capsys, "audit", "--model", model, "--nodes", "lung",
                       "--query", "count:yes", "--scale", str(scale), "--json")
    assert code == 0
    assert json.loads(out)["realised_epsilon"] <= 1.0 + 1e-9


def test_release_from_csv(tmp_path, capsys):
    csv = tmp_path / "days.csv"
    header = ",".join(str(t) for t in range(24))
    rows = [",".join(["sleep"] * 12 + ["walk"] * 12), ",".join(["sit"] * 24)]
    csv.write_text("\n".join([header, *rows]) + "\n")
    code, out, err = run(capsys, "release", *SMALL, "--data", str(csv), "--mechanism", "group",
                         "--seed", "1", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert len(result["values"]) == 2
    # group DP on 24 slots at ε = 1: discrete Laplace of scale 24; the 95 % interval is the
    # smallest h with 2 q^(h+1) / (1 + q) <= 0.05, q = e^(-1/24): h = 72 (0.0487;
    # h = 71 gives 0.0508)
    low, high = result["interval_95"]
    assert [v - lo for v, lo in zip(result["values"], low, strict=True)] == [72, 72]
    assert [hi - v for v, hi in zip(result["values"], high, strict=True)] == [72, 72]
    code, out, err = run(capsys, "release", *SMALL, "--data", str(csv), "--mechanism", "group",
                         "--seed", "1")
    assert code == 0 and "within ±72 of its true answer with probability 0.95" in out


@pytest.mark.parametrize("argv, fragment", [
    (["calibrate", "--epsilon", "-1"], "epsilon"),
    (["calibrate", "--epsilon", "nan"], "epsilon"),
    (["calibrate", "--epsilon", "inf"], "epsilon"),
    (["calibrate", "--model", "no/such/file.bif"], "does not exist"),
    (["calibrate", "--nodes", "99999"], "99999"),
    (["calibrate", "--query", "count:dancing"], "dancing"),
    (["calibrate", "--query", "median"], "median"),
    (["calibrate", "--mechanism", "magic"], "magic"),
    (["frobnicate"], "frobnicate"),
    (["release", "--data", "no/such.csv"], "does not exist"),
    (["calibrate", "--memory-budget", "lots"], "'lots' is not a size"),
    # new-user items 7 and 9: accepted nonsense and unhelpful messages before
    (["calibrate", "--length", "0"], "length must be >= 1, got 0"),
    (["calibrate", "--model", str(MODELS / "asia.bif"), "--length", "5"],
     "applies to Markov chains"),
    (["release", "--data", "x.csv", "--seed", "-1"], "--seed must be an integer >= 0, got -1"),
    (["calibrate", "--model", str(MODELS)], "is a directory"),
    (["calibrate", "--model", str(MODELS / "asia.bif"), "--mechanism", "exact",
      "--memory-budget", "100"], "memory budget"),
])
def test_bad_input_exits_2_with_one_line(capsys, argv, fragment):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("error:"), err
    assert fragment in err
    assert "Traceback" not in err


def test_memory_budget_holds_for_one_run_only(capsys, monkeypatch):
    monkeypatch.delenv("PUFFERFISH_PGM_MEMORY_BUDGET", raising=False)
    asia = ["--model", str(MODELS / "asia.bif"), "--mechanism", "exact"]
    code, _, err = run(capsys, "calibrate", *asia, "--memory-budget", "100")
    assert code == 2 and "PUFFERFISH_PGM_MEMORY_BUDGET" in err
    assert "PUFFERFISH_PGM_MEMORY_BUDGET" not in os.environ
    assert run(capsys, "calibrate", *asia, "--memory-budget", "1MB")[0] == 0


def test_bad_csv_value_names_row_and_value(tmp_path, capsys):
    csv = tmp_path / "bad.csv"
    csv.write_text(",".join(map(str, range(24))) + "\n" + ",".join(["sleep"] * 23 + ["fly"]))
    code, _, err = run(capsys, "release", *SMALL, "--data", str(csv))
    assert code == 2 and "fly" in err and "record 0" in err


def test_console_script_help_is_quick_and_clean():
    proc = subprocess.run([sys.executable, "-m", "pufferfish_pgm.cli", "--help"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "demo" in proc.stdout


def test_calibrate_out_release_calibration_and_verify(tmp_path, capsys):
    cert = tmp_path / "cal.json"
    code, out, err = run(capsys, "calibrate", *SMALL, "--mechanism", "exact", "--out", str(cert),
                         "--json")
    assert code == 0, err
    scale = json.loads(out)["scale"]
    assert json.loads(cert.read_text())["scale"] == scale
    csv = tmp_path / "days.csv"
    csv.write_text(",".join(str(t) for t in range(24)) + "\n" + ",".join(["walk"] * 24) + "\n")
    from pufferfish_pgm.mechanisms import exact

    def boom(*a, **k):
        raise AssertionError("release --calibration recalibrated")

    original = exact.ExactLaplaceMechanism.calibrate
    exact.ExactLaplaceMechanism.calibrate = boom  # type: ignore[method-assign]
    try:
        code, out, err = run(capsys, "release", *SMALL, "--calibration", str(cert), "--data",
                             str(csv), "--seed", "3", "--json")
    finally:
        exact.ExactLaplaceMechanism.calibrate = original  # type: ignore[method-assign]
    assert code == 0, err
    assert json.loads(out)["scale"] == scale and json.loads(out)["mechanism"] == "ExactLaplace"
    code, out, err = run(capsys, "verify", str(cert), *SMALL)
    assert code == 0 and "holds" in out, err


def test_release_calibration_refuses_contradicting_options_and_another_model(tmp_path, capsys):
    cert = tmp_path / "cal.json"
    assert run(capsys, "calibrate", *SMALL, "--mechanism", "group", "--out", str(cert))[0] == 0
    csv = tmp_path / "days.csv"
    csv.write_text(",".join(str(t) for t in range(24)) + "\n" + ",".join(["walk"] * 24) + "\n")
    code, _, err = run(capsys, "release", *SMALL, "--calibration", str(cert), "--data", str(csv),
                       "--epsilon", "0.5")
    assert code == 2 and err.count("\n") == 1 and "--epsilon 0.5 contradicts" in err
    code, _, err = run(capsys, "release", "--length", "25", "--calibration", str(cert),
                       "--data", str(csv))
    assert code == 2 and err.count("\n") == 1 and "length (certified 24, given 25)" in err


def test_verify_exits_2_with_one_line_when_the_promise_fails(tmp_path, capsys):
    cert = tmp_path / "entry.json"
    assert run(capsys, "calibrate", *SMALL, "--mechanism", "entry", "--out", str(cert))[0] == 0
    code, out, err = run(capsys, "verify", str(cert), *SMALL)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("error:") and "does NOT hold" in err
    doc = json.loads(cert.read_text())
    doc["scale"] = 100.0
    cert.write_text(json.dumps(doc))
    code, _, err = run(capsys, "verify", str(cert), *SMALL)
    assert code == 2 and err.count("\n") == 1 and "tampered" in err
    code, _, err = run(capsys, "verify", str(tmp_path / "missing.json"), *SMALL)
    assert code == 2 and "does not exist" in err


# ------------------------------------------------ issue 14: items 1 (compare), 4 and 10


def _failing(monkeypatch, names):
    """Make the mechanisms in ``names`` raise a PufferfishError when they calibrate."""
    from pufferfish_pgm.cli import _compare
    from pufferfish_pgm.errors import LimitExceededError

    real = _compare.mechanism

    class Broken:
        def __init__(self, name):
            self.name = name

        def calibrate(self, fw, query):
            raise LimitExceededError(f"{self.name} is too big\nfor this test")

    monkeypatch.setattr(_compare, "mechanism",
                        lambda name, eps: Broken(name) if name in names else real(name, eps))


def test_compare_keeps_the_finished_rows_when_one_mechanism_fails(monkeypatch, capsys):
    _failing(monkeypatch, {"kantorovich"})
    code, out, err = run(capsys, "compare", *SMALL)
    assert code == 0, err
    lines = out.splitlines()
    failed = [ln for ln in lines if ln.startswith("kantorovich ")]
    assert len(failed) == 1 and "FAILED" in failed[0]
    assert "LimitExceededError: kantorovich is too big for this test" in failed[0]
    for name in ("entry", "group", "mqm", "exact-quilt", "wasserstein", "kantorovich-relaxed",
                 "exact"):
        assert any(ln.startswith(name + " ") and "FAILED" not in ln for ln in lines), name
    assert "1 of 8 mechanisms failed (kantorovich)" in out
    code, out, _ = run(capsys, "compare", *SMALL, "--json")
    data = json.loads(out)
    assert code == 0 and data["failed"] == ["kantorovich"]
    assert [r["mechanism"] for r in data["rows"] if "scale" in r] == [
        "entry", "group", "mqm", "exact-quilt", "wasserstein", "kantorovich-relaxed", "exact"]


def test_compare_exits_2_only_when_every_mechanism_fails(monkeypatch, capsys):
    from pufferfish_pgm.mechanisms._registry import MECHANISM_ORDER

    _failing(monkeypatch, set(MECHANISM_ORDER))
    code, out, _ = run(capsys, "compare", *SMALL)
    assert code == 2
    assert out.count("FAILED") == len(MECHANISM_ORDER)


def test_plan_default_query_on_alarm_counts_over_the_nodes_that_have_the_state(capsys):
    from pufferfish_pgm.scenarios import default_model_path

    model = str(default_model_path("alarm.bif"))
    code, out, err = run(capsys, "plan", "--model", model, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["query"] == "count(TRUE)"
    assert len(data["query_nodes"]) == 10 and "LVFAILURE" in data["query_nodes"]
    assert "LVEDVOLUME" not in data["query_nodes"]  # its states are LOW, NORMAL, HIGH
    # --query-nodes restricts the query (and is strict: every listed node needs the state)
    code, out, err = run(capsys, "plan", "--model", model, "--query", "count:HIGH",
                         "--query-nodes", "LVEDVOLUME,CVP", "--nodes", "LVEDVOLUME", "--json")
    assert code == 0, err
    assert json.loads(out)["query_nodes"] == ["LVEDVOLUME", "CVP"]
    code, _, err = run(capsys, "plan", "--model", model, "--query", "count:TRUE",
                       "--query-nodes", "LVEDVOLUME")
    assert code == 2 and "LVEDVOLUME" in err and "TRUE" in err
    # a state no node has: named, with states that do exist
    code, _, err = run(capsys, "plan", "--model", model, "--query", "count:MAYBE")
    assert code == 2 and "'MAYBE'" in err and "NORMAL" in err and len(err.splitlines()) == 1


def test_audit_json_worst_is_json(capsys):
    code, out, err = run(capsys, "audit", *SMALL, "--mechanism", "group", "--json")
    assert code == 0, err
    worst = json.loads(out)["worst"]
    assert set(worst) == {"pair", "theta", "scenario", "epsilon", "output"}
    assert isinstance(worst["pair"], list) and len(worst["pair"]) == 2
    assert all(isinstance(s, dict) for s in worst["pair"])
    assert isinstance(worst["theta"], int) and isinstance(worst["scenario"], str)
    assert isinstance(worst["epsilon"], float)


def test_plan_table_names_every_column(capsys):
    code, out, _ = run(capsys, "plan", *SMALL)
    assert code == 0
    header = out.splitlines()[1].split()
    assert header == ["node", "quilt", "|nearby|", "|remote|", "influence", "sigma", "trivial"]


@pytest.mark.parametrize("command", ["plan", "compare", "audit"])
def test_plot_without_matplotlib_fails_before_calibrating(monkeypatch, capsys, tmp_path,
                                                          command):
    from pufferfish_pgm.cli import _commands, _compare, _options

    def never(*args, **kwargs):
        raise AssertionError("calibrated before checking for matplotlib")

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` fails
    for module in (_commands, _compare):
        monkeypatch.setattr(module, "mechanism", never)
    monkeypatch.setattr(_options, "_framework", never)
    code, _, err = run(capsys, command, *SMALL, "--plot", str(tmp_path / "x.png"))
    assert code == 2
    assert "matplotlib" in err and len(err.splitlines()) == 1


def test_version(capsys):
    import pufferfish_pgm

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"pufferfish_pgm {pufferfish_pgm.__version__}"


def test_calibrate_with_the_exact_quilt_mechanism(capsys):
    code, out, err = run(capsys, "calibrate", *SMALL, "--mechanism", "exact-quilt", "--json")
    assert code == 0, err
    quilt = json.loads(out)["scale"]
    code, out, _ = run(capsys, "calibrate", *SMALL, "--mechanism", "mqm", "--json")
    assert 0 < quilt <= json.loads(out)["scale"]   # never noisier than MQM


ORDONEZ = DATA_REAL


def _log(tmp_path: Path) -> Path:
    """Two users, three whole days each (the first and last calendar days are dropped)."""
    rows = ["user,start,end,state"]
    for user in ("ann", "bob"):
        for day in range(1, 6):
            rows += [f"{user},2024-01-0{day} 00:00,2024-01-0{day} 07:00,sleep",
                     f"{user},2024-01-0{day} 07:00,2024-01-0{day} 09:00,walk",
                     f"{user},2024-01-0{day} 09:00,2024-01-0{day + 1} 00:00,sit"]
    path = tmp_path / "log.csv"
    path.write_text("\n".join(rows) + "\n")
    return path


def test_release_from_event_logs_gives_one_profile_per_day(tmp_path, capsys):
    code, out, err = run(capsys, "release", "--events", str(_log(tmp_path)), "--slot", "1h",
                         "--window", "6h", "--query", "count:walk", "--seed", "1", "--json")
    assert code == 0, err
    result = json.loads(out)
    # days 2, 3 and 4 of each user; 24 one-hour slots in 4 windows of 6
    assert result["days"] == [[u, f"2024-01-0{d}"] for u in ("ann", "bob") for d in (2, 3, 4)]
    assert result["coordinates"] == [f"count(walk)@[{a},{a + 6})" for a in (0, 6, 12, 18)]
    assert np.array(result["values"]).shape == (6, 4)


def test_release_from_event_logs_with_time_of_day_chains(tmp_path, capsys):
    # --period 6 at 1h slots: one matrix per 6 hours per user (before: no such option). The
    # log's routine is the same every day, so walking happens only in the 06:00 block and the
    # hourly chain is far more certain of it than the homogeneous one: less noise is needed.
    # (--window 1d, the help's example, raised pandas 3's Pandas4Warning on the day unit)
    common = ["release", "--events", str(_log(tmp_path)), "--slot", "1h", "--window", "1d",
              "--query", "count:walk", "--mechanism", "exact", "--seed", "1", "--json"]
    code, out, err = run(capsys, *common, "--period", "6", "--shrinkage", "1")
    assert code == 0, err
    hourly = json.loads(out)
    code, out, err = run(capsys, *common)
    assert code == 0, err
    assert hourly["scale"] != json.loads(out)["scale"]
    assert np.array(hourly["values"]).shape == (6, 1)
    code, out, err = run(capsys, *common[:-1], "--period", "6", "--shrinkage", "1")
    assert code == 0 and "one time-of-day chain per user and day" in out, err


@pytest.mark.parametrize(("extra", "fragment"), [
    (["--period", "6", "--unit", "window"], "needs --unit day and no --model"),
    (["--shrinkage", "2"], "goes with --period"),
    (["--period", "0"], "period"),
])
def test_bad_period_options_exit_2_with_one_line(tmp_path, capsys, extra, fragment):
    code, _, err = run(capsys, "release", "--events", str(_log(tmp_path)), "--slot", "1h",
                       *extra)
    assert code == 2 and fragment in err and err.count("\n") == 1, err


@pytest.mark.skipif(not (ORDONEZ / "OrdonezA_ADLs.txt").is_file(),
                    reason="the Ordóñez logs are only in ../shared")
def test_release_from_the_ordonez_logs(capsys):
    files = [str(ORDONEZ / "OrdonezA_ADLs.txt"), str(ORDONEZ / "OrdonezB_ADLs.txt")]
    code, out, err = run(capsys, "release", "--events", files[0], "--events", files[1],
                         "--fill", "Idle", "--query", "count:Sleeping")
    assert code == 0, err
    assert "33 days, 144 slots of 10min" in out and "repaired OrdonezA_ADLs.txt" in out
    assert "count(Sleeping)@[0,6)" in out


@pytest.mark.parametrize(("extra", "fragment"), [
    (["--data", "x.csv"], "exactly one of --data"),
    (["--window", "7min"], "whole number of 1h slots"),
    (["--window", "soon"], "not a duration"),
    (["--query", "count:fly"], "count:ACTIVITY"),
])
def test_bad_event_options_exit_2_with_one_line(tmp_path, capsys, extra, fragment):
    code, _, err = run(capsys, "release", "--events", str(_log(tmp_path)), "--slot", "1h",
                       *extra)
    assert code == 2 and fragment in err and err.count("\n") == 1, err


def test_useless_noise_is_said_in_the_summary_and_the_json(capsys):
    # issue 14, new-user item 5: MQM equal to group DP, a scale above the query's range
    code, out, _ = run(capsys, "calibrate", "--length", "6", "--json")
    notes = json.loads(out)["notes"]
    code2, text, _ = run(capsys, "calibrate", "--length", "6")
    assert code == code2 == 0
    assert any("group DP" in n for n in notes) and "group DP" in text


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_the_cli_never_builds_every_pair_as_an_object(capsys):
    # new-user item 6: --length 10**6 with all pairs took 42 s in the CLI (3.4 s in Python)
    from pufferfish_pgm.cli._main import build_parser
    from pufferfish_pgm.cli._options import _framework

    fw = _framework(build_parser().parse_args(["calibrate", "--length", "1000"]))
    assert fw.pair_count == 1000 * 6                                         # 4 states: 6 pairs
    pp.MarkovQuiltMechanism(epsilon=1.0).calibrate(fw, pp.Count("walk"))
    assert fw._explicit is None and fw._index.pairs is None   # white box: no pair objects
    code, out, _ = run(capsys, "calibrate", "--length", "1000")
    assert code == 0 and "(6000 pairs)" in out


def test_a_reader_that_goes_away_ends_the_run_quietly():
    # `pufferfish-pgm plan ... | head -1`: the plan of 3,000 nodes (> 64 kB) hits a closed pipe;
    # this printed "error: BrokenPipeError" and exited 2
    done = subprocess.run(
        ["bash", "-c", f"{sys.executable} -m pufferfish_pgm.cli plan --length 3000 | head -1; "
                       "exit ${PIPESTATUS[0]}"],
        capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("model:") and done.stderr == ""


# ------------------------------------------------ optimal noise: certificates, compare rows

TINY = ["--length", "6"]


def test_optimal_calibrate_out_release_calibration_and_verify(tmp_path, capsys, monkeypatch):
    cert = tmp_path / "optimal.json"
    code, out, err = run(capsys, "calibrate", *TINY, "--mechanism", "optimal", "--out",
                         str(cert), "--json")
    assert code == 0, err
    doc = json.loads(cert.read_text())
    assert doc["scale"] is None and doc["mechanism"]["name"] == "OptimalNoise"
    assert doc["noise"]["type"] == "IntegerNoise"
    csv = tmp_path / "days.csv"
    csv.write_text(",".join(str(t) for t in range(6)) + "\n"
                   + "\n".join([",".join(["walk"] * 6)] * 40) + "\n")
    from pufferfish_pgm.mechanisms import optimal

    def boom(*a, **k):
        raise AssertionError("release --calibration recalibrated")

    monkeypatch.setattr(optimal.OptimalNoiseMechanism, "calibrate", boom)
    code, out, err = run(capsys, "release", *TINY, "--calibration", str(cert), "--data",
                         str(csv), "--seed", "3", "--json")
    assert code == 0, err
    released = json.loads(out)
    assert released["mechanism"] == "OptimalNoise"
    # the certified law through the exact sampler: what Python draws with the same seed
    from pufferfish_pgm.cli._main import build_parser
    from pufferfish_pgm.cli._options import _framework

    fw = _framework(build_parser().parse_args(["verify", str(cert), *TINY]))
    cal = pp.Calibration.from_json(cert.read_text(), fw)
    expected = cal.release([["walk"] * 6] * 40, rng=np.random.default_rng(3)).value
    assert released["values"] == expected.tolist() and len(set(released["values"])) > 1
    code, out, err = run(capsys, "verify", str(cert), *TINY)
    assert code == 0 and "holds" in out and "certified pmf" in out, err


def test_compare_lists_optimal_noise_with_and_without_the_dp_floor(capsys):
    from pufferfish_pgm.mechanisms.optimal import laplace_loss

    code, out, err = run(capsys, "compare", "--length", "12", "--mechanisms",
                         "exact,optimal,optimal+dp", "--dp-epsilon", "1", "--json")
    assert code == 0, err
    rows = {r["mechanism"]: r for r in json.loads(out)["rows"]}
    assert list(rows) == ["exact", "optimal", "optimal+dp"]
    exact, free, floored = rows.values()
    # E|Z| of what is added: discrete Laplace for the count, not the scale itself
    assert exact["mean_abs"] == pytest.approx(laplace_loss(("abs",), exact["scale"]))
    assert exact["mean_abs"] < exact["scale"]
    assert free["scale"] is None and floored["scale"] is None       # not Laplace
    assert free["dp_epsilon"] is None and floored["dp_epsilon"] == 1.0
    assert floored["dp_realised"] <= 1.0 + 1e-9
    assert free["mean_abs"] < floored["mean_abs"] < exact["mean_abs"]
    assert all(r["private"] and r["realised_epsilon"] <= 1.0 + 1e-9 for r in rows.values())
    code, out, err = run(capsys, "compare", *TINY, "--mechanisms", "optimal,optimal+dp")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[1].split()[:4] == ["mechanism", "Laplace", "scale", "E|Z|"]
    assert all(ln.split()[1] == "-" for ln in lines if ln.startswith("optimal"))
    assert "optimal+dp: also plain 2-DP for one record" in out      # default 2 x epsilon


def test_compare_optimal_rows_fail_alone_and_bad_row_names_exit_2(monkeypatch, capsys):
    from pufferfish_pgm.cli import _compare

    class Broken:
        def __init__(self, **kwargs):
            pass

        def calibrate(self, fw, query):
            raise pp.SolverError("the noise LP failed (test)")

    monkeypatch.setattr(_compare, "OptimalNoiseMechanism", Broken)
    code, out, err = run(capsys, "compare", *TINY, "--mechanisms", "group,optimal+dp")
    assert code == 0, err
    assert "SolverError: the noise LP failed (test)" in out
    assert any(ln.startswith("group ") and "FAILED" not in ln for ln in out.splitlines())
    code, _, err = run(capsys, "compare", *TINY, "--mechanisms", "group,bogus")
    assert code == 2 and err.count("\n") == 1 and "bogus" in err and "optimal+dp" in err
    code, _, err = run(capsys, "compare", *TINY, "--dp-epsilon", "1")
    assert code == 2 and err.count("\n") == 1 and "add optimal+dp to --mechanisms" in err


def test_an_impossible_start_state_is_skipped_and_said(tmp_path, capsys):
    # issue 14, new-user item 3: every day starts asleep, so "X_0 = walk" cannot be true; the
    # default pairs (and those of --nodes) leave it out instead of refusing every mechanism
    days = pp.MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], [1.0, 0.0], 6, ("sleep", "walk"))
    model = tmp_path / "days.json"
    pp.save_chain_class(pp.ScenarioClass([days]), model)
    note = "skipped 1 secret(s) impossible under every scenario (nothing to protect): 0=walk"
    code, out, err = run(capsys, "plan", "--model", str(model))
    assert code == 0, err
    assert note in out and "secrets on 5 nodes (5 pairs)" in out
    code, out, err = run(capsys, "calibrate", "--model", str(model), "--mechanism", "exact",
                         "--json")
    assert code == 0, err
    assert any("0=walk" in n for n in json.loads(out)["notes"])
    code, out, err = run(capsys, "audit", "--model", str(model), "--nodes", "0,3", "--scale",
                         "3")
    assert code == 0, err
    assert note in out
    for command in (["plan"], ["audit", "--scale", "3"]):    # JSON names them too
        code, out, err = run(capsys, *command, "--model", str(model), "--json")
        assert code == 0, err
        assert json.loads(out)["skipped_secrets"] == [[0, "walk"]]


def test_json_output_is_strict_json_even_without_a_laplace_scale(tmp_path, capsys):
    # an optimal-noise calibration has no Laplace scale (nan in Python): the CLI must print
    # null, never the non-JSON token NaN
    import json

    from pufferfish_pgm.cli import main
    code = main(["calibrate", "--length", "4", "--mechanism", "optimal", "--json"])
    out = capsys.readouterr().out
    assert code == 0 and "NaN" not in out
    assert json.loads(out)["scale"] is None


# ------------------------------------------------ issue 19, item 7: what a new user hit


def _alarm() -> str:
    from pufferfish_pgm.scenarios import default_model_path

    return str(default_model_path("alarm.bif"))


ALARM_TRUE_NODES = ["LVFAILURE", "HISTORY", "HYPOVOLEMIA", "ERRLOWOUTPUT", "KINKEDTUBE",
                    "DISCONNECT", "INSUFFANESTH", "PULMEMBOLUS", "ANAPHYLAXIS", "ERRCAUTER"]
# ε = 1e9: group DP's scale is 10/1e9, so the discrete Laplace noise is 0 except with
# probability about 2 e^(-1e8): the released values are the true counts
EXACTLY = ["--mechanism", "group", "--epsilon", "1e9", "--seed", "0", "--json"]


def test_release_reads_alarm_states_as_text_and_only_the_columns_the_query_reads(tmp_path,
                                                                                capsys):
    # 7a: pandas read TRUE/FALSE as booleans ("value False is not a state") and every one of
    # the 37 nodes needed a column although count(TRUE) reads 10
    csv = tmp_path / "alarm.csv"
    rows = [["FALSE"] * 10, ["TRUE", "TRUE", "FALSE", "TRUE"] + ["FALSE"] * 6]
    csv.write_text("\n".join(",".join(r) for r in [ALARM_TRUE_NODES, *rows]) + "\n")
    code, out, err = run(capsys, "release", "--model", _alarm(), "--data", str(csv), *EXACTLY)
    assert code == 0, err
    assert json.loads(out)["values"] == [0, 3]
    csv.write_text(",".join(ALARM_TRUE_NODES[:-1]) + "\n" + ",".join(["FALSE"] * 9) + "\n")
    code, _, err = run(capsys, "release", "--model", _alarm(), "--data", str(csv))
    assert code == 2 and err.count("\n") == 1
    assert "no column for node 'ERRCAUTER', which the query count(TRUE) reads" in err
    assert "--query-nodes" in err


def test_release_keeps_state_names_that_look_like_numbers_or_missing_values(tmp_path, capsys):
    # 7a: "007" read as 7, "NA" as NaN, "1.0" as 1.0 by pandas defaults matched no state
    states = ("007", "NA", "1.0")
    chain = pp.MarkovChainScenario(np.full((3, 3), 1 / 3), "stationary", 4, states)
    model = tmp_path / "codes.json"
    pp.save_chain_class(pp.ScenarioClass([chain]), model)
    csv = tmp_path / "codes.csv"
    csv.write_text("0,1,2,3\n007,NA,1.0,NA\nNA,NA,NA,007\n")
    code, out, err = run(capsys, "release", "--model", str(model), "--data", str(csv),
                         "--query", "count:NA", *EXACTLY)
    assert code == 0, err
    assert json.loads(out)["values"] == [2, 3]


def test_compare_on_a_network_leaves_out_exact_quilt_by_default_and_says_why(capsys):
    # 7b: exact-quilt took 482 s on alarm where exact takes 0.02 s, and can only be noisier
    asia = ["--model", str(MODELS / "asia.bif"), "--query", "count:yes"]
    code, out, err = run(capsys, "compare", *asia, "--json")
    assert code == 0, err
    data = json.loads(out)
    names = [r["mechanism"] for r in data["rows"]]
    assert "exact-quilt" not in names and "exact" in names
    assert data["not_run"] and "exact-quilt not run on a network" in data["not_run"][0]
    code, out, _ = run(capsys, "compare", *asia)
    assert "never below exact's" in out and "--mechanisms entry,group,mqm,exact-quilt" in out
    code, out, err = run(capsys, "compare", *asia, "--mechanisms", "exact,exact-quilt",
                         "--json")
    assert code == 0, err
    rows = {r["mechanism"]: r for r in json.loads(out)["rows"]}
    assert rows["exact"]["scale"] <= rows["exact-quilt"]["scale"] * (1 + 1e-6)


def test_compare_shows_each_row_on_a_terminal(monkeypatch, capsys):
    # 7b: rows of minutes ran with no output at all
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    # (--no-progress: the rows' lines only; the exact row's own bar is tested with the
    # progress= tests, tests/mechanisms/test_progress_calibrations.py)
    code, _, err = run(capsys, "compare", *TINY, "--mechanisms", "group,exact",
                       "--no-progress")
    assert code == 0
    lines = err.splitlines()
    assert len(lines) == 2 and lines[0].startswith("[1/2] group ... ")
    assert lines[1].startswith("[2/2] exact ... ") and lines[1].endswith(" s")


def test_a_certificate_checked_without_model_names_its_model(tmp_path, capsys):
    # 7c: "the framework has 2 scenario(s), the certificate was written for 1"
    cert = tmp_path / "asia.json"
    asia = ["--model", str(MODELS / "asia.bif"), "--nodes", "lung", "--query", "count:yes"]
    assert run(capsys, "calibrate", *asia, "--mechanism", "group", "--out", str(cert))[0] == 0
    csv = tmp_path / "x.csv"
    csv.write_text("lung\nyes\n")
    for argv in (["verify", str(cert)], ["release", "--calibration", str(cert), "--data",
                                          str(csv)]):
        code, _, err = run(capsys, *argv)
        assert code == 2 and err.count("\n") == 1, err
        assert "written for the model with scenario(s) 'asia'" in err
        assert "bundled default" in err and "pass --model FILE" in err
    code, out, err = run(capsys, "verify", str(cert), *asia[:4])
    assert code == 0 and "holds" in out, err


def test_event_release_says_what_it_assumes_and_offers_one_chain_per_log(tmp_path, capsys):
    # 7d: "days are independent releases" was said of activities that cross midnight
    log = str(_log(tmp_path))
    common = ["release", "--events", log, "--slot", "1h", "--window", "6h", "--query",
              "count:walk", "--seed", "1"]
    code, out, err = run(capsys, *common)
    assert code == 0, err
    assert "assumed: days are independent under the model" in out and "--unit window" in out
    code, out, err = run(capsys, *common, "--unit", "window", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["unit"] == "window" and np.array(result["values"]).shape == (6, 4)
    assert result["days"] == [[u, f"2024-01-0{d}"] for u in ("ann", "bob") for d in (2, 3, 4)]
    code, out, _ = run(capsys, *common, "--unit", "window")
    assert "one chain per user over the whole log" in out and "72 slots: scale" in out
    code, _, err = run(capsys, *common[:-4], "--window", "5h", "--unit", "window")
    assert code == 2 and "must divide a day" in err


def test_ctrl_c_is_one_line_and_exit_130(monkeypatch, capsys):
    # 7e: a 56-line KeyboardInterrupt traceback
    from pufferfish_pgm import cli
    from pufferfish_pgm.cli import _commands

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(_commands, "calibrate", interrupted)
    monkeypatch.setattr(sys, "argv", ["pufferfish-pgm", "calibrate", *TINY])
    with pytest.raises(SystemExit) as info:
        cli.run()
    assert info.value.code == 130
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "interrupted" in err and "Traceback" not in err


@pytest.mark.parametrize(("rows", "extra", "says", "not_said"), [
    (["start,end,state", "2024-01-01 00:00,2024-01-05 00:00,sleep"], [],
     "header user,start,end,state (a single user's log: add a column user", "assign("),
    (["user,start,end,state", "a,2024-01-01 00:00,2024-01-02 01:00,sleep",
      "a,2024-01-02 02:00,2024-01-05 00:00,sleep"], [], "pass --fill STATE", "fill="),
    (["user,start,end,state", "a,1,2,sleep"], [], "write them as date-times", "pd."),
    (["user,start,end,state"], ["--slot", "7"], "--slot '7' has no unit", "xx"),
])
def test_event_errors_name_command_line_options_not_python(tmp_path, capsys, rows, extra,
                                                           says, not_said):
    # 7g: "add one with events.assign(user='me')" told a command-line user to write Python
    log = tmp_path / "log.csv"
    log.write_text("\n".join(rows) + "\n")
    code, _, err = run(capsys, "release", "--events", str(log), "--slot", "1h", *extra)
    assert code == 2 and err.count("\n") == 1, err
    assert says in err and not_said not in err


def test_memory_budget_advice_names_the_option(capsys, monkeypatch):
    # 7g: "raise it with memory_budget=..." is a Python keyword
    monkeypatch.delenv("PUFFERFISH_PGM_MEMORY_BUDGET", raising=False)
    code, _, err = run(capsys, "calibrate", "--model", str(MODELS / "asia.bif"), "--mechanism",
                       "exact", "--memory-budget", "100")
    assert code == 2 and "--memory-budget" in err and "memory_budget=" not in err


def _imported_after_parsing(argv: list[str], modules: set[str]) -> list[str]:
    """Which of ``modules`` a fresh interpreter has imported after the CLI parsed ``argv``."""
    probe = ("import sys\nfrom pufferfish_pgm.cli import main\ntry:\n    main(sys.argv[1:])\n"
             f"except SystemExit:\n    pass\nprint(sorted({modules!r} & set(sys.modules)))\n")
    done = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True,
                          timeout=120, check=False)
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["calibrate", "--bogus"]])
def test_parsing_imports_nothing_heavy(argv):
    # 7h: --version and argument errors waited for the whole library (5 s); the subcommands
    # (pandas, pgmpy, matplotlib, tqdm) are imported after parsing
    heavy = {"pandas", "pgmpy", "matplotlib", "tqdm", "pufferfish_pgm.cli._commands",
             "pufferfish_pgm.cli._compare"}
    assert _imported_after_parsing(argv, heavy) == "[]"


def test_parsing_imports_no_scipy():
    assert _imported_after_parsing(["--version"], {"scipy"}) == "[]"


def test_version_comes_from_the_installed_package(monkeypatch, capsys):
    # 7h: one source, the distribution's metadata; __version__ only when not installed
    from importlib import metadata

    monkeypatch.setattr(metadata, "version", lambda name: "9.8.7")
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.strip() == "pufferfish_pgm 9.8.7"

    def missing(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "version", missing)
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.strip() == f"pufferfish_pgm {pp.__version__}"


@pytest.mark.parametrize("mechanism", ["mqm", "exact"])
def test_a_billion_steps_is_refused_up_front_in_one_line(capsys, monkeypatch, mechanism):
    # issue 19, new user: --length 10^9 ran until the OS killed it at 20.8 GB. With a 1 GB
    # budget the sizes refuse it before any T-long structure exists (MQM: the table of
    # possible states, 10^9 x (2k + 120) bytes = 119 GiB; exact: its forward count rows)
    monkeypatch.setenv("PUFFERFISH_PGM_MEMORY_BUDGET", "1GB")
    code = main(["calibrate", "--mechanism", mechanism, "--length", "1000000000"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "1,000,000,000" in err and "more than the memory budget" in err


def test_plan_of_a_long_chain_prints_node_classes(capsys):
    # issue 19: plan listed one row per step (10^7 rows at --length 10^7); a chain's plan is a
    # few dozen node classes, the middle one a range of steps sharing one quilt shape
    assert main(["plan", "--length", "1000000", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["plan"]
    assert len(rows) < 400
    middle = [r for r in rows if isinstance(r["node"], str)]
    assert middle and all(".." in r["node"] for r in middle)
    assert max(r["sigma"] for r in rows) == pytest.approx(159.295, abs=1e-3)


def test_an_ambiguous_date_order_is_a_warning_not_a_repair(tmp_path, capsys):
    # 01/02/2024-style dates where no day exceeds 12 are read month first with an
    # AmbiguousDateWarning; the CLI used to print every warning as "repaired ..."
    text = _log(tmp_path).read_text().replace("2024-01-0", "01/0").replace(" 00:00", "/2024 00:00")
    text = text.replace(" 07:00", "/2024 07:00").replace(" 09:00", "/2024 09:00")
    path = tmp_path / "us-dates.csv"
    path.write_text(text)
    code, out, err = run(capsys, "release", "--events", str(path), "--slot", "1h",
                         "--query", "count:walk", "--seed", "1")
    assert code == 0, err
    assert "warning (AmbiguousDateWarning)" in out and "repaired" not in out
