"""Scenarios: loading and validating networks, Markov chains, scenario classes."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import numpy as np
import pytest
from helpers import BUNDLED_MODELS, MODELS_DIR, has_model, load_network, model_path
from hypothesis import given, settings
from hypothesis import strategies as st

import pufferfish_pgm as pp
from pufferfish_pgm.errors import (
    InvalidModelError,
    ParameterTypeError,
    ScenarioClassError,
    UnknownNodeError,
    UnknownStateError,
)
from pufferfish_pgm.queries import query_distribution
from pufferfish_pgm.queries._engine import log_joint_engine
from pufferfish_pgm.queries._packed_weights import pack_queries
from pufferfish_pgm.scenarios import as_class
from pufferfish_pgm.scenarios._chain_validation import stationary_distribution
from pufferfish_pgm.scenarios._scenarios import default_model_path

# nodes and edges of the real networks (models-real/README.md)
SIZES = {"asia": (8, 8), "sachs": (11, 17), "child": (20, 25), "insurance": (27, 52),
         "alarm": (37, 46), "hepar2": (70, 123), "win95pts": (76, 112), "andes": (223, 338)}


# ----------------------------------------------------------------------------- networks

@pytest.mark.parametrize("name", sorted(SIZES))
def test_real_networks_load_with_their_sizes(name: str) -> None:
    if not has_model(name):
        pytest.skip(f"{name}.bif not in {MODELS_DIR}")
    bn = load_network(name)
    assert (len(bn.nodes), len(bn.edges())) == SIZES[name]
    assert bn.name == name
    position = {v: i for i, v in enumerate(bn.nodes)}
    assert all(position[p] < position[v] for p, v in bn.edges())  # topological order
    for v in bn.nodes:
        cpt = bn.cpt(v)
        assert cpt.shape == (len(bn.states_of(v)), *(len(bn.states_of(p)) for p in
                                                     bn.parents_of(v)))
        np.testing.assert_allclose(cpt.sum(axis=0), 1.0, atol=1e-12)
        assert (cpt >= 0).all()


# CPT columns of these published files are off by up to 1e-7 (rounding in the tables): they
# load with the default renormalize=1e-6 and list what was rescaled
OFF_BY_ROUNDING = {"alarm": 6, "sachs": 29, "hepar2": 62}  # columns off by more than 1e-9


@pytest.mark.parametrize("folder", [MODELS_DIR, BUNDLED_MODELS], ids=["shared", "bundled"])
@pytest.mark.parametrize("name", sorted(OFF_BY_ROUNDING))
def test_files_off_by_1e7_load_by_default(name: str, folder: Path) -> None:
    path = folder / f"{name}.bif"
    if not path.is_file():
        pytest.skip(f"{name}.bif not in {folder}")
    bn = pp.BayesianNetworkScenario.from_file(path)
    assert len(bn.renormalized) == OFF_BY_ROUNDING[name]
    for record in bn.renormalized:
        node, parent_states, total = record  # a plain tuple too
        assert len(parent_states) == len(bn.parents_of(node))
        assert all(s in bn.states_of(p) for p, s in zip(bn.parents_of(node), parent_states,
                                                         strict=True))
        assert 1e-9 < abs(total - 1.0) <= 1e-6 and record.deviation == abs(total - 1.0)
        index = tuple(bn.states_of(p).index(s) for p, s in zip(bn.parents_of(node),
                                                                  parent_states, strict=True))
        assert bn.cpt(node)[(slice(None), *index)].sum() == pytest.approx(1.0, abs=1e-15)
    assert pp.load_scenarios(path)[0].renormalized == bn.renormalized
    # strict loading still refuses them, naming every column and the value that accepts them
    with pytest.raises(InvalidModelError) as info:
        pp.BayesianNetworkScenario.from_file(path, renormalize=0)
    text = str(info.value)
    assert text.startswith(f"{name}.bif: {OFF_BY_ROUNDING[name]} CPD columns do not sum to 1")
    assert all(repr(r.node) in text for r in bn.renormalized)
    suggested = float(re.search(r"pass renormalize=(\S+) ", text).group(1))
    assert max(r.deviation for r in bn.renormalized) <= suggested < 2e-7
    assert pp.BayesianNetworkScenario.from_file(path, renormalize=suggested).renormalized == (
        bn.renormalized)


def test_exact_files_renormalize_nothing() -> None:
    assert load_network("asia").renormalized == ()


def test_bundled_models_match_the_shared_ones() -> None:
    bundled = Path(default_model_path("asia.bif")).read_bytes()
    assert bundled == model_path("asia").read_bytes()


def test_asia_states_and_parents(asia) -> None:
    assert asia.states_of("either") == ("yes", "no")
    assert set(asia.parents_of("either")) == {"lung", "tub"}
    assert asia.parents_of("asia") == ()
    assert asia.state_index("smoke", "no") == 1
    # P(lung | smoke): the CPT's columns in the order of the parents' states
    np.testing.assert_allclose(asia.cpt("lung"), [[0.1, 0.01], [0.9, 0.99]])


def test_cpt_is_a_copy(asia) -> None:
    table = asia.cpt("lung")
    table[:] = 0.0
    assert asia.cpt("lung")[0, 0] == 0.1


def test_network_is_copied_from_the_pgmpy_model() -> None:
    from pgmpy.factors.discrete import TabularCPD
    from pgmpy.models import DiscreteBayesianNetwork

    model = DiscreteBayesianNetwork([("A", "B")])
    model.add_cpds(TabularCPD("A", 2, [[0.4], [0.6]]),
                   TabularCPD("B", 2, [[0.9, 0.2], [0.1, 0.8]], evidence=["A"],
                              evidence_card=[2]))
    bn = pp.BayesianNetworkScenario(model, name="ab")
    model.get_cpds("A").values[:] = [0.5, 0.5]
    assert bn.cpt("A").tolist() == [0.4, 0.6]
    assert bn.name == "ab" and bn.nodes == ("A", "B") and bn.edges() == [("A", "B")]


def test_to_pgmpy_round_trip(asia) -> None:
    model = asia.to_pgmpy()
    assert model.check_model()
    again = pp.BayesianNetworkScenario(model)
    assert again.nodes == asia.nodes
    for v in asia.nodes:
        assert again.parents_of(v) == asia.parents_of(v)
        assert again.states_of(v) == asia.states_of(v)
        np.testing.assert_array_equal(again.cpt(v), asia.cpt(v))
    assert asia.to_pgmpy() is not model  # a fresh model every time


def test_xmlbif_files_are_read(tmp_path: Path, asia) -> None:
    from pgmpy.readwrite import XMLBIFWriter

    path = tmp_path / "asia.xml"
    XMLBIFWriter(asia.to_pgmpy()).write(str(path))
    again = pp.BayesianNetworkScenario.from_file(path)
    assert again.name == "asia" and set(again.nodes) == set(asia.nodes)
    for v in asia.nodes:
        np.testing.assert_allclose(again.cpt(v), asia.cpt(v), atol=1e-12)


def test_parent_state_names_must_agree() -> None:
    from pgmpy.factors.discrete import TabularCPD
    from pgmpy.models import DiscreteBayesianNetwork

    model = DiscreteBayesianNetwork([("A", "B")])
    model.add_cpds(TabularCPD("A", 2, [[0.4], [0.6]], state_names={"A": ["x", "y"]}),
                   TabularCPD("B", 2, [[0.9, 0.2], [0.1, 0.8]], evidence=["A"],
                              evidence_card=[2], state_names={"B": [0, 1], "A": ["y", "x"]}))
    with pytest.raises(InvalidModelError, match="parent 'A'"):
        pp.BayesianNetworkScenario(model)


def test_node_without_cpd_is_rejected() -> None:
    from pgmpy.factors.discrete import TabularCPD
    from pgmpy.models import DiscreteBayesianNetwork

    model = DiscreteBayesianNetwork([("A", "B")])
    model.add_cpds(TabularCPD("A", 2, [[0.4], [0.6]]))
    with pytest.raises(InvalidModelError, match="node 'B' has no CPD"):
        pp.BayesianNetworkScenario(model)


def test_unknown_node_and_state_name_the_culprit(asia) -> None:
    with pytest.raises(UnknownNodeError, match="unknown node 'lungs' in scenario 'asia'"):
        asia.states_of("lungs")
    with pytest.raises(UnknownStateError, match=r"no state 'maybe'; its states are \['yes'"):
        asia.state_index("lung", "maybe")


# ----------------------------------------------------------------------------- chains

def test_chain_defaults_and_names() -> None:
    mc = pp.MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 5)
    # a range: a year of minutes costs no memory per step (T = 10^9 builds no tuple)
    assert mc.nodes == range(5) and tuple(mc.nodes) == (0, 1, 2, 3, 4)
    assert mc.k == 2 and mc.states == (0, 1)
    # stationary of [[0.9, 0.1], [0.2, 0.8]]: pi_0 * 0.1 = pi_1 * 0.2 -> (2/3, 1/3)
    np.testing.assert_allclose(mc.initial, [2 / 3, 1 / 3], atol=1e-12)
    assert not mc.initial_is_any
    named = pp.MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], [1, 0], 2, states=["rest", "walk"])
    assert named.states_of(1) == ("rest", "walk") and named.state_index(0, "walk") == 1


def test_chain_is_immutable() -> None:
    mc = pp.MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], [0.5, 0.5], 3)
    with pytest.raises(ValueError):
        mc.transition[0, 0] = 0.0
    with pytest.raises(ValueError):
        mc.initial[0] = 0.0


def test_chain_rows_are_renormalised_exactly() -> None:
    mc = pp.MarkovChainScenario([[0.3 + 1e-10, 0.7], [0.5, 0.5]], [1.0, 0.0], 2)
    assert abs(mc.transition.sum(axis=1) - 1.0).max() < 1e-15


def test_chain_marginals_by_hand() -> None:
    # q_1 = q_0 P = [1, 0] P = [0.9, 0.1]; q_2 = [0.9, 0.1] P = [0.86, 0.14]
    mc = pp.MarkovChainScenario([[0.9, 0.1], [0.5, 0.5]], [1.0, 0.0], 4)
    np.testing.assert_allclose(mc.marginal(1), [0.9, 0.1])
    np.testing.assert_allclose(mc.marginal(2), [0.86, 0.14])
    np.testing.assert_allclose(mc.power(2), [[0.86, 0.14], [0.7, 0.3]])
    with pytest.raises(UnknownNodeError, match="0..3"):
        mc.marginal(4)


def test_chain_node_checks() -> None:
    mc = pp.MarkovChainScenario([[0.9, 0.1], [0.5, 0.5]], [1.0, 0.0], 4)
    assert mc.check_node(np.int64(2)) == 2
    for bad in (-1, 4, 1.0, "1", True, None):
        with pytest.raises(UnknownNodeError):
            mc.check_node(bad)


def test_initial_any() -> None:
    mc = pp.MarkovChainScenario([[0.9, 0.1], [0.5, 0.5]], "any", 3)
    assert mc.initial_is_any and mc.initial == "any"
    with pytest.raises(InvalidModelError, match="initial='any'"):
        mc.marginal(1)
    with pytest.raises(InvalidModelError, match="initial='any'"):
        mc.to_bayesian_network()


def test_stationary_distribution_of_a_periodic_chain() -> None:
    # irreducible but periodic: still a unique stationary distribution
    np.testing.assert_allclose(stationary_distribution(np.array([[0.0, 1.0], [1.0, 0.0]])),
                               [0.5, 0.5], atol=1e-12)


def test_with_length_keeps_everything_else() -> None:
    mc = pp.MarkovChainScenario([[0.9, 0.1], [0.5, 0.5]], [0.3, 0.7], 3, ["a", "b"], name="m")
    longer = mc.with_length(10)
    assert longer.length == 10 and longer.name == "m" and longer.states == ("a", "b")
    np.testing.assert_array_equal(longer.transition, mc.transition)
    np.testing.assert_array_equal(longer.initial, mc.initial)
    assert mc.with_length(2).nodes == range(2)


def test_dataclasses_replace_gives_a_working_chain_with_caches_of_its_own() -> None:
    mc = pp.MarkovChainScenario([[0.9, 0.1], [0.5, 0.5]], [1.0, 0.0], 3, ["a", "b"], name="m")
    count = pp.Count("b")
    packed = pack_queries(mc, [count])
    engine = log_joint_engine(mc, packed)
    assert log_joint_engine(mc, packed) is engine      # reused across calls on one scenario
    before = query_distribution(mc, count)
    mc.power(2)
    longer = dataclasses.replace(mc, length=6)
    assert longer.length == 6 and longer.nodes == range(6) and longer.name == "m"
    assert longer.states == ("a", "b") and longer._powers == {}
    np.testing.assert_array_equal(longer.initial, mc.initial)
    want = query_distribution(mc.with_length(6), count)
    got = query_distribution(longer, count)
    np.testing.assert_array_equal(got.support, want.support)
    np.testing.assert_allclose(got.probs, want.probs, rtol=1e-12)
    assert log_joint_engine(longer, pack_queries(longer, [count])) is not engine
    renamed = dataclasses.replace(mc, name="other")   # same numbers, engines of its own
    assert renamed.name == "other" and log_joint_engine(renamed, packed) is not engine
    after = query_distribution(mc, count)             # the original is untouched
    np.testing.assert_array_equal(after.support, before.support)
    np.testing.assert_array_equal(after.probs, before.probs)
    with pytest.raises(InvalidModelError):            # replace validates like the constructor
        dataclasses.replace(mc, transition=[[2.0, 0.0], [0.0, 1.0]])


def test_dataclasses_replace_on_a_network_and_a_class(asia) -> None:
    renamed = dataclasses.replace(asia, name="asia 2")
    assert renamed.name == "asia 2" and renamed.tables is asia.tables
    assert renamed.states_of("lung") == ("yes", "no")
    with pytest.raises(UnknownNodeError):
        renamed.check_node("nowhere")
    cls = pp.ScenarioClass([asia])
    assert dataclasses.replace(cls, members=(renamed,))[0] is renamed
    with pytest.raises(ParameterTypeError, match="got neither"):
        pp.BayesianNetworkScenario()
    with pytest.raises(ParameterTypeError, match="got both"):
        pp.BayesianNetworkScenario(asia.to_pgmpy(), tables=asia.tables)


def test_unrolled_chain_is_a_network() -> None:
    mc = pp.MarkovChainScenario([[0.9, 0.1], [0.5, 0.5]], [0.3, 0.7], 4, ["a", "b"], name="m")
    bn = mc.to_bayesian_network()
    assert bn.nodes == (0, 1, 2, 3) and bn.edges() == [(0, 1), (1, 2), (2, 3)]
    assert bn.states_of(2) == ("a", "b") and bn.name == "m (unrolled)"
    np.testing.assert_array_equal(bn.cpt(0), [0.3, 0.7])
    np.testing.assert_array_equal(bn.cpt(3), mc.transition.T)  # axes (child, parent)
    assert bn.to_pgmpy().check_model()


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 4), st.integers(1, 8), st.data())
def test_marginals_sum_to_one(k: int, length: int, data: st.DataObject) -> None:
    from helpers import distributions

    transition = np.array([data.draw(distributions(k)) for _ in range(k)])
    initial = data.draw(distributions(k))
    mc = pp.MarkovChainScenario(transition, initial, length)
    for t in mc.nodes:
        q = mc.marginal(t)
        assert q.sum() == pytest.approx(1.0) and (q >= 0).all()
        np.testing.assert_allclose(q, initial @ np.linalg.matrix_power(transition, t),
                                   atol=1e-12)


# ----------------------------------------------------------------------------- classes

def test_single_scenario_is_a_class() -> None:
    mc = pp.MarkovChainScenario([[0.9, 0.1], [0.5, 0.5]], "stationary", 3)
    cls = pp.ScenarioClass(mc)
    assert len(cls) == 1 and cls[0] is mc and list(cls) == [mc]
    assert as_class(mc).members == (mc,)
    assert as_class(cls) is cls
    assert pp.ScenarioClass(cls).members == cls.members
    assert cls.kind == "chain" and cls.nodes == range(3)


def test_class_kind_and_shared_domain(asia) -> None:
    cls = pp.ScenarioClass([asia, asia])
    assert cls.kind == "network" and cls.nodes == asia.nodes
    assert cls.states_of("lung") == ("yes", "no") and cls.state_index("lung", "no") == 1


def test_chain_class_with_different_dynamics() -> None:
    a = pp.MarkovChainScenario([[0.9, 0.1], [0.1, 0.9]], "stationary", 5, name="sticky")
    b = pp.MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "any", 5, name="iid")
    cls = pp.ScenarioClass([a, b])
    assert [m.name for m in cls] == ["sticky", "iid"]


def test_class_rejects_a_generator_of_nothing() -> None:
    with pytest.raises(ScenarioClassError):
        pp.ScenarioClass(m for m in [])


def test_class_rejects_non_scenarios() -> None:
    with pytest.raises(ParameterTypeError, match="got int"):
        pp.ScenarioClass([1, 2])


def test_bundled_models_load_by_name_from_any_directory(tmp_path, monkeypatch) -> None:
    # new-user item 10: the README used checkout-relative paths such as models/alarm.bif
    monkeypatch.chdir(tmp_path)
    assert len(pp.load_scenarios("asia.bif").nodes) == 8
    (tmp_path / "asia.bif").write_text("not a network")   # a file here wins over the bundle
    with pytest.raises(pp.ModelFileError):
        pp.load_scenarios("asia.bif")
    with pytest.raises(pp.errors.ModelFileNotFoundError, match="nosuch.bif"):
        pp.load_scenarios("nosuch.bif")
