"""The exact quilt mechanism: Markov quilts with the exact loss of the nearby block
(``docs/exact-quilt.md``; DESIGN §3.2, §3.7).

For a secret node X_i, a Markov quilt X_Q (remote part X_R with X_R ⟂ (X_N, X_i) | X_Q) and a
pair (s, s'), the output density given s is a mixture over x_Q, and a ratio of two mixtures
is at most the largest ratio of their terms; given x_Q the quilt's and the remote part of F
are an independent shift (post-processing). So, with ℓ_λ the exact Laplace loss,

    ε_i(λ) <= min over quilts  max_{θ, (s,s'), x_Q}  [ log P(x_Q|s)/P(x_Q|s')
                                                       + ℓ_λ(F_N | x_Q, s ; F_N | x_Q, s') ]

and the release adds Laplace(λ) with λ the smallest scale making every ε_i(λ) <= ε. MQM's own
bound e + n_N·L/λ is kept as one more option per node, so λ never exceeds MQM's scale; the
empty quilt (nearby = everything: the exact loss of the node) is an option wherever its law
is affordable.

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
from ..privacy_loss import scale_floor
from ..privacy_loss._bisection import SLACK
from ..privacy_loss._pair_rows import Group
from ..queries import Query
from ..quilts import candidate_quilts, ordered_pairs, pair_groups, quilt_table_size
from ..quilts._quilt_classes import NodeClass, chain_candidates, chain_classes
from ..quilts._quilt_laws import ChainBridges, ChainQuiltLaws, QuiltRows
from ..quilts._quilt_network import NetworkQuiltLaws
from ..scenarios import MarkovChainScenario
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
        Chains: largest quilt distance (and open-side length) whose laws are computed.
    max_quilt_assignments : int, default 256
        Networks: quilts with more joint values are skipped (counted in the evidence).
    max_candidates : int, default 200
        Networks: cut of the planner's candidate quilts per node.
    rtol : float, default 1e-9
        Relative width of the final bisection bracket (the passing end is returned).

    Examples
    --------
    >>> ExactQuiltMechanism(epsilon=1.0, max_window=0)
    Traceback (most recent call last):
    ...
    pufferfish_pgm.errors.InvalidParameterError: max_window must be >= 1, got 0
    """

    max_window: int = 256
    max_quilt_assignments: int = 256
    max_candidates: int = 200
    rtol: float = 1e-9

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("max_window", "max_quilt_assignments", "max_candidates"):
            object.__setattr__(self, name, positive_int(name, getattr(self, name)))
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
        setup = (_chain_setup if cls.kind == "chain" else _network_setup)(self, framework,
                                                                          query, mqm)
        search = _Search(setup, self.epsilon, self.rtol, lipschitz)
        scale = search.run() if lipschitz > 0 else 0.0
        worst, key = search.worst()
        return Calibration(mechanism=self.name, epsilon=self.epsilon, scale=float(scale),
                           query=query, framework=framework, evidence=ExactQuiltEvidence(
                               lipschitz=lipschitz, mqm_scale=mqm.scale,
                               worst_node=worst, worst_quilt=setup.describe(key, worst),
                               classes=len(setup.classes), evaluations=search.evaluations,
                               mqm_bound_nodes=search.mqm_nodes(),
                               window=_window(self.max_window, cls),
                               skipped_quilts=setup.skipped, cut_candidates=setup.cut))


def _window(max_window: int, cls: Any) -> int | None:
    return max(1, min(max_window, cls.members[0].length - 1)) if cls.kind == "chain" else None


def _check_query(query: Any, cls: Any) -> None:
    if not hasattr(query, "weights") or not getattr(query, "integer", False):
        raise ParameterTypeError(
            f"ExactQuiltMechanism calibrates Count and integer LinearQuery queries, got "
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
        if key is None or key == MQM or node is None:
            return ()
        kind = key[0]
        if kind == "net":
            return tuple(sorted(key[2], key=repr))
        i = int(node)   # type: ignore[call-overload]
        left = key[1] if kind == "two" else key[2] if kind == "left" else 0
        right = key[2] if kind in ("two", "right") else 0
        return tuple(v for v, d in ((i - left, left), (i + right, right)) if d)


def _chain_setup(mech: ExactQuiltMechanism, framework: Framework, query: Any,
                 mqm: Calibration) -> _Setup:
    cls = framework.scenarios
    weights = query.weights_of(cls, 0)
    weights = (weights - weights.min()).astype(np.int64)
    chains = [m for m in cls if isinstance(m, MarkovChainScenario)]
    bridges = [ChainBridges(m.transition, None if m.initial_is_any else m.initial_distribution,
                            weights) for m in chains]
    length = cls.members[0].length
    window = max(1, min(mech.max_window, length - 1))
    plan_nodes = np.asarray(mqm.plan.nodes)   # type: ignore[attr-defined]  # sorted
    sigma = np.asarray(mqm.plan.sigma)   # type: ignore[attr-defined]
    classes, candidates, laws = [], [], []
    for nodes, pairs in pair_groups(framework):
        group_laws = ChainQuiltLaws(bridges, pairs)
        own = sigma[np.searchsorted(plan_nodes, nodes)]
        for c in chain_classes(chains, nodes, pairs, window, own):
            classes.append(c)
            candidates.append(chain_candidates(c, window, length))
            laws.append(group_laws)
    return _Setup(classes, candidates, laws, {}, ())


def _network_setup(mech: ExactQuiltMechanism, framework: Framework, query: Any,
                   mqm: Calibration) -> _Setup:
    cls = framework.scenarios
    laws = NetworkQuiltLaws(framework, query, lambda v: ordered_pairs(framework, v))
    k = max(len(cls.states_of(v)) for v in cls.nodes)
    classes, candidates, skipped, cut = [], [], {}, []
    for entry in mqm.plan:
        node = entry.node
        quilts, was_cut = candidate_quilts(cls, node, max_candidates=mech.max_candidates)
        keep = [q for q in quilts if quilt_table_size(cls, q) <= mech.max_quilt_assignments]
        if len(keep) < len(quilts):
            skipped[node] = len(quilts) - len(keep)
        if was_cut:
            cut.append(node)
        classes.append(NodeClass(
            nodes=np.array([0]), node=node, head=-1, tail=-1,
            possible=np.ones((len(cls), k), bool), prior=np.zeros((len(cls), k, k)),
            support=np.ones((len(cls), 1, k), bool), mqm_sigma=float(entry.sigma), fixed=True))
        keys = [("net", node, frozenset())] + [("net", node, frozenset(q)) for q in keep]
        candidates.append(sorted(keys, key=lambda key: len(laws.split(node, key[2])[0])))
    return _Setup(classes, candidates, [laws] * len(classes), skipped, tuple(cut))


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
        self.need = [0.0] * len(setup.classes)

    # --- one bound ------------------------------------------------------------------------
    def _group(self, c: int, key: tuple) -> Group | None:
        gid = (id(self.setup.laws[c]), key)
        if gid not in self._groups:
            rows = self.setup.laws[c].rows(key)
            self._groups[gid] = None if not len(rows.first) else Group(
                0, "quilt", (rows.grid,), rows.rows, rows.first, rows.second,
                tuple(range(len(rows.first))))
        return self._groups[gid]

    def _losses(self, c: int, key: tuple, scale: float) -> np.ndarray:
        gid = (id(self.setup.laws[c]), key)
        hit = self._loss.get(gid)
        if hit is None or hit[0] != scale:
            group = self._group(c, key)
            self.evaluations += 1
            eps = np.zeros(0) if group is None else group.epsilons(np.array([scale]))[0]
            self._loss[gid] = hit = (scale, eps)
        return hit[1]

    def _prior_part(self, c: int, key: tuple) -> tuple[np.ndarray, np.ndarray, bool]:
        """Comparisons that apply to class c, their log P(x_Q|s)/P(x_Q|s'), and whether a
        quilt value possible under one secret only makes the quilt unusable."""
        cl: NodeClass = self.setup.classes[c]
        rows: QuiltRows = self.setup.laws[c].rows(key)
        ok = _applies(cl, rows.distance, rows.theta, rows.left, rows.state, rows.other)
        b = rows.blockers
        blocked = bool(_applies(cl, rows.distance, b[:, 0], b[:, 1], b[:, 2], b[:, 3]).any())
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
        shapes = {_shape(k): n for n, k in enumerate(self._recent)}
        return sorted(keys, key=lambda k: shapes.get(_shape(k), len(shapes)))

    def passes(self, c: int, scale: float) -> bool:
        for key in [self.winner[c]] + self._ordered(c):
            if self.bound(c, key, scale) <= self.limit:
                self.winner[c] = key
                return True
        return False

    def _useful(self, c: int, key: tuple) -> bool:
        ok, r, blocked = self._prior_part(c, key)
        return not blocked and not (ok.any() and r[ok].max() >= self.limit)

    def threshold(self, c: int, lo: float) -> float:
        """Smallest passing scale of class c above ``lo`` (where it fails), up to rtol."""
        best = self.lipschitz * self.setup.classes[c].mqm_sigma
        self.winner[c] = MQM
        for key in self._ordered(c):
            top = best * (1.0 - self.rtol)
            if top <= lo or not self._useful(c, key) or self.bound(c, key, top) > self.limit:
                continue
            best = self._bisect(c, key, lo, top)
            self.winner[c] = key
            self._recent = [key] + [k for k in self._recent if _shape(k) != _shape(key)][:7]
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
        for _ in range(16):
            for c in range(count):
                if scale > 0.0 and self.passes(c, scale):
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


def _applies(cl: NodeClass, distance: int, theta: np.ndarray, left: np.ndarray,
             s: np.ndarray, s2: np.ndarray) -> np.ndarray:
    """Which comparisons (or blockers) concern class ``cl``: both secrets possible, and the
    left quilt value possible at distance ``distance`` before the node."""
    ok = cl.possible[theta, s] & cl.possible[theta, s2]
    if distance:
        ok &= (left < 0) | cl.support[theta, distance, np.maximum(left, 0)]
    return ok


def _shape(key: tuple) -> tuple:
    """A key without the node it was made for (one-sided chain quilts)."""
    return (key[0], key[2]) if key[0] in ("right", "left") else key[:1] if key[0] == "empty" \
        else key
