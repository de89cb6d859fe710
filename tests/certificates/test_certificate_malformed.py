"""Malformed certificates (issue 19, defect 3): every document that is not a certificate of
this library is refused with a ``CertificateError`` naming the field, never a raw exception,
even when a forger recomputed its fingerprint; nothing wrong is accepted.

The fuzz test takes valid certificates, deletes each field or replaces it by values of the
wrong type (null, a list, an object, a string, true, -1, 10**400, NaN, a 5,000-digit integer,
10^5 nested brackets), re-fingerprints the document as a forger would, and reads it back with
``Calibration.from_json`` and ``pp.verify``.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator
from functools import cache
from typing import Any

import numpy as np
import pytest

import pufferfish_pgm as pp
from pufferfish_pgm.scenarios._network_tables import NetworkTables

P = [[0.9, 0.1], [0.2, 0.8]]

#: Values a JSON writer cannot produce with Python's canonical settings are put in as text.
RAW = {"NaN": "NaN", "5000 digits": "9" * 5000, "deep": "[" * 100_000 + "]" * 100_000}
VALUES: dict[str, Any] = {"null": None, "list": [1], "object": {"a": 1}, "string": "x",
                          "true": True, "-1": -1, "10**400": 10**400,
                          **{name: f"@@raw:{name}@@" for name in RAW}}
DELETE = "deleted"

#: Subtrees a reader keeps as written without using them (the recorded evidence) or uses only
#: when re-planning Markov quilts (the parameters): a value of any type there may load, but
#: then the calibration must be exactly the original one.
FREE_FORM = (("evidence", "record"), ("mechanism", "parameters"))
#: (path, kinds of value) that leave a well-formed certificate, though maybe of another
#: calibration: the format has strings, nulls, objects or lists there. The query's name does
#: not say its nodes, so other nodes make another certificate, which ``verify`` re-proves.
LEGIT = {("library", "name"): {"string"}, ("library", "version"): {"string"},
         ("mechanism", "name"): {"string"}, ("mechanism", "class"): {"string", "null"},
         ("mechanism", "parameters"): {"null", "object"}, ("evidence", "type"): {"string"},
         ("evidence", "record"): {"object"}, ("pairs", "description"): {"string"},
         ("scenarios", 0, "name"): {"string"}, ("audit_epsilon",): {"null"},
         ("noise", "dp_epsilon"): {"null"}, ("noise", "loss"): {"null", "string", "list"},
         ("query", "nodes"): {"null", "list"},
         # the optional usefulness record (issue 23): absent in older documents
         ("usefulness",): {DELETE}, ("usefulness", "spread"): {"null"},
         ("usefulness", "spread_of"): {"null", "string"}}


def legit(path: tuple, kind: str) -> bool:
    """Whether the edit leaves a well-formed certificate (see LEGIT)."""
    node_dropped = path[:2] == ("query", "nodes") and len(path) == 3 and kind == DELETE
    return node_dropped or kind in LEGIT.get(path, ())


# --- the forger -----------------------------------------------------------------------------

def _text(value: Any, **kwargs: Any) -> str:
    out = json.dumps(value, ensure_ascii=True, **kwargs)
    for name, raw in RAW.items():
        out = out.replace(json.dumps(f"@@raw:{name}@@"), raw)
    return out


def forge(doc: dict) -> str:
    """``doc`` with the fingerprint recomputed as ``docs/certificates.md`` says: SHA-256 of
    the canonical JSON (sorted keys, no spaces, ASCII) of every other field."""
    body = {k: v for k, v in doc.items() if k != "fingerprint"}
    canonical = _text(body, sort_keys=True, separators=(",", ":"))
    digest = hashlib.sha256(canonical.encode("ascii")).hexdigest()
    return _text({**body, "fingerprint": f"sha256:{digest}"})


# --- the certificates -----------------------------------------------------------------------

def chain_fw() -> pp.Framework:
    return pp.Framework(pp.MarkovChainScenario(P, "stationary", 6, states=["rest", "walk"]))


def network_fw() -> pp.Framework:
    """rain -> wet <- sprinkler, built from its tables (no model file, no pgmpy)."""
    states = ("no", "yes")
    tables = NetworkTables(
        nodes=("rain", "sprinkler", "wet"), states=dict.fromkeys(("rain", "sprinkler", "wet"),
                                                                 states),
        parents={"rain": (), "sprinkler": (), "wet": ("rain", "sprinkler")},
        cpts={"rain": np.array([0.8, 0.2]), "sprinkler": np.array([0.6, 0.4]),
              "wet": np.array([[[0.99, 0.2], [0.1, 0.01]], [[0.01, 0.8], [0.9, 0.99]]])})
    bn = pp.BayesianNetworkScenario(tables=tables, name="garden")
    return pp.Framework(bn, pp.secret_pairs(bn, nodes=["rain", "sprinkler"]))


@cache
def certificates() -> dict[str, tuple[pp.Framework, str]]:
    """name -> (framework, certificate text) of each kind of certificate the library writes."""
    chain, network = chain_fw(), network_fw()
    cases = {
        "exact count": (chain, pp.ExactLaplaceMechanism(epsilon=1.0), pp.Count("walk")),
        "exact linear": (chain, pp.ExactLaplaceMechanism(epsilon=1.0),
                         pp.LinearQuery({"rest": 1, "walk": 3}, nodes=[0, 2, 4])),
        "exact windowed": (chain, pp.ExactLaplaceMechanism(epsilon=1.0),
                           pp.WindowedCount("walk", 2)),
        "MQM chain": (chain, pp.MarkovQuiltMechanism(epsilon=1.0), pp.Count("walk")),
        "MQM network": (network, pp.MarkovQuiltMechanism(epsilon=1.0), pp.Count("yes")),
        "optimal": (chain, pp.OptimalNoiseMechanism(epsilon=1.0, dp_epsilon=2.0),
                    pp.Count("walk")),
    }
    return {name: (fw, mech.calibrate(fw, query).to_json(mechanism=mech))
            for name, (fw, mech, query) in cases.items()}


def paths(value: Any, prefix: tuple = ()) -> Iterator[tuple]:
    """Every field and list item of a JSON document (the document itself left out)."""
    items = (value.items() if isinstance(value, dict) else
             enumerate(value) if isinstance(value, list) else ())
    for key, child in items:
        yield (*prefix, key)
        yield from paths(child, (*prefix, key))


def edited(doc: dict, path: tuple, value: Any) -> dict:
    out = json.loads(json.dumps(doc))
    parent = out
    for key in path[:-1]:
        parent = parent[key]
    if value is DELETE:
        if isinstance(parent, list):
            parent.pop(path[-1])
        else:
            del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return out


def facts(cal: Any) -> tuple:
    """What a calibration releases and claims (NaN scales compared by their text)."""
    ev = cal.evidence
    return (type(cal).__name__, cal.mechanism, cal.epsilon, repr(cal.scale), cal.query,
            getattr(cal, "noise", None), ev.source, ev.audit_epsilon, ev.library_version)


# --- the fuzz test --------------------------------------------------------------------------

def _attempt(call: Any) -> tuple[Any, str | None]:
    """(result, None), (None, "CertificateError") or (None, a description of the escape)."""
    try:
        return call(), None
    except pp.CertificateError:
        return None, "CertificateError"
    except BaseException as err:  # noqa: BLE001 - what escapes is what this test looks for
        return None, f"{type(err).__name__}: {str(err)[:120]}"


def _judge(path: tuple, kind: str, original: Any, verdict: bool, text: str,
           fw: pp.Framework) -> str | None:
    """Why reading the edited ``text`` is wrong, or None."""
    cal, error = _attempt(lambda: pp.Calibration.from_json(text, fw))
    report, verror = _attempt(lambda: pp.verify(text, fw))
    for who, err in (("from_json", error), ("verify", verror)):
        if err not in (None, "CertificateError"):
            return f"{who} raised {err}"
    if cal is None:
        return None if report is None else "verify accepted what from_json refused"
    free = any(path[:len(f)] == f and len(path) > len(f) for f in FREE_FORM)
    if legit(path, kind):
        return None
    if not free:
        return "accepted"
    if facts(cal) != original:
        return f"accepted as another calibration {facts(cal)}"
    if report is not None and report.holds != verdict:
        return f"verify's verdict changed to holds={report.holds}"
    return None


@pytest.mark.parametrize("name", ["exact count", "exact linear", "exact windowed", "MQM chain",
                                  "MQM network", "optimal"])
@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_fuzzed_certificates_are_refused_with_certificate_error_or_harmless(name):
    fw, text = certificates()[name]
    doc = json.loads(text)
    assert forge(doc) == json.dumps(doc), "the forger's fingerprint is not the library's"
    original = facts(pp.Calibration.from_json(text, fw))
    verdict = pp.verify(text, fw).holds
    assert verdict
    wrong = []
    for path in paths(doc):
        if path == ("fingerprint",):
            continue
        old = doc
        for key in path:
            old = old[key]
        for kind, value in [(DELETE, DELETE), *VALUES.items()]:
            if value is not DELETE and type(value) is type(old) and value == old:
                continue  # not an edit
            why = _judge(path, kind, original, verdict, forge(edited(doc, path, value)), fw)
            if why:
                wrong.append(f"{'.'.join(map(str, path))} {kind}: {why}")
    assert not wrong, f"{len(wrong)} edits mishandled:\n" + "\n".join(wrong[:40])


# --- the cases of issue 19 one by one, with the field named ---------------------------------

def _refused(doc: dict, match: str, name: str = "exact count") -> str:
    fw, _ = certificates()[name]
    text = forge(doc)
    with pytest.raises(pp.CertificateError, match=match) as info:
        pp.Calibration.from_json(text, fw)
    with pytest.raises(pp.CertificateError, match=match):
        pp.verify(text, fw)
    return str(info.value)


@pytest.mark.parametrize("field", ["mechanism", "evidence", "query", "scenarios", "pairs",
                                   "epsilon", "scale", "audit_epsilon", "query_name"])
@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_a_missing_top_level_field_is_named(field):
    doc = json.loads(certificates()["exact count"][1])
    del doc[field]
    message = _refused(doc, rf"has no field {field}\b")
    assert "\n" not in message and "write it again" in message


@pytest.mark.parametrize("path, value, match", [
    (("evidence", "record"), [1, 2], r"evidence\.record is a list of 2, expected an object"),
    (("evidence",), "x", r"evidence is 'x', expected an object"),
    (("epsilon",), 10**400, r"epsilon is an integer of 401 digits, expected a positive finite"),
    (("epsilon",), "@@raw:NaN@@", r"epsilon is NaN"),
    (("scale",), True, r"scale is true, expected a non-negative finite number"),
    (("audit_epsilon",), -1.0, r"audit_epsilon is -1\.0, expected null or a non-negative"),
    (("scenarios", 0, "parts"), None, r"scenarios\[0\]\.parts is null, expected an object"),
    (("pairs", "count"), 7, r"pairs\.count is 7.*6 pairs"),
    (("query", "nodes"), "@@raw:5000 digits@@", r"query\.nodes is an integer of 5000 digits"),
    (("mechanism", "class"), "@@raw:deep@@", r"nested deeper than 100 levels"),
])
def test_wrong_values_are_named_by_their_json_path(path, value, match):
    doc = edited(json.loads(certificates()["exact count"][1]), path, value)
    _refused(doc, match)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_huge_numbers_in_a_noise_law_are_named():
    doc = json.loads(certificates()["optimal"][1])
    big = "9" * 5000
    _refused(edited(doc, ("noise", "weights", 3), big),
             r"noise\.weights\[3\] is a string of 5000 characters, expected a string of at "
             r"most 1000 decimal digits", "optimal")
    _refused(edited(doc, ("noise", "tail_scale"), 10**400), r"noise\.tail_scale is an integer "
             r"of 401 digits, expected a positive finite number", "optimal")
    _refused(edited(doc, ("noise", "dp_epsilon"), 10**400), r"noise\.dp_epsilon", "optimal")


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
@pytest.mark.parametrize("version", ["9" * 5000, "\u0661", "01", "0", "1 ", "+1", "1.0"])
def test_a_format_version_that_is_not_plain_ascii_digits_is_refused(version):
    # "\u0661" is ARABIC-INDIC DIGIT ONE: int() reads it as 1, a certificate does not
    doc = json.loads(certificates()["exact count"][1])
    doc["format"] = f"pufferfish_pgm.calibration/{version}"
    message = _refused(doc, r"format version .* \(expected 'pufferfish_pgm\.calibration/1'\)")
    assert len(message) < 400


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_documents_that_are_not_json_objects_are_refused():
    fw, _ = certificates()["exact count"]
    for text in ["[" * 100_000 + "]" * 100_000, '{"a": ' * 50_000 + "1" + "}" * 50_000,
                 "[]", "null", '"x"', "1e400", b"\xff\xfe\x00", "NaN"]:
        with pytest.raises(pp.CertificateError):
            pp.Calibration.from_json(text, fw)
    for text in [None, 12, ["a"]]:
        with pytest.raises(pp.CertificateError, match="a JSON text"):
            pp.Calibration.from_json(text, fw)  # type: ignore[arg-type]


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_nesting_at_the_limit_still_loads_in_the_evidence_record():
    # the recorded evidence is kept as written: nesting up to the limit is not an error
    fw, text = certificates()["exact count"]
    doc = json.loads(text)
    deep: Any = 1
    for _ in range(96):
        deep = [deep]
    doc["evidence"]["record"]["note"] = deep
    cal = pp.Calibration.from_json(forge(doc), fw)
    assert cal.evidence.record["note"] == deep
    assert math.isfinite(cal.scale)
