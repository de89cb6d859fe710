"""Calibration certificates: a versioned JSON record of what a calibration promised, and for
which model (``docs/certificates.md``).

:func:`write` turns a :class:`~pufferfish_pgm.mechanisms.Calibration` into a JSON document;
:func:`read` checks a document against a framework and returns the keyword arguments of the
calibration it certifies, and :func:`load` builds it (``Calibration.to_json`` and
``Calibration.from_json`` delegate here). This module does not import ``base`` so that ``base``
can import it; :mod:`pufferfish_pgm.mechanisms._verify` re-proves a certificate. The values in
JSON types live in :mod:`._certificate_values`, the model and query in
:mod:`._certificate_model`, and the integer noise law of an optimal-noise calibration (written
exactly, ``"scale": null``) in :mod:`._certificate_noise`.

Fingerprints are SHA-256 digests of canonical JSON (sorted keys, no spaces, ASCII), with every
probability written by ``float.hex``, so they are the same on every machine. The document's own
fingerprint covers everything else in it: an edited ε, scale or noise mass is detected. It is
an integrity check, not a signature: whoever can rewrite the document can recompute it, so a
document from an untrusted source must be re-proved with ``pufferfish_pgm.verify``.

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
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

from ..errors import CertificateError
from ..secrets import Framework
from ._certificate_model import (
    PAIR_LIST_LIMIT,
    check_framework,
    pairs_json,
    query_from,
    query_json,
    scenario_json,
)
from ._certificate_noise import is_noise_calibration, noise_class, noise_from, noise_json
from ._certificate_values import canonical, jsonable, sha256
from .evidence import AuditedEvidence, Evidence

__all__ = ["FORMAT", "FORMAT_NAME", "FORMAT_VERSION", "PAIR_LIST_LIMIT", "CertifiedEvidence",
           "canonical", "document_of", "load", "parse", "read", "sha256", "write"]

FORMAT_NAME = "pufferfish_pgm.calibration"
FORMAT_VERSION = 1
FORMAT = f"{FORMAT_NAME}/{FORMAT_VERSION}"


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


def _library_version() -> str:
    try:
        return metadata.version("pufferfish_pgm")
    except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "unknown"


# --- writing --------------------------------------------------------------------------------

def write(calibration: Any, mechanism: Any = None) -> str:
    """The certificate of ``calibration`` (a JSON text); ``mechanism`` adds its parameters."""
    return json.dumps(document_of(calibration, mechanism), indent=1, ensure_ascii=False)


def _parameters(cal: Any, mechanism: Any, record: Mapping[str, Any]) -> dict | None:
    """The mechanism's parameters except ε, after checking that it made ``cal``."""
    if mechanism is None:
        return None
    made = getattr(mechanism, "name", None) == cal.mechanism and mechanism.epsilon == cal.epsilon
    if made and is_noise_calibration(cal):   # the evidence names the loss and the DP floor
        loss, floor = repr(getattr(mechanism, "loss", None)), getattr(mechanism, "dp_epsilon", None)
        made = record.get("loss", loss) == loss and record.get("dp_epsilon", floor) == floor
    if not made:
        raise CertificateError(
            f"the mechanism given ({getattr(mechanism, 'name', mechanism)!r}, ε="
            f"{getattr(mechanism, 'epsilon', '?')}) is not the one that made this "
            f"calibration ({cal.mechanism!r}, ε={cal.epsilon}"
            + (f", loss {record.get('loss')}, dp_epsilon {record.get('dp_epsilon')}"
               if is_noise_calibration(cal) else "") + "); pass the mechanism that made it")
    return {f.name: jsonable(getattr(mechanism, f.name))
            for f in dataclasses.fields(mechanism) if f.name != "epsilon"}


def _evidence(evidence: Any) -> tuple[dict, str, float | None]:
    """The evidence record in JSON types, its type's name and the ε of its final audit."""
    if isinstance(evidence, CertifiedEvidence):  # re-writing a certificate read back
        return dict(evidence.record), evidence.source, evidence.audit_epsilon
    report = evidence.audit if isinstance(evidence, AuditedEvidence) else None
    return (jsonable(evidence), type(evidence).__name__,
            None if report is None else float(report.epsilon))


def document_of(calibration: Any, mechanism: Any = None) -> dict:
    """The certificate of ``calibration`` as a JSON-ready dict, its fingerprint included."""
    cal = calibration
    noisy = is_noise_calibration(cal)
    if type(cal).__name__ != "Calibration" and not noisy:
        raise CertificateError(f"cannot certify a {type(cal).__name__}: its release does more "
                               "than add Laplace(scale) or certified integer noise; "
                               "certificates cover Calibration and OptimalCalibration")
    record, source, audit_eps = _evidence(cal.evidence)
    parameters = _parameters(cal, mechanism, record)
    doc: dict[str, Any] = {
        "format": FORMAT,
        "library": {"name": "pufferfish_pgm", "version": _library_version()},
        "mechanism": {"name": cal.mechanism,
                      "class": None if mechanism is None else type(mechanism).__name__,
                      "parameters": parameters},
        "epsilon": float(cal.epsilon),
        "scale": None if noisy else float(cal.scale),
        **({"noise": noise_json(cal.noise, record)} if noisy else {}),
        "query": query_json(cal.query),
        "query_name": cal.query.name,
        "scenarios": [scenario_json(i, m) for i, m in enumerate(cal.framework.scenarios)],
        "pairs": pairs_json(cal.framework),
        "evidence": {"type": source, "record": record},
        "audit_epsilon": audit_eps,
    }
    doc["fingerprint"] = sha256(doc)
    return doc


# --- reading --------------------------------------------------------------------------------

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


def _number(doc: dict, key: str, positive: bool) -> float:
    value = doc.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value < 0 or (positive and value == 0):
        raise CertificateError(f"the certificate's {key} is {value!r}, not a "
                               f"{'positive' if positive else 'non-negative'} finite number")
    return float(value)


def _scale(doc: dict) -> float:
    """The Laplace scale; NaN for a certificate of integer noise (whose scale is null)."""
    if "noise" not in doc:
        return _number(doc, "scale", False)
    if doc.get("scale") is not None:
        raise CertificateError(f"the certificate records both integer noise and the Laplace "
                               f"scale {doc.get('scale')!r}; a certificate of integer noise has "
                               "scale null: it was not written by pufferfish_pgm")
    return math.nan


def read(text: str | bytes, framework: Any) -> dict:
    """The keyword arguments of the calibration a certificate describes, after checking it
    against ``framework`` (raises :class:`CertificateError` naming what differs).

    A certificate of integer noise adds ``noise`` (an :class:`~pufferfish_pgm.noise.IntegerNoise`)
    and has ``scale`` NaN: those are the arguments of ``OptimalCalibration`` (:func:`load`).
    """
    if not isinstance(framework, Framework):
        raise CertificateError(f"a certificate is read against a Framework, got "
                               f"{type(framework).__name__}")
    doc = parse(text)
    check_framework(doc, framework)
    query = query_from(doc["query"], framework.scenarios)
    if query.name != doc.get("query_name"):
        raise CertificateError(f"the certificate's query rebuilds as {query.name!r}, not "
                               f"{doc.get('query_name')!r}")
    evidence = CertifiedEvidence(source=str(doc["evidence"]["type"]),
                                 record=dict(doc["evidence"]["record"]),
                                 audit_epsilon=doc.get("audit_epsilon"),
                                 fingerprint=doc["fingerprint"],
                                 library_version=str(doc["library"]["version"]))
    out = {"mechanism": str(doc["mechanism"]["name"]),
           "epsilon": _number(doc, "epsilon", True), "scale": _scale(doc),
           "query": query, "framework": framework, "evidence": evidence}
    if "noise" in doc:
        out["noise"] = noise_from(doc["noise"])
    return out


def load(text: str | bytes, framework: Any, default: type) -> Any:
    """The calibration a certificate describes: a ``default`` (``Calibration``), or the
    registered class of integer noise (``OptimalCalibration``) when it records a noise law."""
    arguments = read(text, framework)
    kind = noise_class() if "noise" in arguments else default
    return kind(**arguments)
