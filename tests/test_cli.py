"""The command line: every subcommand on the bundled default, --json, and bad-input exits."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pufferfish_pgm.cli import main

MODELS = Path(__file__).resolve().parents[1] / "models"
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
    assert names == ["entry", "group", "mqm", "wasserstein", "kantorovich",
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
])
def test_bad_input_exits_2_with_one_line(capsys, argv, fragment):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("error:"), err
    assert fragment in err
    assert "Traceback" not in err


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
