"""``release --events`` for a cohort (issue 25 item 5): one chain fitted from the intervals of
a streamed CSV or Parquet log, one calibration, per-user answers written batch by batch or
daily totals drawn once; equal to the slotted path computed by hand with the same seeds."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pufferfish_pgm as pp
from pufferfish_pgm.cli import main
from pufferfish_pgm.cli._cohort import ROW_WORK_BYTES

WINDOW = ["--slot", "1h", "--window", "6h", "--query", "count:walk", "--seed", "7"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _events(users: int = 5, days: int = 6) -> pd.DataFrame:
    """Users walk a different number of hours a day (rows grouped by user)."""
    rows = []
    for u in range(users):
        for d in range(days):
            day = pd.Timestamp("2024-01-01") + pd.Timedelta(days=d)
            walk = 1 + (u + d) % 4
            rows += [(f"u{u}", day, day + pd.Timedelta(hours=7), "sleep"),
                     (f"u{u}", day + pd.Timedelta(hours=7),
                      day + pd.Timedelta(hours=7 + walk), "walk"),
                     (f"u{u}", day + pd.Timedelta(hours=7 + walk), day + pd.Timedelta(days=1),
                      "sit")]
    return pd.DataFrame(rows, columns=["user", "start", "end", "state"])


def _csv(tmp_path: Path, log: pd.DataFrame | None = None) -> Path:
    path = tmp_path / "log.csv"
    (_events() if log is None else log).to_csv(path, index=False)
    return path


def _calibration(log: pd.DataFrame) -> pp.Calibration:
    """By hand on the slots: the chain fitted on every (user, day), the windowed count."""
    slots = pp.sequences_from_events(log, slot="1h")
    chain = pp.transition_counts(slots).chain(pseudocount=0.5, initial="stationary",
                                              name="cohort")
    return pp.MarkovQuiltMechanism(epsilon=1.0).calibrate(pp.Framework(chain),
                                                          pp.WindowedCount("walk", 6))


def test_daily_totals_equal_the_slotted_release_by_hand(tmp_path, capsys):
    log = _events()
    code, out, err = run(capsys, "release", "--events", str(_csv(tmp_path, log)), "--theta",
                         "cohort", "--aggregate", *WINDOW, "--json")
    assert code == 0, err
    got = json.loads(out)
    cal = _calibration(log)
    exact = cal.answers(pp.sequences_from_events(log, slot="1h")).groupby(level="day").sum()
    want = cal.add_noise(exact, np.random.SeedSequence(7).spawn(1)[0])
    assert got["scale"] == cal.scale and got["theta"] == "cohort"
    assert got["days"] == [f"{d:%Y-%m-%d}" for d in want.index]     # 2 .. 5 January
    assert got["values"] == want.to_numpy().tolist()
    assert got["coordinates"] == [f"count(walk)@[{a},{a + 6})" for a in (0, 6, 12, 18)]


def test_cohort_time_of_day_chain_equals_the_slotted_fit_by_hand(tmp_path, capsys):
    # --period 6: pass 1 counts per block of 6 start slots straight from the intervals
    # (before: the cohort path had one matrix); the scale equals the calibration of the
    # time-of-day chain fitted on the slots by hand
    log = _events()
    code, out, err = run(capsys, "release", "--events", str(_csv(tmp_path, log)), "--theta",
                         "cohort", "--aggregate", *WINDOW, "--period", "6", "--shrinkage",
                         "2", "--json")
    assert code == 0, err
    slots = pp.sequences_from_events(log, slot="1h")
    chain = pp.transition_counts(slots, period=6).chain(
        pseudocount=0.5, initial="empirical", name="cohort", shrinkage=2.0)
    assert chain.time_varying
    cal = pp.MarkovQuiltMechanism(epsilon=1.0).calibrate(pp.Framework(chain),
                                                         pp.WindowedCount("walk", 6))
    assert json.loads(out)["scale"] == cal.scale


def test_per_user_rows_are_written_batch_by_batch_with_child_seeds(tmp_path, capsys):
    log = _events()
    out_file = tmp_path / "noisy.csv"
    budget = 2 * ROW_WORK_BYTES * 40            # batches of at most 40 rows: several users
    code, out, err = run(capsys, "release", "--events", str(_csv(tmp_path, log)), "--theta",
                         "cohort", "--output", str(out_file), "--memory-budget", str(budget),
                         *WINDOW, "--json")
    assert code == 0, err
    assert json.loads(out)["rows"] == 5 * 4 and json.loads(out)["users"] == 5
    cal = _calibration(log)
    root = np.random.SeedSequence(7)
    parts = [cal.add_noise(cal.answers(pp.sequences_from_events(batch, slot="1h")),
                           root.spawn(1)[0])
             for batch in pp.scenarios.event_batches(_csv(tmp_path, log), batch_rows=40)]
    assert len(parts) > 1
    want = pd.concat(parts)
    written = pd.read_csv(out_file)
    assert written["user"].tolist() == [u for u, _ in want.index]
    assert written.iloc[:, 2:].to_numpy().tolist() == want.to_numpy().tolist()


def test_a_parquet_folder_streams_by_default_and_equals_the_csv(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    log = _events(users=6)
    folder = tmp_path / "log"
    folder.mkdir()
    for i, part in enumerate(np.array_split(np.arange(len(log)), 3)):   # users cut across files
        log.iloc[part].to_parquet(folder / f"part{i}.parquet", index=False)
    code, out, err = run(capsys, "release", "--events", str(folder), "--aggregate", *WINDOW,
                         "--json")
    assert code == 0, err
    code, csv_out, err = run(capsys, "release", "--events", str(_csv(tmp_path, log)),
                             "--theta", "cohort", "--aggregate", *WINDOW, "--json")
    assert code == 0, err
    assert json.loads(out)["values"] == json.loads(csv_out)["values"]
    noisy = tmp_path / "noisy.parquet"
    code, _, err = run(capsys, "release", "--events", str(folder), "--output", str(noisy),
                       *WINDOW)
    assert code == 0, err
    assert pd.read_parquet(noisy).shape == (6 * 4, 2 + 4)      # user, day, four windows


def test_progress_is_one_line_per_batch_on_stderr_only_when_asked(tmp_path, capsys):
    path = str(_csv(tmp_path))
    common = ["release", "--events", path, "--theta", "cohort", "--aggregate", *WINDOW]
    code, _, err = run(capsys, *common)
    assert code == 0 and err == ""                   # stderr is not a terminal here
    code, _, err = run(capsys, *common, "--progress")
    lines = err.splitlines()
    assert code == 0 and lines and all(" batch " in line for line in lines)
    assert any(line.startswith("pass 1 (fit)") for line in lines)
    assert any(line.startswith("pass 2 (answers)") for line in lines)


def test_a_model_skips_the_fit(tmp_path, capsys):
    log = _events()
    cal = _calibration(log)
    model = tmp_path / "chain.json"
    pp.scenarios.save_chain_class(cal.framework.scenarios, model)
    code, out, err = run(capsys, "release", "--events", str(_csv(tmp_path, log)), "--theta",
                         "cohort", "--model", str(model), "--aggregate", *WINDOW, "--json",
                         "--progress")
    assert code == 0, err
    assert "pass 1" not in err and json.loads(out)["scale"] == cal.scale
    code, _, err = run(capsys, "release", "--events", str(_csv(tmp_path, log)), "--theta",
                       "cohort", "--model", str(model), "--aggregate", "--slot", "2h",
                       "--window", "6h")
    assert code == 2 and "must be a chain of one day of 2h slots (12 steps)" in err


def test_a_user_alone_over_the_memory_cap_is_refused_before_any_output(tmp_path, capsys):
    out_file = tmp_path / "noisy.csv"
    budget = 2 * ROW_WORK_BYTES * 10      # a user has 18 rows
    code, _, err = run(capsys, "release", "--events", str(_csv(tmp_path)), "--theta", "cohort",
                       "--output", str(out_file), "--memory-budget", str(budget), *WINDOW)
    assert code == 2 and err.count("\n") == 1, err
    assert "the rows of user 'u0'" in err and "--memory-budget" in err
    assert not out_file.exists()


def test_parquet_without_pyarrow_says_what_to_install(tmp_path, capsys, monkeypatch):
    (tmp_path / "log.parquet").write_bytes(b"PAR1")
    monkeypatch.setitem(sys.modules, "pyarrow.dataset", None)     # import fails
    code, _, err = run(capsys, "release", "--events", str(tmp_path / "log.parquet"),
                       "--aggregate")
    assert code == 2 and err.count("\n") == 1, err
    assert "pip install 'pufferfish_pgm[arrow]'" in err


@pytest.mark.parametrize(("extra", "fragment"), [
    (["--events", "other.csv"], "give one --events path"),
    (["--unit", "window"], "--unit window needs --theta user"),
    ([], "give --output FILE.csv or FILE.parquet, or --aggregate"),
    (["--aggregate", "--slot", "7min"], "divides a day into whole slots"),
    (["--aggregate", "--slot", "7"], "must be a duration with a unit"),
    (["--aggregate", "--window", "5h", "--slot", "2h"], "whole number of 2h slots"),
    (["--aggregate", "--query", "count:fly"], "count:ACTIVITY, one of sit, sleep, walk"),
    (["--aggregate", "--calibration", "cal.json"], "--calibration is not read"),
])
def test_bad_cohort_options_exit_2_with_one_line(tmp_path, capsys, extra, fragment):
    code, _, err = run(capsys, "release", "--events", str(_csv(tmp_path)), "--theta", "cohort",
                       *extra)
    assert code == 2 and fragment in err and err.count("\n") == 1, err


def test_output_and_progress_belong_to_the_cohort(tmp_path, capsys):
    code, _, err = run(capsys, "release", "--events", str(_csv(tmp_path)), "--output",
                       str(tmp_path / "x.csv"), *WINDOW)
    assert code == 2 and "--output goes with --theta cohort" in err


def test_a_calibration_is_not_silently_ignored_per_user(tmp_path, capsys):
    # --theta user fits and calibrates each user's chain: a --calibration was ignored before
    cert = tmp_path / "cal.json"
    cert.write_text("{}")
    code, _, err = run(capsys, "release", "--events", str(_csv(tmp_path)), "--calibration",
                       str(cert), *WINDOW)
    assert code == 2 and "--calibration is not read with --events" in err
    assert err.count("\n") == 1, err


def test_an_unsorted_log_read_in_several_batches_is_refused_naming_the_user(tmp_path, capsys):
    log = _events().sample(frac=1.0, random_state=1)
    code, _, err = run(capsys, "release", "--events", str(_csv(tmp_path, log)), "--theta",
                       "cohort", "--aggregate", "--memory-budget",
                       str(2 * ROW_WORK_BYTES * 40), *WINDOW)
    assert code == 2 and "has rows in two places" in err and "sort the dataset by user" in err
