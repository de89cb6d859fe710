"""The count traversal that reuses two buffers equals the one that allocates every step.

``forward``/``backward`` with ``reuse=True`` overwrite their rows in place (the step's
product into the table, the lift into the other buffer): the values must be those of the
allocating path, on chains whose steps take the log-space columns (transitions of 1e-300,
impossible states), with several moving states, per-step matrices and the cuts.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pufferfish_pgm.distributions._log_space import log_matmul
from pufferfish_pgm.queries._count_engine import (
    ChainSteps,
    backward,
    count_lift,
    forward,
    shift_rows,
)
from pufferfish_pgm.queries._truncated_count_law import _trimmer


def _chain(seed: int, k: int, length: int, per_step: bool, tiny: bool):
    """Sticky rows 0.9·I + 0.1·Dirichlet, some transitions 0 or 1e-300 (log-space columns)."""
    rng = np.random.default_rng(seed)
    shape = (length - 1, k, k) if per_step else (k, k)
    p = 0.9 * np.eye(k) + 0.1 * rng.dirichlet(np.ones(k), size=shape[:-1])
    cut = (rng.random(shape) < 0.25) & ~np.eye(k, dtype=bool)
    p[cut] = 1e-300 if tiny else 0.0
    p /= p.sum(axis=-1, keepdims=True)
    q = rng.dirichlet(np.ones(k))
    q[0] = 0.0                                     # an impossible start state
    weights = rng.integers(0, 3, size=(length, k))
    return p, q / q.sum(), weights


def _same(a: np.ndarray, b: np.ndarray) -> None:
    assert a.shape == b.shape
    assert (np.isfinite(a) == np.isfinite(b)).all()
    ok = np.isfinite(a)
    np.testing.assert_allclose(a[ok], b[ok], rtol=1e-12, atol=0.0)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(2, 5), length=st.integers(2, 40),
       per_step=st.booleans(), tiny=st.booleans(), cut=st.sampled_from([None, 0.3, 30.0]))
def test_reused_buffers_give_the_allocating_traversal_s_rows(seed, k, length, per_step, tiny,
                                                             cut):
    p, q, weights = _chain(seed, k, length, per_step, tiny)
    steps = ChainSteps(p)
    trim = None if cut is None else _trimmer(cut, -46.0)
    with np.errstate(divide="ignore"):
        log_q = np.log(q)
    fresh = [(t, o, r.copy()) for t, o, r in forward(steps, log_q, count_lift(weights),
                                                     length, trim)]
    reused = [(t, o, r.copy()) for t, o, r in forward(steps, log_q, count_lift(weights),
                                                      length, trim, reuse=True)]
    back = [(t, o, r.copy()) for t, o, r in backward(steps, (k, 1), count_lift(weights),
                                                     length, trim)]
    back_reused = [(t, o, r.copy()) for t, o, r in backward(
        steps, (k, 1), count_lift(weights), length, trim, reuse=True)]
    for (t, o, r), (u, o2, r2) in zip(fresh + back, reused + back_reused, strict=True):
        assert (t, o) == (u, o2)
        _same(r, r2)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(1, 5), n=st.integers(1, 30),
       extra=st.integers(-3, 4))
def test_shift_into_a_buffer_equals_the_fresh_shift(seed, k, n, extra):
    rng = np.random.default_rng(seed)
    table = np.log(rng.random((k, n)))
    table[rng.random((k, n)) < 0.2] = -np.inf
    shifts = rng.integers(0, 4, size=k)
    width = max(1, n + extra)
    buffer = np.full((k, width + 5), 7.0)          # stale values must all be overwritten
    out = shift_rows(table, shifts, width, out=buffer[:, :width])
    np.testing.assert_array_equal(out, shift_rows(table, shifts, width))
    # derivation: row s of the shift is the row moved right by shifts[s], -inf elsewhere
    for s in range(k):
        want = np.full(width + 8, -np.inf)
        want[shifts[s]:shifts[s] + n] = table[s]
        np.testing.assert_array_equal(out[s], want[:width])


def test_the_in_place_product_keeps_the_log_space_columns():
    p = np.array([[0.5, 0.5], [1e-300, 1.0]])
    table = np.array([[0.0, -1000.0, 0.0], [-1000.0, 0.0, -np.inf]])   # column 2: linear
    want = log_matmul(table, p)
    got = table.copy()
    out = log_matmul(got, p, scratch=np.empty_like(got))
    assert out is got
    _same(got, want)
