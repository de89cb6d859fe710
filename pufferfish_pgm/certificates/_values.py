"""Values of a calibration certificate in JSON types, and their fingerprints (internal).

Part of :mod:`pufferfish_pgm.certificates._document` (``docs/certificates.md``): canonical
JSON (sorted keys, no spaces, ASCII, no NaN), ``"sha256:<hex>"`` fingerprints of it, node and
state names as JSON values, probabilities as ``[shape, [float.hex, ...]]`` (exact and machine
independent), and evidence records reduced to JSON types.

Examples
--------
>>> canonical({"b": [floats([0.1])], "a": (1, 2)})
'{"a":[1,2],"b":[[[1],["0x1.999999999999ap-4"]]]}'
>>> sha256({"a": 1}) == sha256({"a": 1.0}), sha256([1]) == sha256([1])
(False, True)
>>> jsonable({"x": float("nan"), "y": (1, 2)})
[['x', 'nan'], ['y', [1, 2]]]
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import CertificateError
from ..mechanisms import WorstPair
from ..privacy_loss import AuditReport
from ..secrets import SecretPair

__all__ = ["canonical", "floats", "jsonable", "lookup", "plain", "sha256"]


def canonical(value: Any) -> str:
    """The canonical JSON text of ``value``: sorted keys, no spaces, ASCII, no NaN."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False)


def sha256(value: Any) -> str:
    """``"sha256:<hex>"`` of the canonical JSON of ``value``."""
    return "sha256:" + hashlib.sha256(canonical(value).encode("ascii")).hexdigest()


def plain(x: Any) -> Any:
    """A node or state name in JSON types (tuples become lists, numpy scalars Python ones)."""
    if isinstance(x, np.generic):
        x = x.item()
    if x is None or isinstance(x, (bool, int, str)):
        return x
    if isinstance(x, float):
        return x if math.isfinite(x) else repr(x)
    if isinstance(x, (tuple, list)):
        return [plain(v) for v in x]
    raise CertificateError(f"cannot write the name {x!r} ({type(x).__name__}) to a certificate; "
                           "node and state names must be strings, numbers or tuples of them")


def lookup(value: Any, options: Sequence, what: str) -> Any:
    """The model's own name whose JSON form is ``value``."""
    for o in options:
        if plain(o) == value and type(plain(o)) is type(value):
            return o
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    raise CertificateError(f"the certificate's query names {what} {shown}, which the model "
                           f"does not have")


def floats(a: Any) -> list:
    """A float array as ``[shape, [float.hex, ...]]`` (exact and machine independent)."""
    arr = np.asarray(a, dtype=float)
    return [list(arr.shape), [float(v).hex() for v in arr.ravel()]]


def _report(value: AuditReport) -> dict:
    """An audit report reduced to its ε, coverage, scales, counts and worst pair."""
    worst = value.worst
    return {"epsilon": value.epsilon, "coverage": value.coverage,
            "scales": jsonable(value.scales), "audited": len(value.pairs),
            "skipped": len(value.skipped),
            "worst": None if worst is None else {
                "pair": str(worst.pair), "theta": worst.theta, "scenario": worst.scenario,
                "epsilon": worst.epsilon, "output": jsonable(worst.output)}}


def jsonable(value: Any) -> Any:
    """Evidence and parameters in JSON types (non-finite floats as their ``repr``)."""
    if isinstance(value, (np.ndarray, np.generic)):
        return jsonable(value.tolist())
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, SecretPair):
        return str(value)
    if isinstance(value, AuditReport):
        return _report(value)
    if isinstance(value, WorstPair):
        return {"pair": str(value.pair), "theta": value.theta, "scenario": value.scenario}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return [[jsonable(k), jsonable(v)] for k, v in value.items()]
    if isinstance(value, range):
        return {"range": [value.start, value.stop, value.step]}
    if isinstance(value, (tuple, list, set, frozenset)):
        items = [jsonable(v) for v in value]
        return sorted(items, key=canonical) if isinstance(value, (set, frozenset)) else items
    return str(value)
