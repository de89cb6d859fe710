"""002_* Examples 9.1–9.2: a DP Laplace release under a deterministic constraint."""

from __future__ import annotations

import math

import numpy as np
import pytest
from oracle import joint_assignments

from pufferfish_pgm.demos.constraints import constraint_leakage, exam_prior_class, exam_scenario
from pufferfish_pgm.errors import InvalidParameterError, ParameterTypeError
from pufferfish_pgm.queries import Count, query_distribution


def test_only_the_allowed_datasets_have_mass_and_uniform_prior_is_uniform():
    bn = exam_scenario(4)
    masses = {xs: p for xs, p in joint_assignments(bn) if p > 0}
    assert sorted(masses) == [(0, 0, 0, 0), (1, 0, 0, 0), (1, 1, 0, 0), (1, 1, 1, 0),
                              (1, 1, 1, 1)]
    assert all(p == pytest.approx(0.2) for p in masses.values())


def test_eq17_weights():
    f1 = np.array([0.9, 0.2, 0.6])
    bn = exam_scenario(3, f1)
    weights = [np.prod(f1[:k]) * np.prod(1 - f1[k:]) for k in range(4)]
    want = np.array(weights) / sum(weights)
    got = {sum(xs): p for xs, p in joint_assignments(bn) if p > 0}
    assert [got[k] for k in range(4)] == pytest.approx(want.tolist())


def test_example_9_2_conditionals():
    bn = exam_scenario(6)
    assert query_distribution(bn, Count(1), {"r1": 0}).support.tolist() == [0.0]
    given_one = query_distribution(bn, Count(1), {"r1": 1})
    assert given_one.support.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert given_one.probs == pytest.approx([1 / 6] * 6)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
@pytest.mark.parametrize("n, eps", [(3, 1.0), (10, 1.0), (10, 0.1), (25, 2.0)])
def test_dp_release_overshoots_and_matches_the_paper(n, eps):
    leak = constraint_leakage(n, eps)
    assert leak.dp_scale == pytest.approx(1 / eps)
    assert leak.realised_uniform > eps
    assert leak.realised_uniform == pytest.approx(leak.paper_log_ratio_at_n, rel=1e-9)
    closed = n * eps - math.log(n) + math.log((1 - math.exp(-eps * n)) / (1 - math.exp(-eps)))
    assert leak.paper_log_ratio_at_n == pytest.approx(closed, rel=1e-12)
    assert leak.realised_worst_prior == pytest.approx(n * eps, rel=1e-4)
    assert leak.exact_scale_worst_prior == pytest.approx(n / eps, rel=1e-4)
    assert leak.exact_scale_uniform < leak.exact_scale_worst_prior


def test_bad_input():
    with pytest.raises(InvalidParameterError):
        exam_scenario(3, [0.5, 0.5])
    with pytest.raises(InvalidParameterError):
        exam_scenario(2, [0.0, 0.5])
    with pytest.raises(ParameterTypeError):
        exam_scenario(2.5)
    with pytest.raises(InvalidParameterError):
        exam_prior_class(3, delta=0.7)
    with pytest.raises(InvalidParameterError):
        constraint_leakage(3, epsilon=0.0)
