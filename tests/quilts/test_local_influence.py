"""The local quilt search (issue 24 item 2): influence on the quilt's region, the prior term
through separators, the monotone path of attractive members, bounded work per node.

Lemmas 1-3 of ``docs/undirected.md`` are checked against the whole-model influence
(``member_influence``, exact inference) and MQM's scales against brute force
(``oracle.realised_epsilon``).
"""

from __future__ import annotations

import dataclasses
import itertools
import math

import networkx as nx
import numpy as np
import pytest
from oracle import random_markov_network, random_network, realised_epsilon

import pufferfish_pgm as pp
from pufferfish_pgm.quilts import _local_influence as li
from pufferfish_pgm.quilts import _local_planner as lp
from pufferfish_pgm.quilts._influence import member_influence
from pufferfish_pgm.quilts._network_planner import class_dags, d_separated, plan_node
from pufferfish_pgm.secrets import Framework

pytestmark = pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")


def _model(seed: int):
    rng = np.random.default_rng(seed)
    zeros = 0.15 if seed % 3 == 0 else 0.0
    if seed % 2:
        return random_network(rng, 6, zero_prob=zeros)
    return random_markov_network(rng, 6, zero_prob=zeros)


def _influences(model, node, quilt, pairs):
    """(bound through the quilt itself, exact with the ∅ region) from the local path."""
    cv = lp.class_view(pp.ScenarioClass([model]))
    inf = lp._NodeInfluence(cv, node, pairs, {"max_region": 100, "max_cells": 10**6})
    rows = inf.ratios(frozenset(quilt))
    bound = inf.influence(rows)
    inf.ratios(frozenset())
    return bound, inf.influence(rows)


@pytest.mark.parametrize("seed", range(24))
def test_region_influence_is_exact_with_the_prior_and_a_bound_without(seed):
    model = _model(seed)
    nodes = list(model.nodes)
    for node in nodes:
        k = len(model.states_of(node))
        pairs = [(a, b) for a in range(k) for b in range(k) if a != b]
        for quilt in itertools.chain.from_iterable(
                itertools.combinations([v for v in nodes if v != node], r) for r in (1, 2)):
            whole = member_influence(model, node, quilt, pairs)
            bound, exact = _influences(model, node, quilt, pairs)
            assert bound >= whole - 1e-9                       # Lemma 2
            assert exact == pytest.approx(whole, abs=1e-9) or math.isinf(whole) == math.isinf(
                exact) and math.isinf(whole)                   # Lemma 1


def _ising(seed: int, n: int = 8):
    g = nx.gnp_random_graph(n, 0.35, seed=seed)
    rng = np.random.default_rng(seed)
    return g, pp.scenarios.contagion(g, base={v: float(rng.uniform(0.05, 0.9)) for v in g},
                                     spread=float(rng.uniform(0.0, 0.9)), directed=False)


@pytest.mark.parametrize("seed", range(10))
def test_attractive_members_take_the_two_boundaries(seed):
    g, model = _ising(seed)
    view = li.local_view(model)
    assert view.attractive
    plain = dataclasses.replace(view, attractive=False)
    for node in g:
        for quilt in itertools.combinations([u for u in g if u != node], 2):
            fast = li.local_ratios(view, node, frozenset(quilt), [0, 1], max_region=50,
                                   max_cells=10**6)
            table = li.local_ratios(plain, node, frozenset(quilt), [0, 1], max_region=50,
                                    max_cells=10**6)
            assert isinstance(fast, li.Ratios) and isinstance(table, li.Ratios)
            for key, value in table.top.items():
                assert fast.top[key] == pytest.approx(value, abs=1e-9)


def _antiferromagnet():
    """A path a - b - c whose couplings favour disagreement: log-submodular factors."""
    away = [[4.0, 1.0], [1.0, 4.0]]
    toward = [[1.0, 4.0], [4.0, 1.0]]
    return pp.MarkovNetworkScenario.from_factors(
        [(("a", "b"), toward), (("b", "c"), away), (("a",), [1.0, 2.0])],
        {v: (0, 1) for v in "abc"})


def test_the_monotone_path_needs_its_condition():
    mn = _antiferromagnet()
    view = li.local_view(mn)
    assert not view.attractive                  # the check refuses it
    forced = dataclasses.replace(view, attractive=True)
    quilt = frozenset({"a", "c"})
    wrong = li.local_ratios(forced, "b", quilt, [0, 1], max_region=10, max_cells=100)
    right = li.local_ratios(view, "b", quilt, [0, 1], max_region=10, max_cells=100)
    assert isinstance(wrong, li.Ratios) and isinstance(right, li.Ratios)
    # with mixed couplings the extremes are at mixed boundaries: the all-0 / all-1 shortcut
    # misses them (this is the failure the condition prevents)
    assert max(wrong.top.values()) < max(right.top.values()) - 1.0
    g = nx.DiGraph([("a", "c"), ("b", "c")])
    noisy_or = pp.scenarios.contagion(g, base=0.1, spread=0.5)
    assert not li.local_view(noisy_or).attractive     # explaining away


def _tiny(directed: bool, seed: int):
    g = nx.connected_watts_strogatz_graph(7, 2, 0.3, seed=seed)
    members = [pp.scenarios.contagion(g, base=0.2, spread=s, directed=directed)
               for s in (0.3, 0.6)]
    return Framework(pp.ScenarioClass(members))


@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("region", [2, 3, 100])
def test_mqm_scales_pass_the_brute_force_audit(directed, region):
    for seed in range(3):
        fw = _tiny(directed, seed)
        query = pp.Count("infected")
        for full in (True, False):
            cal = pp.MarkovQuiltMechanism(epsilon=1.0, max_region=region,
                                          full_plan=full).calibrate(fw, query)
            assert realised_epsilon(fw, query, cal.scale) <= 1.0 + 1e-9
            dags = class_dags(fw.scenarios)
            for e in cal.plan:
                assert set(e.nearby) | set(e.quilt) | set(e.remote) == set(fw.scenarios.nodes)
                if e.remote:
                    assert all(d_separated(d, {e.node}, set(e.remote), set(e.quilt))
                               for d in dags)


@pytest.mark.parametrize("directed", [True, False])
def test_local_planner_equals_the_whole_model_planner(directed):
    for seed in range(3):
        fw = _tiny(directed, seed)
        cls = fw.scenarios
        cal = pp.MarkovQuiltMechanism(epsilon=1.0, full_plan=True,
                                      max_quilt_states=64).calibrate(fw, pp.Count("infected"))
        weight = pp.Count("infected").node_list(cls)
        from collections import Counter

        from pufferfish_pgm.quilts._influence import ordered_pairs
        settings = {"max_quilt_states": 64, "extra_quilts": None, "max_candidates": 20_000,
                    "memory_budget": None}
        for entry in cal.plan:
            old, _, _ = plan_node(cls, ordered_pairs(fw, entry.node), entry.node,
                                  Counter(weight), 1.0, settings, class_dags(cls))
            # the monotone path is not limited by max_quilt_states: never worse than before
            assert entry.sigma <= old.sigma + 1e-9
            if directed:
                assert entry.sigma == pytest.approx(old.sigma, rel=1e-9)


def test_progress_counts_every_node_and_finishes():
    fw = _tiny(False, 0)
    seen: list = []
    pp.MarkovQuiltMechanism(epsilon=1.0).calibrate(fw, pp.Count("infected"),
                                                   progress=lambda d, t: seen.append((d, t)))
    assert seen[-1][0] == seen[-1][1] and len(seen) >= len(fw.secret_nodes)
    assert all(a[0] <= b[0] and a[1] <= b[1] for a, b in itertools.pairwise(seen))
    with pytest.raises(pp.PufferfishError, match="progress"):
        pp.MarkovQuiltMechanism(epsilon=1.0).calibrate(fw, pp.Count("infected"), progress=3)


def test_work_per_node_is_bounded_by_max_region(monkeypatch):
    """A 3,000-person ring lattice: no region past max_region, no whole-model inference."""
    from pufferfish_pgm.quilts import _influence

    def forbid(*_, **__):
        raise AssertionError("a whole-model inference ran")

    monkeypatch.setattr(_influence, "conditional", forbid)
    sizes: list = []
    real = li.local_ratios

    def spy(*args, **kwargs):
        out = real(*args, **kwargs)
        sizes.append(out.size if isinstance(out, li.Ratios) else 0)
        return out

    monkeypatch.setattr(lp, "local_ratios", spy)
    g = nx.watts_strogatz_graph(3000, 4, 0.0, seed=1)
    fw = Framework(pp.ScenarioClass([pp.scenarios.contagion(g, base=0.05, spread=0.3,
                                                            directed=False)]))
    cal = pp.MarkovQuiltMechanism(epsilon=1.0, max_region=40).calibrate(fw, pp.Count("infected"))
    assert 0 < max(sizes) <= 40
    assert cal.scale < 3000 and cal.evidence.trivial_nodes == 0


def test_evidence_names_max_region():
    fw = _tiny(True, 1)
    cal = pp.MarkovQuiltMechanism(epsilon=1.0, max_region=1,
                                  full_plan=True).calibrate(fw, pp.Count("infected"))
    assert any(k.startswith("max_region") for k in cal.evidence.trivial_reasons)
    with pytest.raises(pp.PufferfishError, match="full_plan"):
        pp.MarkovQuiltMechanism(epsilon=1.0, full_plan="yes")


def test_entries_share_one_set_of_all_nodes():
    # each entry's remote set once held its own frozenset of every node: 5 GB at 10,000
    fw = _tiny(False, 2)
    plan = pp.MarkovQuiltMechanism(epsilon=1.0, full_plan=True).calibrate(
        fw, pp.Count("infected")).plan
    remotes = [e.remote for e in plan if not e.trivial]
    assert len(remotes) >= 2 and all(r.universe is remotes[0].universe for r in remotes)


def test_a_hub_with_many_branches_is_listed_as_cut():
    star = nx.star_graph(6)       # the hub 0 has 6 branches: spheres only
    fw = Framework(pp.ScenarioClass([pp.scenarios.contagion(star, base=0.2, spread=0.3,
                                                            directed=False)]))
    cal = pp.MarkovQuiltMechanism(epsilon=1.0, full_plan=True).calibrate(
        fw, pp.Count("infected"))
    assert cal.evidence.cut_candidates == (0,)
    assert lp.MAX_BRANCHES < 6
    assert realised_epsilon(fw, pp.Count("infected"), cal.scale) <= 1.0 + 1e-9


def test_evidence_counts_the_nodes_whose_influence_is_a_bound() -> None:
    # A chain of 12 as a network: node i's own region is its ancestors 0..i, so past
    # max_region = 6 the prior term is bounded over the quilt's region (Lemma 2): those
    # nodes' influences are upper bounds (measured: 4 nodes at ε = 4). With max_region = 500
    # every prior term is exact. Each node's σ is at least its σ with exact terms, and the
    # realised ε (brute force over 2^12 sequences) stays within ε.
    bn = pp.MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], [0.5, 0.5], 12).to_bayesian_network()
    fw = Framework(bn)
    tight = pp.MarkovQuiltMechanism(epsilon=4.0, max_region=6, full_plan=True)
    loose = pp.MarkovQuiltMechanism(epsilon=4.0, max_region=500, full_plan=True)
    small, large = tight.calibrate(fw, pp.Count(1)), loose.calibrate(fw, pp.Count(1))
    assert small.evidence.bounded_influences >= 1
    assert large.evidence.bounded_influences == 0
    exact = {e.node: e.sigma for e in large.plan}
    assert all(e.sigma >= exact[e.node] * (1 - 1e-12) for e in small.plan)
    assert realised_epsilon(fw, pp.Count(1), small.scale) <= 4.0 * (1 + 1e-9)
