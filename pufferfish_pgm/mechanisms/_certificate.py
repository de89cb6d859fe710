"""Calibration certificates: a versioned JSON record of what a calibration promised, and for
which model (``docs/certificates.md``).

:func:`write` turns a :class:`~pufferfish_pgm.mechanisms.Calibration` into a JSON document;
:func:`read` checks a document against a framework and returns the keyword arguments of the
:class:`~pufferfish_pgm.mechanisms.Calibration` it certifies (``Calibration.to_json`` and
``Calibration.from_json`` delegate here). This module does not import ``base`` so that ``base``
can import it; :mod:`pufferfish_pgm.mechanisms._verify` re-proves a certificate.

Fingerprints are SHA-256 digests of canonical JSON (sorted keys, no spaces, ASCII), with every
probability written by ``float.hex``, so they are the same on every machine. The document's own
fingerprint covers everything else in it: an edited ε or scale is detected. It is an integrity
check, not a signature: whoever can rewrite the document can recompute it, so a document from
an untrusted source must be re-proved with ``pufferfish_pgm.verify``.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> from pufferfish_pgm.secrets import Framework
>>> from pufferfish_pgm.queries import Count
>>> from pufferfish_pgm.mechanisms import GroupDPMechanism, Calibration
>>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 4))
>>> mech = GroupDPMechanism(epsilon=1.0)
>>> text = mech.calibrate(fw, Count(1)).to_json(mechanism=mech)
>>> Calibration.from_json(text, fw).scale
4.0
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

import numpy as np

from ..errors import CertificateError, InvalidParameterError
from ..privacy_loss import AuditReport
from ..queries import (
    Count,
    Histogram,
    LinearQuery,
    Query,
    WindowedCount,
    WindowedHistogram,
)
from ..scenarios import BayesianNetworkScenario, MarkovChainScenario, Scenario, ScenarioClass
from ..secrets import Framework, JointSecret, NodeSecret, SecretPair
from .evidence import AuditedEvidence, Evidence, WorstPair

__all__ = ["FORMAT", "FORMAT_NAME", "FORMAT_VERSION", "CertifiedEvidence", "canonical",
           "document_of", "parse", "read", "sha256", "write"]

FORMAT_NAME = "pufferfish_pgm.calibration"
FORMAT_VERSION = 1
FORMAT = f"{FORMAT_NAME}/{FORMAT_VERSION}"
#: Frameworks with all pairs of every node are fingerprinted pair by pair up to this many pairs
#: (so that listing them explicitly gives the same fingerprint), by their description beyond.
PAIR_LIST_LIMIT = 100_000


@dataclass(frozen=True, kw_only=True)
class CertifiedEvidence(Evidence):
    """The evidence of a calibration read back from a certificate.

    Attributes
    ----------
    source : str
        The evidence record the calibration had when it was written (``"ExactEvidence"``, ...).
    record : mapping
        That record in JSON types (audit reports reduced to their ε, worst pair and coverage).
    audit_epsilon : float or None
        The ε of the final audit of the certified scale, when the mechanism made one.
    fingerprint : str
        The certificate's own fingerprint (``"sha256:..."``).
    library_version : str
        The version of pufferfish_pgm that wrote it.
    """

    source: str
    record: Mapping[str, Any] = field(default_factory=dict)
    audit_epsilon: float | None = None
    fingerprint: str = ""
    library_version: str = ""


def canonical(value: Any) -> str:
    """The canonical JSON text of ``value``: sorted keys, no spaces, ASCII, no NaN."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False)


def sha256(value: Any) -> str:
    """``"sha256:<hex>"`` of the canonical JSON of ``value``."""
    return "sha256:" + hashlib.sha256(canonical(value).encode("ascii")).hexdigest()


def _library_version() -> str:
    try:
        return metadata.version("pufferfish_pgm")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "unknown"


# --- values in JSON types -----------------------------------------------------------------

def _plain(x: Any) -> Any:
    """A node or state name in JSON types (tuples become lists, numpy scalars Python ones)."""
    if isinstance(x, np.generic):
        x = x.item()
    if x is None or isinstance(x, (bool, int, str)):
        return x
    if isinstance(x, float):
        return x if math.isfinite(x) else repr(x)
    if isinstance(x, (tuple, list)):
        return [_plain(v) for v in x]
    raise CertificateError(f"cannot write the name {x!r} ({type(x).__name__}) to a certificate; "
                           "node and state names must be strings, numbers or tuples of them")


def _lookup(value: Any, options: tuple, what: str) -> Any:
    """The model's own name whose JSON form is ``value``."""
    for o in options:
        if _plain(o) == value and type(_plain(o)) is type(value):
            return o
    raise CertificateError(f"the certificate's query names {what} {value!r}, which the model "
                           f"does not have")


def _floats(a: Any) -> list:
    """A float array as ``[shape, [float.hex, ...]]`` (exact and machine independent)."""
    arr = np.asarray(a, dtype=float)
    return [list(arr.shape), [float(v).hex() for v in arr.ravel()]]


def _json(value: Any) -> Any:
    """Evidence and parameters in JSON types."""
    if isinstance(value, np.ndarray):
        return _json(value.tolist())
    if isinstance(value, np.generic):
        return _json(value.item())
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, SecretPair):
        return str(value)
    if isinstance(value, AuditReport):
        worst = value.worst
        return {"epsilon": value.epsilon, "coverage": value.coverage,
                "scales": _json(value.scales), "audited": len(value.pairs),
                "skipped": len(value.skipped),
                "worst": None if worst is None else {
                    "pair": str(worst.pair), "theta": worst.theta, "scenario": worst.scenario,
                    "epsilon": worst.epsilon, "output": _json(worst.output)}}
    if isinstance(value, WorstPair):
        return {"pair": str(value.pair), "theta": value.theta, "scenario": value.scenario}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return [[_json(k), _json(v)] for k, v in value.items()]
    if isinstance(value, range):
        return {"range": [value.start, value.stop, value.step]}
    if isinstance(value, (tuple, list, set, frozenset)):
        items = [_json(v) for v in value]
        return sorted(items, key=canonical) if isinstance(value, (set, frozenset)) else items
    return str(value)


# --- the query ------------------------------------------------------------------------------

def _query_json(query: Query) -> dict:
    nodes = None if query.nodes is None else [_plain(v) for v in query.nodes]
    if type(query) is Histogram:
        return {"type": "Histogram", "nodes": nodes}
    if type(query) is Count:
        return {"type": "Count", "state": _plain(query.state), "nodes": nodes}
    if type(query) is LinearQuery:
        return {"type": "LinearQuery", "nodes": nodes, "integer": query.integer,
                "weights": [[_plain(s), _json(float(w) if not query.integer else int(w))]
                            for s, w in query.weights]}
    if type(query) is WindowedCount:
        return {"type": "WindowedCount", "state": _plain(query.state), "width": query.width}
    if type(query) is WindowedHistogram:
        return {"type": "WindowedHistogram", "width": query.width}
    raise CertificateError(f"cannot certify a {type(query).__name__} query; certificates "
                           "describe Count, LinearQuery, Histogram and the windowed queries")


def _windowed_from(doc: dict, cls: ScenarioClass) -> Query:
    width = doc.get("width")
    if isinstance(width, bool) or not isinstance(width, int):
        raise CertificateError(f"the certificate's windowed query has width {width!r}; a "
                               "window width is a whole number of slots")
    try:
        query: Query = (WindowedHistogram(width) if doc["type"] == "WindowedHistogram" else
                        WindowedCount(_lookup(doc.get("state"), cls.states_of(cls.nodes[0]),
                                              "state"), width))
        query.lipschitz_for(cls)  # a width longer than the chain, or a network, fails here
    except InvalidParameterError as err:
        raise CertificateError(f"the certificate's query does not fit the model: {err}") from err
    return query


def _query_from(doc: Any, cls: ScenarioClass) -> Query:
    if isinstance(doc, dict) and doc.get("type") in ("WindowedCount", "WindowedHistogram"):
        return _windowed_from(doc, cls)
    if not isinstance(doc, dict) or doc.get("type") not in ("Count", "LinearQuery", "Histogram"):
        raise CertificateError(f"the certificate's query {doc!r} is not a Count, LinearQuery, "
                               "Histogram or windowed query")
    nodes = doc.get("nodes")
    model_nodes = None if nodes is None else tuple(_lookup(v, cls.nodes, "node") for v in nodes)
    states = cls.states_of((model_nodes or cls.nodes)[0])
    query: Query
    if doc["type"] == "Histogram":
        query = Histogram(model_nodes)
    elif doc["type"] == "Count":
        query = Count(_lookup(doc["state"], states, "state"), model_nodes)
    else:
        weights = {_lookup(s, states, "state"): w for s, w in doc["weights"]}
        query = LinearQuery(weights, model_nodes, integer=bool(doc["integer"]))
    query.lipschitz_for(cls)  # unknown states fail here, naming them
    return query


# --- fingerprints of the framework ----------------------------------------------------------

def _scenario_parts(scenario: Scenario) -> dict[str, str]:
    """One fingerprint per table of a scenario (names are left out: they change nothing)."""
    if isinstance(scenario, MarkovChainScenario):
        initial = "any" if scenario.initial_is_any else _floats(scenario.initial)
        return {"transition": sha256(_floats(scenario.transition)),
                "initial": sha256(initial), "length": sha256(scenario.length),
                "states": sha256([_plain(s) for s in scenario.states])}
    if isinstance(scenario, BayesianNetworkScenario):
        tables = scenario.tables
        parts = {"nodes": sha256(sorted((_plain(v) for v in tables.nodes), key=canonical))}
        for v in tables.nodes:
            parts[f"cpt {canonical(_plain(v))}"] = sha256({
                "states": [_plain(s) for s in tables.states[v]],
                "parents": [_plain(p) for p in tables.parents[v]],
                "cpt": _floats(tables.cpts[v])})
        return parts
    raise CertificateError(f"cannot fingerprint a {type(scenario).__name__} scenario")


def _scenario_json(i: int, scenario: Scenario) -> dict:
    parts = _scenario_parts(scenario)
    out: dict[str, Any] = {"index": i, "name": scenario.name,
                           "kind": "chain" if isinstance(scenario, MarkovChainScenario)
                           else "network", "sha256": sha256(parts), "parts": parts}
    if isinstance(scenario, MarkovChainScenario):
        out["length"] = scenario.length
    return out


def _secret_json(secret: NodeSecret | JointSecret) -> list:
    return sorted(([_plain(n), _plain(s)] for n, s in secret.evidence.items()), key=canonical)


def _pairs_json(framework: Framework) -> dict:
    explicit = framework._explicit is not None
    count = framework.pair_count
    if explicit or count <= PAIR_LIST_LIMIT:
        listed = sorted((sorted([_secret_json(p.first), _secret_json(p.second)], key=canonical)
                         for p in framework.pairs), key=canonical)
        return {"count": count, "description": f"{count} pairs, fingerprinted one by one",
                "sha256": sha256(listed)}
    return {"count": count, "description": "every pair of states of every node",
            "sha256": sha256({"all pairs of every node": True})}


# --- writing and reading --------------------------------------------------------------------

def write(calibration: Any, mechanism: Any = None) -> str:
    """The certificate of ``calibration`` (a JSON text); ``mechanism`` adds its parameters."""
    return json.dumps(document_of(calibration, mechanism), indent=1, ensure_ascii=False)


def document_of(calibration: Any, mechanism: Any = None) -> dict:
    """The certificate of ``calibration`` as a JSON-ready dict, its fingerprint included."""
    cal = calibration
    if type(cal).__name__ != "Calibration":
        raise CertificateError(f"cannot certify a {type(cal).__name__}: its release does more "
                               "than add Laplace(scale) noise; certificates cover Calibration")
    parameters = None
    if mechanism is not None:
        if getattr(mechanism, "name", None) != cal.mechanism or mechanism.epsilon != cal.epsilon:
            raise CertificateError(
                f"the mechanism given ({getattr(mechanism, 'name', mechanism)!r}, ε="
                f"{getattr(mechanism, 'epsilon', '?')}) is not the one that made this "
                f"calibration ({cal.mechanism!r}, ε={cal.epsilon})")
        parameters = {f.name: _json(getattr(mechanism, f.name))
                      for f in dataclasses.fields(mechanism) if f.name != "epsilon"}
    evidence = cal.evidence
    if isinstance(evidence, CertifiedEvidence):  # re-writing a certificate read back
        record, source, audit_eps = dict(evidence.record), evidence.source, evidence.audit_epsilon
    else:
        record, source = _json(evidence), type(evidence).__name__
        report = evidence.audit if isinstance(evidence, AuditedEvidence) else None
        audit_eps = None if report is None else float(report.epsilon)
    doc: dict[str, Any] = {
        "format": FORMAT,
        "library": {"name": "pufferfish_pgm", "version": _library_version()},
        "mechanism": {"name": cal.mechanism,
                      "class": None if mechanism is None else type(mechanism).__name__,
                      "parameters": parameters},
        "epsilon": float(cal.epsilon),
        "scale": float(cal.scale),
        "query": _query_json(cal.query),
        "query_name": cal.query.name,
        "scenarios": [_scenario_json(i, m) for i, m in enumerate(cal.framework.scenarios)],
        "pairs": _pairs_json(cal.framework),
        "evidence": {"type": source, "record": record},
        "audit_epsilon": audit_eps,
    }
    doc["fingerprint"] = sha256(doc)
    return doc


def parse(text: str | bytes) -> dict:
    """The certificate's JSON, after checking its format, version and own fingerprint."""
    try:
        doc = json.loads(text)
    except (TypeError, ValueError) as err:
        raise CertificateError(f"not a calibration certificate: invalid JSON ({err})") from None
    fmt = doc.get("format") if isinstance(doc, dict) else None
    name, _, version = fmt.partition("/") if isinstance(fmt, str) else ("", "", "")
    if name != FORMAT_NAME or not version.isdigit():
        raise CertificateError(f"not a calibration certificate: its format is {fmt!r}, "
                               f"expected {FORMAT!r}")
    if int(version) > FORMAT_VERSION:
        raise CertificateError(
            f"the certificate's format {fmt} is newer than this pufferfish_pgm "
            f"({_library_version()}) reads ({FORMAT}); upgrade pufferfish_pgm to read it")
    claimed = doc.get("fingerprint")
    body = {k: v for k, v in doc.items() if k != "fingerprint"}
    try:
        actual = sha256(body)
    except ValueError as err:  # NaN or infinity in the document
        raise CertificateError(f"the certificate was tampered with: {err}") from None
    if claimed != actual:
        raise CertificateError(
            "the certificate was tampered with: its content does not match its fingerprint "
            f"(recorded {claimed}, computed {actual}); something in it (ε, scale, query, "
            "fingerprints, evidence) was edited after it was written")
    return doc


def _check_framework(doc: dict, framework: Framework) -> None:
    cls = framework.scenarios
    certified = doc["scenarios"]
    if len(certified) != len(cls):
        raise CertificateError(f"the framework has {len(cls)} scenario(s), the certificate was "
                               f"written for {len(certified)}")
    for entry, scenario in zip(certified, cls, strict=True):
        parts = _scenario_parts(scenario)
        if sha256(parts) == entry["sha256"]:
            continue
        theirs = entry["parts"]
        what = [k for k in sorted(set(parts) | set(theirs)) if parts.get(k) != theirs.get(k)]
        label = [(f"the CPT of node {k[4:]}" if k.startswith("cpt ") else
                  "the set of nodes" if k == "nodes" else f"the {k}") for k in what]
        if "length" in what and isinstance(scenario, MarkovChainScenario):
            label[what.index("length")] = (f"the length (certified {entry.get('length')}, "
                                           f"given {scenario.length})")
        raise CertificateError(
            f"scenario {entry['index']} ({entry['name']!r} in the certificate, "
            f"{scenario.name!r} given) differs from the certified one: "
            + ", ".join(label[:5]) + (f" and {len(label) - 5} more" if len(label) > 5 else "")
            + (" differ" if len(label) > 1 else " differs")
            + "; the certificate is for another model")
    pairs = _pairs_json(framework)
    if pairs["sha256"] != doc["pairs"]["sha256"]:
        raise CertificateError(
            f"the secret pairs differ: the certificate protects {doc['pairs']['description']} "
            f"({doc['pairs']['count']} pairs), the framework {pairs['count']} pairs that are "
            "not the same; build the framework with the pairs the certificate was written for")


def _number(doc: dict, key: str, positive: bool) -> float:
    value = doc.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value < 0 or (positive and value == 0):
        raise CertificateError(f"the certificate's {key} is {value!r}, not a "
                               f"{'positive' if positive else 'non-negative'} finite number")
    return float(value)


def read(text: str | bytes, framework: Any) -> dict:
    """The keyword arguments of the :class:`Calibration` a certificate describes, after
    checking it against ``framework`` (raises :class:`CertificateError` naming what differs)."""
    if not isinstance(framework, Framework):
        raise CertificateError(f"a certificate is read against a Framework, got "
                               f"{type(framework).__name__}")
    doc = parse(text)
    _check_framework(doc, framework)
    query = _query_from(doc["query"], framework.scenarios)
    if query.name != doc.get("query_name"):
        raise CertificateError(f"the certificate's query rebuilds as {query.name!r}, not "
                               f"{doc.get('query_name')!r}")
    evidence = CertifiedEvidence(source=str(doc["evidence"]["type"]),
                                 record=dict(doc["evidence"]["record"]),
                                 audit_epsilon=doc.get("audit_epsilon"),
                                 fingerprint=doc["fingerprint"],
                                 library_version=str(doc["library"]["version"]))
    return {"mechanism": str(doc["mechanism"]["name"]),
            "epsilon": _number(doc, "epsilon", True), "scale": _number(doc, "scale", False),
            "query": query, "framework": framework, "evidence": evidence}
