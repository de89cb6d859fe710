"""The mechanism contract, checked once for every framework mechanism of the package.

Every ``…Mechanism`` that ``pufferfish_pgm`` exports is a frozen dataclass with a keyword-only
``epsilon``, validates every option when it is made (a ``PufferfishError`` naming the option),
calibrates to a ``Calibration`` whose evidence is the typed record of its family, pickles and
reprs, and refuses what it cannot do with a ``PufferfishError`` (never a raw exception). The
per-mechanism test files hold only what is particular to each mechanism.
"""

from __future__ import annotations

import dataclasses
import math
import pickle

import numpy as np
import pytest

import pufferfish_pgm as pp
from pufferfish_pgm.errors import PufferfishError, UsefulnessWarning
from pufferfish_pgm.mechanisms import evidence as ev

pytestmark = pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")

MECHANISMS = sorted((getattr(pp, n) for n in pp.__all__ if n.endswith("Mechanism")
                     and n != "Mechanism"), key=lambda cls: cls.__name__)

#: The evidence record of each mechanism family (mechanisms/evidence.py's table).
EVIDENCE = {
    "BlowfishLaplaceMechanism": ev.BlowfishEvidence, "EntryDPMechanism": ev.BaselineEvidence,
    "ExactLaplaceMechanism": ev.ExactEvidence, "ExactQuiltMechanism": ev.ExactQuiltEvidence,
    "GK16Mechanism": ev.BaselineEvidence, "GroupDPMechanism": ev.BaselineEvidence,
    "KantorovichMechanism": ev.DistanceEvidence, "MQMApproxMechanism": ev.QuiltEvidence,
    "MarkovQuiltMechanism": ev.QuiltEvidence, "OptimalNoiseMechanism": ev.OptimalNoiseEvidence,
    "WassersteinMechanism": ev.DistanceEvidence,
}

# A correlated chain every mechanism but two calibrates; GK16 needs weak correlation and
# Blowfish independent records (rows all equal), so each gets a model it applies to.
CHAIN = pp.MarkovChainScenario([[0.8, 0.2], [0.3, 0.7]], "stationary", 4)
WEAK = pp.MarkovChainScenario([[0.55, 0.45], [0.45, 0.55]], "stationary", 4)
IID = pp.MarkovChainScenario([[0.7, 0.3], [0.7, 0.3]], [0.7, 0.3], 4)
HOME = {"GK16Mechanism": WEAK, "BlowfishLaplaceMechanism": IID}
#: Models a mechanism refuses, with a word its message must contain.
REFUSED = {"GK16Mechanism": (CHAIN, "spectral norm"),
           "BlowfishLaplaceMechanism": (CHAIN, "independent records")}


def _framework(cls: type) -> pp.Framework:
    return pp.Framework(HOME.get(cls.__name__, CHAIN))


def test_the_contract_covers_every_exported_mechanism() -> None:
    # a mechanism added to the package without a row here fails this test, not silently
    assert {cls.__name__ for cls in MECHANISMS} == set(EVIDENCE)
    assert all(issubclass(cls, pp.Mechanism) for cls in MECHANISMS)


@pytest.mark.parametrize("cls", MECHANISMS, ids=lambda c: c.__name__)
def test_epsilon_is_keyword_only_and_required(cls: type) -> None:
    with pytest.raises(TypeError):
        cls(1.0)
    with pytest.raises(TypeError):
        cls()


@pytest.mark.parametrize("cls", MECHANISMS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("bad", [0.0, -1.0, math.nan, math.inf, "1", True, None, 1 + 2j])
def test_a_bad_epsilon_is_refused_by_name(cls: type, bad: object) -> None:
    with pytest.raises(PufferfishError, match="epsilon"):
        cls(epsilon=bad)


def _options(cls: type) -> list[tuple[str, object]]:
    """(field, bad value) for every option with a number or a bool as its default."""
    cases = []
    for f in dataclasses.fields(cls):
        if f.name == "epsilon" or f.default is dataclasses.MISSING:
            continue
        if isinstance(f.default, bool):
            cases += [(f.name, "yes"), (f.name, 2)]
        elif isinstance(f.default, (int, float)):
            cases += [(f.name, "x"), (f.name, -1), (f.name, math.nan), (f.name, True)]
    return cases


OPTION_CASES = [(cls, name, bad) for cls in MECHANISMS for name, bad in _options(cls)]


@pytest.mark.parametrize("cls, name, bad", OPTION_CASES,
                         ids=[f"{c.__name__}-{n}-{b!r}" for c, n, b in OPTION_CASES])
def test_a_bad_option_is_refused_by_name(cls: type, name: str, bad: object) -> None:
    with pytest.raises(PufferfishError, match=name):
        cls(epsilon=1.0, **{name: bad})


@pytest.mark.parametrize("cls", MECHANISMS, ids=lambda c: c.__name__)
def test_a_mechanism_is_frozen_hashable_and_pickles(cls: type) -> None:
    mech = cls(epsilon=0.5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        mech.epsilon = 2.0  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(mech)) == mech
    assert hash(mech) == hash(cls(epsilon=0.5))
    assert repr(mech).startswith(f"{cls.__name__}(epsilon=0.5")


@pytest.mark.parametrize("cls", MECHANISMS, ids=lambda c: c.__name__)
def test_calibrate_returns_typed_evidence_that_pickles(cls: type) -> None:
    mech = cls(epsilon=1.0)
    cal = mech.calibrate(_framework(cls), pp.Count(1))
    assert isinstance(cal, pp.Calibration)
    assert type(cal.evidence) is EVIDENCE[cls.__name__]
    assert cal.mechanism == mech.name and cal.epsilon == 1.0
    again = pickle.loads(pickle.dumps(cal))
    assert again.evidence == cal.evidence
    assert again.scale == cal.scale or (np.isnan(again.scale) and np.isnan(cal.scale))
    with pytest.raises(dataclasses.FrozenInstanceError):
        cal.scale = 0.0  # type: ignore[misc]


@pytest.mark.parametrize("cls", MECHANISMS, ids=lambda c: c.__name__)
def test_calibrate_refuses_what_is_not_a_framework_or_a_query(cls: type) -> None:
    mech = cls(epsilon=1.0)
    with pytest.raises(PufferfishError, match="[Ff]ramework"):
        mech.calibrate(CHAIN, pp.Count(1))
    with pytest.raises(PufferfishError, match="query must be"):
        mech.calibrate(_framework(cls), "count")


@pytest.mark.parametrize("cls", MECHANISMS, ids=lambda c: c.__name__)
def test_a_query_on_an_unknown_state_is_refused_by_name(cls: type) -> None:
    with pytest.raises(PufferfishError, match="sleeping"):
        cls(epsilon=1.0).calibrate(_framework(cls), pp.Count("sleeping"))


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_model_a_mechanism_does_not_cover_is_refused_with_the_reason(name: str) -> None:
    model, word = REFUSED[name]
    with pytest.raises(PufferfishError, match=word):
        getattr(pp, name)(epsilon=1.0).calibrate(pp.Framework(model), pp.Count(1))


def test_a_useless_calibration_warns() -> None:
    # ε = 0.05 on four nodes: every mechanism's noise is larger than the count's spread
    with pytest.warns(UsefulnessWarning):
        pp.GroupDPMechanism(epsilon=0.05).calibrate(pp.Framework(CHAIN), pp.Count(1))
