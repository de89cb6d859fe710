"""An integer noise law in a calibration certificate, exactly as it is sampled (internal).

Part of :mod:`pufferfish_pgm.certificates._document` (``docs/certificates.md``). A calibration
of ``OptimalNoiseMechanism`` adds draws of an :class:`~pufferfish_pgm.noise.IntegerNoise`, not
Laplace(scale): its certificate has ``"scale": null`` and a ``"noise"`` record holding that law
bit for bit. The weights ``c_k`` are integers over the common denominator ``N = Σ c`` (the law
is ``P(Z = lo + k) = c_k / N`` in the core, tails of total masses ``c_0 / N`` and ``c_m / N``),
written as decimal strings because they exceed 2**53, which JSON readers of other languages
round; the tails' scale λ is a JSON number (Python ``repr``: the same double is read back, so
the sampler's exact rational ``Fraction(λ)`` is the same). The record also names the loss that
was minimised, the plain-DP floor ``dp_epsilon`` (null: none) and ``E|Z|``.

Such a certificate is read back as an
:class:`~pufferfish_pgm.mechanisms.OptimalCalibration`, which samples the law exactly.

Examples
--------
>>> from pufferfish_pgm.noise import IntegerNoise
>>> noise = IntegerNoise(lo=-1, weights=(1, 2, 1), tail_scale=1.5)
>>> doc = noise_json(noise, {"loss": "'abs'", "dp_epsilon": 2.0})
>>> doc["weights"], doc["denominator"], doc["loss"], doc["dp_epsilon"]
(['1', '2', '1'], '4', 'abs', 2.0)
>>> noise_from(doc) == noise, dp_epsilon_of(doc)
(True, 2.0)
>>> noise_from({**doc, "weights": ["1", "3", "1"]})
Traceback (most recent call last):
...
pufferfish_pgm.errors.CertificateError: the certificate's noise law is inconsistent: its ...
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping
from typing import Any

from ..errors import CertificateError, InvalidParameterError, ParameterTypeError
from ..mechanisms import OptimalCalibration
from ..noise import IntegerNoise
from ._schema import bounded_int, decimal, field, finite_float, refuse

__all__ = ["NOISE_TYPE", "dp_epsilon_of", "is_noise_calibration", "noise_class", "noise_from",
           "noise_json"]

#: The ``type`` of a certificate's noise record.
NOISE_TYPE = "IntegerNoise"
_REPAIR = ("; the certificate is damaged or was not written by pufferfish_pgm: write it again "
           "with Calibration.to_json")

#: Largest |lo|, |hi| of a noise record (the core of a law is far narrower).
_EXTENT = 2**53


def noise_class() -> type:
    """The calibration class that releases an integer noise law (``OptimalCalibration``)."""
    return OptimalCalibration


def is_noise_calibration(calibration: Any) -> bool:
    """Whether ``calibration`` releases a noise law (its certificate records that law)."""
    return isinstance(calibration, OptimalCalibration)


def _loss(text: Any) -> Any:
    """The evidence's loss (``repr`` of ``'abs'``, ``('tail', t)``, ...) in JSON types."""
    if not isinstance(text, str):
        return None
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    return list(value) if isinstance(value, tuple) else value


def noise_json(noise: IntegerNoise, record: Mapping[str, Any]) -> dict:
    """The certificate's record of ``noise``; ``record`` (the calibration's evidence in JSON
    types) gives the loss and the DP floor (null when it has none)."""
    dp = record.get("dp_epsilon")
    return {"type": NOISE_TYPE, "lo": noise.lo, "hi": noise.hi,
            "denominator": str(noise.total), "weights": [str(c) for c in noise.weights],
            "tail_scale": float(noise.tail_scale), "loss": _loss(record.get("loss")),
            "dp_epsilon": None if dp is None else float(dp), "mean_abs": noise.mean_abs}


def _law(doc: Any) -> tuple[int, tuple[int, ...], float]:
    """``lo``, the weights and the tail scale of a noise record, every field checked."""
    kind = field(doc, "type", str, at="noise")
    if kind != NOISE_TYPE:
        raise refuse("noise.type", kind, repr(NOISE_TYPE))
    lo = bounded_int(doc, "lo", -_EXTENT, _EXTENT, at="noise")
    hi = bounded_int(doc, "hi", -_EXTENT, _EXTENT, at="noise")
    raw = field(doc, "weights", list, at="noise")
    weights = tuple(decimal(w, f"noise.weights[{i}]") for i, w in enumerate(raw))
    total = decimal(field(doc, "denominator", str, at="noise"), "noise.denominator")
    if sum(weights) != total:
        raise CertificateError(f"the certificate's noise law is inconsistent: its weights sum "
                               f"to {sum(weights)}, its denominator is {total}" + _REPAIR)
    if hi != lo + len(weights) - 1:
        raise CertificateError(f"the certificate's noise law is inconsistent: {len(weights)} "
                               f"weights from lo = {lo} end at {lo + len(weights) - 1}, not at "
                               f"hi = {hi}" + _REPAIR)
    scale = finite_float(doc, "tail_scale", positive=True, at="noise")
    loss = field(doc, "loss", object, at="noise")
    if loss is not None and not isinstance(loss, (str, list)):
        raise refuse("noise.loss", loss, "null, a string or a list")
    finite_float(doc, "dp_epsilon", positive=True, null=True, at="noise")
    finite_float(doc, "mean_abs", at="noise")
    return lo, weights, scale


def noise_from(doc: Any) -> IntegerNoise:
    """The :class:`IntegerNoise` a record of :func:`noise_json` describes, after checking the
    type of every field and that its redundant fields (``hi``, ``denominator``) agree with
    the weights."""
    lo, weights, scale = _law(doc)
    try:
        return IntegerNoise(lo=lo, weights=weights, tail_scale=scale)
    except (InvalidParameterError, ParameterTypeError) as err:
        raise CertificateError(f"the certificate's noise law is invalid: {err}") from None


def dp_epsilon_of(doc: Mapping) -> float | None:
    """The plain-DP floor ε' the noise record promises (None: no floor)."""
    value = doc.get("dp_epsilon")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or value <= 0:
        raise CertificateError(f"the certificate's noise dp_epsilon is {value!r}, not null or "
                               "a positive finite number" + _REPAIR)
    return float(value)
