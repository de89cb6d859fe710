"""Exact distributions of integer-weighted linear queries given a secret (DESIGN §3.6).

For a scenario θ, a query ``F = Σ_v w_v(X_v)`` with integer weights (a :class:`Count` or an
integer :class:`LinearQuery`) and evidence such as ``{node: state}``, this module computes
``P(F = c | evidence, θ)`` exactly: forward–backward with a count axis on chains, variable
elimination with polynomial factors on networks. Masses are kept as logarithms to relative
precision, however small (see :mod:`pufferfish_pgm.distributions._log_space`).

Several queries at once (a histogram's bars, or several releases) give a joint distribution
over integer vectors: the weights are packed into one integer (each coordinate a digit of a
mixed radix large enough that no digit overflows), computed with the same engines, and
unpacked.

Chains with ``initial="any"`` have no single distribution; :func:`fixed_start_variants`
replaces such a chain by the finite class the distribution-based mechanisms audit: its k
point-mass starts and, when unique, its stationary start. The supremum over *all* initial
distributions can exceed the maximum over these (the loss of a mixture of starts is not
bounded by the loss of its components, because the two secrets reweight the starts
differently), so for ``initial="any"`` the results are exact for this finite class only.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> from pufferfish_pgm.queries import Count
>>> mc = MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], [1.0, 0.0], 3)
>>> d = query_distribution(mc, Count(1), {1: 1})
>>> d.support.tolist(), d.probs.round(4).tolist()
([1.0, 2.0], [0.2, 0.8])
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..distributions import DiscreteDistribution
from ..distributions._engine import logsumexp
from ..errors import ImpossibleSecretError, InvalidModelError, ParameterTypeError
from ..inference._engine import NetworkIndex, network_index, network_parts
from ..scenarios import MarkovChainScenario, MarkovNetworkScenario, Scenario, as_class
from ..scenarios._engine import FactorTables, NetworkTables
from ._chain_count_law import MAX_CELLS, ChainCountTables
from ._component_count_law import ComponentCountLaw
from ._network_count_law import factor_log_joint, tables_log_joint
from ._packed_weights import PackedWeights, pack_queries

__all__ = ["CountPmf", "JointPmf", "fixed_start_variants", "joint_query_log_pmf",
           "log_joint_engine", "query_distribution", "query_log_pmf"]


@dataclass(frozen=True, eq=False)
class CountPmf:
    """A distribution on the lattice ``offset + step * i`` (i = 0..n-1) as log masses.

    ``log_mass`` is normalised (its exponentials sum to 1) and ``-inf`` marks a zero mass.

    Examples
    --------
    >>> pmf = CountPmf(offset=2, step=3, log_mass=np.array([np.log(0.5), -np.inf, np.log(0.5)]))
    >>> pmf.support.tolist(), pmf.to_distribution().support.tolist()
    ([2, 8], [2.0, 8.0])
    """

    offset: int
    step: int
    log_mass: np.ndarray

    @property
    def lattice(self) -> np.ndarray:
        """Every lattice point, with or without mass."""
        return self.offset + self.step * np.arange(self.log_mass.size, dtype=np.int64)

    @property
    def support(self) -> np.ndarray:
        """The lattice points with positive mass."""
        return self.lattice[np.isfinite(self.log_mass)]

    @property
    def probs(self) -> np.ndarray:
        """Masses of :attr:`support` (float64; masses below ~1e-308 underflow to 0)."""
        return np.exp(self.log_mass[np.isfinite(self.log_mass)])

    def to_distribution(self) -> DiscreteDistribution:
        """As a :class:`DiscreteDistribution` (masses that underflow float64 are dropped)."""
        return DiscreteDistribution.from_arrays(self.support, self.probs)


@dataclass(frozen=True, eq=False)
class JointPmf:
    """A distribution on integer vectors: ``points`` (m, d) with log masses (m,).

    Examples
    --------
    >>> j = JointPmf(points=np.array([[0, 2], [1, 1]]), log_mass=np.log([0.25, 0.75]))
    >>> j.dimension, j.marginal(0).probs.tolist()
    (2, [0.25, 0.75])
    """

    points: np.ndarray
    log_mass: np.ndarray

    @property
    def dimension(self) -> int:
        return int(self.points.shape[1])

    def marginal(self, j: int) -> CountPmf:
        """The distribution of coordinate ``j``."""
        values = self.points[:, j]
        lo, hi = int(values.min()), int(values.max())
        out = np.full(hi - lo + 1, -np.inf)
        np.logaddexp.at(out, values - lo, self.log_mass)
        return CountPmf(offset=lo, step=1, log_mass=out)


def fixed_start_variants(scenario: Any) -> tuple:
    """The scenarios audited for ``scenario``: itself, or for a chain with ``initial="any"``
    its k point-mass starts and (when unique) its stationary start.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> mc = MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "any", 4, name="c")
    >>> [v.name for v in fixed_start_variants(mc)]
    ['c[start=0]', 'c[start=1]', 'c[stationary start]']
    """
    if not (isinstance(scenario, MarkovChainScenario) and scenario.initial_is_any):
        return (scenario,)
    out = [MarkovChainScenario(scenario.transition, np.eye(scenario.k)[z], scenario.length,
                               scenario.states, name=f"{scenario.name}[start={s}]")
           for z, s in enumerate(scenario.states)]
    try:
        out.append(MarkovChainScenario(scenario.transition, "stationary", scenario.length,
                                       scenario.states,
                                       name=f"{scenario.name}[stationary start]"))
    except InvalidModelError:
        pass  # reducible chain: no unique stationary start
    return tuple(out)


def _codes(scenario: Scenario, evidence: Mapping | None) -> dict:
    if evidence is None:
        return {}
    if not isinstance(evidence, Mapping):
        raise ParameterTypeError(f"evidence must be a dict node -> state, got {evidence!r}")
    return {scenario.check_node(n): scenario.state_index(n, s) for n, s in evidence.items()}


class LogJointEngine:
    """``log P(packed F = c, evidence)`` for one fixed scenario and packed weights (cached).

    It keeps what it needs of the scenario (a chain's count tables, a network's tables and
    inference index), never the scenario itself: engines are kept per scenario in a
    weak-keyed table (:func:`log_joint_engine`), whose values must not refer to their key.
    """

    def __init__(self, scenario: Scenario, packed: PackedWeights,
                 max_cells: int | None = MAX_CELLS) -> None:
        if isinstance(scenario, MarkovChainScenario) and scenario.initial_is_any:
            raise InvalidModelError(
                f"chain {scenario.name!r} has initial='any', so the query has no single "
                "distribution; use fixed_start_variants(scenario) to get fixed starts"
            )
        self.packed = packed
        self._chain: ChainCountTables | None = None
        self._network: tuple[NetworkTables, NetworkIndex] | None = None
        self._parts: ComponentCountLaw | None = None
        self._factors: tuple[FactorTables, NetworkIndex, dict] | None = None
        if (isinstance(scenario, MarkovNetworkScenario)   # undirected, connected: factors
                and network_parts(scenario.tables).components == 1):
            self._factors = (scenario.tables, network_index(scenario), {})
        elif isinstance(scenario, MarkovChainScenario):
            table = np.array([packed.weights.get(t, np.zeros(scenario.k, np.int64))
                              for t in scenario.nodes], dtype=np.int64)
            self._chain = ChainCountTables(scenario.transition, scenario.initial_distribution,
                                           table, max_cells=max_cells)
        elif network_parts(scenario.tables).components > 1:   # independent parts (plates)
            self._parts = ComponentCountLaw(network_parts(scenario.tables), packed.weights)
        else:
            self._network = (scenario.tables, network_index(scenario))
        self._log_joints: dict[tuple, np.ndarray] = {}

    def secret_log_joints(self, wanted: Sequence[dict]) -> Iterator[tuple[int, np.ndarray]]:
        """``(i, log_joint(wanted[i]))`` for every evidence dict, in an order of the engine's
        choosing, without caching the results.

        On a chain with single-node evidence the laws are streamed from one forward pass and
        a backward pass that is never stored (memory: half a count table instead of two,
        plus nothing kept afterwards); elsewhere they come from :meth:`log_joint`.
        """
        if self._chain is None or any(len(codes) != 1 for codes in wanted):
            for i, codes in enumerate(wanted):
                yield i, self.log_joint(codes)
            return
        where: dict[tuple[int, int], int] = {}
        for i, codes in enumerate(wanted):
            ((t, state),) = codes.items()
            where[(int(t), int(state))] = i
        by_step: dict[int, list[int]] = {}
        for t, state in where:
            by_step.setdefault(t, []).append(state)
        for t, state, law in self._chain.stream_secret_log_joints(by_step):
            yield where[(t, state)], law

    def secret_key(self, codes: dict) -> tuple:
        """A key equal for evidence with equal laws: the codes, or on a network of plates the
        touched components' kinds and their codes at the representative's nodes."""
        if self._parts is not None:
            return self._parts.secret_key(codes)
        return tuple(sorted(codes.items(), key=repr))

    def log_joint(self, codes: dict) -> np.ndarray:
        """Unnormalised log masses on 0..C-1 (``logsumexp`` is log P(evidence))."""
        key = tuple(sorted(codes.items(), key=repr))
        out = self._log_joints.get(key)
        if out is None:
            if self._chain is not None:
                out = (self._chain.evidence_log_joint(codes) if codes
                       else logsumexp(self._chain.forward()[-1], axis=0))
            elif self._parts is not None:
                out = self._parts.log_joint(codes)
            elif self._factors is not None:
                tables, index, log_z = self._factors
                out = factor_log_joint(tables, index, self.packed.weights, codes, log_z=log_z)
            else:
                assert self._network is not None
                out = tables_log_joint(*self._network, self.packed.weights, codes)
            self._log_joints[key] = out
        return out


#: The engines of each scenario object by packed-weights key; owned by this module.
_ENGINES: weakref.WeakKeyDictionary[Scenario, dict[tuple, LogJointEngine]] = (
    weakref.WeakKeyDictionary())


def log_joint_engine(scenario: Scenario, packed: PackedWeights,
                     max_cells: int | None = MAX_CELLS) -> LogJointEngine:
    """The :class:`LogJointEngine` of ``scenario`` for ``packed`` (made once, then reused).

    Engines are kept per scenario object in a weak-keyed table owned by this module: they
    live as long as the scenario, and a ``dataclasses.replace`` copy gets its own.
    """
    engines = _ENGINES.get(scenario)
    if engines is None:
        engines = _ENGINES[scenario] = {}
    engine = engines.get(packed.key)
    if engine is None:
        engine = engines[packed.key] = LogJointEngine(scenario, packed, max_cells)
    return engine


def _normalised(scenario: Any, codes: dict, log_joint: np.ndarray) -> np.ndarray:
    total = float(logsumexp(log_joint))
    if not math.isfinite(total):
        shown = {n: scenario.states_of(n)[c] for n, c in codes.items()}
        raise ImpossibleSecretError(
            f"the evidence {shown} has probability 0 under {scenario.name!r}; condition on "
            "something possible"
        )
    return log_joint - total


def query_log_pmf(scenario: Any, query: Any, evidence: Mapping | None = None, *,
                  max_cells: int | None = MAX_CELLS) -> CountPmf:
    """Exact ``P(F = c | evidence, θ)`` of an integer-weighted linear query, as log masses.

    Parameters
    ----------
    scenario : MarkovChainScenario, BayesianNetworkScenario or MarkovNetworkScenario
        One scenario with a fixed start (see :func:`fixed_start_variants`).
    query : Count or LinearQuery
        Integer weights are required.
    evidence : dict, optional
        ``{node: state}`` to condition on (a secret).
    max_cells : int, optional
        Size limit (cells) of a chain's count tables; default: the memory budget.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.queries import LinearQuery
    >>> mc = MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 2)
    >>> pmf = query_log_pmf(mc, LinearQuery({0: -2, 1: 2}))
    >>> pmf.support.tolist(), pmf.probs.round(12).tolist()
    ([-4, 0, 4], [0.25, 0.5, 0.25])
    """
    packed = pack_queries(as_class(scenario), [query])
    codes = _codes(scenario, evidence)
    log_joint = log_joint_engine(scenario, packed, max_cells).log_joint(codes)
    return CountPmf(offset=int(packed.offsets[0]), step=int(packed.steps[0]),
                    log_mass=_normalised(scenario, codes, log_joint))


def query_distribution(scenario: Any, query: Any,
                       evidence: Mapping | None = None) -> DiscreteDistribution:
    """Exact distribution of ``F`` given ``evidence`` under one scenario.

    See :func:`query_log_pmf`; masses below ~1e-308 underflow and are dropped here.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import BayesianNetworkScenario, default_model_path
    >>> from pufferfish_pgm.queries import Count
    >>> asia = BayesianNetworkScenario.from_file(default_model_path("asia.bif"))
    >>> d = query_distribution(asia, Count("yes", ["tub", "lung"]), {"smoke": "yes"})
    >>> d.support.tolist(), d.probs.round(4).tolist()
    ([0.0, 1.0, 2.0], [0.8906, 0.1083, 0.001])
    """
    return query_log_pmf(scenario, query, evidence).to_distribution()


def joint_query_log_pmf(scenario: Any, queries: Sequence, evidence: Mapping | None = None,
                        *, max_cells: int | None = MAX_CELLS) -> JointPmf:
    """Exact joint distribution of several integer linear queries given ``evidence``.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.queries import Count
    >>> mc = MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], "stationary", 2)
    >>> j = joint_query_log_pmf(mc, [Count(0), Count(1)])
    >>> j.points.tolist(), np.exp(j.log_mass).round(12).tolist()
    ([[2, 0], [1, 1], [0, 2]], [0.25, 0.5, 0.25])
    """
    packed = pack_queries(as_class(scenario), list(queries))
    codes = _codes(scenario, evidence)
    log_joint = log_joint_engine(scenario, packed, max_cells).log_joint(codes)
    log_mass = _normalised(scenario, codes, log_joint)
    where = np.flatnonzero(np.isfinite(log_mass))
    return JointPmf(points=packed.unpack(where), log_mass=log_mass[where])
