"""Queries: weight tables, Lipschitz constants and their input checks."""

from __future__ import annotations

import numpy as np
import pytest

import pufferfish_pgm as pp
from pufferfish_pgm.scenarios._scenarios import default_model_path


@pytest.fixture(scope="module")
def chain():
    return pp.MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 4,
                                  states=["rest", "walk"])


def test_count_weights_and_lipschitz(chain):
    q = pp.Count("walk", nodes=[1, 3])
    assert q.weight_table(chain).tolist() == [[0.0, 1.0], [0.0, 1.0]]
    assert q.lipschitz_for(chain) == 1.0 and q.node_list(chain) == (1, 3)


def test_linear_query_lipschitz_is_the_largest_weight_span(chain):
    # weights rest -> 3, walk -> -2: one node moving changes F by |3 - (-2)| = 5
    assert pp.LinearQuery({"rest": 3, "walk": -2}).lipschitz_for(chain) == 5.0


def test_histogram_is_two_lipschitz_and_has_one_bar_per_state(chain):
    h = pp.Histogram()
    assert h.lipschitz_for(chain) == 2.0
    assert [b.state for b in h.bars(chain)] == ["rest", "walk"]


def test_network_rows_of_different_length_are_padded():
    alarm = pp.BayesianNetworkScenario.from_file(default_model_path("alarm.bif"),
                                                 renormalize=1e-6)
    table = pp.Count("TRUE", nodes=["HYPOVOLEMIA", "LVFAILURE"]).weight_table(alarm)
    assert table.tolist() == [[1.0, 0.0], [1.0, 0.0]]
    q = pp.Count("TRUE", nodes=["HYPOVOLEMIA", "HR"])
    with pytest.raises(pp.UnknownStateError, match="HR"):  # every listed node needs the state
        q.weight_table(alarm)
    q = pp.LinearQuery({"LOW": -1, "HIGH": 2}, nodes=["HR", "BP"])
    assert np.array_equal(q.weights_of(alarm, "HR"), [-1.0, 0.0, 2.0])
    assert q.lipschitz_for(alarm) == 3.0


@pytest.mark.parametrize("make, error, fragment", [
    (lambda: pp.Count("fly").lipschitz_for(CHAIN), pp.UnknownStateError, "fly"),
    (lambda: pp.Count("walk", nodes=[0, 9]).lipschitz_for(CHAIN), pp.UnknownNodeError, "9"),
    (lambda: pp.Count("walk", nodes=[1, 1]).lipschitz_for(CHAIN), pp.InvalidParameterError,
     "twice"),
    (lambda: pp.LinearQuery({"walk": 0.5}), pp.InvalidParameterError, "not an integer"),
    (lambda: pp.LinearQuery({"walk": float("nan")}, integer=False), pp.InvalidParameterError,
     "finite"),
    (lambda: pp.LinearQuery({"walk": "2"}), pp.ParameterTypeError, "walk"),
    (lambda: pp.LinearQuery({}), pp.ParameterTypeError, "non-empty"),
])
def test_bad_queries(make, error, fragment):
    with pytest.raises(error, match=fragment):
        make()


CHAIN = pp.MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 4,
                               states=["rest", "walk"])


def test_a_chain_weight_table_is_one_row_broadcast():
    # a chain's steps share their states, so the table is a view of one row: 10^9 steps take
    # no memory per step (it used to be a Python loop over every step: 200 s at 10^7)
    mc = pp.MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 10**9,
                                states=["rest", "walk"])
    table = pp.LinearQuery({"rest": 0, "walk": 3}).weight_table(mc)
    assert table.shape == (10**9, 2) and table.strides[0] == 0
    assert table[123_456_789].tolist() == [0.0, 3.0]
