"""Data-evolution scenarios, the attacker's beliefs (DESIGN §1, §3.3): Bayesian networks and
Markov networks (undirected, ``docs/undirected.md``) from pgmpy or model files (pgmpy is
imported by the adapter modules ``_pgmpy*`` only), Markov chains with fixed, stationary or
arbitrary starts, finite classes of them, fitting chains from data and the bundled model files;
builders from contact graphs and household tables; a user-level differentially private fit
(``private_transition_counts``).
"""

from ._builders import contagion, households
from ._event_batches import event_batches
from ._event_counts import event_counts, event_transition_counts
from ._event_files import read_ordonez
from ._events import sequences_from_events
from ._markov_network import MarkovNetworkScenario
from ._model_files import DEFAULT_MODEL, default_model_path, load_scenarios, save_chain_class
from ._private_fit import PrivateCounts, private_transition_counts
from ._scenario_class import ScenarioClass, as_class
from ._scenarios import BayesianNetworkScenario, MarkovChainScenario, Scenario
from ._transition_counts import TransitionCounts, transition_counts

__all__ = [
    "BayesianNetworkScenario",
    "DEFAULT_MODEL",
    "MarkovChainScenario",
    "MarkovNetworkScenario",
    "PrivateCounts",
    "Scenario",
    "ScenarioClass",
    "TransitionCounts",
    "as_class",
    "contagion",
    "default_model_path",
    "event_batches",
    "event_counts",
    "event_transition_counts",
    "households",
    "load_scenarios",
    "private_transition_counts",
    "read_ordonez",
    "save_chain_class",
    "sequences_from_events",
    "transition_counts",
]
