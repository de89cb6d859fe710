"""The exact quilt mechanism: Markov quilts with the exact loss of the nearby block
(``docs/exact-quilt.md``; DESIGN §3.2, §3.7).

For a secret node X_i, a Markov quilt X_Q (remote part X_R with X_R ⟂ (X_N, X_i) | X_Q) and a
pair (s, s'), the output density given s is a mixture over x_Q, and a ratio of two mixtures
is at most the largest ratio of their terms; given x_Q the quilt's and the remote part of F
are an independent shift (post-processing). So, with ℓ_λ the exact Laplace loss,

    ε_i(λ) <= min over quilts  max_{θ, (s,s'), x_Q}  [ log P(x_Q|s)/P(x_Q|s')
                                                       + ℓ_λ(F_N | x_Q, s ; F_N | x_Q, s') ]

and the release adds Laplace(λ) with λ the smallest scale making every ε_i(λ) <= ε. MQM's own
bound e + n_N·L/λ is kept as one more option per node, so λ never exceeds MQM's scale. The
empty quilt (nearby = everything) gives the node's exact loss, the least bound: on chains
whose whole-chain laws fit ``max_chain_cells`` every node gets it from one forward–backward
pass and no quilt is searched (the global exact scale); elsewhere it is the only candidate of
nodes within the window of both ends. ``WindowedCount`` and ``WindowedHistogram`` on chains:
the same bound with the exact loss of the nearby block's vector of per-window values, every
released coordinate on its own axis (quilt search only;
:mod:`~pufferfish_pgm.quilts._quilt_vector_laws`). The search itself is
:mod:`~pufferfish_pgm.mechanisms._exact_quilt_search`.

``progress=`` (:mod:`pufferfish_pgm._progress`) counts MQM's calibration, the laws, and then
either each evaluation of the whole-chain bisection or each node class searched and
re-checked by the quilt search.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> from pufferfish_pgm.secrets import Framework
>>> from pufferfish_pgm.queries import Count
>>> from pufferfish_pgm.mechanisms import MarkovQuiltMechanism
>>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.1, 0.9]], "stationary", 100))
>>> cal = ExactQuiltMechanism(epsilon=1.0).calibrate(fw, Count(1))
>>> mqm = MarkovQuiltMechanism(epsilon=1.0).calibrate(fw, Count(1)).scale
>>> cal.scale < mqm / 2, cal.evidence.mqm_scale == mqm
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._budget import describe_bytes, memory_budget
from .._parallel import check_executor
from .._progress import Ticker, as_progress
from .._validation import positive_finite, positive_int
from ..errors import InvalidParameterError, ParameterTypeError
from ..privacy_loss import noiseless_epsilon, smallest_passing_scale
from ..privacy_loss._engine import NOISELESS_MARGIN, SLACK, Group, scale_floor
from ..queries import Query, WindowedQuery
from ..quilts._engine import (
    chain_setup,
    check_windowed,
    mixing_window,
    network_setup,
    pair_groups,
    vector_chain_setup,
    whole_chain_cells,
    whole_chain_laws,
    window_code,
)
from ..scenarios import MarkovChainScenario
from ..secrets import Framework
from ._exact_quilt_search import Search, Setup
from ._exact_quilt_streamed import streamed_whole_chain
from .base import Calibration, Mechanism
from .baselines import check_inputs
from .evidence import ExactQuiltEvidence
from .exact import bisection_estimate, counted
from .markov_quilt import MarkovQuiltMechanism

__all__ = ["ExactQuiltMechanism"]


@dataclass(frozen=True, kw_only=True)
class ExactQuiltMechanism(Mechanism):
    """Smallest Laplace scale proven by Markov quilts with exact nearby losses.

    Parameters
    ----------
    epsilon : float
        The privacy parameter ε > 0.
    max_window : int, default 256
        Chains: largest quilt distance (and open-side length) of the quilt search.
    window_tolerance : float, default 0.005
        Chains, scalar queries: the quilt search stops widening at the first distance d
        whose two-sided quilts {X_{i-d}, X_{i+d}} have a prior term <= this times ε for every
        member and pair (a choice of candidates for speed: wider quilts could save at most
        that much prior term; the scale stays proven; ``docs/exact-quilt.md``, "Window").
        0: always ``max_window``.
    max_chain_cells : int, default 10,000,000
        Chains with fixed initial laws: when the whole-chain count laws hold at most this many
        cells (Σ_θ T·k·C, C = T·max weight + 1), every node's empty quilt (its exact ε, the
        least bound) comes from one forward–backward pass and no quilt search is needed; the
        scale is then the global exact one. Over it, the laws are still used when they fit
        the memory budget (about 32 bytes a cell) and either a member is time-varying (its
        nodes share no quilt work) or no quilt within ``max_window`` has a prior term below
        0.05·ε (slowly mixing chains, where quilts cannot help; ``docs/exact-quilt.md``,
        "Whole chains"). 0: always search quilts.
    max_quilt_assignments : int, default 256
        Networks: quilts with more joint values are skipped (counted in the evidence).
    max_window_cells : int, default 16,384
        Windowed queries: quilts whose nearby block's joint law of the released per-window
        values has more grid points are skipped (larger: tighter scales, slower; a windowed
        histogram over k states has Π_j (n_j + 1)^k points, n_j the block's slots in window
        j; ``docs/exact-quilt.md``).
    max_candidates : int, default 200
        Networks: cut of the planner's candidate quilts per node.
    rtol : float, default 1e-10
        Relative width of the final bisection bracket (the passing end is returned).
    memory_budget : int, float or str, optional
        The most one windowed quilt's laws may take (bytes, or e.g. ``"2GB"``; also passed to
        the MQM planning): laws past it raise ``LimitExceededError`` naming the quilt, its
        windows and its size. Default: ``PUFFERFISH_PGM_MEMORY_BUDGET``, else a quarter of the
        free memory.

    Examples
    --------
    >>> ExactQuiltMechanism(epsilon=1.0, max_window=0)
    Traceback (most recent call last):
    ...
    pufferfish_pgm.errors.InvalidParameterError: max_window must be >= 1, got 0
    """

    max_window: int = 256
    window_tolerance: float = 0.005
    max_chain_cells: int = 10_000_000
    max_quilt_assignments: int = 256
    max_window_cells: int = 16_384
    max_candidates: int = 200
    rtol: float = 1e-10
    memory_budget: int | float | str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("max_window", "max_quilt_assignments", "max_candidates",
                     "max_window_cells"):
            object.__setattr__(self, name, positive_int(name, getattr(self, name)))
        object.__setattr__(self, "max_chain_cells",
                           positive_int("max_chain_cells", self.max_chain_cells, minimum=0))
        object.__setattr__(self, "window_tolerance", _tolerance(self.window_tolerance))
        if not positive_finite("rtol", self.rtol) < 1.0:
            raise InvalidParameterError(f"rtol must be < 1, got {self.rtol!r}")
        if self.memory_budget is not None:
            memory_budget(self.memory_budget)   # a clear error now, not at calibration

    def calibrate(self, framework: Framework, query: Query, *, executor: Any = None,
                  progress: Any = None) -> Calibration[ExactQuiltEvidence]:
        """Search the smallest scale every node's best quilt bound accepts (module docstring);
        ``executor`` is accepted for the common signature (the search runs here).
        ``progress``: None, True (a bar on stderr) or a callable ``(done, total)``."""
        check_executor(executor)
        steps = Ticker(as_progress(progress, "exact quilt"), total=2)
        cls = check_inputs(framework, query)
        _check_query(query, cls)
        _check_varying(query, cls)
        lipschitz = query.lipschitz_for(cls)
        mqm = MarkovQuiltMechanism(epsilon=self.epsilon, max_window=self.max_window,
                                   max_candidates=self.max_candidates,
                                   memory_budget=self.memory_budget,
                                   full_plan=True).calibrate(framework, query)
        steps.tick()
        whole, why = _WholeChain.build(self, framework, query) if lipschitz > 0 else (None, "")
        found = None if whole is not None else streamed_whole_chain(
            self.epsilon, self.rtol, self.max_chain_cells, framework, query, why, mqm.scale)
        scale, record = (whole.run(self.epsilon, self.rtol, mqm.scale, steps)
                         if whole is not None else found
                         or self._search(framework, query, mqm, lipschitz, why, steps))
        steps.finish()
        return Calibration(mechanism=self.name, epsilon=self.epsilon, scale=float(scale),
                           query=query, framework=framework, evidence=ExactQuiltEvidence(
                               lipschitz=lipschitz, mqm_scale=mqm.scale, **record))

    def _search(self, framework: Framework, query: Query, mqm: Calibration,
                lipschitz: float, whole: str, steps: Ticker) -> tuple[float, dict]:
        """The quilt search: its scale and evidence fields (``whole``: why the whole-chain
        laws were not used, said with the nodes left on MQM's bound)."""
        setup = _setup(self, framework, query, mqm)
        steps.tick()
        search = Search(setup, self.epsilon, self.rtol, lipschitz, steps)
        scale = search.run() if lipschitz > 0 else 0.0
        worst, key = search.worst()
        return scale, {"worst_node": worst, "worst_quilt": setup.describe(key, worst),
                       "classes": len(setup.classes), "evaluations": search.evaluations,
                       "mqm_bound_nodes": search.mqm_nodes(), "window": setup.window,
                       "skipped_quilts": setup.skipped, "cut_candidates": setup.cut,
                       "mqm_bound_reasons": search.mqm_reasons(whole)}


def _tolerance(value: Any) -> float:
    """``window_tolerance`` as a float in [0, 1)."""
    if value == 0 and not isinstance(value, bool):
        return 0.0
    out = positive_finite("window_tolerance", value)
    if out >= 1.0:
        raise InvalidParameterError(f"window_tolerance must be in [0, 1), got {out!r}; "
                                    "pass e.g. window_tolerance=0.02 (0: always max_window)")
    return out


def _chain_weights(framework: Framework, query: Any) -> np.ndarray:
    """The query's integer weights per state, shifted to start at 0 (a loss ignores shifts)."""
    weights = query.weights_of(framework.scenarios, 0)
    return (weights - weights.min()).astype(np.int64)


class _WholeChain:
    """Every secret node's empty quilt at once, from whole-chain laws (``docs/exact-quilt.md``,
    "Whole chains"): the node's exact realised ε, the least bound of any option, so no other
    option is needed and the scale is the smallest passing every node's comparisons."""

    def __init__(self, groups: list[Group], nodes: list[np.ndarray], length: int) -> None:
        self.groups, self.nodes, self.length = groups, nodes, length
        self.worst: tuple[float, int | None] = (-1.0, None)

    @classmethod
    def build(cls, mech: ExactQuiltMechanism, framework: Framework,
              query: Any) -> tuple[_WholeChain | None, str]:
        """The groups of every member, or None and why not (empty for networks)."""
        if framework.scenarios.kind != "chain":
            return None, ""
        if isinstance(query, WindowedQuery):   # the joint law of every window: out of reach
            return None, "whole-chain laws are not used for windowed queries"
        weights = _chain_weights(framework, query)
        why, cells = _whole_chain_refusal(mech, framework, weights)
        laws = None if why else whole_chain_laws(framework, weights, cells)
        if laws is None:
            return None, why
        names = [m.name for m in framework.scenarios]
        groups = [Group(theta, names[theta], (np.arange(rows.shape[1], dtype=float),), rows,
                        first, second, tuple(range(first.size)))
                  for theta, rows, first, second, _ in laws]
        return cls(groups, [law[-1] for law in laws], framework.scenarios.members[0].length), ""

    def final(self, scale: float, limit: float) -> bool:
        """Evaluate every comparison at ``scale``: do all pass? (records the worst node)"""
        self.worst = (-1.0, None)
        for group, node in zip(self.groups, self.nodes, strict=True):
            eps, _ = group.epsilons(np.array([scale]))
            i = int(np.argmax(eps))
            if eps[i] > self.worst[0]:
                self.worst = (float(eps[i]), int(node[i]))
        return self.worst[0] <= limit

    def _first(self, upper: float) -> tuple[int, int]:
        """The comparison to bisect alone first: the worst at ``upper`` of the node nearest
        the middle (the worst node of a long chain; a heuristic, the search checks all)."""
        node = self.nodes[0]
        mid = node == node[np.argmin(np.abs(node - (self.length - 1) / 2))]
        return 0, int(np.flatnonzero(mid)[np.argmax(self.groups[0].epsilons(
            np.array([upper]), mid)[0])])

    def run(self, epsilon: float, rtol: float, upper: float,
            ticker: Ticker | None = None) -> tuple[float, dict]:
        """The smallest scale passing every comparison, capped at ``upper`` (MQM's scale,
        which passes by theorem), and the evidence fields; each evaluation of a member's
        comparisons is a step of ``ticker`` (progress)."""
        ticker = ticker or Ticker(None)
        ticker.tick()     # the laws
        ticker.plan(bisection_estimate(self.groups, rtol))
        self.groups = counted(self.groups, ticker)
        limit = epsilon * (1.0 + SLACK)
        steps, scale = 1, scale_floor(self.groups, epsilon)
        if not self.groups:
            scale = 0.0
        elif noiseless_epsilon(self.groups) > epsilon * (1.0 - NOISELESS_MARGIN) or \
                not self.final(scale, limit):
            scale, steps, _ = smallest_passing_scale(
                self.groups, epsilon, upper, rtol, self._first(upper),
                lambda x: self.final(x, limit))
        capped = scale > upper
        secret_nodes = np.unique(np.concatenate(self.nodes)) if self.nodes else np.zeros(0)
        return min(scale, upper), {
            "worst_node": self.worst[1], "worst_quilt": (), "classes": len(secret_nodes),
            "evaluations": steps, "mqm_bound_nodes": len(secret_nodes) if capped else 0,
            "window": self.length - 1, "skipped_quilts": {}, "cut_candidates": (),
            "whole_chain": "stored", "mqm_bound_reasons": {
                "the whole-chain scale came out above MQM's (rounding)": len(secret_nodes)}
            if capped else {}}


#: Bytes per whole-chain cell at the peak: the log-mass rows, their noisy densities and the
#: forward-backward pass's working tables (measured 24-29 on Ordonez and sticky chains).
WHOLE_CHAIN_BYTES = 32
#: Over ``max_chain_cells``, the whole-chain laws are still computed (within the memory
#: budget) when no quilt within the window has a prior term below this times ε: the quilt
#: search would then end far above the exact scale (or at MQM's).
QUILT_PRIOR_ENOUGH = 0.05


def _whole_chain_refusal(mech: ExactQuiltMechanism, framework: Framework,
                         weights: np.ndarray) -> tuple[str, int]:
    """Why the whole-chain laws are not computed ("" when they are), and their cells."""
    members: list[Any] = list(framework.scenarios)
    if any(m.initial_is_any for m in members):
        return "whole-chain laws need a fixed initial law (a member has initial='any')", 0
    cells = int(sum(whole_chain_cells(m.length, m.k, weights) for m in members))
    if cells <= mech.max_chain_cells:
        return "", cells
    head = f"whole-chain laws not used: {cells:,} cells > max_chain_cells " \
           f"{mech.max_chain_cells:,}"
    need, budget = WHOLE_CHAIN_BYTES * cells, memory_budget(mech.memory_budget)
    if mech.max_chain_cells == 0 or need > budget:
        return (head if mech.max_chain_cells == 0 else f"{head} and about "
                f"{describe_bytes(need)} > the memory budget {describe_bytes(budget)}"), cells
    if any(m.time_varying for m in members):
        return "", cells   # no node class is shared: quilts would cost about T times more
    d, prior = mixing_window(members, _all_pairs(framework), mech.epsilon,
                             _window(mech.max_window, framework), QUILT_PRIOR_ENOUGH)
    if prior > QUILT_PRIOR_ENOUGH * mech.epsilon:
        return "", cells   # quilts cannot come close to the exact bound here
    return f"{head} (quilts at distance {d} have a prior term {prior:.3g} <= " \
           f"{QUILT_PRIOR_ENOUGH}·ε)", cells


def _check_varying(query: Any, cls: Any) -> None:
    """Windowed queries on time-varying chains are refused (their joint window laws take one
    matrix per chain); scalar queries are native."""
    if not isinstance(query, WindowedQuery):
        return
    for member in cls:
        if isinstance(member, MarkovChainScenario) and member.time_varying:
            member.require_homogeneous(
                f"the quilt-local exact mechanism with {query.name}",
                "use MarkovQuiltMechanism (native on time-varying chains), or this mechanism "
                "with Count or an integer LinearQuery")


def _check_query(query: Any, cls: Any) -> None:
    if check_windowed(query, cls):
        return
    if not hasattr(query, "weights") or not getattr(query, "integer", False):
        raise ParameterTypeError(
            f"ExactQuiltMechanism calibrates Count, integer LinearQuery, WindowedCount and "
            f"WindowedHistogram queries, got "
            f"{getattr(query, 'name', type(query).__name__)}; use ExactLaplaceMechanism "
            "(histograms, small models) or MarkovQuiltMechanism (any Lipschitz query)")
    if cls.kind == "chain" and query.nodes is not None and \
            tuple(query.node_list(cls)) != tuple(cls.nodes):
        raise InvalidParameterError(
            "ExactQuiltMechanism on chains needs a query over every node (its bridge laws "
            "are shared along the chain); use MarkovQuiltMechanism or ExactLaplaceMechanism "
            "for a query over part of the chain")


def _all_pairs(framework: Framework) -> np.ndarray:
    """The ordered state pairs of every pair group, once each."""
    return np.unique(np.concatenate([p for _, p in pair_groups(framework)] +
                                    [np.zeros((0, 2), dtype=np.int64)]), axis=0)


def _window(max_window: int, framework: Framework) -> int:
    return max(1, min(max_window, framework.scenarios.members[0].length - 1))


def _setup(mech: ExactQuiltMechanism, framework: Framework, query: Any,
           mqm: Calibration) -> Setup:
    plan: Any = mqm.plan   # chains: a ChainPlan (sorted nodes and their σ)
    if framework.scenarios.kind != "chain":
        return Setup(*network_setup(framework, query, plan, mech.max_candidates,
                                    mech.max_quilt_assignments), None, mech.memory_budget)
    window = _window(mech.max_window, framework)
    nodes, sigma = np.asarray(plan.nodes), np.asarray(plan.sigma)
    if isinstance(query, WindowedQuery):   # the window is the longest block that fits
        classes, candidates, laws, window = vector_chain_setup(
            framework, window_code(framework, query), query.width, window, nodes, sigma,
            mech.max_window_cells, mech.memory_budget)
        return Setup(classes, candidates, laws, {}, (), window, mech.memory_budget)
    if window < framework.scenarios.members[0].length - 1:   # else every node's empty quilt
        window = mixing_window(list(framework.scenarios), _all_pairs(framework), mech.epsilon,
                               window, mech.window_tolerance)[0]
    classes, candidates, laws = chain_setup(framework, _chain_weights(framework, query),
                                            window, nodes, sigma)
    return Setup(classes, candidates, laws, {}, (), window, mech.memory_budget)
