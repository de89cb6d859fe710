"""The per-slot DP baseline: temporal privacy leakage (Cao, Yoshikawa, Xiao & Xiong, ICDE 2017).

Worked number (also in docs/temporal-leakage.md). P = [[0.8, 0.2], [0.1, 0.9]], ε = 1 per slot.

Stationary law: π = π P gives π = (1/3, 2/3). Backward correlation
P^B[i, j] = π_j P[j, i] / π_i: P^B[0, 1] = (2/3)(0.1)/(1/3) = 0.2, P^B[1, 0] = (1/3)(0.2)/(2/3)
= 0.1, so P^B = P (a two-state chain is reversible). The leakage function of one ordered pair
of rows q, d and set S, with y = 1 + (e^α - 1)·1_S, is log[(q(S) e^α + 1 - q(S)) / (d(S) e^α +
1 - d(S))]. The proper prefixes by q_j/d_j: rows (0, 1): S = {0}, q = 0.8, d = 0.1; rows
(1, 0): S = {1}, q = 0.9, d = 0.2.

BPL_0 = ε = 1.
BPL_1 = L(1) + 1. With e = 2.718282:
  rows (0, 1): (0.8e + 0.2) / (0.1e + 0.9) = 2.374626 / 1.171828 = 2.026432, log = 0.706275
  rows (1, 0): (0.9e + 0.1) / (0.2e + 0.8) = 2.546454 / 1.343656 = 1.895168, log = 0.639308
  so L(1) = 0.706275 and BPL_1 = 1.706275.
BPL_2 = L(1.706275) + 1: e^1.706275 = 5.508563; (0.8·5.508563 + 0.2) / (0.1·5.508563 + 0.9)
  = 4.606850 / 1.450856 = 3.175288, log = 1.155374, so BPL_2 = 2.155374.
Supremum: α = L(α) + 1 with z = e^α solves d z² + (1 - d - e q) z - e (1 - q) = 0.
  rows (0, 1): 0.1 z² + (0.9 - 2.174625) z - 0.2e = 0, z = 13.15937, α = 2.577135;
  rows (1, 0): 0.2 z² + (0.8 - 2.446454) z - 0.1e = 0, z = 8.39418, α = 2.127626.
  sup BPL = 2.577135; P^F = P gives sup FPL = 2.577135; sup TPL = 2·2.577135 - 1 = 4.154271.
With three releases (T = 3) the middle slot leaks TPL_1 = BPL_1 + FPL_1 - ε = 2·1.706275 - 1
= 2.412549, where one release alone would leak ε = 1.

Independent check (below): enumerate every state sequence and every output sequence of
randomised response on the slot (and Laplace on the slot indicator, on a grid of outputs that
includes the extremes), and take the largest log-ratio of P(outputs | X_t = i) over pairs i, i'.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import pufferfish_pgm.privacy_loss as pl
from pufferfish_pgm.errors import InvalidModelError, InvalidParameterError, PufferfishError
from pufferfish_pgm.scenarios._chain_validation import stationary_distribution

P = np.array([[0.8, 0.2], [0.1, 0.9]])


# ---------------------------------------------------------------------------------------------
# the worked number


def test_worked_number_from_the_definition() -> None:
    e = math.e
    assert pl.leakage_function(P, 1.0) == pytest.approx(math.log((0.8 * e + 0.2) / (0.1 * e + 0.9)))
    tl = pl.temporal_leakage(P, [1.0, 1.0, 1.0])
    assert tl.backward == pytest.approx([1.0, 1.706275, 2.155374], abs=1e-6)
    assert tl.forward == pytest.approx([2.155374, 1.706275, 1.0], abs=1e-6)
    assert tl.total == pytest.approx([2.155374, 2.412549, 2.155374], abs=1e-6)
    assert tl.max_total == pytest.approx(2.412549, abs=1e-6)
    sup = pl.leakage_supremum(P, 1.0)
    assert (sup.backward, sup.forward) == pytest.approx((2.577135, 2.577135), abs=1e-6)
    assert sup.total == pytest.approx(4.154271, abs=1e-6)
    # the recursion converges to the closed form, from below
    long = pl.temporal_leakage(P, np.ones(80))
    assert long.backward[-1] == pytest.approx(sup.backward, abs=1e-9)
    assert (np.diff(long.backward) >= 0).all() and (long.backward <= sup.backward + 1e-12).all()
    assert long.max_total == pytest.approx(sup.total, abs=1e-9)


def test_backward_correlation_is_the_time_reversal() -> None:
    p3 = np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.1, 0.2, 0.7]])
    pi = stationary_distribution(p3)
    back = pl.backward_correlation(p3, pi)
    assert back == pytest.approx(pi[None, :] * p3.T / pi[:, None])
    assert back.sum(axis=1) == pytest.approx(np.ones(3))
    assert pl.backward_correlation(P, stationary_distribution(P)) == pytest.approx(P)


# ---------------------------------------------------------------------------------------------
# the prefix rule against brute force


def _brute_force(c: np.ndarray, alpha: float) -> float:
    """max over ordered pairs of rows and every y in {1, e^α}^n (all vertices of the box)."""
    k = c.shape[0]
    best = 0.0
    for bits in itertools.product([0.0, 1.0], repeat=k):
        y = np.exp(alpha * np.array(bits))
        for i in range(k):
            for i2 in range(k):
                if i != i2:
                    best = max(best, math.log((c[i] @ y) / (c[i2] @ y)))
    return best


def _random_stochastic(rng: np.random.Generator, k: int, zeros: float) -> np.ndarray:
    m = rng.random((k, k)) * (rng.random((k, k)) > zeros)
    m[np.arange(k), rng.integers(0, k, size=k)] += 0.05     # no empty row
    return m / m.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("k", [2, 3, 4, 5])
def test_prefixes_equal_brute_force_over_vertices(k: int) -> None:
    rng = np.random.default_rng(k)
    for _ in range(40):
        c = _random_stochastic(rng, k, zeros=rng.choice([0.0, 0.3, 0.6]))
        for alpha in (0.05, 0.7, 2.0, 6.0):
            assert pl.leakage_function(c, alpha) == pytest.approx(_brute_force(c, alpha),
                                                                 rel=1e-12, abs=1e-12)


def test_no_interior_point_beats_the_vertices() -> None:
    rng = np.random.default_rng(7)
    for _ in range(30):
        c = _random_stochastic(rng, 4, zeros=0.3)
        alpha = float(rng.uniform(0.1, 3))
        y = np.exp(alpha * rng.random((2000, 4)))            # y in [1, e^α]^4
        ratios = np.log((y @ c.T)[:, :, None] / (y @ c.T)[:, None, :]).max()
        assert ratios <= pl.leakage_function(c, alpha) + 1e-12


def test_extreme_correlations() -> None:
    assert pl.leakage_function(np.eye(3), 4.0) == pytest.approx(4.0)   # all passes through
    assert pl.leakage_function(np.full((3, 3), 1 / 3), 4.0) == 0.0    # independent slots
    assert pl.leakage_function(np.eye(2), 800.0) == pytest.approx(800.0)   # no overflow
    tl = pl.temporal_leakage(np.eye(2), [0.5] * 4, initial=[0.5, 0.5])
    assert tl.backward.tolist() == [0.5, 1.0, 1.5, 2.0]        # group privacy, exactly
    assert tl.total.tolist() == [2.0] * 4
    assert pl.leakage_supremum(np.full((2, 2), 0.5), 1.0).total == 1.0   # independent: just ε


# ---------------------------------------------------------------------------------------------
# independent check: exact realised leakage by enumerating sequences


def _exact_leakage(p: np.ndarray, init: np.ndarray, emit: np.ndarray,
                   horizon: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    k, m = emit.shape
    paths = np.array(list(itertools.product(range(k), repeat=horizon)))
    prob = init[paths[:, 0]].copy()
    for s in range(horizon - 1):
        prob *= p[paths[:, s], paths[:, s + 1]]
    outs = np.array(list(itertools.product(range(m), repeat=horizon)))
    like = np.stack([emit[paths[:, s]][:, outs[:, s]] for s in range(horizon)])  # T, paths, outs
    result = np.zeros((3, horizon))
    for t in range(horizon):
        states = [i for i in range(k) if prob[paths[:, t] == i].sum() > 0]
        for row, slots in enumerate([range(t + 1), range(t, horizon), range(horizon)]):
            joint = prob[:, None] * np.prod(like[list(slots)], axis=0)
            cond = {i: joint[paths[:, t] == i].sum(axis=0) / prob[paths[:, t] == i].sum()
                    for i in states}
            result[row, t] = max((np.log(cond[i] / cond[i2]).max()
                                  for i in states for i2 in states if i != i2), default=0.0)
    return result[0], result[1], result[2]


def _randomised_response(k: int, eps: float) -> np.ndarray:
    return (np.ones((k, k)) + (math.exp(eps) - 1) * np.eye(k)) / (math.exp(eps) + k - 1)


def _laplace_on_indicator(eps: float) -> np.ndarray:
    # density of Laplace(scale 1/ε) around the slot's indicator (0 or 1), at outputs that include
    # the extremes (r <= 0 and r >= 1 give likelihood ratios e^-ε and e^ε) and interior points
    grid = np.array([-0.7, 0.0, 0.3, 0.5, 1.0, 1.6])
    return np.stack([eps / 2 * np.exp(-eps * np.abs(grid - v)) for v in (0.0, 1.0)])


@pytest.mark.parametrize("emit", ["rr", "laplace"])
@pytest.mark.parametrize("eps", [0.3, 1.0, 2.0])
def test_two_state_stationary_chain_the_definition_is_exact(emit: str, eps: float) -> None:
    # on a stationary, positively correlated two-state chain, per-slot randomised response and
    # Laplace on the indicator leak exactly BPL, FPL and TPL = BPL + FPL - ε at every slot
    mechanism = _randomised_response(2, eps) if emit == "rr" else _laplace_on_indicator(eps)
    horizon = 4 if emit == "rr" else 3
    for p in (P, np.array([[0.55, 0.45], [0.3, 0.7]])):
        tl = pl.temporal_leakage(p, [eps] * horizon)
        back, fwd, tot = _exact_leakage(p, stationary_distribution(p), mechanism, horizon)
        assert back == pytest.approx(tl.backward, abs=1e-9)
        assert fwd == pytest.approx(tl.forward, abs=1e-9)
        assert tot == pytest.approx(tl.total, abs=1e-9)


def test_worked_number_by_enumeration() -> None:
    back, fwd, tot = _exact_leakage(P, np.array([1 / 3, 2 / 3]), _randomised_response(2, 1.0), 3)
    assert back == pytest.approx([1.0, 1.706275, 2.155374], abs=1e-6)
    assert tot == pytest.approx([2.155374, 2.412549, 2.155374], abs=1e-6)


def test_elsewhere_the_definition_is_an_upper_bound() -> None:
    # three states (randomised response does not reach every vertex of the box), and a
    # two-state chain started off its stationary law (the backward correlation changes with t,
    # and the worst pair of one step is not the worst orientation for the next, nor for the
    # forward direction): the realised leakage is below the definition, never above.
    p3 = np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.1, 0.2, 0.7]])
    tl = pl.temporal_leakage(p3, [1.0] * 3)
    rr3 = _randomised_response(3, 1.0)
    back, fwd, tot = _exact_leakage(p3, stationary_distribution(p3), rr3, 3)
    assert (back <= tl.backward + 1e-9).all() and (fwd <= tl.forward + 1e-9).all()
    assert (tot <= tl.total + 1e-9).all() and tot[1] < tl.total[1] - 0.03
    start = np.array([0.5, 0.5])
    tl = pl.temporal_leakage(P, [1.0] * 4, initial=start)
    back, fwd, tot = _exact_leakage(P, start, _randomised_response(2, 1.0), 4)
    assert back[:3] == pytest.approx(tl.backward[:3], abs=1e-9)   # tight for the first steps
    assert fwd == pytest.approx(tl.forward, abs=1e-9)
    assert back[3] < tl.backward[3] - 0.02 and (tot <= tl.total + 1e-9).all()


def test_anti_correlated_chain_the_scalar_recursion_is_loose() -> None:
    # P' = [[0.2, 0.8], [0.9, 0.1]]: the worst pair (0, 1) at step t needs y_1 / y_0 large at
    # step t-1, i.e. the *other* orientation (1, 0), whose leakage is smaller; the definition
    # bounds both orientations by one number (the max) and so overstates the leakage from t = 2
    p = np.array([[0.2, 0.8], [0.9, 0.1]])
    tl = pl.temporal_leakage(p, [1.0] * 4)
    assert tl.backward == pytest.approx(pl.temporal_leakage(P, [1.0] * 4).backward)  # same values
    back, _, tot = _exact_leakage(p, stationary_distribution(p), _randomised_response(2, 1.0), 4)
    assert back[:2] == pytest.approx(tl.backward[:2], abs=1e-9)
    assert back[2:] == pytest.approx([2.116309, 2.304765], abs=1e-6)   # < 2.155374, 2.393703
    assert (tot <= tl.total + 1e-9).all()


def test_a_start_the_attacker_knows_removes_the_first_secret_pair() -> None:
    # X_0 = 0 for sure: P^B at step 1 has equal rows, so BPL_1 = ε (nothing flows back)
    tl = pl.temporal_leakage(P, [1.0] * 4, initial=[1.0, 0.0])
    assert tl.backward[:2].tolist() == [1.0, 1.0]
    back, _, _ = _exact_leakage(P, np.array([1.0, 0.0]), _randomised_response(2, 1.0), 4)
    assert back[1:] == pytest.approx(tl.backward[1:], abs=1e-9)


# ---------------------------------------------------------------------------------------------
# when the supremum exists


def test_supremum_is_finite_iff_every_unshared_mass_is_below_e_minus_eps() -> None:
    # rows 0 and 1 share nothing with row 2's support {2} except...; row 0 puts q = 0.3 on
    # state 0, which row 1 never reaches: bounded iff e^ε · 0.3 < 1, i.e. ε < log(1/0.3)
    p = np.array([[0.3, 0.7, 0.0], [0.0, 0.6, 0.4], [0.2, 0.3, 0.5]])
    unshared = []
    for c in (p, pl.backward_correlation(p, stationary_distribution(p))):
        for i in range(3):
            for i2 in range(3):
                unshared.append(c[i][c[i2] == 0].sum())
    threshold = -math.log(max(unshared))
    below, above = threshold - 0.05, threshold + 0.05
    sup = pl.leakage_supremum(p, below)
    assert math.isfinite(sup.total)
    assert pl.temporal_leakage(p, [below] * 3000).max_total == pytest.approx(sup.total, rel=1e-6)
    assert pl.leakage_supremum(p, above).total == math.inf
    grow = pl.temporal_leakage(p, [above] * 2000).backward     # grows without bound
    assert grow[-1] - grow[-1001] > 0.5 * 1000 * (above - threshold)


def test_disjoint_rows_never_have_a_supremum() -> None:
    cycle = np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    assert pl.leakage_supremum(cycle, 0.01).total == math.inf
    tl = pl.temporal_leakage(cycle, [0.01] * 100)
    assert tl.backward[-1] == pytest.approx(1.0)               # ε·t: group privacy
    positive = np.array([[0.9, 0.1], [0.05, 0.95]])
    assert math.isfinite(pl.leakage_supremum(positive, 20.0).total)


def test_closed_form_matches_iteration_on_random_chains() -> None:
    rng = np.random.default_rng(3)
    for _ in range(25):
        p = _random_stochastic(rng, 4, zeros=0.0)
        eps = float(rng.uniform(0.05, 2))
        sup = pl.leakage_supremum(p, eps)
        it = pl.temporal_leakage(p, [eps] * 4000)
        assert it.backward[-1] == pytest.approx(sup.backward, rel=1e-7)
        assert it.forward[0] == pytest.approx(sup.forward, rel=1e-7)


# ---------------------------------------------------------------------------------------------
# argument errors


@pytest.mark.parametrize(("call", "error"), [
    (lambda: pl.temporal_leakage(P, []), InvalidParameterError),
    (lambda: pl.temporal_leakage(P, [1.0, -1.0]), InvalidParameterError),
    (lambda: pl.temporal_leakage(P, [1.0, math.inf]), InvalidParameterError),
    (lambda: pl.temporal_leakage([[0.5, 0.6], [0.5, 0.5]], [1.0]), InvalidModelError),
    (lambda: pl.temporal_leakage(P, [1.0], initial=[0.5, 0.6]), InvalidModelError),
    (lambda: pl.temporal_leakage(np.eye(2), [1.0]), InvalidModelError),   # no unique π
    (lambda: pl.leakage_supremum(P, 0.0), InvalidParameterError),
    (lambda: pl.leakage_function(P, -1.0), InvalidParameterError),
    (lambda: pl.leakage_function([[0.5, 0.6], [0.5, 0.5]], 1.0), InvalidParameterError),
])
def test_bad_arguments(call, error) -> None:
    with pytest.raises(error) as info:
        call()
    assert isinstance(info.value, PufferfishError)
