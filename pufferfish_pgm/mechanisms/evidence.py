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
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, TypeVar

import numpy as np

from ..errors import PufferfishError
from ..privacy_loss import AuditReport
from ..secrets import SecretPair

#: The evidence type of a :class:`~pufferfish_pgm.mechanisms.Calibration`
#: (``Calibration[ExactEvidence]``; a bare ``Calibration`` is ``Calibration[Any]``).
EvidenceT = TypeVar("EvidenceT", bound="Evidence", covariant=True)

__all__ = ["AuditedEvidence", "BaselineEvidence", "BlowfishEvidence", "DistanceEvidence",
           "Evidence", "EvidenceKeyError", "ExactEvidence", "ExactQuiltEvidence",
           "OptimalNoiseEvidence", "QuiltEvidence",
           "WorstPair"]


class EvidenceKeyError(PufferfishError, KeyError):
    """A field name that the evidence record does not have (the message lists the valid ones)."""


class _ReadByName:
    """``record["field"]`` reads the attribute ``field`` of a dataclass record."""

    __iter__: ClassVar[None] = None  # not a mapping: no iteration over keys or values

    def __getitem__(self, name: str) -> Any:
        if name not in self:
            valid = ", ".join(f.name for f in fields(self))  # type: ignore[arg-type]
            raise EvidenceKeyError(f"{type(self).__name__} has no field {name!r}; its fields "
                                   f"are: {valid or 'none'} (read them as attributes)")
        return getattr(self, name)

    def __contains__(self, name: object) -> bool:
        return any(f.name == name for f in fields(self))  # type: ignore[arg-type]


@dataclass(frozen=True, kw_only=True)
class Evidence(_ReadByName):
    """Base of every evidence record; on its own, a calibration with nothing to report.

    Examples
    --------
    >>> Evidence()["audit"]
    Traceback (most recent call last):
    ...
    pufferfish_pgm.mechanisms.evidence.EvidenceKeyError: Evidence has no field 'audit'; ...
    """


@dataclass(frozen=True, kw_only=True)
class WorstPair(_ReadByName):
    """The discriminative pair and scenario where a mechanism's distance is largest.

    Attributes
    ----------
    pair : SecretPair
        The pair of secrets (s, s') that are hardest to hide.
    theta : int
        Index of the scenario θ in the framework's class.
    scenario : str
        Name of that scenario.
    """

    pair: SecretPair
    theta: int
    scenario: str


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
        Secret nodes left with the trivial quilt (quilt = ∅, every node nearby).
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
    pi_min : float or None
        MQMApprox: the class's smallest stationary probability π_min (None for MQM).
    eigengap : float or None
        MQMApprox: the class's smallest eigengap g (None for MQM).

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

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework
    >>> from pufferfish_pgm.queries import Count
    >>> from pufferfish_pgm.mechanisms import ExactQuiltMechanism
    >>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 30))
    >>> cal = ExactQuiltMechanism(epsilon=1.0).calibrate(fw, Count(1))
    >>> ev = cal.evidence
    >>> cal.scale <= ev.mqm_scale, ev.window, ev.skipped_quilts
    (True, 29, {})
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


@dataclass(frozen=True, kw_only=True)
class AuditedEvidence(Evidence):
    """Evidence of the mechanisms that audit their own release exactly (DESIGN §3.7).

    Attributes
    ----------
    audit : AuditReport or None
        The exact audit of the calibrated release (None when no noise is added).
    coverage : str
        What the audit covers (all of Θ, or fixed starts only for ``initial="any"`` chains).
    skipped : tuple
        (pair, θ) combinations not audited because a secret is impossible under θ.
    """

    audit: AuditReport | None
    coverage: str
    skipped: tuple = ()


@dataclass(frozen=True, kw_only=True)
class ExactEvidence(AuditedEvidence):
    """Why an exact Laplace scale is the smallest the exact audit accepts (DESIGN §3.7).

    Attributes
    ----------
    audit, coverage, skipped : see :class:`AuditedEvidence`
        The exact audit of the calibrated release (None without noise), what it covers, and
        the (pair, θ) combinations skipped because a secret is impossible under θ.
    coordinates : tuple of str
        Names of the released coordinates (one per bar of a histogram).
    wasserstein_scale : float or None
        W∞/ε, the Wasserstein scale the search starts below (one coordinate; 0.0 when no
        noise is needed); None for a vector release.
    upper_bracket : float or None
        The scale that passes by theorem and starts the bisection (None: no noise needed).
    upper_used : float or None
        The upper bracket actually used (doubled if rounding made the theorem's fail).
    bisection_steps : int
        Evaluations of the audit during the search.
    note : str
        Why no noise is needed, when the scale is 0; else empty.
    streamed : bool
        True when the laws were streamed node by node (long chains; see
        :mod:`pufferfish_pgm.privacy_loss._streamed_exact`): the search then starts from
        ``lower_bracket`` and no W∞ is computed (``wasserstein_scale`` is None).
    lower_bracket : float or None
        The scale proven to fail by the generating-function limits (streamed search only).

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework
    >>> from pufferfish_pgm.queries import Count
    >>> from pufferfish_pgm.mechanisms import ExactLaplaceMechanism
    >>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 6))
    >>> ev = ExactLaplaceMechanism(epsilon=1.0).calibrate(fw, Count(1)).evidence
    >>> ev.coordinates, ev.audit.epsilon <= 1.0, ev.wasserstein_scale
    (('count(1)',), True, 5.0)
    """

    coordinates: tuple[str, ...]
    wasserstein_scale: float | None
    upper_bracket: float | None = None
    upper_used: float | None = None
    bisection_steps: int = 0
    note: str = ""
    streamed: bool = False
    lower_bracket: float | None = None


@dataclass(frozen=True, kw_only=True)
class OptimalNoiseEvidence(AuditedEvidence):
    """Why an optimal integer noise law is ε-private, and what it saves
    (``docs/optimal-noise.md``).

    Attributes
    ----------
    audit, coverage, skipped : see :class:`AuditedEvidence`
        The exact audit of the quantised law that is sampled (None without noise).
    loss : str
        The minimised loss (``'abs'``, ``'square'`` or ``('tail', t)``).
    objective : float
        That loss for the sampled law.
    mean_abs : float
        ``E|Z|`` of the sampled law.
    laplace_scale : float
        The exact discrete Laplace calibration's scale λ* for the same ε.
    laplace_objective, laplace_mean_abs : float
        The loss and ``E|Z|`` of discrete Laplace(λ*).
    ratio : float
        ``objective / laplace_objective`` (NaN when both are 0).
    tail_scale : float
        λ of the geometric tails (λ*, or L/ε' if larger, widened by 1e-4).
    core : tuple of int
        ``(lo, hi)``: where the tails start.
    dp_epsilon, dp_realised : float or None
        The plain-DP floor asked for and ``max_z |log f(z)/f(z ± L)|`` of the sampled law.
    lp_rows, lp_rounds : int
        Constraint rows generated and LP solves.
    margin : float
        Relative tightening of ε in the LP whose quantised solution passed the audit.
    note : str
        Why no noise is needed, when none is; else empty.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework
    >>> from pufferfish_pgm.queries import Count
    >>> from pufferfish_pgm.mechanisms import OptimalNoiseMechanism
    >>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 8))
    >>> ev = OptimalNoiseMechanism(epsilon=1.0).calibrate(fw, Count(1)).evidence
    >>> ev.audit.epsilon <= 1.0, ev.ratio < 1.0, ev.core[0] < 0 < ev.core[1]
    (True, True, True)
    """

    loss: str
    objective: float
    mean_abs: float
    laplace_scale: float
    laplace_objective: float
    laplace_mean_abs: float
    ratio: float
    tail_scale: float
    core: tuple[int, int]
    dp_epsilon: float | None = None
    dp_realised: float | None = None
    lp_rows: int = 0
    lp_rounds: int = 0
    margin: float = 0.0
    note: str = ""


@dataclass(frozen=True, kw_only=True)
class DistanceEvidence(AuditedEvidence):
    """Why a transport scale is ``factor · distance / ε`` (Wasserstein, Kantorovich; §3.5).

    Attributes
    ----------
    audit, coverage, skipped : see :class:`AuditedEvidence`
        The exact audit of the calibrated release (None without noise), what it covers, and
        the (pair, θ) combinations skipped because a secret is impossible under θ.
    distance : float
        The largest distance over pairs and scenarios: W∞ (Wasserstein), ``sup Δ*``
        (Kantorovich) or ε times the largest relaxed θ (relaxed Kantorovich).
    worst : WorstPair or None
        The pair and scenario where it is reached (None when no pair is possible).
    plan_support : numpy.ndarray or None
        Rows ``(x, x', mass)`` of the optimal (monotone) transport plan there.
    distances : tuple
        Wasserstein: ``(pair, θ, scenario, W∞)`` for every pair and scenario; else empty.
    relaxed_theta : float or None
        Relaxed Kantorovich: the scale θ solving eq. 20 (equal to the calibrated scale).

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework
    >>> from pufferfish_pgm.queries import Count
    >>> from pufferfish_pgm.mechanisms import WassersteinMechanism
    >>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 5))
    >>> ev = WassersteinMechanism(epsilon=1.0).calibrate(fw, Count(1)).evidence
    >>> ev.distance, ev.worst.theta, ev.plan_support.shape[1]
    (5.0, 0, 3)
    """

    distance: float
    worst: WorstPair | None
    plan_support: np.ndarray | None
    distances: tuple = ()
    relaxed_theta: float | None = None


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
