"""Calibration certificates: round trip, release elsewhere without recalibrating, refusals
(another model, other pairs, an edited document, a newer format) and re-proof by ``verify``."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import pufferfish_pgm as pp
from pufferfish_pgm.mechanisms._certificate import CertifiedEvidence, canonical, sha256

MODELS = Path(__file__).resolve().parents[1] / "models"
P = [[0.9, 0.1], [0.2, 0.8]]


def chain_fw(length: int = 6, transition=P) -> pp.Framework:
    return pp.Framework(pp.MarkovChainScenario(transition, "stationary", length,
                                               states=["rest", "walk"]))


def asia_fw() -> pp.Framework:
    bn = pp.BayesianNetworkScenario.from_file(MODELS / "asia.bif", name="asia")
    return pp.Framework(bn, pp.secret_pairs(bn, nodes=["lung", "tub"]))


def exact_text(fw: pp.Framework, query=None) -> tuple[pp.Calibration, str]:
    mech = pp.ExactLaplaceMechanism(epsilon=1.0)
    cal = mech.calibrate(fw, query or pp.Count("walk"))
    return cal, cal.to_json(mechanism=mech)


def reseal(doc: dict) -> str:
    """A document edited *and* given a matching self-fingerprint (what an attacker could do)."""
    body = {k: v for k, v in doc.items() if k != "fingerprint"}
    return json.dumps({**body, "fingerprint": sha256(body)})


@pytest.mark.parametrize("query", [pp.Count("walk"), pp.Histogram(),
                                   pp.LinearQuery({"rest": 1, "walk": 3}, nodes=[0, 2, 4])])
def test_round_trip_keeps_scale_query_and_evidence(query):
    fw = chain_fw()
    cal, text = exact_text(fw, query)
    back = pp.Calibration.from_json(text, fw)
    assert (back.mechanism, back.epsilon, back.scale) == (cal.mechanism, cal.epsilon, cal.scale)
    assert back.query == query and back.framework is fw
    ev = back.evidence
    assert isinstance(ev, CertifiedEvidence) and ev.source == "ExactEvidence"
    assert ev.audit_epsilon == cal.evidence.audit.epsilon
    assert ev.record["audit"]["epsilon"] == cal.evidence.audit.epsilon
    assert json.loads(text)["format"] == "pufferfish_pgm.calibration/1"
    # a certificate read back writes the same content again
    assert back.to_json() != "" and json.loads(back.to_json())["scale"] == cal.scale


def test_network_round_trip_and_release():
    fw = asia_fw()
    mech = pp.MarkovQuiltMechanism(epsilon=1.0)
    cal = mech.calibrate(fw, pp.Count("yes"))
    doc = json.loads(cal.to_json(mechanism=mech))
    assert doc["mechanism"]["parameters"]["max_window"] == 2048
    assert {k for k in doc["scenarios"][0]["parts"] if k.startswith("cpt ")} == {
        f"cpt {json.dumps(v)}" for v in fw.scenarios.nodes}
    back = pp.Calibration.from_json(json.dumps(doc), fw)
    record = {v: "yes" for v in fw.scenarios.nodes}
    rel = back.release(record, rng=np.random.default_rng(0))
    assert rel.scale == cal.scale and rel.mechanism == "MarkovQuilt"


def test_fingerprints_are_canonical_and_machine_independent():
    # float.hex: 0.1 is written exactly, and key order does not matter
    assert canonical({"b": [0.1.hex()], "a": 1}) == '{"a":1,"b":["0x1.999999999999ap-4"]}'
    fw1, fw2 = chain_fw(), chain_fw()
    assert json.loads(exact_text(fw1)[1])["scenarios"] == json.loads(
        exact_text(fw2)[1])["scenarios"]


def test_written_by_one_process_released_by_another_without_calibrating(tmp_path):
    fw = chain_fw()
    cal, text = exact_text(fw)
    path = tmp_path / "cal.json"
    path.write_text(text)
    script = textwrap.dedent(f"""
        import json, sys
        import numpy as np
        import pufferfish_pgm as pp
        from pufferfish_pgm.mechanisms import base, exact, _registry
        from pufferfish_pgm import privacy_loss

        def boom(*a, **k):
            raise AssertionError("recalibrated")

        for cls in list(_registry._BY_NAME.values()) + [pp.MQMApproxMechanism]:
            cls.calibrate = boom
        exact.smallest_passing_scale = boom
        privacy_loss.audit = boom
        fw = pp.Framework(pp.MarkovChainScenario({P!r}, "stationary", 6,
                                                 states=["rest", "walk"]))
        cal = pp.Calibration.from_json(open(sys.argv[1]).read(), fw)
        rel = cal.release(["walk"] * 6, rng=np.random.default_rng(1))
        print(json.dumps({{"scale": rel.scale, "value": float(rel.value)}}))
    """)
    proc = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["scale"] == cal.scale
    here = cal.release(["walk"] * 6, rng=np.random.default_rng(1))
    assert out["value"] == pytest.approx(float(here.value))


def test_a_changed_cpt_entry_is_refused_naming_scenario_and_node():
    fw = asia_fw()
    _, text = exact_text(fw, pp.Count("yes", nodes=["lung", "tub", "either"]))
    bn = fw.scenarios[0]
    cpts = dict(bn.tables.cpts)
    table = cpts["dysp"].copy()
    table[:, 0, 0] = [table[0, 0, 0] - 0.01, table[1, 0, 0] + 0.01]  # one column, one entry
    cpts["dysp"] = table
    other = dataclasses.replace(bn, tables=dataclasses.replace(bn.tables, cpts=cpts))
    fw2 = pp.Framework(other, fw.pairs)
    with pytest.raises(pp.CertificateError,
                       match=r"scenario 0 \('asia'.*the CPT of node \"dysp\" differs"):
        pp.Calibration.from_json(text, fw2)


def test_a_changed_transition_entry_is_refused():
    _, text = exact_text(chain_fw())
    with pytest.raises(pp.CertificateError, match=r"scenario 0 .*the transition"):
        pp.Calibration.from_json(text, chain_fw(transition=[[0.9, 0.1], [0.2 + 1e-12,
                                                                          0.8 - 1e-12]]))
    with pytest.raises(pp.CertificateError, match=r"length \(certified 6, given 7\)"):
        pp.Calibration.from_json(text, chain_fw(length=7))


def test_a_changed_pair_set_is_refused():
    fw = chain_fw()
    _, text = exact_text(fw)
    fewer = pp.Framework(fw.scenarios, pp.secret_pairs(fw.scenarios, nodes=[0, 1, 2]))
    with pytest.raises(pp.CertificateError, match="secret pairs differ"):
        pp.Calibration.from_json(text, fewer)
    # the same pairs listed explicitly (and in another order) are the same pairs
    same = pp.Framework(fw.scenarios, list(reversed(pp.secret_pairs(fw.scenarios))))
    assert pp.Calibration.from_json(text, same).scale == json.loads(text)["scale"]


@pytest.mark.parametrize("field, value", [("epsilon", 2.0), ("scale", 0.5)])
def test_an_edited_epsilon_or_scale_is_refused(field, value):
    fw = chain_fw()
    _, text = exact_text(fw)
    doc = json.loads(text)
    doc[field] = value
    with pytest.raises(pp.CertificateError, match="tampered with"):
        pp.Calibration.from_json(json.dumps(doc), fw)


def test_a_future_format_is_refused():
    fw = chain_fw()
    _, text = exact_text(fw)
    doc = json.loads(text)
    doc["format"] = "pufferfish_pgm.calibration/2"
    with pytest.raises(pp.CertificateError, match=r"newer .*upgrade pufferfish_pgm"):
        pp.Calibration.from_json(reseal(doc), fw)
    with pytest.raises(pp.CertificateError, match="not a calibration certificate"):
        pp.Calibration.from_json("{}", fw)
    with pytest.raises(pp.CertificateError, match="invalid JSON"):
        pp.Calibration.from_json("not json", fw)


def test_verify_holds_for_exact_and_fails_for_entry_dp_on_a_correlated_chain():
    fw = chain_fw(length=8)
    _, text = exact_text(fw)
    ok = pp.verify(text, fw)
    assert ok.holds and ok.audited_epsilon <= 1.0 + 1e-9 and "holds" in ok.message
    entry = pp.EntryDPMechanism(epsilon=1.0)
    bad = pp.verify(entry.calibrate(fw, pp.Count("walk")).to_json(mechanism=entry), fw)
    assert not bad.holds and bad.audited_epsilon > 1.0 and "does NOT hold" in bad.message


def test_verify_replans_markov_quilts_and_catches_a_resealed_smaller_scale():
    fw = chain_fw(length=30)
    mech = pp.MarkovQuiltMechanism(epsilon=1.0)
    cal = mech.calibrate(fw, pp.Count("walk"))
    text = cal.to_json(mechanism=mech)
    report = pp.verify(text, fw)
    assert report.holds and report.replanned_scale == pytest.approx(cal.scale)
    # a forger who recomputes the self-fingerprint passes from_json but not verify
    doc = json.loads(text)
    doc["scale"] = cal.scale / 10
    forged = reseal(doc)
    assert pp.Calibration.from_json(forged, fw).scale == cal.scale / 10
    report = pp.verify(forged, fw)
    assert not report.holds and "MORE than certified" in report.message


def test_a_mismatched_mechanism_or_uncertifiable_calibration_is_refused():
    fw = chain_fw()
    cal = pp.GroupDPMechanism(epsilon=1.0).calibrate(fw, pp.Count("walk"))
    with pytest.raises(pp.CertificateError, match="not the one that made"):
        cal.to_json(mechanism=pp.GroupDPMechanism(epsilon=0.5))
