"""The optimal-noise solver at real sizes (issue 23): warm-started LP, cuts per output, lean
groups, pruned pairs. The privacy of the results is the campaign's and test_optimal.py's."""

from __future__ import annotations

import numpy as np
import pytest

from pufferfish_pgm.mechanisms import OptimalNoiseMechanism
from pufferfish_pgm.mechanisms._optimal_groups import build_lean, chunked_report, noiseless_losses
from pufferfish_pgm.mechanisms._optimal_highs import WarmLP, highs_module
from pufferfish_pgm.mechanisms._optimal_lp import NoiseLP, objective_value
from pufferfish_pgm.noise import IntegerNoise
from pufferfish_pgm.privacy_loss._pair_rows import Group, build_groups
from pufferfish_pgm.privacy_loss._pmf_audit import PmfGroup, TailedLaw, noise_report
from pufferfish_pgm.queries import Count
from pufferfish_pgm.scenarios import MarkovChainScenario, ScenarioClass
from pufferfish_pgm.secrets import Framework


def _random_law(rng: np.random.Generator, zeros: bool) -> dict:
    support = np.arange(rng.integers(1, 7))
    p = rng.dirichlet(np.full(support.size, 0.5))
    if zeros and support.size > 1:
        p[rng.integers(support.size)] = 0.0
        p = p / p.sum()
    return {int(x): float(q) for x, q in zip(support, p, strict=True) if q > 0}


@pytest.mark.parametrize("seed", range(20))
def test_pruned_pairs_never_violate_for_any_noise_law(seed):
    # The pruning rule (docs/optimal-noise.md, "Pairs that need no rows"): a pair with
    # max_x |log mu_a(x)/mu_b(x)| <= eps meets every row for every noise law. Check it on
    # random pairs (some with zeros where the other law has mass: noiseless loss inf) and
    # random integer noise laws by the exact pmf auditor: the realised loss never exceeds the
    # noiseless one. A rule that misread a one-sided zero as equal would prune such a pair and
    # fail here.
    rng = np.random.default_rng(seed)
    pairs = [(_random_law(rng, bool(i % 2)), _random_law(rng, bool(i % 3 == 0)))
             for i in range(8)]
    group = Group.from_distributions(pairs)
    bound = noiseless_losses(group)
    for _ in range(5):
        noise = IntegerNoise(lo=-int(rng.integers(1, 4)),
                             weights=tuple(int(w) for w in rng.integers(1, 100, size=7)),
                             tail_scale=float(rng.uniform(0.3, 3.0)))
        law = TailedLaw.of(noise)
        eps, _ = PmfGroup.build(group, noise.tail_scale).epsilons(law)
        assert np.all(eps <= bound + 1e-9), (eps, bound)


def test_noiseless_losses_by_hand():
    g = Group.from_distributions([({0: 0.5, 1: 0.5}, {0: 0.6, 1: 0.4}),   # log(0.5/0.4)
                                  ({0: 1.0}, {0: 0.5, 1: 0.5}),           # mu_a(1) = 0: inf
                                  ({0: 0.3, 1: 0.7}, {0: 0.3, 1: 0.7})])  # equal: 0
    assert noiseless_losses(g).tolist() == pytest.approx([np.log(1.25), np.inf, 0.0])


def _chain_groups(length: int = 12) -> list[Group]:
    mc = MarkovChainScenario([[0.9, 0.1], [0.3, 0.7]], "stationary", length)
    return build_groups(Framework(mc), [Count(1)], [[1]], [0])[0]


def test_lean_groups_and_chunked_audit_equal_the_stored_ones():
    groups = _chain_groups()
    noise = IntegerNoise(lo=-2, weights=(3, 1, 7, 1, 3), tail_scale=2.0)
    law = TailedLaw.of(noise)
    lean = [build_lean(g, 2.0) for g in groups]
    stored = [PmfGroup.build(g, 2.0) for g in groups]
    for a, b in zip(lean, stored, strict=True):
        assert np.array_equal(a.right, b.right) and np.array_equal(a.left, b.left)
    ours = chunked_report(lean, law, ["count"], (), "")
    theirs = noise_report(stored, noise, ["count"], (), "")
    assert [p.epsilon for p in ours.pairs] == [p.epsilon for p in theirs.pairs]
    assert [p.output for p in ours.pairs] == [p.output for p in theirs.pairs]


def test_warm_and_from_scratch_solves_agree():
    groups = _chain_groups(20)
    values = []
    for backend in ("auto", "linprog"):
        lp = NoiseLP.build(groups, lo=-6, hi=6, tail_scale=10.0, objective=("abs",))
        lp.backend = backend
        v, _ = lp.solve(1.0 - 1e-7, tol=5e-8)
        values.append(objective_value(lp.objective, v))
    assert values[0] == pytest.approx(values[1], rel=1e-6)


def test_warm_lp_keeps_its_instance_between_solves():
    lp = WarmLP(np.array([1.0, 2.0]), np.array([1.0, 1.0]), lower=0.0)
    assert lp.warm == (highs_module() is not None)
    first = lp.solve()
    lp.add(np.array([[1.0, -1.0]]))
    assert first.tolist() == pytest.approx([1.0, 0.0])
    assert lp.solve().tolist() == pytest.approx([0.5, 0.5])
    assert highs_module("linprog") is None
    assert not WarmLP(np.ones(2), np.ones(2), 0.0, backend="linprog").warm


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_sticky_binary_chain_settles_in_few_rounds():
    # Home A's "Sleeping or not" chain (P(stay) 0.988 / 0.982, T = 144) took 170 LP rounds
    # and 38,776 rows when each round added the worst output of each pair (not finished in
    # 10 minutes in issue 23); cuts per output settle it in 16 rounds and 813 rows (measured,
    # benchmarks/bench_optimal.py --real). This chain has the same stay probabilities.
    mc = MarkovChainScenario([[0.988, 0.012], [0.018, 0.982]], "stationary", 144)
    cal = OptimalNoiseMechanism(epsilon=1.0).calibrate(Framework(mc), Count(1))
    ev = cal.evidence
    assert ev.lp_rounds <= 40 and ev.lp_rows <= 4000, (ev.lp_rounds, ev.lp_rows)
    assert ev.audit.epsilon <= 1.0 and ev.mean_abs < ev.laplace_mean_abs


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_a_class_of_chains_prunes_nothing_it_needs():
    # Two scenarios, one of them i.i.d. (every pair's noiseless loss is 0 there: pruned).
    chains = ScenarioClass([MarkovChainScenario([[0.8, 0.2], [0.3, 0.7]], "stationary", 15),
                            MarkovChainScenario([[0.6, 0.4], [0.6, 0.4]], "stationary", 15,
                                                name="iid")])
    cal = OptimalNoiseMechanism(epsilon=0.5).calibrate(Framework(chains), Count(1))
    assert cal.evidence.audit.epsilon <= 0.5
    assert {p.theta for p in cal.evidence.audit.pairs} == {0, 1}   # every pair audited
