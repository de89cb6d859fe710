"""The linear-space form of the Laplace kernel (``_linear_form``): where its range check holds
it equals the direct log-space sum to rounding, masses of e^-700 and zero masses included; rows
that do not fit fall back to the log-space recursion, row by row."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pufferfish_pgm.distributions._log_space import logsumexp
from pufferfish_pgm.privacy_loss._laplace_kernel import (
    LINEAR_RANGE,
    _cumulative_form,
    _fits_linear,
    _linear_form,
    log_laplace_density,
)


def _direct(grid, m, scale):
    """``log Σ_i exp(m_i - |g_k - g_i| / λ)`` by one logsumexp per point (O(n²))."""
    return logsumexp(m[..., None, :] - np.abs(grid[:, None] - grid[None, :]) / scale, axis=-1)


def _rows(rng, k, n, depth, zeros):
    m = -np.abs(rng.normal(0.0, 1.0, (k, n))).cumsum(axis=1) * depth / n
    m -= rng.uniform(0.0, depth, (k, 1))
    if zeros:
        m[rng.random((k, n)) < 0.2] = -np.inf
    return m


@settings(max_examples=120, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(1, 4), n=st.integers(1, 120),
       depth=st.sampled_from([1.0, 50.0, 300.0, 700.0, 1400.0]),
       scale=st.floats(0.05, 200.0), zeros=st.booleans())
def test_kernel_equals_the_direct_sum(seed, k, n, depth, scale, zeros):
    rng = np.random.default_rng(seed)
    grid = np.cumsum(rng.uniform(0.1, 2.0, n))
    m = _rows(rng, k, n, depth, zeros)
    got = log_laplace_density(grid, m, scale)
    ref = _direct(grid, m, scale)
    assert np.array_equal(np.isfinite(got), np.isfinite(ref))
    live = np.isfinite(ref)
    assert np.allclose(got[live], ref[live], rtol=1e-13, atol=1e-12)


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(2, 200), scale=st.floats(0.2, 100.0),
       zeros=st.booleans())
def test_linear_form_equals_the_log_space_form_where_it_fits(seed, n, scale, zeros):
    rng = np.random.default_rng(seed)
    grid = np.arange(n, dtype=float)
    c = grid / scale
    m = _rows(rng, 3, n, 500.0, zeros)
    m[0] = np.log(rng.dirichlet(np.ones(n)))                   # a law: always fits here
    fits = _fits_linear(m, c)
    assert fits[0] or 2 * c[-1] > LINEAR_RANGE
    if fits.any():
        lin = _linear_form(m[fits], c)
        log = _cumulative_form(m[fits], c)
        assert np.array_equal(np.isfinite(lin), np.isfinite(log))
        live = np.isfinite(log)
        assert np.allclose(lin[live], log[live], rtol=1e-13, atol=1e-12)


def test_the_range_check_refuses_masses_that_would_underflow():
    # a mass e^-650 below the peak: its term underflows past the linear range, so the row
    # runs in log space (the linear form would still be finite, but not checked-exact)
    grid = np.arange(3, dtype=float)
    m = np.array([[0.0, -650.0, -1.0], [0.0, -1.0, -2.0], [-np.inf, -np.inf, -np.inf]])
    assert _fits_linear(m, grid / 10.0).tolist() == [False, True, False]
    got = log_laplace_density(grid, m, 10.0)
    assert np.allclose(got[:2], _direct(grid, m[:2], 10.0), rtol=1e-14, atol=1e-13)
    assert np.isneginf(got[2]).all()
