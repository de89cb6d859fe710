"""Builders from contact graphs and household tables (issue 24 item 4)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from oracle import realised_epsilon

import pufferfish_pgm as pp
from pufferfish_pgm.inference._components import network_parts


def test_contagion_is_noisy_or_over_the_order() -> None:
    """Edges point from earlier to later nodes; P(infected | parents) is noisy-OR:
    1 - (1 - base) (1 - spread)^(infected parents)."""
    bn = pp.scenarios.contagion(nx.star_graph(2), base=0.1, spread={(0, 1): 0.5, (0, 2): 0.2})
    assert bn.parents_of(1) == (0,) and bn.parents_of(0) == ()
    assert bn.cpt(1)[1].tolist() == pytest.approx([0.1, 1 - 0.9 * 0.5])
    assert bn.cpt(2)[1].tolist() == pytest.approx([0.1, 1 - 0.9 * 0.8])
    tri = pp.scenarios.contagion(nx.complete_graph(3), base=0.0, spread=0.5, order=[2, 1, 0])
    assert tri.parents_of(0) == (2, 1)
    # both parents infected: 1 - 1 * 0.5 * 0.5
    assert tri.cpt(0)[1, 1, 1] == pytest.approx(0.75)


def test_contagion_refusals_name_the_problem() -> None:
    with pytest.raises(pp.InvalidParameterError, match=r"spread\[\(0, 1\)\] = 1.0"):
        pp.scenarios.contagion(nx.path_graph(3), spread=1.0, directed=False)
    with pytest.raises(pp.ParameterTypeError, match="networkx"):
        pp.scenarios.contagion([(0, 1)], directed=False)
    with pytest.raises(pp.InvalidParameterError, match=r"spread\[\(0, 1\)\]"):
        pp.scenarios.contagion(nx.path_graph(2), spread={(0, 1): 1.5})
    with pytest.raises(pp.InvalidParameterError, match="without an entry for 2"):
        pp.scenarios.contagion(nx.path_graph(3), base={0: 0.1, 1: 0.1})
    with pytest.raises(pp.InvalidModelError, match="cycle"):
        pp.scenarios.contagion(nx.DiGraph([(0, 1), (1, 0)]))
    with pytest.raises(pp.InvalidModelError, match="30 parents"):
        pp.scenarios.contagion(nx.star_graph(30), order=range(30, -1, -1))
    with pytest.raises(pp.ParameterTypeError, match="networkx"):
        pp.scenarios.contagion([(0, 1)])


def test_undirected_contagion_takes_per_edge_spreads_in_either_orientation() -> None:
    """directed=False: one unary factor (1 - base, base) per person and one pairwise factor
    with 1 / (1 - spread) on (infected, infected) per edge (issue 24)."""
    mn = pp.scenarios.contagion(nx.path_graph(3), base={0: 0.1, 1: 0.2, 2: 0.3},
                                spread={(1, 0): 0.5, (1, 2): 0.75}, directed=False)
    factors = dict(mn.factors())
    assert factors[(1,)].tolist() == pytest.approx([0.8, 0.2])
    assert factors[(0, 1)].tolist() == [[1.0, 1.0], [1.0, 2.0]]
    assert factors[(1, 2)].tolist() == [[1.0, 1.0], [1.0, 4.0]]


def test_households_from_rows() -> None:
    """Roots first within a household, repeated roles numbered, households independent and
    equal households one plate."""
    rows = [("a", "child"), ("a", "parent"), ("a", "child"), ("b", "parent"),
            ("b", "child"), ("b", "child"), ("c", "adult")]
    bn = pp.households(rows, base={"parent": 0.2, "child": 0.1, "adult": 0.3}, spread=0.5)
    assert bn.nodes[:3] == ("a/parent", "a/child.1", "a/child.2")
    assert bn.parents_of("b/child.2") == ("b/parent",)
    assert bn.cpt("a/child.1")[1].tolist() == pytest.approx([0.1, 1 - 0.9 * 0.5])
    parts = network_parts(bn.tables)
    assert parts.components == 3 and sorted(len(p.members) for p in parts.plates) == [1, 2]


def test_households_refuse_bad_rows() -> None:
    with pytest.raises(pp.InvalidParameterError, match="row 1"):
        pp.households([("a", "parent"), ("a",)])
    with pytest.raises(pp.InvalidParameterError, match="no rows"):
        pp.households([])
    with pytest.raises(pp.InvalidParameterError, match=r"base\['child'\]"):
        pp.households([("a", "child")], base={"child": -0.1})


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_households_from_a_dataframe_calibrate_against_brute_force() -> None:
    """Three lines from a table to a calibration; the oracle confirms the exact scale."""
    pd = pytest.importorskip("pandas")
    table = pd.DataFrame({"household": [1, 1, 2, 2, 2], "role": ["parent", "child"] * 2
                          + ["child"]})
    fw = pp.Framework(pp.ScenarioClass([pp.households(table, spread=0.3, name="weak"),
                                        pp.households(table, spread=0.8, name="strong")]))
    cal = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(fw, pp.Count("yes"))
    assert realised_epsilon(fw, pp.Count("yes"), cal.scale) <= 1.0 + 1e-9
    assert np.isfinite(cal.scale) and cal.scale > 0
