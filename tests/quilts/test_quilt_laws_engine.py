"""The quilt laws on the one count-law engine (issue 21, item 1): bridge, start and end
tables and the nearby-law convolutions equal an independent log-space recursion (the former
``log_advance``: shift each state's row by its weight, then ``logsumexp`` over the previous
state) to rtol 1e-9, on random chains with zero transitions; the vector laws' block law
equals the scalar bridge laws."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import random_chain

from pufferfish_pgm.distributions._log_space import log_convolve, logsumexp
from pufferfish_pgm.quilts._quilt_laws import ChainBridges, batch_log_convolve
from pufferfish_pgm.quilts._quilt_vector_laws import block_law


def _reference_step(table, log_p, w, forward=True):
    """``out[.., v', c] = logsumexp_v table[.., v, c - w(v)] + log P[v, v']`` (or backward)."""
    k, width = table.shape[-2], table.shape[-1]
    shifted = np.full(table.shape[:-1] + (width + int(w.max()),), -np.inf)
    for s in range(k):
        shifted[..., s, w[s]:w[s] + width] = table[..., s, :]
    lp = log_p if forward else log_p.T
    return logsumexp(shifted[..., :, None, :] + lp[:, :, None], axis=-3)


def _close(got, ref):
    assert np.array_equal(np.isfinite(got), np.isfinite(ref))
    live = np.isfinite(ref)
    assert np.allclose(got[live], ref[live], rtol=1e-9, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(2, 4), steps=st.integers(1, 12),
       zeros=st.booleans())
def test_bridge_start_and_end_tables_equal_the_log_space_recursion(seed, k, steps, zeros):
    rng = np.random.default_rng(seed)
    chain = random_chain(rng, k, 5, zeros=zeros)
    w = rng.integers(0, 3, k)
    br = ChainBridges(chain.transition, chain.initial_distribution, w)
    with np.errstate(divide="ignore"):
        log_p = np.log(chain.transition)
        g = log_p[:, :, None].copy()
        h = np.log(chain.initial_distribution)[:, None]
    e = np.zeros((k, 1))
    for _ in range(1, steps):
        g = _reference_step(g, log_p, w)
    for _ in range(steps):
        h = _reference_step(h, log_p, w)
        e = _reference_step(e, log_p, w, forward=False)
    _close(br.bridge(steps), g)
    _close(br.start(steps), h)
    _close(br.end(steps), e)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 40), m=st.integers(1, 40),
       depth=st.sampled_from([1.0, 300.0, 800.0, 2000.0]), zeros=st.booleans())
def test_batched_convolution_equals_the_log_space_convolution(seed, n, m, depth, zeros):
    rng = np.random.default_rng(seed)
    xs = -rng.uniform(0.0, depth, (3, n))
    ys = -rng.uniform(0.0, depth, (3, m))
    if zeros:
        xs[rng.random(xs.shape) < 0.3] = -np.inf
    got = batch_log_convolve(xs, ys)
    for j in range(3):
        _close(got[j], log_convolve(xs[j], ys[j]))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(2, 3), a=st.integers(2, 5),
       zeros=st.booleans())
def test_block_law_of_a_closed_block_is_the_bridge_law(seed, k, a, zeros):
    # a block (lo, i, hi) closed on both sides, one window of width >= its slots: its count
    # law given (u, s, v) is G_{i-lo+1}[u, s] ⊛ δ_w(s) ⊛ G_{hi-i+1}[s, v] (unnormalised)
    rng = np.random.default_rng(seed)
    chain = random_chain(rng, k, 5, zeros=zeros)
    w = rng.integers(0, 2, k)
    br = ChainBridges(chain.transition, chain.initial_distribution, w)
    lo, node, hi = 1, 1 + a // 2, a
    law, _ = block_law(br, (lo, node, hi, True, True), 64)
    left, right = br.bridge(node - lo + 1), br.bridge(hi - node + 1)
    for u in range(k):
        for s in range(k):
            for v in range(k):
                ref = np.full(law.shape[-1], -np.inf)
                conv = log_convolve(left[u, s], right[s, v])
                ref[w[s]:w[s] + conv.size] = conv[:law.shape[-1] - w[s]]
                _close(law[u, s, v], ref)


def test_the_engine_lift_moves_leading_axes_along():
    # a bridge table (u, v, c): each state v's rows move right by w(v), for every start u
    from pufferfish_pgm.queries._count_engine import count_lift, shift_rows

    table = np.log(np.arange(1.0, 9.0)).reshape(2, 2, 2)
    got = count_lift(np.array([[0, 1]]))(table, 0)
    assert got.shape == (2, 2, 3)
    for u in range(2):
        assert np.array_equal(got[u], shift_rows(table[u], np.array([0, 1]), 3))


def test_one_rule_for_linear_convolution():
    # the stored, streamed and quilt convolutions share one rule: ranges adding up to 2·STRETCH
    from pufferfish_pgm.queries._count_engine import STRETCH, batch_convolve, convolve, fits_linear

    assert fits_linear(STRETCH, STRETCH) and not fits_linear(STRETCH, STRETCH + 1.0)
    x = np.array([0.0, -1.5 * STRETCH])          # one range above STRETCH, the sum below 2x
    y = np.array([0.0, -0.25 * STRETCH])
    assert np.allclose(convolve(x, y), batch_convolve(x[None], y[None])[0], rtol=1e-14)
    assert np.allclose(convolve(x, y), log_convolve(x, y), rtol=1e-12)
