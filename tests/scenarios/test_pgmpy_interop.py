"""pgmpy interoperability: every network file format pgmpy reads, the pgmpy-style
``ExactInference`` against pgmpy's own ``VariableElimination``, and dynamic networks unrolled
over time slices (issue 14, item 2). Public API only."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from helpers import has_model, load_network, model_path

import pufferfish_pgm as pp
from pufferfish_pgm.errors import (
    ImpossibleSecretError,
    InvalidModelError,
    InvalidParameterError,
    ModelFileError,
    ParameterTypeError,
    UnknownNodeError,
)

TOL = 1e-9
BUNDLED = ["asia", "alarm", "child"]
SHARED_ONLY = ["hepar2", "win95pts", "andes"]

# pgmpy divides 0 by 0 on zero-probability evidence (its answer is then NaN, which we skip)
pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")


# ----------------------------------------------------------------------------- helpers

def write_with_pgmpy(bn: pp.BayesianNetworkScenario, fmt: str, path: Path) -> Path:
    """Write ``bn`` with pgmpy's own writer for ``fmt``."""
    from pgmpy import readwrite

    writer = {"bif": readwrite.BIFWriter, "xml": readwrite.XMLBIFWriter,
              "net": readwrite.NETWriter, "uai": readwrite.UAIWriter,
              "xdsl": readwrite.XDSLWriter, "xbn": readwrite.XBNWriter}[fmt]
    writer(bn.to_pgmpy()).write(str(path))
    return path


def uai_names(bn: pp.BayesianNetworkScenario) -> dict:
    """Node -> ``var_i`` as pgmpy's UAIWriter numbers them (by cardinality, then name)."""
    order = sorted(bn.nodes, key=lambda v: (str(len(bn.states_of(v))), v))
    return {v: f"var_{i}" for i, v in enumerate(order)}


def aligned_cpt(bn: pp.BayesianNetworkScenario, node, parents: tuple, rename: dict) -> np.ndarray:
    """The CPT of ``node`` in ``bn`` with its axes put in the order of ``parents`` (names of
    the other network, mapped back through ``rename``)."""
    back = {rename[v]: v for v in bn.nodes}
    axes = (node, *bn.parents_of(node))
    return np.transpose(bn.cpt(node), [axes.index(back[p]) for p in (rename[node], *parents)])


def assert_same_network(original: pp.BayesianNetworkScenario, read: pp.BayesianNetworkScenario,
                        rename: dict | None = None, named_states: bool = True,
                        atol: float = 1e-12) -> None:
    """Same nodes, parents, states (by name or by position) and CPTs to ``atol``."""
    rename = rename or {v: v for v in original.nodes}
    assert sorted(map(str, read.nodes)) == sorted(map(str, rename.values()))
    for v in original.nodes:
        w = rename[v]
        states = read.states_of(w)
        assert states == (original.states_of(v) if named_states
                          else tuple(range(len(original.states_of(v)))))
        assert {rename[p] for p in original.parents_of(v)} == set(read.parents_of(w))
        np.testing.assert_allclose(read.cpt(w), aligned_cpt(original, v, read.parents_of(w),
                                                            rename), rtol=0, atol=atol)


def assert_same_conditionals(original, read, rename: dict, named_states: bool,
                             atol: float = TOL, seed: int = 0, count: int = 10) -> None:
    """conditional() agrees on random queries (states mapped by position if unnamed)."""
    rng = np.random.default_rng(seed)
    nodes = list(original.nodes)
    checked = 0
    while checked < count:
        picked = [nodes[i] for i in rng.choice(len(nodes), 3, replace=False)]
        target, evidence = picked[:2], {}
        states = original.states_of(picked[2])
        index = int(rng.integers(len(states)))
        evidence[picked[2]] = states[index]
        try:
            want = pp.conditional(original, target, evidence)
        except ImpossibleSecretError:
            continue
        theirs = {rename[picked[2]]: states[index] if named_states else index}
        got = pp.conditional(read, [rename[t] for t in target], theirs)
        np.testing.assert_allclose(got, want, rtol=0, atol=atol)
        checked += 1


def round_trip(tmp_path: Path, name: str, fmt: str) -> None:
    original = load_network(name)
    path = write_with_pgmpy(original, fmt, tmp_path / f"{name}.{fmt}")
    read = pp.BayesianNetworkScenario.from_file(path)
    named = fmt != "uai"  # UAI files name neither variables nor states
    rename = uai_names(original) if fmt == "uai" else {v: v for v in original.nodes}
    assert read.name == name
    # pgmpy's NETWriter rounds probabilities to 8 decimals; the other writers keep them all
    cpt_tol, conditional_tol = (1e-8, 1e-5) if fmt == "net" else (1e-12, TOL)
    assert_same_network(original, read, rename, named, atol=cpt_tol)
    assert_same_conditionals(original, read, rename, named, atol=conditional_tol)


# ----------------------------------------------------------------------------- file formats

# pgmpy's XMLBIFWriter writes child's states '<7.5', '>=7.5' both as '_7_5': that file is
# refused (test_xmlbif_with_mangled_states_is_refused)
@pytest.mark.parametrize(("name", "fmt"), [
    (name, fmt) for name in BUNDLED for fmt in ["bif", "xml", "net", "uai", "xdsl", "xbn"]
    if (name, fmt) != ("child", "xml")])
def test_every_format_round_trips_through_pgmpys_writer(tmp_path, name, fmt) -> None:
    round_trip(tmp_path, name, fmt)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["net", "uai", "xdsl"])
@pytest.mark.parametrize("name", SHARED_ONLY)
def test_large_networks_round_trip(tmp_path, name, fmt) -> None:
    if not has_model(name):
        pytest.skip(f"{name}.bif is not in ../shared/models-real")
    round_trip(tmp_path, name, fmt)


def test_xmlbif_with_mangled_states_is_refused(tmp_path) -> None:
    path = write_with_pgmpy(load_network("child"), "xml", tmp_path / "child.xml")
    with pytest.raises(ModelFileError, match=r"child\.xml.*not a valid XMLBIF.*Repeated state"):
        pp.BayesianNetworkScenario.from_file(path)


def test_uai_multi_parent_tables_keep_their_axes(tmp_path) -> None:
    # pgmpy's own UAIReader orders parents by set iteration: on alarm, several CPTs with two
    # or more parents come back with permuted axes. Ours reads the scope in the file.
    alarm = load_network("alarm")
    assert max(len(alarm.parents_of(v)) for v in alarm.nodes) >= 3
    read = pp.BayesianNetworkScenario.from_file(write_with_pgmpy(alarm, "uai",
                                                                 tmp_path / "a.uai"))
    assert_same_network(alarm, read, uai_names(alarm), named_states=False)


STANDARD_UAI = """BAYES
3
2 2 3
3
1 0
2 0 1
2 1 2

2
 0.436 0.564

4
 0.128 0.872
 0.920 0.080

6
 0.210 0.333 0.457
 0.811 0.000 0.189
"""


def test_standard_uai_file_golden_values(tmp_path) -> None:
    # The example of the UAI format description: var_0 -> var_1 -> var_2, each table row
    # is one parent state with the child fastest.
    path = tmp_path / "example.uai"
    path.write_text(STANDARD_UAI)
    bn = pp.BayesianNetworkScenario.from_file(path)
    assert bn.nodes == ("var_0", "var_1", "var_2")
    assert bn.states_of("var_2") == (0, 1, 2)
    assert bn.cpt("var_1").tolist() == [[0.128, 0.920], [0.872, 0.080]]
    # P(var_1 = 0) = 0.436 * 0.128 + 0.564 * 0.920 = 0.574688
    assert pp.conditional(bn, ["var_1"])[0] == pytest.approx(0.574688, abs=1e-15)
    # P(var_2 = 1 | var_0 = 1) = 0.920 * 0.333 + 0.080 * 0.000 = 0.30636
    assert pp.conditional(bn, ["var_2"], {"var_0": 1})[1] == pytest.approx(0.30636, abs=1e-15)


def test_uai_scientific_notation_and_comments(tmp_path) -> None:
    path = tmp_path / "tiny.uai"
    path.write_text("# written by hand\nBAYES\n1\n2\n1\n1 0\n2\n1e-05 9.9999e-01\n")
    assert pp.BayesianNetworkScenario.from_file(path).cpt("var_0").tolist() == [1e-05, 0.99999]


@pytest.mark.parametrize(("text", "match"), [
    ("MARKOV\n1\n2\n1\n1 0\n2\n1 1\n", "MARKOV file is an undirected model"),
    ("BAYES\n2\n2 2\n2\n1 0\n2 0 1\n2\n0.5 0.5\n4\n0.9 0.1", "truncated"),
    ("BAYES\n1\n2\n1\n1 0\n3\n0.5 0.5 0.0\n", "has 3 values, but its scope"),
    ("BAYES\n2\n2 2\n1\n1 0\n2\n0.5 0.5\n", "'var_1' is not the child"),
    ("BAYES\n1\n2\n1\n1 5\n2\n0.5 0.5\n", "outside 0..0"),
    ("BAYES\n1\n2\n1\n1 0\n2\n0.5 half\n", "must be floats"),
    ("BAYES\n1\n0\n1\n1 0\n0\n", "at least one state"),
    ("BAYES\n-1\n", "negative"),
    ("BAYES\n1\n2\n1\n1 0\n2\n0.5 0.5 0.1\n", "1 unexpected values"),
])
def test_bad_uai_files(tmp_path, text, match) -> None:
    path = tmp_path / "bad.uai"
    path.write_text(text)
    with pytest.raises(ModelFileError, match=match) as info:
        pp.BayesianNetworkScenario.from_file(path)
    assert "bad.uai" in str(info.value)


def test_uai_column_not_summing_to_one_names_file_and_node(tmp_path) -> None:
    path = tmp_path / "off.uai"
    path.write_text("BAYES\n1\n2\n1\n1 0\n2\n0.5 0.6\n")
    with pytest.raises(InvalidModelError, match=r"(?s)off\.uai: .*node 'var_0' \(no parents\) "
                                                r"sums to 1\.1"):
        pp.BayesianNetworkScenario.from_file(path)


def test_net_file_validation_names_file_node_and_parent_states(tmp_path) -> None:
    model = load_network("asia").to_pgmpy()
    model.get_cpds("tub").values[0, 1] = 0.5  # P(tub | asia = no) now sums to 1.49
    from pgmpy.readwrite import NETWriter

    NETWriter(model).write(str(tmp_path / "asia.net"))
    with pytest.raises(InvalidModelError, match=r"(?s)asia\.net: .*node 'tub' for parent states "
                                                r"\('no',\) sums to 1\.49"):
        pp.BayesianNetworkScenario.from_file(tmp_path / "asia.net")


def test_format_is_recognised_by_content_when_the_suffix_says_nothing(tmp_path) -> None:
    asia = load_network("asia")
    for fmt in ["bif", "net", "uai", "xdsl", "xbn", "xml"]:
        written = write_with_pgmpy(asia, fmt, tmp_path / f"asia.{fmt}")
        plain = shutil.copy(written, tmp_path / f"asia_{fmt}.model")
        assert len(pp.BayesianNetworkScenario.from_file(plain).nodes) == 8
    # an .xml suffix is looked into too: XDSL and XBN are XML
    xdsl_as_xml = shutil.copy(tmp_path / "asia.xdsl", tmp_path / "asia_xdsl.xml")
    assert_same_network(asia, pp.BayesianNetworkScenario.from_file(xdsl_as_xml))


def test_unknown_format_lists_the_supported_ones(tmp_path) -> None:
    path = tmp_path / "model.pomdpx"
    path.write_text("<pomdpx version='0.1'></pomdpx>")
    with pytest.raises(ModelFileError, match=r"cannot tell the format of .*model\.pomdpx.*"
                                             r"BIF \(\.bif\).*Hugin NET \(\.net\).*UAI"):
        pp.BayesianNetworkScenario.from_file(path)


def test_directory_and_missing_file(tmp_path) -> None:
    with pytest.raises(ModelFileError, match="is a directory"):
        pp.BayesianNetworkScenario.from_file(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"nowhere\.net.*does not exist"):
        pp.BayesianNetworkScenario.from_file(tmp_path / "nowhere.net")


def test_truncated_xdsl_is_a_model_file_error(tmp_path) -> None:
    full = write_with_pgmpy(load_network("asia"), "xdsl", tmp_path / "full.xdsl").read_text()
    path = tmp_path / "cut.xdsl"
    path.write_text(full[: len(full) // 2])
    with pytest.raises(ModelFileError, match=r"cut\.xdsl.*GeNIe XDSL"):
        pp.BayesianNetworkScenario.from_file(path)


def test_load_scenarios_reads_the_new_formats(tmp_path) -> None:
    path = write_with_pgmpy(load_network("asia"), "net", tmp_path / "asia.net")
    cls = pp.load_scenarios(path)
    assert cls.kind == "network" and len(cls[0].nodes) == 8


# ----------------------------------------------------------------------------- ExactInference

def test_exact_inference_golden_values_on_asia(asia) -> None:
    engine = pp.ExactInference(asia)
    factor = engine.query(["lung"], evidence={"smoke": "yes"})
    assert factor.variables == ["lung"]
    assert factor.state_names == {"lung": ["yes", "no"]}
    assert factor.values.tolist() == [0.1, 0.9]
    # P(either = yes) = 1 - P(tub = no) P(lung = no)
    #                 = 1 - (1 - 0.01·0.05 - 0.99·0.01) · (1 - 0.5·0.1 - 0.5·0.01) = 0.064828
    either = engine.query(["either"]).values[0]
    assert either == pytest.approx(1 - (1 - 0.0005 - 0.0099) * (1 - 0.05 - 0.005), abs=1e-15)


def test_joint_false_gives_one_factor_per_variable_in_order(asia) -> None:
    out = pp.ExactInference(asia).query(["smoke", "lung"], evidence={"asia": "yes"},
                                        joint=False)
    assert list(out) == ["smoke", "lung"]
    assert out["smoke"].variables == ["smoke"]
    assert out["lung"].values.tolist() == pytest.approx([0.055, 0.945], abs=1e-15)


def test_joint_axes_follow_the_order_of_the_variables(asia) -> None:
    engine = pp.ExactInference(asia)
    ab = engine.query(["smoke", "lung"])
    ba = engine.query(["lung", "smoke"])
    assert ab.variables == ["smoke", "lung"] and ba.variables == ["lung", "smoke"]
    np.testing.assert_array_equal(ab.values, ba.values.T)
    # P(smoke = yes, lung = yes) = 0.5 · 0.1
    assert ab.values[0, 0] == pytest.approx(0.05, abs=1e-15)


def pgmpy_and_ours(bn: pp.BayesianNetworkScenario, queries: int, seed: int) -> int:
    """Random queries through both engines, compared factor by factor to 1e-9; returns how
    many had possible evidence (pgmpy answers NaN otherwise, and ours raises)."""
    from pgmpy.inference import VariableElimination

    model = bn.to_pgmpy()  # the same validated tables for both
    theirs, ours = VariableElimination(model), pp.ExactInference(model)
    rng = np.random.default_rng(seed)
    nodes, answered = list(bn.nodes), 0
    for _ in range(queries):
        picked = [nodes[i] for i in rng.choice(len(nodes), int(rng.integers(2, 6)),
                                               replace=False)]
        n_targets = int(rng.integers(1, min(3, len(picked) - 1) + 1))
        targets = picked[:n_targets]
        evidence = {v: bn.states_of(v)[int(rng.integers(len(bn.states_of(v))))]
                    for v in picked[n_targets:]}
        joint = bool(rng.integers(2))
        want = theirs.query(targets, evidence=evidence, joint=joint, show_progress=False)
        wanted = want if joint else list(want.values())
        if not np.isfinite(np.concatenate([np.ravel(f.values) for f in
                                           ([wanted] if joint else wanted)])).all():
            with pytest.raises(ImpossibleSecretError):
                ours.query(targets, evidence=evidence, joint=joint)
            continue
        got = ours.query(targets, evidence=evidence, joint=joint)
        pairs = [(got, want)] if joint else list(zip(got.values(), want.values(), strict=True))
        assert joint or list(got) == list(want)
        for mine, ref in pairs:
            assert mine.variables == ref.variables
            assert mine.state_names == ref.state_names
            np.testing.assert_allclose(mine.values, ref.values, rtol=0, atol=TOL)
        answered += 1
    return answered


@pytest.mark.parametrize("name", ["alarm", "child", "insurance"])
def test_exact_inference_agrees_with_pgmpy_variable_elimination(name) -> None:
    assert pgmpy_and_ours(load_network(name), queries=25, seed=14) >= 10


@pytest.mark.slow
@pytest.mark.parametrize("name", ["sachs", "hepar2", "win95pts", "andes"])
def test_exact_inference_agrees_with_pgmpy_on_the_shared_networks(name) -> None:
    if not has_model(name):
        pytest.skip(f"{name}.bif is not available")
    assert pgmpy_and_ours(load_network(name), queries=15, seed=2) >= 5


def test_a_pgmpy_model_straight_from_its_reader(asia) -> None:
    from pgmpy.readwrite import BIFReader

    model = BIFReader(path=str(model_path("asia"))).get_model()
    engine = pp.ExactInference(model)
    assert isinstance(engine.scenario, pp.BayesianNetworkScenario)
    assert engine.query(["tub"], {"asia": "yes"}).values.tolist() == [0.05, 0.95]


def test_chains_are_queried_too() -> None:
    chain = pp.MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], [1.0, 0.0], 3,
                                   states=["rest", "walk"])
    factor = pp.ExactInference(chain).query([2], {0: "rest"})
    # first row of P²: 0.9·0.9 + 0.1·0.2 = 0.83
    assert factor.variables == [2] and factor.state_names == {2: ["rest", "walk"]}
    assert factor.values.tolist() == pytest.approx([0.83, 0.17], abs=1e-15)


def test_pgmpy_keywords_are_accepted(asia) -> None:
    factor = pp.ExactInference(asia).query(["dysp"], evidence=None, joint=True,
                                           show_progress=True, elimination_order="MinFill")
    assert factor.values.sum() == pytest.approx(1.0, abs=1e-15)


def test_exact_inference_errors(asia) -> None:
    engine = pp.ExactInference(asia)
    with pytest.raises(InvalidParameterError, match="both queried and in the evidence"):
        engine.query(["lung"], {"lung": "yes"})
    with pytest.raises(InvalidParameterError, match="variables is empty"):
        engine.query([])
    with pytest.raises(InvalidParameterError, match="repeat a node"):
        engine.query(["lung", "lung"], joint=False)
    with pytest.raises(UnknownNodeError, match="'lungs'"):
        engine.query(["lungs"])
    with pytest.raises(ParameterTypeError, match="variables must be a list"):
        engine.query({"lung"})
    with pytest.raises(ImpossibleSecretError, match="probability 0"):
        engine.query(["dysp"], {"tub": "yes", "either": "no"})
    with pytest.raises(ParameterTypeError, match="DiscreteBayesianNetwork, got str"):
        pp.ExactInference("asia.bif")
    with pytest.raises(ParameterTypeError, match="from_dbn"):
        pp.ExactInference(sensor_dbn())


# ----------------------------------------------------------------------------- dynamic networks

# Activity A (rest, walk) with two sensors per slot: S1 | A (motion: off, on) and S2 | A, S1
# (sound: quiet, low, loud); A follows A of the previous slot and S2 also its previous value.
PRIOR_A = [[0.6], [0.4]]
TRANS_A = [[0.9, 0.2], [0.1, 0.8]]                      # columns: A of the previous slot
S1_GIVEN_A = [[0.7, 0.1], [0.3, 0.9]]
S2_GIVEN_A_S1 = [[0.8, 0.5, 0.4, 0.1], [0.15, 0.3, 0.4, 0.3], [0.05, 0.2, 0.2, 0.6]]
S2_GIVEN_A_S1_S2 = np.array([[0.9, 0.6, 0.3] * 4, [0.05, 0.3, 0.3] * 4,
                             [0.05, 0.1, 0.4] * 4])      # columns: (A, S1, previous S2)
STATES = {"A": ["rest", "walk"], "S1": ["off", "on"], "S2": ["quiet", "low", "loud"]}


def _cpd(variable, slice_, values, parents=()):
    from pgmpy.factors.discrete import TabularCPD

    node = (variable, slice_)
    names = {node: STATES[variable], **{p: STATES[p[0]] for p in parents}}
    return TabularCPD(node, len(STATES[variable]), values, evidence=list(parents) or None,
                      evidence_card=[len(STATES[p[0]]) for p in parents] or None,
                      state_names=names)


def sensor_dbn():
    from pgmpy.models import DynamicBayesianNetwork

    dbn = DynamicBayesianNetwork([
        (("A", 0), ("S1", 0)), (("A", 0), ("S2", 0)), (("S1", 0), ("S2", 0)),
        (("A", 0), ("A", 1)), (("S2", 0), ("S2", 1)),
    ])
    dbn.add_cpds(
        _cpd("A", 0, PRIOR_A), _cpd("A", 1, TRANS_A, [("A", 0)]),
        _cpd("S1", 0, S1_GIVEN_A, [("A", 0)]), _cpd("S1", 1, S1_GIVEN_A, [("A", 1)]),
        _cpd("S2", 0, S2_GIVEN_A_S1, [("A", 0), ("S1", 0)]),
        _cpd("S2", 1, S2_GIVEN_A_S1_S2, [("A", 1), ("S1", 1), ("S2", 0)]),
    )
    return dbn


def hand_built(length: int) -> pp.BayesianNetworkScenario:
    """The same model written out slice by slice as an ordinary pgmpy network."""
    from pgmpy.factors.discrete import TabularCPD
    from pgmpy.models import DiscreteBayesianNetwork

    def cpd(v, values, parents=()):
        def states(node):
            return STATES[node.split("@")[0]]

        names = {v: states(v), **{p: states(p) for p in parents}}
        return TabularCPD(v, len(states(v)), values, evidence=list(parents) or None,
                          evidence_card=[len(states(p)) for p in parents] or None,
                          state_names=names)

    model, cpds = DiscreteBayesianNetwork(), []
    for t in range(length):
        a, s1, s2 = f"A@{t}", f"S1@{t}", f"S2@{t}"
        model.add_nodes_from([a, s1, s2])
        if t == 0:
            cpds += [cpd(a, PRIOR_A), cpd(s2, S2_GIVEN_A_S1, [a, s1])]
        else:
            cpds += [cpd(a, TRANS_A, [f"A@{t - 1}"]),
                     cpd(s2, S2_GIVEN_A_S1_S2, [a, s1, f"S2@{t - 1}"])]
        cpds.append(cpd(s1, S1_GIVEN_A, [a]))
    for c in cpds:
        model.add_edges_from((p, c.variable) for p in c.variables[1:])
    model.add_cpds(*cpds)
    return pp.BayesianNetworkScenario(model)


def test_unrolled_dbn_equals_the_hand_built_network() -> None:
    unrolled = pp.BayesianNetworkScenario.from_dbn(sensor_dbn(), length=4)
    assert unrolled.nodes[:3] == ("A@0", "S1@0", "S2@0")
    assert_same_network(hand_built(4), unrolled)
    assert unrolled.parents_of("S2@3") == ("A@3", "S1@3", "S2@2")
    expected = hand_built(4)
    for targets, evidence in [(["A@3"], {"S1@0": "on", "S2@2": "loud"}),
                              (["S2@3", "A@0"], {"S1@1": "off"}),
                              (["A@1", "A@2"], {"S2@0": "low", "S2@3": "quiet"})]:
        np.testing.assert_allclose(pp.conditional(unrolled, targets, evidence),
                                   pp.conditional(expected, targets, evidence),
                                   rtol=0, atol=1e-12)


def test_unrolled_dbn_golden_values() -> None:
    bn = pp.BayesianNetworkScenario.from_dbn(sensor_dbn(), length=3, name="sensors")
    assert bn.name == "sensors" and len(bn.nodes) == 9
    # P(A@1 = rest) = 0.6·0.9 + 0.4·0.2 = 0.62
    assert pp.conditional(bn, ["A@1"])[0] == pytest.approx(0.62, abs=1e-15)
    # P(A@0 = walk | S1@0 = on) = 0.4·0.9 / (0.6·0.3 + 0.4·0.9) = 0.36 / 0.54 = 2/3
    assert pp.conditional(bn, ["A@0"], {"S1@0": "on"})[1] == pytest.approx(2 / 3, abs=1e-15)


def test_unrolled_dbn_works_through_exact_inference() -> None:
    bn = pp.BayesianNetworkScenario.from_dbn(sensor_dbn(), length=2)
    factor = pp.ExactInference(bn).query(["A@1"], {"S1@1": "on"})
    assert factor.state_names == {"A@1": ["rest", "walk"]}
    # P(A@1) = (0.62, 0.38); with S1@1 = on: 0.38·0.9 / (0.62·0.3 + 0.38·0.9) = 0.342 / 0.528
    assert factor.values[1] == pytest.approx(0.342 / 0.528, abs=1e-15)


def test_one_slice_is_the_initial_network() -> None:
    bn = pp.BayesianNetworkScenario.from_dbn(sensor_dbn(), length=1)
    assert bn.nodes == ("A@0", "S1@0", "S2@0")


def _replace_cpd(dbn, new):
    dbn.cpds = [c for c in dbn.cpds if tuple(c.variable) != tuple(new.variable)] + [new]
    return dbn


def test_slice_one_parent_outside_slices_0_and_1_is_refused() -> None:
    dbn = _replace_cpd(sensor_dbn(), _cpd("S1", 1, S1_GIVEN_A, [("A", 2)]))
    with pytest.raises(InvalidModelError, match=r"\('S1', 1\) has the parent \('A', 2\) in "
                                                r"time slice 2.*slices 0 and 1 only"):
        pp.BayesianNetworkScenario.from_dbn(dbn, length=3)


def test_slice_zero_parent_in_slice_one_is_refused() -> None:
    dbn = _replace_cpd(sensor_dbn(), _cpd("S1", 0, S1_GIVEN_A, [("A", 1)]))
    with pytest.raises(InvalidModelError, match=r"\('S1', 0\).*slice 1.*slice 0 only"):
        pp.BayesianNetworkScenario.from_dbn(dbn, length=3)


def test_node_in_a_third_slice_is_refused() -> None:
    import networkx as nx
    from pgmpy.models.DynamicBayesianNetwork import DynamicNode

    dbn = sensor_dbn()
    nx.DiGraph.add_node(dbn, DynamicNode("A", 2))
    with pytest.raises(InvalidModelError, match=r"time slice 2; a two-slice DBN"):
        pp.BayesianNetworkScenario.from_dbn(dbn, length=3)


def test_missing_slice_one_cpd_is_refused_with_a_hint() -> None:
    dbn = sensor_dbn()
    dbn.cpds = [c for c in dbn.cpds if tuple(c.variable) != ("S1", 1)]
    with pytest.raises(InvalidModelError, match=r"\('S1', 1\) has no CPD.*initialize_initial"):
        pp.BayesianNetworkScenario.from_dbn(dbn, length=2)


def test_dbn_cpd_not_summing_to_one_names_the_unrolled_node() -> None:
    dbn = _replace_cpd(sensor_dbn(), _cpd("A", 1, [[0.9, 0.2], [0.1, 0.7]], [("A", 0)]))
    with pytest.raises(InvalidModelError, match=r"node 'A@1' for parent states \('walk',\) "
                                                r"sums to 0\.(9|8999)"):
        pp.BayesianNetworkScenario.from_dbn(dbn, length=2)


def test_dbn_states_differing_between_slices_are_refused() -> None:
    from pgmpy.factors.discrete import TabularCPD

    other = TabularCPD(("A", 1), 2, TRANS_A, evidence=[("A", 0)], evidence_card=[2],
                       state_names={("A", 1): ["still", "moving"], ("A", 0): STATES["A"]})
    with pytest.raises(InvalidModelError, match=r"'A' has states \['rest', 'walk'\] in slice "
                                                r"0 but \['still', 'moving'\]"):
        pp.BayesianNetworkScenario.from_dbn(_replace_cpd(sensor_dbn(), other), length=2)


def test_from_dbn_argument_errors(asia) -> None:
    with pytest.raises(InvalidParameterError):
        pp.BayesianNetworkScenario.from_dbn(sensor_dbn(), length=0)
    with pytest.raises(ParameterTypeError, match="BayesianNetworkScenario\\(model\\)"):
        pp.BayesianNetworkScenario.from_dbn(asia.to_pgmpy(), length=2)
    with pytest.raises(ParameterTypeError, match="from_dbn"):
        pp.BayesianNetworkScenario(sensor_dbn())


def test_variable_missing_from_slice_one_is_refused() -> None:
    from pgmpy.factors.discrete import TabularCPD

    dbn = sensor_dbn()
    dbn.add_node("B")  # pgmpy adds ("B", 0) only
    dbn.add_cpds(TabularCPD(("B", 0), 2, [[0.5], [0.5]]))
    with pytest.raises(InvalidModelError, match=r"'B' has no node in slice 1"):
        pp.BayesianNetworkScenario.from_dbn(dbn, length=2)


def test_xml_content_wins_over_a_text_suffix(tmp_path, asia) -> None:
    # an XMLBIF file saved as .bif was read as XMLBIF before the other formats came in
    written = write_with_pgmpy(asia, "xml", tmp_path / "asia.xml")
    as_bif = shutil.copy(written, tmp_path / "asia_xml.bif")
    assert_same_network(asia, pp.BayesianNetworkScenario.from_file(as_bif))


# ---------------------------------------------------------------- pgmpy's predict, our engine

def predict_frame(bn: pp.BayesianNetworkScenario, rows: int, hidden: int, seed: int):
    """``rows`` samples of ``bn`` (drawn by pgmpy) with ``hidden`` columns dropped to predict."""
    from pgmpy.sampling import BayesianModelSampling

    model = bn.to_pgmpy()
    data = BayesianModelSampling(model).forward_sample(size=rows, seed=seed, show_progress=False)
    rng = np.random.default_rng(seed)
    dropped = [bn.nodes[i] for i in rng.choice(len(bn.nodes), hidden, replace=False)]
    return model, data.drop(columns=dropped)


@pytest.mark.parametrize("name", ["asia", "alarm"])
def test_pgmpy_predict_runs_through_our_engine(name, monkeypatch):
    from pgmpy.inference import VariableElimination

    bn = load_network(name)
    model, data = predict_frame(bn, rows=40, hidden=3, seed=7)
    algo = pp.pgmpy_exact_inference()
    calls, original = [], algo.map_query

    def counting(self, *args, **kwargs):
        calls.append(kwargs.get("evidence"))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(algo, "map_query", counting)
    ours = model.predict(data, algo=algo, n_jobs=1)
    theirs = model.predict(data, algo=VariableElimination, n_jobs=1)
    assert calls, "pgmpy's predict did not call our engine"
    assert ours.equals(theirs)


def test_pgmpy_algorithm_refuses_what_it_cannot_answer():
    algo = pp.pgmpy_exact_inference()(load_network("asia").to_pgmpy())
    with pytest.raises(InvalidParameterError, match="virtual evidence"):
        algo.map_query(["lung"], virtual_evidence=[object()])
    with pytest.raises(UnknownNodeError):
        algo.map_query(["no such node"])
    with pytest.raises(ImpossibleSecretError):  # P(either = no | lung = yes) = 0
        algo.map_query(["asia"], evidence={"lung": "yes", "either": "no"})
    # map over every unobserved node when variables is None
    unobserved = set(load_network("asia").nodes) - {"asia"}
    assert set(algo.map_query(evidence={"asia": "yes"})) == unobserved
