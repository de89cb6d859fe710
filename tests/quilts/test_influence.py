"""Max-influence: golden values by hand, zeros, absorbing states, networks, chain == network."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pufferfish_pgm.errors import InvalidParameterError, LimitExceededError, UnknownNodeError
from pufferfish_pgm.quilts import max_influence
from pufferfish_pgm.quilts._engine import log_ratio
from pufferfish_pgm.scenarios import BayesianNetworkScenario, MarkovChainScenario, ScenarioClass
from pufferfish_pgm.scenarios._network_tables import NetworkTables
from pufferfish_pgm.secrets import Framework, NodeSecret, SecretPair, secret_pairs

SYMMETRIC = [[0.9, 0.1], [0.1, 0.9]]
ASYMMETRIC = [[0.8, 0.2], [0.4, 0.6]]  # stationary π = (2/3, 1/3)


def chain_fw(p, initial="stationary", length=5, nodes=None):
    mc = MarkovChainScenario(p, initial, length)
    return Framework(mc, secret_pairs(mc, nodes=nodes))


@pytest.mark.parametrize(("quilt", "expected"), [
    ([3], math.log(9)),          # D_1 = log P[0,0]/P[1,0] = log(0.9/0.1)
    ([1], math.log(9)),          # U_1 = log(0.9/0.1) + log π(1)/π(0) = log 9 + 0
    ([1, 3], 2 * math.log(9)),   # U_1 + D_1 (the two sides are independent given X_2)
    ([4], math.log(0.82 / 0.18)),  # P^2 = [[0.82, 0.18], [0.18, 0.82]]
    ([0, 4], 2 * math.log(0.82 / 0.18)),
    ([1, 0, 3, 4], 2 * math.log(9)),  # only the nearest quilt node on each side matters
    ([], 0.0),
])
def test_symmetric_chain_golden(quilt, expected):
    assert max_influence(chain_fw(SYMMETRIC), 2, quilt) == pytest.approx(expected, rel=1e-12)


def test_asymmetric_chain_golden():
    # U_1(0,1) = max_x log P[x,0]/P[x,1] + log π(1)/π(0) = log 4 + log(1/2) = log 2
    # U_1(1,0) = max_x log P[x,1]/P[x,0] + log π(0)/π(1) = log(3/2) + log 2 = log 3
    # D_1(0,1) = max_y log P[0,y]/P[1,y] = log 2;  D_1(1,0) = log(0.6/0.2) = log 3
    fw = chain_fw(ASYMMETRIC)
    assert max_influence(fw, 2, [1]) == pytest.approx(math.log(3))
    assert max_influence(fw, 2, [3]) == pytest.approx(math.log(3))
    assert max_influence(fw, 2, [1, 3]) == pytest.approx(2 * math.log(3))  # max(2log2, 2log3)


def test_absorbing_state_gives_inf_not_nan():
    # State 1 is absorbing: P^b[1, 0] = 0 < P^b[0, 0] for every b, so D_b(0,1) = +inf.
    fw = chain_fw([[0.5, 0.5], [0.0, 1.0]], [1.0, 0.0], 5, nodes=[1])
    for b in (1, 2, 3):
        assert max_influence(fw, 1, [1 + b]) == math.inf
    # X_0 is 0 for sure (q0 = (1, 0)), so it carries nothing: U_1 = log P[0,0]/P[0,1] +
    # log q_1(1)/q_1(0) = log 1 + log(0.5/0.5) = 0 in both directions.
    assert max_influence(fw, 1, [0]) == 0.0


def test_any_initial_absorbing_is_inf():
    # With every start allowed, q_1(1)/q_1(0) = (1 - δ/2)/(δ/2) for q0 = (δ, 1-δ): unbounded.
    fw = chain_fw([[0.5, 0.5], [0.0, 1.0]], "any", 4, nodes=[1])
    assert max_influence(fw, 1, [0]) == math.inf


def test_zero_transition_entries():
    # P = [[0, 1], [0.5, 0.5]], π = (1/3, 2/3). D_1(1,0) = max_y log P[1,y]/P[0,y]:
    # y = 0 gives 0.5/0 = inf, so any right quilt at distance 1 is unusable...
    fw = chain_fw([[0.0, 1.0], [0.5, 0.5]], "stationary", 5)
    assert max_influence(fw, 2, [3]) == math.inf
    # ...but P^2 = [[0.5, 0.5], [0.25, 0.75]] is positive: D_2 = max(log 2, log(0.75/0.5)).
    assert max_influence(fw, 2, [4]) == pytest.approx(math.log(2))


def test_impossible_secret_is_skipped_for_that_theta():
    # Under the first chain state 1 never occurs at node 1; that θ is skipped, the second counts.
    never = MarkovChainScenario([[1.0, 0.0], [1.0, 0.0]], [1.0, 0.0], 3)
    other = MarkovChainScenario(SYMMETRIC, "stationary", 3)
    fw = Framework(ScenarioClass([never, other]), secret_pairs(never, nodes=[1]))
    assert max_influence(fw, 1, [2]) == pytest.approx(math.log(9))


def two_node_network():
    tables = NetworkTables(nodes=("A", "B"), states={"A": ("a0", "a1"), "B": ("b0", "b1")},
                           parents={"A": (), "B": ("A",)},
                           cpts={"A": np.array([0.5, 0.5]),
                                 "B": np.array([[0.9, 0.2], [0.1, 0.8]])})
    return BayesianNetworkScenario(tables, name="ab")


def test_network_golden():
    fw = Framework(two_node_network())
    # P(B | A) columns (0.9, 0.1) and (0.2, 0.8): max(log 0.9/0.2, log 0.8/0.1) = log 8
    assert max_influence(fw, "A", ["B"]) == pytest.approx(math.log(8))
    # P(A | B=b0) = (0.45, 0.10)/0.55, P(A | B=b1) = (0.05, 0.40)/0.45:
    # max ratio (0.45/0.55)/(0.05/0.45) = 0.2025/0.0275
    assert max_influence(fw, "B", ["A"]) == pytest.approx(math.log(0.2025 / 0.0275))


def test_network_zero_cpt_entry_is_inf():
    tables = NetworkTables(nodes=("A", "B"), states={"A": (0, 1), "B": (0, 1)},
                           parents={"A": (), "B": ("A",)},
                           cpts={"A": np.array([0.3, 0.7]), "B": np.array([[1.0, 0.4],
                                                                           [0.0, 0.6]])})
    assert max_influence(Framework(BayesianNetworkScenario(tables)), "A", ["B"]) == math.inf


def test_bad_quilts_and_limits():
    fw = chain_fw(SYMMETRIC)
    with pytest.raises(InvalidParameterError, match="contains the secret node"):
        max_influence(fw, 2, [2, 3])
    with pytest.raises(UnknownNodeError):
        max_influence(fw, 2, [9])
    with pytest.raises(UnknownNodeError):
        max_influence(fw, 7, [1])
    net = Framework(two_node_network())
    with pytest.raises(LimitExceededError, match="max_quilt_states=1"):
        max_influence(net, "A", ["B"], max_quilt_states=1)


def test_node_without_pairs_has_zero_influence():
    mc = MarkovChainScenario(SYMMETRIC, "stationary", 4)
    fw = Framework(mc, [SecretPair(NodeSecret(1, 0), NodeSecret(1, 1))])
    assert max_influence(fw, 2, [3]) == 0.0


def test_log_ratio_never_nan():
    out = log_ratio([0, 0, 1, 1e-320], [0, 1, 0, 1e-320])
    assert not np.isnan(out).any()
    assert out.tolist()[:3] == [-math.inf, -math.inf, math.inf]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(2, 3), length=st.integers(2, 6),
       stationary=st.booleans())
def test_chain_closed_form_matches_network_conditionals(seed, k, length, stationary):
    """The closed forms of DESIGN §3.3 agree with exact conditionals on the unrolled network."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(k) * 0.5, size=k)
    p[rng.random((k, k)) < 0.2] = 0.0
    p[np.arange(k), rng.integers(0, k, k)] += 0.3
    p /= p.sum(axis=1, keepdims=True)
    q0 = "stationary" if stationary else rng.dirichlet(np.ones(k))
    try:
        mc = MarkovChainScenario(p, q0, length)
    except InvalidParameterError:
        return
    except ValueError:  # a reducible chain has no unique stationary start
        return
    chain_fw_ = Framework(mc)
    net_fw = Framework(mc.to_bayesian_network())
    node = int(rng.integers(0, length))
    others = [v for v in range(length) if v != node]
    quilt = [v for v in others if rng.random() < 0.5]
    got = max_influence(chain_fw_, node, quilt)
    want = max_influence(net_fw, node, quilt)
    if math.isinf(want):
        assert got == want
    else:
        assert got == pytest.approx(want, rel=1e-9, abs=1e-12)
