"""Populations of independent components (issue 24): count laws, exact calibration and the
auditor component by component must equal the whole-network computation and brute force."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import realised_epsilon

import pufferfish_pgm as pp
from pufferfish_pgm.inference._components import network_parts
from pufferfish_pgm.inference._engine import network_index
from pufferfish_pgm.privacy_loss._pair_rows import build_groups
from pufferfish_pgm.queries import _laws
from pufferfish_pgm.queries._component_count_law import ComponentCountLaw
from pufferfish_pgm.queries._network_count_law import tables_log_joint
from pufferfish_pgm.scenarios._network_tables import validate_tables


def _component(rng: np.random.Generator, prefix: str, size: int,
               cpts: np.random.Generator) -> tuple[dict, dict, dict]:
    """A random small connected DAG (parents among the earlier nodes, at most 2), its CPTs
    drawn from ``cpts``."""
    states, parents, raw = {}, {}, {}
    names = [f"{prefix}.{i}" for i in range(size)]
    for i, v in enumerate(names):
        k = int(rng.integers(2, 4))
        states[v] = tuple(range(k))
        earlier = names[:i]
        chosen = tuple(p for p in earlier if rng.random() < 0.6)[:2]
        if earlier and not chosen:   # connected: every later node has a parent
            chosen = (earlier[int(rng.integers(len(earlier)))],)
        parents[v] = chosen
        shape = (k, *(len(states[p]) for p in chosen))
        table = cpts.dirichlet(np.ones(k), size=int(np.prod(shape[1:], dtype=int))).T
        raw[v] = table.reshape(shape)
    return states, parents, raw


def random_population(seed: int, kinds: int, counts: list[int],
                      cpt_seed: int | None = None) -> pp.BayesianNetworkScenario:
    """``kinds`` random component types repeated ``counts[j]`` times (plates); the CPTs
    come from ``cpt_seed`` (default ``seed``), the structure from ``seed``."""
    rng = np.random.default_rng(seed)
    cpts = np.random.default_rng(seed if cpt_seed is None else [seed, cpt_seed])
    states, parents, raw, nodes = {}, {}, {}, []
    for j in range(kinds):
        size = int(rng.integers(1, 4))
        proto = _component(rng, "p", size, cpts)
        for m in range(counts[j]):
            rename = {f"p.{i}": f"t{j}m{m}.{i}" for i in range(size)}
            for v in (f"p.{i}" for i in range(size)):
                nodes.append(rename[v])
                states[rename[v]] = proto[0][v]
                parents[rename[v]] = tuple(rename[p] for p in proto[1][v])
                raw[rename[v]] = proto[2][v]
    return pp.BayesianNetworkScenario(validate_tables(nodes, states, parents, raw),
                                      name=f"population {seed}")


def _weights(bn: pp.BayesianNetworkScenario, seed: int) -> dict:
    rng = np.random.default_rng(seed + 1)
    return {v: rng.integers(0, 3, size=len(bn.states_of(v))) for v in bn.nodes
            if rng.random() < 0.8}


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), kinds=st.integers(1, 3),
       counts=st.lists(st.integers(1, 3), min_size=3, max_size=3),
       evidence=st.integers(0, 2))
def test_component_law_equals_whole_network(seed: int, kinds: int, counts: list[int],
                                            evidence: int) -> None:
    """Convolving the components' laws (plates by powers) gives the whole network's law
    given evidence on 0-2 nodes (possibly in different components), to relative precision."""
    bn = random_population(seed, kinds, counts)
    weights = _weights(bn, seed)
    rng = np.random.default_rng(seed + 2)
    picked = rng.choice(len(bn.nodes), size=min(evidence, len(bn.nodes)), replace=False)
    codes = {bn.nodes[i]: int(rng.integers(len(bn.states_of(bn.nodes[i])))) for i in picked}
    whole = tables_log_joint(bn.tables, network_index(bn), weights, codes)
    parts = ComponentCountLaw(network_parts(bn.tables), weights).log_joint(codes)
    assert parts.shape == whole.shape
    assert np.array_equal(np.isfinite(parts), np.isfinite(whole))
    ok = np.isfinite(whole)
    assert np.allclose(parts[ok], whole[ok], rtol=0, atol=1e-9)


def test_plates_are_found() -> None:
    """Members of one component type are one plate; distinct types are distinct plates."""
    bn = random_population(7, 3, [4, 1, 2])
    parts = network_parts(bn.tables)
    assert parts.components == 7
    assert sorted(len(p.members) for p in parts.plates) == [1, 2, 4]


def households(n: int, p_parent: float, name: str) -> pp.BayesianNetworkScenario:
    """``n`` households: a parent and 1, 2 or 1 children (cycling), binary 'ill'."""
    nodes, states, parents, raw = [], {}, {}, {}
    for h in range(n):
        head = f"h{h}.parent"
        nodes.append(head)
        states[head], parents[head], raw[head] = ("no", "yes"), (), [1 - p_parent, p_parent]
        for c in range(1 + h % 2):
            v = f"h{h}.child{c}"
            nodes.append(v)
            states[v], parents[v] = ("no", "yes"), (head,)
            raw[v] = [[0.9, 0.3], [0.1, 0.7]]
    return pp.BayesianNetworkScenario(validate_tables(nodes, states, parents, raw), name=name)


def _whole_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the count-law engine treat every network as one piece (the code before issue 24)."""
    class _One:
        components = 1
    monkeypatch.setattr(_laws, "network_parts", lambda tables: _One())


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
@pytest.mark.parametrize("query", [pp.Count("yes"), pp.Histogram()])
def test_exact_calibration_equals_whole_network(query, monkeypatch) -> None:
    """4 households of 2-3 people, two scenarios: component-wise exact calibration and audit
    equal the whole-network ones, and the oracle (brute force over all 2^10 assignments)
    finds the calibrated scale exactly ε-private and a slightly smaller one not."""
    fw = pp.Framework(pp.ScenarioClass([households(4, 0.2, "low"), households(4, 0.5, "high")]))
    mech = pp.ExactLaplaceMechanism(epsilon=1.0)
    parts = mech.calibrate(fw, query)
    audit_parts = pp.audit(fw, query, 2.0)
    with monkeypatch.context() as m:
        _whole_network(m)
        fresh = pp.Framework(pp.ScenarioClass([households(4, 0.2, "low"),
                                               households(4, 0.5, "high")]))
        whole = mech.calibrate(fresh, query)
        audit_whole = pp.audit(fresh, query, 2.0)
    assert parts.scale == pytest.approx(whole.scale, rel=1e-9)
    assert audit_parts.epsilon == pytest.approx(audit_whole.epsilon, rel=1e-9)
    if isinstance(query, pp.Count):
        assert realised_epsilon(fw, query, parts.scale) <= 1.0 + 1e-9
        assert realised_epsilon(fw, query, parts.scale * (1 - 1e-4)) > 1.0
        assert audit_parts.epsilon == pytest.approx(realised_epsilon(fw, query, 2.0), rel=1e-9)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_population_of_thousands_is_calibrated() -> None:
    """2,500 people in 1,000 households: the laws of one person per plate position are
    computed, not one per person (a whole-network pass per secret took minutes)."""
    fw = pp.Framework(households(1000, 0.3, "town"))
    (group,), _ = build_groups(fw, [pp.Count("yes")], [[1]], [0])
    # one row per (plate, position, state): 2 plates (1 or 2 children) of 2 and 3 people
    assert group.rows.shape[0] == 2 * (2 + 3) and len(group.pairs) == 2500
    cal = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(fw, pp.Count("yes"))
    small = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(
        pp.Framework(households(2, 0.3, "two")), pp.Count("yes"))
    # more independent households add noise to the count, so the scale cannot grow
    assert 0 < cal.scale <= small.scale * (1 + 1e-9)
    assert cal.evidence.audit.epsilon <= 1.0 + 1e-9


def _plan_rows(plan) -> list:
    return [(e.node, e.quilt, e.nearby, sorted(map(str, e.remote)), round(e.sigma, 12),
             e.trivial) for e in plan.entries]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10**6), kinds=st.integers(1, 3),
       counts=st.lists(st.integers(1, 3), min_size=3, max_size=3),
       epsilon=st.sampled_from([0.3, 1.0, 3.0]))
def test_component_quilts_equal_whole_network(seed: int, kinds: int, counts: list[int],
                                              epsilon: float) -> None:
    """Planning each component alone (plates once) gives the whole network's plan: the same
    quilt, nearby and remote sets and σ for every secret node, two scenarios."""
    from pufferfish_pgm.quilts import _component_planner, plan_network

    one = random_population(seed, kinds, counts)
    other = random_population(seed, kinds, counts, cpt_seed=1)    # the same DAG, other CPTs
    fw = pp.Framework(pp.ScenarioClass([one, other]))
    query = pp.Count(1)
    parts = plan_network(fw, query, epsilon)
    real = _component_planner.class_components
    try:
        _component_planner.class_components = lambda cls: [tuple(cls.nodes)]
        whole = plan_network(fw, query, epsilon)
    finally:
        _component_planner.class_components = real
    assert _plan_rows(parts) == _plan_rows(whole)


def test_household_plan_is_local() -> None:
    """In 1,000 households, a person's quilt and nearby set stay in their household; the
    remote set is the rest of the town, not listed per entry."""
    fw = pp.Framework(households(1000, 0.3, "town"))
    cal = pp.MarkovQuiltMechanism(epsilon=1.0).calibrate(fw, pp.Count("yes"))
    entry = next(e for e in cal.plan if e.node == "h7.child0")
    assert set(entry.nearby) | set(entry.quilt) <= {"h7.parent", "h7.child0", "h7.child1"}
    assert len(entry.remote) == 2500 - len(entry.nearby) - len(entry.quilt)
    assert "h8.parent" in entry.remote and "h7.child0" not in entry.remote
    # σ_max is at most a household's 3 people over ε (their empty quilt), never 2,500 / ε
    assert cal.scale <= 3.0


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_household_survey_example() -> None:
    """The example: entry DP leaks more than its ε, exact and MQM keep it, group DP adds the
    whole population's range."""
    import importlib.util

    path = ROOT / "examples" / "household_survey.py"
    spec = importlib.util.spec_from_file_location("household_survey", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    results = module.main(epsilon=1.0, households=60)
    assert results["EntryDP"][1] > 1.0
    assert results["ExactLaplace"][1] <= 1.0 + 1e-9 and results["MarkovQuilt"][1] <= 1.0
    assert results["ExactLaplace"][0] <= results["MarkovQuilt"][0] <= 4.0
    assert results["GroupDP"][0] == 180.0     # 20 households each of 2, 3, 4 people: 180 / ε


# --- undirected populations: factor-graph components and their plates -------------------


def undirected_households(shapes: list, base: float, spread: float,
                          name: str) -> pp.MarkovNetworkScenario:
    """Ising-type households (``contagion(directed=False)``): one component per graph of
    ``shapes`` (networkx graphs), in that order; equal graphs are plates."""
    import networkx as nx

    town = nx.disjoint_union_all(shapes)
    return pp.scenarios.contagion(town, base=base, spread=spread, directed=False, name=name)


def _shapes(counts: list[int]) -> list:
    """Three household types of 4 people (a path, a star, a cycle), ``counts`` of each."""
    import networkx as nx

    kinds = [nx.path_graph(4), nx.star_graph(3), nx.cycle_graph(4)]
    return [g for g, n in zip(kinds, counts, strict=True) for _ in range(n)]


def random_markov_population(seed: int, kinds: int, counts: list[int]
                             ) -> pp.MarkovNetworkScenario:
    """``kinds`` random connected factor models of 1-3 nodes (2-3 states, pairwise and unary
    tables with some zeros), each repeated ``counts[j]`` times."""
    rng = np.random.default_rng(seed)
    states, factors = {}, []
    for j in range(kinds):
        size = int(rng.integers(1, 4))
        ks = [int(rng.integers(2, 4)) for _ in range(size)]
        proto = [((i,), rng.random(ks[i]) + 0.1) for i in range(size)]
        for i in range(1, size):   # a tree: connected
            p = int(rng.integers(i))
            table = rng.random((ks[p], ks[i])) * (rng.random((ks[p], ks[i])) > 0.2) + 1e-3
            proto.append(((p, i), table))
        for m in range(counts[j]):
            names = [f"t{j}m{m}.{i}" for i in range(size)]
            states.update({names[i]: tuple(range(ks[i])) for i in range(size)})
            factors += [(tuple(names[i] for i in scope), t) for scope, t in proto]
    return pp.MarkovNetworkScenario.from_factors(factors, states, name=f"markov {seed}")


def test_undirected_plates_are_found() -> None:
    """Nine Ising households of three shapes: three plates of three; a random factor
    population: one plate per kind (the same tables up to renaming)."""
    parts = network_parts(undirected_households(_shapes([3, 3, 3]), 0.1, 0.4, "t").tables)
    assert parts.components == 9 and [len(p.members) for p in parts.plates] == [3, 3, 3]
    mn = random_markov_population(5, 3, [4, 1, 2])
    assert sorted(len(p.members) for p in network_parts(mn.tables).plates) == [1, 2, 4]


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10**6), kinds=st.integers(1, 3),
       counts=st.lists(st.integers(1, 3), min_size=3, max_size=3),
       evidence=st.integers(0, 2))
def test_undirected_component_law_equals_whole_network(seed: int, kinds: int,
                                                       counts: list[int],
                                                       evidence: int) -> None:
    """Markov networks: the components' normalised laws convolved (plates by powers) give
    the whole network's law given evidence on 0-2 nodes, to 1e-9 in log space."""
    from pufferfish_pgm.queries._network_count_law import factor_log_joint

    mn = random_markov_population(seed, kinds, counts)
    rng = np.random.default_rng(seed + 1)
    weights = {v: rng.integers(0, 3, size=len(mn.states_of(v))) for v in mn.nodes
               if rng.random() < 0.8}
    picked = rng.choice(len(mn.nodes), size=min(evidence, len(mn.nodes)), replace=False)
    codes = {mn.nodes[i]: int(rng.integers(len(mn.states_of(mn.nodes[i])))) for i in picked}
    whole = factor_log_joint(mn.tables, network_index(mn), weights, codes)
    parts = ComponentCountLaw(network_parts(mn.tables), weights).log_joint(codes)
    assert parts.shape == whole.shape
    assert np.array_equal(np.isfinite(parts), np.isfinite(whole))
    ok = np.isfinite(whole)
    assert np.allclose(parts[ok], whole[ok], rtol=0, atol=1e-9)


def _undirected_framework() -> pp.Framework:
    """Three Ising households (4 + 4 + 2 people; 2^10 joint states), two scenarios."""
    import networkx as nx

    shapes = [nx.path_graph(4), nx.path_graph(4), nx.path_graph(2)]
    return pp.Framework(pp.ScenarioClass([
        undirected_households(shapes, 0.2, 0.3, "low"),
        undirected_households(shapes, 0.3, 0.6, "high")]))


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
@pytest.mark.parametrize("query", [pp.Count("infected"), pp.Histogram()])
def test_undirected_exact_calibration_equals_whole_network(query, monkeypatch) -> None:
    """Component-wise exact calibration and audit of undirected households equal the
    whole-network ones; brute force (all 2^10 assignments) finds the Count's scale exactly
    ε-private and a slightly smaller one not."""
    fw = _undirected_framework()
    mech = pp.ExactLaplaceMechanism(epsilon=1.0)
    parts = mech.calibrate(fw, query)
    audit_parts = pp.audit(fw, query, 2.0)
    with monkeypatch.context() as m:
        _whole_network(m)
        fresh = _undirected_framework()
        whole = mech.calibrate(fresh, query)
        audit_whole = pp.audit(fresh, query, 2.0)
    assert parts.scale == pytest.approx(whole.scale, rel=1e-9)
    assert audit_parts.epsilon == pytest.approx(audit_whole.epsilon, rel=1e-9)
    if isinstance(query, pp.Count):
        assert realised_epsilon(fw, query, parts.scale) <= 1.0 + 1e-9
        assert realised_epsilon(fw, query, parts.scale * (1 - 1e-4)) > 1.0
        assert audit_parts.epsilon == pytest.approx(realised_epsilon(fw, query, 2.0), rel=1e-9)


def test_undirected_households_use_their_plates() -> None:
    """2,500 Ising households of 4 (three shapes): one law row per (plate, position, state),
    not one per person, and the scale of the population is at most one household's."""
    fw = pp.Framework(undirected_households(_shapes([834, 833, 833]), 0.1, 0.4, "town"))
    (group,), _ = build_groups(fw, [pp.Count("infected")], [[1]], [0])
    assert group.rows.shape[0] == 3 * 4 * 2 and len(group.pairs) == 10_000
    cal = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(fw, pp.Count("infected"))
    one = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(
        pp.Framework(undirected_households(_shapes([1, 1, 1]), 0.1, 0.4, "three")),
        pp.Count("infected"))
    assert 0 < cal.scale <= one.scale * (1 + 1e-9)
    assert cal.evidence.audit.epsilon <= 1.0 + 1e-9
