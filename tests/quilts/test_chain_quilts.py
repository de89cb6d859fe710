"""MQMExact (the chain planner) against the straightforward O(T^3) search of DESIGN §3.3."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import naive_chain_sigmas

from pufferfish_pgm.errors import ImpossibleSecretError, InvalidModelError
from pufferfish_pgm.queries import Count, Histogram
from pufferfish_pgm.quilts import _chain_planner as _planner
from pufferfish_pgm.quilts import plan_chain
from pufferfish_pgm.quilts._chain_nodes import convergence, support_at
from pufferfish_pgm.quilts._engine import pair_groups
from pufferfish_pgm.quilts._plan import NodeRanges
from pufferfish_pgm.scenarios import MarkovChainScenario, ScenarioClass
from pufferfish_pgm.secrets import Framework, secret_pairs


def random_chain(rng, k: int, length: int, initial: str, zeros: bool):
    p = rng.dirichlet(np.ones(k) * 0.7, size=k)
    if zeros:
        p[rng.random((k, k)) < 0.25] = 0.0
        p[np.arange(k), rng.integers(0, k, k)] += 0.4
        p /= p.sum(axis=1, keepdims=True)
    q0 = rng.dirichlet(np.ones(k)) if initial == "fixed" else initial
    try:
        return MarkovChainScenario(p, q0, length)
    except InvalidModelError:  # reducible: no unique stationary start
        return MarkovChainScenario(p, np.ones(k) / k, length)


def compare(fw, epsilon, query_nodes=None, max_window=2048):
    plan = plan_chain(fw, Count(1, nodes=query_nodes), epsilon, max_window=max_window)
    ref = naive_chain_sigmas(fw, epsilon, query_nodes)
    assert [e.node for e in plan] == list(ref)
    for entry, cut in zip(plan, plan.truncated, strict=True):
        want = ref[entry.node][0]
        if cut:  # a truncated search keeps a valid (never smaller) σ
            assert entry.sigma >= want * (1 - 1e-9)
        else:
            assert entry.sigma == pytest.approx(want, rel=1e-9, abs=1e-12)
    return plan


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(2, 3), length=st.integers(1, 14),
       initial=st.sampled_from(["stationary", "fixed", "any"]), zeros=st.booleans(),
       epsilon=st.sampled_from([0.2, 1.0, 2.5, 6.0]), subset=st.booleans(),
       members=st.integers(1, 2))
def test_exact_matches_naive_small(seed, k, length, initial, zeros, epsilon, subset, members):
    rng = np.random.default_rng(seed)
    cls = ScenarioClass([random_chain(rng, k, length, initial, zeros) for _ in range(members)])
    nodes = sorted({int(v) for v in rng.integers(0, length, size=3)})
    query_nodes = sorted({int(v) for v in rng.integers(0, length, size=length)}) if subset \
        else None
    try:
        fw = Framework(cls, secret_pairs(cls, nodes=nodes))
        compare(fw, epsilon, query_nodes)
    except ImpossibleSecretError:
        pass


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), initial=st.sampled_from(["stationary", "fixed", "any"]),
       subset=st.booleans())
def test_exact_matches_naive_t30(seed, initial, subset):
    rng = np.random.default_rng(seed)
    cls = ScenarioClass([random_chain(rng, 3, 30, initial, False) for _ in range(2)])
    nodes = [0, 1, 7, 14, 15, 22, 28, 29]
    fw = Framework(cls, secret_pairs(cls, nodes=nodes))
    compare(fw, float(rng.choice([0.5, 1.0, 3.0])), list(range(5, 25)) if subset else None)


@pytest.mark.parametrize("initial", ["fixed", "any"])
def test_shared_middle_nodes_after_convergence(initial):
    """Fast-mixing chains with a non-stationary start: nodes past the proven sharing point use
    one evaluation, and still match the exhaustive search."""
    rng = np.random.default_rng(11)
    chains = []
    for _ in range(2):
        p = 0.2 * np.eye(3) + 0.8 * rng.dirichlet(np.ones(3) * 3, size=3)
        chains.append(MarkovChainScenario(p, rng.dirichlet(np.ones(3)) if initial == "fixed"
                                          else "any", 90))
    cls = ScenarioClass(chains)
    conv = [convergence(c, 90) for c in chains]
    assert all(c is not None and c.t_conv + 16 < 70 for c in conv)
    fw = Framework(cls, secret_pairs(cls, nodes=[0, 3, 20, 45, 60, 72, 89]))
    plan = compare(fw, 1.0)
    shared = [e for e in plan if e.node in (45, 60)]
    assert shared[0].sigma == shared[1].sigma and shared[0].influence == shared[1].influence


def test_window_truncation_is_reported_and_valid():
    mc = MarkovChainScenario([[0.99, 0.01], [0.01, 0.99]], "stationary", 40)
    fw = Framework(mc)
    plan = compare(fw, 0.5, max_window=2)
    assert plan.truncated.any()


def test_plan_entries_partition_the_chain():
    mc = MarkovChainScenario([[0.9, 0.1], [0.3, 0.7]], "stationary", 60)
    plan = plan_chain(Framework(mc), Count(0), 1.0)
    for entry in plan:
        parts = [set(entry.quilt), set(entry.nearby), set(entry.remote)]
        assert sum(map(len, parts)) == 60 and set().union(*parts) == set(range(60))
        assert entry.node in entry.nearby
        assert isinstance(entry.nearby, range) and isinstance(entry.remote, NodeRanges)
        left = [q for q in entry.quilt if q < entry.node]
        right = [q for q in entry.quilt if q > entry.node]
        assert all((left and r < left[0]) or (right and r > right[0]) for r in entry.remote)
    mid = plan[30]
    assert not mid.trivial and len(mid.quilt) == 2
    assert plan.sigma_max == max(e.sigma for e in plan)


def test_stationary_middle_nodes_identical_and_fast():
    chains = [MarkovChainScenario(np.full((4, 4), 0.1) + 0.6 * np.eye(4), "stationary", 20_000)]
    plan = plan_chain(Framework(chains[0], secret_pairs(chains[0], nodes=range(0, 20_000, 7))),
                      Count(2), 1.0)
    middle = plan.sigma[(plan.nodes > 50) & (plan.nodes < 19_950)]
    assert np.ptp(middle) == 0.0
    assert plan.sigma_max == pytest.approx(middle.max())


def test_histogram_and_pair_groups():
    mc = MarkovChainScenario([[0.6, 0.3, 0.1]] * 3, "stationary", 6, states=["a", "b", "c"])
    pairs = secret_pairs(mc, nodes=[1, 2]) + secret_pairs(
        mc, nodes=[4], graph=__import__("networkx").Graph([("a", "b")]))
    groups = pair_groups(Framework(mc, pairs))
    assert [g[0].tolist() for g in groups] in ([[4], [1, 2]], [[1, 2], [4]])
    plan = plan_chain(Framework(mc, pairs), Histogram(), 1.0)
    assert [e.node for e in plan] == [1, 2, 4]


def test_supports_follow_the_cycle():
    periodic = MarkovChainScenario([[0.0, 1.0], [1.0, 0.0]], [1.0, 0.0], 10)
    assert support_at(periodic, np.arange(4)).tolist() == [[True, False], [False, True],
                                                           [True, False], [False, True]]
    assert convergence(periodic, 10) is None


# ----------------------------------------------------------------------------- node classes

def _per_node_plan(fw, query, epsilon, max_window):
    """The planner with every secret node searched on its own (no shared middle class): the
    algorithm before node classes, which these tests hold the class plan equal to."""
    whole = _planner.plan_runs
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_planner, "plan_runs",
                   lambda search, groups, length, middle, cap:
                   whole(search, groups, length, None, cap))
        return plan_chain(fw, query, epsilon, max_window=max_window)


def _class_chain(rng, k: int, length: int, initial: str, kind: str):
    if kind == "sticky":      # rows 0.9·I + 0.1·Dirichlet(1): slow mixing, late sharing point
        p = 0.9 * np.eye(k) + 0.1 * rng.dirichlet(np.ones(k), size=k)
        q0 = rng.dirichlet(np.ones(k)) if initial == "fixed" else initial
        return MarkovChainScenario(p, q0, length)
    return random_chain(rng, k, length, initial, zeros=kind == "zeros")


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(2, 10), length=st.integers(2, 400),
       initial=st.sampled_from(["stationary", "fixed", "any"]),
       kind=st.sampled_from(["sticky", "zeros", "dense"]), members=st.integers(1, 3),
       epsilon=st.floats(0.2, 3.0), max_window=st.sampled_from([2, 5, 16, 40, 2048]))
def test_node_classes_give_the_per_node_plan(seed, k, length, initial, kind, members,
                                             epsilon, max_window):
    rng = np.random.default_rng(seed)
    fw = Framework(ScenarioClass([_class_chain(rng, k, length, initial, kind)
                                  for _ in range(members)]))
    plan = plan_chain(fw, Count(0), epsilon, max_window=max_window)
    ref = _per_node_plan(fw, Count(0), epsilon, max_window)
    assert plan.sigma_max == pytest.approx(ref.sigma_max, rel=1e-12, abs=0)
    assert plan.worst_node == ref.worst_node and len(plan) == len(ref)
    np.testing.assert_allclose(plan.sigma, ref.sigma, rtol=1e-12, atol=0)
    for name in ("nodes", "left", "right", "truncated"):
        np.testing.assert_array_equal(getattr(plan, name), getattr(ref, name))
    # a node class per node near either end, one for the stationary middle
    assert plan.run_count <= ref.run_count


def test_a_long_chain_plan_is_a_handful_of_node_classes():
    # T = 10^6, k = 4, |Θ| = 3 stationary chains: the pair groups used to be per-pair arrays
    # (6·T pairs) and the plan six arrays of length T; now the nodes within the window of
    # either end are classes of their own and the middle is one class
    import tracemalloc

    rng = np.random.default_rng(5)
    cls = ScenarioClass([MarkovChainScenario(rng.dirichlet(np.ones(4), size=4), "stationary",
                                             10**6) for _ in range(3)])
    fw = Framework(cls)
    tracemalloc.start()
    try:
        plan = plan_chain(fw, Count(0), 1.0, max_window=64)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20 and plan.run_count <= 2 * 65 + 1 and len(plan) == 10**6
    middle = plan[500_000]
    assert middle.sigma == plan[1000].sigma
    assert middle.quilt == tuple(v + 499_000 for v in plan[1000].quilt)
    # the middle class agrees with a shorter chain's middle (it does not depend on T)
    short = plan_chain(Framework(ScenarioClass([m.with_length(1000) for m in cls])), Count(0),
                       1.0, max_window=64)
    assert short[500].sigma == middle.sigma and short.sigma_max == plan.sigma_max
