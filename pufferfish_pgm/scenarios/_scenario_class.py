"""Finite classes Θ of scenarios (DESIGN §1): the attacker may believe any member.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> cls = ScenarioClass([MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 3),
...                      MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 3)])
>>> len(cls), cls.kind, cls.nodes
(2, 'chain', range(0, 3))
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ParameterTypeError, ScenarioClassError
from ._fit import fit_groups
from ._markov_network import MarkovNetworkScenario
from ._scenarios import BayesianNetworkScenario, MarkovChainScenario, Scenario

#: The scenario kinds a class holds.
_KINDS = (BayesianNetworkScenario, MarkovChainScenario, MarkovNetworkScenario)

__all__ = ["ScenarioClass", "as_class"]


@dataclass(frozen=True, eq=False)
class ScenarioClass:
    """A finite class Θ of scenarios sharing nodes and state spaces.

    Examples
    --------
    >>> a = MarkovChainScenario([[0.9, 0.1], [0.1, 0.9]], "stationary", 5)
    >>> b = MarkovChainScenario([[0.6, 0.4], [0.4, 0.6]], "stationary", 5)
    >>> len(ScenarioClass([a, b])), ScenarioClass([a, b]).kind
    (2, 'chain')
    """

    members: tuple
    #: How the class was drawn, for a class made by :meth:`from_posterior` (else None).
    posterior: Any = None

    def __init__(self, members: Iterable | Scenario, *, posterior: Any = None) -> None:
        if isinstance(members, _KINDS):
            members = [members]
        if isinstance(members, ScenarioClass):     # the same class: its record goes with it
            posterior = members.posterior if posterior is None else posterior
            members = members.members
        if hasattr(members, "get_cpds"):   # a pgmpy model iterates over its node names
            raise ParameterTypeError(
                f"got a pgmpy {type(members).__name__}; wrap it first: "
                "BayesianNetworkScenario(model) (or a ScenarioClass of several)")
        if isinstance(members, (str, bytes)) or not isinstance(members, Iterable):
            raise ParameterTypeError(
                f"expected a scenario (BayesianNetworkScenario or MarkovChainScenario), a list "
                f"of them or a ScenarioClass, got the {type(members).__name__} {members!r}")
        members = tuple(members)
        if not members:
            raise ScenarioClassError("the scenario class is empty; give at least one scenario")
        for m in members:
            if not isinstance(m, _KINDS):
                raise ParameterTypeError(
                    f"a scenario class holds BayesianNetworkScenario, MarkovNetworkScenario or "
                    f"MarkovChainScenario "
                    f"objects, got {type(m).__name__}"
                )
        _check_agree(members)
        object.__setattr__(self, "members", members)
        object.__setattr__(self, "posterior", posterior)

    def __len__(self) -> int:
        return len(self.members)

    def __iter__(self) -> Iterator[Scenario]:
        return iter(self.members)

    def __getitem__(self, i: int) -> Scenario:
        return self.members[i]

    @property
    def nodes(self) -> Sequence:
        return self.members[0].nodes

    @property
    def kind(self) -> str:
        """``"chain"`` when every member is a Markov chain, else ``"network"``."""
        chains = all(isinstance(m, MarkovChainScenario) for m in self.members)
        return "chain" if chains else "network"

    def states_of(self, node: Any) -> tuple:
        return self.members[0].states_of(node)

    def state_index(self, node: Any, state: Any) -> int:
        return self.members[0].state_index(node, state)

    @classmethod
    def fit_groups(cls, sequences: Sequence, groups: Sequence, **options: Any) -> ScenarioClass:
        """One chain per group of sequences (for example per cohort): a finite Θ from data.

        ``options``: ``states``, ``length``, ``pseudocount``, ``initial``, and ``period`` /
        ``shrinkage`` for one time-of-day chain per group, as :meth:`MarkovChainScenario.fit`.

        Examples
        --------
        >>> seqs = [[0, 0, 1, 1], [0, 1, 0, 1], [1, 1, 1, 0], [0, 1, 1, 1]]
        >>> cls = ScenarioClass.fit_groups(seqs, ["x", "y", "x", "y"], pseudocount=1.0)
        >>> [m.name for m in cls]
        ['x', 'y']
        """

        return fit_groups(cls, MarkovChainScenario, sequences, groups, **options)

    @classmethod
    def from_posterior(cls, data: Any, **options: Any) -> ScenarioClass:
        """Θ drawn from the Dirichlet posterior of a chain fit, with a stated coverage
        (``docs/posterior.md``; ``data``: sequences or ``TransitionCounts``; options:
        coverage, confidence, prior, period, shrinkage, seed, length, states). The class
        records how it was drawn in its attribute ``posterior`` (a frozen
        ``PosteriorRecord``).

        Examples
        --------
        >>> cls = ScenarioClass.from_posterior([[0, 0, 1, 1]], coverage=0.9, seed=0)
        >>> len(cls), cls.posterior.confidence
        (66, 0.999)
        """
        from ._posterior import posterior_members

        members, record = posterior_members(data, **options)
        return cls(members, posterior=record)


def _same_nodes(a: Sequence, b: Sequence) -> bool:
    """Equal node sequences; two chains' ranges compare without listing their steps."""
    if isinstance(a, range) and isinstance(b, range):
        return a == b
    return len(a) == len(b) and tuple(a) == tuple(b)


def _check_agree(members: tuple) -> None:
    first = members[0]
    for m in members[1:]:
        if not _same_nodes(m.nodes, first.nodes):
            extra = set(m.nodes) ^ set(first.nodes)
            raise ScenarioClassError(
                f"scenarios {first.name!r} and {m.name!r} have different nodes (differing: "
                f"{sorted(map(str, extra))[:5] or 'order'}); every member must share nodes"
            )
        for v in first.nodes[:1] if isinstance(first, MarkovChainScenario) else first.nodes:
            if m.states_of(v) != first.states_of(v):
                raise ScenarioClassError(
                    f"node {v!r} has states {list(first.states_of(v))} in {first.name!r} but "
                    f"{list(m.states_of(v))} in {m.name!r}; members must share state spaces"
                )


def as_class(scenarios: Any) -> ScenarioClass:
    """Accept a single scenario, an iterable of scenarios or a ScenarioClass."""
    return scenarios if isinstance(scenarios, ScenarioClass) else ScenarioClass(scenarios)
