"""Brute-force references for the exact engines: enumerate every joint assignment."""

from __future__ import annotations

import itertools

import numpy as np

from pufferfish_pgm._pgmpy import NetworkTables
from pufferfish_pgm.scenarios import BayesianNetworkScenario, MarkovChainScenario


def random_chain(rng: np.random.Generator, k: int, length: int, initial="random",
                 zeros: bool = False) -> MarkovChainScenario:
    """A random chain; ``zeros`` puts some zero transitions in (rows keep one nonzero)."""
    p = rng.dirichlet(np.ones(k), size=k)
    if zeros:
        p = np.where(rng.random((k, k)) < 0.3, 0.0, p)
        p[np.arange(k), rng.integers(0, k, k)] += 0.1
        p = p / p.sum(axis=1, keepdims=True)
    q = rng.dirichlet(np.ones(k)) if isinstance(initial, str) and initial == "random" else initial
    return MarkovChainScenario(p, q, length)


def random_network(rng: np.random.Generator, n: int, max_card: int = 3,
                   max_parents: int = 2) -> BayesianNetworkScenario:
    """A random DAG over nodes 'v0'..'v{n-1}' with random CPTs."""
    nodes = tuple(f"v{i}" for i in range(n))
    cards = {v: int(rng.integers(2, max_card + 1)) for v in nodes}
    states = {v: tuple(f"s{j}" for j in range(cards[v])) for v in nodes}
    parents, cpts = {}, {}
    for i, v in enumerate(nodes):
        m = int(rng.integers(0, min(i, max_parents) + 1))
        pa = tuple(rng.choice(nodes[:i], size=m, replace=False)) if m else ()
        parents[v] = tuple(str(p) for p in pa)
        shape = [cards[p] for p in parents[v]]
        table = rng.dirichlet(np.ones(cards[v]), size=int(np.prod(shape, dtype=int)))
        cpts[v] = table.T.reshape([cards[v], *shape])
    return BayesianNetworkScenario(NetworkTables(nodes=nodes, states=states, parents=parents,
                                                 cpts=cpts))


def joint_assignments(scenario):
    """Yield (tuple of state indices in node order, probability)."""
    if isinstance(scenario, MarkovChainScenario):
        p, q = scenario.transition, scenario.initial
        for xs in itertools.product(range(scenario.k), repeat=scenario.length):
            yield xs, q[xs[0]] * np.prod([p[a, b] for a, b in zip(xs[:-1], xs[1:], strict=True)])
        return
    t = scenario.tables
    index = {v: i for i, v in enumerate(t.nodes)}
    for xs in itertools.product(*(range(len(t.states[v])) for v in t.nodes)):
        prob = 1.0
        for v in t.nodes:
            prob *= t.cpts[v][(xs[index[v]], *(xs[index[p]] for p in t.parents[v]))]
        yield xs, prob


def brute_pmf(scenario, weight_fns, evidence=None):
    """dict value(s) -> P(value | evidence); ``weight_fns`` maps (node, state) -> int each."""
    nodes = scenario.nodes
    codes = {n: scenario.state_index(n, s) for n, s in (evidence or {}).items()}
    pos = {v: i for i, v in enumerate(nodes)}
    out: dict = {}
    for xs, prob in joint_assignments(scenario):
        if prob == 0 or any(xs[pos[n]] != c for n, c in codes.items()):
            continue
        value = tuple(sum(fn(v, scenario.states_of(v)[xs[pos[v]]]) for v in nodes)
                      for fn in weight_fns)
        out[value] = out.get(value, 0.0) + prob
    total = sum(out.values())
    return {k: v / total for k, v in out.items()}


def brute_epsilon(pmf_a: dict, pmf_b: dict, scales, extra=()) -> float:
    """max |log p_a(w)/p_b(w)| over the product grid of support values plus ``extra`` points."""
    pts_a, pts_b = list(pmf_a), list(pmf_b)
    d = len(pts_a[0])
    axes = [sorted({p[j] for p in pts_a + pts_b} | {e[j] for e in extra}) for j in range(d)]
    best = 0.0
    scales = np.asarray(scales, dtype=float)
    for point in itertools.product(*axes):
        w = np.array(point, dtype=float)
        best = max(best, abs(np.log(_density(pmf_a, w, scales))
                             - np.log(_density(pmf_b, w, scales))))
    return best


def _density(pmf: dict, w: np.ndarray, scales: np.ndarray) -> float:
    pts = np.array(list(pmf), dtype=float)
    m = np.array(list(pmf.values()))
    return float(np.sum(m * np.exp(-np.sum(np.abs(w - pts) / scales, axis=1))))


def mqm_chain_sigma(chains, epsilon: float) -> float:
    """MQMExact σ_max (L = 1) for a class of chains with fixed starts, straight from DESIGN §3.3.

    Every quilt (a, b) of every node is tried; no pruning, so it is slow but simple.
    """
    length = chains[0].length
    best_all = 0.0
    for i in range(length):
        best = length / epsilon
        lefts = [None, *range(1, i + 1)]
        rights = [None, *range(1, length - i)]
        for a in lefts:
            for b in rights:
                e = max(_quilt_influence(mc, i, a, b) for mc in chains)
                if e < epsilon:
                    card = (a if a else i + 1) + (b if b else length - i) - 1
                    best = min(best, card / (epsilon - e))
        best_all = max(best_all, best)
    return best_all


def _quilt_influence(mc, i, a, b) -> float:
    k = mc.k
    qi = mc.marginal(i)
    worst = 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        for s in range(k):
            for t in range(k):
                if s == t or qi[s] == 0 or qi[t] == 0:
                    continue
                down = 0.0
                if b:
                    pb = mc.power(b)
                    ratio = np.log(pb[s]) - np.log(pb[t])
                    down = float(np.max(np.where(pb[s] > 0, ratio, -np.inf)))
                up = 0.0
                if a:
                    pa = mc.power(a)
                    ok = mc.marginal(i - a) > 0
                    ratio = np.log(pa[ok, s]) - np.log(pa[ok, t])
                    ratio = np.where(pa[ok, s] > 0, ratio, -np.inf)
                    up = float(np.max(ratio)) + np.log(qi[t]) - np.log(qi[s])
                worst = max(worst, up + down)
    return worst
