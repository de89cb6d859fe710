"""Baselines (DESIGN §3.4): group differential privacy and entry differential privacy.

* :class:`GroupDPMechanism` hides a change of *every* node the query sums over at once:
  Laplace(L·n/ε) with n = the number of those nodes. That is ε-DP for arbitrary changes of the
  whole record, hence ε-Pufferfish private for every class Θ. For a query over all nodes it is
  the Markov Quilt Mechanism's trivial quilt, L·|V|/ε.
* :class:`EntryDPMechanism` hides one node: Laplace(L/ε). Under correlated scenarios it is
  **not** Pufferfish private (a node's neighbours carry its value); it is here to be audited.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> from pufferfish_pgm.secrets import Framework
>>> from pufferfish_pgm.queries import Count, Histogram
>>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.1, 0.9]], "stationary", 10))
>>> GroupDPMechanism(epsilon=2.0).calibrate(fw, Count(1)).scale
5.0
>>> EntryDPMechanism(epsilon=2.0).calibrate(fw, Histogram()).scale
1.0
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._parallel import check_executor
from ..queries import Query
from ..scenarios import ScenarioClass
from ..secrets import Framework
from ._contract import check_arguments
from .base import Calibration, Mechanism
from .evidence import BaselineEvidence

__all__ = ["EntryDPMechanism", "GroupDPMechanism", "check_inputs"]


def check_inputs(framework: object, query: object) -> ScenarioClass:
    """The framework's scenario class, after checking the argument types
    (:func:`._contract.check_arguments`, the one check every ``calibrate`` makes).

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> fw = Framework(MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 2))
    >>> check_inputs(fw, "count(1)")
    Traceback (most recent call last):
    ...
    pufferfish_pgm.errors.ParameterTypeError: query must be a Count, LinearQuery, Histogram ...
    """
    check_arguments(framework, query)
    return framework.scenarios  # type: ignore[attr-defined]


@dataclass(frozen=True, kw_only=True)
class GroupDPMechanism(Mechanism):
    """Laplace(L·n/ε), n = number of nodes the query sums over: private for every Θ.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework
    >>> from pufferfish_pgm.queries import Count
    >>> fw = Framework(MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 8))
    >>> cal = GroupDPMechanism(epsilon=1.0).calibrate(fw, Count(0, nodes=[0, 1, 2]))
    >>> cal.scale, cal.evidence.group_size
    (3.0, 3)
    """

    def calibrate(self, framework: Framework, query: Query, *,
                  executor: Any = None) -> Calibration[BaselineEvidence]:
        """The Laplace scale for ``query``; no data is seen."""
        check_executor(executor)   # no loop to scale out here; a bad value still errs
        cls = check_inputs(framework, query)
        lipschitz = self.scale_for(query, cls, 1.0)
        size = len(query.node_list(cls))
        sigma = size / self.epsilon
        return Calibration(
            mechanism=self.name, epsilon=self.epsilon, scale=self.scale_for(query, cls, sigma),
            query=query, framework=framework,
            evidence=BaselineEvidence(lipschitz=lipschitz, sigma=sigma, group_size=size,
                                      formula="L * n / epsilon"))


@dataclass(frozen=True, kw_only=True)
class EntryDPMechanism(Mechanism):
    """Laplace(L/ε): entry (element-wise) differential privacy.

    Warning: this hides a change of a single node with the others held fixed. When the
    scenarios correlate nodes it is **not** ε-Pufferfish private: the neighbours of a node
    reveal its value, and :func:`pufferfish_pgm.privacy_loss.audit` reports a realised ε above ε.
    It is a baseline for comparisons, not a mechanism to release correlated data with.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework
    >>> from pufferfish_pgm.queries import Count
    >>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.1, 0.9]], "stationary", 8))
    >>> EntryDPMechanism(epsilon=0.5).calibrate(fw, Count(1)).scale
    2.0
    """

    def calibrate(self, framework: Framework, query: Query, *,
                  executor: Any = None) -> Calibration[BaselineEvidence]:
        """The Laplace scale L/ε for ``query`` (not Pufferfish private under correlation)."""
        check_executor(executor)   # no loop to scale out here; a bad value still errs
        cls = check_inputs(framework, query)
        sigma = 1.0 / self.epsilon
        return Calibration(
            mechanism=self.name, epsilon=self.epsilon, scale=self.scale_for(query, cls, sigma),
            query=query, framework=framework,
            evidence=BaselineEvidence(lipschitz=self.scale_for(query, cls, 1.0), sigma=sigma,
                                      formula="L / epsilon",
                                      warning="entry DP is not Pufferfish private under "
                                              "correlated scenarios; audit it before trusting "
                                              "it"))
