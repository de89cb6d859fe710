"""Tests for the composition accountant and the exact joint audit."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest

import pufferfish_pgm as pp
from pufferfish_pgm.accountant import PrivacyAccountant, joint_audit
from pufferfish_pgm.accountant._composition_rules import full_range, pair_range, quilt_bound
from pufferfish_pgm.errors import (
    CompositionError,
    InvalidParameterError,
    ParameterTypeError,
    PufferfishError,
)
from pufferfish_pgm.mechanisms.base import Calibration
from pufferfish_pgm.mechanisms.blowfish import BlowfishLaplaceMechanism
from pufferfish_pgm.mechanisms.exact import ExactLaplaceMechanism
from pufferfish_pgm.privacy_loss import audit
from pufferfish_pgm.queries import Count, Histogram, LinearQuery
from pufferfish_pgm.quilts import PlanEntry
from pufferfish_pgm.scenarios import BayesianNetworkScenario, MarkovChainScenario, ScenarioClass
from pufferfish_pgm.scenarios._network_tables import NetworkTables
from pufferfish_pgm.secrets import Framework, secret_pairs

# ---------------------------------------------------------------- brute force (independent code)


def joint_probabilities(scenario) -> dict:
    """P(x) for every assignment x (a tuple of state indices in node order)."""
    nodes = scenario.nodes
    sizes = [len(scenario.states_of(v)) for v in nodes]
    out = {}
    for x in itertools.product(*[range(k) for k in sizes]):
        if isinstance(scenario, MarkovChainScenario):
            p = scenario.initial[x[0]] * np.prod(
                [scenario.transition[x[t - 1], x[t]] for t in range(1, len(x))])
        else:
            at = dict(zip(nodes, x, strict=True))
            p = np.prod([scenario.tables.cpts[v][(at[v], *[at[u] for u in
                                                             scenario.parents_of(v)])]
                         for v in nodes])
        out[x] = float(p)
    return out


def answers(scenario, queries, x) -> tuple:
    """Every released coordinate: one per Count/LinearQuery, one per bar of a Histogram."""
    nodes = list(scenario.nodes)
    out = []
    for q in queries:
        if isinstance(q, Histogram):
            chosen = q.nodes or nodes
            k = len(scenario.states_of(chosen[0]))
            out += [sum(x[nodes.index(v)] == s for v in chosen) for s in range(k)]
        else:
            chosen = q.nodes or nodes
            weights = dict(q.weights)
            out.append(sum(weights.get(scenario.states_of(v)[x[nodes.index(v)]], 0)
                           for v in chosen))
    return tuple(float(a) for a in out)


def brute_joint_epsilon(framework, releases) -> float:
    """sup over pairs, θ and the grid of support points of |log p_a(y) / p_b(y)|."""
    queries = [q for q, _ in releases]
    scales = np.concatenate([[s] * (len(q.bars(framework.scenarios)) if isinstance(q, Histogram)
                                    else 1) for q, s in releases])
    worst = 0.0
    for theta in framework.scenarios:
        nodes = list(theta.nodes)
        table = [(x, p, answers(theta, queries, x))
                 for x, p in joint_probabilities(theta).items() if p > 0]
        for pair in framework.pairs:
            mus = []
            for secret in (pair.first, pair.second):
                v, s = secret.node, theta.states_of(secret.node).index(secret.state)
                mu: dict = {}
                for x, p, key in table:
                    if x[nodes.index(v)] == s:
                        mu[key] = mu.get(key, 0.0) + p
                total = sum(mu.values())
                mus.append({key: p / total for key, p in mu.items()})   # μ given the secret
            if not mus[0] or not mus[1]:
                continue                    # a secret of probability 0 under θ: skipped
            grid = [sorted({key[c] for mu in mus for key in mu}) for c in range(len(scales))]
            points = np.array(list(itertools.product(*grid)))            # (G, d)
            dens = []
            for mu in mus:                  # Σ_key μ(key) Π_c exp(-|y_c - key_c| / λ_c)
                keys, p = np.array(list(mu)), np.array(list(mu.values()))
                kernel = np.exp(-np.abs(points[:, None, :] - keys[None]) / scales).prod(axis=2)
                dens.append(kernel @ p)
            worst = max(worst, float(np.max(np.abs(np.log(dens[0] / dens[1])))))
    return worst


def xor_network() -> BayesianNetworkScenario:
    """X0 -> X1, X2 = X1 XOR X0: X1 and X2 each say little about X0, together everything."""
    x2 = np.zeros((2, 2, 2))
    for a, b in itertools.product(range(2), repeat=2):
        x2[a ^ b, a, b] = 1.0
    tables = NetworkTables(
        nodes=("X0", "X1", "X2"), states={v: (0, 1) for v in ("X0", "X1", "X2")},
        parents={"X0": (), "X1": ("X0",), "X2": ("X0", "X1")},
        cpts={"X0": np.array([0.5, 0.5]), "X1": np.array([[0.6, 0.5], [0.4, 0.5]]), "X2": x2})
    return BayesianNetworkScenario(tables, name="xor")


def small_network() -> BayesianNetworkScenario:
    """A -> B -> C, A -> C with three states for C and a zero in a CPT."""
    tables = NetworkTables(
        nodes=("A", "B", "C"), states={"A": ("n", "y"), "B": ("n", "y"), "C": ("lo", "mid", "hi")},
        parents={"A": (), "B": ("A",), "C": ("A", "B")},
        cpts={"A": np.array([0.3, 0.7]), "B": np.array([[0.9, 0.2], [0.1, 0.8]]),
              "C": np.array([[[0.5, 0.2], [0.1, 0.0]], [[0.3, 0.3], [0.3, 0.4]],
                             [[0.2, 0.5], [0.6, 0.6]]])})
    return BayesianNetworkScenario(tables, name="small")


CHAIN = MarkovChainScenario([[0.8, 0.2], [0.3, 0.7]], "stationary", 4, name="sticky")
CHAIN_B = MarkovChainScenario([[0.6, 0.4], [0.1, 0.9]], [0.5, 0.5], 4, name="other")
IID = MarkovChainScenario([[0.7, 0.3], [0.7, 0.3]], "stationary", 5, name="iid")

# ---------------------------------------------------------------- joint audit vs brute force


@pytest.mark.parametrize("releases", [
    [(Count(1), 1.5), (Count(0, nodes=[0, 1]), 0.8)],
    [(Count(1), 2.0), (Count(1), 2.0), (Count(1, nodes=[3]), 0.7)],
    [(LinearQuery({0: -1, 1: 2}), 3.0), (Histogram(), 1.2)],
])
def test_joint_audit_matches_brute_force_on_chains(releases) -> None:
    fw = Framework(ScenarioClass([CHAIN, CHAIN_B]))
    assert joint_audit(fw, releases) == pytest.approx(brute_joint_epsilon(fw, releases),
                                                      rel=1e-9, abs=1e-12)


def test_joint_audit_matches_brute_force_on_a_network() -> None:
    bn = small_network()
    fw = Framework(bn)
    releases = [(Count("hi", nodes=["C"]), 0.9), (Count("y", nodes=["A", "B"]), 1.3),
                (LinearQuery({"lo": -1, "mid": 1, "hi": 3}, nodes=["C"]), 2.5)]
    assert joint_audit(fw, releases) == pytest.approx(brute_joint_epsilon(fw, releases),
                                                      rel=1e-9, abs=1e-12)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_exact_releases_on_a_plain_chain_exceed_the_sum_of_their_epsilons() -> None:
    """Not a contrived model: two exactly calibrated releases on a sticky two-state chain,
    each exactly at its ε, leak a little more than ε_1 + ε_2 together."""
    fw = Framework(CHAIN)
    cals = [ExactLaplaceMechanism(epsilon=e).calibrate(fw, q)
            for e, q in [(0.5, Count(1)), (0.3, Count(0, nodes=[0, 1]))]]
    joint = joint_audit(fw, cals)
    assert joint == joint_audit(fw, [(c.query, c.scale) for c in cals])
    assert joint == pytest.approx(brute_joint_epsilon(fw, [(c.query, c.scale) for c in cals]),
                                  rel=1e-9)
    singles = [audit(fw, c.query, c.scale).epsilon for c in cals]
    assert singles == pytest.approx([0.5, 0.3], rel=1e-8)
    assert joint > 0.8 + 1e-4                        # 0.80049: more than the sum
    with pytest.raises(CompositionError):
        PrivacyAccountant().record(cals[0]).record(cals[1])


def test_joint_audit_rejects_bad_input() -> None:
    fw = Framework(CHAIN)
    with pytest.raises(InvalidParameterError):
        joint_audit(fw, [])
    with pytest.raises(ParameterTypeError):
        joint_audit(fw, [Count(1)])
    with pytest.raises(InvalidParameterError, match="scale 0"):
        joint_audit(fw, [(Count(1), 0)])
    with pytest.raises(InvalidParameterError):
        joint_audit(fw, [(Count(1), -1.0)])

# ---------------------------------------------------------------- the accountant refuses


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_individually_private_releases_that_do_not_compose() -> None:
    bn = xor_network()
    fw = Framework(bn, secret_pairs(bn, nodes=["X0"]))
    releases = [ExactLaplaceMechanism(epsilon=0.1).calibrate(fw, Count(1, nodes=[v]))
                for v in ("X1", "X2")]
    for cal in releases:           # each is 0.1-Pufferfish private on its own
        assert audit(fw, cal.query, cal.scale).epsilon <= 0.1 * (1 + 1e-9)
    acc = PrivacyAccountant().record(releases[0])
    with pytest.raises(CompositionError, match="joint_audit") as err:
        acc.record(releases[1])
    assert "MarkovQuiltMechanism" in str(err.value) and "#2" in str(err.value)
    combined = joint_audit(fw, releases)
    pairs = [(c.query, c.scale) for c in releases]
    assert combined == pytest.approx(brute_joint_epsilon(fw, pairs), rel=1e-9)
    assert combined > 0.6 > 0.1 + 0.1      # six times the sum of the individual budgets
    assert acc.epsilon == 0.1 and len(acc.releases) == 1   # the refused release left no trace


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_refuses_releases_calibrated_for_different_frameworks() -> None:
    cal_a = ExactLaplaceMechanism(epsilon=0.5).calibrate(Framework(CHAIN), Count(1))
    cal_b = ExactLaplaceMechanism(epsilon=0.5).calibrate(Framework(CHAIN_B), Count(1))
    with pytest.raises(CompositionError, match="different frameworks"):
        PrivacyAccountant().record(cal_a).record(cal_b)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_record_validates_its_arguments() -> None:
    cal = ExactLaplaceMechanism(epsilon=0.5).calibrate(Framework(CHAIN), Count(1))
    with pytest.raises(ParameterTypeError):
        PrivacyAccountant().record((Count(1), 2.0))
    with pytest.raises(ParameterTypeError, match="hashable"):
        PrivacyAccountant().record(cal, dataset=["a"])
    with pytest.raises(InvalidParameterError):
        PrivacyAccountant().record(dataclasses.replace(cal, scale=float("nan")))
    with pytest.raises(PufferfishError):
        PrivacyAccountant().record(cal).record(cal)

# ---------------------------------------------------------------- what composes


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_accountant_is_a_frozen_value() -> None:
    empty = PrivacyAccountant()
    cal = BlowfishLaplaceMechanism(epsilon=0.5).calibrate(Framework(IID), Count(1))
    one = empty.record(cal)
    assert empty.epsilon == 0.0 and empty.releases == () and one is not empty
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.releases = ()  # type: ignore[misc]
    assert "independent" not in one.summary() and "single release" in one.summary()


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_independent_records_add_and_the_joint_audit_agrees() -> None:
    fw = Framework(IID)
    cals = [BlowfishLaplaceMechanism(epsilon=0.5).calibrate(fw, Count(1)),
            ExactLaplaceMechanism(epsilon=0.25).calibrate(fw, LinearQuery({0: 2, 1: -1})),
            BlowfishLaplaceMechanism(epsilon=0.1).calibrate(fw, Histogram())]
    acc = PrivacyAccountant()
    for cal in cals:
        acc = acc.record(cal)
    assert acc.epsilon == pytest.approx(0.85)
    assert "independent records" in acc.summary()
    joint = joint_audit(fw, cals)
    assert joint <= acc.bound * (1 + 1e-9) and acc.bound <= acc.epsilon * (1 + 1e-12)
    assert joint == pytest.approx(0.85, rel=1e-6)    # tight for independent records


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_independent_rule_refuses_a_release_too_noisy_for_the_pairs() -> None:
    fw = Framework(IID)
    good = BlowfishLaplaceMechanism(epsilon=0.5).calibrate(fw, Count(1))
    bad = dataclasses.replace(good, scale=0.5, mechanism="Custom")
    with pytest.raises(CompositionError, match="not ε-private"):
        PrivacyAccountant().record(good).record(bad)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_dataset_level_release_composes_with_anything() -> None:
    fw = Framework(CHAIN)
    exact = ExactLaplaceMechanism(epsilon=0.5).calibrate(fw, Count(1))
    group = Calibration(mechanism="GroupDP", epsilon=0.4, scale=full_range(Count(0), CHAIN) / 0.4,
                        query=Count(0), framework=fw)
    acc = PrivacyAccountant().record(exact).record(group)
    assert acc.epsilon == pytest.approx(0.9)
    assert "group DP" in acc.summary()
    assert joint_audit(fw, [exact, group]) <= acc.epsilon


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_parallel_composition_over_disjoint_users() -> None:
    fw = Framework(CHAIN)
    cal = ExactLaplaceMechanism(epsilon=0.5).calibrate(fw, Count(1))
    acc = (PrivacyAccountant().record(cal, dataset="cohort A")
           .record(cal, dataset="cohort B")
           .record(ExactLaplaceMechanism(epsilon=0.75).calibrate(fw, Count(0)),
                   dataset="cohort C"))
    assert acc.epsilon == 0.75 and len(acc.groups) == 3
    with pytest.raises(CompositionError):
        acc.record(cal, dataset="cohort A")


def test_ranges() -> None:
    fw = Framework(CHAIN, secret_pairs(CHAIN, nodes=[0]))
    assert full_range(Histogram(), CHAIN) == 8.0
    assert full_range(LinearQuery({0: -1, 1: 2}), CHAIN) == 12.0
    assert pair_range(Count(1, nodes=[1, 2]), fw) == 0.0      # node 0 is not counted
    assert pair_range(Histogram(), fw) == 2.0
    assert pair_range(LinearQuery({0: -1, 1: 2}), fw) == 3.0

# ---------------------------------------------------------------- Markov quilt composition


def handmade_mqm(fw: Framework, epsilon: float, nearby: dict, influence: float) -> Calibration:
    """An MQM-shaped calibration (the arithmetic only): scale = max card(nearby) / (ε - e)."""
    plan = tuple(PlanEntry(node=v, quilt=(), nearby=tuple(n), remote=(), influence=influence,
                           sigma=len(n) / (epsilon - influence)) for v, n in nearby.items())
    sigma = max(e.sigma for e in plan)
    return Calibration(mechanism="MarkovQuilt", epsilon=epsilon, scale=sigma, query=Count(1),
                       framework=fw, plan=plan)


def test_quilt_bound_takes_the_smallest_nearby_set() -> None:
    fw = Framework(CHAIN)
    wide = handmade_mqm(fw, 1.0, {v: CHAIN.nodes for v in CHAIN.nodes}, 0.0)
    assert quilt_bound([wide]) == pytest.approx(1.0)
    assert quilt_bound([wide, wide]) == pytest.approx(2.0)
    narrow = handmade_mqm(fw, 1.0, {v: (0, 1) for v in CHAIN.nodes}, 0.3)
    load = 1 / 4 + 0.7 / 2                  # Σ_k L_k / scale_k
    assert quilt_bound([wide, narrow]) == pytest.approx(min(4 * load, 0.3 + 2 * load))
    with pytest.raises(CompositionError, match="covers node"):
        quilt_bound([dataclasses.replace(wide, plan=wide.plan[:2])])


def _markov_quilt():
    return pytest.importorskip("pufferfish_pgm.mechanisms.markov_quilt")


def mqm_framework() -> Framework:
    """A class of two chains on which the Markov quilts are not trivial at ε ~ 1."""
    a = MarkovChainScenario([[0.7, 0.3], [0.4, 0.6]], "stationary", 12, name="a")
    b = MarkovChainScenario([[0.6, 0.4], [0.3, 0.7]], "stationary", 12, name="b")
    return Framework(ScenarioClass([a, b]))


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_mqm_releases_compose_and_the_joint_audit_confirms() -> None:
    module = _markov_quilt()
    fw = mqm_framework()
    cals = [module.MarkovQuiltMechanism(epsilon=e).calibrate(fw, q)
            for e, q in [(1.0, Count(1)), (0.5, Count(0, nodes=[2, 3, 4])), (2.0, Histogram())]]
    assert cals[0].evidence.trivial_nodes == 0 == cals[2].evidence.trivial_nodes
    assert [e.quilt for e in cals[0].plan] != [e.quilt for e in cals[2].plan]  # other quilts
    acc = PrivacyAccountant()
    for cal in cals:
        acc = acc.record(cal)
    assert acc.epsilon == pytest.approx(3.5)
    assert acc.bound == pytest.approx(quilt_bound(cals)) and acc.bound < 3.5
    joint = joint_audit(fw, cals)
    assert joint == pytest.approx(brute_joint_epsilon(fw, [(c.query, c.scale) for c in cals]),
                                  rel=1e-9)
    assert joint <= acc.bound * (1 + 1e-9)
    singles = [audit(fw, c.query, c.scale).epsilon for c in cals]
    assert all(s <= c.epsilon * (1 + 1e-9) for s, c in zip(singles, cals, strict=True))
    assert joint <= sum(singles)        # here the sum of the individual realised ε holds too


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_mqm_approx_and_exact_releases_compose() -> None:
    module = _markov_quilt()
    fw = mqm_framework()
    cals = [module.MarkovQuiltMechanism(epsilon=1.0).calibrate(fw, Count(1)),
            module.MQMApproxMechanism(epsilon=3.0).calibrate(fw, Count(0))]
    assert cals[1].scale < full_range(Count(0), fw.scenarios) / 3.0    # not group DP
    acc = PrivacyAccountant().record(cals[0]).record(cals[1])
    assert acc.epsilon == 4.0 and "Markov Quilt" in acc.summary()
    assert joint_audit(fw, cals) <= acc.bound * (1 + 1e-9)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_mqm_and_a_non_mqm_release_are_refused() -> None:
    module = _markov_quilt()
    fw = mqm_framework()
    a = module.MarkovQuiltMechanism(epsilon=1.0).calibrate(fw, Count(1))
    b = ExactLaplaceMechanism(epsilon=1.0).calibrate(fw, Count(1))
    with pytest.raises(CompositionError, match="Markov Quilt"):
        PrivacyAccountant().record(a).record(b)
    # entry DP is refused on its own under correlation: its ε is nominal (issue 9, defect 4)
    entry = _baselines().EntryDPMechanism(epsilon=1.0).calibrate(fw, Count(1))
    with pytest.raises(CompositionError, match="nominal"):
        PrivacyAccountant().record(a).record(entry)


def _baselines():
    return pytest.importorskip("pufferfish_pgm.mechanisms.baselines")


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_baselines() -> None:
    baselines = _baselines()
    fw = mqm_framework()
    group = baselines.GroupDPMechanism(epsilon=0.5).calibrate(fw, Count(1))
    exact = ExactLaplaceMechanism(epsilon=0.5).calibrate(fw, Count(0))
    acc = PrivacyAccountant().record(group).record(exact).record(group)
    assert acc.epsilon == 1.5 and "group DP" in acc.summary()
    iid = Framework(IID)
    entry = baselines.EntryDPMechanism(epsilon=0.5).calibrate(iid, Count(1))
    acc = (PrivacyAccountant().record(entry)
           .record(BlowfishLaplaceMechanism(epsilon=0.5).calibrate(iid, Histogram())))
    assert acc.epsilon == 1.0 and "independent records" in acc.summary()


def test_public_names_survive_the_split() -> None:
    # the rule checks live in pufferfish_pgm.accountant._composition_rules; the range helpers
    # moved to the engine face in 0.2.0 and still import from the package, with a warning
    import pufferfish_pgm.accountant as accountant
    from pufferfish_pgm.accountant import _composition_rules as rules

    assert sorted(accountant.__all__) == [
        "ContinualRelease", "GroupAccount", "PrivacyAccountant", "RecordedRelease",
        "RobustnessReport", "joint_audit", "quilt_bound", "robustness"]
    assert all(hasattr(accountant, name) for name in accountant.__all__)
    with pytest.warns(DeprecationWarning, match="accountant._engine"):
        moved = (accountant.full_range, accountant.pair_range)
    assert (*moved, accountant.quilt_bound) == (rules.full_range, rules.pair_range,
                                               rules.quilt_bound)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_optimal_noise_releases_are_refused_with_the_reason() -> None:
    # the accountant composes Laplace releases; an integer noise law has no Laplace scale (nan),
    # which used to be reported as "scale is nan"
    mc = pp.MarkovChainScenario([[0.8, 0.2], [0.2, 0.8]], "stationary", 6)
    cal = pp.OptimalNoiseMechanism(epsilon=1.0).calibrate(pp.Framework(mc), pp.Count(1))
    with pytest.raises(pp.CompositionError, match="integer noise law, not Laplace noise"):
        pp.PrivacyAccountant().record(cal)
