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
nodes within the window of both ends. ``WindowedCount`` on chains: the same bound with the
exact loss of the nearby block's vector of window counts (quilt search only;
:mod:`~pufferfish_pgm.quilts._quilt_vector_laws`).

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

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._parallel import check_executor
from .._validation import positive_finite, positive_int
from ..errors import InvalidParameterError, ParameterTypeError
from ..privacy_loss import noiseless_epsilon, scale_floor, smallest_passing_scale
from ..privacy_loss._bisection import NOISELESS_MARGIN, SLACK
from ..privacy_loss._pair_rows import Group
from ..queries import Query, WindowedCount
from ..quilts._quilt_classes import NodeClass, chain_setup, key_shape, quilt_nodes
from ..quilts._quilt_laws import QuiltRows, whole_chain_laws
from ..quilts._quilt_network import network_setup
from ..quilts._quilt_vector_laws import check_windowed, vector_chain_setup, windowed_weights
from ..secrets import Framework
from .base import Calibration, Mechanism
from .baselines import check_inputs
from .evidence import ExactQuiltEvidence
from .markov_quilt import MarkovQuiltMechanism

__all__ = ["ExactQuiltMechanism"]

MQM = ("mqm",)   # the key of MQM's own bound e + n_N·L/λ


@dataclass(frozen=True, kw_only=True)
class ExactQuiltMechanism(Mechanism):
    """Smallest Laplace scale proven by Markov quilts with exact nearby losses.

    Parameters
    ----------
    epsilon : float
        The privacy parameter ε > 0.
    max_window : int, default 256
        Chains: largest quilt distance (and open-side length) of the quilt search.
    max_chain_cells : int, default 10,000,000
        Chains with fixed initial laws: when the whole-chain count laws hold at most this many
        cells (Σ_θ T·k·C, C = T·max weight + 1), every node's empty quilt (its exact ε, the
        least bound) comes from one forward–backward pass and no quilt search is needed; the
        scale is then the global exact one. 0: always search quilts.
    max_quilt_assignments : int, default 256
        Networks: quilts with more joint values are skipped (counted in the evidence).
    max_window_cells : int, default 16,384
        Windowed counts: quilts whose nearby block's joint law of per-window counts has more
        grid points are skipped (larger: tighter scales, slower; ``docs/exact-quilt.md``).
    max_candidates : int, default 200
        Networks: cut of the planner's candidate quilts per node.
    rtol : float, default 1e-10
        Relative width of the final bisection bracket (the passing end is returned).

    Examples
    --------
    >>> ExactQuiltMechanism(epsilon=1.0, max_window=0)
    Traceback (most recent call last):
    ...
    pufferfish_pgm.errors.InvalidParameterError: max_window must be >= 1, got 0
    """

    max_window: int = 256
    max_chain_cells: int = 10_000_000
    max_quilt_assignments: int = 256
    max_window_cells: int = 16_384
    max_candidates: int = 200
    rtol: float = 1e-10

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("max_window", "max_quilt_assignments", "max_candidates",
                     "max_window_cells"):
            object.__setattr__(self, name, positive_int(name, getattr(self, name)))
        object.__setattr__(self, "max_chain_cells",
                           positive_int("max_chain_cells", self.max_chain_cells, minimum=0))
        if not positive_finite("rtol", self.rtol) < 1.0:
            raise InvalidParameterError(f"rtol must be < 1, got {self.rtol!r}")

    def calibrate(self, framework: Framework, query: Query, *,
                  executor: Any = None) -> Calibration[ExactQuiltEvidence]:
        """Search the smallest scale every node's best quilt bound accepts (module docstring);
        ``executor`` is accepted for the common signature (the search runs here)."""
        check_executor(executor)
        cls = check_inputs(framework, query)
        _check_query(query, cls)
        lipschitz = query.lipschitz_for(cls)
        mqm = MarkovQuiltMechanism(epsilon=self.epsilon, max_window=self.max_window,
                                   max_candidates=self.max_candidates).calibrate(framework, query)
        whole = _WholeChain.build(self, framework, query) if lipschitz > 0 else None
        scale, record = (whole.run(self.epsilon, self.rtol, mqm.scale) if whole is not None
                         else self._search(framework, query, mqm, lipschitz))
        return Calibration(mechanism=self.name, epsilon=self.epsilon, scale=float(scale),
                           query=query, framework=framework, evidence=ExactQuiltEvidence(
                               lipschitz=lipschitz, mqm_scale=mqm.scale, **record))

    def _search(self, framework: Framework, query: Query, mqm: Calibration,
                lipschitz: float) -> tuple[float, dict]:
        """The quilt search: its scale and evidence fields."""
        cls = framework.scenarios
        setup = _setup(self, framework, query, mqm)
        search = _Search(setup, self.epsilon, self.rtol, lipschitz)
        scale = search.run() if lipschitz > 0 else 0.0
        worst, key = search.worst()
        return scale, {"worst_node": worst, "worst_quilt": setup.describe(key, worst),
                       "classes": len(setup.classes), "evaluations": search.evaluations,
                       "mqm_bound_nodes": search.mqm_nodes(),
                       "window": _window(self.max_window, framework) if cls.kind == "chain"
                       else None,
                       "skipped_quilts": setup.skipped, "cut_candidates": setup.cut}


def _chain_weights(framework: Framework, query: Any) -> np.ndarray:
    """The query's integer weights per state, shifted to start at 0 (a loss ignores shifts)."""
    if isinstance(query, WindowedCount):
        return windowed_weights(framework, query)
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
              query: Any) -> _WholeChain | None:
        """The groups of every member, or None where some member has no fixed initial law or
        the laws would exceed ``mech.max_chain_cells``."""
        if framework.scenarios.kind != "chain" or isinstance(query, WindowedCount):
            return None   # vector queries: the joint law of every window is out of reach
        laws = whole_chain_laws(framework, _chain_weights(framework, query),
                                mech.max_chain_cells)
        if laws is None:
            return None
        names = [m.name for m in framework.scenarios]
        groups = [Group(theta, names[theta], (np.arange(rows.shape[1], dtype=float),), rows,
                        first, second, tuple(range(first.size)))
                  for theta, rows, first, second, _ in laws]
        return cls(groups, [law[-1] for law in laws], framework.scenarios.members[0].length)

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

    def run(self, epsilon: float, rtol: float, upper: float) -> tuple[float, dict]:
        """The smallest scale passing every comparison, capped at ``upper`` (MQM's scale,
        which passes by theorem), and the evidence fields."""
        limit = epsilon * (1.0 + SLACK)
        steps, scale = 1, scale_floor(self.groups)
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
            "window": self.length - 1, "skipped_quilts": {}, "cut_candidates": ()}


def _check_query(query: Any, cls: Any) -> None:
    if check_windowed(query, cls):
        return
    if not hasattr(query, "weights") or not getattr(query, "integer", False):
        raise ParameterTypeError(
            f"ExactQuiltMechanism calibrates Count, integer LinearQuery and WindowedCount "
            f"queries, got "
            f"{getattr(query, 'name', type(query).__name__)}; use ExactLaplaceMechanism "
            "(histograms, small models) or MarkovQuiltMechanism (any Lipschitz query)")
    if cls.kind == "chain" and query.nodes is not None and \
            tuple(query.node_list(cls)) != tuple(cls.nodes):
        raise InvalidParameterError(
            "ExactQuiltMechanism on chains needs a query over every node (its bridge laws "
            "are shared along the chain); use MarkovQuiltMechanism or ExactLaplaceMechanism "
            "for a query over part of the chain")


@dataclass(frozen=True, eq=False)
class _Setup:
    """What the search needs: classes, their candidates, the laws behind each key."""

    classes: list
    candidates: list
    laws: list            # per class: the object whose rows(key) gives its QuiltRows
    skipped: Mapping
    cut: tuple

    def describe(self, key: tuple | None, node: Hashable | None) -> tuple:
        """The quilt nodes of a key at ``node`` (for the evidence)."""
        return () if key is None or key == MQM or node is None else quilt_nodes(key, node)


def _window(max_window: int, framework: Framework) -> int:
    return max(1, min(max_window, framework.scenarios.members[0].length - 1))


def _setup(mech: ExactQuiltMechanism, framework: Framework, query: Any,
           mqm: Calibration) -> _Setup:
    plan: Any = mqm.plan   # chains: a ChainPlan (sorted nodes and their σ)
    if framework.scenarios.kind != "chain":
        return _Setup(*network_setup(framework, query, plan, mech.max_candidates,
                                     mech.max_quilt_assignments))
    if isinstance(query, WindowedCount):
        return _Setup(*vector_chain_setup(
            framework, windowed_weights(framework, query), query.width,
            _window(mech.max_window, framework), np.asarray(plan.nodes),
            np.asarray(plan.sigma), mech.max_window_cells), {}, ())
    classes, candidates, laws = chain_setup(framework, _chain_weights(framework, query),
                                            _window(mech.max_window, framework),
                                            np.asarray(plan.nodes), np.asarray(plan.sigma))
    return _Setup(classes, candidates, laws, {}, ())


class _Search:
    """The smallest λ such that every class has an option whose bound is <= ε."""

    def __init__(self, setup: _Setup, epsilon: float, rtol: float, lipschitz: float) -> None:
        self.setup, self.epsilon, self.rtol, self.lipschitz = setup, epsilon, rtol, lipschitz
        self.limit = epsilon * (1.0 + SLACK)
        self.winner: list[tuple] = [MQM] * len(setup.classes)
        self.evaluations = 0
        self._loss: dict[tuple, tuple[float, np.ndarray]] = {}
        self._groups: dict[tuple, Group | None] = {}
        self._recent: list[tuple] = []
        self._priors: dict[tuple, tuple[np.ndarray, np.ndarray, bool]] = {}
        self.need = [0.0] * len(setup.classes)

    # --- one bound ------------------------------------------------------------------------
    def _group(self, c: int, key: tuple) -> Group | None:
        gid = (id(self.setup.laws[c]), key)
        if gid not in self._groups:
            rows = self.setup.laws[c].rows(key)
            self._groups[gid] = None if not len(rows.first) else Group(
                0, "quilt", rows.axes(), rows.table(), rows.first, rows.second,
                tuple(range(len(rows.first))))
        return self._groups[gid]

    def _losses(self, c: int, key: tuple, scale: float) -> np.ndarray:
        gid = (id(self.setup.laws[c]), key)
        hit = self._loss.get(gid)
        if hit is None or hit[0] != scale:
            group = self._group(c, key)
            self.evaluations += 1
            eps = np.zeros(0) if group is None else group.epsilons(
                np.full(len(group.grids), scale))[0]   # Laplace(λ) on every coordinate
            self._loss[gid] = hit = (scale, eps)
        return hit[1]

    def _prior_part(self, c: int, key: tuple) -> tuple[np.ndarray, np.ndarray, bool]:
        """Comparisons that apply to class c, their log P(x_Q|s)/P(x_Q|s'), and whether a
        quilt value possible under one secret only makes the quilt unusable (kept)."""
        hit = self._priors.get((c, key))
        if hit is None:
            hit = self._priors[(c, key)] = self._new_prior_part(c, key)
        return hit

    def _new_prior_part(self, c: int, key: tuple) -> tuple[np.ndarray, np.ndarray, bool]:
        cl: NodeClass = self.setup.classes[c]
        rows: QuiltRows = self.setup.laws[c].rows(key)
        ok = cl.applies(rows.distance, rows.theta, rows.left, rows.state, rows.other)
        b = rows.blockers
        blocked = bool(cl.applies(rows.distance, b[:, 0], b[:, 1], b[:, 2], b[:, 3]).any())
        r = rows.r0 + (cl.prior[rows.theta, rows.state, rows.other] if rows.prior else 0.0)
        return ok, r, blocked

    def bound(self, c: int, key: tuple, scale: float) -> float:
        """The bound of option ``key`` for class c at ``scale`` (inf: unusable)."""
        if key == MQM:
            ok = scale >= self.lipschitz * self.setup.classes[c].mqm_sigma
            return 0.0 if ok else np.inf
        ok, r, blocked = self._prior_part(c, key)
        if blocked:
            return np.inf
        if not ok.any():
            return 0.0
        loss = self._losses(c, key, scale)
        return float(np.max(r[ok] + loss[ok]))

    # --- the search -----------------------------------------------------------------------
    def _ordered(self, c: int) -> list[tuple]:
        keys = self.setup.candidates[c]
        shapes = {key_shape(k): n for n, k in enumerate(self._recent)}
        return sorted(keys, key=lambda k: shapes.get(key_shape(k), len(shapes)))

    def passes(self, c: int, scale: float, tries: int | None = None) -> bool:
        """Does one of the first ``tries`` options of class c (all: None) pass at ``scale``?
        (last winner and recent shapes first; the passing option becomes the class's winner
        and the most recent shape)"""
        for key in ([self.winner[c]] + self._ordered(c))[:tries]:
            if self.bound(c, key, scale) <= self.limit:
                self.winner[c] = key
                self._remember(key)
                return True
        return False

    def _remember(self, key: tuple) -> None:
        if key != MQM:
            self._recent = [key] + [k for k in self._recent if key_shape(k) != key_shape(key)][:7]

    def _useful(self, c: int, key: tuple) -> bool:
        ok, r, blocked = self._prior_part(c, key)
        return not blocked and not (ok.any() and r[ok].max() >= self.limit)

    def threshold(self, c: int, lo: float) -> float:
        """Smallest passing scale of class c from ``lo`` on (``lo`` itself when an option
        passes there), up to rtol."""
        best = self.lipschitz * self.setup.classes[c].mqm_sigma
        self.winner[c] = MQM
        for key in self._ordered(c):
            top = best * (1.0 - self.rtol)
            if top <= lo or not self._useful(c, key) or self.bound(c, key, top) > self.limit:
                continue
            if lo > 0.0 and self.bound(c, key, lo) <= self.limit:   # passes at lo already
                best, self.winner[c] = lo, key
                break
            best = self._bisect(c, key, lo, top)   # lo fails for key: a valid bracket
            self.winner[c] = key
            self._remember(key)
        self.need[c] = best
        return best

    def _bisect(self, c: int, key: tuple, lo: float, hi: float) -> float:
        group = self._group(c, key)
        floor = scale_floor([group]) if group is not None else hi
        while lo <= 0.0:
            trial = max(hi / 8.0, floor)
            if self.bound(c, key, trial) > self.limit:
                lo = trial
            elif trial <= floor:
                return trial
            else:
                hi = trial
        while hi - lo > self.rtol * hi:
            mid = float(np.sqrt(lo * hi)) if hi > 4.0 * lo else 0.5 * (lo + hi)
            if self.bound(c, key, mid) <= self.limit:
                hi = mid
            else:
                lo = mid
        return hi

    def run(self) -> float:
        """The largest class threshold, re-checked on every class at the returned scale."""
        scale, count = 0.0, len(self.setup.classes)
        # neediest first (MQM's σ as the guide): later classes then mostly pass at once
        order = sorted(range(count), key=lambda c: -self.setup.classes[c].mqm_sigma)
        for _ in range(16):
            for c in order:   # a few tries; threshold checks every option at the scale
                if scale > 0.0 and self.passes(c, scale, len(self._recent) + 1):
                    continue
                scale = max(scale, self.threshold(c, scale))
            # final check of every class at the returned scale: the bounds never increase
            # with λ in exact arithmetic, this guards against rounding
            if all(self.passes(c, scale) for c in range(count)):
                return scale
        fallback = max(self.lipschitz * cl.mqm_sigma for cl in self.setup.classes)
        self.winner = [MQM] * count
        return fallback   # MQM's own scale passes every class by theorem

    def worst(self) -> tuple[Hashable | None, tuple | None]:
        """A node of the class needing the largest scale, and its option there."""
        if not self.setup.classes:
            return None, None
        c = int(np.argmax(self.need))
        return self.setup.classes[c].node, self.winner[c]

    def mqm_nodes(self) -> int:
        """Secret nodes whose bound at the final scale is MQM's own."""
        return int(sum(len(cl.nodes) for cl, w in zip(self.setup.classes, self.winner,
                                                       strict=True) if w == MQM))

