"""MQM's terms on time-varying classes: every member at once equals member by member."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import pufferfish_pgm as pp
from pufferfish_pgm.quilts._chain_varying import _Members, _prior, chain_terms, class_terms


def _member(rng: np.random.Generator, k: int, length: int, start: object):
    steps = rng.dirichlet(np.full(k, 0.5), size=(length - 1, k))
    steps = np.where(rng.random(steps.shape) < 0.25, 0.0, steps) + 0.05 * np.eye(k)
    return pp.MarkovChainScenario(steps / steps.sum(axis=-1, keepdims=True), start, length)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(2, 4), st.integers(2, 12), st.integers(1, 3),
       st.booleans(), st.integers(1, 4))
def test_class_terms_equal_each_members_terms_side_by_side(seed, k, length, size, any_start,
                                                           window):
    # the batched round (one product per distance over every member) must give the terms of
    # each member, member-major on the last axis, as the loop over members did; zero
    # transitions and "any" starts included (±inf terms must match too)
    rng = np.random.default_rng(seed)
    members = [_member(rng, k, length, "any" if any_start else rng.dirichlet(np.ones(k)))
               for _ in range(size)]
    pairs = np.array([(a, b) for a in range(k) for b in range(k) if a != b])
    nodes = np.arange(length)
    window = min(window, length - 1)
    priors = [_prior(m, pairs) for m in members]
    got = class_terms(_Members.of(members, priors), pairs, nodes, window)
    alone = [chain_terms(m, pairs, nodes, window, p) for m, p in zip(members, priors,
                                                                     strict=True)]
    for x, parts in zip(got, zip(*alone, strict=True), strict=True):
        want = np.concatenate(parts, axis=-1)
        np.testing.assert_allclose(x, want, rtol=1e-12)
        assert (np.isinf(x) == np.isinf(want)).all()
