"""Fitting Markov chains from state sequences: MarkovChainScenario.fit, ScenarioClass.fit_groups."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pufferfish_pgm as pp
from pufferfish_pgm.errors import (
    InvalidDataError,
    InvalidModelError,
    InvalidParameterError,
    ParameterTypeError,
    PufferfishError,
)
from pufferfish_pgm.scenarios._fit import as_sequences

# Hand-counted example. Sequences:
#   a a b a      transitions a->a, a->b, b->a
#   b b a        transitions b->b, b->a
#   a b b b      transitions a->b, b->b, b->b
# counts n(a->a)=1, n(a->b)=2, n(b->a)=2, n(b->b)=3; first states a, b, a.
SEQUENCES = [["a", "a", "b", "a"], ["b", "b", "a"], ["a", "b", "b", "b"]]
ML_TRANSITION = [[1 / 3, 2 / 3], [2 / 5, 3 / 5]]
ML_INITIAL = [2 / 3, 1 / 3]


def test_maximum_likelihood_by_hand() -> None:
    mc = pp.MarkovChainScenario.fit(SEQUENCES)
    assert mc.states == ("a", "b")
    np.testing.assert_allclose(mc.transition, ML_TRANSITION, atol=1e-15)
    np.testing.assert_allclose(mc.initial, ML_INITIAL, atol=1e-15)
    assert mc.length == 4  # the longest sequence
    assert mc.name == "fitted chain"


def test_pseudocount_by_hand() -> None:
    # (n(s->t) + c) / (n(s->.) + k c) with c = 1, k = 2: a row (1+1, 2+1)/5, b row (2+1, 3+1)/7
    mc = pp.MarkovChainScenario.fit(SEQUENCES, pseudocount=1.0)
    np.testing.assert_allclose(mc.transition, [[2 / 5, 3 / 5], [3 / 7, 4 / 7]], atol=1e-15)
    # first states a, b, a plus 1 each: (3, 2) / 5
    np.testing.assert_allclose(mc.initial, [3 / 5, 2 / 5], atol=1e-15)


def test_fractional_pseudocount() -> None:
    mc = pp.MarkovChainScenario.fit(SEQUENCES, pseudocount=0.5)
    np.testing.assert_allclose(mc.transition[0], [1.5 / 4, 2.5 / 4])


def test_states_given_fix_the_order_and_add_unseen_states() -> None:
    mc = pp.MarkovChainScenario.fit(SEQUENCES, states=["b", "a", "c"], pseudocount=1.0)
    assert mc.states == ("b", "a", "c")
    # row b: n(b->b)=3, n(b->a)=2, n(b->c)=0, plus 1 each, over 8
    np.testing.assert_allclose(mc.transition[0], [4 / 8, 3 / 8, 1 / 8])
    # row c never observed: uniform from the pseudocount alone
    np.testing.assert_allclose(mc.transition[2], [1 / 3] * 3)
    np.testing.assert_allclose(mc.initial, [2 / 6, 3 / 6, 1 / 6])


def test_states_inferred_are_sorted() -> None:
    mc = pp.MarkovChainScenario.fit([[2, 0, 1, 2, 0]], pseudocount=1.0)
    assert mc.states == (0, 1, 2)


def test_states_of_mixed_types_are_sorted_by_repr() -> None:
    mc = pp.MarkovChainScenario.fit([[1, "x", 1, "x"]], pseudocount=1.0)
    assert set(mc.states) == {1, "x"} and len(mc.states) == 2


def test_length_and_initial_options() -> None:
    mc = pp.MarkovChainScenario.fit(SEQUENCES, length=10, initial="stationary", name="mine")
    assert mc.length == 10 and mc.name == "mine"
    # stationary of the ML matrix: pi_a * 2/3 = pi_b * 2/5 -> pi = (3/8, 5/8)
    np.testing.assert_allclose(mc.initial, [3 / 8, 5 / 8], atol=1e-12)
    assert pp.MarkovChainScenario.fit(SEQUENCES, initial="any").initial_is_any


def test_dataframe_rows_are_sequences() -> None:
    # one row per user, one column per time step: the orientation a release reads
    frame = pd.DataFrame([SEQUENCES[0], SEQUENCES[2]], columns=["t0", "t1", "t2", "t3"])
    from_frame = pp.MarkovChainScenario.fit(frame)
    from_lists = pp.MarkovChainScenario.fit([SEQUENCES[0], SEQUENCES[2]])
    np.testing.assert_array_equal(from_frame.transition, from_lists.transition)
    np.testing.assert_array_equal(from_frame.initial, from_lists.initial)
    assert from_frame.length == 4


# Square frame (3 users x 3 steps), rows  a a b | b a a | a b b:
#   by row:    n(a->a)=2, n(a->b)=2, n(b->a)=1, n(b->b)=1, first states a, b, a
#   by column (the old, wrong reading): a b a | a a b | b a b -> rows (1/4, 3/4), (1, 0)
SQUARE = [["a", "a", "b"], ["b", "a", "a"], ["a", "b", "b"]]


@pytest.mark.parametrize(("rows", "transition", "initial"), [
    ([SEQUENCES[0], SEQUENCES[2]], [[1 / 3, 2 / 3], [1 / 3, 2 / 3]], [1.0, 0.0]),
    (SQUARE, [[1 / 2, 1 / 2], [1 / 2, 1 / 2]], [2 / 3, 1 / 3]),
], ids=["non-square", "square"])
def test_fitting_the_frame_you_release(rows: list, transition: list, initial: list) -> None:
    frame = pd.DataFrame(rows)
    mc = pp.MarkovChainScenario.fit(frame)
    np.testing.assert_allclose(mc.transition, transition, atol=1e-15)
    np.testing.assert_allclose(mc.initial, initial, atol=1e-15)
    assert mc.length == frame.shape[1] and mc.states == ("a", "b")
    by_column = pp.MarkovChainScenario.fit(frame.T)
    if frame.shape[0] == frame.shape[1]:   # the old reading fits a chain just as silently
        assert not np.allclose(by_column.transition, mc.transition)
    # the release reads the same frame one row per user: nearly noiseless counts of "b"
    framework = pp.Framework(mc)
    cal = pp.GroupDPMechanism(epsilon=1e6).calibrate(framework, pp.Count("b"))
    released = cal.release(frame, rng=np.random.default_rng(0)).value
    np.testing.assert_array_equal(np.round(released), [row.count("b") for row in rows])


def test_numpy_rows_are_sequences() -> None:
    data = np.array([[0, 0, 1, 0], [0, 1, 1, 1]])
    mc = pp.MarkovChainScenario.fit(data)
    # transitions 0->0, 0->1, 1->0, 0->1, 1->1, 1->1: rows (1/3, 2/3), (1/3, 2/3)
    np.testing.assert_allclose(mc.transition, [[1 / 3, 2 / 3], [1 / 3, 2 / 3]])
    assert mc.states == (0, 1) and all(type(s) is int for s in mc.states)
    np.testing.assert_allclose(mc.initial, [1.0, 0.0])


@pytest.mark.parametrize("data", [
    ["a", "b", "a"],
    np.array(["a", "b", "a"]),
    pd.Series(["a", "b", "a"]),
    [("a", "b", "a")],
    [np.array(["a", "b", "a"])],
], ids=["list", "array-1d", "series", "list-of-tuples", "list-of-arrays"])
def test_single_and_many_sequence_forms(data) -> None:
    assert as_sequences(data) == [["a", "b", "a"]]


def test_unequal_lengths_are_fine() -> None:
    mc = pp.MarkovChainScenario.fit([[0, 1], [1, 0, 0, 1, 1]])
    assert mc.length == 5


def test_fit_groups_makes_one_chain_per_group() -> None:
    seqs = [[0, 0, 1, 1], [0, 1, 0, 1], [1, 1, 1, 0], [0, 1, 1, 1]]
    cls = pp.ScenarioClass.fit_groups(seqs, ["x", "y", "x", "y"], pseudocount=1.0)
    assert [m.name for m in cls] == ["x", "y"] and cls.kind == "chain"
    x = pp.MarkovChainScenario.fit([seqs[0], seqs[2]], states=[0, 1], pseudocount=1.0)
    y = pp.MarkovChainScenario.fit([seqs[1], seqs[3]], states=[0, 1], pseudocount=1.0)
    np.testing.assert_allclose(cls[0].transition, x.transition)
    np.testing.assert_allclose(cls[1].transition, y.transition)
    np.testing.assert_allclose(cls[0].initial, x.initial)


def test_fit_groups_shares_states_and_length() -> None:
    # group "p" never visits state 2 and has shorter sequences: it still gets 3 states and T = 5
    seqs = [[0, 1, 0], [2, 2, 1, 0, 2], [1, 0]]
    cls = pp.ScenarioClass.fit_groups(seqs, ["p", "q", "p"], pseudocount=0.5)
    assert all(m.states == (0, 1, 2) for m in cls)
    assert all(m.length == 5 for m in cls)
    fixed = pp.ScenarioClass.fit_groups(seqs, ["p", "q", "p"], pseudocount=0.5, length=3,
                                        initial="stationary")
    assert all(m.length == 3 for m in fixed)


def test_fit_groups_rejects_unknown_options_and_label_mismatch() -> None:
    seqs = [[0, 1, 0], [1, 1, 0]]
    with pytest.raises(ParameterTypeError, match="pseudocont"):
        pp.ScenarioClass.fit_groups(seqs, ["a", "b"], pseudocont=1.0)
    with pytest.raises(InvalidDataError, match="2 sequences but 3 group labels"):
        pp.ScenarioClass.fit_groups(seqs, ["a", "b", "a"])


def test_fit_groups_with_a_state_never_left_in_one_group() -> None:
    with pytest.raises(InvalidDataError, match="state 1 is never followed"):
        pp.ScenarioClass.fit_groups([[0, 0, 1], [1, 0, 1]], ["a", "b"])


# ----------------------------------------------------------------------------- bad data

@pytest.mark.parametrize(("data", "options", "error", "fragment"), [
    ([["a", None, "b"]], {}, InvalidDataError,
     "sequence 0 has a missing value (None) at position 1"),
    ([["a", "b"], ["a", float("nan")]], {}, InvalidDataError,
     "sequence 1 has a missing value (nan)"),
    (np.array([[0.0, 1.0, np.nan]]), {}, InvalidDataError, "position 2"),
    (pd.DataFrame([["a", "b", None]]), {}, InvalidDataError, "missing value"),
    (pd.DataFrame({"t0": pd.array([1, 0], dtype="Int64"),
                   "t1": pd.array([None, 1], dtype="Int64")}), {"pseudocount": 1.0},
     InvalidDataError, "sequence 0 has a missing value (<NA>) at position 1"),
    ([["a", "b", "z"]], {"states": ["a", "b"]}, InvalidDataError,
     "sequence 0, position 2: state 'z' is not among the given states ['a', 'b']"),
    ([["a"], ["a"]], {}, InvalidDataError, "state 'a' is never followed"),  # no transitions
    ([["a", "a", "b"]], {}, InvalidDataError,
     "state 'b' is never followed by another state"),
    ([["a", "b"], []], {}, InvalidDataError, "sequence 1 is empty"),
    ([], {}, InvalidDataError, "sequence 0 is empty"),
    (np.empty((0, 3)), {}, InvalidDataError, "no sequences"),
    ([["a", "b", "a"]], {"pseudocount": -1.0}, InvalidParameterError, "got -1.0"),
    ([["a", "b", "a"]], {"pseudocount": float("nan")}, InvalidParameterError, "got nan"),
    ([["a", "b", "a"]], {"pseudocount": "1"}, ParameterTypeError, "got the str '1'"),
    ([["a", "b", "a"]], {"pseudocount": True}, ParameterTypeError, "bool"),
    ([["a", "b", "a"]], {"initial": "uniform"}, InvalidModelError, "'uniform'"),
    (42, {}, ParameterTypeError, "got int"),
    ("abc", {}, ParameterTypeError, "got str"),
], ids=["none", "nan", "numpy-nan", "frame-none", "pandas-NA", "unknown-state",
        "only-length-one", "state-never-left", "empty-sequence", "empty-list", "no-rows",
        "negative-pseudocount", "nan-pseudocount", "string-pseudocount", "bool-pseudocount",
        "bad-initial", "not-a-sequence", "a-string"])
def test_bad_data(data, options: dict, error: type, fragment: str) -> None:
    with pytest.raises(error) as info:
        pp.MarkovChainScenario.fit(data, **options)
    assert fragment in str(info.value)
    assert isinstance(info.value, PufferfishError)


# ------------------------------------------------------------------------ map-reduce (issue 25)

def _same_chain(a: pp.MarkovChainScenario, b: pp.MarkovChainScenario) -> None:
    assert a.states == b.states and a.length == b.length and a.name == b.name
    np.testing.assert_array_equal(a.transition, b.transition)       # bit for bit
    if isinstance(a.initial, str):
        assert a.initial == b.initial
    else:
        np.testing.assert_array_equal(a.initial, b.initial)


def test_from_counts_by_hand() -> None:
    # SEQUENCES' counts: n(a->a)=1, n(a->b)=2, n(b->a)=2, n(b->b)=3; first states a, b, a
    mc = pp.MarkovChainScenario.from_counts([[1, 2], [2, 3]], [2, 1], 4, states=("a", "b"))
    _same_chain(mc, pp.MarkovChainScenario.fit(SEQUENCES))
    np.testing.assert_allclose(mc.transition, ML_TRANSITION, atol=1e-15)


@pytest.mark.parametrize("options", [{}, {"pseudocount": 1.0}, {"initial": "stationary"},
                                     {"length": 9, "pseudocount": 0.5}])
def test_partitions_summed_equal_fit_on_the_union(options) -> None:
    parts = [SEQUENCES[:1], SEQUENCES[1:2], SEQUENCES[2:]]
    total = sum(pp.transition_counts(p) for p in parts)
    _same_chain(total.chain(**options), pp.MarkovChainScenario.fit(SEQUENCES, **options))


def test_partitions_with_different_states_and_tables() -> None:
    rng = np.random.default_rng(4)
    codes = rng.integers(0, 4, (200, 30))
    codes[:100][codes[:100] == 3] = 2           # the first half never shows state 3
    frame = pd.DataFrame(codes)
    parts = [frame.iloc[:100], codes[100:150], [list(r) for r in codes[150:]]]
    partials = [pp.transition_counts(p) for p in parts]
    assert partials[0].states == (0, 1, 2) and type(partials[0].states[0]) is int
    total = partials[2] + partials[0] + partials[1]                  # any order
    _same_chain(total.chain(), pp.MarkovChainScenario.fit(codes))
    fixed = sum(pp.transition_counts(p, states=[3, 2, 1, 0]) for p in parts)
    _same_chain(fixed.chain(pseudocount=0.1),
                pp.MarkovChainScenario.fit(codes, states=[3, 2, 1, 0], pseudocount=0.1))


def test_ragged_label_sequences() -> None:
    seqs = [["rest", "walk"], ["walk", "walk", "run", "rest"], ["run"]]
    total = pp.transition_counts(seqs[:2]) + pp.transition_counts(seqs[2:])
    _same_chain(total.chain(pseudocount=1.0), pp.MarkovChainScenario.fit(seqs, pseudocount=1.0))


def test_counting_errors_name_the_place() -> None:
    with pytest.raises(InvalidDataError, match="sequence 1 has a missing value"):
        pp.transition_counts(np.array([[0.0, 1.0], [1.0, np.nan]]))
    with pytest.raises(InvalidDataError, match="sequence 0, position 1: state 'x'"):
        pp.transition_counts([["a", "x"]], states=["a", "b"])
    with pytest.raises(InvalidDataError, match="no sequences"):
        pp.transition_counts(np.zeros((0, 3)))
    with pytest.raises(InvalidDataError, match="state 'b' is never followed"):
        pp.MarkovChainScenario.from_counts([[1, 0], [0, 0]], [1, 0], 3, states=["a", "b"])
    with pytest.raises(InvalidDataError, match="shape"):
        pp.MarkovChainScenario.from_counts([[1, 0], [0, 1]], [1, 0, 0], 3)
    with pytest.raises(InvalidDataError, match="counts >= 0"):
        pp.MarkovChainScenario.from_counts([[1, -1], [0, 1]], [1, 0], 3)
    with pytest.raises(InvalidParameterError, match="pseudocount"):
        pp.MarkovChainScenario.from_counts([[1, 0], [0, 1]], [1, 0], 3, pseudocount=-1)


def test_fit_groups_fits_one_time_of_day_chain_per_group():
    # each group's member is exactly MarkovChainScenario.fit(period=, shrinkage=) on its own
    # sequences over the union of states (before: fit_groups refused period= by name)
    rng = np.random.default_rng(3)
    seqs = rng.integers(0, 3, size=(8, 12)).tolist()
    labels = ["a", "b"] * 4
    cls = pp.ScenarioClass.fit_groups(seqs, labels, period=3, shrinkage=2.0, pseudocount=0.5)
    for member, group in zip(cls, ("a", "b"), strict=True):
        mine = [s for s, lab in zip(seqs, labels, strict=True) if lab == group]
        alone = pp.MarkovChainScenario.fit(mine, period=3, shrinkage=2.0, pseudocount=0.5,
                                           states=(0, 1, 2))
        assert member.time_varying and member.name == group
        np.testing.assert_allclose(member.transition, alone.transition, rtol=1e-12)


def test_fit_groups_with_period_refuses_days_of_different_lengths():
    with pytest.raises(pp.InvalidDataError, match="one length"):
        pp.ScenarioClass.fit_groups([[0, 1, 0, 1], [0, 1, 1]], ["a", "b"], period=2,
                                    pseudocount=1.0)
