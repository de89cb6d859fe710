"""memberwise_scale (accountant/_memberwise.py): the class scale member by member with a
running maximum equals the exact calibration of the whole class, and is proven by the audit."""

from __future__ import annotations

import pytest

import pufferfish_pgm as pp
from pufferfish_pgm.accountant._memberwise import memberwise_scale

pytestmark = pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_exact_member_by_member_equals_the_whole_class(seed: int) -> None:
    cls = pp.ScenarioClass.from_posterior([[0, 1, 1, 0, 1, 1, 0], [1, 1, 0, 0, 0, 1, 1]],
                                          coverage=0.8, confidence=0.95, seed=seed)
    fw, mech = pp.Framework(cls), pp.ExactLaplaceMechanism(epsilon=1.0)
    out = memberwise_scale(mech, fw, pp.Count(1))
    whole = mech.calibrate(fw, pp.Count(1)).scale
    assert out.scale == pytest.approx(whole, rel=1e-9)
    assert pp.audit(fw, pp.Count(1), out.scale).epsilon <= 1.0 * (1 + 1e-9)
    # it pruned: ~sqrt(n) members calibrated, every other one audited at least once
    assert out.calibrated < len(cls) and out.calibrated + out.audited >= len(cls)
    assert out.binding in [m.name for m in cls]


def test_mqm_member_by_member_is_private_and_no_larger() -> None:
    cls = pp.ScenarioClass.from_posterior([[0, 1, 1, 0, 1, 1, 0, 0] * 3], coverage=0.7,
                                          confidence=0.9, seed=5)
    fw, mech = pp.Framework(cls), pp.MarkovQuiltMechanism(epsilon=1.0)
    out = memberwise_scale(mech, fw, pp.Count(1))
    assert out.scale <= mech.calibrate(fw, pp.Count(1)).scale * (1 + 1e-12)
    assert out.calibrated == len(cls)
    assert pp.audit(fw, pp.Count(1), out.scale).epsilon <= 1.0 * (1 + 1e-9)


def test_refuses_what_is_not_a_mechanism() -> None:
    fw = pp.Framework(pp.MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 4))
    with pytest.raises(pp.ParameterTypeError, match="takes a Mechanism and a Framework"):
        memberwise_scale("exact", fw, pp.Count(1))      # type: ignore[arg-type]


def test_an_executor_gives_the_same_scale() -> None:
    from concurrent.futures import ThreadPoolExecutor

    cls = pp.ScenarioClass.from_posterior([[0, 1, 1, 0, 1, 1, 0]], coverage=0.7,
                                          confidence=0.9, seed=9)
    fw, mech = pp.Framework(cls), pp.ExactLaplaceMechanism(epsilon=1.0)
    with ThreadPoolExecutor(2) as pool:
        parallel = memberwise_scale(mech, fw, pp.Count(1), executor=pool)
    assert parallel == memberwise_scale(mech, fw, pp.Count(1))


@pytest.mark.parametrize("mechanism", [pp.ExactLaplaceMechanism, pp.MarkovQuiltMechanism])
def test_also_measures_the_class_realised_epsilon_at_other_scales(mechanism: type) -> None:
    """The class's realised ε at extra scales, measured in the same pass, is the audit of the
    whole class at each (the largest over members), time-varying members included."""
    days = [[0, 1, 1, 0, 1, 1, 0, 0], [1, 1, 0, 0, 0, 1, 1, 1]]
    cls = pp.ScenarioClass.from_posterior(days, period=3, coverage=0.7, confidence=0.9, seed=4)
    fw, query = pp.Framework(cls), pp.Count(1)
    out = memberwise_scale(mechanism(epsilon=1.0), fw, query, also=(0.5, 2.0, 9.0))
    assert out.also == pytest.approx([pp.audit(fw, query, s).epsilon for s in (0.5, 2.0, 9.0)],
                                     rel=1e-12)
    with pytest.raises(pp.InvalidParameterError, match="also"):
        memberwise_scale(mechanism(epsilon=1.0), fw, query, also=(0.0,))
