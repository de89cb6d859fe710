"""W∞ on an evenly spaced grid by one merge per pair, against shifting one step at a time."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pufferfish_pgm.distributions._w_infinity import _LOGIT_TIE, exact_w_infinity, logit_cdf


def _shifting(step: float, la: np.ndarray, lb: np.ndarray) -> np.ndarray:
    """The definition, one shift d at a time (the engine's loop before the merge)."""
    n = la.shape[1]
    out = np.full(la.shape[0], float(n - 1))
    for r in range(la.shape[0]):
        for d in range(n):
            a, b = la[r], lb[r]
            if (np.all(a[:n - d] <= b[d:] + _LOGIT_TIE)
                    and np.all(b[:n - d] <= a[d:] + _LOGIT_TIE)):
                out[r] = d
                break
    return out * step


@st.composite
def log_rows(draw, rows: int, n: int) -> np.ndarray:
    """Rows of log masses with zeros, masses down to e^-700 and shared supports."""
    exps = draw(st.lists(st.lists(st.sampled_from([-np.inf, 0.0, -1.0, -30.0, -700.0, -2.5]),
                                  min_size=n, max_size=n), min_size=rows, max_size=rows))
    out = np.array(exps, dtype=float)
    out[np.isinf(out).all(axis=1), 0] = 0.0          # every law has some mass
    return out


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 12).flatmap(lambda n: st.tuples(st.just(n), log_rows(5, n),
                                                        log_rows(5, n))))
def test_merge_equals_shifting(case) -> None:
    n, a, b = case
    grid = np.arange(n, dtype=float) * 0.5
    with np.errstate(invalid="ignore"):
        want = _shifting(0.5, logit_cdf(a), logit_cdf(b))
    np.testing.assert_array_equal(exact_w_infinity(grid, a, b), want)


def test_golden_shift_of_a_point_mass() -> None:
    # a point mass at 0 against one at 3 (grid step 2): the quantiles differ by 3 steps, 6.0;
    # a law against itself: 0; a sliver of e^-700 at the far end still moves it to 3 steps
    grid = np.arange(4, dtype=float) * 2.0
    with np.errstate(divide="ignore"):
        a = np.log([[1.0, 0, 0, 0], [1.0, 0, 0, 0], [1.0, 0, 0, 0]])
        b = np.log([[0, 0, 0, 1.0], [1.0, 0, 0, 0], [1.0, 0, 0, 0]])
    b[2, 3] = -700.0
    assert exact_w_infinity(grid, a, b).tolist() == [6.0, 0.0, 6.0]


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 10).flatmap(lambda n: st.tuples(st.just(n), log_rows(4, n))))
def test_delta_star_rows_equal_the_distribution_function(case) -> None:
    # the Kantorovich mechanism's per-group form gives bit for bit what the per-pair function
    # gives on DiscreteDistribution.from_arrays (before: 129,600 distributions built at T = 720)
    from pufferfish_pgm.distributions import DiscreteDistribution, kantorovich_delta_star
    from pufferfish_pgm.distributions._engine import delta_star_rows

    n, rows = case
    rows = rows - np.logaddexp.reduce(rows, axis=1, keepdims=True)   # laws, as the layout's
    # a row no pair reads may be massless (an impossible secret's): the campaign found
    # delta_star_rows indexing its empty support
    rows = np.vstack([rows, np.full(n, -np.inf)])
    grid = np.cumsum(np.arange(1, n + 1) * 0.5)               # increasing, uneven
    first, second = np.array([0, 1, 2, 3, 0]), np.array([1, 2, 3, 0, 0])
    laws = [DiscreteDistribution.from_arrays(grid[row > -np.inf], np.exp(row[row > -np.inf]))
            for row in rows[:4]]
    want = [kantorovich_delta_star(laws[a], laws[b]) for a, b in zip(first, second, strict=True)]
    assert delta_star_rows(grid, rows, first, second).tolist() == want
