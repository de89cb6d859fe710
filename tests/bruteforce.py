"""Brute-force realised ε of F + Laplace(scale) by enumerating every assignment (tests only).

For each scenario θ of the class, every joint assignment and its probability are listed; the
exact distribution of F given each secret follows by summation. The output density
p_s(w) = Σ_f μ_s(f) e^{-|w-f|/λ} / 2λ; the supremum of |log p_s(w)/p_s'(w)| over w is reached
on the union of the support points (between two of them the ratio is monotone, beyond the
extremes constant), so the densities are evaluated there. Vectors (histograms) use the
product grid of the bars' support values. Chains with ``initial="any"`` are checked at
every point-mass start, the uniform start and a few random starts (a lower bound on the sup).
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.special import logsumexp

from pufferfish_pgm.queries import Histogram
from pufferfish_pgm.scenarios import MarkovChainScenario


def _chain_variants(chain: MarkovChainScenario, seed: int = 0) -> list:
    if not chain.initial_is_any:
        return [chain]
    k, rng = chain.k, np.random.default_rng(seed)
    starts = [*np.eye(k), np.ones(k) / k, *rng.dirichlet(np.ones(k) * 0.3, size=3)]
    return [MarkovChainScenario(chain.transition, q, chain.length) for q in starts]


def enumerate_joint(member) -> tuple[np.ndarray, np.ndarray]:
    """All assignments (N, n_nodes) of state indices, node order = member.nodes, and P."""
    nodes = list(member.nodes)
    sizes = [len(member.states_of(v)) for v in nodes]
    xs = np.array(list(itertools.product(*[range(s) for s in sizes])), dtype=int)
    if isinstance(member, MarkovChainScenario):
        p = member.initial[xs[:, 0]].copy()
        for t in range(1, len(nodes)):
            p *= member.transition[xs[:, t - 1], xs[:, t]]
        return xs, p
    col = {v: n for n, v in enumerate(nodes)}
    p = np.ones(len(xs))
    for v in nodes:
        idx = (xs[:, col[v]], *[xs[:, col[u]] for u in member.tables.parents[v]])
        p *= member.tables.cpts[v][idx]
    return xs, p


def query_values(member, query, xs: np.ndarray) -> np.ndarray:
    """F on every assignment: (N,) for linear queries, (N, k) for a histogram."""
    nodes = list(member.nodes)
    used = [nodes.index(v) for v in query.node_list(member)]
    if isinstance(query, Histogram):
        k = len(member.states_of(nodes[used[0]]))
        return np.stack([(xs[:, used] == s).sum(axis=1) for s in range(k)], axis=1)
    weights = dict(query.weights)
    table = [[weights.get(s, 0) for s in member.states_of(nodes[c])] for c in used]
    return sum(np.asarray(table[n])[xs[:, c]] for n, c in enumerate(used))


def _log_density(values: np.ndarray, probs: np.ndarray, grid: np.ndarray, scale: float):
    """log Σ_f μ(f) Π_d e^{-|w_d - f_d|/λ} at each grid point (normalising constants cancel)."""
    dist = np.abs(grid[:, None, :] - values[None, :, :]).sum(axis=2)
    return logsumexp(-dist / scale + np.log(probs)[None, :], axis=1)


def _pair_epsilon(values, p, mask_a, mask_b, scale: float) -> float:
    va, pa = values[mask_a & (p > 0)], p[mask_a & (p > 0)]
    vb, pb = values[mask_b & (p > 0)], p[mask_b & (p > 0)]
    if not len(pa) or not len(pb):
        return 0.0
    if scale == 0:  # no noise (every secret node's nearby block misses the query): pmfs
        keys, inv = np.unique(np.concatenate([va, vb]), axis=0, return_inverse=True)
        ma = np.bincount(inv.ravel()[:len(va)], pa, len(keys)) / pa.sum()
        mb = np.bincount(inv.ravel()[len(va):], pb, len(keys)) / pb.sum()
        with np.errstate(divide="ignore"):
            return float(np.abs(np.log(ma) - np.log(mb)).max())
    axes = [np.unique(np.concatenate([va[:, d], vb[:, d]])) for d in range(values.shape[1])]
    grid = np.array(list(itertools.product(*axes)), dtype=float)
    la = _log_density(va, pa / pa.sum(), grid, scale)
    lb = _log_density(vb, pb / pb.sum(), grid, scale)
    return float(np.abs(la - lb).max())


def realised_epsilon(framework, query, scale: float) -> float:
    """max over pairs, θ (and starts for "any") and outputs of |log p_a(w) / p_b(w)|."""
    worst = 0.0
    for member in framework.scenarios:
        variants = _chain_variants(member) if isinstance(member, MarkovChainScenario) else [
            member]
        for theta in variants:
            xs, p = enumerate_joint(theta)
            values = query_values(theta, query, xs).astype(float)
            values = values[:, None] if values.ndim == 1 else values
            nodes = list(theta.nodes)
            for pair in framework.pairs:
                col = nodes.index(pair.first.node)
                a = theta.state_index(pair.first.node, pair.first.state)
                b = theta.state_index(pair.first.node, pair.second.state)
                worst = max(worst, _pair_epsilon(values, p, xs[:, col] == a, xs[:, col] == b,
                                                 scale))
    return worst


def random_network(rng: np.random.Generator, n_nodes: int, max_states: int = 3,
                   edge_prob: float = 0.4, zero_prob: float = 0.0):
    """A random discrete Bayesian network (nodes 'v0'.. in topological order)."""
    from pufferfish_pgm._pgmpy import NetworkTables
    from pufferfish_pgm.scenarios import BayesianNetworkScenario

    nodes = tuple(f"v{i}" for i in range(n_nodes))
    states = {v: tuple(range(int(rng.integers(2, max_states + 1)))) for v in nodes}
    parents, cpts = {}, {}
    for i, v in enumerate(nodes):
        parents[v] = tuple(u for u in nodes[:i] if rng.random() < edge_prob)[-2:]
        shape = (len(states[v]), *[len(states[u]) for u in parents[v]])
        table = rng.dirichlet(np.ones(shape[0]) * 0.6, size=shape[1:]).reshape(
            *shape[1:], shape[0])
        table = np.moveaxis(table, -1, 0)
        if zero_prob:
            table = np.where(rng.random(shape) < zero_prob, 0.0, table)
            table[0] += (table.sum(axis=0) == 0)
            table = table / table.sum(axis=0, keepdims=True)
        cpts[v] = table
    tables = NetworkTables(nodes=nodes, states=states, parents=parents, cpts=cpts)
    return BayesianNetworkScenario(tables, name="random")
