"""The progress hook of the streamed exact calibration: ``progress(done, total)`` with the
nodes audited across the passes, monotone, ending at ``done == total``; never called when
None; the same scale with or without it, serial or on an executor."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import random_chain

import pufferfish_pgm as pp
from pufferfish_pgm.privacy_loss._audit import coverage_note
from pufferfish_pgm.privacy_loss._streamed_exact import chain_streams, streamed_calibration


def _run(fw, query, eps=1.0, executor=None, progress=None, middle=True):
    return streamed_calibration(fw, chain_streams(fw, query), eps, 1e-9, ["F"],
                                coverage_note(fw), executor=executor, middle=middle,
                                progress=progress)


def _check(seen):
    assert seen, "progress was never called"
    done = [d for d, _ in seen]
    total = [t for _, t in seen]
    assert done == sorted(done) and total == sorted(total)
    assert all(0 <= d <= t for d, t in seen)
    assert seen[-1][0] == seen[-1][1]
    assert sum(d == t for d, t in seen) == 1        # finished once, at the end


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(2, 4), length=st.integers(2, 30),
       members=st.integers(1, 2), zeros=st.booleans())
def test_progress_is_monotone_and_ends_at_total(seed, k, length, members, zeros):
    rng = np.random.default_rng(seed)
    fw = pp.Framework(pp.ScenarioClass([random_chain(rng, k, length, zeros=zeros)
                                        for _ in range(members)]))
    seen: list = []
    with_hook = _run(fw, pp.Count(1), progress=lambda d, t: seen.append((d, t)))
    without = _run(fw, pp.Count(1))
    if without is None:
        assert with_hook is None and not seen
        return
    assert with_hook.scale == without.scale
    _check(seen)
    # every node of every stream is audited by the full pass at least once
    nodes = sum(len(s.nodes) for s in chain_streams(fw, pp.Count(1)))
    assert seen[-1][1] >= nodes


def test_progress_counts_only_audited_nodes_with_a_middle_plan():
    rng = np.random.default_rng(1)
    chain = pp.MarkovChainScenario(rng.dirichlet(np.full(3, 3.0), size=3), "stationary", 160)
    fw = pp.Framework(chain)
    seen: list = []
    out = _run(fw, pp.Count(1), progress=lambda d, t: seen.append((d, t)))
    _check(seen)
    full: list = []
    _run(fw, pp.Count(1), progress=lambda d, t: full.append((d, t)), middle=False)
    _check(full)
    assert "bounded together" in out.report.coverage
    assert seen[-1][1] < full[-1][1]          # the middle nodes are not counted


def test_progress_on_an_executor_reports_blocks():
    rng = np.random.default_rng(5)
    fw = pp.Framework(pp.ScenarioClass([random_chain(rng, 3, 20) for _ in range(2)]))
    seen: list = []
    with ThreadPoolExecutor(2) as pool:
        out = _run(fw, pp.Count(1), executor=pool, progress=lambda d, t: seen.append((d, t)))
    _check(seen)
    assert out.scale == _run(fw, pp.Count(1)).scale
    assert len(seen) <= 2 * 3 + 1              # one block per stream and pass, at most


def test_none_is_never_called():
    rng = np.random.default_rng(2)
    fw = pp.Framework(random_chain(rng, 3, 20))
    assert _run(fw, pp.Count(1), progress=None) is not None


def test_the_keyword_defaults_to_none():
    import inspect

    assert inspect.signature(streamed_calibration).parameters["progress"].default is None
