"""The ``progress=`` helper (pufferfish_pgm._progress): what a user may pass and what it calls."""

from __future__ import annotations

import io
import sys

import pytest

from pufferfish_pgm._progress import TextProgress, Ticker, as_progress
from pufferfish_pgm.errors import ParameterTypeError


def test_off_values_give_no_reporter() -> None:
    assert as_progress(None) is None
    assert as_progress(False) is None


def test_a_callable_is_used_as_is() -> None:
    def show(done: int, total: int) -> None:
        pass

    assert as_progress(show) is show


@pytest.mark.parametrize("bad", ["yes", 1, 0, 2.5, [print]])
def test_other_values_are_refused_by_name(bad: object) -> None:
    with pytest.raises(ParameterTypeError, match="progress must be None, True, False or a "
                                                 "callable") as err:
        as_progress(bad)
    assert repr(bad) in str(err.value)


def test_true_gives_a_tqdm_bar_when_tqdm_is_there(capsys: pytest.CaptureFixture) -> None:
    pytest.importorskip("tqdm")
    show = as_progress(True, "exact")
    assert show is not None and not isinstance(show, TextProgress)
    for done in range(5):
        show(done, 4 if done < 4 else 4)
    assert "exact" in capsys.readouterr().err


def test_true_without_tqdm_falls_back_to_lines_on_stderr(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    monkeypatch.setitem(sys.modules, "tqdm", None)    # `import tqdm` now raises ImportError
    show = as_progress(True, "optimal")
    assert isinstance(show, TextProgress)
    for done in range(101):
        show(done, 100)
    lines = capsys.readouterr().err.splitlines()
    # one line at 0 % and at each tenth: 0, 10, ..., 100 %
    assert lines == [f"optimal: {10 * k} % ({10 * k}/100)" for k in range(11)]


def test_text_lines_follow_a_growing_total() -> None:
    out = io.StringIO()
    show = TextProgress("x", out)
    for done, total in [(1, 2), (2, 10), (3, 10), (10, 10)]:
        show(done, total)
    # 50 %, then 20 % (below the tenth shown: no line), 30 % (no line either), 100 %
    assert out.getvalue().splitlines() == ["x: 50 % (1/2)", "x: 100 % (10/10)"]


def _stream(steps: list) -> None:
    """Monotone (done, total), done <= total, and only the last call has done == total."""
    assert steps, "nothing was reported"
    dones, totals = [d for d, _ in steps], [t for _, t in steps]
    assert dones == sorted(dones) and totals == sorted(totals)
    assert all(0 <= d <= t for d, t in steps)
    assert steps[-1][0] == steps[-1][1]
    assert all(d < t for d, t in steps[:-1])


def test_a_ticker_never_finishes_before_finish() -> None:
    seen: list = []
    steps = Ticker(lambda d, t: seen.append((d, t)), total=3)
    for _ in range(7):        # more work than planned: the total grows
        steps.tick()
    steps.plan(5)
    steps.tick(2)
    steps.finish()
    _stream(seen)
    assert seen[-1] == (13, 13)     # 7 ticks left total 8; planned 5 more: 13


def test_a_part_reports_an_inner_engine_inside_the_outer_stream() -> None:
    seen: list = []
    steps = Ticker(lambda d, t: seen.append((d, t)), total=2)
    steps.tick()
    inner = steps.part()
    for done in range(4):
        inner(done, 3)         # its own end (3, 3) is not the outer end
    steps.tick()
    steps.finish()
    _stream(seen)
    assert (4, 5) in seen      # inner (3, 3) is outer (1 + 3, 1 + 3 + 1)


def test_a_silent_ticker_does_nothing() -> None:
    steps = Ticker(None, total=4)
    steps.tick()
    steps.part()(3, 3)
    steps.finish()
    assert not steps.active and steps.done == 0


def test_exact_inference_shows_progress_per_conditional() -> None:
    from helpers import load_network

    import pufferfish_pgm as pp

    engine = pp.ExactInference(load_network("asia"))
    seen: list = []
    out = engine.query(["lung", "smoke", "dysp"], joint=False,
                       show_progress=lambda d, t: seen.append((d, t)))
    assert sorted(out) == ["dysp", "lung", "smoke"]
    assert seen == [(1, 3), (2, 3), (3, 3)]     # one step per marginal
    seen.clear()
    engine.query(["lung", "smoke"], show_progress=lambda d, t: seen.append((d, t)))
    assert seen == [(1, 1)]                      # one joint: one step
    with pytest.raises(ParameterTypeError, match="progress must be"):
        engine.query(["lung"], show_progress="yes")


def test_exact_inference_show_progress_true_draws_on_stderr(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    from helpers import load_network

    import pufferfish_pgm as pp

    monkeypatch.setitem(sys.modules, "tqdm", None)
    pp.ExactInference(load_network("asia")).query(["lung", "smoke"], joint=False,
                                                  show_progress=True)
    assert capsys.readouterr().err.splitlines()[-1] == "query: 100 % (2/2)"
