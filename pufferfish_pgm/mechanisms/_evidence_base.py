"""The base of every evidence record (internal module; public through
:mod:`pufferfish_pgm.mechanisms.evidence`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, TypeVar

from ..errors import PufferfishError
from ..secrets import SecretPair

#: The evidence type of a :class:`~pufferfish_pgm.mechanisms.Calibration`
#: (``Calibration[ExactEvidence]``; a bare ``Calibration`` is ``Calibration[Any]``).
EvidenceT = TypeVar("EvidenceT", bound="Evidence", covariant=True)

__all__ = ["CertifiedEvidence", "Evidence", "EvidenceKeyError", "EvidenceT", "WorstPair"]


class EvidenceKeyError(PufferfishError, KeyError):
    """A field name that the evidence record does not have (the message lists the valid ones)."""

    __module__ = "pufferfish_pgm.mechanisms.evidence"   # its public home


class _ReadByName:
    """``record["field"]`` reads the attribute ``field`` of a dataclass record."""

    __iter__: ClassVar[None] = None  # not a mapping: no iteration over keys or values

    def __getitem__(self, name: str) -> Any:
        if name not in self:
            valid = ", ".join(f.name for f in fields(self))  # type: ignore[arg-type]
            raise EvidenceKeyError(f"{type(self).__name__} has no field {name!r}; its fields "
                                   f"are: {valid or 'none'} (read them as attributes)")
        return getattr(self, name)

    def __contains__(self, name: object) -> bool:
        return any(f.name == name for f in fields(self))  # type: ignore[arg-type]


@dataclass(frozen=True, kw_only=True)
class Evidence(_ReadByName):
    """Base of every evidence record; on its own, a calibration with nothing to report.

    Examples
    --------
    >>> Evidence()["audit"]
    Traceback (most recent call last):
    ...
    pufferfish_pgm.mechanisms.evidence.EvidenceKeyError: Evidence has no field 'audit'; ...
    """

    __module__ = "pufferfish_pgm.mechanisms.evidence"   # its public home


@dataclass(frozen=True, kw_only=True)
class WorstPair(_ReadByName):
    """The discriminative pair and scenario where a mechanism's distance is largest.

    Attributes
    ----------
    pair : SecretPair
        The pair of secrets (s, s') that are hardest to hide.
    theta : int
        Index of the scenario θ in the framework's class.
    scenario : str
        Name of that scenario.
    """

    __module__ = "pufferfish_pgm.mechanisms.evidence"   # its public home

    pair: SecretPair
    theta: int
    scenario: str


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
