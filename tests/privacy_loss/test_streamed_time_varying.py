"""Streamed exact calibration of time-varying chains (one transition matrix per step).

The streamed path (``ExactLaplaceMechanism(streaming=True)``) takes the per-step stack
``(T - 1, k, k)`` in its count laws and its generating-function bracket; no middle plan
applies (its bound needs one matrix). It must return the stored path's scale, with the same
pairs audited and skipped, on random time-varying chains with zero transitions and
impossible secrets.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pufferfish_pgm as pp
from pufferfish_pgm.privacy_loss._mgf_bracket import MgfTask, limit_losses


def _varying(rng, k, length, zeros):
    """A chain with a random Dirichlet matrix per step; ``zeros`` sets about a fifth of the
    off-diagonal transitions to 0 and makes state 0 impossible at the start."""
    p = rng.dirichlet(np.ones(k), size=(length - 1, k))
    q = rng.dirichlet(np.ones(k))
    if zeros:
        cut = (rng.random(p.shape) < 0.2) & ~np.eye(k, dtype=bool)
        p = np.where(cut, 0.0, p)
        p /= p.sum(axis=2, keepdims=True)
        q[0] = 0.0
        q /= q.sum()
    return pp.MarkovChainScenario(p, q, length, name="day")


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(2, 4), length=st.integers(2, 25),
       members=st.integers(1, 2), eps=st.sampled_from([0.5, 1.0, 2.0]), zeros=st.booleans())
@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_streamed_equals_stored_on_time_varying_chains(seed, k, length, members, eps, zeros):
    rng = np.random.default_rng(seed)
    fw = pp.Framework(pp.ScenarioClass([_varying(rng, k, length, zeros)
                                        for _ in range(members)]))
    query = pp.LinearQuery({s: int(w) for s, w in enumerate(rng.integers(0, 3, k))})
    stored = pp.ExactLaplaceMechanism(epsilon=eps, streaming=False).calibrate(fw, query)
    streamed = pp.ExactLaplaceMechanism(epsilon=eps, streaming=True).calibrate(fw, query)
    assert streamed.scale == pytest.approx(stored.scale, rel=1e-9)
    if streamed.evidence.streamed:
        assert streamed.evidence.audit.passes(eps)
        assert len(streamed.evidence.audit.pairs) == len(stored.evidence.audit.pairs)
        assert {e.pair for e in streamed.evidence.skipped} == {
            e.pair for e in stored.evidence.skipped}


def test_the_bracket_reads_every_step_s_matrix():
    # two steps that differ: the limit loss of the per-step stack is that of the chain, not
    # of either matrix repeated (by brute force over the 2^3 paths of a 3-node chain)
    p = np.array([[[0.9, 0.1], [0.2, 0.8]], [[0.5, 0.5], [0.1, 0.9]]])
    q, w = np.array([0.3, 0.7]), np.array([[0, 1]] * 3)
    gamma = 0.7
    mgf = np.zeros(2)                                      # E[e^{γF}; X_1 = a]
    for path in np.ndindex(2, 2, 2):
        mass = q[path[0]] * p[0][path[0], path[1]] * p[1][path[1], path[2]]
        mgf[path[1]] += mass * np.exp(gamma * sum(path))
    given = mgf / np.array([q @ p[0][:, a] for a in (0, 1)])
    want = abs(np.log(given[0] / given[1]))
    task = MgfTask(p, q, w, np.array([1]), np.array([0]), np.array([1]))
    assert limit_losses(task, np.array([gamma]))[0] == pytest.approx(want, rel=1e-12)
