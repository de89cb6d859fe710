"""The evidence behind a calibrated scale: one frozen, documented record per mechanism family.

Every :class:`~pufferfish_pgm.mechanisms.Calibration` carries, besides its Laplace scale, the
facts that justify it in ``Calibration.evidence``:

======================  ===========================================  =========================
class                   mechanisms                                   what it records
======================  ===========================================  =========================
:class:`QuiltEvidence`  MarkovQuilt, MQMApprox (DESIGN §3.2–3.3)     σ_max, worst node, limits
:class:`ExactEvidence`  ExactLaplace (DESIGN §3.7)                   the audit, the bisection
:class:`DistanceEvidence`  Wasserstein, Kantorovich (DESIGN §3.5)    W, worst pair, plan
:class:`BaselineEvidence`  GroupDP, EntryDP (DESIGN §3.4)            L, σ and the formula
:class:`BlowfishEvidence`  BlowfishLaplace (DESIGN §3.9)             sensitivity, edges
:class:`ExactQuiltEvidence`  ExactQuilt (``docs/exact-quilt.md``)    MQM scale, worst quilt
:class:`OptimalNoiseEvidence`  OptimalNoise (``docs/optimal-noise.md``)  audit, loss, vs Laplace
:class:`CertifiedEvidence`  any, read back from a certificate        the recorded evidence
======================  ===========================================  =========================

Fields are typed attributes (``cal.evidence.sigma_max``). Reading by name also works
(``cal.evidence["sigma_max"]``); an unknown name raises a ``KeyError`` that lists the valid ones.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> from pufferfish_pgm.secrets import Framework
>>> from pufferfish_pgm.queries import Count
>>> from pufferfish_pgm.mechanisms import GroupDPMechanism
>>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 4))
>>> ev = GroupDPMechanism(epsilon=1.0).calibrate(fw, Count(1)).evidence
>>> ev.group_size, ev["formula"], "warning" in ev
(4, 'L * n / epsilon', True)
>>> ev["distance"]
Traceback (most recent call last):
...
pufferfish_pgm.mechanisms.evidence.EvidenceKeyError: BaselineEvidence has no field 'distance'; ...
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field

from ._audited_evidence import (
    AuditedEvidence,
    DistanceEvidence,
    ExactEvidence,
    OptimalNoiseEvidence,
)
from ._evidence_base import CertifiedEvidence, Evidence, EvidenceKeyError, EvidenceT, WorstPair

__all__ = ["AuditedEvidence", "BaselineEvidence", "BlowfishEvidence", "CertifiedEvidence",
           "DistanceEvidence", "Evidence", "EvidenceKeyError", "EvidenceT", "ExactEvidence",
           "ExactQuiltEvidence", "OptimalNoiseEvidence", "QuiltEvidence", "WorstPair"]


@dataclass(frozen=True, kw_only=True)
class QuiltEvidence(Evidence):
    """Why a Markov Quilt Mechanism scale is ``lipschitz · sigma_max`` [SWC17].

    Attributes
    ----------
    lipschitz : float
        L, the most the query moves when one node changes.
    sigma_max : float
        σ_max = max_i σ_i over the secret nodes, for L = 1 (it already contains 1/ε).
    worst_node : hashable or None
        A secret node reaching σ_max (None when the plan is empty).
    trivial_nodes : int
        Secret nodes left with the trivial quilt (quilt = ∅, every node nearby). On networks
        with ``full_plan=False`` (the default) this includes nodes whose search stopped
        because another node already needs the trivial quilt's σ (the scale cannot change);
        ``trivial_reasons`` counts those apart.
    planner : str
        ``"chain"`` (MQMExact), ``"network"`` (d-separation) or ``"approx"`` (MQMApprox).
    truncated_nodes : int
        Chains: nodes whose search reached ``max_window`` before it could prove optimality
        (their σ is still valid); 0 for networks.
    skipped_quilts : mapping node -> int
        Networks: candidate quilts left out because their joint table exceeds
        ``max_quilt_states``; empty for chains.
    over_budget_quilts : mapping node -> int
        Networks: candidate quilts left out because computing their influence needs an
        inference table above the memory budget; empty for chains.
    cut_candidates : tuple
        Networks: nodes whose candidate list was cut at ``max_candidates``.
    trivial_reasons : mapping str -> int
        Networks: why nodes kept the trivial quilt (the memory budget, ``max_quilt_states``,
        every candidate's influence, or no candidate) and how many; empty for chains.
    pi_min : float or None
        MQMApprox: the class's smallest stationary probability π_min (None for MQM).
    eigengap : float or None
        MQMApprox: the class's smallest eigengap g (None for MQM).
    bounded_influences : int
        Networks: secret nodes whose chosen quilt's max-influence is a proven upper bound
        rather than the exact e_Θ (the node's own region exceeded ``max_region``, so the
        prior term is bounded over the quilt's region, ``docs/undirected.md``): their σ is
        valid, possibly above the best that quilt allows; 0 for chains.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework
    >>> from pufferfish_pgm.queries import Count
    >>> from pufferfish_pgm.mechanisms import MQMApproxMechanism
    >>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.1, 0.9]], "stationary", 100))
    >>> ev = MQMApproxMechanism(epsilon=1.0).calibrate(fw, Count(1)).evidence
    >>> ev.planner, round(ev.pi_min, 6), round(ev.eigengap, 3), round(ev.sigma_max, 2)
    ('approx', 0.5, 0.2, 49.22)
    """

    lipschitz: float
    sigma_max: float
    worst_node: Hashable | None
    trivial_nodes: int
    planner: str
    truncated_nodes: int = 0
    skipped_quilts: Mapping[Hashable, int] = field(default_factory=dict)
    over_budget_quilts: Mapping[Hashable, int] = field(default_factory=dict)
    cut_candidates: tuple = ()
    pi_min: float | None = None
    eigengap: float | None = None
    trivial_reasons: Mapping[str, int] = field(default_factory=dict)
    bounded_influences: int = 0


@dataclass(frozen=True, kw_only=True)
class ExactQuiltEvidence(Evidence):
    """Why an exact quilt scale passes: every node has a quilt whose bound is <= ε there
    (``docs/exact-quilt.md``).

    Attributes
    ----------
    lipschitz : float
        L, the most the query moves when one node changes.
    mqm_scale : float
        The Markov Quilt Mechanism's scale with the same settings: the upper end of the
        search (it passes by theorem), so the calibrated scale is never larger.
    worst_node : hashable or None
        A secret node of the class that needs the calibrated scale.
    worst_quilt : tuple
        The quilt nodes of its best option (empty for the empty quilt or MQM's own bound).
    classes : int
        Node classes evaluated (nodes with the same bound share one).
    evaluations : int
        Exact loss evaluations (one per quilt and scale).
    mqm_bound_nodes : int
        Secret nodes whose best bound at the calibrated scale is MQM's e + n_N·L/λ.
    window : int or None
        Chains: the largest quilt distance and open-side length whose laws were computed.
    skipped_quilts : mapping node -> int
        Networks: candidate quilts left out for having more than ``max_quilt_assignments``
        joint values.
    cut_candidates : tuple
        Networks: nodes whose candidate list was cut at ``max_candidates``.
    trivial_reasons : mapping str -> int
        Networks: why nodes kept the trivial quilt (the memory budget, ``max_quilt_states``,
        every candidate's influence, or no candidate) and how many; empty for chains.
    mqm_bound_reasons : mapping str -> int
        Why nodes were left on MQM's own bound (the fallback when no quilt passes, the
        trivial quilt of MQM on sticky chains): each reason with its number of secret nodes,
        e.g. candidate quilts blocked by zero transitions, prior terms above ε within the
        window, or no candidate passing; with why the whole-chain laws were not used. Empty
        when no node was.
    whole_chain : str
        Chains: ``"stored"`` when every node's empty quilt was evaluated from whole-chain laws
        held in memory; ``"exact"`` when the exact Laplace calibration ran in their place (a
        time-varying chain whose whole-chain laws exceed the memory budget: it streams them
        node by node, and its scale is the one they give); ``""`` when the quilt search ran.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework
    >>> from pufferfish_pgm.queries import Count
    >>> from pufferfish_pgm.mechanisms import ExactQuiltMechanism
    >>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 30))
    >>> cal = ExactQuiltMechanism(epsilon=1.0).calibrate(fw, Count(1))
    >>> ev = cal.evidence
    >>> cal.scale <= ev.mqm_scale, ev.window, ev.skipped_quilts, ev.whole_chain
    (True, 29, {}, 'stored')
    """

    lipschitz: float
    mqm_scale: float
    worst_node: Hashable | None
    worst_quilt: tuple
    classes: int
    evaluations: int
    mqm_bound_nodes: int
    window: int | None = None
    skipped_quilts: Mapping[Hashable, int] = field(default_factory=dict)
    cut_candidates: tuple = ()
    mqm_bound_reasons: Mapping[str, int] = field(default_factory=dict)
    whole_chain: str = ""


@dataclass(frozen=True, kw_only=True)
class BaselineEvidence(Evidence):
    """Why a differential-privacy baseline's scale is ``L · sigma`` (DESIGN §3.4).

    Attributes
    ----------
    lipschitz : float
        L, the most the query moves when one node changes.
    sigma : float
        n/ε for group DP (n = ``group_size``), 1/ε for entry DP.
    formula : str
        The scale as a formula, e.g. ``"L * n / epsilon"``.
    group_size : int or None
        Group DP: the number of nodes the query sums over; None for entry DP.
    warning : str
        Entry DP: why its ε is nominal under correlation; empty for group DP.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework
    >>> from pufferfish_pgm.queries import Count
    >>> from pufferfish_pgm.mechanisms import EntryDPMechanism
    >>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 4))
    >>> ev = EntryDPMechanism(epsilon=0.5).calibrate(fw, Count(1)).evidence
    >>> ev.sigma, ev.group_size, ev.warning.startswith("entry DP is not")
    (2.0, None, True)
    """

    lipschitz: float
    sigma: float
    formula: str
    group_size: int | None = None
    warning: str = ""


@dataclass(frozen=True, kw_only=True)
class BlowfishEvidence(Evidence):
    """Why a Blowfish scale is ``sensitivity / ε`` [MK15] (DESIGN §3.9).

    Attributes
    ----------
    sensitivity : float
        The policy-specific sensitivity: the most the query moves along a policy edge.
    edges : tuple or mapping node -> tuple
        The policy's edges ``(x, y)``: one tuple for a shared graph, else per node.
    lipschitz : float
        L, the query's sensitivity to any change of one node (≥ ``sensitivity``).
    formula : str
        ``"scale = policy sensitivity / epsilon"``.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework
    >>> from pufferfish_pgm.queries import Count
    >>> from pufferfish_pgm.mechanisms import BlowfishLaplaceMechanism
    >>> iid = Framework(MarkovChainScenario([[0.7, 0.3], [0.7, 0.3]], "stationary", 3))
    >>> ev = BlowfishLaplaceMechanism(epsilon=1.0).calibrate(iid, Count(1)).evidence
    >>> ev.sensitivity, ev.edges, ev.lipschitz
    (1.0, ((0, 1),), 1.0)
    """

    sensitivity: float
    edges: tuple | Mapping[Hashable, tuple]
    lipschitz: float
    formula: str
