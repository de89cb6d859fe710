"""ExactQuiltMechanism on time-varying chains (docs/exact-quilt.md, "Time-varying chains").

Every scale is audited by brute force (tests/oracle.py enumerates the chain rule over the
transition stack), is at least the exact scale and at most MQM's; a homogeneous chain written
as a stack of identical matrices gives the homogeneous scale.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from oracle import realised_epsilon

import pufferfish_pgm as pp
from pufferfish_pgm.errors import InvalidModelError
from pufferfish_pgm.queries import Count, LinearQuery, WindowedCount
from pufferfish_pgm.scenarios import MarkovChainScenario, ScenarioClass
from pufferfish_pgm.secrets import Framework

SLACK = 1e-9
#: the whole-chain laws (default) and the quilt search alone with small quilts
SETTINGS = ({}, {"max_chain_cells": 0, "max_window": 1}, {"max_chain_cells": 0, "max_window": 2})


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # usefulness warnings of tiny examples
        yield


def _stack(rng: np.random.Generator, k: int, length: int, zeros: bool) -> np.ndarray:
    p = rng.dirichlet(np.ones(k) * 0.7, size=(max(length - 1, 1), k))
    if zeros:
        p[rng.random(p.shape) < 0.25] = 0.0
        p[..., 0] += 0.2          # every row keeps some mass
        p /= p.sum(axis=2, keepdims=True)
    return p[:length - 1] if length > 1 else p[:0]


@st.composite
def varying_frameworks(draw: st.DrawFn) -> Framework:
    """1-2 time-varying chains (k 2-3, T 2-6, zeros in the steps; starts random, a point
    mass or "any")."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    k, length = draw(st.integers(2, 3)), draw(st.integers(2, 6))
    zeros = draw(st.booleans())
    members = []
    for j in range(draw(st.integers(1, 2))):
        kind = draw(st.sampled_from(["random", "point", "any"]))
        start = ("any" if kind == "any" else np.eye(k)[int(rng.integers(k))]
                 if kind == "point" else rng.dirichlet(np.ones(k)))
        members.append(MarkovChainScenario(_stack(rng, k, length, zeros), start, length,
                                           name=f"tv{j}"))
    return Framework(ScenarioClass(members))


@settings(max_examples=30, deadline=None)
@given(fw=varying_frameworks(), epsilon=st.sampled_from([0.3, 1.0, 3.0]),
       which=st.sampled_from(range(len(SETTINGS))), state=st.integers(0, 2))
def test_brute_force_passes_and_scale_between_exact_and_mqm(fw, epsilon, which,
                                                             state) -> None:
    query = Count(state % fw.scenarios.members[0].k)
    cal = pp.ExactQuiltMechanism(epsilon=epsilon, **SETTINGS[which]).calibrate(fw, query)
    mqm = pp.MarkovQuiltMechanism(epsilon=epsilon,
                                  max_window=SETTINGS[which].get("max_window", 256))
    assert cal.scale <= mqm.calibrate(fw, query).scale * (1 + 1e-12)
    if cal.scale > 0:
        assert realised_epsilon(fw, query, cal.scale) <= epsilon * (1 + SLACK)
    if not any(m.initial_is_any for m in fw.scenarios):   # exact Laplace needs fixed starts
        exact = pp.ExactLaplaceMechanism(epsilon=epsilon).calibrate(fw, query).scale
        assert cal.scale >= exact * (1 - 1e-6)


def _sticky_pair(length: int, seed: int) -> tuple[list, list]:
    """Two homogeneous chains and the same chains written as stacks of identical steps."""
    rng = np.random.default_rng(seed)
    homo, stacked = [], []
    for j in range(2):
        p = 0.6 * np.eye(3) + 0.4 * rng.dirichlet(np.ones(3), size=3)
        q0 = rng.dirichlet(np.ones(3))
        homo.append(MarkovChainScenario(p, q0, length, name=f"c{j}"))
        stacked.append(MarkovChainScenario(np.stack([p] * (length - 1)), q0, length,
                                           name=f"c{j}"))
    return homo, stacked


@pytest.mark.parametrize("options", [
    {},                                                        # whole-chain laws
    {"max_chain_cells": 0, "max_window": 12},                  # quilts, mixing window
    {"max_chain_cells": 0, "max_window": 12, "window_tolerance": 0},   # every distance
])
def test_identical_steps_give_the_homogeneous_scale(options) -> None:
    homo, stacked = _sticky_pair(120, 3)
    query = LinearQuery({0: 0, 1: 2, 2: 1})
    a = pp.ExactQuiltMechanism(epsilon=1.0, **options).calibrate(
        Framework(ScenarioClass(homo)), query)
    b = pp.ExactQuiltMechanism(epsilon=1.0, **options).calibrate(
        Framework(ScenarioClass(stacked)), query)
    assert b.scale == pytest.approx(a.scale, rel=1e-9)
    assert b.evidence.mqm_bound_nodes == a.evidence.mqm_bound_nodes
    if options:   # the search used quilts, not only empty ones
        assert b.evidence.worst_quilt != ()


def test_quilts_beat_mqm_on_a_day_of_hours() -> None:
    # 4 "hours" of 15 slots, each its own matrix: the quilt search (no whole-chain laws) is
    # far below MQM and above the exact scale, and the chain's exact audit passes
    rng = np.random.default_rng(11)
    blocks = 0.5 * np.eye(3) + 0.5 * rng.dirichlet(np.ones(3), size=(4, 3))
    mc = MarkovChainScenario(blocks[np.arange(59) // 15], rng.dirichlet(np.ones(3)), 60)
    fw = Framework(mc)
    cal = pp.ExactQuiltMechanism(epsilon=1.0, max_chain_cells=0, max_window=16).calibrate(
        fw, Count(0))
    exact = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(fw, Count(0)).scale
    assert exact <= cal.scale < 0.8 * cal.evidence.mqm_scale
    assert pp.audit(fw, Count(0), cal.scale).epsilon <= 1.0 * (1 + SLACK)
    assert cal.evidence.classes == 60      # every node its own class


def test_chain_and_its_network_agree() -> None:
    # a short chain: both take every node's exact loss (the chain from its whole-chain laws,
    # the network from its empty quilts), so both are the exact scale
    rng = np.random.default_rng(5)
    mc = MarkovChainScenario(_stack(rng, 3, 5, zeros=True), rng.dirichlet(np.ones(3)), 5)
    chain = pp.ExactQuiltMechanism(epsilon=1.0).calibrate(Framework(mc), Count(1)).scale
    net = pp.ExactQuiltMechanism(epsilon=1.0).calibrate(Framework(mc.to_network()),
                                                         Count(1)).scale
    assert chain == pytest.approx(net, rel=1e-6)
    assert realised_epsilon(Framework(mc), Count(1), chain) == pytest.approx(1.0, rel=1e-6)


def test_evidence_says_why_nodes_got_mqm() -> None:
    # a deterministic cycle in the middle steps: every quilt value within distance 1 is
    # possible under one secret only, so those nodes keep MQM's bound, and the evidence says so
    cycle = np.array([[0.0, 1.0], [1.0, 0.0]])
    mix = np.array([[0.6, 0.4], [0.3, 0.7]])
    mc = MarkovChainScenario(np.stack([mix] * 3 + [cycle] * 6 + [mix] * 3), [0.5, 0.5], 13)
    cal = pp.ExactQuiltMechanism(epsilon=1.0, max_chain_cells=0, max_window=1).calibrate(
        Framework(mc), Count(1))
    ev = cal.evidence
    assert ev.mqm_bound_nodes > 0
    assert sum(ev.mqm_bound_reasons.values()) == ev.mqm_bound_nodes
    assert any("one secret only" in why for why in ev.mqm_bound_reasons)
    assert all("max_chain_cells 0" in why for why in ev.mqm_bound_reasons)


def test_windowed_queries_are_refused_with_the_alternative() -> None:
    steps = np.array([[[0.9, 0.1], [0.2, 0.8]]] * 5)
    fw = Framework(MarkovChainScenario(steps, [0.5, 0.5], 6))
    with pytest.raises(InvalidModelError, match="Count or an integer LinearQuery"):
        pp.ExactQuiltMechanism(epsilon=1.0).calibrate(fw, WindowedCount(1, 2))


def test_the_search_forgets_old_quilts_past_half_the_budget(monkeypatch) -> None:
    # Every node of a time-varying chain is its own class with its own laws: before, the rows
    # of every quilt evaluated stayed until the end (3.5 GiB at T = 1,440, k = 10, and the
    # OOM killer at T = 10,080 under a 5.9 GB budget). Under a 2 MB budget the search now
    # holds at most about a quarter to a half of it, and finds the same scale as with 4 GB.
    from pufferfish_pgm.quilts._quilt_laws import ChainQuiltLaws

    rng = np.random.default_rng(5)
    k, length = 4, 120
    steps = 0.9 * np.eye(k) + 0.1 * rng.dirichlet(np.ones(k), size=(length - 1, k))
    fw = Framework(MarkovChainScenario(steps, np.full(k, 1 / k), length))
    held: list[int] = []
    laws: list = []
    rows = ChainQuiltLaws.rows

    def counted(self, key):
        laws.append(self) if not any(x is self for x in laws) else None
        out = rows(self, key)
        held.append(sum(len(x._rows) for x in laws))
        return out

    monkeypatch.setattr(ChainQuiltLaws, "rows", counted)
    options = {"max_chain_cells": 0, "max_window": 12}
    small = pp.ExactQuiltMechanism(epsilon=1.0, memory_budget="2 MB", **options)
    scale = small.calibrate(fw, Count(1)).scale
    most_small = max(held)
    held.clear()
    laws.clear()
    large = pp.ExactQuiltMechanism(epsilon=1.0, memory_budget="4 GB", **options)
    assert large.calibrate(fw, Count(1)).scale == pytest.approx(scale, rel=1e-9)
    assert max(held) >= length - 2              # every node's quilts stay under 4 GB
    assert most_small < max(held) / 4           # ... and are forgotten under 2 MB


@settings(max_examples=25, deadline=None)
@given(fw=varying_frameworks(), epsilon=st.sampled_from([0.3, 1.0, 3.0]),
       state=st.integers(0, 2))
def test_whole_chain_laws_over_the_budget_take_the_exact_calibration(fw, epsilon,
                                                                     state) -> None:
    # Whole-chain laws refused for the budget (over max_chain_cells, and each cell made to
    # cost 1 TB): a time-varying
    # chain then takes the exact calibration's scale (streamed), never the per-node search,
    # and the brute-force audit passes; 'any' starts keep the search (exact needs a start).
    import pufferfish_pgm.mechanisms.exact_quilt as eq

    query = Count(state % fw.scenarios.members[0].k)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(eq, "WHOLE_CHAIN_BYTES", 10**12)
        cal = pp.ExactQuiltMechanism(epsilon=epsilon, max_chain_cells=1).calibrate(fw, query)
    if any(m.initial_is_any for m in fw.scenarios):
        assert cal.evidence.whole_chain == ""
        return
    exact = pp.ExactLaplaceMechanism(epsilon=epsilon).calibrate(fw, query).scale
    assert cal.evidence.whole_chain == "exact"
    assert cal.scale == pytest.approx(min(exact, cal.evidence.mqm_scale), rel=1e-9, abs=1e-12)
    if cal.scale > 0:
        assert realised_epsilon(fw, query, cal.scale) <= epsilon * (1 + SLACK)
    assert cal.evidence.classes == len(fw.secret_nodes)
