"""The typed mechanism contract: the Query protocol and one frozen evidence record per family."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

import pufferfish_pgm as pp
from pufferfish_pgm import mechanisms
from pufferfish_pgm.errors import ParameterTypeError, PufferfishError
from pufferfish_pgm.mechanisms import (
    AuditedEvidence,
    BaselineEvidence,
    BlowfishEvidence,
    Calibration,
    DistanceEvidence,
    Evidence,
    EvidenceKeyError,
    ExactEvidence,
    ExactQuiltEvidence,
    OptimalNoiseEvidence,
    QuiltEvidence,
    WorstPair,
)
from pufferfish_pgm.mechanisms._registry import EXTRA_NAMES, MECHANISM_ORDER, mechanism
from pufferfish_pgm.queries import Count, Histogram, LinearQuery, Query, WeightedQuery
from pufferfish_pgm.scenarios import MarkovChainScenario
from pufferfish_pgm.secrets import Framework

CHAIN = MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 5)
IID = MarkovChainScenario([[0.7, 0.3], [0.7, 0.3]], "stationary", 4)
FAMILY = {"entry": BaselineEvidence, "group": BaselineEvidence, "mqm": QuiltEvidence,
          "wasserstein": DistanceEvidence, "kantorovich": DistanceEvidence,
          "kantorovich-relaxed": DistanceEvidence, "exact": ExactEvidence,
          "exact-quilt": ExactQuiltEvidence, "optimal": OptimalNoiseEvidence,
          "gk16": BaselineEvidence}
RECORDS = [QuiltEvidence, ExactEvidence, DistanceEvidence, BaselineEvidence, BlowfishEvidence,
           AuditedEvidence, WorstPair, OptimalNoiseEvidence]


@pytest.fixture(scope="module")
def calibrations() -> dict[str, Calibration]:
    fw = Framework(CHAIN)
    weak = Framework(MarkovChainScenario([[0.6, 0.4], [0.4, 0.6]], "stationary", 5))
    out = {name: mechanism(name, 1.0).calibrate(weak if name == "gk16" else fw, Count(1))
           for name in MECHANISM_ORDER + EXTRA_NAMES}   # GK16 needs weak correlation
    out["mqm-approx"] = pp.MQMApproxMechanism(epsilon=1.0).calibrate(fw, Count(1))
    out["blowfish"] = pp.BlowfishLaplaceMechanism(epsilon=1.0).calibrate(Framework(IID),
                                                                          Count(1))
    return out


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_every_registered_mechanism_has_a_record_for_its_family(calibrations) -> None:
    assert set(FAMILY) == set(MECHANISM_ORDER) | set(EXTRA_NAMES)
    for name, family in FAMILY.items():
        assert type(calibrations[name].evidence) is family, name
    assert type(calibrations["mqm-approx"].evidence) is QuiltEvidence
    assert type(calibrations["blowfish"].evidence) is BlowfishEvidence


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_records_are_frozen_and_read_by_attribute_or_name(calibrations) -> None:
    ev = calibrations["exact"].evidence
    assert ev["audit"] is ev.audit and ev.audit.passes(1.0)
    assert "bisection_steps" in ev and "sigma_max" not in ev
    with pytest.raises(dataclasses.FrozenInstanceError):
        ev.audit = None
    with pytest.raises(TypeError, match="not iterable"):
        list(ev)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_an_unknown_name_is_a_key_error_listing_the_fields(calibrations) -> None:
    ev = calibrations["mqm"].evidence
    with pytest.raises(KeyError, match="QuiltEvidence has no field 'audit'") as info:
        ev["audit"]
    assert isinstance(info.value, (EvidenceKeyError, PufferfishError))
    assert "sigma_max" in str(info.value) and "worst_node" in str(info.value)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_values_match_the_mechanism(calibrations) -> None:
    mqm, approx = calibrations["mqm"], calibrations["mqm-approx"]
    assert mqm.scale == pytest.approx(mqm.evidence.lipschitz * mqm.evidence.sigma_max)
    assert mqm.evidence.planner == "chain" and mqm.evidence.pi_min is None
    assert approx.evidence.planner == "approx" and 0 < approx.evidence.pi_min <= 0.5
    w = calibrations["wasserstein"].evidence
    assert isinstance(w.worst, WorstPair) and w.worst["theta"] == w.worst.theta == 0
    assert w.distance == 5.0 and len(w.distances) == len(Framework(CHAIN).pairs)
    assert calibrations["kantorovich"].evidence.distances == ()
    relaxed = calibrations["kantorovich-relaxed"]
    assert relaxed.evidence.relaxed_theta == relaxed.scale
    group, entry = calibrations["group"].evidence, calibrations["entry"].evidence
    assert (group.group_size, group.warning) == (5, "")
    assert entry.group_size is None and "not Pufferfish private" in entry.warning
    assert calibrations["blowfish"].evidence.sensitivity == 1.0


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r.__name__)
def test_every_field_is_documented(record) -> None:
    doc = record.__doc__ or ""
    for f in dataclasses.fields(record):
        line = rf"^\s+(\w+, )*{f.name}(, \w+)* : "   # numpydoc: "name : type" or "a, b : ..."
        assert re.search(line, doc, re.M), f"{record.__name__}.{f.name} is not documented"


def test_every_record_is_exported() -> None:
    for record in [Evidence, EvidenceKeyError, *RECORDS]:
        assert getattr(mechanisms, record.__name__) is record


def test_a_handmade_calibration_has_empty_evidence() -> None:
    cal = Calibration(mechanism="by hand", epsilon=1.0, scale=2.0, query=Count(1),
                      framework=Framework(CHAIN))
    assert cal.evidence == Evidence() and "audit" not in cal.evidence
    with pytest.raises(KeyError, match="fields are: none"):
        cal.evidence["audit"]
    assert pp.PrivacyAccountant().record(cal).epsilon == 1.0


# ----------------------------------------------------------------------------- Query protocol

class Tally:
    """A query written outside the library: only the Query protocol."""

    name = "tally"
    nodes = None

    def node_list(self, scenarios):
        return tuple(scenarios.nodes)

    def lipschitz_for(self, scenarios):
        return 3.0


def test_queries_satisfy_the_protocol() -> None:
    for query in (Count(1), LinearQuery({0: 2, 1: -1}), Histogram(), Tally()):
        assert isinstance(query, Query)
    assert isinstance(Count(1), WeightedQuery) and isinstance(LinearQuery({0: 1}), WeightedQuery)
    assert not isinstance(Histogram(), WeightedQuery) and not isinstance(Tally(), WeightedQuery)
    assert not isinstance("count(1)", Query)


def test_mechanisms_need_only_the_protocol() -> None:
    cal = pp.GroupDPMechanism(epsilon=1.0).calibrate(Framework(CHAIN), Tally())
    assert cal.scale == 15.0 and cal.evidence.lipschitz == 3.0
    with pytest.raises(ParameterTypeError, match="weight_table"):
        cal.release([0, 1, 1, 0, 1], rng=np.random.default_rng(0))
    with pytest.raises(ParameterTypeError, match="query must be a Count"):
        pp.GroupDPMechanism(epsilon=1.0).calibrate(Framework(CHAIN), object())
