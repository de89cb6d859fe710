"""Shared test helpers: paths, loaders for the real networks, and hypothesis strategies for
small random models, including the sticky chains users fit (``sticky_chains``).

Test modules import them with ``from helpers import ...`` (``tests/`` is on pytest's
``pythonpath``); fixtures stay in ``conftest.py``, brute-force references in ``oracle.py``.

The real bnlearn networks come from ``../shared/models-real`` when that folder exists (all eight
networks), else from the bundled ``models/`` folder (asia, sachs, child, insurance, alarm).
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import strategies as st

from pufferfish_pgm import BayesianNetworkScenario, MarkovChainScenario
from pufferfish_pgm.scenarios._network_tables import NetworkTables

#: The repository's root (README, examples/, models/, docs/).
ROOT = Path(__file__).resolve().parents[1]
#: The shared folder beside the repository (real networks and data nobody here wrote).
SHARED = ROOT.parent / "shared"
#: The Ordóñez activity logs and other real data.
DATA_REAL = SHARED / "data-real"
SHARED_MODELS = SHARED / "models-real"
BUNDLED_MODELS = ROOT / "models"
MODELS_DIR = SHARED_MODELS if SHARED_MODELS.is_dir() else BUNDLED_MODELS


def model_path(name: str) -> Path:
    """Path of the real network ``name`` (``"alarm"`` -> ``.../alarm.bif``)."""
    return MODELS_DIR / f"{name}.bif"


def has_model(name: str) -> bool:
    return model_path(name).is_file()


@cache
def load_network(name: str) -> BayesianNetworkScenario:
    """A real network, loaded once per test session (scenarios are immutable)."""
    if not has_model(name):
        pytest.skip(f"{name}.bif is not available in {MODELS_DIR}")
    return BayesianNetworkScenario.from_file(model_path(name))


# ----------------------------------------------------------------------------- strategies

@st.composite
def distributions(draw: st.DrawFn, k: int, zeros: bool = True) -> np.ndarray:
    """A probability vector of length k, possibly with zeros (never all zero)."""
    weights = draw(st.lists(st.integers(0 if zeros else 1, 6), min_size=k, max_size=k))
    if sum(weights) == 0:
        weights[draw(st.integers(0, k - 1))] = 1
    vector = np.array(weights, dtype=float)
    return vector / vector.sum()


@st.composite
def small_networks(draw: st.DrawFn, max_nodes: int = 6, max_states: int = 3,
                   max_parents: int = 3) -> BayesianNetworkScenario:
    """A random discrete BN: <= max_nodes nodes, <= max_states states, random DAG, random CPTs
    (with some zero entries), built from validated tables (no pgmpy needed)."""
    n = draw(st.integers(1, max_nodes))
    nodes = tuple(f"X{i}" for i in range(n))  # topological order by construction
    cards = draw(st.lists(st.integers(2, max_states), min_size=n, max_size=n))
    states = {v: tuple(f"s{j}" for j in range(cards[i])) for i, v in enumerate(nodes)}
    parents, cpts = {}, {}
    for i, v in enumerate(nodes):
        earlier = list(range(i))
        chosen = draw(st.lists(st.sampled_from(earlier), unique=True,
                               max_size=min(max_parents, i))) if earlier else []
        parents[v] = tuple(nodes[j] for j in chosen)
        pshape = [cards[j] for j in chosen]
        columns = [draw(distributions(cards[i])) for _ in range(math.prod(pshape))]
        table = np.array(columns).T.reshape([cards[i], *pshape])
        cpts[v] = table
    tables = NetworkTables(nodes=nodes, states=states, parents=parents, cpts=cpts)
    return BayesianNetworkScenario(tables, name="random")


@st.composite
def small_chains(draw: st.DrawFn, max_states: int = 3, max_length: int = 6,
                 fixed_initial: bool = True) -> MarkovChainScenario:
    """A random Markov chain with zeros allowed in the transition matrix and initial vector."""
    k = draw(st.integers(1, max_states))
    transition = np.array([draw(distributions(k)) for _ in range(k)])
    length = draw(st.integers(1, max_length))
    if fixed_initial:
        initial = draw(distributions(k))
    else:
        initial = draw(st.sampled_from(["any", "initial"]))
        initial = draw(distributions(k)) if initial == "initial" else "any"
    names = draw(st.sampled_from([None, tuple("abc"[:k])]))
    return MarkovChainScenario(transition, initial, length, names, name="random chain")


@st.composite
def queries(draw: st.DrawFn, scenario: object, max_targets: int = 3,
            max_evidence: int = 3) -> tuple[list, dict]:
    """Random (targets, evidence) on distinct nodes of ``scenario``, random evidence states."""
    nodes = list(scenario.nodes)
    picked = draw(st.permutations(nodes))
    n_t = draw(st.integers(1, min(max_targets, len(nodes))))
    n_e = draw(st.integers(0, min(max_evidence, len(nodes) - n_t)))
    targets = list(picked[:n_t])
    evidence = {v: draw(st.sampled_from(scenario.states_of(v))) for v in picked[n_t:n_t + n_e]}
    return targets, evidence


@st.composite
def sticky_chains(draw: st.DrawFn, k: int = 10, max_length: int = 8) -> MarkovChainScenario:
    """A chain like those fitted from activity logs: rows ``0.9 I + 0.1 Dirichlet(1)``, ``k``
    states, a random start (the class the benchmarks call sticky)."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    transition = 0.9 * np.eye(k) + 0.1 * rng.dirichlet(np.ones(k), size=k)
    initial = rng.dirichlet(np.ones(k))
    length = draw(st.integers(2, max_length))
    return MarkovChainScenario(transition, initial, length, name="sticky chain")
