"""pufferfish_pgm: Pufferfish privacy for correlated data modelled by Bayesian networks and
Markov chains.

Examples
--------
>>> import pufferfish_pgm as pp
>>> mc = pp.MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 50)
>>> fw = pp.Framework(mc)
>>> cal = pp.MarkovQuiltMechanism(epsilon=1.0).calibrate(fw, pp.Count(1))
>>> cal.scale < pp.GroupDPMechanism(epsilon=1.0).calibrate(fw, pp.Count(1)).scale
True
>>> pp.audit(fw, pp.Count(1), cal.scale).epsilon <= 1.0
True
"""

import sys as _sys
from typing import Any as _Any

from . import certificates as certificates
from . import standalone as standalone
from ._compat import MOVED_MODULES as _MOVED_MODULES
from ._compat import moved_name as _moved_name
from .accountant import (
    ContinualRelease,
    PrivacyAccountant,
    RobustnessReport,
    joint_audit,
    robustness,
)
from .advisor import advise
from .certificates import Verification, verify
from .errors import (
    BudgetExceededError,
    CertificateError,
    CompositionError,
    ImpossibleSecretError,
    InvalidDataError,
    InvalidModelError,
    InvalidParameterError,
    LimitExceededError,
    MissingDependencyError,
    ModelFileError,
    ModelFileNotFoundError,
    ParameterTypeError,
    PufferfishError,
    ScenarioClassError,
    SolverError,
    UnknownNodeError,
    UnknownStateError,
    UsefulnessWarning,
)
from .inference import ExactInference, conditional, pgmpy_exact_inference, secret_probability
from .mechanisms import (
    BlowfishLaplaceMechanism,
    Calibration,
    EntryDPMechanism,
    ExactLaplaceMechanism,
    ExactQuiltMechanism,
    GK16Mechanism,
    GroupDPMechanism,
    KantorovichMechanism,
    MarkovQuiltMechanism,
    Mechanism,
    MQMApproxMechanism,
    OptimalNoiseMechanism,
    WassersteinMechanism,
    mqm_approx_scale,
    policy_sensitivity,
)
from .noise import Release
from .privacy_loss import AuditReport, audit, audit_releases
from .queries import Count, GroupCount, Histogram, LinearQuery, WindowedCount, WindowedHistogram
from .quilts import PlanEntry, max_influence
from .scenarios import (
    BayesianNetworkScenario,
    MarkovChainScenario,
    MarkovNetworkScenario,
    ScenarioClass,
    contagion,
    event_counts,
    event_transition_counts,
    households,
    load_scenarios,
    private_transition_counts,
    read_ordonez,
    save_chain_class,
    sequences_from_events,
    transition_counts,
)
from .secrets import (
    Framework,
    JointSecret,
    NodeSecret,
    SecretPair,
    compile_secrets,
    complete_graph,
    distance_threshold_graph,
    partition_graph,
    secret_pairs,
)
from .standalone import ContinuousSum, PlanarLaplace, multiuser

__all__ = [
    "AuditReport",
    "BayesianNetworkScenario",
    "BlowfishLaplaceMechanism",
    "BudgetExceededError",
    "Calibration",
    "CertificateError",
    "CompositionError",
    "ContinualRelease",
    "ContinuousSum",
    "Count",
    "EntryDPMechanism",
    "ExactInference",
    "ExactLaplaceMechanism",
    "ExactQuiltMechanism",
    "Framework",
    "GK16Mechanism",
    "GroupCount",
    "GroupDPMechanism",
    "Histogram",
    "ImpossibleSecretError",
    "InvalidDataError",
    "InvalidModelError",
    "InvalidParameterError",
    "JointSecret",
    "KantorovichMechanism",
    "LimitExceededError",
    "LinearQuery",
    "MQMApproxMechanism",
    "MarkovChainScenario",
    "MarkovNetworkScenario",
    "MarkovQuiltMechanism",
    "Mechanism",
    "MissingDependencyError",
    "ModelFileError",
    "ModelFileNotFoundError",
    "NodeSecret",
    "OptimalNoiseMechanism",
    "ParameterTypeError",
    "PlanEntry",
    "PlanarLaplace",
    "PrivacyAccountant",
    "PufferfishError",
    "Release",
    "RobustnessReport",
    "ScenarioClass",
    "ScenarioClassError",
    "SecretPair",
    "SolverError",
    "UnknownNodeError",
    "UnknownStateError",
    "UsefulnessWarning",
    "Verification",
    "WassersteinMechanism",
    "WindowedCount",
    "WindowedHistogram",
    "advise",
    "audit",
    "audit_releases",
    "compile_secrets",
    "complete_graph",
    "conditional",
    "contagion",
    "distance_threshold_graph",
    "event_counts",
    "event_transition_counts",
    "households",
    "joint_audit",
    "load_scenarios",
    "max_influence",
    "mqm_approx_scale",
    "multiuser",
    "noise",
    "partition_graph",
    "pgmpy_exact_inference",
    "policy_sensitivity",
    "private_transition_counts",
    "read_ordonez",
    "robustness",
    "save_chain_class",
    "secret_pairs",
    "secret_probability",
    "sequences_from_events",
    "transition_counts",
    "verify",
]
__version__ = "0.1.0"

# 0.1.0's module paths that moved (pufferfish_pgm.mechanisms.geo, ...) import the new modules
for _old, _new in _MOVED_MODULES.items():
    _sys.modules.setdefault(_old, _sys.modules[_new])


def __getattr__(name: str) -> _Any:
    """0.1.0's renamed names (``PlanarLaplaceMechanism``, ...), with a ``DeprecationWarning``."""
    return _moved_name(__name__, name)
