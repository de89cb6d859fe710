"""Typed reading of a calibration certificate's JSON (internal).

Part of :mod:`pufferfish_pgm.certificates._document` (``docs/certificates.md``). Every value a
reader takes from a certificate goes through these helpers, so that a document that is not a
certificate (a field missing, of another type, a number out of range) is refused with a
:class:`~pufferfish_pgm.errors.CertificateError` naming the field by its JSON path
(``evidence.record``, ``noise.weights[3]``) and what was expected, never with a ``KeyError``
or ``TypeError`` of the code that used it. :func:`loads` guards the parser itself: nesting
deeper than :data:`MAX_DEPTH` is refused before ``json.loads`` could recurse that deep, and
integers longer than :data:`MAX_DIGITS` digits, ``NaN``, ``Infinity`` and numbers out of the
double range are named by their path.

Examples
--------
>>> doc = loads('{"evidence": {"record": [1, 2]}, "epsilon": 0.5}')
>>> finite_float(doc, "epsilon", positive=True)
0.5
>>> field(doc, "evidence.record", dict)
Traceback (most recent call last):
...
pufferfish_pgm.errors.CertificateError: the certificate's evidence.record is a list of 2, ...
>>> bounded_int({"n": 10**400}, "n", 0, 10)
Traceback (most recent call last):
...
pufferfish_pgm.errors.CertificateError: the certificate's n is an integer of 401 digits, ...
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Literal, overload

from ..errors import CertificateError

__all__ = ["MAX_DEPTH", "MAX_DIGITS", "REPAIR", "bounded_int", "check", "child", "decimal",
           "describe", "field", "finite_float", "loads", "refuse"]

#: Deepest nesting of lists and objects a certificate may have (the writer's is under 10).
MAX_DEPTH = 100
#: Most digits of a JSON integer or of a decimal string (noise weights have about 19).
MAX_DIGITS = 1000
#: Said after every refusal of a value: how to get a readable certificate.
REPAIR = ("; the certificate is damaged or was not written by pufferfish_pgm: write it again "
          "with Calibration.to_json")

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_KINDS = {dict: "an object", list: "a list", str: "a string", bool: "true or false",
          int: "an integer", float: "a number"}


class _Unreadable:
    """A JSON number a certificate never holds, kept so that its path can be named."""

    __slots__ = ("what",)

    def __init__(self, what: str) -> None:
        self.what = what

    def __repr__(self) -> str:
        return self.what


def _integer(text: str) -> int | _Unreadable:
    digits = len(text.lstrip("-"))
    return int(text) if digits <= MAX_DIGITS else _Unreadable(f"an integer of {digits} digits")


def _float(text: str) -> float | _Unreadable:
    value = float(text)
    return value if math.isfinite(value) else _Unreadable(
        f"{text[:40]} (out of the range of a double)")


def _depth(text: str) -> int:
    """The deepest nesting of brackets outside strings, counted up to ``MAX_DEPTH + 1``."""
    depth = deepest = 0
    for c in _NOT_BRACKET.sub("", _STRING.sub("", text)):
        depth += 1 if c in "[{" else -1
        deepest = max(deepest, depth)
        if deepest > MAX_DEPTH:
            break
    return deepest


def _find_unreadable(value: Any, where: str) -> None:
    if isinstance(value, _Unreadable):
        raise CertificateError(f"the certificate's {where or 'document'} is {value.what}, "
                               "not a finite number of at most "
                               f"{MAX_DIGITS} digits" + REPAIR)
    items = (value.items() if isinstance(value, dict) else
             enumerate(value) if isinstance(value, list) else ())
    for key, item in items:
        _find_unreadable(item, child(where, key))


def loads(text: Any) -> Any:
    """The JSON value of ``text`` (str or UTF-8/16/32 bytes) after the guards of the module
    docstring; :class:`CertificateError` for anything else."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode(json.detect_encoding(text))
        except UnicodeDecodeError as err:
            raise CertificateError(f"not a calibration certificate: its bytes are not "
                                   f"UTF-8, -16 or -32 text ({err})") from None
    if not isinstance(text, str):
        raise CertificateError(f"a certificate is a JSON text (str or bytes), got "
                               f"{type(text).__name__}")
    if _depth(text) > MAX_DEPTH:
        raise CertificateError(f"not a calibration certificate: its JSON is nested deeper than "
                               f"{MAX_DEPTH} levels")
    try:
        doc = json.loads(text, parse_int=_integer, parse_float=_float,
                         parse_constant=lambda name: _Unreadable(name))
    except (ValueError, RecursionError) as err:  # RecursionError: not reached after _depth
        raise CertificateError(f"not a calibration certificate: invalid JSON ({err})") from None
    _find_unreadable(doc, "")
    return doc


def describe(value: Any) -> str:
    """``value`` in a few words: its JSON type, or its text when it is short."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, int) and len(str(abs(value))) > 30:
        return f"an integer of {len(str(abs(value)))} digits"
    if isinstance(value, str) and len(value) > 40:
        return f"a string of {len(value)} characters"
    return repr(value)


def child(where: str, key: Any) -> str:
    """The JSON path of ``key`` inside ``where`` (``scenarios[0].parts``)."""
    if isinstance(key, int):
        return f"{where}[{key}]"
    if not _IDENTIFIER.fullmatch(key):
        return f"{where}[{json.dumps(key)}]"
    return f"{where}.{key}" if where else key


def _join(at: str, path: str) -> str:
    for key in path.split("."):
        at = child(at, key)
    return at


def refuse(where: str, value: Any, expected: str) -> CertificateError:
    """The error for ``value`` at path ``where``, which should have been ``expected``."""
    return CertificateError(f"the certificate's {where} is {describe(value)}, expected "
                            f"{expected}" + REPAIR)


def check(value: Any, where: str, kind: type, *, null: bool = False) -> Any:
    """``value`` (at path ``where``) if it is of JSON type ``kind`` (``float``: any number;
    ``object``: any value), or null when ``null``."""
    if value is None and null:
        return None
    if kind is object:
        return value
    ok = isinstance(value, (int, float) if kind is float else kind)
    if not ok or (isinstance(value, bool) and kind is not bool):
        raise refuse(where, value, ("null or " if null else "") + _KINDS[kind])
    return value


def field(doc: Any, path: str, kind: type, *, null: bool = False, at: str = "",
          expected: str = "") -> Any:
    """The value at the dotted ``path`` in ``doc`` (itself at path ``at``), checked by
    :func:`check`; a missing field or a parent that is not an object is named (``expected``
    says what the field holds, when its ``kind`` does not)."""
    where, keys = at, path.split(".")
    for i, key in enumerate(keys):
        if not isinstance(doc, dict):
            raise refuse(where, doc, f"an object with a field {key}")
        where = child(where, key)
        if key not in doc:
            expected = ("an object" if i < len(keys) - 1 else expected
                        or ("null or " if null else "") + _KINDS.get(kind, "a value"))
            raise CertificateError(f"the certificate has no field {where} (expected "
                                   f"{expected})" + REPAIR)
        doc = doc[key]
    return check(doc, where, kind, null=null)


@overload
def finite_float(doc: Any, path: str, *, positive: bool = ..., null: Literal[False] = ...,
                 at: str = ...) -> float: ...
@overload
def finite_float(doc: Any, path: str, *, positive: bool = ..., null: bool,
                 at: str = ...) -> float | None: ...
def finite_float(doc: Any, path: str, *, positive: bool = False, null: bool = False,
                 at: str = "") -> float | None:
    """The number at ``path`` as a float: finite, non-negative (``positive``: > 0)."""
    expected = (("null or " if null else "") + ("a positive" if positive else "a non-negative")
                + " finite number")
    value = field(doc, path, object, null=null, at=at, expected=expected)
    if value is None and null:
        return None
    number = (float(value) if isinstance(value, (int, float)) and not isinstance(value, bool)
              and abs(value) <= 1e308 else math.nan)
    if not number >= 0 or (positive and number == 0) or math.isinf(number):
        raise refuse(_join(at, path), value, expected)
    return number


@overload
def bounded_int(doc: Any, path: str, lo: int, hi: int, *, null: Literal[False] = ...,
                at: str = ...) -> int: ...
@overload
def bounded_int(doc: Any, path: str, lo: int, hi: int, *, null: bool,
                at: str = ...) -> int | None: ...
def bounded_int(doc: Any, path: str, lo: int, hi: int, *, null: bool = False,
                at: str = "") -> int | None:
    """The integer at ``path``, which must lie in ``[lo, hi]``."""
    expected = f"{'null or ' if null else ''}an integer from {lo} to {hi}"
    value = field(doc, path, object, null=null, at=at, expected=expected)
    if value is None and null:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise refuse(_join(at, path), value, expected)
    return value


def decimal(value: Any, where: str) -> int:
    """A non-negative integer written as a string of ASCII decimal digits (at most
    :data:`MAX_DIGITS`, so that ``int`` never meets Python's conversion limit)."""
    if not isinstance(value, str) or not 0 < len(value) <= MAX_DIGITS or not value.isascii() \
            or not value.isdigit():
        raise refuse(where, value, f"a string of at most {MAX_DIGITS} decimal digits")
    return int(value)
