"""The private fit: bounded contributions, the L1 sensitivity the guarantee rests on, the noise,
and clear refusals."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pufferfish_pgm.errors import InvalidDataError, InvalidParameterError, PufferfishError
from pufferfish_pgm.scenarios import transition_counts
from pufferfish_pgm.scenarios._private_fit import (
    _bounded_counts,
    bounded_positions,
    private_transition_counts,
)

STATES = ("a", "b", "c")
#: ε so large that the discrete Laplace noise of scale Δ/ε is 0 with probability 1 - 1e-400:
#: the released counts are the exact bounded counts.
NO_NOISE = 1e9


def test_bounded_counts_by_hand() -> None:
    # user 0: a a b c b (4 transitions), max_steps 2 keeps positions ⌊j·4/2⌋ = 0, 2:
    #   (a→a) and (b→c); user 1: c a (1 transition, kept whole): (c→a)
    private = private_transition_counts([list("aabcb"), list("ca")], states=STATES, length=5,
                                        epsilon=NO_NOISE, max_steps=2,
                                        rng=np.random.default_rng(1))
    expected = np.zeros((3, 3), int)
    expected[0, 0] = expected[1, 2] = expected[2, 0] = 1
    np.testing.assert_array_equal(private.counts.transitions, expected)
    np.testing.assert_array_equal(private.counts.initial, [1, 0, 1])   # a, c
    assert (private.sensitivity, private.counts.longest) == (3, 5)


def test_without_a_bound_and_noise_it_is_the_exact_fit() -> None:
    days = [list("abcab"), list("bbcaa"), list("ccbba")]
    exact = transition_counts(days, states=STATES)
    private = private_transition_counts(days, states=STATES, length=5, epsilon=NO_NOISE,
                                        max_steps=4, rng=np.random.default_rng(2))
    np.testing.assert_array_equal(private.counts.transitions, exact.transitions)
    np.testing.assert_array_equal(private.counts.initial, exact.initial)
    assert private.chain(pseudocount=0.0).transition.tolist() == \
        exact.chain().transition.tolist()


users = st.lists(st.lists(st.sampled_from(STATES), min_size=1, max_size=9), min_size=1,
                 max_size=6)


@given(data=users, steps=st.integers(1, 9), who=st.integers(0, 5))
def test_one_user_moves_the_table_by_at_most_the_sensitivity(data, steps, who) -> None:
    # the whole guarantee: removing any one user changes (transitions, first states) by at
    # most max_steps + 1 in L1, so discrete Laplace of scale (max_steps + 1)/ε is ε-DP
    who %= len(data)
    full = _bounded_counts(data, STATES, steps)
    rest = _bounded_counts(data[:who] + data[who + 1:], STATES, steps) if len(data) > 1 \
        else (np.zeros((3, 3), int), np.zeros(3, int))
    change = np.abs(full[0] - rest[0]).sum() + np.abs(full[1] - rest[1]).sum()
    assert change == min(len(data[who]) - 1, steps) + 1 <= steps + 1


def test_the_positions_are_evenly_spaced_and_at_most_max_steps() -> None:
    assert bounded_positions(143, 24).tolist()[:4] == [0, 5, 11, 17]   # ⌊j·143/24⌋
    assert len(bounded_positions(143, 24)) == 24
    assert bounded_positions(2, 24).tolist() == [0, 1]


def test_the_noise_has_the_stated_scale() -> None:
    # 200 users of one state: cell (b, b) is 0 exactly, so its noisy value is |DL(scale)|
    # clipped at 0; the mean of max(Z, 0) for Z ~ DL(s), r = e^{-1/s}, is r / (1 - r²)
    data = [list("aaaa")] * 200
    draws = [private_transition_counts(data, states=STATES, length=4, epsilon=1.0,
                                       max_steps=3, rng=np.random.default_rng(seed)
                                       ).counts.transitions[1, 1] for seed in range(400)]
    r = np.exp(-1 / 4.0)
    assert abs(np.mean(draws) - r / (1 - r**2)) < 0.35   # sd of the mean ~ 0.12


def test_secure_noise_by_default_and_reproducible_with_a_generator() -> None:
    a = private_transition_counts([list("ab")], states=STATES, length=2, epsilon=1.0,
                                  max_steps=1, rng=np.random.default_rng(5))
    b = private_transition_counts([list("ab")], states=STATES, length=2, epsilon=1.0,
                                  max_steps=1, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(a.counts.transitions, b.counts.transitions)
    private_transition_counts([list("ab")], states=STATES, length=2, epsilon=1.0, max_steps=1)


@pytest.mark.parametrize("kwargs, error, text", [
    ({"states": None}, InvalidParameterError, "public input"),
    ({"states": ("a", "a", "b", "c")}, InvalidParameterError, "distinct"),
    ({"states": ("a", "b")}, InvalidDataError, "'c' is not among"),
    ({"epsilon": 0.0}, PufferfishError, "epsilon"),
    ({"epsilon": float("nan")}, PufferfishError, "epsilon"),
    ({"max_steps": 0}, PufferfishError, "max_steps"),
    ({"length": -2}, PufferfishError, "length"),
])
def test_bad_input_is_refused_by_name(kwargs, error, text) -> None:
    args = {"states": STATES, "length": 3, "epsilon": 1.0, "max_steps": 2} | kwargs
    with pytest.raises(error, match=text):
        private_transition_counts([list("abc")], **args)


def test_no_sequences_are_refused() -> None:
    with pytest.raises(InvalidDataError, match="no sequences"):
        private_transition_counts([], states=STATES, length=3, epsilon=1.0, max_steps=2)


def test_the_noisy_counts_feed_a_posterior_class() -> None:
    # the private fit's counts as pseudo-data (docs/posterior.md): n = 22 for 0.9 / 0.9
    # (0.9^22 = 0.098 <= 0.1 < 0.9^21), chains of the public length
    days = [list("aabbaab"), list("abababa"), list("bbbbaaa")] * 20
    private = private_transition_counts(days, states=("a", "b"), length=7, epsilon=1.0,
                                        max_steps=6, rng=np.random.default_rng(0))
    from pufferfish_pgm import ScenarioClass

    cls = ScenarioClass.from_posterior(private.counts, coverage=0.9, confidence=0.9, seed=1)
    assert (len(cls), cls.posterior.draws, cls.members[0].length) == (22, 22, 7)
