"""The proven bounds between the losses of two nodes of a chain (docs/middle-nodes.md).

* the transfer bound ``|ε_i(λ) - ε_j(λ)| <= g_λ(a) + g_λ(b)`` against the brute-force oracle;
* the Birkhoff bound on the generating-function limit losses against the limits themselves
  on random sticky chains, and its refusal (``inf``) where a block has a zero transition.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import brute_epsilon, brute_pmf, random_chain

import pufferfish_pgm as pp
from pufferfish_pgm.distributions._log_space import logsumexp
from pufferfish_pgm.privacy_loss._mgf_bracket import MgfTask, _log_mgf
from pufferfish_pgm.privacy_loss._middle_nodes import (
    MiddleClass,
    birkhoff_coefficient,
    hilbert_diameter,
    hilbert_distance,
    limit_loss_drift,
    tilted_block,
    transfer_gap,
)
from pufferfish_pgm.queries._truncated_count_law import stream_node_laws


def _sticky(rng, k):
    return 0.9 * np.eye(k) + 0.1 * rng.dirichlet(np.ones(k), size=k)


def _stationary(p):
    vals, vecs = np.linalg.eig(p.T)
    pi = np.abs(np.real(vecs[:, np.argmax(np.real(vals))]))
    return pi / pi.sum()


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(2, 3), length=st.integers(3, 7),
       scale=st.sampled_from([0.3, 1.0, 4.0]), zeros=st.booleans())
def test_transfer_bound_holds_against_the_oracle(seed, k, length, scale, zeros):
    rng = np.random.default_rng(seed)
    chain = random_chain(rng, k, length, zeros=zeros)
    fns = [lambda v, s: int(s == 0)]
    pmf = {(t, s): brute_pmf(chain, fns, {t: s}) for t in range(length) for s in range(k)}
    for i, j in itertools.combinations(range(length), 2):
        for a, b in itertools.permutations(range(k), 2):
            laws = [pmf[i, a], pmf[i, b], pmf[j, a], pmf[j, b]]
            if not all(laws):
                continue
            eps_i = brute_epsilon(laws[0], laws[1], scale)
            eps_j = brute_epsilon(laws[2], laws[3], scale)
            gap = brute_epsilon(laws[0], laws[2], scale) + brute_epsilon(laws[1], laws[3], scale)
            assert abs(eps_i - eps_j) <= gap * (1 + 1e-12) + 1e-12


def _log_m(p, q0, weights, gammas):
    """log E[e^{γF} | X_t = s] (T, k, G) from the generating-function pass."""
    task = MgfTask(p, q0, weights, np.array([0]), np.array([0]), np.array([1]))
    out = _log_mgf([task], np.concatenate(([0.0], gammas)))[:, 0]
    return out[:, :, 1:] - out[:, :, :1]


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(2, 4), scale=st.sampled_from([2.0, 10.0]),
       block=st.sampled_from([4, 16]), stationary=st.booleans())
def test_limit_loss_drift_bounds_the_limit_losses_of_sticky_chains(seed, k, scale, block,
                                                                   stationary):
    rng = np.random.default_rng(seed)
    p, length = _sticky(rng, k), 120
    q0 = _stationary(p) if stationary else rng.dirichlet(np.ones(k))
    w = (np.arange(k) == 0).astype(np.int64)
    log_m = _log_m(p, q0, np.tile(w, (length, 1)), np.array([1 / scale, -1 / scale]))
    loss = log_m[:, :, None, :] - log_m[:, None, :, :]          # (t, a, b, γ)
    for left, right in [(20, 20), (40, 30), (60, 50)]:
        bound = limit_loss_drift(p, w, scale, block, left, right, stationary)
        nodes = np.arange(left, length - right)
        drift = np.abs(loss[nodes][:, None] - loss[nodes][None, :]).max()
        assert drift <= bound * (1 + 1e-9) + 1e-9


def test_zero_transitions_refuse_the_bound():
    """A block with a zero entry has τ = 1 and Δ = ∞: no node may be skipped. The periodic
    chain never gets a positive block; the chain with one zero does at block 2."""
    periodic = np.array([[0.0, 1.0], [1.0, 0.0]])
    w = np.array([0, 1])
    for block in (1, 2, 7, 64):
        assert birkhoff_coefficient(tilted_block(periodic, w, 0.1, block)) == 1.0
        assert limit_loss_drift(periodic, w, 10.0, block, 500, 500, True) == np.inf
    one_zero = np.array([[0.0, 1.0], [0.5, 0.5]])
    assert limit_loss_drift(one_zero, w, 10.0, 1, 500, 500, True) == np.inf
    assert limit_loss_drift(one_zero, w, 10.0, 2, 500, 500, True) < 1e-12


def test_drift_is_infinite_below_one_block_and_shrinks_with_distance():
    p = np.array([[0.9, 0.1], [0.2, 0.8]])
    w = np.array([0, 1])
    assert limit_loss_drift(p, w, 5.0, 8, 7, 100, True) == np.inf
    near, far = (limit_loss_drift(p, w, 5.0, 8, d, d, True) for d in (16, 160))
    assert far < near * 1e-6


def test_hilbert_diameter_ignores_diagonal_scaling():
    """Δ(D1 P D2) = Δ(P): the tilt e^{γ w} does not change a single step's coefficient."""
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(4), size=4)
    d1, d2 = np.diag(rng.random(4) + 0.1), np.diag(np.exp(rng.normal(size=4)))
    assert hilbert_diameter(d1 @ p @ d2) == pytest.approx(hilbert_diameter(p), rel=1e-12)
    assert hilbert_distance(np.array([0.0, -np.inf]), np.log([1.0, 2.0])) == np.inf


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(2, 3), length=st.integers(3, 8),
       distance=st.integers(1, 3), scale=st.sampled_from([0.3, 1.0, 4.0]),
       start=st.sampled_from(["stationary", "random"]), zeros=st.booleans())
def test_middle_class_bound_covers_every_middle_node_against_the_oracle(
        seed, k, length, distance, scale, start, zeros):
    """B(λ) >= ε_i(λ) (brute force) for every node with `distance` nodes on each side."""
    rng = np.random.default_rng(seed)
    chain = random_chain(rng, k, length, zeros=zeros)
    p = np.asarray(chain.transition)
    q0 = _stationary(p) if start == "stationary" else np.asarray(chain.initial_distribution)
    chain = pp.MarkovChainScenario(p, q0, length)
    pairs = np.array(list(itertools.combinations(range(k), 2)))
    w = np.array([1] + [0] * (k - 1))
    bound = MiddleClass.build(p, q0, w, pairs, distance, length).bound(scale)
    fns = [lambda v, s: int(s == 0)]
    for i in range(distance, length - distance):
        for a, b in pairs.tolist():
            one, two = brute_pmf(chain, fns, {i: a}), brute_pmf(chain, fns, {i: b})
            if one and two:
                assert brute_epsilon(one, two, scale) <= bound * (1 + 1e-12) + 1e-12


def test_middle_class_bound_refuses_blockers():
    """A quilt value possible under one secret only (a zero transition) proves nothing."""
    p = np.array([[0.5, 0.5, 0.0], [0.3, 0.3, 0.4], [0.2, 0.3, 0.5]])
    w = np.array([1, 0, 0])
    assert MiddleClass.build(p, _stationary(p), w, np.array([[0, 1]]), 1, 9).bound(1.0) == np.inf
    assert np.isfinite(MiddleClass.build(p, _stationary(p), w, np.array([[0, 1]]), 2, 9)
                       .bound(1.0))     # P² is positive: no blocker at distance 2


def test_middle_class_bound_is_tight_on_a_sticky_chain():
    """With the quilt 390 nodes away, B exceeds the exact loss of the middle node (its
    streamed laws, uncut) by about twice the prior term, 2.1e-13 (measured: the gap falls
    at about 0.92 per node of distance, the second eigenvalue of P)."""
    rng = np.random.default_rng(0)
    k, length, scale = 4, 801, 5.0
    p = _sticky(rng, k)
    q0 = _stationary(p)
    w = (np.arange(k) == 0).astype(np.int64)
    pairs = np.array(list(itertools.combinations(range(k), 2)))
    mid = length // 2
    (_, offset, rows), = stream_node_laws(p, q0, np.tile(w, (length, 1)),
                                          {mid: list(range(k))}, scale, log_delta=-700.0)
    rows = rows - logsumexp(rows, axis=1)[:, None]
    exact = max(transfer_gap(rows[a], rows[b], scale) for a, b in pairs.tolist())
    bound = MiddleClass.build(p, q0, w, pairs, 390, length).bound(scale)
    assert exact <= bound <= exact + 1e-11


def _calibrate(fw, query, middle, eps=1.0):
    from pufferfish_pgm.privacy_loss._audit import coverage_note
    from pufferfish_pgm.privacy_loss._streamed_exact import chain_streams, streamed_calibration

    return streamed_calibration(fw, chain_streams(fw, query), eps, 1e-9, ["F"],
                                coverage_note(fw), middle=middle)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(2, 3), length=st.integers(100, 160),
       members=st.integers(1, 2), eps=st.sampled_from([0.5, 1.0, 2.0]),
       start=st.sampled_from(["stationary", "random"]))
def test_middle_nodes_skipped_give_the_full_audit_scale(seed, k, length, members, eps, start):
    """Fast-mixing positive chains: the middle nodes are bounded together, and the scale
    equals the full streamed audit's to rtol and passes an independent exact audit."""
    rng = np.random.default_rng(seed)
    chains = [pp.MarkovChainScenario(rng.dirichlet(np.full(k, 3.0), size=k),
                                     start if start == "stationary" else rng.dirichlet(
                                         np.ones(k)), length, name=f"c{i}")
              for i in range(members)]
    fw, query = pp.Framework(pp.ScenarioClass(chains)), pp.Count(0)
    fast, full = _calibrate(fw, query, True, eps), _calibrate(fw, query, False, eps)
    assert fast.scale == pytest.approx(full.scale, rel=3e-9)
    assert pp.audit(fw, query, fast.scale).passes(eps, 1e-9)
    skipped = "bounded together" in fast.report.coverage
    assert skipped == (len(fast.report.pairs) < len(full.report.pairs))


def test_middle_nodes_are_skipped_on_a_long_chain(monkeypatch):
    """A long fast-mixing chain skips its middle; a loose bound (the prior level raised so
    that a short distance is taken) fails the lower-end check and the full audit runs."""
    from pufferfish_pgm.privacy_loss import _middle_nodes

    p = np.array([[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.3, 0.3, 0.4]])
    fw, query = pp.Framework(pp.MarkovChainScenario(p, "stationary", 200)), pp.Count(0)
    full = _calibrate(fw, query, False)
    fast = _calibrate(fw, query, True)
    assert "bounded together" in fast.report.coverage
    assert len(fast.report.pairs) < len(full.report.pairs) / 2
    assert fast.scale == pytest.approx(full.scale, rel=3e-9)
    monkeypatch.setattr(_middle_nodes, "PRIOR_LEVEL", 10.0)        # distance 16: loose
    loose = _calibrate(fw, query, True)
    assert "bounded together" not in loose.report.coverage
    assert loose.scale == pytest.approx(full.scale, rel=3e-9)


def test_secrets_on_middle_nodes_only():
    # every pair on one middle node: the raise pass has no candidate outside the middle and
    # the skipped range holds nodes without pairs; the scale is the full audit's, and the
    # note counts only nodes with pairs (this raised a ValueError, then a KeyError, before)
    rng = np.random.default_rng(1)
    chain = pp.MarkovChainScenario(rng.dirichlet(np.full(3, 3.0), size=3), "stationary", 160)
    for nodes in ([80], [70, 90]):
        fw = pp.Framework(chain, pp.secret_pairs(chain, nodes=nodes))
        out = _calibrate(fw, pp.Count(1), True)
        full = _calibrate(fw, pp.Count(1), False)
        if out is None:     # no node left for the bracket: the mechanism takes the stored path
            assert nodes == [70, 90]
            continue
        assert out.scale == pytest.approx(full.scale, rel=3e-9)
        note = out.report.coverage.partition("; ")[2]
        assert note == "" or note.startswith(f"{len(nodes)} middle nodes")   # not 127
        assert pp.audit(fw, pp.Count(1), out.scale).passes(1.0, 1e-9)
