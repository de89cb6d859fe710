"""pufferfish_pgm: Pufferfish privacy for correlated data modelled by Bayesian networks and
Markov chains."""

from .errors import PufferfishError
from .inference import conditional
from .scenarios import BayesianNetworkScenario, MarkovChainScenario, ScenarioClass
from .secrets import Framework, JointSecret, NodeSecret, SecretPair, secret_pairs

__all__ = [
    "BayesianNetworkScenario",
    "Framework",
    "JointSecret",
    "MarkovChainScenario",
    "NodeSecret",
    "PufferfishError",
    "ScenarioClass",
    "SecretPair",
    "conditional",
    "secret_pairs",
]
__version__ = "0.1.0"
