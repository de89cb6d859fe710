"""``progress=`` on the long calibrations: exact Laplace (stored and streamed), optimal noise and
the exact quilt search report a monotone (done, total) stream that ends at done == total, with
the same calibration as without it; the fast mechanisms do not take the keyword."""

from __future__ import annotations

import inspect
import sys

import pytest

import pufferfish_pgm as pp
from pufferfish_pgm.errors import ParameterTypeError
from pufferfish_pgm.mechanisms._engine import MECHANISM_ORDER, mechanism

pytestmark = pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")

LONG = {"ExactLaplace", "OptimalNoise", "ExactQuilt", "MarkovQuilt"}


def _chain(length: int = 30) -> pp.Framework:
    return pp.Framework(pp.MarkovChainScenario([[0.8, 0.2], [0.3, 0.7]], "stationary", length))


def _two_chains(length: int = 40) -> pp.Framework:
    return pp.Framework(pp.ScenarioClass([
        pp.MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], [0.5, 0.5], length),
        pp.MarkovChainScenario([[0.8, 0.2], [0.3, 0.7]], [0.3, 0.7], length)]))


def _recorded(mech: pp.Mechanism, fw: pp.Framework, query: object) -> tuple[object, list]:
    seen: list = []
    cal = mech.calibrate(fw, query, progress=lambda done, total: seen.append((done, total)))
    return cal, seen


def _check_stream(seen: list) -> None:
    """Monotone done and total, done <= total, done == total only at the last call."""
    assert seen, "no progress was reported"
    dones, totals = [d for d, _ in seen], [t for _, t in seen]
    assert dones == sorted(dones) and totals == sorted(totals), seen
    assert all(0 <= d < t for d, t in seen[:-1]), seen
    assert seen[-1][0] == seen[-1][1] > 0


def test_exact_stored_path_reports_and_calibrates_the_same() -> None:
    fw, mech = _chain(), pp.ExactLaplaceMechanism(epsilon=1.0, streaming=False)
    cal, seen = _recorded(mech, fw, pp.Count(1))
    _check_stream(seen)
    assert len(seen) > 10   # the laws, W∞ and every evaluation of the bisection
    plain = mech.calibrate(fw, pp.Count(1))
    assert cal.scale == plain.scale and cal.evidence == plain.evidence


def test_exact_streamed_path_reports_through_the_streamed_engine() -> None:
    fw, mech = _two_chains(), pp.ExactLaplaceMechanism(epsilon=1.0, streaming=True)
    cal, seen = _recorded(mech, fw, pp.Count(1))
    assert cal.evidence.streamed
    _check_stream(seen)
    assert len(seen) > 1     # the engine's own steps, not only the end
    assert cal.scale == mech.calibrate(fw, pp.Count(1)).scale


def test_no_noise_needed_still_ends_the_stream() -> None:
    fw = _chain(5)     # every state weighs 1: F is the constant 5, released as it is
    cal, seen = _recorded(pp.ExactLaplaceMechanism(epsilon=1.0), fw,
                          pp.LinearQuery({0: 1, 1: 1}))
    assert cal.scale == 0.0
    _check_stream(seen)


def test_optimal_noise_reports_lp_rounds_and_the_laplace_comparison() -> None:
    fw, mech = _chain(), pp.OptimalNoiseMechanism(epsilon=1.0)
    cal, seen = _recorded(mech, fw, pp.Count(1))
    _check_stream(seen)
    # more steps than the Laplace comparison alone: one per LP round and per audit
    _, laplace = _recorded(pp.ExactLaplaceMechanism(epsilon=1.0), fw, pp.Count(1))
    assert len(seen) >= len(laplace) + cal.evidence.lp_rounds + 1
    assert cal.noise == mech.calibrate(fw, pp.Count(1)).noise


@pytest.mark.parametrize("cells", [None, 1])   # whole-chain laws; the quilt search
def test_exact_quilt_reports_its_bisection_or_its_classes(cells: int | None) -> None:
    fw = _chain()
    mech = pp.ExactQuiltMechanism(epsilon=1.0, **({} if cells is None
                                                 else {"max_chain_cells": cells}))
    cal, seen = _recorded(mech, fw, pp.Count(1))
    _check_stream(seen)
    if cells is not None:    # a step per class searched and per class re-checked, at least
        assert len(seen) >= 2 * cal.evidence.classes
    assert cal.scale == mech.calibrate(fw, pp.Count(1)).scale


@pytest.mark.parametrize("name", ["exact", "optimal", "exact-quilt"])
def test_bad_progress_values_are_refused(name: str) -> None:
    with pytest.raises(ParameterTypeError, match="progress must be .* got the str 'bar'"):
        mechanism(name, 1.0).calibrate(_chain(8), pp.Count(1), progress="bar")


def test_true_without_tqdm_prints_lines_on_stderr(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setitem(sys.modules, "tqdm", None)    # `import tqdm` raises ImportError
    pp.ExactLaplaceMechanism(epsilon=1.0, streaming=False).calibrate(
        _chain(), pp.Count(1), progress=True)
    lines = capsys.readouterr().err.splitlines()
    assert lines[-1].startswith("exact Laplace: 100 % (")
    assert len(lines) <= 12      # a line per tenth, not per step


def test_only_the_long_calibrations_take_progress() -> None:
    # no accepted-and-ignored keyword: fast mechanisms refuse it as Python refuses any unknown
    for name in MECHANISM_ORDER:
        mech = mechanism(name, 1.0)
        takes = "progress" in inspect.signature(mech.calibrate).parameters
        assert takes == (mech.name in LONG), mech.name


@pytest.mark.parametrize("argv", [
    ["calibrate", "--length", "12", "--mechanism", "exact"],
    ["compare", "--length", "12", "--mechanisms", "group,exact"],
])
def test_the_cli_shows_progress_with_the_flag_only(argv: list, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture) -> None:
    from pufferfish_pgm.cli import main

    monkeypatch.setitem(sys.modules, "tqdm", None)    # plain lines: easy to read back
    assert main([*argv, "--progress"]) == 0
    shown = capsys.readouterr()
    assert "exact Laplace: 100 % (" in shown.err and "exact Laplace" not in shown.out
    assert main(argv) == 0                            # stderr is not a terminal here
    assert main([*argv, "--no-progress"]) == 0
    assert capsys.readouterr().err == ""
