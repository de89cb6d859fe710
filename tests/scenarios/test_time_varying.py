"""Time-varying chains (issue 22, item 1): construction, the per-block fit by hand, counts."""

from __future__ import annotations

import numpy as np
import pytest
from oracle import brute_conditional

from pufferfish_pgm.errors import InvalidDataError, InvalidModelError, InvalidParameterError
from pufferfish_pgm.inference import conditional
from pufferfish_pgm.scenarios import MarkovChainScenario, transition_counts

STEPS = np.array([[[0.9, 0.1], [0.5, 0.5]],
                  [[0.2, 0.8], [0.0, 1.0]],
                  [[0.6, 0.4], [0.3, 0.7]]])


def test_stack_is_validated_per_step_and_row() -> None:
    bad = STEPS.copy()
    bad[2, 1] = [0.3, 0.6]
    with pytest.raises(InvalidModelError, match=r"step 2 \(X_2 -> X_3\), row 1"):
        MarkovChainScenario(bad, [1, 0], 4)
    bad = STEPS.copy()
    bad[1, 0, 1] = -0.1
    with pytest.raises(InvalidModelError, match=r"step 1.*transition\[1, 0, 1\]"):
        MarkovChainScenario(bad, [1, 0], 4)
    with pytest.raises(InvalidModelError, match=r"\(4, k, k\)"):
        MarkovChainScenario(STEPS, [1, 0], 5)          # 3 matrices for 4 steps
    with pytest.raises(InvalidModelError, match="no stationary distribution"):
        MarkovChainScenario(STEPS, "stationary", 4)


def test_marginals_products_and_network_agree() -> None:
    mc = MarkovChainScenario(STEPS, [0.3, 0.7], 4)
    assert mc.time_varying and mc.k == 2 and mc.step(2).tolist() == STEPS[2].tolist()
    assert np.allclose(mc.product(1, 3), STEPS[1] @ STEPS[2])
    assert np.allclose(mc.marginal(3), np.array([0.3, 0.7]) @ STEPS[0] @ STEPS[1] @ STEPS[2])
    bn = mc.to_network()
    for t in range(4):
        assert np.allclose(bn.cpt(t), np.array([0.3, 0.7]) if t == 0 else STEPS[t - 1].T)
    # exact chain inference uses every step's matrix: same as brute force on the network
    got = conditional(mc, [0, 3], {1: 1})
    assert np.allclose(got, brute_conditional(bn, [0, 3], {1: 1}))
    with pytest.raises(InvalidModelError, match="product"):
        mc.power(2)


def test_with_length_cuts_but_does_not_invent_steps() -> None:
    mc = MarkovChainScenario(STEPS, [1, 0], 4)
    assert mc.with_length(2).transition.tolist() == STEPS[:1].tolist()
    with pytest.raises(InvalidModelError, match="cannot be extended"):
        mc.with_length(6)


# Data for the fit by hand: states a = 0, b = 1, a day of 5 slots, period 2, so the blocks of
# start slots are {0, 1}, {2, 3} and {4} (the overnight step, never seen within a day).
DAYS = [["a", "a", "b", "b", "a"],
        ["a", "b", "b", "a", "a"]]
# transitions (start slot: from -> to)
#   day 1: 0 a->a, 1 a->b, 2 b->b, 3 b->a        day 2: 0 a->b, 1 b->b, 2 b->a, 3 a->a
# C_0 = [[a->a 1, a->b 2], [b->a 0, b->b 1]]     C_1 = [[1, 0], [2, 1]]     C_2 = 0
# pooled C = [[2, 2], [2, 2]] -> P̄ = [[1/2, 1/2], [1/2, 1/2]] (pseudocount 0)
# with s = 2: P_0 row a = (1 + 1, 2 + 1) / (3 + 2) = (0.4, 0.6);  row b = (0 + 1, 1 + 1) / 3
#             P_1 row a = (1 + 1, 0 + 1) / (1 + 2) = (2/3, 1/3);  row b = (2 + 1, 1 + 1) / 5
#             P_2 = P̄ (no counts)
HAND = np.array([[[0.4, 0.6], [1 / 3, 2 / 3]],
                 [[2 / 3, 1 / 3], [0.6, 0.4]],
                 [[0.5, 0.5], [0.5, 0.5]]])


def test_fit_is_the_shrinkage_formula_by_hand() -> None:
    mc = MarkovChainScenario.fit(DAYS, period=2, shrinkage=2.0)
    assert mc.length == 5 and mc.states == ("a", "b")
    # steps 0..3 start in slots 0..3: blocks 0, 0, 1, 1
    assert np.allclose(mc.transition, HAND[[0, 0, 1, 1]])
    assert np.allclose(mc.initial, [1.0, 0.0])


def test_fit_with_pseudocount_shrinks_to_the_smoothed_pooled_fit() -> None:
    # pseudocount 1: P̄ = (C + 1) / (4 + 2) = [[1/2, 1/2], [1/2, 1/2]] again (C is uniform),
    # but the first-state law becomes (2 + 1, 0 + 1) / 4
    mc = MarkovChainScenario.fit(DAYS, period=2, shrinkage=2.0, pseudocount=1.0)
    assert np.allclose(mc.transition, HAND[[0, 0, 1, 1]])
    assert np.allclose(mc.initial, [0.75, 0.25])


def test_long_chains_repeat_the_day() -> None:
    mc = MarkovChainScenario.fit(DAYS, period=2, shrinkage=2.0, length=12)
    # step t uses block ((t mod 5) // 2): 0 0 1 1 2 | 0 0 1 1 2 | 0
    assert np.allclose(mc.transition, HAND[[0, 0, 1, 1, 2, 0, 0, 1, 1, 2, 0]])


def test_shrinkage_zero_keeps_block_counts_and_unseen_rows_are_pooled() -> None:
    mc = MarkovChainScenario.fit(DAYS, period=2, shrinkage=0.0)
    assert np.allclose(mc.step(0), [[1 / 3, 2 / 3], [0.0, 1.0]])     # C_0 rows normalised
    assert np.allclose(mc.step(2), [[1.0, 0.0], [2 / 3, 1 / 3]])


def test_default_shrinkage_is_ten() -> None:
    mc = MarkovChainScenario.fit(DAYS, period=2)
    # P_0 row a = (1 + 10·0.5, 2 + 10·0.5) / (3 + 10)
    assert np.allclose(mc.step(0)[0], [6 / 13, 7 / 13])


def test_counts_per_block_add_up_to_the_fit_on_the_union() -> None:
    a, b = transition_counts(DAYS[:1], period=2), transition_counts(DAYS[1:], period=2)
    total = a + b
    assert total.transitions.tolist() == [[[1, 2], [0, 1]], [[1, 0], [2, 1]], [[0, 0], [0, 0]]]
    fitted = MarkovChainScenario.fit(DAYS, period=2, shrinkage=2.0, length=9)
    assert np.array_equal(total.chain(shrinkage=2.0, length=9).transition, fitted.transition)
    direct = MarkovChainScenario.from_counts(total.transitions, total.initial, 9, period=2,
                                             shrinkage=2.0, day=5, states=("a", "b"))
    assert np.array_equal(direct.transition, fitted.transition)


def test_counts_of_a_shorter_partition_are_padded() -> None:
    short = transition_counts([["a", "b", "a"]], period=2)       # a day of 3: 2 blocks
    total = short + transition_counts(DAYS, period=2)
    assert total.transitions.shape == (3, 2, 2) and total.longest == 5
    with pytest.raises(InvalidDataError, match="per block"):
        short + transition_counts(DAYS)


def test_bad_period_and_shrinkage_are_refused() -> None:
    with pytest.raises(InvalidParameterError, match="period"):
        MarkovChainScenario.fit(DAYS, period=0)
    with pytest.raises(InvalidParameterError, match="shrinkage"):
        MarkovChainScenario.fit(DAYS, period=2, shrinkage=-1)
    with pytest.raises(InvalidParameterError, match="period="):
        MarkovChainScenario.fit(DAYS, shrinkage=2.0)
    with pytest.raises(InvalidDataError, match="blocks"):
        MarkovChainScenario.from_counts(np.ones((2, 2, 2)), [1, 1], 9, period=2, day=5)
