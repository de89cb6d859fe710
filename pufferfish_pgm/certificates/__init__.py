"""Certificates: a calibration written down, read back and proved again (``docs/certificates.md``).

A certificate is a versioned, fingerprinted JSON record of what a calibration promised and for
which model. :func:`to_json` writes one, :func:`from_json` reads it back against a framework
(ready to release without recalibrating) and :func:`verify` re-proves its promise from scratch,
never trusting the recorded evidence. ``Calibration.to_json`` and ``Calibration.from_json``
are the same functions as methods.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> from pufferfish_pgm.secrets import Framework
>>> from pufferfish_pgm.queries import Count
>>> from pufferfish_pgm.mechanisms import GroupDPMechanism
>>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 4))
>>> text = to_json(GroupDPMechanism(epsilon=1.0).calibrate(fw, Count(1)))
>>> from_json(text, fw).scale, verify(text, fw).holds
(4.0, True)
"""

from __future__ import annotations

from typing import Any

from ..mechanisms import Calibration, Mechanism
from ..secrets import Framework
from . import _document
from ._verify import Verification, verify

__all__ = ["Verification", "from_json", "to_json", "verify"]


def to_json(calibration: Calibration, *, mechanism: Mechanism | None = None) -> str:
    """``calibration`` as a versioned, fingerprinted JSON certificate.

    Pass the ``mechanism`` that made it to record its parameters too (:func:`verify` re-plans
    Markov quilts with them).

    Raises
    ------
    CertificateError
        The query or a node/state name cannot be written, or ``mechanism`` is not the one
        that made this calibration.
    """
    return _document.write(calibration, mechanism)


def from_json(text: str | bytes, framework: Framework) -> Any:
    """The calibration a certificate describes, checked against ``framework``.

    The format version, the certificate's own fingerprint and the fingerprints of the
    framework's scenarios and secret pairs are checked first (a different model or pair set is
    refused, naming what differs). A certificate of optimal integer noise gives an
    ``OptimalCalibration`` that samples the certified law exactly.

    Raises
    ------
    CertificateError
        With a message that says what differs.
    """
    return _document.load(text, framework, Calibration)
