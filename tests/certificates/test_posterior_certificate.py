"""Certificates of a class drawn from a posterior (docs/posterior.md): the record is written
(never the counts), ``verify`` redraws the class from the counts and compares fingerprints,
and what cannot carry the coverage statement is refused."""

from __future__ import annotations

import dataclasses
import json

import pytest

import pufferfish_pgm as pp
from pufferfish_pgm.certificates._document import sha256

pytestmark = pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")

DAYS = [["rest", "walk", "walk", "rest", "rest"], ["walk", "walk", "rest", "rest", "walk"]]


def posterior_cls(seed: int = 7) -> pp.ScenarioClass:
    return pp.ScenarioClass.from_posterior(DAYS, coverage=0.8, confidence=0.9, seed=seed)


def certified(cls: pp.ScenarioClass) -> tuple[pp.Framework, str]:
    fw = pp.Framework(cls)
    mech = pp.ExactLaplaceMechanism(epsilon=1.0)
    return fw, mech.calibrate(fw, pp.Count("walk")).to_json(mechanism=mech)


def with_record(cls: pp.ScenarioClass, **changes: object) -> pp.ScenarioClass:
    """The same members carrying an edited posterior record."""
    out = pp.ScenarioClass(list(cls))
    object.__setattr__(out, "posterior", dataclasses.replace(cls.posterior, **changes))
    return out


def test_certificate_records_the_posterior_and_verify_redraws_it() -> None:
    cls = posterior_cls()
    fw, text = certified(cls)
    doc = json.loads(text)["posterior"]
    assert (doc["prior"], doc["draws"], doc["coverage"], doc["confidence"], doc["seed"],
            doc["length"]) == (1.0, 11, 0.8, 0.9, "7", 5)      # 0.8^11 = 0.086 <= 0.1 < 0.8^10
    assert doc["counts_sha256"] == cls.posterior.counts_sha256
    assert "transitions" not in json.dumps(doc)               # the counts stay private
    report = pp.verify(text, fw)
    assert report.holds and report.redrawn is True
    assert "redrawn from the counts (11 draws, seed 7): every member matches" in report.message
    assert "posterior mass" in report.message


def test_a_class_drawn_from_other_counts_fails_the_redraw() -> None:
    """Same members, same recorded fingerprint, but the counts it carries are not the
    certified ones: the redraw cannot reproduce the class, so the coverage does not hold."""
    cls = posterior_cls()
    _, text = certified(cls)
    other = pp.transition_counts([["rest", "rest", "walk", "walk", "walk"]])
    forged = with_record(cls, counts=other)
    report = pp.verify(text, pp.Framework(forged))
    assert not report.holds and report.redrawn is False
    assert "NOT the certified class" in report.message


def test_a_record_with_another_seed_is_refused_naming_it() -> None:
    cls = posterior_cls()
    _, text = certified(cls)
    with pytest.raises(pp.CertificateError, match="seed = 99.*posterior.seed = 7"):
        pp.Calibration.from_json(text, pp.Framework(with_record(cls, seed=99)))


def test_verify_needs_the_counts_but_from_json_does_not() -> None:
    cls = posterior_cls()
    _, text = certified(cls)
    plain = pp.Framework(pp.ScenarioClass(list(cls)))        # same members, no record
    assert pp.Calibration.from_json(text, plain).scale > 0
    with pytest.raises(pp.CertificateError, match="from_posterior"):
        pp.verify(text, plain)


def test_too_few_draws_for_the_coverage_is_refused() -> None:
    cls = posterior_cls()
    fw, text = certified(cls)
    doc = json.loads(text)
    doc["posterior"]["coverage"] = 0.95                      # needs 45 draws, not 11
    doc["fingerprint"] = sha256({k: v for k, v in doc.items() if k != "fingerprint"})
    with pytest.raises(pp.CertificateError, match="posterior.draws is 11, fewer than the 45"):
        pp.verify(json.dumps(doc), fw)


def test_a_plain_class_writes_no_posterior() -> None:
    fw = pp.Framework(pp.MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 5))
    text = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(fw, pp.Count(1)).to_json()
    assert "posterior" not in json.loads(text)
    assert pp.verify(text, fw).redrawn is None


def test_integer_noise_on_a_posterior_class_is_not_certified() -> None:
    """Optimal noise is not one Laplace scale: the coverage statement does not cover it."""
    cls = pp.ScenarioClass.from_posterior([[0, 1, 1], [1, 1, 0]], coverage=0.5,
                                          confidence=0.5, seed=1)
    cal = pp.OptimalNoiseMechanism(epsilon=1.0).calibrate(pp.Framework(cls), pp.Count(1))
    with pytest.raises(pp.CertificateError, match="integer .*noise on a class drawn from a"):
        cal.to_json()


def test_a_time_varying_class_round_trips_and_verify_redraws_its_blocks() -> None:
    """period and shrinkage are recorded, read back and redrawn: to_json -> from_json ->
    verify on a class of hourly-style chains (blocks of 2 slots)."""
    cls = pp.ScenarioClass.from_posterior(DAYS, period=2, shrinkage=3.0, coverage=0.8,
                                          confidence=0.9, seed=7)
    fw, text = certified(cls)
    doc = json.loads(text)["posterior"]
    assert (doc["period"], doc["shrinkage"]) == (2, 3.0)
    assert "block of 2 slots shrunk by 3.0" in doc["statement"]
    assert pp.Calibration.from_json(text, fw).scale > 0
    report = pp.verify(text, fw)
    assert report.holds and report.redrawn is True
    with pytest.raises(pp.CertificateError, match="shrinkage = 4.0.*posterior.shrinkage = 3.0"):
        pp.Calibration.from_json(text, pp.Framework(with_record(cls, shrinkage=4.0)))
    homogeneous = json.loads(certified(posterior_cls())[1])["posterior"]
    assert "period" not in homogeneous and "shrinkage" not in homogeneous


def test_a_record_drawn_with_another_shrinkage_fails_the_redraw() -> None:
    """Same members, but the record says another shrinkage: its redraw differs."""
    cls = pp.ScenarioClass.from_posterior(DAYS, period=2, shrinkage=3.0, coverage=0.8,
                                          confidence=0.9, seed=7)
    _, text = certified(cls)
    doc = json.loads(text)
    doc["posterior"]["shrinkage"] = 5.0                       # re-sealed, as a forger would
    doc["fingerprint"] = sha256({k: v for k, v in doc.items() if k != "fingerprint"})
    forged = with_record(cls, shrinkage=5.0)
    report = pp.verify(json.dumps(doc), pp.Framework(forged))
    assert not report.holds and report.redrawn is False
