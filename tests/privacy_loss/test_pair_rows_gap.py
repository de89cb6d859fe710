"""The fast path of ``Group._largest_gap`` (issue 21, item 2): per pair it returns exactly the
value and grid index of the full rule it skips (NaN gaps where both densities underflow count
0 for one coordinate and ``inf`` for vectors; with an ``inf`` gap only mass points count),
zero masses and zero transitions included."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pufferfish_pgm.privacy_loss._pair_rows import Group, build_groups
from pufferfish_pgm.queries import Count
from pufferfish_pgm.scenarios import MarkovChainScenario
from pufferfish_pgm.secrets import Framework


def _reference(group, da, db, first, second):
    """The rule before the fast path, verbatim: every special value replaced first."""
    with np.errstate(invalid="ignore"):
        gap = np.abs(da - db)
    scalar = len(group.grids) == 1
    gap = np.where(np.isnan(gap), 0.0 if scalar else np.inf, gap)
    if scalar and np.isinf(gap).any():
        mass = np.isfinite(group.rows[first]) | np.isfinite(group.rows[second])
        gap = np.where(mass, gap, 0.0)
    where = np.argmax(gap, axis=1)
    return gap[np.arange(first.size), where], where


def _same(group, da, db, first, second):
    want = _reference(group, da, db, first, second)
    got = group._largest_gap(da.copy(), db.copy(), first, second)
    assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 10**6), rows=st.integers(2, 6), n=st.integers(1, 40),
       special=st.sampled_from(["none", "-inf", "+inf", "both", "nan"]),
       vector=st.booleans())
def test_largest_gap_equals_the_full_rule(seed, rows, n, special, vector):
    rng = np.random.default_rng(seed)
    dens = rng.normal(0.0, 3.0, (rows, n))
    log_mass = np.where(rng.random((rows, n)) < 0.3, -np.inf, rng.normal(0.0, 1.0, (rows, n)))
    if special in ("-inf", "both"):
        dens[rng.random((rows, n)) < 0.3] = -np.inf      # underflow: -inf - -inf is NaN
    if special in ("+inf", "both"):
        dens[rng.random((rows, n)) < 0.1] = np.inf
    if special == "nan":
        dens[rng.random((rows, n)) < 0.1] = np.nan
    first, second = np.triu_indices(rows, 1)
    grids = (np.arange(n, dtype=float),) if not vector else (np.arange(n, dtype=float),
                                                             np.zeros(1))
    group = Group(0, "g", grids, log_mass.reshape((rows, n) if not vector else (rows, n, 1)),
                  first, second, tuple(range(first.size)))
    _same(group, dens[first], dens[second], first, second)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(2, 4), length=st.integers(2, 6),
       zeros=st.integers(0, 3), scale=st.sampled_from([1e-300, 1e-3, 0.3, 3.0, 1e3]))
def test_chain_epsilons_equal_the_full_rule(seed, k, length, zeros, scale):
    """Chains with zero transitions (impossible counts: -inf masses and densities)."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(k), size=k)
    for _ in range(zeros):
        i, j = rng.integers(0, k, 2)
        if i != j:
            p[i, j] = 0.0
    p /= p.sum(axis=1, keepdims=True)
    chain = MarkovChainScenario(p, np.full(k, 1.0 / k), length)   # every state possible
    groups, _ = build_groups(Framework(chain), [Count(0)], [[1]], [0])
    for group in groups:
        first, second = group.first, group.second
        dens = group.log_densities(np.array([scale]))
        _same(group, dens[first], dens[second], first, second)
