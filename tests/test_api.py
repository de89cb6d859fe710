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


@pytest.mark.parametrize("name", NAMES_0_1_0)
def test_every_name_of_0_1_0_still_works(name: str) -> None:
    assert name in pp.__all__ and getattr(pp, name) is not None


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
