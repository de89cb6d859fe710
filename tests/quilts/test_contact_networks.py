"""Contact networks of 1,000 people (issue 24 item 2): refused before the expensive steps.

No wall-clock assertions: spies that fail when an expensive step is reached.
"""

from __future__ import annotations

import itertools
import random

import networkx as nx
import pytest

import pufferfish_pgm as pp
from pufferfish_pgm.inference import _elimination_order as eo
from pufferfish_pgm.queries import _network_count_law
from pufferfish_pgm.secrets import _possible


def _framework(n: int) -> pp.Framework:
    graph = nx.barabasi_albert_graph(n, 2, seed=1)
    return pp.Framework(pp.ScenarioClass([
        pp.scenarios.contagion(graph, base=0.05, spread=s, name=f"spread {s}")
        for s in (0.2, 0.4)]))


def _forbid(*_: object, **__: object) -> None:
    raise AssertionError("an expensive step ran")


def test_noisy_or_support_needs_no_inference(monkeypatch: pytest.MonkeyPatch) -> None:
    # every CPT entry of a noisy-OR node with base 0.05 is positive, so every state is
    # possible (P(x) >= min_u P(x | u) > 0) without one marginal per node
    monkeypatch.setattr(_possible, "conditional", _forbid)
    fw = _framework(60)
    support = _possible.state_support(fw.scenarios)
    assert bool(support.table.all())
    assert len(fw.pairs) == 60


def test_zero_rows_still_use_inference() -> None:
    from pufferfish_pgm.scenarios import BayesianNetworkScenario, default_model_path
    asia = BayesianNetworkScenario.from_file(default_model_path("asia.bif"))
    # 'either' is a deterministic OR: its rows hold zeros, so its marginal decides
    assert _possible.node_support(asia, "either").tolist() == [True, True]


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_exact_on_1000_people_refused_before_any_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_possible, "conditional", _forbid)          # no per-node marginals
    monkeypatch.setattr(_network_count_law, "_node_factor", _forbid)  # no count-law tables
    monkeypatch.setattr(_network_count_law, "_peak", _forbid)   # the schedule refused first
    fw = _framework(1000)
    with pytest.raises(pp.LimitExceededError, match="lower bound") as err:
        pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(fw, pp.Count("infected"))
    text = str(err.value)
    assert "requisite nodes" in text
    # the advice never names a budget above what this machine allows
    assert "no budget makes it fit" in text or "would fit" in text


def _old_fill(graph: dict, v: object) -> int:
    nb = list(graph[v])
    return sum(1 for i, a in enumerate(nb) for b in nb[i + 1:] if b not in graph[a])


def test_fill_counts_as_the_pairwise_definition() -> None:
    for seed in range(20):
        g = nx.gnp_random_graph(25, 0.2, seed=seed)
        adj = {v: set(g[v]) for v in g}
        assert all(eo._fill(adj, v) == _old_fill(adj, v) for v in adj)


def test_schedule_with_a_limit_stops_early_and_bounds_the_peak() -> None:
    rng = random.Random(3)
    scopes = [(v, *rng.sample(range(v), min(v, 3))) for v in range(40)]
    dims = dict.fromkeys(range(40), 2)
    rank = {v: v for v in range(40)}
    full = eo.schedule(scopes, keep=(), dims=dims, rank=rank)
    assert full.complete
    # a limit above the peak changes nothing
    assert eo.schedule(scopes, keep=(), dims=dims, rank=rank, limit=full.peak_cells) == full
    if full.peak_cells >= eo.OWN_ORDER_CELLS:
        cut = eo.schedule(scopes, keep=(), dims=dims, rank=rank, limit=2**8)
        assert not cut.complete and cut.peak_cells > 2**8


def test_star_schedule_refuses_at_the_hub() -> None:
    star = [("h",), *((f"l{i}", "h") for i in range(30))]
    dims = {v: 2 for scope in star for v in scope}
    leaves = [f"l{i}" for i in range(30)]
    cut = eo.schedule(star, keep=leaves, dims=dims, rank={"h": 0}, limit=2**20)
    assert (cut.complete, cut.order, cut.culprit, cut.peak_cells) == (False, (), "h", 2**30)


def test_min_fill_orders_unchanged() -> None:
    """The intersection count gives min_fill the same order as the pairwise one."""
    for seed in itertools.islice(itertools.count(), 10):
        g = nx.gnp_random_graph(30, 0.15, seed=seed)
        adj = {v: set(g[v]) for v in g}
        ours = eo.min_fill({v: set(n) for v, n in adj.items()})
        old = eo._greedy({v: set(n) for v, n in adj.items()}, set(adj),
                         lambda gr, v: (_old_fill(gr, v), len(gr[v]), str(v)))
        assert ours == old


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_evidence_says_why_quilts_are_trivial() -> None:
    fw = _framework(20)
    cal = pp.MarkovQuiltMechanism(epsilon=1.0).calibrate(fw, pp.Count("infected"))
    ev = cal.evidence
    assert sum(ev.trivial_reasons.values()) == ev.trivial_nodes
    tight = pp.MarkovQuiltMechanism(epsilon=1.0, max_quilt_states=1, full_plan=True).calibrate(
        fw, pp.Count("infected")).evidence
    # no quilt of one or more binary nodes fits one cell: every node is trivial, for size
    # (full_plan: every node searched; by default the first trivial node ends the others')
    assert tight.trivial_reasons == {
        "max_quilt_states: a candidate's joint table is larger": 20}


@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_mqm_on_1000_people_needs_no_whole_network_inference(monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    """Before the local search each candidate's influence was an exact inference over most of
    the network (not finished in 150 s); now no whole-model inference runs and the evidence
    says why every node keeps the trivial quilt (a hub needs it: σ_max is n / ε)."""
    from pufferfish_pgm.quilts import _influence
    monkeypatch.setattr(_influence, "conditional", _forbid)
    fw = _framework(1000)
    cal = pp.MarkovQuiltMechanism(epsilon=1.0).calibrate(fw, pp.Count("infected"))
    ev = cal.evidence
    assert cal.scale == 1000 and sum(ev.trivial_reasons.values()) == ev.trivial_nodes == 1000
    assert any(k.startswith("sigma_max") for k in ev.trivial_reasons)
