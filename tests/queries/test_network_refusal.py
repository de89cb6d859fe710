"""Exact count laws on contact networks too wide for exact inference: refused from a capped
order search, with a lower bound that no budget on the machine meets (issue 24)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

import pufferfish_pgm as pp
from pufferfish_pgm.inference._engine import network_index


@pytest.mark.parametrize("directed", [True, False])
def test_wide_contact_network_is_refused_from_a_lower_bound(directed: bool) -> None:
    """1,000 people (Barabási–Albert, m = 2): the refusal names the culprit and the lower
    bound, says no budget on this machine fits (never suggests one) and points to MQM; the
    whole-network min-fill order (seconds) is never computed."""
    graph = nx.barabasi_albert_graph(1000, 2, seed=1)
    members = [pp.scenarios.contagion(graph, base=0.05, spread=s, directed=directed,
                                      name=f"spread {s}") for s in (0.2, 0.4)]
    fw = pp.Framework(pp.ScenarioClass(members))
    with pytest.raises(pp.LimitExceededError) as err:
        pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(fw, pp.Count("infected"))
    text = str(err.value)
    assert "a lower bound" in text and "no budget makes it fit on this machine" in text
    assert "memory_budget=" not in text and "MarkovQuiltMechanism" in text
    # the proof is the stopped order's culprit, or a treewidth bound (every order is over)
    assert ("reaches node" in text) != ("treewidth at least" in text)
    assert all(network_index(m)._order is None for m in members)


def test_ancestors_walk_equals_the_per_node_sets() -> None:
    """The lazy ancestor sets equal the sets built parent by parent (random DAG)."""
    from pufferfish_pgm.inference._factor_models import Ancestors

    rng = np.random.default_rng(3)
    parents = {v: tuple(int(p) for p in rng.choice(v, size=min(v, 2), replace=False))
               for v in range(40)}
    eager: dict = {}
    for v in range(40):
        eager[v] = frozenset({v}.union(*(eager[p] for p in parents[v])))
    up = Ancestors(parents)
    assert {v: up[v] for v in range(40)} == eager
    assert up.of([5, 30]) == eager[5] | eager[30]


def test_an_infeasible_count_law_is_said_before_the_stored_laws_size(monkeypatch) -> None:
    """Under a small budget the stored laws (2,000 secrets × 1,001 values × 2 scenarios,
    32 MB) are over it too, but a larger budget would only meet the count-law refusal next:
    that one is said (before: "a budget of 32MiB would fit ... memory_budget=")."""
    monkeypatch.setenv("PUFFERFISH_PGM_MEMORY_BUDGET", "10MB")
    graph = nx.barabasi_albert_graph(1000, 2, seed=1)
    members = [pp.scenarios.contagion(graph, base=0.05, spread=s, directed=False,
                                      name=f"spread {s}") for s in (0.2, 0.4)]
    fw = pp.Framework(pp.ScenarioClass(members))
    with pytest.raises(pp.LimitExceededError, match="exact count law over 1000 requisite"):
        pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(fw, pp.Count("infected"))
