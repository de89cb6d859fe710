"""Mechanisms: from a framework and a query to a calibrated noise scale (DESIGN §3.2–3.9).

Every mechanism is a frozen dataclass with a keyword-only ``epsilon`` and a ``calibrate``
method returning a :class:`Calibration`; :meth:`Calibration.release` adds the noise.

==========================  ====================================================  ==============
mechanism                   what it guarantees                                    module
==========================  ====================================================  ==============
MarkovQuiltMechanism        ε-Pufferfish by Markov quilts (Song et al. 2017)      markov_quilt
MQMApproxMechanism          the same from π_min and the eigengap (chains)         markov_quilt
ExactLaplaceMechanism       smallest Laplace scale the exact audit accepts        exact
ExactQuiltMechanism         Markov quilts with exact nearby losses                exact_quilt
OptimalNoiseMechanism       least integer noise the exact audit accepts (LP)      optimal
WassersteinMechanism        W∞/ε (Song et al. 2017, §4)                           wasserstein
KantorovichMechanism        Kantorovich / relaxed eq. 20 (seed 004, Appendix A)   kantorovich
GroupDPMechanism            ε-DP for the whole record, so every Θ                 baselines
GK16Mechanism               Ghosh & Kleinberg's inferential privacy (binary)       gk16
EntryDPMechanism            per-node DP: a baseline, NOT Pufferfish private        baselines
BlowfishLaplaceMechanism    Blowfish policies on independent records              blowfish
==========================  ====================================================  ==============

The mechanisms that need no framework (sums of continuous values, geo-indistinguishability,
the multi-user theorems) are in :mod:`pufferfish_pgm.standalone`; certificates (``to_json``,
``from_json``, ``verify``) in :mod:`pufferfish_pgm.certificates`.

Every ``calibrate`` returns a :class:`Calibration` whose ``evidence`` is a frozen record of
:mod:`~pufferfish_pgm.mechanisms.evidence`: :class:`QuiltEvidence` (MQM, MQMApprox),
:class:`ExactEvidence` (exact Laplace), :class:`ExactQuiltEvidence` (exact quilt),
:class:`OptimalNoiseEvidence` (optimal noise),
:class:`DistanceEvidence` (Wasserstein, Kantorovich),
:class:`BaselineEvidence` (group and entry DP) or :class:`BlowfishEvidence`; a calibration
read back from a certificate has :class:`CertifiedEvidence`.
"""

from typing import Any

from .._compat import moved_name
from ..noise import Release
from .base import Calibration, Mechanism
from .baselines import EntryDPMechanism, GroupDPMechanism
from .blowfish import BlowfishLaplaceMechanism, policy_sensitivity
from .evidence import (
    AuditedEvidence,
    BaselineEvidence,
    BlowfishEvidence,
    CertifiedEvidence,
    DistanceEvidence,
    Evidence,
    EvidenceKeyError,
    ExactEvidence,
    ExactQuiltEvidence,
    OptimalNoiseEvidence,
    QuiltEvidence,
    WorstPair,
)
from .exact import ExactLaplaceMechanism
from .exact_quilt import ExactQuiltMechanism
from .gk16 import GK16Mechanism
from .kantorovich import KantorovichMechanism
from .markov_quilt import MarkovQuiltMechanism, MQMApproxMechanism, mqm_approx_scale
from .optimal import OptimalCalibration, OptimalNoiseMechanism, OptimalRelease
from .wasserstein import WassersteinMechanism

__all__ = [
    "AuditedEvidence",
    "BaselineEvidence",
    "BlowfishEvidence",
    "BlowfishLaplaceMechanism",
    "Calibration",
    "CertifiedEvidence",
    "DistanceEvidence",
    "EntryDPMechanism",
    "Evidence",
    "EvidenceKeyError",
    "ExactEvidence",
    "ExactLaplaceMechanism",
    "ExactQuiltEvidence",
    "ExactQuiltMechanism",
    "GK16Mechanism",
    "GroupDPMechanism",
    "KantorovichMechanism",
    "MQMApproxMechanism",
    "MarkovQuiltMechanism",
    "Mechanism",
    "OptimalCalibration",
    "OptimalNoiseEvidence",
    "OptimalNoiseMechanism",
    "OptimalRelease",
    "QuiltEvidence",
    "Release",
    "WassersteinMechanism",
    "WorstPair",
    "mqm_approx_scale",
    "policy_sensitivity",
]


def __getattr__(name: str) -> Any:
    """Names of 0.1.0 that moved to :mod:`pufferfish_pgm.standalone` and
    :mod:`pufferfish_pgm.certificates` (a ``DeprecationWarning`` says where)."""
    return moved_name(__name__, name)
