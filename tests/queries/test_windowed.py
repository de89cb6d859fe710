"""Windowed queries (docs/windowed-queries.md): counts per window of slots, through the public API.

Golden values carry their derivation; the property tests check that MQM and group DP
calibrations of windowed queries pass the exact auditor (vector mode) on small random chains,
and the auditor against brute-force enumeration (``oracle.py``).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from oracle import framework_epsilon

import pufferfish_pgm as pp
from pufferfish_pgm.errors import UnknownStateError

WALK = pp.MarkovChainScenario([[0.9, 0.1], [0.3, 0.7]], "stationary", 6, states=["rest", "walk"])
DAY = ["rest", "walk", "walk", "rest", "walk", "walk"]


def _iid(length: int) -> pp.MarkovChainScenario:
    """Independent slots: every row of P is the same law (0.7, 0.3)."""
    return pp.MarkovChainScenario([[0.7, 0.3], [0.7, 0.3]], "stationary", length)


def _random_chain(seed: int, k: int, length: int, initial: str = "random",
                  zeros: bool = False) -> pp.MarkovChainScenario:
    """A random chain; with ``zeros``, some transitions are 0 but every state keeps its self-loop
    (so every secret stays possible: the start law is positive)."""
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(k), size=k)
    if zeros:
        p = np.where(rng.random((k, k)) < 0.3, 0.0, p) + 0.1 * np.eye(k)
        p = p / p.sum(axis=1, keepdims=True)
    start = rng.dirichlet(np.ones(k)) if initial == "random" else initial
    return pp.MarkovChainScenario(p, start, length, name=f"chain{seed}")


def _grid_cells(query: pp.WindowedCount | pp.WindowedHistogram, length: int, k: int) -> int:
    """Points of the audit's product grid: (window length + 1) values per coordinate."""
    sizes = [min(query.width, length - lo) for lo in range(0, length, query.width)]
    per_window = k if isinstance(query, pp.WindowedHistogram) else 1
    return math.prod((n + 1) ** per_window for n in sizes)


# ----------------------------------------------------------------------------- the queries

def test_exported_at_the_top_level_and_from_queries() -> None:
    from pufferfish_pgm.queries import WindowedCount, WindowedHistogram

    assert pp.WindowedCount is WindowedCount and pp.WindowedHistogram is WindowedHistogram
    assert {"WindowedCount", "WindowedHistogram"} <= set(pp.__all__)
    assert isinstance(pp.WindowedCount("walk", 2), pp.queries.Query)
    assert not isinstance(pp.WindowedCount("walk", 2), pp.queries.WeightedQuery)


def test_windows_names_and_sensitivity_golden() -> None:
    # T = 6, width 4: [0, 4) and the shorter last window [4, 6)
    count, hist = pp.WindowedCount("walk", 4), pp.WindowedHistogram(4)
    assert count.windows(WALK) == (range(0, 4), range(4, 6))
    assert count.coordinates(WALK) == ("count(walk)@[0,4)", "count(walk)@[4,6)")
    assert hist.coordinates(WALK) == ("count(rest)@[0,4)", "count(walk)@[0,4)",
                                      "count(rest)@[4,6)", "count(walk)@[4,6)")
    assert (count.lipschitz_for(WALK), hist.lipschitz_for(WALK)) == (1.0, 2.0)
    assert count.node_list(WALK) == tuple(range(6)) and count.nodes is None
    assert count.name == "windowed_count(walk, width=4)"
    assert hist.name == "windowed_histogram(width=4)"
    # width = T: one window; width 1: one window per slot
    assert pp.WindowedCount("walk", 6).windows(WALK) == (range(0, 6),)
    assert len(pp.WindowedHistogram(1).coordinates(WALK)) == 12


def test_queries_are_frozen_values() -> None:
    q = pp.WindowedCount("walk", 2)
    assert q == pp.WindowedCount("walk", 2) and hash(q) == hash(pp.WindowedCount("walk", 2))
    assert q != pp.WindowedCount("walk", 3) and pp.WindowedHistogram(2) != q
    with pytest.raises(dataclasses.FrozenInstanceError):
        q.width = 5  # type: ignore[misc]
    assert pp.WindowedCount("walk", np.int64(3)).width == 3


@pytest.mark.parametrize("width", [0, -1, -60])
def test_width_below_one_is_refused(width: int) -> None:
    for make in (lambda: pp.WindowedCount("walk", width), lambda: pp.WindowedHistogram(width)):
        with pytest.raises(pp.InvalidParameterError, match=r"width must be >= 1 slot"):
            make()


@pytest.mark.parametrize("width", [2.0, "3", True, None])
def test_width_of_the_wrong_type_is_refused(width: object) -> None:
    with pytest.raises(pp.ParameterTypeError, match=r"width must be a whole number of slots"):
        pp.WindowedCount("walk", width)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        pp.WindowedHistogram(width)  # type: ignore[arg-type]


def test_width_longer_than_the_chain_is_refused_everywhere() -> None:
    fw = pp.Framework(WALK)
    for q in (pp.WindowedCount("walk", 7), pp.WindowedHistogram(7)):
        message = r"window width 7 exceeds the chain's length 6; use a width between 1 and 6"
        with pytest.raises(pp.InvalidParameterError, match=message):
            pp.MarkovQuiltMechanism(epsilon=1.0).calibrate(fw, q)
        with pytest.raises(pp.InvalidParameterError, match=message):
            pp.GroupDPMechanism(epsilon=1.0).calibrate(fw, q)
        with pytest.raises(pp.InvalidParameterError, match=message):
            pp.audit(fw, q, 1.0)


def test_unknown_state_is_refused_naming_it() -> None:
    fw = pp.Framework(WALK)
    for mech in (pp.MarkovQuiltMechanism(epsilon=1.0), pp.GroupDPMechanism(epsilon=1.0)):
        with pytest.raises(UnknownStateError, match="run"):
            mech.calibrate(fw, pp.WindowedCount("run", 2))
    with pytest.raises(UnknownStateError, match="run"):
        pp.audit(fw, pp.WindowedCount("run", 2), 1.0)


def test_networks_are_refused_with_a_clear_error(asia) -> None:
    fw = pp.Framework(asia)
    message = r"needs Markov chains .* topological, not time"
    for q in (pp.WindowedCount("yes", 2), pp.WindowedHistogram(2)):
        with pytest.raises(pp.InvalidParameterError, match=message):
            pp.MarkovQuiltMechanism(epsilon=1.0).calibrate(fw, q)
        with pytest.raises(pp.InvalidParameterError, match=message):
            pp.GroupDPMechanism(epsilon=1.0).calibrate(fw, q)
        with pytest.raises(pp.InvalidParameterError, match=message):
            pp.audit(fw, q, 1.0)


# ------------------------------------------------------------------------- calibration

def test_group_dp_golden() -> None:
    # group DP: Laplace(L·T/ε) on every coordinate; T = 6, ε = 2: L = 1 -> 3, L = 2 -> 6
    fw = pp.Framework(WALK)
    group = pp.GroupDPMechanism(epsilon=2.0)
    assert group.calibrate(fw, pp.WindowedCount("walk", 4)).scale == 3.0
    cal = group.calibrate(fw, pp.WindowedHistogram(4))
    assert cal.scale == 6.0 and cal.evidence.group_size == 6


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_mqm_plans_as_for_the_count_and_the_histogram() -> None:
    # The MQM plan depends on the nodes the query sums over (all) and L only, so a windowed
    # count gets the scale of Count (31.738 on this chain, the markov_quilt module's doctest)
    # and a windowed histogram the scale of Histogram (2 × 31.738).
    fw = pp.Framework(pp.MarkovChainScenario([[0.9, 0.1], [0.1, 0.9]], "stationary", 100))
    mqm = pp.MarkovQuiltMechanism(epsilon=1.0)
    count = mqm.calibrate(fw, pp.WindowedCount(1, 10))
    assert round(count.scale, 3) == 31.738 == round(mqm.calibrate(fw, pp.Count(1)).scale, 3)
    hist = mqm.calibrate(fw, pp.WindowedHistogram(10))
    assert hist.scale == pytest.approx(2 * count.scale, rel=1e-12)
    assert hist.scale == mqm.calibrate(fw, pp.Histogram()).scale


def test_audit_golden_on_independent_slots() -> None:
    # Independent slots: only the secret's own window moves, and there F_j = B + [X_t = 1]
    # with B independent of X_t. Beyond the support the density ratio of the two secrets is
    # E_a[e^{F_j/λ}] / E_b[e^{F_j/λ}] = e^{1/λ}, and no output does worse: ε = 1/λ = 0.5 at
    # λ = 2. A histogram moves one unit between two bars: ε = 2/λ = 1.0.
    fw = pp.Framework(_iid(4))
    assert pp.audit(fw, pp.WindowedCount(1, 2), 2.0).epsilon == pytest.approx(0.5, rel=1e-12)
    assert pp.audit(fw, pp.WindowedHistogram(3), 2.0).epsilon == pytest.approx(1.0, rel=1e-12)
    rep = pp.audit(fw, pp.WindowedCount(1, 3), 2.0)
    assert rep.coordinates == ("count(1)@[0,3)", "count(1)@[3,4)")
    assert len(rep.worst.output) == 2 and rep.scales == (2.0, 2.0)


def test_exact_laplace_calibrates_the_joint_vector() -> None:
    fw = pp.Framework(WALK)
    for q in (pp.WindowedCount("walk", 2), pp.WindowedHistogram(4)):
        cal = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(fw, q)
        group = pp.GroupDPMechanism(epsilon=1.0).calibrate(fw, q).scale
        assert pp.audit(fw, q, cal.scale).epsilon <= 1.0 * (1 + 1e-9)
        assert 0 < cal.scale <= group * (1 + 1e-9)
        assert cal.evidence.coordinates == q.coordinates(WALK)


@pytest.mark.parametrize("mech", [pp.WassersteinMechanism(epsilon=1.0),
                                  pp.KantorovichMechanism(epsilon=1.0),
                                  pp.KantorovichMechanism(epsilon=1.0, relaxed=True)],
                         ids=lambda m: m.name)
def test_transport_mechanisms_refuse_and_name_the_ones_that_can(mech) -> None:
    fw = pp.Framework(WALK)
    for q in (pp.WindowedCount("walk", 2), pp.WindowedHistogram(2)):
        with pytest.raises(pp.InvalidParameterError,
                           match=r"one count per window. Use MarkovQuiltMechanism or "
                                 r"GroupDPMechanism") as info:
            mech.calibrate(fw, q)
        assert isinstance(info.value, pp.PufferfishError)
        assert mech.name.removesuffix("Relaxed") in str(info.value)


def test_audit_of_a_large_vector_raises_limit_exceeded() -> None:
    long_chain = pp.Framework(_iid(40))
    with pytest.raises(pp.LimitExceededError, match="release fewer coordinates jointly"):
        pp.audit(long_chain, pp.WindowedCount(1, 1), 1.0)      # 2^40 joint values
    with pytest.raises(pp.LimitExceededError, match=r"max_grid=1,000"):
        pp.audit(pp.Framework(WALK), pp.WindowedHistogram(2), 1.0, max_grid=1_000)


def test_mqm_windowed_releases_compose_in_the_accountant() -> None:
    fw = pp.Framework(WALK)
    cal = pp.MarkovQuiltMechanism(epsilon=0.5).calibrate(fw, pp.WindowedHistogram(2))
    acc = pp.PrivacyAccountant().record(cal).record(cal)
    assert acc.epsilon <= 1.0 * (1 + 1e-9)
    assert pp.joint_audit(fw, [(cal.query, cal.scale)] * 2) <= acc.epsilon


@pytest.mark.parametrize("query", [pp.WindowedCount("walk", 4), pp.WindowedHistogram(2)],
                         ids=lambda q: q.name)
def test_certificates_round_trip_and_verify(query) -> None:
    fw = pp.Framework(WALK)
    mech = pp.MarkovQuiltMechanism(epsilon=1.0)
    cal = mech.calibrate(fw, query)
    text = cal.to_json(mechanism=mech)
    back = pp.Calibration.from_json(text, fw)
    assert back.query == query and back.scale == cal.scale
    assert pp.verify(text, fw).holds
    short = pp.Framework(pp.MarkovChainScenario(WALK.transition, "stationary", 3,
                                                states=WALK.states))
    with pytest.raises(pp.CertificateError):
        pp.Calibration.from_json(text, short)


# ----------------------------------------------------------------------------- release

def test_release_on_wide_data_golden() -> None:
    # DAY = rest walk | walk rest | walk walk: walks per 2 slots (1, 1, 2); per 4 slots the
    # histogram (rest, walk) is (2, 2) then (0, 2)
    fw = pp.Framework(WALK)
    wide = pd.DataFrame([DAY, ["walk"] * 6], columns=[f"t{i}" for i in range(6)])
    count = pp.GroupDPMechanism(epsilon=1.0).calibrate(fw, pp.WindowedCount("walk", 2))
    hist = pp.GroupDPMechanism(epsilon=1.0).calibrate(fw, pp.WindowedHistogram(4))
    np.testing.assert_array_equal(count.answer(wide), [[1, 1, 2], [2, 2, 2]])
    np.testing.assert_array_equal(hist.answer(wide), [[2, 2, 0, 2], [0, 4, 0, 2]])
    np.testing.assert_array_equal(count.answer(DAY), [[1, 1, 2]])
    rel = count.release(wide, rng=np.random.default_rng(1))
    assert rel.value.shape == (2, 3) and rel.value.dtype.kind == "i"
    assert rel.coordinates == ("count(walk)@[0,2)", "count(walk)@[2,4)", "count(walk)@[4,6)")
    assert rel.query == "windowed_count(walk, width=2)" and rel.scale == 6.0
    one = hist.release(DAY, rng=np.random.default_rng(1))
    assert one.value.shape == (4,) and one.coordinates == hist.query.coordinates(WALK)
    assert hist.release(wide, rng=np.random.default_rng(1), per_user=False).value.shape == (4,)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6), length=st.integers(1, 12), width=st.integers(1, 12),
       k=st.integers(2, 3), users=st.integers(1, 4))
@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_answers_are_the_parts_answers_side_by_side(seed, length, width, k, users) -> None:
    # the released vector is what the audit's law describes: the per-window Counts (Histograms)
    assume(width <= length)
    fw = pp.Framework(_random_chain(seed, k, length))
    data = np.random.default_rng(seed).integers(0, k, size=(users, length))
    group = pp.GroupDPMechanism(epsilon=1.0)
    for q in (pp.WindowedCount(k - 1, width), pp.WindowedHistogram(width)):
        parts = [group.calibrate(fw, part).answer(data).reshape(users, -1)
                 for part in q.parts(fw.scenarios)]
        got = group.calibrate(fw, q).answer(data)
        np.testing.assert_array_equal(got, np.concatenate(parts, axis=1))
        assert got.shape == (users, len(q.coordinates(fw.scenarios))) and got.dtype == np.int64


def test_release_noise_is_per_coordinate_with_the_calibrated_scale() -> None:
    fw = pp.Framework(WALK)
    cal = pp.GroupDPMechanism(epsilon=1.0).calibrate(fw, pp.WindowedCount("walk", 3))
    rel = cal.release([DAY] * 4000, rng=np.random.default_rng(7))
    noise = rel.value - np.array([2, 2])
    # discrete Laplace(6): mean 0, E|Z| = 2e^{-1/6}/(1 - e^{-2/6}) ≈ 5.95 per coordinate
    expected = 2 * math.exp(-1 / 6) / (1 - math.exp(-1 / 3))
    assert np.abs(noise).mean(axis=0) == pytest.approx([expected] * 2, rel=0.05)


def test_release_on_bad_data_names_the_row() -> None:
    fw = pp.Framework(WALK)
    cal = pp.GroupDPMechanism(epsilon=1.0).calibrate(fw, pp.WindowedCount("walk", 2))
    with pytest.raises(pp.InvalidDataError, match="record 1"):
        cal.release([DAY, DAY[:5]])


# ------------------------------------------------------------------ properties (auditor)

@st.composite
def _cases(draw: st.DrawFn) -> tuple:
    k = draw(st.integers(2, 3))
    length = draw(st.integers(1, 8))
    width = draw(st.integers(1, length))
    hist = draw(st.booleans())
    query = pp.WindowedHistogram(width) if hist else pp.WindowedCount(draw(st.integers(0, k - 1)),
                                                                      width)
    assume(_grid_cells(query, length, k) <= 20_000)
    seeds = draw(st.lists(st.integers(0, 10**6), min_size=1, max_size=2))
    zeros = draw(st.booleans())
    chains = [_random_chain(s, k, length, zeros=zeros) for s in seeds]
    epsilon = draw(st.sampled_from([0.1, 0.5, 1.0, 2.0, 5.0]))
    return pp.Framework(pp.ScenarioClass(chains)), query, epsilon


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(case=_cases())
def test_mqm_and_group_dp_pass_the_exact_auditor(case) -> None:
    fw, query, epsilon = case
    for mech in (pp.MarkovQuiltMechanism(epsilon=epsilon), pp.GroupDPMechanism(epsilon=epsilon)):
        cal = mech.calibrate(fw, query)
        report = pp.audit(fw, query, cal.scale)
        assert report.epsilon <= epsilon * (1 + 1e-9), (mech.name, report.summary())
        assert report.coordinates == query.coordinates(fw.scenarios)


@settings(max_examples=8, deadline=None)
@given(case=_cases())
def test_mqm_passes_the_exact_auditor_quick(case) -> None:
    fw, query, epsilon = case
    cal = pp.MarkovQuiltMechanism(epsilon=epsilon).calibrate(fw, query)
    assert pp.audit(fw, query, cal.scale).epsilon <= epsilon * (1 + 1e-9)


@pytest.mark.slow
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), length=st.integers(2, 6), k=st.integers(2, 3),
       initial=st.sampled_from(["random", "any"]))
def test_mqm_covers_any_start_on_windowed_queries(seed, length, k, initial) -> None:
    chain = _random_chain(seed, k, length, initial=initial)
    fw = pp.Framework(chain)
    query = pp.WindowedCount(0, max(1, length // 2))
    cal = pp.MarkovQuiltMechanism(epsilon=0.5).calibrate(fw, query)
    assert pp.audit(fw, query, cal.scale).epsilon <= 0.5 * (1 + 1e-9)


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10**6), length=st.integers(1, 5), width=st.integers(1, 5),
       hist=st.booleans(), scale=st.floats(0.3, 5.0))
def test_the_auditor_matches_brute_force_on_windowed_queries(seed, length, width, hist,
                                                             scale) -> None:
    assume(width <= length)
    chain = _random_chain(seed, 2 if hist else 3, length, zeros=True)
    fw = pp.Framework(chain)
    query = pp.WindowedHistogram(width) if hist else pp.WindowedCount(1, width)
    states = chain.states if hist else (1,)
    fns = [lambda v, s, w=w, j=j: int(v in w and s == j)
           for w in query.windows(chain) for j in states]
    want = framework_epsilon(fw, fns, [scale] * len(fns))
    assert pp.audit(fw, query, scale).epsilon == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_refusals_are_pufferfish_errors_for_every_distribution_mechanism() -> None:
    fw = pp.Framework(WALK)
    refused = []
    for mech in (pp.WassersteinMechanism(epsilon=1.0), pp.KantorovichMechanism(epsilon=1.0)):
        try:
            mech.calibrate(fw, pp.WindowedCount("walk", 3))
        except pp.PufferfishError as err:
            refused.append(("MarkovQuiltMechanism" in str(err), "GroupDPMechanism" in str(err)))
    assert refused == [(True, True), (True, True)]
