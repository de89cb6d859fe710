"""ExactQuiltMechanism on windowed queries (counts and histograms per window): goldens, the
dependent coordinate of a histogram, and limits. Random windowed counts and histograms on
chains and classes (default limits, and tiny ones so that quilts decide) are audited by brute
force, with the scale <= MQM's, in the seeded campaign of
tests/mechanisms/test_privacy_regression.py."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import DATA_REAL
from test_exact_quilt import SLACK, STICKY

import pufferfish_pgm as pp
from pufferfish_pgm.errors import (
    InvalidParameterError,
    LimitExceededError,
    PufferfishError,
)
from pufferfish_pgm.mechanisms import ExactQuiltMechanism
from pufferfish_pgm.queries import Count
from pufferfish_pgm.scenarios import BayesianNetworkScenario, MarkovChainScenario
from pufferfish_pgm.scenarios._scenarios import default_model_path
from pufferfish_pgm.secrets import Framework

# ----------------------------------------------------------------------------- windowed counts

def test_windowed_counts_of_independent_slots_need_one_over_epsilon() -> None:
    # Independent slots (equal rows of P): for node i and the quilt {X_{i-1}, X_{i+1}} the
    # prior term is 0 and the nearby block is X_i alone, in one window: its window count is
    # the point mass at [s = 1] (plus a shift independent of X_i), so the exact loss of
    # Laplace(λ) on every coordinate is 1/λ, and λ = 1/ε = 2 at ε = 0.5 whatever the width.
    # Nothing smaller passes (the node's own coordinate alone leaks 1/λ).
    iid = Framework(MarkovChainScenario([[0.7, 0.3], [0.7, 0.3]], "stationary", 40))
    for width in (1, 3, 4):
        cal = ExactQuiltMechanism(epsilon=0.5, max_window=4).calibrate(
            iid, pp.WindowedCount(1, width))
        assert cal.scale == pytest.approx(2.0, rel=1e-8)


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_one_window_is_the_scalar_count() -> None:
    # width = T: one window, so the windowed count IS Count(1) (same laws, same quilts, same
    # classes up to the split by offset): the scale is the scalar quilt search's, 6.3493786 on
    # this chain (T = 30, max_window = 6; worst class: the middle nodes, quilt (6, 6)).
    fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.3, 0.7]], "stationary", 30))
    scalar = ExactQuiltMechanism(epsilon=1.0, max_window=6, max_chain_cells=0).calibrate(
        fw, Count(1))
    vector = ExactQuiltMechanism(epsilon=1.0, max_window=6).calibrate(
        fw, pp.WindowedCount(1, 30))
    assert vector.scale == pytest.approx(scalar.scale, rel=1e-8)
    assert vector.scale == pytest.approx(6.3493786, rel=1e-6)
    assert vector.scale < vector.evidence.mqm_scale / 2


def test_within_the_window_windowed_counts_get_the_global_exact_scale() -> None:
    # T - 1 <= max_window and the whole chain's joint window law is small: every node's only
    # candidate is its empty quilt, whose bound is the node's exact realised ε for the vector
    # release, so the scale is ExactLaplaceMechanism's (3.9113696 for width 3, T = 10). Width 1
    # releases every slot's indicator: the same argument, a 2^9-point grid.
    fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.3, 0.7]], "stationary", 10))
    for width, golden in ((3, 3.9113696), (1, None)):
        query = pp.WindowedCount(1, width)
        cal = ExactQuiltMechanism(epsilon=1.0).calibrate(fw, query)
        exact = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(fw, query).scale
        assert cal.scale == pytest.approx(exact, rel=1e-7)
        assert golden is None or cal.scale == pytest.approx(golden, rel=1e-6)
        assert cal.evidence.worst_quilt == () and cal.evidence.mqm_bound_nodes == 0


def test_block_law_matches_enumeration() -> None:
    from itertools import product

    from pufferfish_pgm.quilts._quilt_laws import ChainBridges
    from pufferfish_pgm.quilts._quilt_vector_laws import block_law

    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(3), size=3)
    weights = np.array([0, 1, 0])
    br = ChainBridges(p, np.ones(3) / 3, weights)
    lo, node, hi, width = 2, 4, 7, 3           # slots 2..7 meet windows [0,3), [3,6), [6,9)
    law, radix = block_law(br, (lo, node, hi, True, True), width)
    assert radix == (2, 4, 3)
    want = np.zeros((3, 3, 3) + radix)
    for path in product(range(3), repeat=hi - lo + 3):   # X_{lo-1} .. X_{hi+1}
        prob = np.prod([p[a, b] for a, b in zip(path, path[1:], strict=False)])
        counts = [0, 0, 0]
        for t, x in zip(range(lo, hi + 1), path[1:-1], strict=True):
            counts[t // width - lo // width] += weights[x]
        want[(path[0], path[node - lo + 1], path[-1], *counts)] += prob
    assert np.allclose(np.exp(law).reshape(want.shape), want, rtol=1e-12, atol=0)


def test_nearby_blocks_of_every_key_kind() -> None:
    from pufferfish_pgm.quilts._quilt_laws import ChainBridges
    from pufferfish_pgm.quilts._quilt_vector_laws import ChainVectorLaws

    br = ChainBridges(np.full((2, 2), 0.5), np.array([0.5, 0.5]), np.array([0, 1]))
    laws = ChainVectorLaws([br], np.array([[0, 1]]), width=3, offset=1, length=10)
    # (lo, i, hi, closed left, closed right); a two-sided key's node is some i = 1 mod 3
    assert laws.block(("two", 2, 3)) == (3, 4, 6, True, True)
    assert laws.block(("right", 4, 2)) == (0, 4, 5, False, True)       # ("right", i, b)
    assert laws.block(("left", 2, 3)) == (5, 7, 9, True, False)        # ("left", d, a)
    assert laws.block(("empty", 4, 5)) == (0, 4, 9, False, False)      # ("empty", i, d)


def test_long_chains_share_the_middle_nodes_per_offset() -> None:
    # A node's window laws depend on it through i mod width: the shared middle class of a
    # stationary chain splits into `width` classes, and a long chain gets the scale of a
    # shorter one (only the ends differ).
    query = pp.WindowedCount(1, 3)
    short = ExactQuiltMechanism(epsilon=1.0, max_window=8).calibrate(
        Framework(MarkovChainScenario(STICKY, "stationary", 60)), query)
    long = ExactQuiltMechanism(epsilon=1.0, max_window=8).calibrate(
        Framework(MarkovChainScenario(STICKY, "stationary", 3000)), query)
    assert long.scale == pytest.approx(short.scale, rel=1e-8)
    assert long.evidence.classes <= 2 * 9 + 3
    assert long.scale < long.evidence.mqm_scale


def test_windowed_refusals_name_the_alternatives() -> None:
    mech = ExactQuiltMechanism(epsilon=1.0)
    fw = Framework(MarkovChainScenario(STICKY, "stationary", 10))
    with pytest.raises(InvalidParameterError, match="exceeds the chain's length"):
        mech.calibrate(fw, pp.WindowedCount(1, 11))
    asia = Framework(BayesianNetworkScenario.from_file(default_model_path("asia.bif")))
    with pytest.raises(InvalidParameterError, match="Markov chains"):
        mech.calibrate(asia, pp.WindowedCount("yes", 2))
    with pytest.raises(InvalidParameterError, match="Markov chains.*Count\\(state"):
        mech.calibrate(asia, pp.WindowedHistogram(2))
    with pytest.raises(InvalidParameterError, match="exceeds the chain's length"):
        mech.calibrate(fw, pp.WindowedHistogram(11))
    with pytest.raises(PufferfishError):
        ExactQuiltMechanism(epsilon=1.0, max_window_cells=0)


def test_windowed_certificate_round_trip_and_verify() -> None:
    fw = Framework(MarkovChainScenario(STICKY, "stationary", 12))
    mech = ExactQuiltMechanism(epsilon=1.0, max_window=3)
    cal = mech.calibrate(fw, pp.WindowedCount(1, 4))
    text = cal.to_json(mechanism=mech)
    report = pp.verify(text, fw)
    assert report.holds and report.audited_epsilon <= 1.0 + SLACK
    assert pp.Calibration.from_json(text, fw).scale == cal.scale


# ----------------------------------------------------------------------------- windowed histograms

def test_two_state_histograms_are_counts_with_half_the_noise() -> None:
    # k = 2: a window's histogram is (c, n - c), released as (c + Z_0, n - c + Z_1). With
    # u = y_0 and v = n - y_1 the kernel in c is exp(-(|u - c| + |v - c|)/λ) =
    # e^{-|v-u|/λ} exp(-2 d(c, [u, v])/λ), and exp(-2 d(c, [u, v])/λ) is the positive mixture
    # (1/λ)∫_u^v e^{-2|c-w|/λ} dw + (e^{-2|c-u|/λ} + e^{-2|c-v|/λ})/2 of Laplace(λ/2)
    # kernels: a ratio of two such mixtures is at most the largest ratio of components, and
    # u = v gives them. So every loss of the histogram at λ is the count's loss at λ/2, window
    # by window, MQM's scale doubles (L = 2 against 1, same plan), and the calibrated scale is
    # exactly twice WindowedCount's: 2 · 3.9113696 within the window (T = 10, the global exact
    # scale, which ExactLaplaceMechanism finds on the full two-axis grid), and
    # 2 · 6.3493786 = 12.6987572 for the quilt search of T = 30, width 30, max_window 6.
    short = Framework(MarkovChainScenario([[0.9, 0.1], [0.3, 0.7]], "stationary", 10))
    cal = ExactQuiltMechanism(epsilon=1.0).calibrate(short, pp.WindowedHistogram(3))
    count = ExactQuiltMechanism(epsilon=1.0).calibrate(short, pp.WindowedCount(1, 3))
    exact = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(short, pp.WindowedHistogram(3))
    assert cal.scale == pytest.approx(2 * count.scale, rel=1e-8)
    assert cal.scale == pytest.approx(exact.scale, rel=1e-7)
    assert cal.scale == pytest.approx(7.8227391, rel=1e-6)
    long = Framework(MarkovChainScenario([[0.9, 0.1], [0.3, 0.7]], "stationary", 30))
    for width, golden in ((30, 12.6987572), (4, None)):
        mech = ExactQuiltMechanism(epsilon=1.0, max_window=6)
        hist = mech.calibrate(long, pp.WindowedHistogram(width))
        count = mech.calibrate(long, pp.WindowedCount(0, width))
        assert hist.scale == pytest.approx(2 * count.scale, rel=1e-8)
        assert hist.evidence.mqm_scale == pytest.approx(2 * count.evidence.mqm_scale)
        assert golden is None or hist.scale == pytest.approx(golden, rel=1e-6)


def test_independent_slots_need_two_over_epsilon() -> None:
    # Equal rows of P (k = 3): for the quilt {X_{i-1}, X_{i+1}} the prior term is 0 and the
    # nearby block is X_i alone, whose window histogram is the one-hot e_s: the exact loss of
    # Laplace(λ) on every coordinate between e_s and e_s' is 2/λ (two coordinates move by 1),
    # so λ = 2/ε = 4 at ε = 0.5 whatever the width. Nothing smaller passes: with y_s large and
    # y_s' small the global release's ratio tends to e^{2/λ} (other slots are independent).
    iid = MarkovChainScenario([[0.5, 0.3, 0.2]] * 3, "stationary", 12)
    for width in (1, 3, 4):
        cal = ExactQuiltMechanism(epsilon=0.5, max_window=4).calibrate(
            Framework(iid), pp.WindowedHistogram(width))
        assert cal.scale == pytest.approx(4.0, rel=1e-8)


def test_three_state_histograms_within_the_window_get_the_global_exact_scale() -> None:
    # T = 5, width 2, k = 3: the whole chain's grid has (3^3)^2 · 2^3 = 5,832 points, so every
    # node's empty quilt fits and is its only candidate: its bound is the node's exact realised
    # ε of the whole release, with the dependent last count of every window on its own axis.
    # The scale is then ExactLaplaceMechanism's; leaving out the dependent axes would leak
    # less on paper and return a smaller, failing scale.
    p = [[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.3, 0.3, 0.4]]
    fw = Framework(MarkovChainScenario(p, "stationary", 5))
    cal = ExactQuiltMechanism(epsilon=1.0).calibrate(fw, pp.WindowedHistogram(2))
    exact = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(fw, pp.WindowedHistogram(2)).scale
    assert cal.scale == pytest.approx(exact, rel=1e-7)
    assert cal.evidence.worst_quilt == () and cal.evidence.mqm_bound_nodes == 0
    assert cal.scale < cal.evidence.mqm_scale / 1.5


def test_windowed_histograms_against_brute_force_enumeration() -> None:
    # The oracle enumerates all 3^5 sequences, forms the exact law of the 9 released counts
    # given each secret and takes the largest density ratio on the product grid.
    from oracle import framework_epsilon

    p = [[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.3, 0.1, 0.6]]
    chain = MarkovChainScenario(p, [0.5, 0.25, 0.25], 5)
    fw = Framework(chain)
    for width, settings_ in ((2, {}), (2, {"max_window_cells": 64}), (3, {"max_window": 2})):
        cal = ExactQuiltMechanism(epsilon=1.0, **settings_).calibrate(
            fw, pp.WindowedHistogram(width))
        fns = [lambda v, s, lo=lo, hi=lo + width, x=x: int(lo <= v < hi and s == x)
               for lo in range(0, 5, width) for x in chain.states_of(0)]
        assert framework_epsilon(fw, fns, cal.scale) <= 1.0 + SLACK
        assert cal.scale <= cal.evidence.mqm_scale


def test_the_evidence_reports_the_window_the_classes_use() -> None:
    # Windowed classes use the longest block whose grid fits max_window_cells for some
    # alignment, not max_window: 3 states, width 2, 16,384 points: 5 slots in windows of
    # 2, 2, 1 slots have 27 · 27 · 8 = 5,832 points, and 6 slots at least 27^3 = 19,683.
    fw = Framework(MarkovChainScenario([[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.3, 0.3, 0.4]],
                                       "stationary", 40))
    cal = ExactQuiltMechanism(epsilon=1.0).calibrate(fw, pp.WindowedHistogram(2))
    assert cal.evidence.window == 5
    count = ExactQuiltMechanism(epsilon=1.0, max_window_cells=8).calibrate(
        Framework(MarkovChainScenario(STICKY, "stationary", 40)), pp.WindowedCount(1, 3))
    assert count.evidence.window == 4      # 3 + 1 slots: 4 · 2 = 8 points; 5 slots: >= 12


def test_histogram_block_law_matches_enumeration() -> None:
    from itertools import product

    from pufferfish_pgm.quilts._quilt_laws import ChainBridges
    from pufferfish_pgm.quilts._quilt_vector_laws import block_law
    from pufferfish_pgm.quilts._quilt_window_codes import HistogramCode

    rng = np.random.default_rng(5)
    p = rng.dirichlet(np.ones(3), size=3)
    br = ChainBridges(p, np.ones(3) / 3, np.zeros(3, dtype=np.int64))
    lo, node, hi, width = 1, 2, 4, 3           # slots 1..4 meet windows [0,3) and [3,6)
    code = HistogramCode(3).code([2, 2])
    law, radix = block_law(br, (lo, node, hi, True, True), width, HistogramCode(3))
    assert radix == (3, 3, 3, 3)
    rows = code.on_grid(law.reshape(27, -1)).reshape((3, 3, 3) + (3,) * 6)
    want = np.zeros((3, 3, 3) + (3,) * 6)
    for path in product(range(3), repeat=hi - lo + 3):   # X_{lo-1} .. X_{hi+1}
        prob = np.prod([p[a, b] for a, b in zip(path, path[1:], strict=False)])
        counts = np.zeros((2, 3), dtype=int)
        for t, x in zip(range(lo, hi + 1), path[1:-1], strict=True):
            counts[t // width - lo // width, x] += 1
        want[(path[0], path[node - lo + 1], path[-1], *counts.ravel())] += prob
    assert np.allclose(np.exp(rows), want, rtol=1e-12, atol=0)


def test_a_tiny_memory_budget_names_the_quilt_and_its_size() -> None:
    # T = 5, width 2, k = 3: the empty quilts' laws (the whole chain) are needed; a node's
    # laws hold 27 rows on 5,832 points, about 2.4 MiB with their densities.
    fw = Framework(MarkovChainScenario([[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.3, 0.3, 0.4]],
                                       "stationary", 5))
    mech = ExactQuiltMechanism(epsilon=1.0, memory_budget=4096)
    with pytest.raises(LimitExceededError,
                       match=r"quilt \(.*\) of node \d+ \(nearby slots \d+\.\.\d+, windows "
                             r"\[\d+, \d+\).*laws on a grid of [\d,]+ points.*needs [\d.]+ "
                             r"KiB, more than the memory budget of 4\.00 KiB"):
        mech.calibrate(fw, pp.WindowedHistogram(2))
    with pytest.raises(InvalidParameterError, match="memory_budget"):
        ExactQuiltMechanism(epsilon=1.0, memory_budget="lots")
    assert ExactQuiltMechanism(epsilon=1.0, memory_budget="1GB").calibrate(
        fw, pp.WindowedHistogram(2)).scale > 0


@pytest.mark.slow
def test_the_ordonez_activities_per_hour_calibrate() -> None:
    # Issue 12: hourly time per activity of home A, fitted at hourly slots (k = 7, T = 24,
    # one window per slot) and at 10-minute slots (k = 10, T = 144, windows of 6 slots).
    import time
    import warnings

    from pufferfish_pgm.scenarios._events import read_ordonez, sequences_from_events

    path = DATA_REAL / "OrdonezA_ADLs.txt"
    if not path.is_file():
        pytest.skip(f"the Ordóñez ADL files are not in {path.parent}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        log = read_ordonez(path, repair=True)
    for slot, width in (("60min", 1), ("10min", 6)):
        chain = pp.MarkovChainScenario.fit(sequences_from_events(log, slot=slot, fill="Idle"),
                                           pseudocount=0.5)
        start = time.perf_counter()
        cal = ExactQuiltMechanism(epsilon=1.0).calibrate(Framework(chain),
                                                         pp.WindowedHistogram(width))
        assert time.perf_counter() - start < 120
        assert 0 < cal.scale <= cal.evidence.mqm_scale
        assert cal.scale <= 2 * chain.length              # never above group DP (L·T/ε)
