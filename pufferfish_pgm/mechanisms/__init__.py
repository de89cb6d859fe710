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
ContinuousSumMechanism      sums of continuous attributes (seed 002 §7.1)         continuous
PlanarLaplaceMechanism      geo-indistinguishability                              geo
multiuser                   the multi-user theorems of seed 004                   multiuser
==========================  ====================================================  ==============

Every ``calibrate`` returns a :class:`Calibration` whose ``evidence`` is a frozen record of
:mod:`~pufferfish_pgm.mechanisms.evidence`: :class:`QuiltEvidence` (MQM, MQMApprox),
:class:`ExactEvidence` (exact Laplace), :class:`ExactQuiltEvidence` (exact quilt),
:class:`OptimalNoiseEvidence` (optimal noise),
:class:`DistanceEvidence` (Wasserstein, Kantorovich),
:class:`BaselineEvidence` (group and entry DP) or :class:`BlowfishEvidence`.
"""

from . import multiuser
from ._certificate import CertifiedEvidence
from ._release import Release
from ._verify import Verification, verify
from .base import Calibration, Mechanism
from .baselines import EntryDPMechanism, GroupDPMechanism
from .blowfish import BlowfishLaplaceMechanism, policy_sensitivity
from .continuous import ContinuousSumMechanism
from .evidence import (
    AuditedEvidence,
    BaselineEvidence,
    BlowfishEvidence,
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
from .geo import GeoRelease, PlanarLaplaceMechanism
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
    "ContinuousSumMechanism",
    "DistanceEvidence",
    "EntryDPMechanism",
    "Evidence",
    "EvidenceKeyError",
    "ExactEvidence",
    "ExactLaplaceMechanism",
    "ExactQuiltEvidence",
    "ExactQuiltMechanism",
    "GK16Mechanism",
    "GeoRelease",
    "GroupDPMechanism",
    "KantorovichMechanism",
    "MQMApproxMechanism",
    "MarkovQuiltMechanism",
    "Mechanism",
    "OptimalCalibration",
    "OptimalNoiseEvidence",
    "OptimalNoiseMechanism",
    "OptimalRelease",
    "PlanarLaplaceMechanism",
    "QuiltEvidence",
    "Release",
    "Verification",
    "WassersteinMechanism",
    "WorstPair",
    "mqm_approx_scale",
    "multiuser",
    "policy_sensitivity",
    "verify",
]
