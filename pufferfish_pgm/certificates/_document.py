"""Calibration certificates: a versioned JSON record of what a calibration promised, and for
which model (``docs/certificates.md``).

:func:`write` turns a :class:`~pufferfish_pgm.mechanisms.Calibration` into a JSON document;
:func:`read` checks a document against a framework and returns the keyword arguments of the
calibration it certifies, and :func:`load` builds it (:func:`pufferfish_pgm.certificates.to_json`
and ``from_json``, and the methods ``Calibration.to_json``/``from_json``, call these);
:mod:`._verify` re-proves a certificate. The values in JSON types live in :mod:`._values`, the
model and query in :mod:`._model`, the integer noise law of an optimal-noise calibration
(written exactly, ``"scale": null``) in :mod:`._noise`, and the typed reading of every field (a
malformed document is refused naming the field by its JSON path) in :mod:`._schema`.

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
>>> mech = GroupDPMechanism(epsilon=4.0)
>>> text = mech.calibrate(fw, Count(1)).to_json(mechanism=mech)
>>> Calibration.from_json(text, fw).scale
1.0
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Mapping
from importlib import metadata
from typing import Any

from ..errors import CertificateError
from ..mechanisms import AuditedEvidence, CertifiedEvidence
from ..secrets import Framework
from ._model import (
    PAIR_LIST_LIMIT,
    check_framework,
    pairs_json,
    posterior_json,
    query_from,
    query_json,
    scenario_json,
)
from ._noise import is_noise_calibration, noise_class, noise_from, noise_json
from ._schema import REPAIR, describe, field, finite_float, loads
from ._values import canonical, jsonable, sha256

__all__ = ["FORMAT", "FORMAT_NAME", "FORMAT_VERSION", "PAIR_LIST_LIMIT",
           "arguments", "canonical", "document_of", "load", "load_document", "parse", "read",
           "sha256", "write"]

FORMAT_NAME = "pufferfish_pgm.calibration"
FORMAT_VERSION = 1
FORMAT = f"{FORMAT_NAME}/{FORMAT_VERSION}"


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
        **posterior_json(cal.framework.scenarios, noisy),
        "evidence": {"type": source, "record": record},
        "audit_epsilon": audit_eps,
        "usefulness": _usefulness_json(cal),
    }
    doc["fingerprint"] = sha256(doc)
    return doc


def _usefulness_json(cal: Any) -> dict:
    """E|Z| and the 95 % half-width of the noise, and the answer's largest standard deviation
    over the scenarios (null when unknown): an optional field, absent from older documents."""
    report = cal.usefulness()
    return {"mean_abs_error": float(report.mean_abs_error),
            "halfwidth_95": float(report.halfwidth),
            "spread": None if report.spread is None else float(report.spread),
            "spread_of": report.spread_of}


def _check_usefulness(doc: dict) -> None:
    """The optional ``usefulness`` field's types (a document without it is read as before)."""
    if "usefulness" not in doc:
        return
    finite_float(doc, "usefulness.mean_abs_error")
    finite_float(doc, "usefulness.halfwidth_95")
    finite_float(doc, "usefulness.spread", null=True)
    field(doc, "usefulness.spread_of", str, null=True)


# --- reading --------------------------------------------------------------------------------

#: A format version: a whole number >= 1 in ASCII digits (``int`` would also read "١", U+0661).
_VERSION = re.compile(r"[1-9][0-9]{0,8}")


def parse(text: str | bytes) -> dict:
    """The certificate's JSON, after checking its format, version and own fingerprint."""
    doc = loads(text)
    fmt = doc.get("format") if isinstance(doc, dict) else None
    name, slash, version = fmt.partition("/") if isinstance(fmt, str) else ("", "", "")
    if name != FORMAT_NAME or not slash:
        raise CertificateError(f"not a calibration certificate: its format is {describe(fmt)}, "
                               f"expected {FORMAT!r}")
    if not _VERSION.fullmatch(version):
        raise CertificateError(f"not a calibration certificate: its format version "
                               f"{describe(version)} is not a whole number >= 1 written with at "
                               f"most 9 ASCII digits (expected {FORMAT!r})")
    if int(version) > FORMAT_VERSION:
        raise CertificateError(
            f"the certificate's format {fmt} is newer than this pufferfish_pgm "
            f"({_library_version()}) reads ({FORMAT}); upgrade pufferfish_pgm to read it")
    claimed = doc.get("fingerprint")
    actual = sha256({k: v for k, v in doc.items() if k != "fingerprint"})
    if claimed != actual:
        raise CertificateError(
            "the certificate was tampered with: its content does not match its fingerprint "
            f"(recorded {describe(claimed)}, computed {actual}); something in it (ε, scale, "
            "query, fingerprints, evidence) was edited after it was written")
    return doc


def _scale(doc: dict) -> float:
    """The Laplace scale; NaN for a certificate of integer noise (whose scale is null)."""
    if "noise" not in doc:
        return finite_float(doc, "scale")
    scale = field(doc, "scale", object)
    if scale is not None:
        raise CertificateError(f"the certificate records both integer noise and the Laplace "
                               f"scale {describe(scale)}; a certificate of integer noise has "
                               "scale null: it was not written by pufferfish_pgm")
    return math.nan


def _mechanism(doc: dict) -> str:
    """The mechanism's name, after checking the types of its record."""
    field(doc, "mechanism.class", str, null=True)
    field(doc, "mechanism.parameters", dict, null=True)
    return field(doc, "mechanism.name", str)  # type: ignore[no-any-return]


def _certified_evidence(doc: dict) -> CertifiedEvidence:
    field(doc, "library.name", str)
    return CertifiedEvidence(source=field(doc, "evidence.type", str),
                             record=dict(field(doc, "evidence.record", dict)),
                             audit_epsilon=finite_float(doc, "audit_epsilon", null=True),
                             fingerprint=field(doc, "fingerprint", str),
                             library_version=field(doc, "library.version", str))


def arguments(doc: dict, framework: Any) -> dict:
    """The keyword arguments of the calibration a parsed certificate (:func:`parse`)
    describes, after checking every field it reads and the framework (see :func:`read`)."""
    if not isinstance(framework, Framework):
        raise CertificateError(f"a certificate is read against a Framework, got "
                               f"{type(framework).__name__}")
    check_framework(doc, framework)
    _check_usefulness(doc)
    query = query_from(field(doc, "query", dict), framework.scenarios)
    name = field(doc, "query_name", str)
    if query.name != name:
        raise CertificateError(f"the certificate's query rebuilds as {query.name!r}, not "
                               f"{describe(name)} (its query_name)" + REPAIR)
    out = {"mechanism": _mechanism(doc), "epsilon": finite_float(doc, "epsilon", positive=True),
           "scale": _scale(doc), "query": query, "framework": framework,
           "evidence": _certified_evidence(doc)}
    if "noise" in doc:
        out["noise"] = noise_from(doc["noise"])
    return out


def read(text: str | bytes, framework: Any) -> dict:
    """The keyword arguments of the calibration a certificate describes, after checking it
    against ``framework`` (raises :class:`CertificateError` naming what differs, or the field
    that is missing or not of its type, by its JSON path).

    A certificate of integer noise adds ``noise`` (an :class:`~pufferfish_pgm.noise.IntegerNoise`)
    and has ``scale`` NaN: those are the arguments of ``OptimalCalibration`` (:func:`load`).
    """
    return arguments(parse(text), framework)


def load_document(doc: dict, framework: Any, default: type) -> Any:
    """The calibration a parsed certificate describes (see :func:`load`)."""
    out = arguments(doc, framework)
    kind = noise_class() if "noise" in out else default
    return kind(**out)


def load(text: str | bytes, framework: Any, default: type) -> Any:
    """The calibration a certificate describes: a ``default`` (``Calibration``), or the
    registered class of integer noise (``OptimalCalibration``) when it records a noise law."""
    return load_document(parse(text), framework, default)
