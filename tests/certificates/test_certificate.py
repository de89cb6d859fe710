"""Calibration certificates: round trip, release elsewhere without recalibrating, refusals
(another model, other pairs, an edited document, a newer format) and re-proof by ``verify``."""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from helpers import ROOT

import pufferfish_pgm as pp
from pufferfish_pgm.certificates._document import CertifiedEvidence, canonical, sha256
from pufferfish_pgm.noise import IntegerNoise

MODELS = ROOT / "models"
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
@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
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


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
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


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_fingerprints_are_canonical_and_machine_independent():
    # float.hex: 0.1 is written exactly, and key order does not matter
    assert canonical({"b": [0.1.hex()], "a": 1}) == '{"a":1,"b":["0x1.999999999999ap-4"]}'
    fw1, fw2 = chain_fw(), chain_fw()
    assert json.loads(exact_text(fw1)[1])["scenarios"] == json.loads(
        exact_text(fw2)[1])["scenarios"]


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
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


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
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


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_a_changed_transition_entry_is_refused():
    _, text = exact_text(chain_fw())
    with pytest.raises(pp.CertificateError, match=r"scenario 0 .*the transition"):
        pp.Calibration.from_json(text, chain_fw(transition=[[0.9, 0.1], [0.2 + 1e-12,
                                                                          0.8 - 1e-12]]))
    with pytest.raises(pp.CertificateError, match=r"length \(certified 6, given 7\)"):
        pp.Calibration.from_json(text, chain_fw(length=7))


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_a_changed_pair_set_is_refused():
    fw = chain_fw()
    _, text = exact_text(fw)
    fewer = pp.Framework(fw.scenarios, pp.secret_pairs(fw.scenarios, nodes=[0, 1, 2]))
    with pytest.raises(pp.CertificateError, match="secret pairs differ"):
        pp.Calibration.from_json(text, fewer)
    # the same pairs listed explicitly (and in another order) are the same pairs
    same = pp.Framework(fw.scenarios, list(reversed(pp.secret_pairs(fw.scenarios))))
    assert pp.Calibration.from_json(text, same).scale == json.loads(text)["scale"]


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
@pytest.mark.parametrize("field, value", [("epsilon", 2.0), ("scale", 0.5)])
def test_an_edited_epsilon_or_scale_is_refused(field, value):
    fw = chain_fw()
    _, text = exact_text(fw)
    doc = json.loads(text)
    doc[field] = value
    with pytest.raises(pp.CertificateError, match="tampered with"):
        pp.Calibration.from_json(json.dumps(doc), fw)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
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


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_verify_holds_for_exact_and_fails_for_entry_dp_on_a_correlated_chain():
    fw = chain_fw(length=8)
    _, text = exact_text(fw)
    ok = pp.verify(text, fw)
    assert ok.holds and ok.audited_epsilon <= 1.0 + 1e-9 and "holds" in ok.message
    entry = pp.EntryDPMechanism(epsilon=1.0)
    bad = pp.verify(entry.calibrate(fw, pp.Count("walk")).to_json(mechanism=entry), fw)
    assert not bad.holds and bad.audited_epsilon > 1.0 and "does NOT hold" in bad.message


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
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


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_a_mismatched_mechanism_or_uncertifiable_calibration_is_refused():
    fw = chain_fw()
    cal = pp.GroupDPMechanism(epsilon=1.0).calibrate(fw, pp.Count("walk"))
    with pytest.raises(pp.CertificateError, match="not the one that made"):
        cal.to_json(mechanism=pp.GroupDPMechanism(epsilon=0.5))


# ------------------------------------------------ optimal integer noise (issue 14, item 1)

#: A certificate written by the format's first reader/writer (before integer noise): it must
#: still load, and a Laplace certificate is still written the same way.
OLD_GROUP_DP = (
    '{"format":"pufferfish_pgm.calibration/1","library":{"name":"pufferfish_pgm","version":'
    '"0.1.0"},"mechanism":{"name":"GroupDP","class":"GroupDPMechanism","parameters":{}},'
    '"epsilon":1.0,"scale":6.0,"query":{"type":"Count","state":"walk","nodes":null},'
    '"query_name":"count(walk)","scenarios":[{"index":0,"name":"chain","kind":"chain","sha256":'
    '"sha256:bc0dca1b872ab5e687621ff2605ae10042e468b134037b1fc8bbfd242356dbe0","parts":{'
    '"transition":"sha256:b69765cc53e5417583fc42f5aed2ce8f595225c680ea7363ed12d8dbc47a95e3",'
    '"initial":"sha256:c62d69b50186a083a2d0e94df48edd487f7ef31a1fa622159ed66e226d90b0fb",'
    '"length":"sha256:e7f6c011776e8db7cd330b54174fd76f7d0216b612387a5ffcfb81e6f0919683",'
    '"states":"sha256:57600f0689a33a62cc6ad473e2f9905df11e04701077ae859d207b77fd1362a4"},'
    '"length":6}],"pairs":{"count":6,"description":"6 pairs, fingerprinted one by one",'
    '"sha256":"sha256:20e965e5cc0bb5d74135bbfe17fa61bb4f761a6fe4aaba0e3a7584736d0925b1"},'
    '"evidence":{"type":"BaselineEvidence","record":{"lipschitz":1.0,"sigma":6.0,"formula":'
    '"L * n / epsilon","group_size":6,"warning":""}},"audit_epsilon":null,"fingerprint":'
    '"sha256:70a8b95ad4fa969b802881711182974f61f0b6a21b65506f0b5410611e391915"}')


def optimal_text(fw: pp.Framework, **kwargs) -> tuple[pp.Calibration, str]:
    mech = pp.OptimalNoiseMechanism(epsilon=1.0, **kwargs)
    cal = mech.calibrate(fw, pp.Count("walk"))
    return cal, cal.to_json(mechanism=mech)


def test_old_documents_still_load_and_laplace_certificates_are_written_as_before():
    fw = chain_fw()
    cal = pp.Calibration.from_json(OLD_GROUP_DP, fw)
    assert type(cal) is pp.Calibration and cal.scale == 6.0 and cal.mechanism == "GroupDP"
    mech = pp.GroupDPMechanism(epsilon=1.0)
    with pytest.warns(pp.UsefulnessWarning):      # scale 6 on a count whose sd is 2.1
        new = json.loads(mech.calibrate(fw, pp.Count("walk")).to_json(mechanism=mech))
    old = json.loads(OLD_GROUP_DP)
    assert "noise" not in new and "usefulness" not in old     # the optional field is new
    assert new["usefulness"]["spread"] == pytest.approx(2.123, abs=1e-3)
    skip = ("library", "fingerprint", "usefulness")
    assert {k: v for k, v in new.items() if k not in skip} == {
        k: v for k, v in old.items() if k not in skip}


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_optimal_noise_round_trip_is_bit_for_bit_and_releases_the_same_noise():
    fw = chain_fw(length=8)
    cal, text = optimal_text(fw)
    doc = json.loads(text)
    assert doc["format"] == "pufferfish_pgm.calibration/1" and doc["scale"] is None
    noise = doc["noise"]
    assert noise["weights"] == [str(c) for c in cal.noise.weights]
    assert noise["denominator"] == str(cal.noise.total) and noise["lo"] == cal.noise.lo
    assert noise["loss"] == "abs" and noise["dp_epsilon"] is None
    assert noise["mean_abs"] == cal.noise.mean_abs
    assert doc["audit_epsilon"] == cal.evidence.audit.epsilon <= 1.0
    back = pp.Calibration.from_json(text, fw)
    assert isinstance(back, pp.mechanisms.OptimalCalibration) and math.isnan(back.scale)
    assert back.noise == cal.noise and back.noise.weights == cal.noise.weights
    assert back.noise.tail_scale.hex() == cal.noise.tail_scale.hex()
    z = np.arange(-400, 401)
    assert np.array_equal(back.noise.log_pmf(z), cal.noise.log_pmf(z))
    data = np.array([["walk"] * 8] * 3000)
    here = cal.release(data, rng=np.random.default_rng(11)).value
    there = back.release(data, rng=np.random.default_rng(11)).value
    assert np.array_equal(here, there) and np.any(here != 8)
    # a certificate read back writes the same noise record again
    assert json.loads(back.to_json())["noise"] == noise


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_an_edited_noise_mass_is_refused():
    fw = chain_fw(length=8)
    _, text = optimal_text(fw)
    doc = json.loads(text)
    weights = [int(w) for w in doc["noise"]["weights"]]
    k = int(np.argmax(weights))
    weights[k] -= 1
    weights[k - 1] += 1          # one unit of 2**61 moved: same total, another law
    doc["noise"]["weights"] = [str(w) for w in weights]
    with pytest.raises(pp.CertificateError, match="tampered with"):
        pp.Calibration.from_json(json.dumps(doc), fw)
    doc["noise"]["denominator"] = str(int(doc["noise"]["denominator"]) + 1)
    with pytest.raises(pp.CertificateError, match="weights sum to .* its denominator is"):
        pp.Calibration.from_json(reseal(doc), fw)
    doc = json.loads(text)
    doc["scale"] = 1.0           # a Laplace scale next to a noise law is never written
    with pytest.raises(pp.CertificateError, match="both integer noise and the Laplace scale"):
        pp.Calibration.from_json(reseal(doc), fw)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_verify_audits_the_certified_pmf_and_refuses_one_made_too_narrow():
    fw = chain_fw(length=8)
    cal, text = optimal_text(fw)
    report = pp.verify(text, fw)
    assert report.holds and report.audited_epsilon == pytest.approx(cal.evidence.audit.epsilon)
    assert report.dp_epsilon is None and "holds" in report.message
    # the tails' mass moved to the centre by hand: far too little noise for ε = 1
    narrow = IntegerNoise(lo=cal.noise.lo, weights=(1, *cal.noise.weights[1:-1], 1),
                          tail_scale=cal.noise.tail_scale)
    forged = dataclasses.replace(cal, noise=narrow).to_json()
    assert pp.Calibration.from_json(forged, fw).noise == narrow
    bad = pp.verify(forged, fw)
    assert not bad.holds and bad.audited_epsilon > 1.0 and "does NOT hold" in bad.message


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_verify_checks_the_dp_floor_of_optimal_noise():
    fw = chain_fw(length=8)
    cal, text = optimal_text(fw, dp_epsilon=2.0)
    assert json.loads(text)["noise"]["dp_epsilon"] == 2.0
    report = pp.verify(text, fw)
    assert report.holds and report.dp_epsilon == 2.0
    assert report.dp_realised == pytest.approx(cal.evidence.dp_realised)
    assert "DP floor" in report.message
    doc = json.loads(text)
    doc["noise"]["dp_epsilon"] = 0.5           # a promise this pmf does not keep
    bad = pp.verify(reseal(doc), fw)
    assert not bad.holds and bad.dp_realised > 0.5 and "dp_epsilon = 0.5" in bad.message
    assert bad.audited_epsilon <= 1.0          # the Pufferfish part still holds


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_a_mechanism_with_another_dp_floor_is_not_the_one_that_made_it():
    cal, _ = optimal_text(chain_fw(length=8))
    with pytest.raises(pp.CertificateError, match="not the one that made"):
        cal.to_json(mechanism=pp.OptimalNoiseMechanism(epsilon=1.0, dp_epsilon=2.0))


def test_a_large_default_framework_certifies_the_secrets_it_left_out():
    # more pairs than are listed one by one: the certificate describes the default pairs, and
    # now says (and fingerprints) which impossible secrets the framework left out
    days = pp.MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], [1.0, 0.0], 100_002)
    fw = pp.Framework(days)
    assert fw.skipped_secrets == ((0, 1),)
    cal = pp.MarkovQuiltMechanism(epsilon=1.0).calibrate(fw, pp.Count(1))
    doc = json.loads(cal.to_json())
    assert doc["pairs"]["description"].endswith("but the 1 secret(s) impossible under every "
                                                "scenario")
    assert pp.Calibration.from_json(cal.to_json(), fw).scale == cal.scale
