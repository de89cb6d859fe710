"""The tests' one brute-force oracle: enumerate every joint assignment.

Independence rule: this module shares no code with the package's engines (inference, query
distributions, auditor, distances, planners, mechanisms). It uses only the scenario
constructors and accessors (``MarkovChainScenario``, ``BayesianNetworkScenario``,
``NetworkTables``, ``ScenarioClass``; ``nodes``, ``states_of``, ``state_index``,
``transition``, ``initial``, ``initial_is_any``, ``length``, ``k``, ``tables``, ``marginal``,
``power``), the frameworks' pairs (``pairs``, ``pairs_of``, ``secret_nodes``) and the queries'
``weights`` / ``node_list``. Everything else is recomputed from scratch by listing every joint
assignment, so it is slow but obviously right.

* Enumeration: :func:`enumerate_joint` / :func:`joint_assignments` / :func:`joint_table` list
  the assignments of a chain or a network with their probabilities; :func:`chain_variants`
  expands a chain with ``initial="any"`` into fixed starts (every point mass, the uniform start
  and a few random ones: a lower bound on the supremum over starts).
* Conditionals: :func:`brute_conditional` and :func:`brute_probability`.
* Query distributions: :func:`brute_pmf` sums the probabilities into the exact distribution of
  a (vector) query given evidence; queries are plain weight functions (node, state) -> number,
  and :func:`query_weight_fns` turns a package query into them (linear queries, histograms
  and windowed counts / histograms: one function per released coordinate, the windows
  recomputed here from the width).
* Realised ε of F + Laplace(scale) (:func:`brute_epsilon`): the output log density, up to the
  normaliser that cancels, is ``log p(w) = logsumexp_i(log μ(x_i) − Σ_d |w_d − x_{i,d}|/λ_d)``,
  every term computed directly (no recursion, no rescaling), so it is exact from λ = 1e-300 to
  1e300. Along each axis the log-ratio of two such densities is monotone between consecutive
  support values and constant beyond the extremes, so the supremum of |log p_a(w)/p_b(w)| is
  reached on the product grid of the support values of both laws; ``midpoints=True`` adds the
  midpoints between consecutive grid values as an independent check of that theorem. Scale 0
  (no noise) compares μ_a and μ_b themselves (+inf where the supports differ).
  :func:`framework_epsilon` and :func:`realised_epsilon` take the maximum over the secret pairs
  and scenarios of a framework; :func:`noiseless_loss` is the scale-0 case;
  :func:`independent_days_epsilon` releases the query on several independent days (the
  model of ``ContinualRelease(unit="day")``).
* Realised ε of F + Z for an arbitrary integer noise law Z (:func:`integer_noise_epsilon`,
  :func:`framework_noise_epsilon`): ``log p(ω) = logsumexp_x(log μ(x) + log f(ω − x))`` at
  every integer ω from ``min x + lo − reach`` to ``max x + hi + reach``. Beyond ``hi`` (and
  below ``lo``) f must be geometric with one ratio, so for ω >= max x + hi every term is a
  right-tail term, p_a(ω)/p_b(ω) is constant, and the scanned window holds the supremum over
  all integers (both tails); a wider ``reach`` is an independent check of that.
  :func:`integer_noise_log_pmf` builds log f from the definition of an integer law with a
  core and geometric tails (weights, ``lo``, λ); :func:`noise_shift_loss` is the plain-DP
  loss ``sup_z |log f(z)/f(z + d)|`` of a shift by d.
* Random models: :func:`random_chain` and :func:`random_network` (optionally with zeros).
* Naive MQM for chains (DESIGN §3.3, no pruning): :func:`naive_chain_sigmas` (σ_i and the
  influence of every secret node) and :func:`mqm_chain_sigma` (σ_max of a class).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator

import numpy as np
from scipy.special import logsumexp

from pufferfish_pgm.queries import Histogram, WindowedCount, WindowedHistogram
from pufferfish_pgm.scenarios import BayesianNetworkScenario, MarkovChainScenario, ScenarioClass
from pufferfish_pgm.scenarios._network_tables import NetworkTables
from pufferfish_pgm.secrets import Framework

#: Most assignments a brute-force enumeration may build (2^24: about 3 GB at 24 nodes).
MAX_ASSIGNMENTS = 2**24

WeightFn = Callable[[object, object], float]

__all__ = [
    "brute_conditional",
    "brute_epsilon",
    "brute_pmf",
    "brute_probability",
    "chain_variants",
    "enumerate_joint",
    "framework_epsilon",
    "framework_noise_epsilon",
    "independent_days_epsilon",
    "integer_noise_epsilon",
    "integer_noise_log_pmf",
    "joint_assignments",
    "joint_table",
    "mqm_chain_sigma",
    "naive_chain_sigmas",
    "noise_shift_loss",
    "noiseless_loss",
    "pair_pmfs",
    "query_weight_fns",
    "random_chain",
    "random_network",
    "realised_epsilon",
    "scenario_variants",
    "weight_shifts",
]


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
    return [MarkovChainScenario(chain.transition, q, chain.length, chain.states)
            for q in starts]


def scenario_variants(scenario) -> list:
    """The fixed-start variants of a chain (see :func:`chain_variants`), else ``[scenario]``."""
    if isinstance(scenario, MarkovChainScenario):
        return chain_variants(scenario)
    return [scenario]


def enumerate_joint(scenario) -> tuple[np.ndarray, np.ndarray]:
    """Every assignment as state indices, shape (N, n_nodes) in ``scenario.nodes`` order, and P.

    P is the chain rule, term by term (initial × transitions, for a time-varying chain the
    matrix of step t − 1 at X_t; or the product of the CPT entries), or for a Markov network
    the product of its factor values over their sum.
    Chains need a fixed start: expand ``initial="any"`` with :func:`chain_variants`.
    """
    nodes = list(scenario.nodes)
    sizes = [len(scenario.states_of(v)) for v in nodes]
    if math.prod(sizes) > MAX_ASSIGNMENTS:     # a clear failure, not the OOM killer
        raise ValueError(f"brute force over {math.prod(sizes):,} assignments of "
                         f"{len(nodes)} nodes: more than {MAX_ASSIGNMENTS:,}; use a smaller model")
    xs = np.array(list(itertools.product(*[range(s) for s in sizes])), dtype=int)
    if isinstance(scenario, MarkovChainScenario):
        if scenario.initial_is_any:
            raise ValueError("a chain with initial='any' has no joint; use chain_variants()")
        p = np.asarray(scenario.initial, dtype=float)[xs[:, 0]].copy()
        stack = np.asarray(scenario.transition, dtype=float)
        for t in range(1, len(nodes)):   # a (T-1, k, k) stack: step t-1 moves X_{t-1} to X_t
            step = stack[t - 1] if stack.ndim == 3 else stack
            p *= step[xs[:, t - 1], xs[:, t]]
        return xs, p
    col = {v: c for c, v in enumerate(nodes)}
    p = np.ones(len(xs))
    if hasattr(scenario.tables, "scopes"):   # a Markov network: product of factors over Z
        for scope, values in zip(scenario.tables.scopes, scenario.tables.values, strict=True):
            p *= values[tuple(xs[:, col[u]] for u in scope)]
        return xs, p / p.sum()
    for v in nodes:
        idx = (xs[:, col[v]], *[xs[:, col[u]] for u in scenario.tables.parents[v]])
        p *= scenario.tables.cpts[v][idx]
    return xs, p


def joint_assignments(scenario) -> Iterator[tuple[tuple[int, ...], float]]:
    """Yield (tuple of state indices in node order, probability) for every assignment."""
    xs, p = enumerate_joint(scenario)
    for row, prob in zip(xs.tolist(), p.tolist(), strict=True):
        yield tuple(row), prob


def joint_table(scenario) -> np.ndarray:
    """The full joint P(X_1, ..., X_n) as an array, axes in ``scenario.nodes`` order."""
    xs, p = enumerate_joint(scenario)
    table = np.zeros([len(scenario.states_of(v)) for v in scenario.nodes])
    table[tuple(xs.T)] = p
    return table


def _evidence_mask(scenario, xs: np.ndarray, evidence) -> np.ndarray:
    """Which assignments agree with ``evidence`` (dict node -> state)."""
    col = {v: c for c, v in enumerate(scenario.nodes)}
    mask = np.ones(len(xs), dtype=bool)
    for node, state in (evidence or {}).items():
        mask &= xs[:, col[node]] == scenario.state_index(node, state)
    return mask


def brute_probability(scenario, evidence: dict) -> float:
    """P(evidence) by summing the enumerated joint."""
    xs, p = enumerate_joint(scenario)
    return float(p[_evidence_mask(scenario, xs, evidence)].sum())


def brute_conditional(scenario, targets: list, evidence: dict) -> np.ndarray:
    """P(targets | evidence), axes in ``targets`` order; NaN everywhere if P(evidence) = 0."""
    xs, p = enumerate_joint(scenario)
    col = {v: c for c, v in enumerate(scenario.nodes)}
    keep = _evidence_mask(scenario, xs, evidence)
    out = np.zeros([len(scenario.states_of(t)) for t in targets])
    np.add.at(out, tuple(xs[keep][:, col[t]] for t in targets), p[keep])
    total = p[keep].sum()
    return out / total if total > 0 else np.full(out.shape, np.nan)


# --------------------------------------------------------------------- query distributions


def _windows(nodes: tuple, width: int) -> list[frozenset]:
    """The nodes of each window ``[0, w), [w, 2w), ...`` of a chain (the last may be short)."""
    return [frozenset(nodes[lo:lo + width]) for lo in range(0, len(nodes), width)]


def query_weight_fns(scenarios, query) -> list[WeightFn]:
    """A package query as weight functions: one for a linear query, one per bar of a histogram,
    one per window of a windowed count, one per (window, state) of a windowed histogram.

    ``scenarios`` is anything the query's ``node_list`` accepts (a scenario or a class).
    """
    if isinstance(query, (WindowedCount, WindowedHistogram)):
        nodes = tuple(scenarios.nodes)
        states = ([query.state] if isinstance(query, WindowedCount)
                  else list(scenarios.states_of(nodes[0])))
        return [lambda v, s, win=win, bar=bar: int(v in win and s == bar)
                for win in _windows(nodes, query.width) for bar in states]
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
    """log Σ_i μ(x_i) Π_d e^{-|w_d - x_{i,d}|/λ_d} at each grid point (normalisers cancel).

    Each exponent log μ(x_i) − Σ_d |w_d − x_{i,d}|/λ_d is formed directly and summed by
    scipy's logsumexp: nothing underflows before the log, at any scale.
    """
    pts, mass = _points(pmf)
    dist = (np.abs(grid[:, None, :] - pts[None, :, :]) / scales).sum(axis=2)
    return logsumexp(np.log(mass)[None, :] - dist, axis=1)


def _pmf_epsilon(pmf_a: dict, pmf_b: dict) -> float:
    """No noise: max |log μ_a(f)/μ_b(f)| over both supports (inf if they differ)."""
    keys = set(pmf_a) | set(pmf_b)
    with np.errstate(divide="ignore"):
        return max(abs(float(np.log(pmf_a.get(f, 0.0)) - np.log(pmf_b.get(f, 0.0))))
                   for f in keys)


def _axis_values(values: np.ndarray, midpoints: bool) -> np.ndarray:
    values = np.unique(values)
    if midpoints and len(values) > 1:
        values = np.unique(np.concatenate([values, (values[1:] + values[:-1]) / 2]))
    return values


def brute_epsilon(pmf_a: dict, pmf_b: dict, scales, extra=(), *,
                  midpoints: bool = False) -> float:
    """Realised ε of F + Laplace: max |log p_a(w)/p_b(w)| over the product grid of supports.

    ``pmf_a`` and ``pmf_b`` are non-empty dicts value tuple -> mass (as from :func:`brute_pmf`);
    ``scales`` is one Laplace scale or one per coordinate (all 0: no noise); ``extra`` output
    points are added to the grid; ``midpoints`` adds the midpoints between consecutive grid
    values on every axis (the supremum must not grow: an independent check).
    """
    pts_a, pts_b = _points(pmf_a)[0], _points(pmf_b)[0]
    scales = np.broadcast_to(np.asarray(scales, dtype=float), (pts_a.shape[1],))
    if not scales.any():
        return _pmf_epsilon(pmf_a, pmf_b)
    if not scales.all():
        raise ValueError("scales must be all positive or all zero")
    extra = np.asarray(list(extra), dtype=float).reshape(-1, pts_a.shape[1])
    pts = np.concatenate([pts_a, pts_b, extra])
    axes = [_axis_values(pts[:, d], midpoints) for d in range(pts.shape[1])]
    grid = np.array(list(itertools.product(*axes)), dtype=float)
    la, lb = _log_density(pmf_a, grid, scales), _log_density(pmf_b, grid, scales)
    # Both -inf only far from every support point at a scale where every term underflows
    # (midpoints at λ ~ 1e-308): the ratio is unknown there, and such points are not needed.
    known = np.isfinite(la) | np.isfinite(lb)
    return float(np.max(np.abs(la[known] - lb[known])))


def pair_pmfs(framework, weight_fns) -> Iterator[tuple[dict, dict]]:
    """The laws (μ_a, μ_b) of the query given each secret of every pair, under every scenario
    (every start of "any" chains); pairs with a secret of probability 0 there are left out
    (they constrain nothing under that scenario)."""
    for member in framework.scenarios:
        for theta in scenario_variants(member):
            xs, p = enumerate_joint(theta)
            values = _values(theta, xs, weight_fns)
            for pair in framework.pairs:
                pmfs = [_pmf(values, p, _evidence_mask(theta, xs, secret.evidence))
                        for secret in (pair.first, pair.second)]
                if all(pmfs):
                    yield pmfs[0], pmfs[1]


def framework_epsilon(framework, weight_fns, scales, *, midpoints: bool = False) -> float:
    """max over scenarios (every start of "any" chains) and secret pairs of the realised ε."""
    return max((brute_epsilon(a, b, scales, midpoints=midpoints)
                for a, b in pair_pmfs(framework, weight_fns)), default=0.0)


def independent_days_epsilon(framework, weight_fns, scales, days: int) -> float:
    """Realised ε of the query released (with Laplace noise) on ``days`` independent copies
    of each scenario, the secret about day 0: the joint law of the answers given a secret is
    μ_secret ⊗ ν ⊗ ... ⊗ ν, ν the law of one day's answer without evidence (the days are
    independent by definition of the model), and :func:`brute_epsilon` takes its supremum."""
    worst = 0.0
    for member in framework.scenarios:
        for theta in scenario_variants(member):
            xs, p = enumerate_joint(theta)
            values = _values(theta, xs, weight_fns)
            free = _pmf(values, p, np.ones(len(xs), dtype=bool))
            for pair in framework.pairs:
                pmfs = [_pmf(values, p, _evidence_mask(theta, xs, secret.evidence))
                        for secret in (pair.first, pair.second)]
                if not all(pmfs):
                    continue
                for _ in range(days - 1):
                    pmfs = [{a + b: ma * mb for a, ma in law.items() for b, mb in free.items()}
                            for law in pmfs]
                worst = max(worst, brute_epsilon(*pmfs, scales))
    return worst


def realised_epsilon(framework, query, scale: float, *, midpoints: bool = False) -> float:
    """Realised ε of ``query`` + Laplace(``scale``) per coordinate under ``framework``."""
    return framework_epsilon(framework, query_weight_fns(framework.scenarios, query), scale,
                             midpoints=midpoints)


def noiseless_loss(framework, query) -> float:
    """The realised ε of releasing ``query`` itself (scale 0; +inf where supports differ)."""
    return realised_epsilon(framework, query, 0.0)


# ----------------------------------------------------------------- integer noise laws


LogPmf = Callable[[np.ndarray], np.ndarray]


def integer_noise_log_pmf(lo: int, weights, tail_scale: float) -> LogPmf:
    """log f of the law ``P(lo + k) = c_k/N`` (0 < k < m), ``P(hi + j) = c_m/N (1−r) r^j`` and
    ``P(lo − j) = c_0/N (1−r) r^j`` (j >= 0, hi = lo + m, r = e^{−1/λ}, N = Σ c): the
    definition, term by term in log space (−inf where a weight is 0)."""
    c = np.array([int(w) for w in weights], dtype=float)
    hi, m = lo + len(c) - 1, len(c) - 1
    with np.errstate(divide="ignore"):
        log_c = np.log(c) - math.log(c.sum())
    log_1mr = math.log(-math.expm1(-1.0 / tail_scale))

    def log_f(z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, dtype=np.int64)
        right = log_c[m] + log_1mr - (z - hi) / tail_scale
        left = log_c[0] + log_1mr - (lo - z) / tail_scale
        return np.where(z >= hi, right, np.where(z <= lo, left, log_c[np.clip(z - lo, 0, m)]))

    return log_f


def _scalar_pmf(pmf: dict) -> tuple[np.ndarray, np.ndarray]:
    """Integer support and log masses of a one-coordinate pmf (keys ints or 1-tuples)."""
    keys = [k[0] if isinstance(k, tuple) else k for k in pmf]
    if any(float(k) != int(k) for k in keys):
        raise ValueError("integer noise needs integer answers")
    with np.errstate(divide="ignore"):
        return np.array(keys, dtype=np.int64), np.log(np.array(list(pmf.values()), dtype=float))


def integer_noise_epsilon(pmf_a: dict, pmf_b: dict, log_f: LogPmf, lo: int, hi: int,
                          reach: int = 2) -> float:
    """sup over all integers ω of |log P(F+Z = ω | a)/P(F+Z = ω | b)| (module notes).

    ``log_f`` gives log P(Z = z) for integer arrays; f must be geometric with one ratio from
    ``hi`` up and from ``lo`` down (or 0 there). Outputs where both laws are 0 are skipped;
    where one is 0 and the other not, the loss is +inf.
    """
    xa, la = _scalar_pmf(pmf_a)
    xb, lb = _scalar_pmf(pmf_b)
    xs = np.concatenate([xa, xb])
    omega = np.arange(xs.min() + lo - reach, xs.max() + hi + reach + 1)
    pa = logsumexp(la[None, :] + log_f(omega[:, None] - xa[None, :]), axis=1)
    pb = logsumexp(lb[None, :] + log_f(omega[:, None] - xb[None, :]), axis=1)
    known = np.isfinite(pa) | np.isfinite(pb)
    with np.errstate(invalid="ignore"):
        return float(np.max(np.abs(pa[known] - pb[known]), initial=0.0))


def framework_noise_epsilon(framework, weight_fns, log_f: LogPmf, lo: int, hi: int,
                            reach: int = 2) -> float:
    """max over scenarios and secret pairs of :func:`integer_noise_epsilon` (one coordinate)."""
    return max((integer_noise_epsilon(a, b, log_f, lo, hi, reach)
                for a, b in pair_pmfs(framework, weight_fns)), default=0.0)


def noise_shift_loss(log_f: LogPmf, lo: int, hi: int, shift: int, reach: int = 2) -> float:
    """sup over all integers z of |log f(z)/f(z + shift)| (plain DP for a shift by ``shift``).

    Below ``lo − shift`` and from ``hi`` up both points lie in one geometric tail and the
    ratio is constant, so the window ``lo − shift − reach .. hi + reach`` holds the supremum.
    """
    z = np.arange(lo - abs(shift) - reach, hi + reach + 1)
    a, b = log_f(z), log_f(z + abs(shift))
    if np.any(np.isfinite(a) != np.isfinite(b)):
        return math.inf
    both = np.isfinite(a)
    return float(np.max(np.abs(a[both] - b[both]), initial=0.0))


def weight_shifts(scenarios, query) -> list[int]:
    """Every positive change of F that changing one record (one node's state) can cause."""
    (fn,) = query_weight_fns(scenarios, query)
    shifts = set()
    for v in scenarios.nodes:
        values = [fn(v, s) for s in scenarios.states_of(v)]
        shifts |= {abs(int(a) - int(b)) for a in values for b in values if a != b}
    return sorted(shifts)


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


def random_markov_network(rng: np.random.Generator, n: int, max_states: int = 3, *,
                          edges: list | None = None, zero_prob: float = 0.0,
                          spread: float = 2.0):
    """A random Markov network over 'v0'..'v{n-1}' (states 's0', ...): one unary factor per
    node and one pairwise factor per edge (default: a random tree plus one extra edge),
    values ``exp(spread * normal)``; ``zero_prob`` zeroes pairwise entries (the unary
    factors stay positive, and a zero partition function is redrawn)."""
    from pufferfish_pgm.scenarios import MarkovNetworkScenario

    nodes = [f"v{i}" for i in range(n)]
    if edges is None:
        edges = [(nodes[int(rng.integers(0, i))], nodes[i]) for i in range(1, n)]
        if n > 3:
            edges.append((nodes[0], nodes[n - 1]))
    states = {v: tuple(f"s{j}" for j in range(int(rng.integers(2, max_states + 1))))
              for v in nodes}
    while True:
        factors = [((v,), np.exp(spread * rng.normal(size=len(states[v])))) for v in nodes]
        for u, v in edges:
            table = np.exp(spread * rng.normal(size=(len(states[u]), len(states[v]))))
            table[rng.random(table.shape) < zero_prob] = 0.0
            factors.append(((u, v), table))
        try:
            return MarkovNetworkScenario.from_factors(factors, states, name="random mn")
        except ValueError:   # every joint state has weight 0: draw again
            continue


# --------------------------------------------------------------- naive MQM for chains (§3.3)


def _log_ratio(num: float, den: float) -> float:
    """log num/den with the conventions of DESIGN §3.1 (0/x = -inf, x/0 = +inf, never NaN)."""
    if num <= 0:
        return -math.inf
    if den <= 0:
        return math.inf
    return math.log(num) - math.log(den)


class _ChainPowers:
    """Powers P^n and (fixed start) marginals q_t of one chain, by plain repeated products."""

    def __init__(self, chain) -> None:
        self.chain, self.powers = chain, [np.eye(chain.k)]
        for _ in range(chain.length):
            self.powers.append(self.powers[-1] @ chain.transition)
        if not chain.initial_is_any:
            self.q = [np.asarray(chain.initial, dtype=float) @ m for m in self.powers]


def _quilt_terms(cache, i: int, a: int | None, b: int | None, s: int, s2: int) -> float | None:
    """U_a(s, s2) + D_b(s, s2) for one chain, or None when a secret is impossible at X_i.

    With ``initial="any"`` the prior term log q_i(s2)/q_i(s) is replaced by its worst case
    max_z log P^i[z, s2] / P^i[z, s].
    """
    chain, k, mp = cache.chain, cache.chain.k, cache.powers.__getitem__
    if chain.initial_is_any:
        pi_pow = mp(i)
        if not (pi_pow[:, s] > 0).any() or not (pi_pow[:, s2] > 0).any():
            return None
        prior = max(_log_ratio(pi_pow[z, s2], pi_pow[z, s]) for z in range(k))
        left_support = (mp(i - a) > 0).any(axis=0) if a else None
    else:
        qs = cache.q
        if qs[i][s] <= 0 or qs[i][s2] <= 0:
            return None
        prior = _log_ratio(qs[i][s2], qs[i][s])
        left_support = qs[i - a] > 0 if a else None
    total = 0.0
    if a:
        pa = mp(a)
        total += max(_log_ratio(pa[x, s], pa[x, s2]) for x in range(k) if left_support[x])
        total += prior
    if b:
        pb = mp(b)
        total += max(_log_ratio(pb[s, y], pb[s2, y]) for y in range(k))
    return total


def naive_chain_sigmas(framework, epsilon: float, query_nodes=None) -> dict:
    """node -> (σ_i, influence) for L = 1, by exhaustive search over every quilt (a, b).

    DESIGN §3.3 written as directly as possible: for every secret node i, every left distance
    a (or none) and every right distance b (or none), e(a, b) = max over θ and ordered pairs of
    U_a + D_b, and σ = card(X_N ∩ query nodes) / (ε − e); the trivial quilt gives
    |query nodes| / ε. O(T^3) quilts, no pruning.
    """
    cls = framework.scenarios
    length = cls.members[0].length
    in_query = set(range(length) if query_nodes is None else query_nodes)
    out, caches = {}, [_ChainPowers(m) for m in cls]
    for i in framework.secret_nodes:
        pairs = set()
        for pr in framework.pairs_of(i):
            s, s2 = cls.state_index(i, pr.first.state), cls.state_index(i, pr.second.state)
            pairs |= {(s, s2), (s2, s)}
        best = (len(in_query) / epsilon, 0.0)
        for a, b in itertools.product([None, *range(1, i + 1)], [None, *range(1, length - i)]):
            values = [_quilt_terms(c, i, a, b, s, s2) for c in caches for s, s2 in pairs]
            e = max([0.0] + [v for v in values if v is not None])
            lo, hi = (i - a + 1 if a else 0), (i + b - 1 if b else length - 1)
            card = sum(1 for v in range(lo, hi + 1) if v in in_query)
            if e < epsilon and card / (epsilon - e) < best[0]:
                best = (card / (epsilon - e), e)
        out[i] = best
    return out


def mqm_chain_sigma(chains, epsilon: float) -> float:
    """MQMExact σ_max (L = 1) for a class of chains, every pair of every node protected."""
    framework = Framework(ScenarioClass(list(chains)))
    return max(sigma for sigma, _ in naive_chain_sigmas(framework, epsilon).values())
