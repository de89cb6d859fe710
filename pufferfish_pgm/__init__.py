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

from .accountant import ContinualRelease, PrivacyAccountant, joint_audit
from .advisor import advise
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
from .mechanisms import multiuser
from .mechanisms._release import Release
from .mechanisms._verify import Verification, verify
from .mechanisms.base import Calibration, Mechanism
from .mechanisms.baselines import EntryDPMechanism, GroupDPMechanism
from .mechanisms.blowfish import BlowfishLaplaceMechanism, policy_sensitivity
from .mechanisms.continuous import ContinuousSumMechanism
from .mechanisms.exact import ExactLaplaceMechanism
from .mechanisms.exact_quilt import ExactQuiltMechanism
from .mechanisms.geo import PlanarLaplaceMechanism
from .mechanisms.gk16 import GK16Mechanism
from .mechanisms.kantorovich import KantorovichMechanism
from .mechanisms.markov_quilt import MarkovQuiltMechanism, MQMApproxMechanism, mqm_approx_scale
from .mechanisms.optimal import OptimalNoiseMechanism
from .mechanisms.wasserstein import WassersteinMechanism
from .privacy_loss import AuditReport, audit, audit_releases
from .queries import Count, Histogram, LinearQuery, WindowedCount, WindowedHistogram
from .quilts import PlanEntry, max_influence
from .scenarios import (
    BayesianNetworkScenario,
    MarkovChainScenario,
    ScenarioClass,
    contagion,
    event_counts,
    households,
    load_scenarios,
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

__all__ = [
    "AuditReport",
    "BayesianNetworkScenario",
    "BlowfishLaplaceMechanism",
    "BudgetExceededError",
    "Calibration",
    "CertificateError",
    "CompositionError",
    "ContinualRelease",
    "ContinuousSumMechanism",
    "Count",
    "EntryDPMechanism",
    "ExactInference",
    "ExactLaplaceMechanism",
    "ExactQuiltMechanism",
    "Framework",
    "GK16Mechanism",
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
    "MarkovQuiltMechanism",
    "Mechanism",
    "MissingDependencyError",
    "ModelFileError",
    "ModelFileNotFoundError",
    "NodeSecret",
    "OptimalNoiseMechanism",
    "ParameterTypeError",
    "PlanEntry",
    "PlanarLaplaceMechanism",
    "PrivacyAccountant",
    "PufferfishError",
    "Release",
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
    "read_ordonez",
    "save_chain_class",
    "secret_pairs",
    "secret_probability",
    "sequences_from_events",
    "transition_counts",
    "verify",
]
__version__ = "0.1.0"
