"""Queries by group (issue 24): the count of a state per group of nodes, calibrated by the
exact mechanism and MQM, checked by brute force over every joint state."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from oracle import framework_epsilon

import pufferfish_pgm as pp


def _tiny(directed: bool) -> tuple[pp.Framework, pp.GroupCount, list]:
    """Five people on a path, two communities (0-1-2 | 3-4) joined by the edge 2-3, two
    scenarios; the group count of "infected" and its bars as brute-force weight functions."""
    graph = nx.path_graph(5)
    nx.set_node_attributes(graph, {0: "A", 1: "A", 2: "A", 3: "B", 4: "B"}, "community")
    members = [pp.scenarios.contagion(graph, base=0.2, spread=s, directed=directed,
                                      name=f"spread {s}") for s in (0.3, 0.7)]
    query = pp.GroupCount("infected", nx.get_node_attributes(graph, "community"))
    fns = [lambda v, s, g=g: int(s == "infected" and v in g) for g in ({0, 1, 2}, {3, 4})]
    return pp.Framework(pp.ScenarioClass(members)), query, fns


def test_group_count_is_a_vector_with_sensitivity_one() -> None:
    fw, query, _ = _tiny(True)
    assert query.lipschitz_for(fw.scenarios) == 1.0
    assert [bar.nodes for bar in query.parts(fw.scenarios)] == [(0, 1, 2), (3, 4)]
    assert query.coordinates(fw.scenarios) == ("count(infected)@A", "count(infected)@B")
    # group DP: one person's whole group of 5 moves the vector by at most 5 in L1
    assert pp.GroupDPMechanism(epsilon=1.0).calibrate(fw, query).scale == 5.0


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
@pytest.mark.parametrize("directed", [True, False])
def test_exact_laplace_is_tight_on_the_joint_vector(directed: bool) -> None:
    """The exact scale is ε-private for the two bars jointly (brute force over 2^5 states,
    every secret pair, both scenarios) and a slightly smaller one is not; the audit of a
    scale equals the brute-force joint loss (the bars are correlated across the edge)."""
    fw, query, fns = _tiny(directed)
    cal = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(fw, query)
    assert framework_epsilon(fw, fns, cal.scale) <= 1.0 + 1e-9
    assert framework_epsilon(fw, fns, cal.scale * (1 - 1e-4)) > 1.0
    assert pp.audit(fw, query, 2.0).epsilon == pytest.approx(
        framework_epsilon(fw, fns, 2.0), rel=1e-9)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
@pytest.mark.parametrize("directed", [True, False])
def test_markov_quilt_group_count_is_private(directed: bool) -> None:
    """MQM puts L·σ_max (L = 1) on each bar; brute force finds it ε-private jointly."""
    fw, query, fns = _tiny(directed)
    cal = pp.MarkovQuiltMechanism(epsilon=1.0).calibrate(fw, query)
    assert framework_epsilon(fw, fns, cal.scale) <= 1.0 + 1e-9


def test_release_answers_each_group() -> None:
    fw, query, _ = _tiny(True)
    cal = pp.EntryDPMechanism(epsilon=1e9).calibrate(fw, query)   # noise ~ 1e-9: the answer
    record = {0: "infected", 1: "healthy", 2: "infected", 3: "infected", 4: "infected"}
    assert np.asarray(cal.release(record, np.random.default_rng(0)).value).tolist() == [2, 2]


def test_bad_groups_are_refused() -> None:
    fw, _, _ = _tiny(True)
    with pytest.raises(pp.errors.ParameterTypeError, match="groups must be"):
        pp.GroupCount("infected", [0, 1])
    with pytest.raises(pp.errors.ParameterTypeError, match="node 1"):
        pp.GroupCount("infected", {0: "A", 1: ["B"]})
    with pytest.raises(pp.PufferfishError, match="99"):
        pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(
            fw, pp.GroupCount("infected", {0: "A", 99: "B"}))
