"""Event logs to slots (issue 12, item 1): golden days of the Ordóñez homes, both rules against a
brute-force reference, the table of malformed logs, how times are read (issue 19 items 4 and 5:
the range of times, UTC offsets, day-first dates) and a year of minutes (timed in
benchmarks/bench_events.py, not here).

The Ordóñez files come from ``../shared/data-real`` (relative to the repository, as the real
networks in conftest.py); the tests that need them are skipped when the folder is absent.
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from helpers import DATA_REAL
from hypothesis import given, settings
from hypothesis import strategies as st

import pufferfish_pgm as pp
from pufferfish_pgm.errors import (
    AmbiguousDateWarning,
    InvalidDataError,
    InvalidParameterError,
    ParameterTypeError,
    PufferfishWarning,
)
from pufferfish_pgm.scenarios._events import read_ordonez, sequences_from_events

DATA = DATA_REAL
HOMES = {h: DATA / f"Ordonez{h}_ADLs.txt" for h in "AB"}
needs_data = pytest.mark.skipif(
    not all(p.is_file() for p in HOMES.values()),
    reason=f"the Ordóñez ADL files are not in {DATA} (they are never copied into the repository)")


# ---------------------------------------------------------------------------------------------
# the real logs


@pytest.fixture(scope="module")
def repaired() -> dict[str, pd.DataFrame]:
    if not all(p.is_file() for p in HOMES.values()):
        pytest.skip(f"the Ordóñez ADL files are not in {DATA}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the warnings themselves are checked below
        return {h: read_ordonez(p, repair=True) for h, p in HOMES.items()}


@needs_data
def test_the_raw_files_are_refused_naming_the_first_defect() -> None:
    # Home A, lines 71, 80 and 82 end before they start, e.g. line 71:
    #   2011-12-01 19:28:51   2011-12-01 16:29:59   Toileting
    with pytest.raises(InvalidDataError, match=r"line 71 of OrdonezA_ADLs\.txt.*ends before it "
                                               r"starts.*3 such rows.*repair=True"):
        sequences_from_events(HOMES["A"], slot="10min", fill="Idle")
    # Home B has no backwards row but 24 rows overlapping an earlier one, first lines 71/72:
    #   2012-11-14 00:28:00   2012-11-14 00:29:59   Toileting
    #   2012-11-14 00:29:00   2012-11-14 05:12:59   Sleeping
    with pytest.raises(InvalidDataError, match=r"line 72 of OrdonezB_ADLs\.txt \('Sleeping'.*"
                                               r"overlaps line 71 .*24 overlapping rows"):
        sequences_from_events(HOMES["B"], slot="10min", fill="Idle")


@needs_data
def test_repair_says_what_it_changed() -> None:
    with pytest.warns(UserWarning, match=r"dropped 3 rows that end before they start "
                                         r"\(lines 71, 80, 82\); resolved 2 overlapping pairs "
                                         r"\(earlier/later line: 66/67, 100/101\)"):
        a = read_ordonez(HOMES["A"], repair=True)
    with pytest.warns(UserWarning, match=r"resolved 24 overlapping pairs \(earlier/later line: "
                                         r"71/72, 84/85"):
        b = read_ordonez(HOMES["B"], repair=True)
    assert len(a.attrs["repairs"]) == 2 and len(b.attrs["repairs"]) == 1
    assert (a["user"] == "OrdonezA").all() and a.index.name == "line"
    for table in (a, b):     # what is left is a clean log: intervals of positive length, disjoint
        s, e = table["start"].to_numpy(), table["end"].to_numpy()
        assert (e > s).all() and (s[1:] >= e[:-1]).all()


# Whole days: A's log runs from 2011-11-28 02:27:59 (line 2) to 2011-12-11 21:41:48 (line 248),
# so the whole days are 2011-11-29 .. 2011-12-10: 12 days (of the 14 labelled; the first and
# last are partial). B's runs from 2012-11-11 21:14:00 (line 2) to 2012-12-03 01:03:59 (last
# line), so 2012-11-12 .. 2012-12-02: 21 days.
DAYS = {"A": ("2011-11-29", "2011-12-10", 12), "B": ("2012-11-12", "2012-12-02", 21)}

# Hand check, home A, 2011-11-29 (lines 16-35 of OrdonezA_ADLs.txt). Midpoint rule: a 1-minute
# slot hh:mm counts for an interval [s, e) when s <= hh:mm:30 < e; a 10-minute slot when
# s <= hh:m5:00 < e.
#   line 16 TV        (11-28 20:21:15)-02:06:00  1-min 00:00..02:05 = 126   10-min 00:05..02:05 = 13
#   line 17 Sleeping  02:16:00-11:31:00          02:16..11:30 = 555 (9 h 15)  02:25..11:25 = 55
#   line 18 Toileting 11:31:55-11:36:55          11:32..11:36 = 5             11:35 = 1
#   line 19 Grooming  11:37:38-11:48:54          11:38..11:48 = 11            11:45 = 1
#   line 20 Showering 11:49:57-11:51:13          11:50 = 1                    0
#   line 21 Breakfast 12:08:28-12:18:00          12:08..12:17 = 10            12:15 = 1
#   line 22 Grooming  12:19:01-12:22:00          12:19..12:21 = 3             0
#   line 23 TV        12:22:38-12:24:59          12:23..12:24 = 2             0
#   line 24 Snack     13:25:29-13:25:32          13:25 (13:25:30) = 1         0
#   line 25 TV        13:25:38-15:12:26          13:26..15:11 = 106           13:35..15:05 = 10
#   line 26 Toileting 15:13:28-15:13:57          15:13 = 1                    0
#   line 27 Lunch     15:14:33-15:45:54          15:15..15:45 = 31            15:15..15:45 = 4
#   line 28 Grooming  15:49:51-15:50:54          15:50 = 1                    0
#   line 29 TV        15:52:04-16:17:58          15:52..16:17 = 26            15:55..16:15 = 3
#   line 30 Toileting 16:18:00-16:31:27          16:18..16:30 = 13            16:25 = 1
#   line 31 TV        16:34:17-17:08:07          16:34..17:07 = 34            16:35..17:05 = 4
#   line 32 Toileting 17:08:58-17:09:29          none (17:08:30 is before, 17:09:30 after) 0
#   line 33 TV        17:43:00-18:57:22          17:43..18:56 = 74            17:45..18:55 = 8
#   line 34 Leaving   19:02:15-20:23:38          19:02..20:23 = 82            19:05..20:15 = 8
#   line 35 TV        20:28:00-(11-30 01:19:47)  20:28..23:59 = 212           20:35..23:55 = 21
# TV 1-min: 126 + 2 + 106 + 26 + 34 + 74 + 212 = 580; 10-min: 13 + 10 + 3 + 4 + 8 + 21 = 59.
# Toileting 5 + 1 + 13 = 19 (10-min 1 + 1 = 2); Grooming 11 + 3 + 1 = 15 (10-min 1).
# Covered: 580 + 555 + 19 + 15 + 1 + 10 + 1 + 31 + 82 = 1294, Idle = 1440 - 1294 = 146;
# 10-min: 59 + 55 + 2 + 1 + 1 + 4 + 8 = 130, Idle = 144 - 130 = 14.
A_DAY = "2011-11-29"
A_1MIN = {"Spare_Time/TV": 580, "Sleeping": 555, "Leaving": 82, "Lunch": 31, "Toileting": 19,
          "Grooming": 15, "Breakfast": 10, "Showering": 1, "Snack": 1, "Idle": 146}
A_10MIN = {"Spare_Time/TV": 59, "Sleeping": 55, "Leaving": 8, "Lunch": 4, "Toileting": 2,
           "Grooming": 1, "Breakfast": 1, "Idle": 14}

# Hand check, home B, 2012-11-13 (lines 45-69 of OrdonezB_ADLs.txt). B's times are whole minutes
# and most intervals end at hh:mm:59, so an interval s..e:59 covers the 1-minute slots s..e
# (e - s + 1 of them).
#   line 45 TV        (11-12 23:46:00)-01:27:00  1-min 00:00..01:26 = 87    10-min 00:05..01:25 = 9
#   line 46 Grooming  01:29-01:29:59             1                          0
#   line 47 Sleeping  01:30-08:52:59             443 (7 h 22 + 1)           01:35..08:45 = 44
#   line 48 Breakfast 08:56-09:04:59             9                          0
#   line 49 Grooming  09:11-09:11:59             1                          0
#   line 50 Toileting 09:14-09:15:59             2                          09:15 = 1
#   line 51 Grooming  09:21-09:36:59             16                         09:25, 09:35 = 2
#   line 52 Leaving   09:53-10:11:59             19                         09:55, 10:05 = 2
#   line 53 Snack     10:14-10:49:59             36                         10:15..10:45 = 4
#   line 54 Leaving   10:52-13:41:59             170 (2 h 49 + 1)           10:55..13:35 = 17
#   line 55 Snack     13:47-13:59:59             13                         13:55 = 1
#   line 56 Toileting 14:05-14:06:59             2                          14:05 = 1
#   line 57 Lunch     14:08-14:42:59             35                         14:15..14:35 = 3
#   line 58 TV        14:43-15:51:59             69                         14:45..15:45 = 7
#   line 59 Toileting 16:07-16:07:59             1                          0
#   line 60 TV        16:08-16:33:59             26                         16:15, 16:25 = 2
#   line 61 TV        16:35-17:31:59             57                         16:35..17:25 = 6
#   line 62 Snack     17:34-17:36:59             3                          17:35 = 1
#   line 63 TV        17:37-18:48:59             72                         17:45..18:45 = 7
#   line 64 Snack     18:51-19:13:59             23                         18:55, 19:05 = 2
#   line 65 Toileting 19:46-19:47:59             2                          0
#   line 66 TV        19:52-23:16:59             205 (3 h 24 + 1)           19:55..23:15 = 21
#   line 67 Dinner    23:17-23:22:59             6                          0
#   line 68 Grooming  23:39-23:40:59             2                          0
#   line 69 TV        23:45-(11-14 00:21:59)     23:45..23:59 = 15          23:45, 23:55 = 2
# TV 87 + 69 + 26 + 57 + 72 + 205 + 15 = 531 (10-min 9 + 7 + 2 + 6 + 7 + 21 + 2 = 54);
# Snack 36 + 13 + 3 + 23 = 75 (8); Leaving 19 + 170 = 189 (19); Grooming 1 + 1 + 16 + 2 = 20 (2);
# Toileting 2 + 2 + 1 + 2 = 7 (2). Covered 531 + 443 + 189 + 75 + 35 + 20 + 9 + 7 + 6 = 1315,
# Idle 125; 10-min covered 54 + 44 + 19 + 8 + 3 + 2 + 2 = 132, Idle 12.
B_DAY = "2012-11-13"
B_1MIN = {"Spare_Time/TV": 531, "Sleeping": 443, "Leaving": 189, "Snack": 75, "Lunch": 35,
          "Grooming": 20, "Breakfast": 9, "Toileting": 7, "Dinner": 6, "Idle": 125}
B_10MIN = {"Spare_Time/TV": 54, "Sleeping": 44, "Leaving": 19, "Snack": 8, "Lunch": 3,
           "Grooming": 2, "Toileting": 2, "Idle": 12}

GOLDEN = [("A", A_DAY, "1min", A_1MIN), ("A", A_DAY, "10min", A_10MIN),
          ("B", B_DAY, "1min", B_1MIN), ("B", B_DAY, "10min", B_10MIN)]


@pytest.mark.parametrize(("home", "day", "slot", "counts"), GOLDEN,
                         ids=[f"{h}-{s}" for h, _, s, _ in GOLDEN])
def test_golden_day_counts_match_the_hand_check(repaired, home, day, slot, counts) -> None:
    wide = sequences_from_events(repaired[home], slot=slot, fill="Idle")
    first, last, n_days = DAYS[home]
    per_day = 1440 if slot == "1min" else 144
    assert wide.shape == (n_days, per_day)
    days = wide.index.get_level_values("day")
    assert (str(days[0].date()), str(days[-1].date())) == (first, last)
    assert set(wide.index.get_level_values("user")) == {f"Ordonez{home}"}
    assert list(wide.columns[:3]) == (["00:00", "00:01", "00:02"] if slot == "1min"
                                      else ["00:00", "00:10", "00:20"])
    row = wide.xs(pd.Timestamp(day), level="day").iloc[0]
    assert dict(Counter(row)) == counts
    assert sum(counts.values()) == per_day


@needs_data
def test_the_same_days_from_the_file_path_with_a_clean_copy(tmp_path) -> None:
    # a path in the Ordóñez format is detected; the user is named after the file
    clean = tmp_path / "OrdonezA_ADLs.txt"
    lines = HOMES["A"].read_text(encoding="utf-8").splitlines()
    clean.write_text("\n".join(x for i, x in enumerate(lines, 1) if i not in (67, 71, 80, 82, 101)),
                     encoding="utf-8")
    wide = sequences_from_events(clean, slot="10min", fill="Idle")
    assert wide.shape == (12, 144)
    assert dict(Counter(wide.xs(pd.Timestamp(A_DAY), level="day").iloc[0])) == A_10MIN


@needs_data
def test_repaired_overlaps_and_dropped_rows_in_the_slots(repaired) -> None:
    # B lines 436-437: Toileting 10:25:00-10:31:59 with Grooming 10:27:00-10:28:59 nested in it:
    # the later start wins the shared minutes, Toileting resumes after.
    b = sequences_from_events(repaired["B"], slot="1min", fill="Idle")
    day = b.xs(pd.Timestamp("2012-11-30"), level="day").iloc[0]
    assert day["10:24":"10:32"].tolist() == [
        "Idle", "Toileting", "Toileting", "Grooming", "Grooming", "Toileting", "Toileting",
        "Toileting", "Idle"]
    # A line 71 (Toileting 19:28:51 -> 16:29:59) is dropped: between TV 18:55:03-19:10:34 and
    # TV 19:30:01-23:52:52 the 1-minute slots 19:11..19:29 (19 of them) are Idle.
    a = sequences_from_events(repaired["A"], slot="1min", fill="Idle")
    day = a.xs(pd.Timestamp("2011-12-01"), level="day").iloc[0]
    assert day["19:10"] == day["19:30"] == "Spare_Time/TV"
    assert (day["19:11":"19:29"] == "Idle").all() and len(day["19:11":"19:29"]) == 19


@needs_data
def test_the_real_chains_fit_from_the_rows(repaired) -> None:
    wide = pd.concat([sequences_from_events(t, slot="10min", fill="Idle")
                      for t in repaired.values()])
    theta = pp.ScenarioClass.fit_groups(wide, wide.index.get_level_values("user"),
                                        pseudocount=0.5)
    assert [m.name for m in theta] == ["OrdonezA", "OrdonezB"]
    assert len(theta.nodes) == 144 and "Idle" in theta.states_of(0)


# ---------------------------------------------------------------------------------------------
# the two rules on a constructed day


def _day_log(rows: list[tuple[str, str, str]]) -> pd.DataFrame:
    """One user's log on 2024-05-02 (times "hh:mm"), framed by sleep the nights around it."""
    frame = [("2024-05-01 23:00", "2024-05-02 00:00", "sleep"),
             ("2024-05-02 23:00", "2024-05-03 01:00", "sleep")]
    day = [(f"2024-05-02 {s}", f"2024-05-02 {e}", a) for s, e, a in rows]
    return pd.DataFrame(frame + day, columns=["start", "end", "state"]).assign(user="u")


CONSTRUCTED = _day_log([
    ("08:00", "08:04", "walk"), ("08:04", "08:06", "tv"), ("08:06", "08:10", "walk"),
    ("09:00", "09:04", "tv"), ("09:04", "09:08", "eat"),
    ("10:00", "10:05", "tv"),
    ("11:06", "11:10", "eat"),
    ("12:02", "12:07", "eat"),
    ("13:05", "13:06", "sleep"),
])


def test_midpoint_and_majority_differ_as_documented() -> None:
    mid = sequences_from_events(CONSTRUCTED, slot="10min", fill="idle").iloc[0]
    maj = sequences_from_events(CONSTRUCTED, slot="10min", fill="idle", rule="majority").iloc[0]
    slots = ["08:00", "09:00", "10:00", "11:00", "12:00", "13:00"]
    # 08:00 midpoint 08:05 is tv; walk covers 4 + 4 = 8 minutes (pieces of one state add up)
    # 09:00 midpoint 09:05 is eat; tv and eat tie at 4 min: the earlier in the slot (tv) wins,
    #       although "eat" sorts first
    # 10:00 midpoint 10:05 is uncovered (end exclusive); tv ties the 5 uncovered minutes: a
    #       state beats fill on a tie
    # 11:00 midpoint 11:05 uncovered; uncovered 6 min > eat 4 min: fill under both rules
    # 12:00 midpoint 12:05 is eat; eat 5 min ties 5 uncovered: eat
    # 13:00 midpoint 13:05 opens sleep 13:05-13:06 (start inclusive); 1 min against 9 uncovered
    assert mid[slots].tolist() == ["tv", "eat", "idle", "idle", "eat", "sleep"]
    assert maj[slots].tolist() == ["walk", "tv", "tv", "idle", "eat", "idle"]
    # everything else is the same under both rules
    assert (mid.drop(slots) == maj.drop(slots)).all()
    assert mid["00:00"] == "idle" and mid["23:00"] == "sleep"


def test_rows_order_and_index_do_not_matter() -> None:
    shuffled = CONSTRUCTED.sample(frac=1.0, random_state=3).set_axis(list("abcdefghijk"))
    for rule in ("midpoint", "majority"):
        a = sequences_from_events(CONSTRUCTED, slot="10min", fill="idle", rule=rule)
        b = sequences_from_events(shuffled, slot="10min", fill="idle", rule=rule)
        pd.testing.assert_frame_equal(a, b)


def test_days_users_and_output_format() -> None:
    log = pd.DataFrame({
        "who": ["bo", "bo", "al", "al", "al"],
        "t0": pd.to_datetime(["2024-01-01 12:00", "2024-01-04 06:00", "2024-02-28 20:00",
                              "2024-03-01 00:00", "2024-03-02 00:00"]),
        "t1": pd.to_datetime(["2024-01-01 13:00", "2024-01-04 07:00", "2024-02-29 00:00",
                              "2024-03-01 12:00", "2024-03-02 00:30"]),
        "act": [1, 2, 3, 3, 4],
        "other": ["ignored"] * 5})
    wide = sequences_from_events(log, slot="6h", user="who", start="t0", end="t1", state="act",
                                 fill=0)
    majority = sequences_from_events(log, slot="6h", user="who", start="t0", end="t1",
                                     state="act", fill=0, rule="majority")
    pd.testing.assert_frame_equal(wide, majority)
    # al: first day 02-28, last 03-02 -> 02-29 (no event at all: all fill) and 03-01; an
    # interval ending at midnight does not make 02-29 a day with an event.
    # bo: 01-01 .. 01-04 -> 01-02 and 01-03, no event: fill
    assert wide.index.names == ["who", "day"]
    assert [(u, str(d.date())) for u, d in wide.index] == [
        ("al", "2024-02-29"), ("al", "2024-03-01"), ("bo", "2024-01-02"), ("bo", "2024-01-03")]
    assert wide.columns.tolist() == ["00:00", "06:00", "12:00", "18:00"]
    assert wide.to_numpy().tolist() == [[0, 0, 0, 0], [3, 3, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]


def test_slot_labels_show_seconds_when_needed() -> None:
    log = _day_log([])
    wide = sequences_from_events(log, slot=pd.Timedelta(seconds=90), fill="idle")
    assert wide.columns[:3].tolist() == ["00:00:00", "00:01:30", "00:03:00"]
    assert wide.shape == (1, 960)
    assert sequences_from_events(log, slot=timedelta(hours=1), fill="idle").shape == (1, 24)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_rows_feed_release_and_fit() -> None:
    wide = sequences_from_events(CONSTRUCTED, slot="6h", fill="idle")
    # midpoints 03:00 (after the night's sleep), 09:00 (tv starts then), 15:00, 21:00: gaps
    assert wide.iloc[0].tolist() == ["idle", "tv", "idle", "idle"]
    mc = pp.MarkovChainScenario.fit(wide, pseudocount=0.0)       # one sequence per row
    assert mc.length == 4 and mc.states == ("idle", "tv")
    assert mc.transition.tolist() == [[0.5, 0.5], [1.0, 0.0]]
    mc = pp.MarkovChainScenario.fit(wide, pseudocount=0.5)
    cal = pp.GroupDPMechanism(epsilon=1.0).calibrate(pp.Framework(mc), pp.Count("idle"))
    out = cal.release(wide, rng=np.random.default_rng(0))
    assert np.shape(out.value) == (1,)
    assert out.scale > 0 and wide.shape == (1, 4)


# ---------------------------------------------------------------------------------------------
# brute force: every slot, every interval, in plain Python


def _reference(rows: list[tuple[int, int, str]], slot: int, rule: str, fill: str
               ) -> list[list[str]]:
    """Labels of the whole days of one user; times in seconds from 2024-01-01 00:00."""
    day = 86_400
    first = min(s for s, _, _ in rows) // day
    last = max(e - 1 for _, e, _ in rows) // day
    out = []
    for d in range(first + 1, last):
        labels = []
        for k in range(day // slot):
            lo, hi = d * day + k * slot, d * day + (k + 1) * slot
            if rule == "midpoint":
                mid2 = lo + hi
                hit = [a for s, e, a in rows if 2 * s <= mid2 < 2 * e]
                labels.append(hit[0] if hit else fill)
                continue
            spent: dict[str, int] = {}
            begin: dict[str, int] = {}
            for s, e, a in rows:
                part = min(e, hi) - max(s, lo)
                if part > 0:
                    spent[a] = spent.get(a, 0) + part
                    begin[a] = min(begin.get(a, hi), max(s, lo))
            best = min(spent, key=lambda a: (-spent[a], begin[a]), default=None)
            gap = slot - sum(spent.values())
            labels.append(fill if best is None or gap > spent[best] else best)
        out.append(labels)
    return out


@st.composite
def logs(draw: st.DrawFn) -> list[tuple[int, int, str]]:
    unit = draw(st.sampled_from([60, 300, 1]))   # coarse grids make ties likely
    n = draw(st.integers(1, 40))
    t = draw(st.integers(0, 86_400 * 2 // unit)) * unit
    rows = []
    for _ in range(n):
        t += draw(st.integers(0, 180 * 60 // unit)) * unit
        length = draw(st.integers(1, 600 * 60 // unit)) * unit
        rows.append((t, t + length, draw(st.sampled_from("abc"))))
        t += length
    return rows


@settings(max_examples=150)
@given(st.lists(logs(), min_size=1, max_size=2), st.sampled_from([600, 1800, 3600, 21_600]),
       st.sampled_from(["midpoint", "majority"]))
def test_both_rules_match_the_brute_force_reference(users, slot, rule) -> None:
    origin = datetime(2024, 1, 1)
    log = pd.DataFrame([(f"user{i}", origin + timedelta(seconds=s), origin + timedelta(seconds=e),
                         a) for i, rows in enumerate(users) for s, e, a in rows],
                       columns=["user", "start", "end", "state"])
    log = log.sample(frac=1.0, random_state=len(log))          # row order must not matter
    expected = [row for rows in users for row in _reference(rows, slot, rule, "-")]
    if not expected:
        with pytest.raises(InvalidDataError, match="no user has a whole calendar day"):
            sequences_from_events(log, slot=f"{slot}s", fill="-", rule=rule)
        return
    wide = sequences_from_events(log, slot=f"{slot}s", fill="-", rule=rule)
    assert wide.to_numpy().tolist() == expected


# ---------------------------------------------------------------------------------------------
# malformed logs and bad arguments


def _good() -> pd.DataFrame:
    """A clean log with one whole day (2024-01-02), fully covered."""
    return pd.DataFrame({
        "user": ["u", "u", "u"],
        "start": ["2024-01-01 22:00", "2024-01-02 08:00", "2024-01-02 20:00"],
        "end": ["2024-01-02 08:00", "2024-01-02 20:00", "2024-01-03 09:00"],
        "state": ["sleep", "awake", "sleep"]})


def _edit(row: int, col: str, value: object) -> Callable[[Path], pd.DataFrame]:
    def make(_: Path) -> pd.DataFrame:
        df = _good()
        df[col] = df[col].astype(object)
        df.loc[row, col] = value
        return df
    return make


def _frame(edit: Callable[[pd.DataFrame], pd.DataFrame]) -> Callable[[Path], pd.DataFrame]:
    return lambda _: edit(_good())


def _csv(tmp: Path) -> Path:
    df = _good()
    df.loc[1, "start"] = "soon"
    df.to_csv(tmp / "events.csv", index=False)
    return tmp / "events.csv"


def _ordonez(body: str) -> Callable[[Path], Path]:
    def make(tmp: Path) -> Path:
        path = tmp / "OrdonezX_ADLs.txt"
        path.write_text("Start time\t\tEnd time\t\tActivity\n" + body, encoding="utf-8")
        return path
    return make


BAD = [  # (id, events builder, keyword arguments, error, message fragments)
    ("overlap", _edit(1, "end", "2024-01-02 21:00"), {}, InvalidDataError,
     ["row 2 ('sleep' from 2024-01-02 20:00:00", "overlaps row 1 ('awake'", "user 'u'"]),
    ("end before start", _edit(1, "end", "2024-01-02 07:00"), {}, InvalidDataError,
     ["row 1:", "ends before it starts", "'awake' from 2024-01-02 08:00:00 to 2024-01-02 07:00"]),
    ("unparsable time", _edit(2, "start", "2024-01-02 25:00"), {}, InvalidDataError,
     ["row 2:", "cannot read the start time '2024-01-02 25:00'"]),
    ("unparsable end", _edit(0, "end", "yesterday"), {}, InvalidDataError,
     ["row 0:", "end time 'yesterday'"]),
    ("missing state", _edit(1, "state", None), {}, InvalidDataError,
     ["row 1:", "the state ('state') is missing"]),
    ("missing start", _edit(2, "start", np.nan), {}, InvalidDataError,
     ["row 2:", "the start ('start') is missing"]),
    ("blank user", _edit(0, "user", "  "), {}, InvalidDataError, ["row 0:", "user", "missing"]),
    ("unknown column", _frame(lambda d: d), {"start": "begin"}, InvalidParameterError,
     ["no column 'begin'", "start="]),
    ("no user column", _frame(lambda d: d.drop(columns="user")), {}, InvalidParameterError,
     ["no column 'user'", "assign(user="]),
    ("same column twice", _frame(lambda d: d), {"user": "state"}, InvalidParameterError,
     ["four different columns"]),
    ("unknown rule", _frame(lambda d: d), {"rule": "mode"}, InvalidParameterError,
     ["'mode'", "midpoint"]),
    ("slot not dividing a day", _frame(lambda d: d), {"slot": "7min"}, InvalidParameterError,
     ["'7min' does not divide a day"]),
    ("slot longer than a day", _frame(lambda d: d), {"slot": "2D"}, InvalidParameterError,
     ["does not divide a day"]),
    ("slot without unit", _frame(lambda d: d), {"slot": "10"}, InvalidParameterError,
     ["no unit", "'10min'"]),
    ("slot not a duration", _frame(lambda d: d), {"slot": "ten minutes"}, InvalidParameterError,
     ["'ten minutes' is not a duration"]),
    ("negative slot", _frame(lambda d: d), {"slot": "-10min"}, InvalidParameterError,
     ["positive"]),
    ("sub-second slot", _frame(lambda d: d), {"slot": "500ms"}, InvalidParameterError,
     ["shorter than one second"]),
    ("slot as a number", _frame(lambda d: d), {"slot": 10}, ParameterTypeError,
     ["the int 10"]),
    ("numeric times", _frame(lambda d: d.assign(start=range(3), end=range(1, 4))), {},
     InvalidDataError, ["numbers", "unit="]),
    ("offset on some times only", _edit(0, "start", "2024-01-01T22:00:00+01:00"), {},
     InvalidDataError, ["row 1:", "start time '2024-01-02 08:00'", "has no UTC offset",
                        "row 0 has one ('2024-01-01T22:00:00+01:00')"]),
    ("time zone on the starts only", _frame(lambda d: d.assign(
        start=pd.to_datetime(d.start).dt.tz_localize("UTC"))), {}, InvalidDataError,
     ["the start times ('start') carry a UTC offset", "the end times ('end') do not"]),
    ("dates day first and month first", _frame(lambda d: d.assign(
        start=["01/01/2024 22:00", "13/01/2024 08:00", "01/14/2024 20:00"])), {},
     InvalidDataError, ["day first at row 1 ('13/01/2024 08:00')",
                        "month first at row 2 ('01/14/2024 20:00')", "ISO dates"]),
    ("year 2300", _edit(2, "end", "2300-01-03 09:00"), {}, InvalidDataError,
     ["row 2:", "end time '2300-01-03 09:00'", "1677-09-21", "2262-04-11"]),
    ("uncovered slot without fill", _frame(lambda d: d.drop(index=1)), {"slot": "1h"},
     InvalidDataError, ["user 'u', day 2024-01-02, slot '08:00'", "midpoint (08:30:00)",
                        "12 slots", "fill="]),
    ("uncovered slot, majority", _frame(lambda d: d.drop(index=1)),
     {"slot": "1h", "rule": "majority"}, InvalidDataError,
     ["slot '08:00'", "uncovered part"]),
    ("fill is NaN", _frame(lambda d: d), {"fill": float("nan")}, InvalidParameterError,
     ["fill must be a state label"]),
    ("no whole day", _frame(lambda d: d.iloc[:2]), {}, InvalidDataError,
     ["no user has a whole calendar day"]),
    ("only empty intervals", _frame(lambda d: d.assign(end=d.start)), {}, InvalidDataError,
     ["no interval of positive length"]),
    ("labels name the row", _frame(lambda d: d.set_axis(["x", "y", "z"]).assign(
        end=["2024-01-02 08:00", "2024-01-02 21:00", "2024-01-03 09:00"])), {},
     InvalidDataError, ["row 'z'", "overlaps row 'y'"]),
    ("not a table", lambda _: [("u", "2024-01-01", "2024-01-02", "a")], {}, ParameterTypeError,
     ["DataFrame or the path"]),
    ("no such file", lambda tmp: tmp / "nothing.csv", {}, InvalidParameterError,
     ["no file at", "nothing.csv"]),
    ("csv line", _csv, {}, InvalidDataError, ["line 3 of events.csv", "'soon'"]),
    ("ordonez line fields", _ordonez("2024-01-01 22:00:00\t\t2024-01-02 08:00:00\t\tSleep\n"
                                     "2024-01-02 08:00:00\t\tAwake\n"), {}, InvalidDataError,
     ["line 3 of OrdonezX_ADLs.txt", "three fields"]),
    ("ordonez overlap", _ordonez("2024-01-01 22:00:00\t2024-01-02 08:00:00\tSleep\n"
                                 "2024-01-02 07:00:00\t2024-01-03 08:00:00\tAwake\n"), {},
     InvalidDataError, ["line 3 of OrdonezX_ADLs.txt", "overlaps line 2", "repair=True"]),
    ("ordonez time", _ordonez("2024-01-01 22:00:00\t2024-01-02 08:00:00\tSleep\n"
                              "2024-01-02 08:00:00\t2024-01-32 08:00:00\tAwake\n"), {},
     InvalidDataError, ["line 3 of OrdonezX_ADLs.txt", "end time '2024-01-32 08:00:00'"]),
]


@pytest.mark.parametrize(("make", "kwargs", "error", "fragments"),
                         [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_malformed_logs_and_bad_arguments_are_named(tmp_path, make, kwargs, error,
                                                    fragments) -> None:
    options = {"slot": "10min", **kwargs}
    with pytest.raises(error) as info:
        sequences_from_events(make(tmp_path), **options)
    assert isinstance(info.value, pp.errors.PufferfishError)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in {message!r}"


def test_what_is_not_an_error() -> None:
    log = _good()
    assert sequences_from_events(log, slot="1h").iloc[0].tolist() == (
        ["sleep"] * 8 + ["awake"] * 12 + ["sleep"] * 4)           # touching intervals, no fill
    other = log.assign(user="v")                                     # overlaps across users
    both = sequences_from_events(pd.concat([log, other], ignore_index=True), slot="1h")
    assert both.index.get_level_values(0).tolist() == ["u", "v"]
    empty = pd.concat([log, log.iloc[[1]].assign(end=log.start[1])], ignore_index=True)
    assert sequences_from_events(empty, slot="1h").equals(sequences_from_events(log, slot="1h"))
    mixed = log.assign(start=["2024-01-01T22:00:00", "2024-01-02 08:00", "2024/01/02 20:00"])
    assert sequences_from_events(mixed, slot="1h").equals(sequences_from_events(log, slot="1h"))


def test_ordonez_reader_formats(tmp_path) -> None:
    # spaces instead of tabs, the dashed line of the UCI original, CRLF, a blank line
    path = tmp_path / "HomeC_ADLs.txt"
    path.write_bytes(b"Start time          End time            Activity\r\n"
                     b"----------          --------            --------\r\n"
                     b"2024-01-01 22:00:00 2024-01-02 08:00:00 Sleeping\r\n\r\n"
                     b"2024-01-02 08:00:00 2024-01-03 08:00:00 Spare Time\r\n")
    table = read_ordonez(path, user="C")
    assert table.index.tolist() == [3, 5]
    assert table["state"].tolist() == ["Sleeping", "Spare Time"]
    assert (table["user"] == "C").all()
    wide = sequences_from_events(path, slot="12h")
    assert wide.index.tolist() == [("HomeC", pd.Timestamp("2024-01-02"))]
    assert wide.to_numpy().tolist() == [["Sleeping", "Spare Time"]]
    _good().to_csv(tmp_path / "x.csv", index=False)
    with pytest.raises(InvalidDataError, match="x.csv is not an Ordóñez ADL file"):
        read_ordonez(tmp_path / "x.csv")


def test_repair_on_a_constructed_file(tmp_path) -> None:
    path = tmp_path / "OrdonezZ_ADLs.txt"
    path.write_text("Start time\t\tEnd time\t\tActivity\n"
                    "2024-01-01 22:00:00\t\t2024-01-02 10:00:00\t\tSleeping\n"     # line 2
                    "2024-01-02 03:00:00\t\t2024-01-02 03:10:00\t\tToileting\n"    # 3: nested
                    "2024-01-02 09:00:00\t\t2024-01-02 12:00:00\t\tBreakfast\n"    # 4: overlaps
                    "2024-01-02 13:00:00\t\t2024-01-02 12:30:00\t\tLunch\n"        # 5: backwards
                    "2024-01-02 12:00:00\t\t2024-01-03 01:00:00\t\tSpare_Time/TV\n",
                    encoding="utf-8")
    with pytest.warns(UserWarning, match=r"dropped 1 rows .*\(lines 5\); resolved 2 overlapping "
                                         r"pairs \(earlier/later line: 2/3, 2/4\)"):
        table = read_ordonez(path, repair=True)
    assert table.index.tolist() == [2, 3, 2, 4, 6]
    assert table["end"].dt.strftime("%H:%M").tolist() == ["03:00", "03:10", "09:00", "12:00",
                                                          "01:00"]
    wide = sequences_from_events(table, slot="1h")
    assert wide.iloc[0].tolist() == ["Sleeping"] * 9 + ["Breakfast"] * 3 + ["Spare_Time/TV"] * 12


# ---------------------------------------------------------------------------------------------
# how times are read: the range of times, UTC offsets, day-first dates


def _days_log(days: list[str]) -> pd.DataFrame:
    """One user asleep from midnight to midnight, day after day ("sleep" all along)."""
    return pd.DataFrame({"user": "u", "start": [f"{d} 00:00" for d in days[:-1]],
                         "end": [f"{d} 00:00" for d in days[1:]], "state": "sleep"})


# Times are int64 nanoseconds: pd.Timestamp.min is 1677-09-21 00:12:43.145224193 and .max is
# 2262-04-11 23:47:16.854775807. Before the fix pandas read these logs in seconds or
# microseconds and the cast to nanoseconds wrapped around: January 1677 came back as
# 2261-07-23/24, the year 2300 as 1715-06-14/15, and the log over 2262-04-11 as a row that
# "ends before it starts" at 1677-09-21 00:25:26.
OUT_OF_RANGE = [
    ("January 1677", ["1677-01-01", "1677-01-02", "1677-01-03", "1677-01-04"],
     "row 0: the start time '1677-01-01 00:00'", "3 such times"),
    ("year 2300", ["2300-01-01", "2300-01-02", "2300-01-03", "2300-01-04"],
     "row 0: the start time '2300-01-01 00:00'", "3 such times"),
    ("over 2262-04-11", ["2262-04-09", "2262-04-10", "2262-04-11", "2262-04-12"],
     "row 2: the end time '2262-04-12 00:00'", "correct it"),
]


@pytest.mark.parametrize(("days", "where", "count"), [c[1:] for c in OUT_OF_RANGE],
                         ids=[c[0] for c in OUT_OF_RANGE])
def test_times_out_of_range_are_refused_never_moved(days, where, count) -> None:
    with pytest.raises(InvalidDataError) as info:
        sequences_from_events(_days_log(days), slot="12h")
    message = str(info.value)
    for fragment in (where, "1677-09-21 00:12:44 to 2262-04-11 23:47:16", count):
        assert fragment in message, f"{fragment!r} not in {message!r}"


def test_times_near_the_ends_of_the_range_keep_their_dates() -> None:
    late = _days_log(["2262-04-08", "2262-04-09", "2262-04-10", "2262-04-11"])
    late.loc[2, "end"] = "2262-04-11 23:47:16"     # the last whole second of the range
    late = sequences_from_events(late, slot="12h")
    assert [str(d.date()) for _, d in late.index] == ["2262-04-09", "2262-04-10"]
    early = _days_log(["1677-09-22", "1677-09-23", "1677-09-24"])
    early.loc[0, "start"] = "1677-09-21 00:12:44"   # the first whole second of the range
    early.loc[1, "end"] = "1677-09-24 12:00"
    wide = sequences_from_events(early, slot="12h")
    assert [str(d.date()) for _, d in wide.index] == ["1677-09-22", "1677-09-23"]
    assert (wide.to_numpy() == "sleep").all()


@pytest.mark.skipif(int(pd.__version__.split(".")[0]) < 2, reason="datetime64[s] needs pandas 2")
def test_second_resolution_columns_out_of_range_are_refused() -> None:
    # a datetime64[s] column holds the year 2300; the cast to nanoseconds wrapped around
    log = _days_log(["2300-01-01", "2300-01-02", "2300-01-03", "2300-01-04"])
    log = log.assign(start=pd.to_datetime(log.start).astype("datetime64[s]"),
                     end=pd.to_datetime(log.end).astype("datetime64[s]"))
    with pytest.raises(InvalidDataError, match=r"row 0: the start time .*2300-01-01.*outside"):
        sequences_from_events(log, slot="12h")


def test_ordonez_times_out_of_range_name_the_line(tmp_path) -> None:
    path = tmp_path / "OrdonezX_ADLs.txt"
    path.write_text("Start time\tEnd time\tActivity\n"
                    "2024-01-01 22:00:00\t2024-01-02 08:00:00\tSleep\n"
                    "2024-01-02 08:00:00\t2300-01-03 08:00:00\tAwake\n", encoding="utf-8")
    with pytest.raises(InvalidDataError, match=r"line 3 of OrdonezX_ADLs\.txt: the end time "
                                               r"'2300-01-03 08:00:00'.*outside"):
        read_ordonez(path)


# Spring forward in Madrid, 2024-03-31: at 02:00+01:00 (01:00 UTC) the clocks go to 03:00+02:00.
#   sleep 2024-03-30T23:00+01:00 .. 2024-03-31T01:30+01:00   UTC 03-30 22:00 .. 03-31 00:30
#   tv    2024-03-31T01:30+01:00 .. 2024-03-31T03:30+02:00   UTC 00:30 .. 01:30 (one hour)
#   sleep 2024-03-31T03:30+02:00 .. 2024-04-01T08:00+02:00   UTC 01:30 .. 04-01 06:00
# The whole UTC day is 2024-03-31. Hourly midpoints: 00:30 opens tv, 01:30 closes it -> tv at
# 00:00 only. Majority: slot 00:00 is 30 min sleep then 30 min tv, slot 01:00 30 min tv then
# 30 min sleep: ties, the earlier state wins -> sleep at 00:00, tv at 01:00. In local wall-clock
# times tv would have covered two hours (01:30 to 03:30), one of which never happened.
SPRING = pd.DataFrame({
    "user": "u", "state": ["sleep", "tv", "sleep"],
    "start": ["2024-03-30T23:00:00+01:00", "2024-03-31T01:30:00+01:00",
              "2024-03-31T03:30:00+02:00"],
    "end": ["2024-03-31T01:30:00+01:00", "2024-03-31T03:30:00+02:00",
            "2024-04-01T08:00:00+02:00"]})


def test_mixed_utc_offsets_are_read_as_utc() -> None:
    mid = sequences_from_events(SPRING, slot="1h")
    maj = sequences_from_events(SPRING, slot="1h", rule="majority")
    assert mid.index.tolist() == [("u", pd.Timestamp("2024-03-31"))]
    assert mid.iloc[0].tolist() == ["tv"] + ["sleep"] * 23
    assert maj.iloc[0].tolist() == ["sleep", "tv"] + ["sleep"] * 22
    # the same instants as a tz-aware column, and as naive UTC times: the same rows
    aware = SPRING.assign(start=pd.to_datetime(SPRING.start, utc=True).dt.tz_convert("CET"),
                          end=pd.to_datetime(SPRING.end, utc=True).dt.tz_convert("CET"))
    naive = SPRING.assign(start=pd.to_datetime(SPRING.start, utc=True).dt.tz_localize(None),
                          end=pd.to_datetime(SPRING.end, utc=True).dt.tz_localize(None))
    for other in (aware, naive):
        pd.testing.assert_frame_equal(sequences_from_events(other, slot="1h"), mid)
    # one offset throughout (no change in the log) is UTC as well: 22:00+01:00 is 21:00 UTC
    one = _good().assign(start=lambda d: d.start + "+01:00", end=lambda d: d.end + "+01:00")
    assert sequences_from_events(one, slot="1h").iloc[0].tolist() == (
        ["sleep"] * 7 + ["awake"] * 12 + ["sleep"] * 5)


def test_the_repeated_hour_of_a_fall_back_night_is_not_an_overlap() -> None:
    # Madrid, 2024-10-27: at 03:00+02:00 (01:00 UTC) the clocks go back to 02:00+01:00.
    #   sleep  10-26T23:00+02:00 .. 10-27T02:40+02:00   UTC 10-26 21:00 .. 10-27 00:40
    #   toilet 10-27T02:40+02:00 .. 10-27T02:10+01:00   UTC 00:40 .. 01:10 (wall clock: backwards)
    #   sleep  10-27T02:10+01:00 .. 10-28T07:00+01:00   UTC 01:10 .. 10-28 06:00
    # 10-minute slots of the UTC day 10-27: midpoints 00:45, 00:55, 01:05 are in the toilet.
    log = pd.DataFrame({
        "user": "u", "state": ["sleep", "toilet", "sleep"],
        "start": ["2024-10-26T23:00:00+02:00", "2024-10-27T02:40:00+02:00",
                  "2024-10-27T02:10:00+01:00"],
        "end": ["2024-10-27T02:40:00+02:00", "2024-10-27T02:10:00+01:00",
                "2024-10-28T07:00:00+01:00"]})
    row = sequences_from_events(log, slot="10min").iloc[0]
    assert row["00:40":"01:00"].tolist() == ["toilet"] * 3
    assert dict(Counter(row)) == {"sleep": 141, "toilet": 3}


def _iso(log: pd.DataFrame, fmt: str) -> pd.DataFrame:
    return log.assign(start=pd.to_datetime(log.start, format=fmt),
                      end=pd.to_datetime(log.end, format=fmt))


# Ann's log, 12 to 14 February, day first; 13/02 can only be day first. Before the fix pandas
# took the format from the first row (12/02 read month first: 2 December) and read 13/02 one
# by one (13 February), so the first interval ended before it started.
DAY_FIRST = pd.DataFrame({
    "user": "ann", "state": ["sleep", "awake", "sleep"],
    "start": ["12/02/2024 22:00", "13/02/2024 08:00", "13/02/2024 20:00"],
    "end": ["13/02/2024 08:00", "13/02/2024 20:00", "14/02/2024 09:00"]})


def test_dates_the_log_decides_are_read_one_way_quietly() -> None:
    wide = sequences_from_events(DAY_FIRST, slot="1h")    # filterwarnings=error: no warning
    pd.testing.assert_frame_equal(
        wide, sequences_from_events(_iso(DAY_FIRST, "%d/%m/%Y %H:%M"), slot="1h"))
    assert wide.index.tolist() == [("ann", pd.Timestamp("2024-02-13"))]
    month_first = DAY_FIRST.assign(start=["02/12/2024 22:00", "02/13/2024 08:00",
                                          "02/13/2024 20:00"],
                                   end=["02/13/2024 08:00", "02/13/2024 20:00",
                                        "02/14/2024 09:00"])
    pd.testing.assert_frame_equal(sequences_from_events(month_first, slot="1h"), wide)
    dotted = DAY_FIRST.assign(start=DAY_FIRST.start.str.replace("/", "."),
                              end=DAY_FIRST.end.str.replace("/", "."))
    pd.testing.assert_frame_equal(sequences_from_events(dotted, slot="1h"), wide)
    # ISO dates among them (pandas' dayfirst=True would read 2024-02-12 as 2 December)
    some_iso = DAY_FIRST.assign(start=["2024-02-12 22:00", "13/02/2024 08:00",
                                       "2024-02-13 20:00"])
    pd.testing.assert_frame_equal(sequences_from_events(some_iso, slot="1h"), wide)


def test_dates_nothing_decides_are_read_month_first_with_a_warning() -> None:
    # meant as 1 to 3 February (day first), a two-day log; read month first it runs from
    # 2 January to 2 March: 59 whole days (3 January .. 1 March, 2024 a leap year)
    log = DAY_FIRST.assign(start=["01/02/2024 22:00", "02/02/2024 08:00", "02/02/2024 20:00"],
                           end=["02/02/2024 08:00", "02/02/2024 20:00", "03/02/2024 09:00"])
    with pytest.warns(AmbiguousDateWarning, match=r"row 0 \('01/02/2024 22:00'\) can be read "
                                                  r"day first or month first.*month 1, day 2.*ISO"):
        wide = sequences_from_events(log, slot="1h", fill="idle")
    assert len(wide) == 59
    pd.testing.assert_frame_equal(
        wide, sequences_from_events(_iso(log, "%m/%d/%Y %H:%M"), slot="1h", fill="idle"))
    assert issubclass(AmbiguousDateWarning, PufferfishWarning)
    assert issubclass(PufferfishWarning, UserWarning)
    # the same log in ISO dates: no warning, one whole day
    iso = _iso(log, "%d/%m/%Y %H:%M")
    assert sequences_from_events(iso, slot="1h").index.tolist() == [
        ("ann", pd.Timestamp("2024-02-02"))]


@needs_data
def test_the_real_files_are_read_without_a_date_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", PufferfishWarning)
        for path in HOMES.values():
            read_ordonez(path)


# ---------------------------------------------------------------------------------------------
# a year of minutes (the timing is benchmarks/bench_events.py)


def test_a_year_of_minutes_from_one_interval_a_minute() -> None:
    # 525,600 one-minute intervals [60 i + 20 s, 60 i + 80 s) from 2023-01-01 00:00, state
    # i mod 7 -> names[i % 7], every 97th missing. Slot k's midpoint 60 k + 30 lies in interval
    # k; under the majority rule interval k covers 40 s of slot k and interval k - 1 20 s. With
    # interval k missing the midpoint is uncovered, and the 40 uncovered seconds beat the 20 of
    # interval k - 1: "Idle" under both rules. Whole days: 2023-01-02 .. 2023-12-31 (364).
    names = np.array(["Sleeping", "Eating", "TV", "Walking", "Work", "Toilet", "Reading"],
                     dtype=object)
    i = np.arange(525_600)
    i = i[i % 97 != 0]
    start = np.datetime64("2023-01-01T00:00:20", "s") + (60 * i).astype("timedelta64[s]")
    log = pd.DataFrame({"user": "u", "start": start, "end": start + np.timedelta64(60, "s"),
                        "state": names[i % 7]})
    minutes = np.arange(1440, 365 * 1440)
    expected = np.where(minutes % 97 == 0, "Idle", names[minutes % 7]).reshape(364, 1440)
    for rule in ("midpoint", "majority"):
        wide = sequences_from_events(log, slot="1min", fill="Idle", rule=rule)
        assert wide.shape == (364, 1440)
        assert (wide.to_numpy() == expected).all()


def test_a_typo_year_is_refused_before_any_slot_is_built():
    # 2024-03-04 .. 2204-03-04 (a typo for 2024) is 65,744 days x 1,440 one-minute slots:
    # ~3.8 GB of slots at 40 bytes each; a 100 MB budget refuses it up front, naming the user
    events = pd.DataFrame({"user": ["ann", "ann"], "state": ["sit", "walk"],
                           "start": ["2024-03-04 10:00", "2204-03-04 10:00"],
                           "end": ["2024-03-04 11:00", "2204-03-04 11:00"]})
    with pytest.raises(pp.LimitExceededError, match=r"'ann' alone spans 65,7\d\d days"):
        pp.sequences_from_events(events, slot="1min", fill="idle", memory_budget="100MB")
