"""Exact calibration near its floor (issue 21, item 2): the shortcuts change no result.

* the streamed path equals the stored one on sticky chains (with zero transitions and
  impossible secrets), to the bisection's rtol;
* the octave grid of the MGF bracket is searched in blocks: the same failing scale;
* the engine step takes the log-space sum only in the columns that need it;
* the laws of one node stop the forward and backward passes at that node;
* the batched node convolution gives :func:`convolve`'s values row by row;
* the middle bound is evaluated once where it passes at the scale already found;
* the early size check counts what a middle plan holds, so a long chain that fits runs.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import sticky_chains
from hypothesis import given, settings
from hypothesis import strategies as st

import pufferfish_pgm as pp
import pufferfish_pgm.distributions._log_space as log_space
import pufferfish_pgm.privacy_loss._mgf_bracket as bracket
import pufferfish_pgm.privacy_loss._middle_nodes as middle
import pufferfish_pgm.queries._count_engine as engine
import pufferfish_pgm.queries._truncated_count_law as truncated
from pufferfish_pgm.distributions._log_space import log_matmul, logsumexp
from pufferfish_pgm.privacy_loss._chain_streams import chain_streams
from pufferfish_pgm.privacy_loss._middle_nodes import MiddleClass
from pufferfish_pgm.queries._count_engine import convolve
from pufferfish_pgm.queries._truncated_count_law import convolve_rows, stream_node_laws


def _with_zeros(chain, rng):
    """The chain with about a fifth of its off-diagonal transitions set to 0 (rows
    renormalised) and its first state impossible at the start."""
    p = chain.transition.copy()
    k = len(p)
    cut = (rng.random((k, k)) < 0.2) & ~np.eye(k, dtype=bool)
    p[cut] = 0.0
    p /= p.sum(axis=1, keepdims=True)
    q = chain.initial_distribution.copy()
    q[0] = 0.0
    return pp.MarkovChainScenario(p, q / q.sum(), chain.length, name="sticky zeros")


@settings(max_examples=12, deadline=None)
@given(chain=sticky_chains(k=3, max_length=70), zeros=st.booleans(), seed=st.integers(0, 99),
       eps=st.sampled_from([0.5, 1.0, 2.0]))
@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_streamed_equals_stored_on_sticky_chains(chain, zeros, seed, eps):
    if zeros:
        chain = _with_zeros(chain, np.random.default_rng(seed))
    fw, query = pp.Framework(chain), pp.Count(1)
    stored = pp.ExactLaplaceMechanism(epsilon=eps, streaming=False).calibrate(fw, query)
    streamed = pp.ExactLaplaceMechanism(epsilon=eps, streaming=True).calibrate(fw, query)
    assert streamed.scale == pytest.approx(stored.scale, rel=1e-9)
    if streamed.evidence.streamed:
        assert streamed.evidence.audit.passes(eps)
        assert {e.pair for e in streamed.evidence.skipped} == {
            e.pair for e in stored.evidence.skipped}


def _tasks(rng, k, length):
    p = 0.9 * np.eye(k) + 0.1 * rng.dirichlet(np.ones(k), size=k)
    w = np.tile(np.arange(k) % 2, (length, 1))
    node = rng.integers(0, length, 5)
    return [bracket.MgfTask(p, np.full(k, 1.0 / k), w, node, np.zeros(5, np.int64),
                            np.ones(5, np.int64))]


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(2, 4), length=st.integers(2, 60),
       upper=st.sampled_from([1.0, 60.0, 1e6]))
def test_the_octave_blocks_find_the_full_grid_s_failing_scale(seed, k, length, upper):
    tasks = _tasks(np.random.default_rng(seed), k, length)
    blocked = bracket.failing_scale(tasks, 1.0, upper)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(bracket, "OCTAVE_BLOCK", 61)
        full = bracket.failing_scale(tasks, 1.0, upper)
    assert blocked == full


def test_the_bracket_holds_an_eighth_of_the_budget_in_one_pass(monkeypatch):
    # At T = 43,200 (k = 10, 4 chains) the fixed 32 MB of tables held one point per pass:
    # about 220 passes. Here TABLE_BYTES is shrunk to one point per pass on a short chain;
    # with a 1 GB budget each round's 2 x 32 points (+ γ = 0) fit one pass: the octave block
    # and the three rounds are 4 passes, and the failing scale is the one of many passes.
    tasks = _tasks(np.random.default_rng(3), 3, 200)
    calls = []
    log_mgf = bracket._log_mgf
    monkeypatch.setattr(bracket, "_log_mgf", lambda t, g: calls.append(g.size) or log_mgf(t, g))
    monkeypatch.setattr(bracket, "TABLE_BYTES", 8 * 200 * len(tasks) * 3 * 2)
    monkeypatch.setenv("PUFFERFISH_PGM_MEMORY_BUDGET", "100 kB")     # an eighth < 32 MB
    many = bracket.failing_scale(tasks, 1.0, 60.0)
    assert len(calls) > 60 and max(calls) == 2
    calls.clear()
    monkeypatch.setenv("PUFFERFISH_PGM_MEMORY_BUDGET", "1 GB")
    assert bracket.failing_scale(tasks, 1.0, 60.0) == many
    assert len(calls) == 4


def test_the_first_octave_block_is_all_a_near_bracket_evaluates(monkeypatch):
    sizes = []
    fails = bracket._fails
    monkeypatch.setattr(bracket, "_fails", lambda t, s, e: sizes.append(s.size) or fails(t, s, e))
    tasks = _tasks(np.random.default_rng(0), 3, 40)
    assert bracket.failing_scale(tasks, 1.0, 40.0) is not None
    assert sizes[0] == bracket.OCTAVE_BLOCK < 61        # one block, not the 61 octaves


def test_the_log_space_sum_runs_on_the_wide_columns_only(monkeypatch):
    # column 0 spans 1000 nats (e^-1000 · 1e-3 leaves the normal range: log space), column 1
    # spans 1 nat (the linear product): only column 0 goes through logsumexp
    table = np.array([[0.0, 0.0], [-1000.0, -1.0]])
    p = np.array([[0.999, 0.001], [0.5, 0.5]])
    seen = []
    monkeypatch.setattr(log_space, "logsumexp",
                        lambda v, axis=None: seen.append(v.shape) or logsumexp(v, axis))
    out = log_matmul(table, p)
    assert seen == [(2, 2, 1)]
    reference = logsumexp(table[:, None, :] + np.log(p)[:, :, None], axis=0)
    assert np.allclose(out, reference, rtol=1e-14, atol=0)
    assert out[:, 1].tolist() == (np.log(p.T @ np.exp(table[:, 1:] - 0.0)) + 0.0)[:, 0].tolist()


def test_one_node_s_law_stops_both_passes_at_that_node(monkeypatch):
    calls = []
    step = engine.step
    monkeypatch.setattr(engine, "step", lambda *a, **kw: calls.append(1) or step(*a, **kw))
    p = np.array([[0.9, 0.1], [0.2, 0.8]])
    w = np.array([[0, 1]] * 50)
    out = list(stream_node_laws(p, np.array([2 / 3, 1 / 3]), w, {1: [0, 1]}, 1.0))
    assert [t for t, _, _ in out] == [1]
    assert len(calls) == 1 + 48      # forward 0 -> 1, backward 49 -> 1 (both 49 + 49 before)
    assert np.exp(logsumexp(out[0][2], axis=1)).round(12).tolist() == [0.666666666667,
                                                                        0.333333333333]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), rows=st.integers(1, 6), n=st.integers(1, 40),
       m=st.integers(1, 40), spread=st.sampled_from([1.0, 100.0, 900.0]))
def test_batched_node_convolution_equals_convolve_row_by_row(seed, rows, n, m, spread):
    rng = np.random.default_rng(seed)
    xs = rng.uniform(-spread, 0.0, (rows, n))
    ys = rng.uniform(-spread, 0.0, (rows, m))
    xs[rng.random(xs.shape) < 0.2] = -np.inf
    ys[rng.random(ys.shape) < 0.2] = -np.inf
    xs[0] = -np.inf                                       # a dead row
    got = convolve_rows(xs, ys)
    want = np.stack([convolve(x, y) for x, y in zip(xs, ys, strict=True)])
    assert np.array_equal(got, want)


def _plan_chain(length):
    p = np.array([[0.6, 0.4], [0.3, 0.7]])
    return pp.Framework(pp.MarkovChainScenario(p, "stationary", length))


def test_the_middle_bound_is_evaluated_once_where_it_passes(monkeypatch):
    calls = []
    bound = MiddleClass.bound
    monkeypatch.setattr(MiddleClass, "bound", lambda self, x: calls.append(x) or bound(self, x))
    cal = pp.ExactLaplaceMechanism(epsilon=1.0, streaming=True).calibrate(_plan_chain(300),
                                                                          pp.Count(0))
    assert "middle nodes" in cal.evidence.coverage
    assert len(calls) == 1                  # a bisection from the bracket before: ~30
    stored = pp.ExactLaplaceMechanism(epsilon=1.0, streaming=False).calibrate(_plan_chain(300),
                                                                              pp.Count(0))
    assert cal.scale == pytest.approx(stored.scale, rel=1e-9)


def test_a_long_chain_that_fits_with_its_middle_plan_is_run(monkeypatch):
    # T = 3,000, k = 2: every node's uncut forward rows are 8 k (T + T(T+1)/2) = 72 MB,
    # above an 8 MB budget (refused up front before issue 21); the middle plan holds the rows
    # of 2 x 16 end nodes and one representative, under 1 MB: the run fits and is made
    fw = _plan_chain(3000)
    free = pp.ExactLaplaceMechanism(epsilon=1.0, streaming=True).calibrate(fw, pp.Count(0))
    monkeypatch.setenv("PUFFERFISH_PGM_MEMORY_BUDGET", "8MB")
    assert chain_streams(fw, pp.Count(0)) is not None
    cal = pp.ExactLaplaceMechanism(epsilon=1.0, streaming=True).calibrate(fw, pp.Count(0))
    assert "middle nodes" in cal.evidence.coverage
    assert cal.scale == free.scale


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(st.integers(0, 30), st.lists(st.tuples(st.integers(0, 4),
                                                              st.integers(0, 4)), min_size=1,
                                                    max_size=8), min_size=1))
def test_pair_sets_from_the_code_array_equal_those_of_the_dict(nodes):
    # the middle plan reads the stream's (node, a, b) array instead of a loop over every pair
    as_dict = {t: [(None, a, b) for a, b in ps] for t, ps in nodes.items()}
    codes = np.array([(t, a, b) for t, ps in nodes.items() for a, b in ps])
    def norm(sets):
        return sorted((k, sorted(v.tolist())) for k, v in sets)
    assert norm(middle._pair_sets(codes)) == norm(middle._pair_sets(as_dict))


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 6), st.integers(1, 60), st.floats(0.05, 50.0))
def test_the_largest_cut_equals_the_largest_of_the_per_row_cuts(seed, k, n, scale):
    # keep_bounds needs only the largest cut over the rows; scanning after the largest r1
    # gives it exactly (rows with an early r1, e.g. a short law, used to set the scan start)
    rng = np.random.default_rng(seed)
    x = rng.normal(0.0, 30.0, size=(k, n)) - rng.uniform(0, 80, (k, n)) * rng.integers(0, 2,
                                                                                       (k, n))
    x[rng.random((k, n)) < 0.3] = -np.inf
    x[:, rng.integers(0, n)] = 0.0                  # every row live
    ok = np.isfinite(x)
    s = x + np.arange(n) / scale
    assert truncated._last_cut(s, ok, -10.0) == int(truncated._first_cut(s, ok, -10.0).max())


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_the_full_pass_reads_the_raise_pass_s_forward_rows(monkeypatch):
    # serial runs whose rows fit: one forward pass per stream instead of one per pass
    calls = []
    forward = truncated._forward
    monkeypatch.setattr(truncated, "_forward", lambda *a: calls.append(1) or forward(*a))
    rng = np.random.default_rng(3)
    fw = pp.Framework(pp.ScenarioClass([pp.MarkovChainScenario(
        0.9 * np.eye(3) + 0.1 * rng.dirichlet(np.ones(3), size=3), "stationary", 120)
        for _ in range(2)]))
    cal = pp.ExactLaplaceMechanism(epsilon=1.0, streaming=True).calibrate(fw, pp.Count(0))
    assert cal.evidence.streamed and len(calls) == 2          # 4 before
    stored = pp.ExactLaplaceMechanism(epsilon=1.0, streaming=False).calibrate(fw, pp.Count(0))
    assert cal.scale == pytest.approx(stored.scale, rel=1e-9)
    streamed = {(e.pair, e.theta): e.epsilon for e in cal.evidence.audit.pairs}
    audited = {(e.pair, e.theta): e.epsilon for e in stored.evidence.audit.pairs}
    assert streamed                             # the audited nodes (less a bounded middle)
    for key, eps in streamed.items():           # are audited alike, at nearly one scale
        assert eps == pytest.approx(audited[key], rel=1e-7)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40)), min_size=1, max_size=60))
def test_distinct_pairs_by_one_integer_key_equal_the_column_unique(pairs):
    # Group.distinct keys each (first, second) by one integer (a 1-D unique, not axis=1)
    from pufferfish_pgm.privacy_loss._pair_rows import Group
    first, second = (np.array(x, dtype=np.int64) for x in zip(*pairs, strict=True))
    group = Group(0, "g", (np.arange(2.0),), np.zeros((41, 2)), first, second,
                  tuple(range(len(pairs))))
    keys, inverse = np.unique(np.stack((first, second)), axis=1, return_inverse=True)
    got = group.distinct()
    assert got[0].tolist() == keys[0].tolist() and got[1].tolist() == keys[1].tolist()
    assert got[2].tolist() == inverse.ravel().tolist()
