"""Data-evolution scenarios: the attacker's priors as Bayesian networks or Markov chains.

A scenario θ is one probability distribution over the data; a :class:`ScenarioClass` is a
finite set Θ of scenarios that share nodes and state spaces.

Examples
--------
>>> import numpy as np
>>> mc = MarkovChainScenario(transition=[[0.9, 0.1], [0.2, 0.8]], initial="stationary",
...                          length=3)
>>> mc.initial.round(4).tolist(), mc.nodes
([0.6667, 0.3333], range(0, 3))
"""

from __future__ import annotations

from ._chain_scenario import MarkovChainScenario
from ._network_scenario import TOLERANCE, BayesianNetworkScenario, default_model_path

__all__ = ["TOLERANCE", "BayesianNetworkScenario", "MarkovChainScenario", "Scenario",
           "default_model_path"]


Scenario = BayesianNetworkScenario | MarkovChainScenario
