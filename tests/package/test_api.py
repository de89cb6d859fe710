"""The public surface: what 0.1.0 promised still works, and the mechanism contract holds."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

import pufferfish_pgm as pp
from pufferfish_pgm.mechanisms import Mechanism

# pufferfish_pgm.__all__ of release 0.1.0 (before the layout of one subpackage per stage)
NAMES_0_1_0 = [
    "AuditReport", "BayesianNetworkScenario", "BlowfishLaplaceMechanism", "Calibration",
    "CompositionError", "ContinuousSumMechanism", "Count", "EntryDPMechanism",
    "ExactLaplaceMechanism", "Framework", "GroupDPMechanism", "Histogram",
    "ImpossibleSecretError", "InvalidDataError", "InvalidModelError", "InvalidParameterError",
    "JointSecret", "KantorovichMechanism", "LimitExceededError", "LinearQuery",
    "MQMApproxMechanism", "MarkovChainScenario", "MarkovQuiltMechanism", "Mechanism",
    "ModelFileError", "ModelFileNotFoundError", "NodeSecret", "ParameterTypeError", "PlanEntry",
    "PlanarLaplaceMechanism", "PrivacyAccountant", "PufferfishError", "Release", "ScenarioClass",
    "ScenarioClassError", "SecretPair", "UnknownNodeError", "UnknownStateError",
    "WassersteinMechanism", "audit", "audit_releases", "compile_secrets", "complete_graph",
    "conditional", "distance_threshold_graph", "joint_audit", "load_scenarios", "max_influence",
    "mqm_approx_scale", "multiuser", "noise", "partition_graph", "policy_sensitivity",
    "save_chain_class", "secret_pairs", "secret_probability",
]

MECHANISMS = sorted(
    (obj for name in pp.__all__ if isinstance(obj := getattr(pp, name), type)
     and name.endswith("Mechanism") and obj is not Mechanism),
    key=lambda cls: cls.__name__)


#: 0.1.0 names renamed in 0.2.0 (they take no framework, so they are not ``…Mechanism``s): they
#: still import, with a DeprecationWarning naming the new one.
RENAMED = {"ContinuousSumMechanism": "ContinuousSum", "PlanarLaplaceMechanism": "PlanarLaplace"}


@pytest.mark.parametrize("name", NAMES_0_1_0)
def test_every_name_of_0_1_0_still_works(name: str) -> None:
    if name in RENAMED:
        with pytest.warns(DeprecationWarning, match=f"standalone.{RENAMED[name]}"):
            assert getattr(pp, name) is getattr(pp, RENAMED[name])
        assert RENAMED[name] in pp.__all__
    else:
        assert name in pp.__all__ and getattr(pp, name) is not None


@pytest.mark.parametrize("module", ["geo", "continuous", "multiuser"])
def test_the_0_1_0_module_paths_still_import(module: str) -> None:
    import importlib

    old = importlib.import_module(f"pufferfish_pgm.mechanisms.{module}")
    assert old is importlib.import_module(f"pufferfish_pgm.standalone.{module}")


def test_the_subpackages_export_the_mechanisms() -> None:
    from pufferfish_pgm.mechanisms import ExactLaplaceMechanism, MarkovQuiltMechanism

    assert MarkovQuiltMechanism is pp.MarkovQuiltMechanism
    assert ExactLaplaceMechanism is pp.ExactLaplaceMechanism


def test_there_are_mechanisms_to_check() -> None:
    assert len(MECHANISMS) >= 10


@pytest.mark.parametrize("cls", MECHANISMS, ids=lambda c: c.__name__)
def test_epsilon_is_keyword_only_and_required(cls: type) -> None:
    # MarkovQuiltMechanism(0.5, 10) used to set max_quilt_states=10 silently, and
    # MarkovQuiltMechanism() used to mean ε = 1
    with pytest.raises(TypeError):
        cls(0.5)
    with pytest.raises(TypeError):
        cls()
    params = inspect.signature(cls).parameters
    assert params["epsilon"].kind is inspect.Parameter.KEYWORD_ONLY
    assert params["epsilon"].default is inspect.Parameter.empty
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params.values())
    assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen


# --- issue 14, new-user item 3: models where some secret cannot be true --------------------

# Days of 6 slots, all starting asleep: the fitted start is (1, 0), so "X_0 = awake" has
# probability 0, and the default framework leaves that secret out (it used to make every
# mechanism raise ImpossibleSecretError).
SLEEPY_DAYS = [["asleep", "asleep", "asleep", "awake", "awake", "awake"],
               ["asleep", "asleep", "awake", "awake", "awake", "asleep"],
               ["asleep", "asleep", "asleep", "asleep", "awake", "awake"],
               ["asleep", "awake", "awake", "awake", "awake", "awake"]]
SKIPPING = [pp.MarkovQuiltMechanism, pp.ExactLaplaceMechanism, pp.ExactQuiltMechanism,
            pp.WassersteinMechanism]


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
@pytest.mark.parametrize("cls", SKIPPING, ids=lambda c: c.__name__)
def test_every_mechanism_calibrates_when_a_start_state_is_impossible(cls: type) -> None:
    mc = pp.MarkovChainScenario.fit(SLEEPY_DAYS)
    assert mc.initial.tolist() == [1.0, 0.0]
    fw, query = pp.Framework(mc), pp.Count("awake")
    cal = cls(epsilon=1.0).calibrate(fw, query)   # ImpossibleSecretError before the fix
    assert fw.skipped_secrets == ((0, "awake"),) and fw.pair_count == 5
    assert "1 secret impossible under every scenario" in cal.summary()
    assert pp.audit(fw, query, cal.scale).epsilon <= 1.0 * (1 + 1e-9)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
@pytest.mark.parametrize("cls", SKIPPING, ids=lambda c: c.__name__)
def test_two_slot_days_starting_asleep_need_laplace_scale_one(cls: type) -> None:
    # Golden value. The fitted start is (1, 0) and P = [[1/2, 1/2], [1/2, 1/2]]; X_0 is always
    # asleep, so the count of awake slots is X_1 itself. The only pair left is X_1 = asleep vs
    # awake, whose laws of the count are point masses at 0 and 1: Laplace(b) leaks exactly 1/b
    # (so b = 2 leaks 0.5), and ε = 1 needs b = 1. MQM agrees: the quilt {X_0} leaves the
    # nearby set {X_1} (card 1) with influence 0 (X_0 never varies), σ = 1 / (1 - 0) = 1.
    days = [["asleep", "asleep", "awake"], ["asleep", "awake", "asleep"],
            ["asleep", "awake", "awake"], ["asleep", "asleep", "asleep"]]
    mc = pp.MarkovChainScenario.fit(days, length=2)
    assert mc.transition.tolist() == [[0.5, 0.5], [0.5, 0.5]]
    fw, query = pp.Framework(mc), pp.Count("awake")
    assert cls(epsilon=1.0).calibrate(fw, query).scale == pytest.approx(1.0, rel=1e-6)
    assert pp.audit(fw, query, 2.0).epsilon == pytest.approx(0.5, rel=1e-12)


def _network_with_a_state_that_never_occurs() -> pp.BayesianNetworkScenario:
    """rain -> wet -> alarm: rain always wets (a deterministic CPT column) and the alarm's
    state "broken" has probability 0 given either wet state."""
    from pgmpy.factors.discrete import TabularCPD
    from pgmpy.models import DiscreteBayesianNetwork

    yes_no = ["yes", "no"]
    model = DiscreteBayesianNetwork([("rain", "wet"), ("wet", "alarm")])
    model.add_cpds(
        TabularCPD("rain", 2, [[0.3], [0.7]], state_names={"rain": yes_no}),
        TabularCPD("wet", 2, [[1.0, 0.2], [0.0, 0.8]], evidence=["rain"], evidence_card=[2],
                   state_names={"wet": yes_no, "rain": yes_no}),
        TabularCPD("alarm", 3, [[0.2, 0.9], [0.8, 0.1], [0.0, 0.0]], evidence=["wet"],
                   evidence_card=[2],
                   state_names={"alarm": ["no", "yes", "broken"], "wet": yes_no}))
    return pp.BayesianNetworkScenario(model, name="rain")


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
@pytest.mark.parametrize("cls", SKIPPING, ids=lambda c: c.__name__)
def test_a_network_with_an_impossible_state_is_calibrated_on_the_rest(cls: type) -> None:
    fw = pp.Framework(_network_with_a_state_that_never_occurs())
    # "broken" has a zero row in the alarm's CPT, so P(alarm = broken) = 0; the other states
    # all have positive probability: pairs (rain), (wet) and (alarm = no, yes) are left
    assert fw.skipped_secrets == (("alarm", "broken"),)
    assert fw.pair_count == 3
    assert [str(p) for p in fw.pairs_of("alarm")] == ["(alarm=no, alarm=yes)"]
    query = pp.Count("yes")
    cal = cls(epsilon=1.0).calibrate(fw, query)   # ImpossibleSecretError before the fix
    assert pp.audit(fw, query, cal.scale).epsilon <= 1.0 * (1 + 1e-9)
