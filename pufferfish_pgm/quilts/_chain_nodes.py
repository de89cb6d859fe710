"""Per-node chain quilt search: non-stationary starts, ``initial="any"``, queries over some nodes.

Here the left term of node i, U_{i,a} = max_{x in S_{i-a}} log P^a[x,s]/P^a[x,s'] + c_i, depends
on i through the support S_{i-a} of X_{i-a} and the prior term c_i = log q_i(s')/q_i(s)
(for ``initial="any"`` its supremum w_i = max_z log P^i[z,s']/P^i[z,s]). Nodes are evaluated
in vectorised batches. Nodes far from both ends are shared when that is proven safe:

* supports follow S_{t+1} = N(S_t) (states one step from S_t), so once S_{t+1} = S_t they are
  constant (from t_s on);
* w_t is non-increasing in t (a ratio of mixtures is at most the largest ratio), and
  -w_t(s',s) <= c_t(s,s') <= w_t(s,s'); once the band w_t(s,s') + w_t(s',s) is below 1e-12
  for every pair in the limiting support (from t_conv on), every later node's c_i is at most
  w_{t_conv}(s,s'). Nodes with i >= max(t_conv, t_s + W) therefore share one plan computed
  with that proven upper bound (at most 1e-12 above their exact influence).

Chains that never reach that point (periodic or reducible ones) are searched node by node;
if that would cost more than ``MAX_ROUND_WORK`` cells in one round, the window stops growing
and the nodes still unsettled keep their (valid) best σ, reported as truncated.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> mc = MarkovChainScenario([[0.5, 0.5], [0.0, 1.0]], [1.0, 0.0], 4)
>>> possible_states(mc, np.array([0, 2])).tolist()
[[True, False], [True, True]]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..scenarios import MarkovChainScenario
from ..secrets._engine import support_at, support_cycle
from ._chain_windows import BestWindows, grow_window, sigma_table, window_terms
from ._influence import is_stationary, log_ratio, power_stack

__all__ = ["Converged", "Prefix", "convergence", "possible_states", "search_nodes",
           "sharing_start", "support_at", "support_cycle"]

BAND_TOLERANCE = 1e-12
CHUNK = 1024
BUDGET = 2 ** 22
MAX_ROUND_WORK = 2 ** 30  # cells of E(a, b) per (θ, pair) in one round of the per-node search


@dataclass(frozen=True, eq=False)
class Prefix:
    """Prefix counts C of the query's nodes: C[j] = query nodes before node j (with
    multiplicity), j = 0..T. ``counts=None``: every node once, C[j] = j, without an array.

    >>> full, some = Prefix(5), Prefix(5, np.array([0, 0, 1, 1, 2, 2]))
    >>> full[np.array([0, 3])].tolist(), full.total, some.total, some.unit
    ([0, 3], 5, 2, True)
    """

    length: int
    counts: np.ndarray | None = None

    def __getitem__(self, at: Any) -> Any:
        return np.asarray(at) if self.counts is None else self.counts[at]

    @property
    def total(self) -> int:
        """C[T]: the number of query nodes."""
        return self.length if self.counts is None else int(self.counts[-1])

    @property
    def unit(self) -> bool:
        """Whether no node counts more than once."""
        return self.counts is None or bool(np.diff(self.counts).max(initial=0) <= 1)


def possible_states(chain: MarkovChainScenario, nodes: np.ndarray) -> np.ndarray:
    """``(len(nodes), k)``: whether X_i = s is possible (for "any": under some start)."""
    return support_at(chain, np.asarray(nodes))


@dataclass(frozen=True)
class Converged:
    """From node ``t_conv`` on, c_i(s, s') <= ``prior[s, s']``; from ``t_s`` on the support is
    ``support``."""

    t_s: int
    t_conv: int
    prior: np.ndarray
    support: np.ndarray


def convergence(chain: MarkovChainScenario, length: int) -> Converged | None:
    """The proven sharing point of the module docstring, or None within ``length`` steps."""
    head, start = support_cycle(chain)
    if len(head) - start != 1:
        return None
    star = head[-1]
    if is_stationary(chain):
        q = chain.initial_distribution
        return Converged(0, 0, log_ratio(q[None, :], q[:, None]), star)
    k = chain.k
    mask = star[:, None] & star[None, :] & ~np.eye(k, dtype=bool)
    stack, base, t = power_stack(chain.transition, CHUNK), np.eye(k), 0
    while t < length:  # chunks of CHUNK steps; stops at the first converged step
        powers = base @ stack
        with np.errstate(invalid="ignore"):
            w = log_ratio(powers[:, :, None, :], powers[:, :, :, None]).max(axis=1)
            band = w + np.swapaxes(w, 1, 2)
        ok = (band[:, mask] <= BAND_TOLERANCE).all(axis=1) & (t + np.arange(CHUNK) >= start)
        hit = np.flatnonzero(ok)
        if len(hit):
            return Converged(start, t + int(hit[0]), w[hit[0]], star)
        base, t = powers[-1] @ chain.transition, t + CHUNK
    return None


def _prior_terms(chain: MarkovChainScenario, pairs: np.ndarray, t0: int,
                 at: np.ndarray) -> np.ndarray:
    """c_i (n, m) for nodes t0 + at: log q_i(s')/q_i(s), or w_i for initial='any'."""
    s, s2 = pairs[:, 0], pairs[:, 1]
    if is_stationary(chain):
        q = chain.initial
        return np.broadcast_to(log_ratio(q[s2], q[s]), (len(at), len(s)))
    base = np.linalg.matrix_power(chain.transition, t0)
    powers = base @ power_stack(chain.transition, int(at.max()) + 1)[at]
    if chain.initial_is_any:
        return log_ratio(powers[:, :, s2], powers[:, :, s]).max(axis=1)
    q = chain.initial @ powers
    return log_ratio(q[:, s2], q[:, s])


def _batch_terms(chain: MarkovChainScenario, left: np.ndarray, pairs: np.ndarray,
                 nodes: np.ndarray, window: int) -> tuple[np.ndarray, np.ndarray]:
    """U (n, W, m) and the active mask (n, m) for a contiguous run of nodes."""
    s, s2 = pairs[:, 0], pairs[:, 1]
    t0 = max(0, int(nodes[0]) - window)
    support = support_at(chain, np.arange(t0, int(nodes[-1]) + 1))
    at = nodes - t0
    prior = _prior_terms(chain, pairs, t0, at)
    active = support[at][:, s] & support[at][:, s2]
    back = support[np.maximum(at[:, None] - np.arange(1, window + 1)[None, :], 0)]
    with np.errstate(invalid="ignore"):
        u = np.where(back[..., None], left[None], -np.inf).max(axis=2) + prior[:, None, :]
    return u, active


def _kernel(u: np.ndarray, active: np.ndarray, right: np.ndarray, nodes: np.ndarray,
            prefix: Prefix, window: int, epsilon: float) -> tuple[BestWindows, np.ndarray]:
    """Best option within the window for each node, given its terms (J = Θ x pairs), and a
    lower bound on σ over the options outside the window (see :func:`_outside_bound`).
    ``right`` is D (W, J) shared by every node, or (n, W, J) per node (time-varying)."""
    n, count = active.shape
    length = prefix.length
    uf = np.where(active[:, None, :], np.concatenate([u, np.zeros((n, 1, count))], axis=1),
                  -np.inf)
    rows_r = right if right.ndim == 3 else right[None]     # per node, or one for all
    df = np.where(active[:, None, :],
                  np.concatenate([rows_r, np.zeros((len(rows_r), 1, count))], axis=1), -np.inf)
    e = np.zeros((n, window + 1, window + 1))
    for j in range(count):  # fmax skips the NaN of inactive (-inf) + inf; avoids (n, W, W, J)
        with np.errstate(invalid="ignore"):
            e = np.fmax(e, uf[:, :, j, None] + df[:, None, :, j])
    steps, i = np.arange(1, window + 1)[None, :], nodes[:, None]
    lo = np.concatenate([i - steps + 1, np.zeros((n, 1), dtype=np.int64)], axis=1)
    hi = np.concatenate([i + steps - 1, np.full((n, 1), length - 1)], axis=1)
    ok_l = np.concatenate([steps <= i, i <= window], axis=1)
    ok_r = np.concatenate([steps <= length - 1 - i, length - 1 - i <= window], axis=1)
    card = (prefix[np.clip(hi, -1, length - 1) + 1][:, None, :]
            - prefix[np.clip(lo, 0, length)][:, :, None])
    sig = np.where(ok_l[:, :, None] & ok_r[:, None, :], sigma_table(card, e, epsilon), np.inf)
    flat = sig.reshape(n, -1).argmin(axis=1)
    a, b = np.divmod(flat, window + 1)
    rows = np.arange(n)
    best = BestWindows.trivial(n, prefix.total / epsilon)
    best.offer(rows, sig[rows, a, b], np.where(a < window, a + 1, 0),
               np.where(b < window, b + 1, 0), e[rows, a, b])
    sides = (np.maximum(uf.max(axis=2), 0), np.maximum(df.max(axis=2), 0), lo, hi, ok_l, ok_r)
    return best, _outside_bound(nodes, prefix, window, epsilon, sides)


def _outside_bound(nodes: np.ndarray, prefix: Prefix, window: int, epsilon: float,
                   sides: tuple) -> np.ndarray:
    """A proven lower bound on σ over every option outside the window (inf if none).

    card grows with both distances, and e(a, b) >= max_j D_b^j and >= max_j U_a^j because every
    one-sided term is >= 0 (a max log-ratio between two distributions). So an option with the
    left side outside (l >= W) and right option r has σ >= card(W, r) / (ε - max_j D_b^j),
    symmetrically on the right, and with both sides outside σ >= card(W, W) / ε.
    """
    u_max, d_max, lo, hi, ok_l, ok_r = sides
    length = prefix.length
    i = nodes[:, None]
    out_l, out_r = nodes > window, length - 1 - nodes > window
    start = prefix[np.clip(i - window, 0, length)]
    stop = prefix[np.clip(i + window, -1, length - 1) + 1]
    bound = np.where(out_l & out_r, (stop - start)[:, 0] / epsilon, np.inf)
    card_l = prefix[np.clip(hi, -1, length - 1) + 1] - start      # l = W, each right option
    left = np.where(ok_r, sigma_table(card_l, d_max, epsilon), np.inf).min(axis=1)
    card_r = stop - prefix[np.clip(lo, 0, length)]                # r = W, each left option
    right = np.where(ok_l, sigma_table(card_r, u_max, epsilon), np.inf).min(axis=1)
    bound = np.minimum(bound, np.where(out_l, left, np.inf))
    return np.minimum(bound, np.where(out_r, right, np.inf))


@dataclass(frozen=True, eq=False)
class _Search:
    """Everything the per-node rounds share (one pair group)."""

    members: Sequence
    nodes: np.ndarray
    pairs: np.ndarray
    prefix: Prefix
    epsilon: float
    converged: list

    def shared_terms(self, terms: list, window: int) -> tuple[np.ndarray, np.ndarray]:
        """U (W, J) and active (J,) valid for every node past the sharing point."""
        s, s2 = self.pairs[:, 0], self.pairs[:, 1]
        us, acts = [], []
        for (left, _), conv in zip(terms, self.converged, strict=True):
            best_x = np.where(conv.support[None, :, None], left, -np.inf).max(axis=1)
            with np.errstate(invalid="ignore"):
                us.append(best_x + conv.prior[s, s2][None, :])
            acts.append(conv.support[s] & conv.support[s2])
        return np.concatenate(us, axis=1), np.concatenate(acts)

    def batch_terms(self, terms: list, nodes: np.ndarray, window: int) -> tuple:
        us, acts = zip(*(_batch_terms(m, left, self.pairs, nodes, window)
                         for m, (left, _) in zip(self.members, terms, strict=True)), strict=True)
        return np.concatenate(us, axis=2), np.concatenate(acts, axis=1)

    def shared_groups(self, window: int, nodes: np.ndarray) -> list[np.ndarray]:
        """Positions of nodes that share one evaluation: past the proven sharing point, away
        from both ends, with the query covering all or none of [i - W, i + W]."""
        if any(c is None for c in self.converged):
            return []
        prefix, length = self.prefix, self.prefix.length
        start = max(max(c.t_conv, c.t_s + window) for c in self.converged)
        far = (nodes >= start) & (nodes > window) & (length - 1 - nodes > window)
        cover = prefix[np.minimum(nodes + window + 1, length)] - prefix[
            np.maximum(nodes - window, 0)]
        full = cover == 2 * window + 1 if prefix.unit else False
        return [hit for hit in (np.flatnonzero(far & full), np.flatnonzero(far & (cover == 0)))
                if len(hit)]

    def too_costly(self, window: int, rows: np.ndarray) -> bool:
        """Whether a round at ``window`` over ``rows`` would exceed MAX_ROUND_WORK."""
        nodes = self.nodes[rows]
        alone = len(nodes) - sum(len(g) for g in self.shared_groups(window, nodes))
        work = alone * (window + 1) ** 2 * len(self.members) * len(self.pairs)
        return work > MAX_ROUND_WORK

    def round(self, window: int, rows: np.ndarray) -> tuple[BestWindows, np.ndarray]:
        nodes, prefix = self.nodes[rows], self.prefix
        terms = [window_terms(m.transition, self.pairs, window) for m in self.members]
        right = np.concatenate([r for _, r in terms], axis=1)
        best = BestWindows.trivial(len(nodes), prefix.total / self.epsilon)
        todo = np.ones(len(nodes), dtype=bool)
        lower = np.full(len(nodes), np.inf)
        for hit in self.shared_groups(window, nodes):  # identical terms, validity and cards
            u, active = self.shared_terms(terms, window)
            one, low = _kernel(u[None], active[None], right, nodes[hit[:1]], prefix, window,
                               self.epsilon)
            lower[hit] = low[0]
            best.offer(hit, np.repeat(one.sigma, len(hit)), one.left, one.right,
                       np.repeat(one.influence, len(hit)))
            todo[hit] = False
        for part in _batches(np.flatnonzero(todo), nodes, window, right.shape[1]):
            u, active = self.batch_terms(terms, nodes[part], window)
            got, lower[part] = _kernel(u, active, right, nodes[part], prefix, window,
                                       self.epsilon)
            best.offer(part, got.sigma, got.left, got.right, got.influence)
        return best, lower >= best.sigma


def _batches(rows: np.ndarray, nodes: np.ndarray, window: int, count: int) -> list:
    """Contiguous runs of nodes, cut so that one batch's arrays stay within BUDGET cells."""
    size = max(1, BUDGET // max((window + 1) ** 2, window * count * 8))
    runs = np.split(rows, np.flatnonzero(np.diff(nodes[rows]) != 1) + 1) if len(rows) else []
    return [run[k:k + size] for run in runs for k in range(0, len(run), size)]


def sharing_start(converged: Sequence[Converged | None], window: int) -> int | None:
    """The first node shared in every round up to ``window`` (None: no sharing point)."""
    if any(c is None for c in converged):
        return None
    return max((max(c.t_conv, c.t_s + window) for c in converged if c is not None), default=0)


def search_nodes(members: Sequence, nodes: np.ndarray, pairs: np.ndarray, prefix: Prefix,
                 epsilon: float, max_window: int,
                 converged: list | None = None) -> tuple[Any, np.ndarray]:
    """MQMExact for one pair group through per-node terms (see the module docstring);
    ``converged``: :func:`convergence` of every member, if already known."""
    length = prefix.length
    if converged is None:
        converged = [convergence(m, length) for m in members]
    search = _Search(members, nodes, pairs, prefix, epsilon, converged)
    return grow_window(search.round, len(nodes), length, prefix.total / epsilon, max_window,
                       search.too_costly)
