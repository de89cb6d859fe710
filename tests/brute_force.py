"""Independent brute-force reference for the tests: enumerate every joint assignment.

This module deliberately shares no code with the package's engines (query distributions,
auditor, planners): it uses only the scenario constructors and accessors (``nodes``,
``states_of``, ``state_index``, ``transition``, ``initial``, ``tables``, ``marginal``,
``power``) and the queries' ``weights`` / ``node_list``. Everything else is recomputed from
scratch by listing every joint assignment, so it is slow but obviously right.

* Enumeration: :func:`enumerate_joint` / :func:`joint_assignments` list the assignments of a
  chain or a network with their probabilities; :func:`chain_variants` expands a chain with
  ``initial="any"`` into fixed starts (every point mass, the uniform start and a few random
  ones: a lower bound on the supremum over starts).
* Query distributions: :func:`brute_pmf` sums the probabilities into the exact distribution of
  a (vector) query given evidence; queries are plain weight functions (node, state) -> number,
  and :func:`query_weight_fns` turns a package query into them.
* Realised ε of F + Laplace(scale): the output density is p(w) = Σ_f μ(f) Π_d e^{-|w_d-f_d|/λ_d}
  / 2λ_d. Along each axis the log-ratio of two such densities is monotone between consecutive
  support values and constant beyond the extremes, so the supremum of |log p_a(w)/p_b(w)| is
  reached on the product grid of the support values of both distributions
  (:func:`brute_epsilon`); :func:`framework_epsilon` and :func:`realised_epsilon` take the
  maximum over the secret pairs and scenarios of a framework. Scale 0 (no noise) compares the
  two distributions themselves.
* Random models: :func:`random_chain` and :func:`random_network` (optionally with zeros).
* :func:`mqm_chain_sigma`: MQMExact's σ_max for chains, from DESIGN §3.3 without pruning.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import numpy as np
from scipy.special import logsumexp

from pufferfish_pgm._pgmpy import NetworkTables
from pufferfish_pgm.queries import Histogram
from pufferfish_pgm.scenarios import BayesianNetworkScenario, MarkovChainScenario

WeightFn = Callable[[object, object], float]


# --------------------------------------------------------------------------- enumeration


def chain_variants(chain: MarkovChainScenario, seed: int = 0) -> list[MarkovChainScenario]:
    """``[chain]``, or for ``initial="any"`` the chain at several fixed starts.

    The starts are every point mass, the uniform distribution and three Dirichlet(0.3) draws
    (seeded, so every call returns the same starts).
    """
    if not chain.initial_is_any:
        return [chain]
    k, rng = chain.k, np.random.default_rng(seed)
    starts = [*np.eye(k), np.ones(k) / k, *rng.dirichlet(np.ones(k) * 0.3, size=3)]
    return [MarkovChainScenario(chain.transition, q, chain.length) for q in starts]


def scenario_variants(scenario) -> list:
    """The fixed-start variants of a chain (see :func:`chain_variants`), else ``[scenario]``."""
    if isinstance(scenario, MarkovChainScenario):
        return chain_variants(scenario)
    return [scenario]


def enumerate_joint(scenario) -> tuple[np.ndarray, np.ndarray]:
    """Every assignment as state indices, shape (N, n_nodes) in ``scenario.nodes`` order, and P.

    Chains need a fixed start: expand ``initial="any"`` with :func:`chain_variants` first.
    """
    nodes = list(scenario.nodes)
    sizes = [len(scenario.states_of(v)) for v in nodes]
    xs = np.array(list(itertools.product(*[range(s) for s in sizes])), dtype=int)
    if isinstance(scenario, MarkovChainScenario):
        if scenario.initial_is_any:
            raise ValueError("a chain with initial='any' has no joint; use chain_variants()")
        p = scenario.initial[xs[:, 0]].copy()
        for t in range(1, len(nodes)):
            p *= scenario.transition[xs[:, t - 1], xs[:, t]]
        return xs, p
    col = {v: c for c, v in enumerate(nodes)}
    p = np.ones(len(xs))
    for v in nodes:
        idx = (xs[:, col[v]], *[xs[:, col[u]] for u in scenario.tables.parents[v]])
        p *= scenario.tables.cpts[v][idx]
    return xs, p


def joint_assignments(scenario) -> Iterator[tuple[tuple[int, ...], float]]:
    """Yield (tuple of state indices in node order, probability) for every assignment."""
    xs, p = enumerate_joint(scenario)
    for row, prob in zip(xs.tolist(), p.tolist(), strict=True):
        yield tuple(row), prob


# --------------------------------------------------------------------- query distributions


def query_weight_fns(scenarios, query) -> list[WeightFn]:
    """A package query as weight functions: one for a linear query, one per bar of a histogram.

    ``scenarios`` is anything the query's ``node_list`` accepts (a scenario or a class).
    """
    used = frozenset(query.node_list(scenarios))
    if isinstance(query, Histogram):
        states = scenarios.states_of(next(iter(query.node_list(scenarios))))
        return [lambda v, s, bar=bar: int(v in used and s == bar) for bar in states]
    weights = dict(query.weights)
    return [lambda v, s: weights.get(s, 0) if v in used else 0]


def _values(scenario, xs: np.ndarray, weight_fns) -> np.ndarray:
    """(N, len(weight_fns)): F_j = Σ_v fn_j(v, X_v) on every assignment."""
    columns = []
    for fn in weight_fns:
        total = 0
        for c, v in enumerate(scenario.nodes):
            table = np.asarray([fn(v, s) for s in scenario.states_of(v)])
            total = total + table[xs[:, c]]
        columns.append(np.broadcast_to(total, (len(xs),)))
    return np.stack(columns, axis=1)


def _evidence_mask(scenario, xs: np.ndarray, evidence) -> np.ndarray:
    """Which assignments agree with ``evidence`` (dict node -> state)."""
    col = {v: c for c, v in enumerate(scenario.nodes)}
    mask = np.ones(len(xs), dtype=bool)
    for node, state in (evidence or {}).items():
        mask &= xs[:, col[node]] == scenario.state_index(node, state)
    return mask


def _pmf(values: np.ndarray, p: np.ndarray, mask: np.ndarray) -> dict:
    """dict value tuple -> P(value | mask); empty when the mask has probability 0."""
    keep = mask & (p > 0)
    if not keep.any():
        return {}
    keys, inv = np.unique(values[keep], axis=0, return_inverse=True)
    mass = np.bincount(inv.ravel(), p[keep], len(keys))
    mass = mass / mass.sum()
    return {tuple(k): m for k, m in zip(keys.tolist(), mass.tolist(), strict=True)}


def brute_pmf(scenario, weight_fns, evidence=None) -> dict:
    """dict value tuple -> P(value | evidence); ``weight_fns`` map (node, state) -> number each.

    The j-th coordinate of a value is Σ_v weight_fns[j](v, X_v). Empty when the evidence has
    probability 0.
    """
    xs, p = enumerate_joint(scenario)
    return _pmf(_values(scenario, xs, weight_fns), p, _evidence_mask(scenario, xs, evidence))


# ---------------------------------------------------------------------------- realised ε


def _points(pmf: dict) -> tuple[np.ndarray, np.ndarray]:
    return np.array(list(pmf), dtype=float), np.array(list(pmf.values()), dtype=float)


def _log_density(pmf: dict, grid: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """log Σ_f μ(f) Π_d e^{-|w_d - f_d|/λ_d} at each grid point (normalisers cancel)."""
    pts, mass = _points(pmf)
    dist = (np.abs(grid[:, None, :] - pts[None, :, :]) / scales).sum(axis=2)
    return logsumexp(np.log(mass)[None, :] - dist, axis=1)


def _pmf_epsilon(pmf_a: dict, pmf_b: dict) -> float:
    """No noise: max |log μ_a(f)/μ_b(f)| over both supports (inf if they differ)."""
    keys = set(pmf_a) | set(pmf_b)
    with np.errstate(divide="ignore"):
        return max(abs(float(np.log(pmf_a.get(f, 0.0)) - np.log(pmf_b.get(f, 0.0))))
                   for f in keys)


def brute_epsilon(pmf_a: dict, pmf_b: dict, scales, extra=()) -> float:
    """Realised ε of F + Laplace: max |log p_a(w)/p_b(w)| over the product grid of supports.

    ``pmf_a`` and ``pmf_b`` are non-empty dicts value tuple -> mass (as from :func:`brute_pmf`);
    ``scales`` is one Laplace scale or one per coordinate (all 0: no noise); ``extra`` output
    points are added to the grid.
    """
    pts_a, pts_b = _points(pmf_a)[0], _points(pmf_b)[0]
    scales = np.broadcast_to(np.asarray(scales, dtype=float), (pts_a.shape[1],))
    if not scales.any():
        return _pmf_epsilon(pmf_a, pmf_b)
    if not scales.all():
        raise ValueError("scales must be all positive or all zero")
    extra = np.asarray(list(extra), dtype=float).reshape(-1, pts_a.shape[1])
    pts = np.concatenate([pts_a, pts_b, extra])
    axes = [np.unique(pts[:, d]) for d in range(pts.shape[1])]
    grid = np.array(list(itertools.product(*axes)), dtype=float)
    return float(np.max(np.abs(_log_density(pmf_a, grid, scales)
                               - _log_density(pmf_b, grid, scales))))


def framework_epsilon(framework, weight_fns, scales) -> float:
    """max over scenarios (every start of "any" chains) and secret pairs of the realised ε.

    A pair with a secret of probability 0 under a scenario constrains nothing there.
    """
    worst = 0.0
    for member in framework.scenarios:
        for theta in scenario_variants(member):
            xs, p = enumerate_joint(theta)
            values = _values(theta, xs, weight_fns)
            for pair in framework.pairs:
                pmfs = [_pmf(values, p, _evidence_mask(theta, xs, secret.evidence))
                        for secret in (pair.first, pair.second)]
                if all(pmfs):
                    worst = max(worst, brute_epsilon(*pmfs, scales))
    return worst


def realised_epsilon(framework, query, scale: float) -> float:
    """Realised ε of ``query`` + Laplace(``scale``) per coordinate under ``framework``."""
    return framework_epsilon(framework, query_weight_fns(framework.scenarios, query), scale)


# ------------------------------------------------------------------------- random models


def random_chain(rng: np.random.Generator, k: int, length: int, initial="random",
                 zeros: bool = False) -> MarkovChainScenario:
    """A random chain; ``zeros`` puts some zero transitions in (rows keep one nonzero).

    ``initial="random"`` draws a Dirichlet(1) start; anything else is passed through.
    """
    p = rng.dirichlet(np.ones(k), size=k)
    if zeros:
        p = np.where(rng.random((k, k)) < 0.3, 0.0, p)
        p[np.arange(k), rng.integers(0, k, k)] += 0.1
        p = p / p.sum(axis=1, keepdims=True)
    q = rng.dirichlet(np.ones(k)) if isinstance(initial, str) and initial == "random" else initial
    return MarkovChainScenario(p, q, length)


def _random_parents(rng, earlier: tuple, edge_prob: float | None, max_parents: int) -> tuple:
    """Parents among ``earlier``: see :func:`random_network`."""
    if edge_prob is None:
        m = int(rng.integers(0, min(len(earlier), max_parents) + 1))
        return tuple(str(u) for u in rng.choice(earlier, size=m, replace=False)) if m else ()
    chosen = tuple(u for u in earlier if rng.random() < edge_prob)
    return chosen[max(0, len(chosen) - max_parents):]


def _random_cpt(rng, card: int, parent_cards: list, concentration: float,
                zero_prob: float) -> np.ndarray:
    """CPT (card, *parent_cards): Dirichlet columns, optionally with zeros (never a 0 column)."""
    table = rng.dirichlet(np.full(card, concentration), size=tuple(parent_cards))
    table = np.moveaxis(table, -1, 0)
    if zero_prob:
        table = np.where(rng.random(table.shape) < zero_prob, 0.0, table)
        table[0] += table.sum(axis=0) == 0
        table = table / table.sum(axis=0, keepdims=True)
    return table


def random_network(rng: np.random.Generator, n: int, max_states: int = 3, *,
                   edge_prob: float | None = None, max_parents: int = 2,
                   concentration: float = 1.0, zero_prob: float = 0.0) -> BayesianNetworkScenario:
    """A random network over nodes 'v0'..'v{n-1}' (topological order), states 's0', 's1', ...

    Each node has 2..``max_states`` states and at most ``max_parents`` parents: with
    ``edge_prob=None`` their number is uniform on 0..max_parents and they are picked uniformly
    among the earlier nodes; otherwise each earlier node is a parent with probability
    ``edge_prob`` and the last ``max_parents`` are kept. CPT columns are
    Dirichlet(``concentration``); ``zero_prob`` zeroes entries (a column never becomes 0).
    """
    nodes = tuple(f"v{i}" for i in range(n))
    cards = {v: int(rng.integers(2, max_states + 1)) for v in nodes}
    parents, cpts = {}, {}
    for i, v in enumerate(nodes):
        parents[v] = _random_parents(rng, nodes[:i], edge_prob, max_parents)
        cpts[v] = _random_cpt(rng, cards[v], [cards[u] for u in parents[v]], concentration,
                              zero_prob)
    states = {v: tuple(f"s{j}" for j in range(cards[v])) for v in nodes}
    tables = NetworkTables(nodes=nodes, states=states, parents=parents, cpts=cpts)
    return BayesianNetworkScenario(tables, name="random")


# ---------------------------------------------------------------------- MQM σ for chains


def mqm_chain_sigma(chains, epsilon: float) -> float:
    """MQMExact σ_max (L = 1) for a class of chains with fixed starts, straight from DESIGN §3.3.

    Every quilt (a, b) of every node is tried; no pruning, so it is slow but simple.
    """
    length = chains[0].length
    best_all = 0.0
    for i in range(length):
        best = length / epsilon
        for a in [None, *range(1, i + 1)]:
            for b in [None, *range(1, length - i)]:
                e = max(_quilt_influence(mc, i, a, b) for mc in chains)
                if e < epsilon:
                    card = (a if a else i + 1) + (b if b else length - i) - 1
                    best = min(best, card / (epsilon - e))
        best_all = max(best_all, best)
    return best_all


def _quilt_influence(mc, i: int, a: int | None, b: int | None) -> float:
    """max over ordered state pairs (s, t) possible at X_i of U_a(s, t) + D_b(s, t)."""
    qi = mc.marginal(i)
    worst = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        for s, t in itertools.permutations(range(mc.k), 2):
            if qi[s] > 0 and qi[t] > 0:
                worst = max(worst, _up(mc, i, a, s, t) + _down(mc, b, s, t))
    return worst


def _down(mc, b: int | None, s: int, t: int) -> float:
    """D_b: max over X_{i+b} of log P(x | X_i = s) / P(x | X_i = t) (0 without a right end)."""
    if not b:
        return 0.0
    pb = mc.power(b)
    return float(np.max(np.where(pb[s] > 0, np.log(pb[s]) - np.log(pb[t]), -np.inf)))


def _up(mc, i: int, a: int | None, s: int, t: int) -> float:
    """U_a: max over possible X_{i-a} of log P(X_i = s | x) / P(X_i = t | x) - log q_i(s)/q_i(t)."""
    if not a:
        return 0.0
    pa = mc.power(a)
    ok = mc.marginal(i - a) > 0
    ratio = np.where(pa[ok, s] > 0, np.log(pa[ok, s]) - np.log(pa[ok, t]), -np.inf)
    return float(np.max(ratio)) + np.log(mc.marginal(i)[t]) - np.log(mc.marginal(i)[s])
