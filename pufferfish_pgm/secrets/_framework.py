"""The Pufferfish framework (S, S_pairs, Θ) and the secret compiler.

The compiler turns every pair and every scenario θ into the two conditional queries (evidence
{X_i: a} and {X_i: b}) and, following the definition of Pufferfish privacy, skips θ where
either secret has probability 0.

The definition constrains a pair only where both its secrets have positive probability, so a
secret impossible under every θ has nothing to protect. A framework whose pairs the library
builds (``Framework(scenarios)``, or pairs from :func:`~pufferfish_pgm.secrets.secret_pairs`
without a graph) leaves such secrets out and lists them in :attr:`Framework.skipped_secrets`;
pairs written out one by one are kept as given, and an impossible secret among them is an
error (:class:`~pufferfish_pgm.errors.ImpossibleSecretError`).

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> mc = MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], [1.0, 0.0], 2)
>>> compiled, skipped = compile_secrets(Framework(mc))
>>> [str(c.pair) for c in compiled], skipped, Framework(mc).skipped_secrets
(['(1=0, 1=1)'], (), ((0, 1),))
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InvalidParameterError, ParameterTypeError
from ..inference import secret_probability
from ..scenarios import ScenarioClass, as_class
from ._possible import StateSupport, check_possible, state_support
from ._secrets import GeneratedPairs, NodeSecret, SecretPair, node_pairs

__all__ = ["CompiledPair", "Framework", "SkippedPair", "compile_secrets"]


@dataclass(eq=False)
class _PairIndex:
    """What a :class:`Framework` derives from its pairs on first use (written by it only)."""

    pairs: tuple[SecretPair, ...] | None = None   # the pairs, once built
    by_node: dict[Any, tuple[SecretPair, ...]] | None = None
    nodes: tuple | None = None
    support: StateSupport | None = None   # frameworks that skip: the possible states


@dataclass(frozen=True, eq=False)
class Framework:
    """A Pufferfish framework (S, S_pairs, Θ): scenarios and discriminative pairs.

    ``pairs=None`` means every pair of states of every node, except that a secret with
    probability 0 under every θ is left out (nothing to protect; :attr:`skipped_secrets`
    lists them). Those pairs are only built as objects when :attr:`pairs` is first read
    (planners use :meth:`node_pair_codes`, which never builds them: a day of seconds has 6 M
    pairs). Pairs from :func:`~pufferfish_pgm.secrets.secret_pairs` without a graph (a
    :class:`~pufferfish_pgm.secrets.GeneratedPairs`) skip impossible secrets the same way;
    pairs given any other way are kept as given. Should leaving out the impossible secrets
    leave no pair at all, every pair is kept, and using the framework raises
    :class:`~pufferfish_pgm.errors.ImpossibleSecretError` (nothing could be protected).

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 4))
    >>> fw.pair_count, len(fw.pairs), fw.secret_nodes
    (4, 4, (0, 1, 2, 3))

    Every day starts in state 0, so "X_0 = 1" cannot be true and is left out:

    >>> days = Framework(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], [1.0, 0.0], 4))
    >>> days.skipped_secrets, days.pair_count, days.secret_nodes
    (((0, 1),), 3, (1, 2, 3))
    """

    scenarios: ScenarioClass
    _explicit: tuple[SecretPair, ...] | None = field(repr=False)
    _skips: bool = field(repr=False)   # impossible secrets are left out
    _index: _PairIndex = field(init=False, repr=False, compare=False)

    def __init__(self, scenarios: Any, pairs: Iterable[SecretPair] | None = None) -> None:
        cls = as_class(scenarios)
        chosen = None if pairs is None else tuple(pairs)
        if chosen is not None:
            if not chosen:
                raise InvalidParameterError("the framework has no secret pairs; give at least "
                                            "one")
            _check_pairs(cls, chosen)
        elif all(len(cls.states_of(v)) < 2 for v in _sample_nodes(cls)):
            raise InvalidParameterError("the framework has no secret pairs: every node has a "
                                        "single state")
        object.__setattr__(self, "scenarios", cls)
        object.__setattr__(self, "_explicit", chosen)
        object.__setattr__(self, "_skips", pairs is None or isinstance(pairs, GeneratedPairs))
        object.__setattr__(self, "_index", _PairIndex())

    @property
    def skipped_secrets(self) -> tuple[tuple[Any, Any], ...]:
        """(node, state) of every secret left out because it has probability 0 under every θ.

        In model order of the nodes, then of the states. Empty for pairs given one by one
        and when leaving the impossible secrets out would leave no pair.
        """
        support = self._support()
        return () if support is None else support.impossible(self.scenarios)

    def _support(self) -> StateSupport | None:
        """The possible states of the secret nodes (None: the pairs are kept as given)."""
        if not self._skips:
            return None
        if self._index.support is None:
            self._index.support = _skip_support(self.scenarios, self._explicit)
        return self._index.support

    @property
    def pairs(self) -> tuple[SecretPair, ...]:
        """Every discriminative pair, as SecretPair objects."""
        if self._index.pairs is None:
            support = self._support()
            if support is None:
                assert self._explicit is not None
                self._index.pairs = self._explicit
            elif self._explicit is not None:
                self._index.pairs = tuple(p for p in self._explicit
                                          if support.allows(self.scenarios, p))
            else:
                self._index.pairs = tuple(p for v in support.nodes
                                          for p in _possible_pairs(self.scenarios, support, v))
        return self._index.pairs

    @property
    def pair_count(self) -> int:
        """Number of pairs (without building them when they are all pairs of all nodes)."""
        support = self._support()
        if self._explicit is not None or support is None:
            return len(self.pairs)
        return int(support.pair_counts().sum())

    def node_pair_codes(self) -> tuple[np.ndarray | list, np.ndarray, np.ndarray] | None:
        """(node of each pair, state index of its first, of its second) for single-node pairs.

        None when some pair is over several nodes (a JointSecret).
        """
        cls = self.scenarios
        support = self._support()
        if self._explicit is None and support is not None and cls.kind == "chain":
            a, b = np.triu_indices(support.table.shape[1], 1)
            steps, which = np.nonzero(support.table[:, a] & support.table[:, b])
            return steps, a[which], b[which]
        pairs = self.pairs
        single = [(p.first, p.second) for p in pairs
                  if isinstance(p.first, NodeSecret) and isinstance(p.second, NodeSecret)]
        if len(single) < len(pairs):
            return None
        index = {v: {s: i for i, s in enumerate(cls.states_of(v))} for v in self.secret_nodes}
        nodes = [x.node for x, _ in single]
        first = np.array([index[x.node][x.state] for x, _ in single], dtype=np.int64)
        second = np.array([index[x.node][y.state] for x, y in single], dtype=np.int64)
        return nodes, first, second

    def _by_node(self) -> dict[Any, tuple[SecretPair, ...]]:
        """Single-node pairs grouped by node (built once, on first use)."""
        if self._index.by_node is None:
            groups: dict[Any, list[SecretPair]] = {}
            for p in self.pairs:
                if type(p.first) is NodeSecret and type(p.second) is NodeSecret:
                    groups.setdefault(p.first.node, []).append(p)
            self._index.by_node = {v: tuple(ps) for v, ps in groups.items()}
        return self._index.by_node

    @property
    def secret_nodes(self) -> tuple:
        """The nodes that appear in some secret, in model order."""
        support = self._support()
        if self._explicit is None and support is not None:
            counts = support.pair_counts().tolist()
            return tuple(v for v, c in zip(support.nodes, counts, strict=True) if c)
        if self._index.nodes is None:
            used = set(self._by_node())
            used.update(n for p in self.pairs if type(p.first) is not NodeSecret
                        or type(p.second) is not NodeSecret
                        for s in (p.first, p.second) for n in s.evidence)
            self._index.nodes = tuple(v for v in self.scenarios.nodes if v in used)
        return self._index.nodes

    def pairs_of(self, node: Any) -> tuple[SecretPair, ...]:
        """The single-node pairs on ``node``."""
        support = self._support()
        if self._explicit is None and self._index.pairs is None and support is not None:
            if node not in support.rows:
                return ()
            return _possible_pairs(self.scenarios, support, node)
        return self._by_node().get(node, ())


def _possible_pairs(cls: ScenarioClass, support: StateSupport, node: Any) -> tuple:
    """Every pair of two possible states of ``node``."""
    states = cls.states_of(node)
    return node_pairs(node, [s for s, ok in zip(states, support.mask(node), strict=True) if ok])


def _skip_support(cls: ScenarioClass, explicit: tuple | None) -> StateSupport:
    """The possible states of the pairs' nodes (every node when ``explicit`` is None), or
    every state when leaving out the impossible ones would leave no pair."""
    if explicit is None:
        nodes = None if cls.kind == "chain" else [v for v in cls.nodes
                                                  if len(cls.states_of(v)) > 1]
        support = state_support(cls, nodes)
        left = bool(support.pair_counts().any())
    else:
        used = {v for p in explicit for s in (p.first, p.second) for v in s.evidence}
        support = state_support(cls, [v for v in cls.nodes if v in used])
        left = any(support.allows(cls, p) for p in explicit)
    return support if left else support.everything()


def _sample_nodes(cls: ScenarioClass) -> Sequence:
    """The nodes whose state counts decide whether any pair exists (one node for chains)."""
    return cls.nodes[:1] if cls.kind == "chain" else cls.nodes


def _check_pairs(cls: ScenarioClass, pairs: tuple) -> None:
    """Every pair is a SecretPair over known nodes and states (each secret checked once)."""
    seen: set = set()
    for p in pairs:
        if not isinstance(p, SecretPair):
            raise ParameterTypeError(f"pairs must be SecretPair objects, got {p!r}")
        for secret in (p.first, p.second):
            if secret in seen:
                continue
            for node, state in secret.evidence.items():
                cls.state_index(cls.members[0].check_node(node), state)
            seen.add(secret)


@dataclass(frozen=True)
class CompiledPair:
    """One pair under one scenario: the two evidence sets and their probabilities."""

    pair: SecretPair
    theta: int
    evidence_first: dict
    evidence_second: dict
    prob_first: float
    prob_second: float


@dataclass(frozen=True)
class SkippedPair:
    """A pair skipped for one scenario because a secret has probability 0 there."""

    pair: SecretPair
    theta: int
    reason: str


def compile_secrets(framework: Framework) -> tuple[tuple[CompiledPair, ...],
                                                   tuple[SkippedPair, ...]]:
    """Compile every (pair, θ) into conditional queries; skip θ where P(s|θ) = 0.

    Raises :class:`~pufferfish_pgm.errors.ImpossibleSecretError` for a secret of the
    framework's pairs that has probability 0 under every θ (a framework that skips such
    secrets has none left, unless every pair had one).

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import NodeSecret
    >>> mc = MarkovChainScenario([[1.0, 0.0], [0.5, 0.5]], [1.0, 0.0], 2)
    >>> fw = Framework(mc, [SecretPair(NodeSecret(1, 0), NodeSecret(1, 1))])
    >>> compile_secrets(fw)
    Traceback (most recent call last):
    ...
    pufferfish_pgm.errors.ImpossibleSecretError: secret 1=1 has probability 0 under every ...
    """

    compiled, skipped, possible = [], [], set()
    for pair in framework.pairs:
        for theta, scenario in enumerate(framework.scenarios):
            probs = [secret_probability(scenario, s.evidence) for s in (pair.first, pair.second)]
            for s, p in zip((pair.first, pair.second), probs, strict=True):
                if p > 0:
                    possible.add(s)
            if min(probs) > 0:
                compiled.append(CompiledPair(pair, theta, pair.first.evidence,
                                             pair.second.evidence, *probs))
            else:
                zero = pair.first if probs[0] == 0 else pair.second
                skipped.append(SkippedPair(pair, theta, f"P({zero}) = 0 under {scenario.name!r}"))
    check_possible(framework.pairs, possible)
    return tuple(compiled), tuple(skipped)
