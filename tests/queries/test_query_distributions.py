"""Exact query distributions against brute-force enumeration."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import brute_pmf, random_chain, random_network

from pufferfish_pgm.distributions._log_space import log_convolve
from pufferfish_pgm.errors import (
    ImpossibleSecretError,
    InvalidModelError,
    InvalidParameterError,
    LimitExceededError,
    ParameterTypeError,
    PufferfishError,
    UnknownStateError,
)
from pufferfish_pgm.privacy_loss._laplace_kernel import log_laplace_density
from pufferfish_pgm.queries import (
    Count,
    CountPmf,
    Histogram,
    LinearQuery,
    joint_query_log_pmf,
    query_distribution,
    query_log_pmf,
)
from pufferfish_pgm.queries._chain_count_law import ChainCountTables
from pufferfish_pgm.queries._engine import fixed_start_variants
from pufferfish_pgm.scenarios import BayesianNetworkScenario, MarkovChainScenario
from pufferfish_pgm.scenarios._scenarios import default_model_path


def _as_dict(pmf: CountPmf) -> dict:
    return {(int(x),): float(p) for x, p in zip(pmf.support, pmf.probs, strict=True)}


def _close(got: dict, want: dict, tol: float = 1e-12) -> None:
    assert set(got) == set(want)
    for key, value in want.items():
        assert got[key] == pytest.approx(value, rel=1e-9, abs=tol)


def _weights(rng, k):
    return {s: int(w) for s, w in zip(range(k), rng.integers(-2, 3, k), strict=True)}


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(2, 3), length=st.integers(1, 6),
       n_evidence=st.integers(0, 2))
def test_chain_matches_brute_force(seed, k, length, n_evidence):
    rng = np.random.default_rng(seed)
    mc = random_chain(rng, k, length, zeros=bool(seed % 2))
    weights = _weights(rng, k)
    nodes = rng.choice(length, size=min(n_evidence, length), replace=False)
    evidence = {int(t): int(rng.integers(0, k)) for t in nodes}
    query = LinearQuery(weights)
    want = brute_pmf(mc, [lambda v, s: weights[s]], evidence)
    if not want:
        with pytest.raises(ImpossibleSecretError):
            query_log_pmf(mc, query, evidence)
        return
    _close(_as_dict(query_log_pmf(mc, query, evidence)), want)
    bn = mc.to_bayesian_network()
    _close(_as_dict(query_log_pmf(bn, query, evidence)), want)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(1, 5))
def test_network_matches_brute_force(seed, n):
    rng = np.random.default_rng(seed)
    bn = random_network(rng, n)
    target = bn.nodes[int(rng.integers(0, n))]
    state = bn.states_of(target)[0]
    weights = {f"s{j}": int(w) for j, w in enumerate(rng.integers(-1, 3, 2))}
    nodes = None
    if rng.random() < 0.5:
        nodes = [v for v in bn.nodes if "s2" in bn.states_of(v)] or None
        if nodes:
            weights["s2"] = 3
    query = LinearQuery(weights, nodes)
    chosen = set(query.node_list(bn))

    def w(v, s):
        return weights.get(s, 0) if v in chosen else 0

    evidence = {target: state}
    _close(_as_dict(query_log_pmf(bn, query, evidence)), brute_pmf(bn, [w], evidence))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), length=st.integers(1, 5))
def test_joint_histogram_matches_brute_force(seed, length):
    rng = np.random.default_rng(seed)
    mc = random_chain(rng, 3, length)
    bars = Histogram().bars(mc)
    evidence = {0: 1}
    got = joint_query_log_pmf(mc, bars, evidence)
    want = brute_pmf(mc, [lambda v, s, j=j: int(s == j) for j in range(3)], evidence)
    _close({tuple(int(x) for x in p): float(np.exp(m))
            for p, m in zip(got.points, got.log_mass, strict=True)}, want)
    marginal = got.marginal(1)
    assert math.isclose(np.exp(marginal.log_mass).sum(), 1.0)


def test_all_secrets_of_a_chain_at_once_match_single_runs():
    rng = np.random.default_rng(3)
    mc = random_chain(rng, 3, 7)
    weights = np.tile(np.array([0, 1, 2]), (7, 1))
    tables = ChainCountTables(mc.transition, mc.initial, weights)
    for t in range(7):
        for s in range(3):
            fast = tables.secret_log_joint(t, s)
            masked = np.logaddexp.reduce(tables.forward({t: s})[-1], axis=0)
            np.testing.assert_allclose(np.exp(fast), np.exp(masked), rtol=1e-10, atol=1e-300)


def test_asia_against_brute_force():
    asia = BayesianNetworkScenario.from_file(default_model_path("asia.bif"))
    got = query_distribution(asia, Count("yes"), {"smoke": "yes"})
    want = brute_pmf(asia, [lambda v, s: int(s == "yes")], {"smoke": "yes"})
    _close({(int(x),): p for x, p in zip(got.support, got.probs, strict=True)}, want)


def test_tail_masses_keep_relative_precision():
    # count of state 1 in a chain that almost never enters it: P(count = T) is tiny
    T = 400
    mc = MarkovChainScenario([[0.99, 0.01], [0.9, 0.1]], [1.0, 0.0], T)
    pmf = query_log_pmf(mc, Count(1), {0: 0})
    # all of X_1..X_{T-1} in state 1: 0.01 * 0.1^(T-2), far below float64's range
    expected = math.log(0.01) + (T - 2) * math.log(0.1)
    assert pmf.log_mass[T - 1] == pytest.approx(expected, rel=1e-12)
    assert pmf.to_distribution().support.max() < T - 1   # float64 view drops it


def test_log_convolve_against_exact_sums():
    rng = np.random.default_rng(0)
    x = rng.normal(0, 400, 60)
    y = rng.normal(0, 400, 45)
    x[5] = -np.inf
    got = log_convolve(x, y)
    for c in range(got.size):
        terms = [x[i] + y[c - i] for i in range(x.size) if 0 <= c - i < y.size]
        assert got[c] == pytest.approx(np.logaddexp.reduce(terms), rel=1e-12, abs=1e-9)


def test_log_laplace_density_against_direct_sum():
    grid = np.array([-3.0, 0.0, 0.5, 4.0])
    log_mass = np.log([0.1, 0.2, 0.3, 0.4])
    got = log_laplace_density(grid, log_mass, 0.7)
    want = [math.log(np.sum(np.exp(log_mass - np.abs(g - grid) / 0.7))) for g in grid]
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_any_start_variants():
    mc = MarkovChainScenario([[0.5, 0.5], [0.0, 1.0]], "any", 3, name="m")
    names = [v.name for v in fixed_start_variants(mc)]
    assert names == ["m[start=0]", "m[start=1]", "m[stationary start]"]
    with pytest.raises(InvalidModelError, match="fixed_start_variants"):
        query_log_pmf(mc, Count(1))
    reducible = MarkovChainScenario(np.eye(2), "any", 2)
    assert len(fixed_start_variants(reducible)) == 2


def test_bad_input_raises_clear_errors():
    mc = MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 3)
    with pytest.raises(InvalidParameterError, match="not an integer"):
        query_log_pmf(mc, LinearQuery({0: 0.5}, integer=False))
    with pytest.raises(ParameterTypeError, match="bars"):
        query_log_pmf(mc, Histogram())
    with pytest.raises(UnknownStateError):
        query_log_pmf(mc, Count(7))
    with pytest.raises(ParameterTypeError):
        query_log_pmf(mc, Count(1), [0, 1])
    with pytest.raises(LimitExceededError, match="max_cells"):
        query_log_pmf(mc.with_length(50), Count(1), max_cells=10)
    impossible = MarkovChainScenario([[1.0, 0.0], [0.5, 0.5]], [1.0, 0.0], 3)
    with pytest.raises(ImpossibleSecretError, match="probability 0"):
        query_log_pmf(impossible, Count(1), {2: 1})
    for err in (InvalidParameterError, ParameterTypeError, LimitExceededError):
        assert issubclass(err, PufferfishError)


def test_alarm_count_mean_matches_the_inference_engine():
    from pufferfish_pgm.inference import conditional

    alarm = BayesianNetworkScenario.from_file(default_model_path("alarm.bif"), renormalize=1e-6)
    nodes = [v for v in alarm.nodes if "NORMAL" in alarm.states_of(v)]
    evidence = {"HYPOVOLEMIA": "TRUE"}
    pmf = query_log_pmf(alarm, Count("NORMAL", nodes), evidence)
    mean = float(np.sum(pmf.lattice * np.exp(pmf.log_mass)))
    want = sum(conditional(alarm, [v], evidence)[alarm.state_index(v, "NORMAL")]
               for v in nodes)
    assert mean == pytest.approx(want, rel=1e-10)
    assert np.exp(pmf.log_mass).sum() == pytest.approx(1.0, rel=1e-12)


def test_cached_engines_are_reused_and_do_not_keep_their_scenario_alive() -> None:
    import gc
    import weakref

    from pufferfish_pgm.queries._engine import log_joint_engine
    from pufferfish_pgm.queries._packed_weights import pack_queries

    asia = BayesianNetworkScenario.from_file(default_model_path("asia.bif"))
    chain = MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 5)
    alive = []
    for scenario, query in ((asia, Count("yes")), (chain, Count(1))):
        packed = pack_queries(scenario, [query])
        engine = log_joint_engine(scenario, packed)
        assert log_joint_engine(scenario, packed) is engine
        engine.log_joint({})
        alive.append((weakref.ref(scenario), weakref.ref(engine)))
    del asia, chain, scenario, engine
    gc.collect()
    assert all(s() is None and e() is None for s, e in alive)


def test_network_laws_keep_tails_far_below_the_float_range() -> None:
    # an almost deterministic alternating chain, as a network: the count's far tail needs many
    # transitions of probability 1e-20 (masses down to e^-2673 given X_7 = 0). The network
    # engine used to lose 41 of these 59 masses to underflow; the chain engine (log space) is
    # the reference, and the two must now agree on every mass.
    mc = MarkovChainScenario([[1e-20, 1 - 1e-20], [1 - 1e-20, 1e-20]], [1.0, 0.0], 60)
    chain = query_log_pmf(mc, Count(1), {7: 0})
    network = query_log_pmf(mc.to_bayesian_network(), Count(1), {7: 0})
    finite = np.isfinite(chain.log_mass)
    assert finite.sum() == 59 and chain.log_mass.min() < -2600
    np.testing.assert_array_equal(np.isfinite(network.log_mass), finite)
    np.testing.assert_allclose(network.log_mass[finite], chain.log_mass[finite], rtol=1e-13,
                               atol=1e-9)
