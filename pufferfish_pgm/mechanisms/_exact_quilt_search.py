"""The quilt search of :class:`~pufferfish_pgm.mechanisms.ExactQuiltMechanism`: the smallest
Laplace scale at which every node class has an option (a quilt, or MQM's own bound) whose bound
is at most ε (``docs/exact-quilt.md``, Steps 4–5 and "Search order").

A class's options are its candidate quilt keys, whose laws (:class:`~pufferfish_pgm.quilts.
_quilt_laws.QuiltRows`) give the prior part ``log P(x_Q|s)/P(x_Q|s')`` and the exact nearby
losses (``Group.epsilons``, one Laplace scale on every released coordinate), and ``MQM``, whose
bound e + n_N·L/λ is at most ε exactly when λ >= L·σ_i. Every bound is non-increasing in λ, so
each class's threshold is found by bisection, and the returned scale is re-checked on every
class. Progress (``steps``, :class:`~pufferfish_pgm._progress.Ticker`) is one step per class
searched and per class re-checked.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> from pufferfish_pgm.secrets import Framework
>>> from pufferfish_pgm.quilts._quilt_classes import chain_setup
>>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.1, 0.9]], "stationary", 40))
>>> classes, candidates, laws = chain_setup(fw, np.array([0, 1]), 8, np.arange(40),
...                                         np.full(40, 40.0))
>>> search = Search(Setup(classes, candidates, laws, {}, (), 8), 1.0, 1e-8, 1.0)
>>> bool(0 < search.run() < 40.0), search.mqm_nodes()
(True, 0)
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Mapping
from dataclasses import dataclass

import numpy as np

from .._budget import check_allocation, memory_budget
from .._progress import Ticker
from ..privacy_loss._engine import SLACK, Group, scale_floor
from ..quilts._engine import NodeClass, QuiltRows, key_shape, quilt_nodes

__all__ = ["MQM", "Search", "Setup"]

MQM = ("mqm",)   # the key of MQM's own bound e + n_N·L/λ
#: Useful candidates a class still tries after the first that passes (widest first: later,
#: narrower quilts rarely do better; the choice only affects tightness and time)
TRIES_AFTER = 8


@dataclass(frozen=True, eq=False)
class Setup:
    """What the search needs: classes, their candidates, the laws behind each key (objects
    whose ``rows(key)`` gives :class:`QuiltRows`), the quilts skipped per node and the nodes
    whose candidates were cut (networks), the window of the classes (chains; None for
    networks): the largest quilt distance and open-side length whose laws may be computed,
    and the memory budget (``memory_budget=`` of the mechanism; None: the default)."""

    classes: list
    candidates: list
    laws: list
    skipped: Mapping
    cut: tuple
    window: int | None
    budget: int | float | str | None = None

    def describe(self, key: tuple | None, node: Hashable | None) -> tuple:
        """The quilt nodes of a key at ``node`` (for the evidence)."""
        return () if key is None or key == MQM or node is None else quilt_nodes(key, node)


def _unordered(rows: QuiltRows) -> tuple[Group, np.ndarray]:
    """One :class:`Group` comparing each unordered pair of rows of ``rows`` once, and the
    index of its pair for every comparison of ``rows``."""
    table = rows.table()
    low, high = np.minimum(rows.first, rows.second), np.maximum(rows.first, rows.second)
    unique, pair = np.unique(low * len(table) + high, return_inverse=True)
    first, second = np.divmod(unique, len(table))
    return Group(0, "quilt", rows.axes(), table, first, second,
                 tuple(range(len(unique)))), pair.ravel()


class Search:
    """The smallest λ such that every class has an option whose bound is <= ε."""

    def __init__(self, setup: Setup, epsilon: float, rtol: float, lipschitz: float,
                 steps: Ticker | None = None) -> None:
        self.setup, self.epsilon, self.rtol, self.lipschitz = setup, epsilon, rtol, lipschitz
        self.steps = steps or Ticker(None)
        self.limit = epsilon * (1.0 + SLACK)
        self.winner: list[tuple] = [MQM] * len(setup.classes)
        self.evaluations = 0
        self._loss: dict[int, tuple[float, np.ndarray]] = {}
        self._groups: dict[int, tuple[Group, np.ndarray] | None] = {}
        self._held: dict[int, QuiltRows] = {}   # the rows behind each group
        self._used: OrderedDict[tuple, tuple[int, int]] = OrderedDict()   # see _use
        self._bytes, self.budget = 0, memory_budget(setup.budget)
        self._recent: list[tuple] = []
        self._priors: dict[tuple, tuple[np.ndarray, np.ndarray, bool]] = {}
        self.need = [0.0] * len(setup.classes)

    # --- one bound ------------------------------------------------------------------------
    def _group(self, c: int, key: tuple) -> tuple[Group, np.ndarray] | None:
        """The key's comparisons as one group of unordered row pairs (the loss
        sup |log g_s/g_s'| is symmetric, so each pair is evaluated once), and the pair of
        each comparison."""
        rows = self.setup.laws[c].rows(key)
        gid = id(rows)   # laws objects may share rows (windowed queries); they are kept
        if gid not in self._groups:
            if len(rows.first) and not rows.grids:   # windowed laws check their own
                cells = rows.cells()
                check_allocation(16 * cells, budget=self.budget, what=(
                    f"the exact laws of quilt {key} of node {self.setup.classes[c].node} "
                    f"({cells:,} cells; a smaller max_window or a larger window_tolerance "
                    "gives smaller quilts)"))
            self._groups[gid] = None if not len(rows.first) else _unordered(rows)
            self._held[gid] = rows
        self._use(c, key, rows)
        return self._groups[gid]

    def _use(self, c: int, key: tuple, rows: QuiltRows) -> None:
        """Note that class c used option ``key`` now, with the bytes it holds: the rows'
        comparisons, their table and its densities once grouped (24 bytes a cell), the prior
        parts and the losses. Past half the memory budget the least recently used options
        of other rows are forgotten (:meth:`_forget`) down to a quarter: with one class per
        node (time-varying chains, networks) their laws would otherwise all stay."""
        gid = id(rows)
        size = rows.comparison_bytes() + 17 * len(rows.first)
        if gid in self._groups and self._groups[gid] is not None:
            size += 24 * rows.cells()
        old = self._used.pop((c, key), (0, gid))[0]
        self._used[(c, key)] = (size, gid)
        self._bytes += size - old
        if self._bytes <= self.budget // 2:
            return
        for (c2, key2), (_, g2) in list(self._used.items()):
            if self._bytes <= self.budget // 4:
                break
            if g2 != gid:
                self._forget(c2, key2, g2)

    def _forget(self, c: int, key: tuple, gid: int) -> None:
        """Drop everything held for option ``key`` of class c (recomputed when needed)."""
        self._bytes -= self._used.pop((c, key))[0]
        self._groups.pop(gid, None)
        self._loss.pop(gid, None)
        self._priors.pop((c, key), None)
        held = self._held.pop(gid, None)
        if held is not None:
            held.release()
        self.setup.laws[c].forget(key)

    def _losses(self, c: int, key: tuple, scale: float) -> np.ndarray:
        gid = id(self.setup.laws[c].rows(key))
        hit = self._loss.get(gid)
        if hit is None or hit[0] != scale:
            built = self._group(c, key)
            self.evaluations += 1
            if built is None:
                eps = np.zeros(0)
            else:   # Laplace(λ) on every coordinate
                group, pair = built
                eps = group.epsilons(np.full(len(group.grids), scale))[0][pair]
            self._loss[gid] = hit = (scale, eps)
        return hit[1]

    def _prior_part(self, c: int, key: tuple) -> tuple[np.ndarray, np.ndarray, bool]:
        """Comparisons that apply to class c, their log P(x_Q|s)/P(x_Q|s'), and whether a
        quilt value possible under one secret only makes the quilt unusable (kept)."""
        hit = self._priors.get((c, key))
        if hit is None:
            hit = self._priors[(c, key)] = self._new_prior_part(c, key)
            self._use(c, key, self.setup.laws[c].rows(key))
        elif (c, key) in self._used:
            self._used.move_to_end((c, key))     # used now: forgotten last
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
        passes there) over its candidates up to ``TRIES_AFTER`` useful ones past the first
        that passes, up to rtol."""
        best = self.lipschitz * self.setup.classes[c].mqm_sigma
        self.winner[c] = MQM
        left = -1   # useful candidates still to try once one has passed
        for key in self._ordered(c):
            top = best * (1.0 - self.rtol)
            if left == 0:
                break
            if top <= lo or not self._useful(c, key):
                continue
            left = left - 1 if left > 0 else left
            if self.bound(c, key, top) > self.limit:
                continue
            left = TRIES_AFTER if left < 0 else left
            if lo > 0.0 and self.bound(c, key, lo) <= self.limit:   # passes at lo already
                best, self.winner[c] = lo, key
                break
            best = self._bisect(c, key, lo, top)   # lo fails for key: a valid bracket
            self.winner[c] = key
            self._remember(key)
        self.need[c] = best
        return best

    def _bisect(self, c: int, key: tuple, lo: float, hi: float) -> float:
        """Smallest passing scale of one key in (lo, hi], hi passing, up to rtol. Once a
        scale fails, every later trial is above it, so the row pairs that passed there pass
        at every later trial (losses never increase with λ) and are not evaluated again;
        the scale returned is re-checked on every comparison by :meth:`run`."""
        built = self._group(c, key)
        if built is None:
            return hi
        group, pair = built
        ok, r, _ = self._prior_part(c, key)
        need = np.full(len(group.pairs), -np.inf)   # per row pair: its largest prior part
        np.maximum.at(need, pair[ok], r[ok])
        active = np.isfinite(need)
        floor = scale_floor([group], self.epsilon)
        while lo <= 0.0:
            trial = max(hi / 8.0, floor)
            if self._fails(group, need, active, trial):
                lo = trial
            elif trial <= floor:
                return trial
            else:
                hi = trial
        while hi - lo > self.rtol * hi:
            mid = float(np.sqrt(lo * hi)) if hi > 4.0 * lo else 0.5 * (lo + hi)
            if self._fails(group, need, active, mid):
                lo = mid
            else:
                hi = mid
        return hi

    def _fails(self, group: Group, need: np.ndarray, active: np.ndarray, scale: float) -> bool:
        """Does some active row pair fail at ``scale``? If so, the others are deactivated
        (in place): they pass here, hence at every larger scale."""
        self.evaluations += 1
        if not active.any():
            return False
        eps = group.epsilons(np.full(len(group.grids), scale), active)[0]
        at = np.flatnonzero(active)
        over = need[at] + eps > self.limit
        if over.any():
            active[at[~over]] = False
            return True
        return False

    def run(self) -> float:
        """The largest class threshold, re-checked on every class at the returned scale."""
        scale, count = 0.0, len(self.setup.classes)
        # neediest first (MQM's σ as the guide): later classes then mostly pass at once
        order = sorted(range(count), key=lambda c: -self.setup.classes[c].mqm_sigma)
        for _ in range(16):
            self.steps.plan(2 * count)
            for c in order:   # a few tries; threshold checks every option at the scale
                if not (scale > 0.0 and self.passes(c, scale, len(self._recent) + 1)):
                    scale = max(scale, self.threshold(c, scale))
                self.steps.tick()
            # final check of every class at the returned scale: the bounds never increase
            # with λ in exact arithmetic, this guards against rounding
            if self._all_pass(scale):
                return scale
        fallback = max(self.lipschitz * cl.mqm_sigma for cl in self.setup.classes)
        self.winner = [MQM] * count
        return fallback   # MQM's own scale passes every class by theorem

    def _all_pass(self, scale: float) -> bool:
        """Does every class have an option passing at ``scale``? (one step per class)"""
        for c in range(len(self.setup.classes)):
            self.steps.tick()
            if not self.passes(c, scale):
                return False
        return True

    def worst(self) -> tuple[Hashable | None, tuple | None]:
        """A node of the class needing the largest scale, and its option there."""
        if not self.setup.classes:
            return None, None
        c = int(np.argmax(self.need))
        return self.setup.classes[c].node, self.winner[c]

    def mqm_reasons(self, whole: str = "") -> dict[str, int]:
        """Why classes got MQM's own bound at the final scale: reason -> secret nodes
        (``whole``: why no whole-chain laws, appended to each reason)."""
        found: dict[str, list] = {}
        for c, (cl, win) in enumerate(zip(self.setup.classes, self.winner, strict=True)):
            if win == MQM:
                why, least = self._why_mqm(c)
                entry = found.setdefault(why, [0, np.inf])
                entry[0] += len(cl.nodes)
                entry[1] = min(entry[1], least)
        tail = f"; {whole}" if whole else ""
        return {why + (f" (least {least:.3g})" if np.isfinite(least) else "") + tail: nodes
                for why, (nodes, least) in found.items()}

    def _why_mqm(self, c: int) -> tuple[str, float]:
        """Why class c has no passing quilt, and its least prior term (inf: none)."""
        keys = self.setup.candidates[c]
        within = "" if self.setup.window is None else f" within distance {self.setup.window}"
        if not keys:
            return f"no candidate quilt{within}", np.inf
        parts = [self._prior_part(c, key) for key in keys]
        priors = [float(r[ok].max()) for ok, r, b in parts if not b and ok.any()]
        if all(b for _, _, b in parts):
            return (f"every candidate quilt{within} has a value possible under one secret "
                    "only (zero transitions)"), np.inf
        if len(priors) == sum(not b for _, _, b in parts) and min(priors) > self.limit:
            return (f"every candidate quilt{within} has a value possible under one secret "
                    "only or a prior term log P(x_Q|s)/P(x_Q|s') above ε: the chain mixes "
                    "too slowly for the window"), min(priors)
        return f"no candidate quilt{within} passes below MQM's scale", np.inf

    def mqm_nodes(self) -> int:
        """Secret nodes whose bound at the final scale is MQM's own."""
        return int(sum(len(cl.nodes) for cl, w in zip(self.setup.classes, self.winner,
                                                       strict=True) if w == MQM))

