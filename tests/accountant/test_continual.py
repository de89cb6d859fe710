"""ContinualRelease: a query released day after day (or window after window of a long chain)
under a total budget. The reported totals are proven (docs/composition.md, "Continual
release"); here they are checked against golden values derived by hand (the brute-force
property on random small chains is in tests/mechanisms/test_privacy_regression.py), and bad
inputs are refused with clear errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

import pufferfish_pgm as pp
from pufferfish_pgm.accountant import ContinualRelease, joint_audit
from pufferfish_pgm.errors import (
    BudgetExceededError,
    CompositionError,
    InvalidDataError,
    InvalidParameterError,
    ParameterTypeError,
)
from pufferfish_pgm.queries import Count, Histogram
from pufferfish_pgm.scenarios import BayesianNetworkScenario
from pufferfish_pgm.scenarios._network_tables import NetworkTables

RTOL = 1e-9
STICKY = [[0.8, 0.2], [0.3, 0.7]]


def days_network(chain: pp.MarkovChainScenario, days: int) -> BayesianNetworkScenario:
    """``days`` independent copies of ``chain`` as one network (node ``d{d}t{t}``): the model
    under which unit='day' claims parallel composition."""
    k = len(chain.states_of(chain.nodes[0]))
    states = chain.states_of(chain.nodes[0])
    nodes, parents, cpts = [], {}, {}
    for d in range(days):
        for t in range(len(chain.nodes)):
            v = f"d{d}t{t}"
            nodes.append(v)
            if t == 0:
                parents[v], cpts[v] = (), np.asarray(chain.initial, dtype=float)
            else:
                parents[v], cpts[v] = (f"d{d}t{t - 1}",), np.asarray(chain.transition).T.copy()
    tables = NetworkTables(nodes=tuple(nodes), states={v: states for v in nodes},
                           parents=parents, cpts=cpts)
    assert k == len(states)
    return BayesianNetworkScenario(tables, name=f"{days} independent days")


def day_query(query, chain, day: int):
    """``query`` (a Count or Histogram over the whole day) on the nodes of day ``day``."""
    nodes = tuple(f"d{day}t{t}" for t in range(len(chain.nodes)))
    return Histogram(nodes) if isinstance(query, Histogram) else Count(query.state, nodes)


def prefix_audit(cr: ContinualRelease, count: int) -> float:
    """Exact ε of the first ``count`` windows released together (finite Θ)."""
    cal = cr.calibration
    parts = cal.query.parts(cal.framework.scenarios)[:count]
    return joint_audit(cal.framework, [(p, cal.scale) for p in parts])


# ----------------------------------------------------------------------------- golden values

def test_group_dp_windows_golden() -> None:
    # T = 6, WindowedCount(1, 2), ε = 1: group DP adds Laplace(L·T/ε) = Laplace(6) to each of
    # the three windows. After n windows (2n slots) any two datasets differ by at most 2n in
    # L1 on what was released, so the prefix costs 2n/6: 1/3, 2/3, then 1 (= ε, the cap).
    mc = pp.MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 6)
    cr = ContinualRelease(pp.GroupDPMechanism(epsilon=1.0), pp.Framework(mc),
                          pp.WindowedCount(1, 2), horizon=3, budget=1.0, unit="window")
    assert cr.calibration.scale == 6.0
    assert [cr.bound_after(n) for n in range(4)] == pytest.approx([0, 1 / 3, 2 / 3, 1.0])
    rng = np.random.default_rng(3)
    for n, window in enumerate([[0, 1], [1, 1], [1, 0]], start=1):
        cr, rel = cr.release_next(window, rng=rng)
        assert cr.spent == pytest.approx(n / 3) and cr.remaining == pytest.approx(1 - n / 3)
        assert rel.query == f"count(1)@[{2 * n - 2},{2 * n})" and rel.scale == 6.0
    assert cr.released == 3 and len(cr.accountant.releases) == 1


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_exact_days_golden_and_parallel_composition() -> None:
    # docs/composition.md: on the sticky chain P = [[0.8, 0.2], [0.3, 0.7]], stationary, T = 4,
    # ExactLaplaceMechanism calibrates Count(1) at ε = 0.5 with λ = 4.5269. With one chain per
    # day, a secret about day 0 leaves day 1's release independent of it: in
    # P(ω0, ω1 | s) = P(ω0 | s) P(ω1) the second factor cancels, so the exact audit of both
    # days together is that of day 0 alone, 0.5 exactly, and a week costs 0.5.
    mc = pp.MarkovChainScenario(STICKY, "stationary", 4)
    cr = ContinualRelease(pp.ExactLaplaceMechanism(epsilon=0.5), pp.Framework(mc), Count(1),
                          horizon=7, budget=0.5)
    assert cr.calibration.scale == pytest.approx(4.5269, abs=1e-4)
    assert cr.spent == 0.0 and cr.bound_for_horizon == 0.5
    rng = np.random.default_rng(0)
    for _ in range(7):
        cr, _rel = cr.release_next([[0, 1, 1, 0], [1, 1, 1, 1]], rng=rng)
    assert cr.spent == 0.5 and cr.remaining == 0.0
    assert cr.accountant.epsilon == 0.5 and len(cr.accountant.groups) == 7
    two = days_network(mc, 2)
    both = joint_audit(pp.Framework(two), [(day_query(Count(1), mc, d), cr.calibration.scale)
                                           for d in range(2)])
    assert both == pytest.approx(0.5, rel=1e-9)
    with pytest.raises(CompositionError, match="horizon of 7 releases is used up"):
        cr.release_next([0, 1, 1, 0])


def test_mqm_windows_golden() -> None:
    # T = 24, P = [[0.9, 0.1], [0.4, 0.6]], ε = 2, hourly windows of 6 slots. MQM's plan gives
    # λ = σ_max = 4.91354 on every window. Window 0 alone: at most 6 slots differ, so
    # 6/λ = 1.22112 (group DP's lemma); its quilt bound is larger there. Two windows or more:
    # 12/λ > 2, so the cap ε = 2 (the vector release, of which the prefix is a marginal) is
    # the bound, and the quilt bound reaches it up to rounding (the worst node's quilt has
    # e + n_N/λ = ε exactly). The exact audits are far below: 0.555, 0.642, 0.656, 0.659.
    mc = pp.MarkovChainScenario([[0.9, 0.1], [0.4, 0.6]], "stationary", 24)
    cr = ContinualRelease(pp.MarkovQuiltMechanism(epsilon=2.0), pp.Framework(mc),
                          pp.WindowedCount(1, 6), horizon=4, budget=2.0, unit="window")
    lam = cr.calibration.scale
    assert lam == pytest.approx(4.913536, rel=1e-6)
    assert cr.bound_after(1) == pytest.approx(6 / lam)
    assert [cr.bound_after(n) for n in (2, 3, 4)] == pytest.approx([2.0] * 3)
    audits = [prefix_audit(cr, n) for n in range(1, 5)]
    assert audits == pytest.approx([0.55504, 0.64182, 0.65625, 0.65867], abs=1e-5)


def test_histogram_windows_name_their_coordinates() -> None:
    mc = pp.MarkovChainScenario(STICKY, "stationary", 6, states=["rest", "walk"])
    cr = ContinualRelease(pp.MarkovQuiltMechanism(epsilon=1.0), pp.Framework(mc),
                          pp.WindowedHistogram(3), horizon=2, budget=1.0, unit="window")
    cr, rel = cr.release_next([["rest", "walk", "walk"], ["walk", "walk", "walk"]],
                              rng=np.random.default_rng(1))
    assert rel.coordinates == ("count(rest)@[0,3)", "count(walk)@[0,3)")
    assert rel.value.shape == (2, 2)
    assert rel.query == "windowed_histogram(width=3)@[0,3)"


# ----------------------------------------------------------------------------- the property
# "after every release the reported total is at least the exact joint ε of what was released"
# is checked by brute force for every Laplace mechanism, both units, in the seeded campaign
# of tests/mechanisms/test_privacy_regression.py (run_continual_campaign); here only golden values.

# ----------------------------------------------------------------------------- refusals

@pytest.fixture(scope="module")
def sticky() -> pp.Framework:
    return pp.Framework(pp.MarkovChainScenario(STICKY, "stationary", 4))


@pytest.mark.parametrize("budget", [float("nan"), -1.0, 0.0, float("inf"), -math.inf])
def test_bad_budgets_are_refused(sticky: pp.Framework, budget: float) -> None:
    with pytest.raises(InvalidParameterError, match="budget must be a finite total ε > 0"):
        ContinualRelease(pp.GroupDPMechanism(epsilon=1.0), sticky, Count(1), horizon=3,
                         budget=budget)


@pytest.mark.parametrize("budget", ["1", True, None])
def test_budgets_of_the_wrong_type_are_refused(sticky: pp.Framework, budget: object) -> None:
    with pytest.raises(ParameterTypeError, match="budget must be a real number"):
        ContinualRelease(pp.GroupDPMechanism(epsilon=1.0), sticky, Count(1), horizon=3,
                         budget=budget)  # type: ignore[arg-type]


@pytest.mark.parametrize(("horizon", "error"), [(0, InvalidParameterError),
                                                (-2, InvalidParameterError),
                                                (2.5, ParameterTypeError)])
def test_bad_horizons_are_refused(sticky: pp.Framework, horizon: object, error: type) -> None:
    with pytest.raises(error, match="horizon"):
        ContinualRelease(pp.GroupDPMechanism(epsilon=1.0), sticky, Count(1),
                         horizon=horizon, budget=1.0)  # type: ignore[arg-type]


def test_other_bad_arguments_are_refused(sticky: pp.Framework) -> None:
    with pytest.raises(ParameterTypeError, match="mechanism must be a Mechanism"):
        ContinualRelease("mqm", sticky, Count(1), horizon=3, budget=1.0)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="unit must be 'day'"):
        ContinualRelease(pp.GroupDPMechanism(epsilon=1.0), sticky, Count(1), horizon=3,
                         budget=1.0, unit="week")  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="windowed query window by window"):
        ContinualRelease(pp.GroupDPMechanism(epsilon=1.0), sticky, Count(1), horizon=3,
                         budget=1.0, unit="window")
    with pytest.raises(InvalidParameterError, match="exceeds the 2 windows"):
        ContinualRelease(pp.GroupDPMechanism(epsilon=1.0), sticky, pp.WindowedCount(1, 2),
                         horizon=3, budget=1.0, unit="window")


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_data_of_the_wrong_shape_is_refused(sticky: pp.Framework) -> None:
    day = ContinualRelease(pp.GroupDPMechanism(epsilon=1.0), sticky, Count(1), horizon=3,
                           budget=1.0)
    with pytest.raises(InvalidDataError, match="has 3 values but the model has 4 nodes"):
        day.release_next([0, 1, 1])
    window = ContinualRelease(pp.GroupDPMechanism(epsilon=1.0), sticky,
                              pp.WindowedCount(1, 2), horizon=2, budget=1.0, unit="window")
    for bad in ([0, 1, 1], [[0, 1, 1]], np.zeros((2, 2, 2), dtype=int), {0: 1}):
        with pytest.raises(InvalidDataError, match=r"window \[0,2\) has 2 slots|not a dict"):
            window.release_next(bad)
    with pytest.raises(InvalidDataError, match="not a state of the model"):
        window.release_next([0, 7])
    assert window.released == 0       # nothing was recorded


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_a_release_over_budget_is_refused_before_any_noise(sticky: pp.Framework) -> None:
    cr = ContinualRelease(pp.ExactLaplaceMechanism(epsilon=0.5), sticky, Count(1), horizon=3,
                          budget=0.4)
    with pytest.raises(BudgetExceededError, match="above the budget 0.4") as err:
        cr.release_next([0, 1, 1, 0])
    assert isinstance(err.value, CompositionError) and isinstance(err.value, ValueError)
    assert cr.released == 0 and cr.spent == 0.0


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_release_next_returns_a_new_value(sticky: pp.Framework) -> None:
    cr = ContinualRelease(pp.GroupDPMechanism(epsilon=1.0), sticky, Count(1), horizon=3,
                          budget=1.0)
    after, rel = cr.release_next([0, 1, 1, 0], rng=np.random.default_rng(0))
    assert cr.released == 0 and after.released == 1 and after.releases == (rel,)
    assert "1/3 days released" in after.summary()
    with pytest.raises(AttributeError):
        after.budget = 5.0  # type: ignore[misc]


def test_nominal_and_uncomposable_calibrations_are_refused(sticky: pp.Framework) -> None:
    with pytest.raises(CompositionError, match="EntryDP"):
        ContinualRelease(pp.EntryDPMechanism(epsilon=1.0), sticky, Count(1), horizon=3,
                         budget=1.0)
    # Wasserstein has no transport plan for a vector: it names the mechanisms that calibrate
    # a windowed query (and so compose window by window)
    with pytest.raises(InvalidParameterError, match="MarkovQuiltMechanism"):
        ContinualRelease(pp.WassersteinMechanism(epsilon=1.0), sticky, pp.WindowedCount(1, 2),
                         horizon=2, budget=1.0, unit="window")
