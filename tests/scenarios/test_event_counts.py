"""Counts straight from event intervals (issue 25 item 3): ``event_counts`` equals Count and
WindowedCount evaluated on the slots ``sequences_from_events`` builds, for both slot rules, on
random logs (hypothesis) and on both Ordóñez homes; gap errors are the slotted path's."""

from __future__ import annotations

import warnings
from datetime import datetime, timedelta

import numpy as np
import pandas as pd
import pytest
from helpers import DATA_REAL
from hypothesis import given, settings
from hypothesis import strategies as st

import pufferfish_pgm as pp
from pufferfish_pgm.errors import InvalidDataError, InvalidParameterError, ParameterTypeError
from pufferfish_pgm.scenarios import (
    event_counts,
    event_transition_counts,
    read_ordonez,
    sequences_from_events,
)

DATA = DATA_REAL
HOMES = {h: DATA / f"Ordonez{h}_ADLs.txt" for h in "AB"}


def _slotted(events: pd.DataFrame, count: object, width: int | None, **options) -> object:
    """The reference: the release's own answers on the table of slots."""
    wide = sequences_from_events(events, **options)
    mc = pp.MarkovChainScenario(np.full((2, 2), 0.5), "stationary", wide.shape[1],
                                states=[count, "__other__"])
    query = pp.Count(count) if width is None else pp.WindowedCount(count, width)
    cal = pp.Calibration(mechanism="by hand", epsilon=1.0, scale=0.0, query=query,
                         framework=pp.Framework(mc))
    return cal.answers(wide.where(wide == count, "__other__"))


def _check(events: pd.DataFrame, count: object, width: int | None, **options) -> None:
    got = event_counts(events, count, width=width, **options)
    want = _slotted(events, count, width, **options)
    if width is None:
        pd.testing.assert_series_equal(got, want)
    else:
        pd.testing.assert_frame_equal(got, want)


def test_the_docstring_log_by_hand() -> None:
    events = pd.DataFrame({
        "user": ["ann"] * 4,
        "start": ["2024-01-01 22:00", "2024-01-02 08:30", "2024-01-02 09:30", "2024-01-02 19:00"],
        "end": ["2024-01-02 07:00", "2024-01-02 09:15", "2024-01-02 13:30", "2024-01-03 07:00"],
        "state": ["sleep", "eat", "work", "sleep"]})
    # midpoint, 6 h slots: sleep, eat, idle, sleep; majority: sleep, work, idle, sleep
    assert event_counts(events, "sleep", slot="6h", fill="idle").tolist() == [2]
    assert event_counts(events, "eat", slot="6h", fill="idle").tolist() == [1]
    assert event_counts(events, "idle", slot="6h", fill="idle").tolist() == [1]
    assert event_counts(events, "work", slot="6h", fill="idle", rule="majority").tolist() == [1]
    # minutes of sleep 00:00-07:00 and 19:00-24:00 = 420 + 300 = 720 (both rules)
    for rule in ("midpoint", "majority"):
        assert event_counts(events, "sleep", slot="1min", fill="-", rule=rule).tolist() == [720]
    for rule in ("midpoint", "majority"):
        for count, width in (("sleep", None), ("work", 60), ("idle", 7), ("nothing", 100)):
            _check(events, count, width, slot="1min", fill="idle", rule=rule)
    with pytest.raises(InvalidDataError) as slotted:
        sequences_from_events(events, slot="6h")
    with pytest.raises(InvalidDataError) as counted:
        event_counts(events, "sleep", slot="6h")
    assert str(counted.value) == str(slotted.value)     # the same message, naming the slot


@st.composite
def logs(draw: st.DrawFn) -> list[tuple[int, int, str]]:
    unit = draw(st.sampled_from([60, 300, 1, 7]))    # coarse grids make ties likely
    n = draw(st.integers(1, 30))
    t = draw(st.integers(0, 86_400 * 2 // unit)) * unit
    rows = []
    for _ in range(n):
        t += draw(st.integers(0, 180 * 60 // unit)) * unit
        length = draw(st.integers(0, 900 * 60 // unit)) * unit     # empty intervals too
        rows.append((t, t + length, draw(st.sampled_from("abc"))))
        t += length
    return rows


@settings(max_examples=80)
@given(st.lists(logs(), min_size=1, max_size=3), st.sampled_from([60, 600, 1800, 21_600]),
       st.sampled_from(["midpoint", "majority"]), st.sampled_from(["a", "b", "-"]),
       st.sampled_from([None, "-", "a"]), st.sampled_from([None, 1, 5, 24]))
def test_interval_path_equals_the_slotted_path(users, slot, rule, count, fill, width) -> None:
    origin = datetime(2024, 1, 1)
    log = pd.DataFrame([(f"user{i}", origin + timedelta(seconds=s), origin + timedelta(seconds=e),
                         a) for i, rows in enumerate(users) for s, e, a in rows],
                       columns=["user", "start", "end", "state"])
    log = log.sample(frac=1.0, random_state=len(log))          # row order must not matter
    per_day = 86_400 // slot
    width = None if width is None else min(width, per_day)
    options = {"slot": f"{slot}s", "fill": fill, "rule": rule}
    try:
        want = _slotted(log, count, width, **options)
    except InvalidDataError as err:                            # no whole day, or a gap
        with pytest.raises(InvalidDataError) as got:
            event_counts(log, count, width=width, **options)
        assert str(got.value) == str(err)
        return
    got = event_counts(log, count, width=width, **options)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert list(got.index) == list(want.index)


@pytest.fixture(scope="module")
def homes() -> dict[str, pd.DataFrame]:
    if not all(p.is_file() for p in HOMES.values()):
        pytest.skip(f"the Ordóñez ADL files are not in {DATA}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # the repairs are reported; checked in test_events
        return {h: read_ordonez(p, repair=True) for h, p in HOMES.items()}


@pytest.mark.parametrize("home", ["A", "B"])
@pytest.mark.parametrize("rule", ["midpoint", "majority"])
def test_both_ordonez_homes(homes, home, rule) -> None:
    log = homes[home]
    for slot, width in (("1min", None), ("1min", 60), ("10min", 6), ("1h", None)):
        for count in sorted(set(log["state"]))[:4] + ["Idle"]:
            _check(log, count, width, slot=slot, fill="Idle", rule=rule)


def test_bad_arguments() -> None:
    events = pd.DataFrame({"user": ["u"], "start": ["2024-01-01 00:00"],
                           "end": ["2024-01-05 00:00"], "state": ["a"]})
    assert event_counts(events, "a", slot="1h").tolist() == [24, 24]   # 2 and 3 January
    with pytest.raises(InvalidParameterError, match="width must be 1 .. 24"):
        event_counts(events, "a", slot="1h", width=25)
    with pytest.raises(ParameterTypeError, match="width must be a whole number"):
        event_counts(events, "a", slot="1h", width=2.5)
    with pytest.raises(InvalidParameterError, match="rule must be one of"):
        event_counts(events, "a", slot="1h", rule="mode")
    with pytest.raises(InvalidParameterError, match="four different columns"):
        event_counts(events, "a", slot="1h", user="state")
    # a column name that is not hashable: the error sequences_from_events gives, not a raw
    # TypeError from building the set of names
    with pytest.raises(ParameterTypeError, match=r"user= must be a column name, got the list"):
        event_counts(events, "a", slot="1h", user=["user"])
    with pytest.raises(ParameterTypeError, match=r"state= must be a column name"):
        event_transition_counts(events, slot="1h", state={"a": 1})


def test_a_user_with_only_empty_intervals_is_no_user() -> None:
    # the slotted path raised IndexError (names were per user, rows per user with an interval)
    events = pd.DataFrame({"user": ["amy", "bob"], "start": ["2024-01-01", "2024-01-01"],
                           "end": ["2024-01-01", "2024-01-05"], "state": ["a", "a"]})
    wide = sequences_from_events(events, slot="6h")
    assert list(wide.index.get_level_values(0)) == ["bob", "bob"]
    assert event_counts(events, "a", slot="6h").tolist() == [4, 4]


# ------------------------------------------------------------------- Parquet in batches (item 5)

def _log(users: int, days: int = 4) -> pd.DataFrame:
    """A synthetic log: every user alternates 'a' and 'b' in intervals of 1 .. 5 hours."""
    rng = np.random.default_rng(users)
    rows = []
    for u in range(users):
        t = pd.Timestamp("2024-01-01") + pd.Timedelta(minutes=int(rng.integers(0, 600)))
        stop = pd.Timestamp("2024-01-01") + pd.Timedelta(days=days)
        while t < stop:
            length = pd.Timedelta(minutes=int(rng.integers(60, 300)))
            rows.append((f"u{u:03d}", t, t + length, "ab"[len(rows) % 2]))
            t += length
    return pd.DataFrame(rows, columns=["user", "start", "end", "state"])


def test_batches_hold_whole_users_and_sum_to_the_whole_log(tmp_path) -> None:
    pytest.importorskip("pyarrow")
    log = _log(12)
    folder = tmp_path / "log"
    folder.mkdir()
    for i, part in enumerate(np.array_split(np.arange(len(log)), 3)):   # users cut across files
        log.iloc[part].to_parquet(folder / f"part{i}.parquet", index=False)
    batches = list(pp.scenarios.event_batches(folder, batch_rows=7))
    users = [set(b["user"]) for b in batches]
    assert sum(len(u) for u in users) == 12 and set().union(*users) == set(log["user"])
    got = pd.concat([event_counts(b, "a", slot="10min", width=6) for b in batches])
    pd.testing.assert_frame_equal(got, event_counts(log, "a", slot="10min", width=6),
                                  check_index_type=False)


def test_batches_refuse_a_user_in_two_places() -> None:
    from pufferfish_pgm.scenarios._event_batches import _whole_users

    log = pd.DataFrame({"user": ["a", "b", "a"], "start": [0, 0, 5], "end": [1, 1, 6],
                        "state": ["x", "x", "x"]})
    with pytest.raises(InvalidDataError, match="user 'a' has rows in two places"):
        list(_whole_users([log.iloc[:2], log.iloc[2:]], "user", None))
    with pytest.raises(pp.LimitExceededError, match="user 'a'"):
        list(_whole_users([log.iloc[:1]] * 1, "user", 10))


def test_batches_need_pyarrow_or_say_so(tmp_path) -> None:
    import importlib.util

    if importlib.util.find_spec("pyarrow") is not None:
        pytest.skip("pyarrow is installed")
    (tmp_path / "log.parquet").write_bytes(b"PAR1")
    with pytest.raises(pp.MissingDependencyError, match=r"pufferfish_pgm\[arrow\]"):
        next(pp.scenarios.event_batches(tmp_path / "log.parquet"))


# ------------------------------------------------------- Θ straight from intervals (item 4/5)

def _check_transitions(events: pd.DataFrame, period: int | None = None, **options) -> None:
    from pufferfish_pgm import event_transition_counts

    got = event_transition_counts(events, period=period, **options)
    want = pp.transition_counts(sequences_from_events(events, **options), period=period)
    assert got.states == want.states and got.longest == want.longest
    np.testing.assert_array_equal(got.transitions, want.transitions)
    np.testing.assert_array_equal(got.initial, want.initial)


@settings(max_examples=80)
@given(st.lists(logs(), min_size=1, max_size=3), st.sampled_from([60, 600, 1800, 21_600]),
       st.sampled_from(["midpoint", "majority"]), st.sampled_from([None, "-", "a"]),
       st.sampled_from([None, 1, 2, 7]))
def test_transition_counts_from_intervals_equal_the_slotted_fit(users, slot, rule,
                                                                fill, period) -> None:
    from pufferfish_pgm import event_transition_counts

    origin = datetime(2024, 1, 1)
    log = pd.DataFrame([(f"user{i}", origin + timedelta(seconds=s), origin + timedelta(seconds=e),
                         a) for i, rows in enumerate(users) for s, e, a in rows],
                       columns=["user", "start", "end", "state"])
    options = {"slot": f"{slot}s", "fill": fill, "rule": rule}
    try:
        sequences_from_events(log, **options)
    except InvalidDataError as err:                            # no whole day, or a gap
        with pytest.raises(InvalidDataError) as got:
            event_transition_counts(log, **options)
        assert str(got.value) == str(err)
        return
    # per block of `period` start slots too (the cohort path's time-of-day fit); 7 does not
    # divide 4 (21,600 s slots) nor 144: a short last block
    _check_transitions(log, period=period, **options)


@pytest.mark.parametrize("home", ["A", "B"])
@pytest.mark.parametrize("rule", ["midpoint", "majority"])
def test_transition_counts_of_both_ordonez_homes(homes, home, rule) -> None:
    for slot in ("1min", "10min", "1h"):
        _check_transitions(homes[home], slot=slot, fill="Idle", rule=rule)
        _check_transitions(homes[home], slot=slot, fill="Idle", rule=rule, period=6)


def test_transition_counts_from_intervals_with_given_states() -> None:
    from pufferfish_pgm import event_transition_counts

    log = _log(3)
    got = event_transition_counts(log, slot="10min", states=["b", "a", "c"])
    assert got.states == ("b", "a", "c") and got.transitions[2].sum() == 0
    # every slot of a day is its first or the end of a step: 3 users x 3 whole days x 144
    assert got.transitions.sum() + got.initial.sum() == 3 * 3 * 144
    with pytest.raises(InvalidDataError, match="state 'b' labels slots"):
        event_transition_counts(log, slot="10min", states=["a"])


def test_batches_of_a_csv_log(tmp_path) -> None:
    log = _log(9)
    path = tmp_path / "log.csv"
    log.to_csv(path, index=False)
    batches = list(pp.scenarios.event_batches(path, batch_rows=10))
    assert len(batches) > 2 and sum(b["user"].nunique() for b in batches) == 9
    got = pd.concat([event_counts(b, "a", slot="10min") for b in batches])
    pd.testing.assert_series_equal(got, event_counts(log, "a", slot="10min"),
                                   check_index_type=False)
    shuffled = tmp_path / "shuffled.csv"                     # one batch: any row order
    log.sample(frac=1.0, random_state=0).to_csv(shuffled, index=False)
    parts = [event_counts(b, "a", slot="10min") for b in pp.scenarios.event_batches(shuffled)]
    pd.testing.assert_series_equal(pd.concat(parts), event_counts(log, "a", slot="10min"))
    with pytest.raises(InvalidDataError, match="has rows in two places"):
        list(pp.scenarios.event_batches(shuffled, batch_rows=10))
    with pytest.raises(InvalidParameterError, match="no column 'who'"):
        pp.scenarios.event_batches(path, user="who")
    # an unhashable column name: the error of sequences_from_events, not a raw TypeError
    with pytest.raises(ParameterTypeError, match=r"user= must be a column name, got the list"):
        pp.scenarios.event_batches(path, user=["user"])
    with pytest.raises(InvalidParameterError, match="four different columns"):
        pp.scenarios.event_batches(path, user="state")


def test_batches_count_the_callers_bytes_per_row(tmp_path) -> None:
    log = _log(2)
    path = tmp_path / "log.csv"
    log.to_csv(path, index=False)
    rows = int((log["user"] == "u000").sum())
    assert len(list(pp.scenarios.event_batches(path, batch_rows=5, row_bytes=1000,
                                               memory_budget=1000 * rows))) == 2
    with pytest.raises(pp.LimitExceededError, match="the rows of user 'u000'"):
        list(pp.scenarios.event_batches(path, batch_rows=5, row_bytes=1000,
                                        memory_budget=1000 * rows - 1))
    with pytest.raises(InvalidParameterError, match="row_bytes must be a positive integer"):
        pp.scenarios.event_batches(path, row_bytes=0)
