"""The error hierarchy, and a table of bad inputs: each raises a PufferfishError subclass that is
also the fitting built-in exception, with a message naming the node, state or value."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from helpers import load_network, model_path

import pufferfish_pgm as pp
from pufferfish_pgm import errors
from pufferfish_pgm._validation import positive_finite, positive_int
from pufferfish_pgm.errors import (
    ImpossibleSecretError,
    InvalidDataError,
    InvalidModelError,
    InvalidParameterError,
    ModelFileError,
    ModelFileNotFoundError,
    ParameterTypeError,
    PufferfishError,
    ScenarioClassError,
    UnknownNodeError,
    UnknownStateError,
)
from pufferfish_pgm.secrets import NodeSecret, SecretPair

BUILTIN = {
    "BudgetExceededError": ValueError,
    "CertificateError": ValueError,
    "CompositionError": ValueError,
    "ImpossibleSecretError": ValueError,
    "InvalidDataError": ValueError,
    "InvalidModelError": ValueError,
    "InvalidParameterError": ValueError,
    "LimitExceededError": ValueError,
    "MissingDependencyError": ImportError,
    "ModelFileError": ValueError,
    "ModelFileNotFoundError": FileNotFoundError,
    "ParameterTypeError": TypeError,
    "ScenarioClassError": ValueError,
    "SolverError": RuntimeError,
    "UnknownNodeError": KeyError,
    "UnknownStateError": KeyError,
}


# ----------------------------------------------------------------------------- hierarchy

def test_every_public_error_is_listed() -> None:
    assert set(errors.__all__) == set(BUILTIN) | {"PufferfishError", "PufferfishWarning",
                                                  "AmbiguousDateWarning", "UsefulnessWarning"}


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_each_error_is_a_pufferfish_error_and_its_builtin(name: str) -> None:
    cls = getattr(errors, name)
    assert issubclass(cls, PufferfishError)
    assert issubclass(cls, BUILTIN[name])
    with pytest.raises(BUILTIN[name]):
        raise cls("message")


def test_key_errors_print_their_message_unquoted() -> None:
    # KeyError.__str__ would show "'unknown node ...'" with quotes
    assert str(UnknownNodeError("unknown node 'x'")) == "unknown node 'x'"
    assert str(UnknownStateError("no state")) == "no state"
    assert str(PufferfishError()) == "PufferfishError"


def test_root_is_exported() -> None:
    assert pp.PufferfishError is PufferfishError


def test_solver_error_is_public_and_the_old_import_still_works() -> None:
    from pufferfish_pgm.mechanisms._optimal_lp import SolverError

    assert pp.SolverError is errors.SolverError is SolverError
    assert "SolverError" in pp.__all__


# ----------------------------------------------------------------------------- helpers

def two_node_bn(b_table: list, a_table: list | None = None):
    """pgmpy network A -> B (2 states each) with the given CPD values (no validation by us)."""
    from pgmpy.factors.discrete import TabularCPD
    from pgmpy.models import DiscreteBayesianNetwork

    model = DiscreteBayesianNetwork([("A", "B")])
    model.add_cpds(TabularCPD("A", 2, a_table or [[0.4], [0.6]]),
                   TabularCPD("B", 2, b_table, evidence=["A"], evidence_card=[2]))
    return model


def changed(model, node, *edits):
    """``model`` with CPD entries of ``node`` overwritten: index, value, index, value, ..."""
    values = model.get_cpds(node).values
    for index, value in zip(edits[0::2], edits[1::2], strict=True):
        values[index] = value
    return model


def chain(transition=((0.9, 0.1), (0.2, 0.8)), initial="stationary", length=3, states=None):
    return pp.MarkovChainScenario(transition, initial, length, states)


def write_file(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


ASIA_HEAD = """network unknown {
}
variable asia {
  type discrete [ 2 ] { yes, no };
}
variable tub {
  type discrete [ 2 ] { yes, no };
}
"""


def broken_bif(tmp_path: Path) -> Path:
    """Variables declared, but the probability blocks are cut off (a truncated download)."""
    return write_file(tmp_path, "broken.bif", ASIA_HEAD + "probability ( asia ) {\n  table 0.0")


def garbage_bif(tmp_path: Path) -> Path:
    return write_file(tmp_path, "garbage.bif", "this is { not a ; network\n")


def bif_with_bad_column(tmp_path: Path) -> Path:
    text = ASIA_HEAD + """probability ( asia ) {
  table 0.01, 0.99;
}
probability ( tub | asia ) {
  (yes) 0.05, 0.95;
  (no) 0.11, 0.99;
}
"""
    return write_file(tmp_path, "bad_column.bif", text)


def two_bn_class_different_nodes():
    from pgmpy.factors.discrete import TabularCPD
    from pgmpy.models import DiscreteBayesianNetwork

    other = DiscreteBayesianNetwork([("A", "C")])
    other.add_cpds(TabularCPD("A", 2, [[0.4], [0.6]]),
                   TabularCPD("C", 2, [[0.5, 0.5], [0.5, 0.5]], evidence=["A"], evidence_card=[2]))
    first = pp.BayesianNetworkScenario(two_node_bn([[0.9, 0.2], [0.1, 0.8]]), name="first")
    return pp.ScenarioClass([first, pp.BayesianNetworkScenario(other, name="second")])


def two_bn_class_different_states():
    from pgmpy.factors.discrete import TabularCPD
    from pgmpy.models import DiscreteBayesianNetwork

    other = DiscreteBayesianNetwork([("A", "B")])
    other.add_cpds(TabularCPD("A", 2, [[0.4], [0.6]]),
                   TabularCPD("B", 2, [[0.9, 0.2], [0.1, 0.8]], evidence=["A"], evidence_card=[2],
                              state_names={"B": ["low", "high"], "A": [0, 1]}))
    first = pp.BayesianNetworkScenario(two_node_bn([[0.9, 0.2], [0.1, 0.8]]), name="first")
    return pp.ScenarioClass([first, pp.BayesianNetworkScenario(other, name="second")])


# ----------------------------------------------------------------------------- the table

BAD_INPUTS: list[tuple[str, Callable[[Path], object], type, type, str]] = [
    # (id, call, library error, built-in, message fragment)
    ("cpd-column-off-by-0.1",
     lambda _: pp.BayesianNetworkScenario(two_node_bn([[0.9, 0.2], [0.2, 0.8]])),
     InvalidModelError, ValueError, "node 'B' for parent states (0,) sums to 1.1"),
    ("cpd-column-off-by-1e-4",  # pgmpy accepts columns off by up to 0.01; we do not
     lambda _: pp.BayesianNetworkScenario(two_node_bn([[0.9, 0.2], [0.1, 0.8001]])),
     InvalidModelError, ValueError, "node 'B' for parent states (1,)"),
    ("cpd-root-off-by-1e-4",
     lambda _: pp.BayesianNetworkScenario(two_node_bn([[0.9, 0.2], [0.1, 0.8]],
                                                      a_table=[[0.4], [0.6001]])),
     InvalidModelError, ValueError, "node 'A'"),
    ("cpd-negative",  # pgmpy refuses negative values when building a CPD, not afterwards
     lambda _: pp.BayesianNetworkScenario(changed(two_node_bn([[0.9, 0.2], [0.1, 0.8]]),
                                                  "B", (0, 1), 1.1, (1, 1), -0.1)),
     InvalidModelError, ValueError, "node 'B' has the negative probability -0.1 at index (1, 1)"),
    ("cpd-nan",
     lambda _: pp.BayesianNetworkScenario(two_node_bn([[0.9, np.nan], [0.1, 0.8]])),
     InvalidModelError, ValueError, "node 'B' contains nan (NaN or infinite) at index (0, 1)"),
    ("cpd-infinite",
     lambda _: pp.BayesianNetworkScenario(changed(two_node_bn([[0.9, 0.2], [0.1, 0.8]]),
                                                  "A", (0,), np.inf)),
     InvalidModelError, ValueError, "node 'A' contains inf"),
    ("cpd-negative-in-file",
     lambda tmp: pp.BayesianNetworkScenario.from_file(
         write_file(tmp, "negative.bif", ASIA_HEAD.split("variable tub")[0]
                    + "probability ( asia ) {\n  table 1.1, -0.1;\n}\n")),
     ModelFileError, ValueError, "non-negative"),
    ("transition-negative",
     lambda _: chain([[1.1, -0.1], [0.2, 0.8]]),
     InvalidModelError, ValueError, "transition[0, 1] = -0.1"),
    ("transition-nan",
     lambda _: chain([[0.9, 0.1], [np.nan, 0.8]]),
     InvalidModelError, ValueError, "transition[1, 0] = nan"),
    ("transition-row-sum",
     lambda _: chain([[0.9, 0.1], [0.5, 0.25]]),
     InvalidModelError, ValueError, "row 1 of the transition matrix sums to 0.75"),
    ("transition-non-square",
     lambda _: chain([[0.5, 0.25, 0.25], [0.2, 0.4, 0.4]]),
     InvalidModelError, ValueError, "shape (2, 3)"),
    ("transition-empty",
     lambda _: chain(np.zeros((0, 0))),
     InvalidModelError, ValueError, "shape (0, 0)"),
    ("transition-not-numeric",
     lambda _: chain([["a", "b"], ["c", "d"]]),
     InvalidModelError, ValueError, "not numeric"),
    ("initial-wrong-size",
     lambda _: chain(initial=[0.2, 0.3, 0.5]),
     InvalidModelError, ValueError, "has 3 entries but the chain has 2 states"),
    ("initial-unnormalised",
     lambda _: chain(initial=[0.5, 0.4]),
     InvalidModelError, ValueError, "sums to 0.9"),
    ("initial-negative",
     lambda _: chain(initial=[1.5, -0.5]),
     InvalidModelError, ValueError, "initial[1] = -0.5"),
    ("initial-unknown-word",
     lambda _: chain(initial="uniform"),
     InvalidModelError, ValueError, "'uniform'"),
    ("initial-not-numeric",
     lambda _: chain(initial=["a", "b"]),
     InvalidModelError, ValueError, "not numeric"),
    ("length-zero",
     lambda _: chain(length=0),
     InvalidParameterError, ValueError, "length must be >= 1, got 0"),
    ("length-float",
     lambda _: chain(length=2.5),
     ParameterTypeError, TypeError, "length must be an integer, got the float 2.5"),
    ("duplicate-state-names",
     lambda _: chain(states=["a", "a"]),
     InvalidModelError, ValueError, "['a', 'a']"),
    ("reducible-stationary",
     lambda _: chain([[1.0, 0.0], [0.0, 1.0]]),
     InvalidModelError, ValueError, "several stationary distributions"),
    ("secret-unknown-node",
     lambda _: pp.Framework(chain(), [SecretPair(NodeSecret(7, 0), NodeSecret(7, 1))]),
     UnknownNodeError, KeyError, "unknown node 7"),
    ("secret-unknown-state",
     lambda _: pp.Framework(chain(), [SecretPair(NodeSecret(1, 0), NodeSecret(1, 5))]),
     UnknownStateError, KeyError, "node 1 has no state 5"),
    ("secret-pairs-unknown-node",
     lambda _: pp.secret_pairs(load_network("asia"), nodes=["lungs"]),
     UnknownNodeError, KeyError, "unknown node 'lungs'"),
    ("secret-bool-node-in-chain",
     lambda _: pp.secret_pairs(chain(), nodes=[True]),
     UnknownNodeError, KeyError, "unknown node True"),
    ("conditional-unknown-state",
     lambda _: pp.conditional(load_network("asia"), ["lung"], {"smoke": "maybe"}),
     UnknownStateError, KeyError, "node 'smoke' has no state 'maybe'"),
    ("missing-model-file",
     lambda tmp: pp.BayesianNetworkScenario.from_file(tmp / "nowhere.bif"),
     ModelFileNotFoundError, FileNotFoundError, "nowhere.bif"),
    ("broken-model-file",
     lambda tmp: pp.BayesianNetworkScenario.from_file(broken_bif(tmp)),
     ModelFileError, ValueError, "broken.bif"),
    ("garbage-model-file",
     lambda tmp: pp.BayesianNetworkScenario.from_file(garbage_bif(tmp)),
     ModelFileError, ValueError, "garbage.bif"),
    ("model-file-bad-column",
     lambda tmp: pp.BayesianNetworkScenario.from_file(bif_with_bad_column(tmp)),
     InvalidModelError, ValueError, "node 'tub' for parent states ('no',) sums to 1.1"),
    ("real-file-with-renormalize-0",  # every column listed, one renormalize= for them all
     lambda _: pp.BayesianNetworkScenario.from_file(model_path("alarm"), renormalize=0),
     InvalidModelError, ValueError, "pass renormalize=1.1e-07 to rescale them all"),
    ("renormalize-negative",
     lambda _: pp.BayesianNetworkScenario(two_node_bn([[0.9, 0.2], [0.1, 0.8]]), renormalize=-1),
     InvalidParameterError, ValueError, "renormalize must be between 0 and 0.001, got -1.0"),
    ("renormalize-nan",
     lambda _: pp.BayesianNetworkScenario.from_file(model_path("asia"), renormalize=np.nan),
     InvalidParameterError, ValueError, "got nan"),
    ("renormalize-too-large",
     lambda _: pp.load_scenarios(model_path("asia"), renormalize=0.5),
     InvalidParameterError, ValueError, "got 0.5"),
    ("renormalize-string",
     lambda _: pp.BayesianNetworkScenario.from_file(model_path("asia"), renormalize="1e-6"),
     ParameterTypeError, TypeError, "renormalize must be a number"),
    ("renormalize-bool",
     lambda _: pp.BayesianNetworkScenario(two_node_bn([[0.9, 0.2], [0.1, 0.8]]),
                                          renormalize=True),
     ParameterTypeError, TypeError, "got the bool True"),
    ("class-nodes-disagree",
     lambda _: two_bn_class_different_nodes(),
     ScenarioClassError, ValueError, "'first' and 'second' have different nodes"),
    ("class-chain-lengths-disagree",
     lambda _: pp.ScenarioClass([chain(length=3), chain(length=4)]),
     ScenarioClassError, ValueError, "different nodes"),
    ("class-states-disagree",
     lambda _: two_bn_class_different_states(),
     ScenarioClassError, ValueError, "node 'B' has states [0, 1] in 'first' but ['low', 'high']"),
    ("class-chain-states-disagree",
     lambda _: pp.ScenarioClass([chain(states=["a", "b"]), chain(states=["a", "c"])]),
     ScenarioClassError, ValueError, "['a', 'c']"),
    ("class-empty",
     lambda _: pp.ScenarioClass([]),
     ScenarioClassError, ValueError, "empty"),
    ("class-not-a-scenario",
     lambda _: pp.ScenarioClass([chain(), "chain"]),
     ParameterTypeError, TypeError, "got str"),
    ("epsilon-string",
     lambda _: positive_finite("epsilon", "1"),
     ParameterTypeError, TypeError, "epsilon must be a real number, got the str '1'"),
    ("epsilon-bool",
     lambda _: positive_finite("epsilon", True),
     ParameterTypeError, TypeError, "got the bool True"),
    ("epsilon-numpy-bool",
     lambda _: positive_finite("epsilon", np.bool_(True)),
     ParameterTypeError, TypeError, "epsilon must be a real number"),
    ("epsilon-zero",
     lambda _: positive_finite("epsilon", 0),
     InvalidParameterError, ValueError, "epsilon must be a finite number > 0, got 0.0"),
    ("epsilon-negative",
     lambda _: positive_finite("epsilon", -1.5),
     InvalidParameterError, ValueError, "got -1.5"),
    ("epsilon-nan",
     lambda _: positive_finite("epsilon", float("nan")),
     InvalidParameterError, ValueError, "got nan"),
    ("epsilon-inf",
     lambda _: positive_finite("epsilon", float("inf")),
     InvalidParameterError, ValueError, "got inf"),
    # an int past float's range raised a raw OverflowError (third audit, via memory_budget)
    ("epsilon-huge-int",
     lambda _: pp.MarkovQuiltMechanism(epsilon=10**400),
     InvalidParameterError, ValueError, "epsilon must be a finite number > 0, got inf"),
    ("memory-budget-huge-int",
     lambda _: pp.MarkovQuiltMechanism(epsilon=1.0, memory_budget=10**400),
     InvalidParameterError, ValueError, "memory_budget must be a finite number > 0, got inf"),
    ("epsilon-huge-negative-int",
     lambda _: positive_finite("epsilon", -10**400),
     InvalidParameterError, ValueError, "got -inf"),
    ("int-bool",
     lambda _: positive_int("length", True),
     ParameterTypeError, TypeError, "got the bool True"),
    ("impossible-evidence",
     lambda _: pp.conditional(chain([[1.0, 0.0], [0.5, 0.5]], initial=[1.0, 0.0]), [2], {1: 1}),
     ImpossibleSecretError, ValueError, "{1: 1} has probability 0"),
    ("pgmpy-model-wrong-type",
     lambda _: pp.BayesianNetworkScenario("asia.bif"),
     ParameterTypeError, TypeError, "got str"),
    # the new-user list of issue 14, items 7-9: each raised a raw exception or said the wrong
    # thing before (StopIteration, IndexError later, TypeError, "unknown node 'l'", less noise)
    ("release-empty-frame",
     lambda _: _calibration().release(__import__("pandas").DataFrame()),
     InvalidDataError, ValueError, "no records given"),
    ("count-over-no-node",
     lambda _: pp.Count(1, nodes=[]),
     InvalidParameterError, ValueError, "the query's nodes are empty"),
    ("framework-of-none",
     lambda _: pp.Framework(None),
     ParameterTypeError, TypeError, "got the NoneType None"),
    ("framework-of-a-pgmpy-model",
     lambda _: pp.Framework(load_network("asia").to_pgmpy()),
     ParameterTypeError, TypeError, "wrap it first: BayesianNetworkScenario(model)"),
    ("unhashable-state-names",
     lambda _: pp.MarkovChainScenario([[1.0]], "stationary", 3, states=[["a"]]),
     ParameterTypeError, TypeError, "state names must be hashable"),
    ("eigengap-above-one",
     lambda _: pp.mqm_approx_scale(pi_min=0.3, eigengap=2, epsilon=1.0, length=10),
     InvalidParameterError, ValueError, "eigengap must be between 0 and 1, got 2"),
    ("histogram-over-mixed-state-spaces",
     lambda _: pp.GroupDPMechanism(epsilon=1.0).calibrate(pp.Framework(load_network("alarm")),
                                                          pp.Histogram()),
     InvalidParameterError, ValueError, "a histogram needs nodes that share one state space"),
]


def _calibration() -> pp.Calibration:
    mc = chain([[0.9, 0.1], [0.2, 0.8]])
    return pp.GroupDPMechanism(epsilon=1.0).calibrate(pp.Framework(mc), pp.Count(1))


def test_one_node_name_is_one_node_not_its_letters() -> None:
    asia = load_network("asia")
    assert {p.first.node for p in pp.secret_pairs(asia, nodes="lung")} == {"lung"}
    assert pp.Count("yes", nodes="lung").nodes == ("lung",)
    assert pp.Count(1, nodes=3).nodes == (3,)


@pytest.mark.parametrize(("call", "library", "builtin", "fragment"),
                         [case[1:] for case in BAD_INPUTS], ids=[case[0] for case in BAD_INPUTS])
@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_bad_input_raises(tmp_path: Path, call, library: type, builtin: type,
                          fragment: str) -> None:
    with pytest.raises(library, match=re.escape(fragment)) as info:
        call(tmp_path)
    assert isinstance(info.value, PufferfishError)
    assert isinstance(info.value, builtin)


def test_pgmpy_itself_accepts_a_column_off_by_1e_4() -> None:
    # the reason for our strict check: pgmpy's own check tolerates 0.01
    model = two_node_bn([[0.9, 0.2], [0.1, 0.8001]])
    assert model.check_model()


def test_cpd_message_suggests_renormalize_only_for_rounding() -> None:
    with pytest.raises(InvalidModelError) as info:
        pp.BayesianNetworkScenario(two_node_bn([[0.9, 0.2], [0.2, 0.8]]))
    assert "renormalize" not in str(info.value)  # a column summing to 1.1 is a wrong table
    with pytest.raises(InvalidModelError, match=r"pass renormalize=5\.1e-05 ") as info:
        pp.BayesianNetworkScenario(two_node_bn([[0.9, 0.2], [0.1, 0.80005]]))
    # the suggested value accepts the table, and the column is then listed
    suggested = float(re.search(r"renormalize=(\S+) ", str(info.value)).group(1))
    bn = pp.BayesianNetworkScenario(two_node_bn([[0.9, 0.2], [0.1, 0.80005]]),
                                    renormalize=suggested)
    assert [(r.node, r.parent_states) for r in bn.renormalized] == [("B", (1,))]


def test_renormalize_accepts_small_rounding_and_rescales_exactly() -> None:
    bn = pp.BayesianNetworkScenario(two_node_bn([[0.9, 0.2], [0.1, 0.8000001]]), renormalize=1e-6)
    column = bn.cpt("B")[:, 1]
    assert column.sum() == pytest.approx(1.0, abs=1e-15)
    assert column[1] / column[0] == pytest.approx(0.8000001 / 0.2)


# ----------------------------------------------------------------------------- pgmpy chains

def pgmpy_chain(start: int | None = None):
    from pgmpy.factors.discrete import State
    from pgmpy.models import MarkovChain

    model = MarkovChain(["X"], [3], start_state=None if start is None else [State("X", start)])
    model.add_transition_model("X", {0: {0: 0.5, 1: 0.5, 2: 0.0},
                                     1: {0: 0.25, 1: 0.5, 2: 0.25},
                                     2: {0: 0.0, 1: 0.5, 2: 0.5}})
    return model


MATRIX = [[0.5, 0.5, 0.0], [0.25, 0.5, 0.25], [0.0, 0.5, 0.5]]


def test_pgmpy_markov_chain_is_accepted_as_transition() -> None:
    ours = pp.MarkovChainScenario(pgmpy_chain(), "stationary", 4)
    direct = pp.MarkovChainScenario(MATRIX, "stationary", 4)
    np.testing.assert_array_equal(ours.transition, direct.transition)
    np.testing.assert_allclose(ours.initial, direct.initial, atol=1e-12)
    np.testing.assert_allclose(ours.initial, [0.25, 0.5, 0.25], atol=1e-12)
    assert ours.states == (0, 1, 2)
    np.testing.assert_allclose(pp.conditional(ours, [3], {0: 0}),
                               pp.conditional(direct, [3], {0: 0}), atol=1e-15)


def test_pgmpy_markov_chain_start_state_becomes_the_initial_distribution() -> None:
    ours = pp.MarkovChainScenario(pgmpy_chain(start=2), length=3, states=["lo", "mid", "hi"])
    assert ours.initial.tolist() == [0.0, 0.0, 1.0]
    assert ours.states == ("lo", "mid", "hi")
    # an explicit initial distribution wins over the start state
    given = pp.MarkovChainScenario(pgmpy_chain(start=2), [1.0, 0.0, 0.0], 3)
    assert given.initial.tolist() == [1.0, 0.0, 0.0]


def test_pgmpy_markov_chain_over_two_variables_is_rejected() -> None:
    from pgmpy.models import MarkovChain

    model = MarkovChain(["X", "Y"], [2, 2])
    with pytest.raises(InvalidModelError, match="2 variables"):
        pp.MarkovChainScenario(model, length=2)


def test_pgmpy_markov_chain_without_transitions_is_rejected() -> None:
    from pgmpy.models import MarkovChain

    with pytest.raises(InvalidModelError, match="'X' has no transition model"):
        pp.MarkovChainScenario(MarkovChain(["X"], [2]), length=2)


def test_column_error_lists_every_bad_column_of_every_node_at_once() -> None:
    # two nodes off by rounding beyond 1e-6 (A by 2e-5, B's second column by 3e-4) and one
    # column within the default (B's first, 5e-7): one error names both bad columns and the
    # renormalize= that accepts both, not the first one only
    model = two_node_bn([[0.9, 0.2], [0.1000005, 0.8003]], a_table=[[0.4], [0.60002]])
    with pytest.raises(InvalidModelError) as info:
        pp.BayesianNetworkScenario(model)
    text = str(info.value)
    assert text.startswith("2 CPD columns do not sum to 1 (allowed deviation 1e-06)")
    assert "node 'A' (no parents) sums to 1.00002" in text and "off by 2e-05" in text
    assert "node 'B' for parent states (1,) sums to 1.0003" in text and "off by 0.0003" in text
    assert "(0,)" not in text  # within the default: rescaled, not an error
    suggested = float(re.search(r"pass renormalize=(\S+) to rescale them all", text).group(1))
    assert 3e-4 - 1e-15 <= suggested <= 3.1e-4  # 2 significant digits, rounded up
    bn = pp.BayesianNetworkScenario(model, renormalize=suggested)
    assert [(r.node, r.parent_states) for r in bn.renormalized] == [
        ("A", ()), ("B", (0,)), ("B", (1,))]
    assert bn.renormalized[2].total == pytest.approx(1.0003)
    assert bn.renormalized[2].deviation == pytest.approx(3e-4)


def test_column_error_over_a_wrong_table_offers_no_renormalize() -> None:
    model = two_node_bn([[0.9, 0.2], [0.1000005, 0.8003]], a_table=[[0.4], [0.7]])
    with pytest.raises(InvalidModelError) as info:
        pp.BayesianNetworkScenario(model)
    text = str(info.value)
    assert "node 'A' (no parents) sums to 1.1" in text and "node 'B'" in text
    assert "renormalize" not in text and "wrong table" in text


def test_many_bad_columns_are_summed_up_per_node_after_the_first_hundred() -> None:
    from pufferfish_pgm.scenarios._network_tables import check_cpt

    table = np.full((2, 150), 0.5)
    table[0] += 1e-5  # every column off by 1e-5
    with pytest.raises(InvalidModelError) as info:
        check_cpt("X", table, 1e-9)
    text = str(info.value)
    assert text.startswith("150 CPD columns") and text.count("node 'X' for parent states") == 100
    assert "and 50 more: node 'X': 50 columns off by up to 1e-05" in text
    assert "renormalize=1.1e-05 " in text  # 0.50001 + 0.5 - 1 is 1.0000000000066e-05 in floats
    assert len(check_cpt("X", table, 1e-9, 1.1e-05)) == 2


def test_default_renormalize_lists_rescaled_columns_and_keeps_the_ratios() -> None:
    bn = pp.BayesianNetworkScenario(two_node_bn([[0.9, 0.2], [0.1, 0.8000001]]))
    assert [(r.node, r.parent_states) for r in bn.renormalized] == [("B", (1,))]
    assert bn.renormalized[0].total == pytest.approx(1.0000001, abs=1e-15)
    column = bn.cpt("B")[:, 1]
    assert column.sum() == pytest.approx(1.0, abs=1e-15)
    assert column[1] / column[0] == pytest.approx(0.8000001 / 0.2)
    exact = pp.BayesianNetworkScenario(two_node_bn([[0.9, 0.2], [0.1, 0.8]]))
    assert exact.renormalized == ()
    strict = pytest.raises(InvalidModelError, match="renormalize=1.1e-07")
    with strict:
        pp.BayesianNetworkScenario(two_node_bn([[0.9, 0.2], [0.1, 0.8000001]]), renormalize=0)
