"""The Markov Quilt Mechanism (Song, Wang, Chaudhuri 2017; DESIGN §3.2-3.3).

For every secret node X_i the planner picks the Markov quilt minimising

    σ_i = card(X_N) / (ε - e_Θ(X_Q | X_i))

(``card`` counts the nearby nodes the query sums over) and the release adds
Laplace(L · σ_max), σ_max = max_i σ_i, to an L-Lipschitz query. σ_max already contains 1/ε:
the lecture notes' Algorithm 2 divides by ε a second time, a typo (see
``docs/algorithm2_typo.md``).

* :class:`MarkovQuiltMechanism`: exact max-influence over a finite class; chains use the
  closed-form planner MQMExact (:mod:`pufferfish_pgm.quilts`), networks the d-separation
  planner (:mod:`pufferfish_pgm.quilts`).
* :class:`MQMApproxMechanism` and :func:`mqm_approx_scale`: MQMApprox, which only needs the
  class's smallest stationary probability π_min and eigengap g.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> from pufferfish_pgm.secrets import Framework
>>> from pufferfish_pgm.queries import Count
>>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.1, 0.9]], "stationary", 100))
>>> cal = MarkovQuiltMechanism(epsilon=1.0).calibrate(fw, Count(1))
>>> round(cal.scale, 3), cal.plan[50].quilt, cal.plan[50].nearby
(31.738, (38, 62), range(39, 62))
>>> cal.evidence.planner, cal.evidence.worst_node, cal.evidence.trivial_nodes
('chain', 16, 0)
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._budget import memory_budget
from .._parallel import check_executor
from .._progress import as_progress
from .._tolerances import STATIONARITY
from .._validation import positive_finite, positive_int
from ..errors import InvalidParameterError, ParameterTypeError
from ..queries import Query
from ..quilts import ChainPlan, PlanEntry, plan_chain, plan_network
from ..quilts._engine import plan_runs, search_shared
from ..scenarios import MarkovChainScenario, Scenario, ScenarioClass, as_class
from ..scenarios._engine import stationary_distribution
from ..secrets import Framework
from .base import Calibration, Mechanism
from .baselines import check_inputs
from .evidence import QuiltEvidence

__all__ = ["MQMApproxMechanism", "MarkovQuiltMechanism", "chain_mixing", "mqm_approx_plan",
           "mqm_approx_scale"]


@dataclass(frozen=True, kw_only=True)
class MarkovQuiltMechanism(Mechanism):
    """MQM with exact max-influence over a finite class of chains or networks.

    Parameters
    ----------
    epsilon : float
        The privacy parameter ε > 0.
    max_quilt_states : int, default 10**6
        Networks: quilts whose joint table has more cells are skipped (counted in
        ``Calibration.evidence.skipped_quilts``), never computed.
    extra_quilts : dict, optional
        Networks: node -> iterable of extra candidate quilts (iterables of nodes).
    max_candidates : int, default 20_000
        Networks: cut of the per-branch candidate product (nodes cut are listed in the evidence).
    max_window : int, default 2048
        Chains: largest quilt distance searched. Nodes whose optimum cannot be proven within
        it keep the best σ found (still valid) and are counted as ``truncated``.
    memory_budget : int, float or str, optional
        Networks: the most one inference table may take (bytes, or e.g. ``"2GB"``); quilts
        whose influence needs more are skipped before any table is built (counted in
        ``Calibration.evidence.over_budget_quilts``). Default: the environment variable
        ``PUFFERFISH_PGM_MEMORY_BUDGET``, else a quarter of the free memory.
    max_region : int, default 500
        Networks: the most nodes a candidate's nearby set, or the region its influence is
        computed on, may hold; larger candidates are skipped (``trivial_reasons`` says so
        when a node keeps the trivial quilt for it). The work per secret node is bounded by
        this and the memory budget, not by the network's size. A node whose whole component
        (Bayesian network: its ancestors) fits gets exact influences; otherwise the prior
        term of its influences is bounded through its best separator (``docs/undirected.md``).
    full_plan : bool, default False
        Networks: search every secret node's best quilt. By default a node's search stops
        once its σ is at most the largest σ another node already needs (nodes are planned
        by decreasing degree): the scale is the same, and such nodes' entries hold a valid
        but not minimal σ (counted in ``trivial_reasons`` when it is the trivial quilt's).

    Notes
    -----
    ``calibrate(...).plan`` holds one :class:`PlanEntry` per secret node: a tuple for
    networks, and for chains a :class:`~pufferfish_pgm.quilts._plan.ChainPlan` (a read-only
    sequence of PlanEntry stored as arrays, whose nearby and remote sets are ranges), so that
    memory stays linear in T. ``evidence`` is a
    :class:`~pufferfish_pgm.mechanisms.evidence.QuiltEvidence`: σ_max, the worst node, L, the
    number of nodes left with the empty quilt, and what limited the search.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework
    >>> from pufferfish_pgm.queries import Histogram
    >>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.1, 0.9]], "stationary", 3))
    >>> cal = MarkovQuiltMechanism(epsilon=1.0).calibrate(fw, Histogram())
    >>> cal.scale == 2 * cal.evidence.sigma_max, cal.plan[1].trivial
    (True, True)
    """

    max_quilt_states: int = 10**6
    extra_quilts: Mapping | None = None
    max_candidates: int = 20_000
    max_window: int = 2048
    memory_budget: int | float | str | None = None
    max_region: int = 500
    full_plan: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("max_quilt_states", "max_candidates", "max_window", "max_region"):
            object.__setattr__(self, name, positive_int(name, getattr(self, name)))
        if self.memory_budget is not None:
            memory_budget(self.memory_budget)   # a clear error now, not at calibration
        if not isinstance(self.full_plan, bool):
            raise ParameterTypeError(f"full_plan must be True or False, got {self.full_plan!r}")
        if self.extra_quilts is not None and not isinstance(self.extra_quilts, Mapping):
            raise ParameterTypeError(
                f"extra_quilts must be a dict node -> iterable of quilts, got "
                f"{type(self.extra_quilts).__name__}")

    def calibrate(self, framework: Framework, query: Query, *, executor: Any = None,
                  progress: Any = None) -> Calibration[QuiltEvidence]:
        """Plan the quilts and return the Laplace scale L·σ_max with the plan as evidence
        (a network's secret nodes are planned on ``executor`` if given; chains plan serially,
        vectorised). ``progress`` (networks: one step per secret node): None, True (a bar
        on stderr) or a callable ``(done, total)`` (:mod:`pufferfish_pgm._progress`)."""
        as_progress(progress)   # a bad value errs on chains too
        check_executor(executor)
        cls = check_inputs(framework, query)
        lipschitz = self.scale_for(query, cls, 1.0)  # also checks the query's states
        if cls.kind == "chain":
            chain = plan_chain(framework, query, self.epsilon, max_window=self.max_window)
            return _calibration(self, framework, query, chain, QuiltEvidence(
                lipschitz=lipschitz, planner="chain", **_chain_fields(chain)))
        result = plan_network(framework, query, self.epsilon,
                              max_quilt_states=self.max_quilt_states,
                              extra_quilts=self.extra_quilts, max_candidates=self.max_candidates,
                              memory_budget=self.memory_budget, executor=executor,
                              max_region=self.max_region, progress=progress,
                              shortcut=not self.full_plan)
        entries: tuple[PlanEntry, ...] = result.entries
        sigmas = np.array([e.sigma for e in entries])
        trivial = np.array([e.trivial for e in entries], dtype=bool)
        return _calibration(self, framework, query, entries, QuiltEvidence(
            lipschitz=lipschitz, planner="network", skipped_quilts=result.skipped,
            over_budget_quilts=result.over_budget, cut_candidates=result.cut,
            trivial_reasons=result.trivial_reasons, bounded_influences=result.bounded,
            **_worst(entries, sigmas, trivial)))


def _chain_fields(plan: ChainPlan) -> dict:
    """The QuiltEvidence fields about a chain plan, from its node classes (no per-node array):
    σ_max, the first node reaching it, the nodes left trivial and those truncated."""
    trivial = (plan.run_left == 0) & (plan.run_right == 0)
    return {"sigma_max": plan.sigma_max, "worst_node": plan.worst_node,
            "trivial_nodes": plan.count_where(trivial),
            "truncated_nodes": plan.count_where(plan.run_truncated)}


def _worst(plan: Sequence[PlanEntry], sigmas: np.ndarray, trivial: np.ndarray) -> dict:
    """The QuiltEvidence fields about the plan: σ_max, a node reaching it, trivial nodes."""
    worst = int(np.argmax(sigmas)) if len(sigmas) else None
    node: Hashable | None = None if worst is None else plan[worst].node
    return {"sigma_max": 0.0 if worst is None else float(sigmas[worst]), "worst_node": node,
            "trivial_nodes": int(trivial.sum())}


def _calibration(mech: Mechanism, framework: Framework, query: Query,
                 plan: Sequence[PlanEntry],
                 evidence: QuiltEvidence) -> Calibration[QuiltEvidence]:
    return Calibration(mechanism=mech.name, epsilon=mech.epsilon,
                       scale=evidence.lipschitz * evidence.sigma_max, query=query,
                       framework=framework, plan=plan, evidence=evidence)


# ----------------------------------------------------------------------------- MQMApprox

def chain_mixing(scenarios: ScenarioClass | Scenario) -> tuple[float, float]:
    """(π_min, eigengap) of a class of chains: the smallest of each over the members.

    Eigengap of a reversible P: 1 - |λ₂(P)| (second largest modulus); otherwise
    (1 - |λ₂(P P*)|) / 2 with the time reversal P*[i,j] = π_j P[j,i] / π_i (DESIGN §3.3).

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> pi_min, gap = chain_mixing(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "any", 5))
    >>> round(pi_min, 4), round(gap, 4)
    (0.3333, 0.3)
    """
    cls = as_class(scenarios)
    if cls.kind != "chain":
        raise InvalidParameterError("MQMApprox needs a class of Markov chains")
    pis, gaps = [], []
    for chain in cls:
        assert isinstance(chain, MarkovChainScenario)  # a chain class holds chains only
        chain.require_homogeneous("MQMApprox (π_min and the eigengap of one transition "
                                  "matrix)", _APPROX_ALTERNATIVE)
        p = chain.transition
        pi = stationary_distribution(p)
        flow = pi[:, None] * p
        if np.allclose(flow, flow.T, rtol=0, atol=STATIONARITY):
            gaps.append(1.0 - _second_modulus(p))
        elif pi.min() > 0:
            reverse = (p.T * pi[None, :]) / pi[:, None]
            gaps.append((1.0 - _second_modulus(p @ reverse)) / 2.0)
        else:
            gaps.append(0.0)
        pis.append(float(pi.min()))
    return min(pis), max(0.0, min(gaps))


#: What to use instead of MQMApprox on a time-varying chain. Its bound needs every step to
#: mix towards one stationary law π (Δ(d) = e^{-g·d}/π_min bounds |q_t/π - 1| after d steps of
#: one matrix); products of different matrices have no such π and no eigengap bound in
#: general, so no condition on the per-step matrices is stated here.
_APPROX_ALTERNATIVE = ("use MarkovQuiltMechanism (exact max-influence with every step's "
                       "matrix), or MQMApprox on the homogeneous fit (MarkovChainScenario.fit "
                       "without period=)")


def _second_modulus(matrix: np.ndarray) -> float:
    moduli = np.sort(np.abs(np.linalg.eigvals(matrix)))
    return float(min(1.0, moduli[-2])) if len(moduli) > 1 else 0.0


def _approx_tables(pi_min: float, eigengap: float,
                   window: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    delta = np.exp(-eigengap * np.arange(1, window + 1)) / pi_min
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(delta < 1, np.log((1 + delta) / (1 - delta)), np.inf)
    return 2 * term[:, None] + term[None, :], term, 2 * term


def mqm_approx_plan(pi_min: float, eigengap: float, epsilon: float, length: int, *,
                    max_window: int = 2048) -> ChainPlan:
    """The MQMApprox plan of every node 0..T-1 (σ for L = 1), as a ChainPlan."""

    pi_min = positive_finite("pi_min", pi_min)
    if pi_min > 1:
        raise InvalidParameterError(f"pi_min is a probability, got {pi_min}")
    if isinstance(eigengap, (bool, np.bool_)) or not isinstance(eigengap, (int, float)):
        raise ParameterTypeError(f"eigengap must be a real number, got {eigengap!r}")
    if not 0 <= eigengap <= 1:
        raise InvalidParameterError(
            f"eigengap must be between 0 and 1, got {eigengap!r}: it is 1 - |λ| for the "
            "transition matrix's second-largest eigenvalue modulus |λ| (see chain_mixing)")
    epsilon = positive_finite("epsilon", epsilon)
    length = positive_int("length", length)
    if eigengap == 0 or np.exp(-eigengap * (length - 1)) / pi_min >= 1:
        one = np.array([0])    # no quilt is ever usable: every node trivial, one class
        return ChainPlan(starts=one, stops=np.array([length]), run_left=one, run_right=one,
                         run_influence=np.zeros(1), run_sigma=np.full(1, length / epsilon),
                         run_truncated=np.zeros(1, dtype=bool), length=length)
    cap = max(1, min(length - 1, max_window))
    return plan_runs(lambda nodes, _: search_shared(
        lambda w: _approx_tables(pi_min, float(eigengap), w), nodes, length, epsilon,
        max_window), [(np.array([[0, length]]), None)], length, cap + 1, cap)


def mqm_approx_scale(pi_min: float, eigengap: float, epsilon: float, length: int) -> float:
    """MQMApprox σ: the Laplace scale for a 1-Lipschitz query over a chain of ``length`` nodes.

    Δ(d) = e^{-g·d}/π_min (usable when < 1) and
    e(a, b) = 2·log((1+Δ(a))/(1-Δ(a))) + log((1+Δ(b))/(1-Δ(b))) (an absent side adds 0);
    every node is searched and σ = max_i min_(a,b) card / (ε - e).

    Examples
    --------
    >>> round(mqm_approx_scale(pi_min=0.5, eigengap=0.8, epsilon=1.0, length=100), 3)
    11.537
    >>> mqm_approx_scale(pi_min=0.5, eigengap=0.0, epsilon=1.0, length=100)   # group DP
    100.0
    """
    return mqm_approx_plan(pi_min, eigengap, epsilon, length).sigma_max


@dataclass(frozen=True, kw_only=True)
class MQMApproxMechanism(Mechanism):
    """MQMApprox for a class of chains, from its π_min and eigengap (see
    :func:`chain_mixing`); the plan covers every node. Valid for any initial distribution:
    q_i = q_{i-a} P^a lies within a factor 1 ± Δ(a) of π, hence the factor 2 on the left.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework
    >>> from pufferfish_pgm.queries import Count
    >>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.1, 0.9]], "stationary", 100))
    >>> round(MQMApproxMechanism(epsilon=1.0).calibrate(fw, Count(1)).scale, 3)
    49.22
    """

    max_window: int = 2048

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "max_window", positive_int("max_window", self.max_window))

    def calibrate(self, framework: Framework, query: Query, *,
                  executor: Any = None) -> Calibration[QuiltEvidence]:
        """The MQMApprox scale L·σ_max for ``query``."""
        check_executor(executor)   # no loop to scale out here; a bad value still errs
        cls = check_inputs(framework, query)
        lipschitz = self.scale_for(query, cls, 1.0)
        pi_min, gap = chain_mixing(cls)
        if pi_min <= 0.0:
            raise InvalidParameterError(
                f"MQMApprox needs π_min > 0 (a stationary distribution that is positive on "
                f"every state), but chain {_transient_chain(cls)!r} has transient states with "
                "stationary probability 0; use MarkovQuiltMechanism (exact max-influence, no "
                "mixing assumption, no π_min), instead")
        plan = mqm_approx_plan(pi_min, gap, self.epsilon, len(cls.nodes),
                               max_window=self.max_window)
        return _calibration(self, framework, query, plan, QuiltEvidence(
            lipschitz=lipschitz, planner="approx", pi_min=pi_min, eigengap=gap,
            **_chain_fields(plan)))


def _transient_chain(cls: ScenarioClass) -> str:
    """The name of a chain of ``cls`` whose stationary distribution has a zero."""
    return next(c.name for c in cls if isinstance(c, MarkovChainScenario)
                and stationary_distribution(c.transition).min() <= 0)
