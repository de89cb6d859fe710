"""MQMExact on time-varying chains against brute force over every quilt of the unrolled network."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import brute_conditional

from pufferfish_pgm.queries import Count
from pufferfish_pgm.quilts import max_influence, plan_chain, plan_network
from pufferfish_pgm.scenarios import MarkovChainScenario, ScenarioClass
from pufferfish_pgm.secrets import Framework


def random_steps(rng: np.random.Generator, k: int, length: int, zeros: bool) -> np.ndarray:
    p = rng.dirichlet(np.ones(k) * 0.7, size=(max(length - 1, 0), k))
    if zeros and length > 1:
        p[rng.random(p.shape) < 0.2] = 0.0
        p[..., 0] += 0.3          # every row keeps some mass
        p /= p.sum(axis=2, keepdims=True)
    return p


def brute_influence(networks: list, i: int, quilt: list, k: int) -> float:
    """max over θ, ordered pairs and quilt values of log P(x_Q | a) / P(x_Q | b): the
    definition of DESIGN §3.1, read off the enumerated joint of each unrolled network."""
    best = 0.0
    for bn in networks:
        tables = {s: brute_conditional(bn, quilt, {i: s}) for s in range(k)}
        for s, s2 in itertools.permutations(range(k), 2):
            a, b = tables[s], tables[s2]
            if np.isnan(a).any() or np.isnan(b).any():
                continue      # a secret impossible under this θ: the pair is skipped
            with np.errstate(divide="ignore"):
                ratio = np.where(a > 0, np.log(a) - np.log(np.where(b > 0, b, 1.0)), -np.inf)
            ratio = np.where((a > 0) & (b == 0), np.inf, ratio)
            best = max(best, float(ratio.max()))
    return best


def brute_sigmas(networks: list, length: int, k: int, epsilon: float, in_query: set) -> list:
    """σ_i of every node by trying every quilt (left a or none, right b or none)."""
    out = []
    for i in range(length):
        best = len(in_query) / epsilon
        for a, b in itertools.product([None, *range(1, i + 1)], [None, *range(1, length - i)]):
            quilt = ([i - a] if a else []) + ([i + b] if b else [])
            if not quilt:
                continue
            e = brute_influence(networks, i, quilt, k)
            lo, hi = (i - a + 1 if a else 0), (i + b - 1 if b else length - 1)
            card = sum(1 for v in range(lo, hi + 1) if v in in_query)
            if e < epsilon:
                best = min(best, card / (epsilon - e))
        out.append(best)
    return out


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(2, 3), length=st.integers(1, 6),
       zeros=st.booleans(), epsilon=st.sampled_from([0.5, 1.0, 3.0, 8.0]),
       members=st.integers(1, 2), subset=st.booleans())
def test_plan_matches_brute_force(seed, k, length, zeros, epsilon, members, subset) -> None:
    rng = np.random.default_rng(seed)
    chains = [MarkovChainScenario(random_steps(rng, k, length, zeros), rng.dirichlet(np.ones(k)),
                                  length) for _ in range(members)]
    cls = ScenarioClass(chains)
    nodes = sorted({int(v) for v in rng.integers(0, length, size=length)}) if subset else None
    in_query = set(range(length) if nodes is None else nodes)
    if not in_query:
        return
    plan = plan_chain(Framework(cls), Count(1, nodes=nodes), epsilon)
    want = brute_sigmas([c.to_network() for c in chains], length, k, epsilon, in_query)
    for entry, sigma in zip(plan, want, strict=True):
        assert entry.sigma == pytest.approx(sigma, rel=1e-9, abs=1e-12)
    assert not plan.truncated.any()


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(2, 3), length=st.integers(2, 6),
       zeros=st.booleans())
def test_max_influence_equals_the_unrolled_network(seed, k, length, zeros) -> None:
    rng = np.random.default_rng(seed)
    mc = MarkovChainScenario(random_steps(rng, k, length, zeros), rng.dirichlet(np.ones(k)),
                             length)
    chain_fw, net_fw = Framework(mc), Framework(mc.to_network())
    for i in range(length):
        for quilt in ([i - 1, i + 1], [0], [length - 1], [i - 2, length - 1]):
            quilt = sorted({q for q in quilt if 0 <= q < length and q != i})
            got = max_influence(chain_fw, i, quilt)
            want = max_influence(net_fw, i, quilt)
            assert got == pytest.approx(want, rel=1e-9, abs=1e-12) or got == want == math.inf


def test_any_start_covers_every_fixed_start() -> None:
    rng = np.random.default_rng(3)
    steps = random_steps(rng, 3, 6, zeros=False)
    plan = {e.node: e.sigma for e in
            plan_chain(Framework(MarkovChainScenario(steps, "any", 6)), Count(1), 2.0)}
    starts = [*np.eye(3), np.ones(3) / 3, *rng.dirichlet(np.ones(3) * 0.3, size=3)]
    for q in starts:      # a point mass leaves node 0 without pairs: compare node by node
        fixed = plan_chain(Framework(MarkovChainScenario(steps, q, 6)), Count(1), 2.0)
        assert all(plan[e.node] >= e.sigma * (1 - 1e-12) for e in fixed)


def test_chain_planner_agrees_with_the_network_planner() -> None:
    rng = np.random.default_rng(7)
    days = MarkovChainScenario(random_steps(rng, 3, 8, zeros=True), [0.2, 0.3, 0.5], 8)
    plain = MarkovChainScenario(rng.dirichlet(np.ones(3), size=3), [0.5, 0.25, 0.25], 8)
    cls = ScenarioClass([days, plain])
    chain_plan = plan_chain(Framework(cls), Count(1), 1.5)
    net_cls = ScenarioClass([days.to_network(), plain.to_network()])
    net_plan = plan_network(Framework(net_cls), Count(1), 1.5)
    assert [e.sigma for e in chain_plan] == pytest.approx([e.sigma for e in net_plan.entries],
                                                          rel=1e-9)


def test_a_day_of_ten_minute_slots_plans_every_node() -> None:
    # T = 144, k = 10, hourly blocks: every node searched on its own terms, none truncated
    rng = np.random.default_rng(0)
    hours = rng.dirichlet(np.ones(10) * 0.3, size=(24, 10)) * 0.3 + np.eye(10) * 0.7
    steps = hours[np.arange(143) // 6]
    mc = MarkovChainScenario(steps, np.ones(10) / 10, 144)
    plan = plan_chain(Framework(mc), Count(1), 4.0)
    assert len(plan) == 144 and not plan.truncated.any()
    assert plan.sigma_max < 144 / 4.0           # quilts help somewhere


# ------------------------------------------- exact quilt laws of time-varying chains


def _path_law(steps: np.ndarray, first: int, last: int, start: int, weights: np.ndarray,
              counted: range) -> np.ndarray:
    """(k, k, C) by enumeration: P(Σ_{t in counted} w(X_t) = c, X_last = v | X_first = u)."""
    k = steps.shape[-1]
    out = np.zeros((k, k, len(counted) * int(weights.max()) + 1))
    for u in range(k):
        for path in itertools.product(range(k), repeat=last - first):
            xs = (u, *path)                       # X_first .. X_last
            p = math.prod(steps[first + j][xs[j], xs[j + 1]] for j in range(last - first))
            c = sum(int(weights[xs[t - first]]) for t in counted)
            out[u, xs[-1], c - start] += p
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_varying_bridges_match_enumeration(seed) -> None:
    # L_{i,a}, R_{i,b}, H_i and the end table against the chain rule over the stack, with
    # zeros in the steps (docs/exact-quilt.md, "Time-varying chains")
    from pufferfish_pgm.quilts._quilt_varying import VaryingBridges
    rng = np.random.default_rng(seed)
    k, length = 3, 7
    steps = random_steps(rng, k, length, zeros=True)
    q0 = rng.dirichlet(np.ones(k))
    weights = np.array([0, 2, 1])
    br = VaryingBridges(MarkovChainScenario(steps, q0, length), weights)
    with np.errstate(divide="ignore"):
        for i, a in [(3, 1), (3, 3), (5, 4)]:
            want = _path_law(steps, i - a, i, 0, weights, range(i - a + 1, i))
            assert np.allclose(np.exp(br.left(i, a)), want, atol=1e-13)
        for i, b in [(1, 1), (1, 4), (2, 4)]:
            want = _path_law(steps, i, i + b, 0, weights, range(i + 1, i + b))
            assert np.allclose(np.exp(br.right(i, b)), want, atol=1e-13)
        for i in (0, 2, 4):     # H_i[s, c] = Σ_u q0[u] P(count of X_0..X_{i-1}, X_i = s | u)
            law = _path_law(steps, 0, i, 0, weights, range(0, i)) if i else None
            want = (np.einsum("u,usc->sc", q0, law) if i else q0[:, None])
            assert np.allclose(np.exp(br.start(i)), want, atol=1e-13)
        for d in (1, 3):        # end of node T-1-d: Σ_v P(count of X_{i+1}..X_{T-1} | X_i)
            i = length - 1 - d
            law = _path_law(steps, i, length - 1, 0, weights, range(i + 1, length))
            assert np.allclose(np.exp(br.end(d)), law.sum(axis=1), atol=1e-13)
