"""The memory MQM's network plan holds is counted against the memory budget before it is built.

A plan keeps one entry per secret node with its nearby set, quilt and remote set; the
planner's :class:`PlanLedger` bounds their bytes from the sets' sizes before each entry is
built, so a plan too large for the budget is refused (LimitExceededError naming the plan and
the node), never discovered by the OOM killer. The bound is checked against ``sys.getsizeof``
of the built plans.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pufferfish_pgm as pp
from pufferfish_pgm.quilts import plan_network
from pufferfish_pgm.quilts._plan import ENTRY_BYTES, dict_bytes, entry_bytes, set_bytes

pytestmark = pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")


def _ising(n: int) -> pp.Framework:
    graph = nx.watts_strogatz_graph(n, 4, 0.1, seed=1)
    return pp.Framework(pp.ScenarioClass([
        pp.scenarios.contagion(graph, base=0.05, spread=s, directed=False, name=f"s{s}")
        for s in (0.2, 0.4)]))


def _households(count: int) -> pp.Framework:
    rows: list = []
    for h in range(count):
        rows += [(h, "parent")] + [(h, "child")] * (1 + h % 3)
    return pp.Framework(pp.ScenarioClass([pp.households(rows, base=0.1, spread=s,
                                                        name=f"s{s}") for s in (0.3, 0.7)]))


def _giant(n: int) -> pp.Framework:
    """A Barabási–Albert noisy-OR network and one isolated person: two components."""
    graph = nx.barabasi_albert_graph(n, 2, seed=1)
    graph.add_node(n)
    return pp.Framework(pp.ScenarioClass([
        pp.scenarios.contagion(graph, base=0.05, spread=s, name=f"s{s}") for s in (0.2, 0.4)]))


def _measured(entries: Iterable[Any], shared: Iterable[Any]) -> int:
    """Bytes of the entries and every object they hold (attribute dicts included), each
    counted once; ``shared`` (the class's node tuple and set, built once per plan) left out."""
    seen = {id(x) for x in shared}
    total = 0

    def add(obj: Any) -> None:
        nonlocal total
        if id(obj) not in seen:
            seen.add(id(obj))
            total += sys.getsizeof(obj)

    for e in entries:
        for obj in (e, e.__dict__, e.quilt, e.nearby, e.remote, e.influence, e.sigma):
            add(obj)
        if hasattr(e.remote, "kept"):
            for obj in (e.remote.__dict__, e.remote.kept):
                add(obj)
    return total


def _class_sets(fw: pp.Framework, plan: Any) -> list:
    nodes = tuple(fw.scenarios.nodes)
    out = [e.nearby for e in plan.entries if e.nearby == nodes]
    out += [x for e in plan.entries if hasattr(e.remote, "nodes")
            for x in (e.remote.nodes, e.remote.universe)]
    return out


def test_a_plan_over_the_budget_is_refused_naming_it() -> None:
    # 200 people, every node searched: 200 entries of 1.7-3.6 KB (nearby sets of up to 8
    # people, quilts of up to 16) hold about 0.5 MB; before the ledger the plan was built
    # whatever the budget (the influence tables here need far less than 300 KB)
    mqm = pp.MarkovQuiltMechanism(epsilon=1.0, full_plan=True, memory_budget=300_000)
    with pytest.raises(pp.LimitExceededError, match="the plan of MQM") as err:
        mqm.calibrate(_ising(200), pp.Count("infected"))
    text = str(err.value)
    assert "node " in text and "max_region" in text and "memory_budget=" in text
    assert "more than the memory budget of 292.97 KiB" in text   # 300,000 bytes


def test_the_budget_from_the_environment_bounds_the_plan(
        monkeypatch: pytest.MonkeyPatch) -> None:
    fw = _households(50)     # 149 people: components planned once per shape, entries renamed
    monkeypatch.setenv("PUFFERFISH_PGM_MEMORY_BUDGET", "100KB")
    with pytest.raises(pp.LimitExceededError, match="the plan of MQM"):
        pp.MarkovQuiltMechanism(epsilon=1.0).calibrate(fw, pp.Count("yes"))
    monkeypatch.delenv("PUFFERFISH_PGM_MEMORY_BUDGET")
    assert pp.MarkovQuiltMechanism(epsilon=1.0).calibrate(fw, pp.Count("yes")).scale == 4


@pytest.mark.parametrize("make, n, query", [
    (_ising, 30, "infected"), (_ising, 150, "infected"), (_households, 20, "yes"),
    (_households, 90, "yes"), (_giant, 60, "infected")])
def test_the_ledger_bounds_what_the_plan_holds(make: Any, n: int, query: str) -> None:
    fw = make(n)
    plan = plan_network(fw, pp.Count(query), 1.0, max_region=25)
    held = _measured(plan.entries, _class_sets(fw, plan))
    assert held <= plan.held_bytes
    assert plan.held_bytes <= 8 * held + len(plan.entries) * ENTRY_BYTES   # not absurdly loose


def test_a_giant_component_shares_its_node_sets() -> None:
    # 150 people and one isolated: every entry of the giant component is trivial; its nearby
    # set is the component, one tuple for all (each entry held its own copy and frozenset
    # before: O(size^2), 3 GB at 2,001 people)
    fw = _giant(150)
    plan = plan_network(fw, pp.Count("infected"), 1.0, max_region=20)
    giant = [e for e in plan.entries if len(e.nearby) == 150]
    assert len(giant) == 150
    assert len({id(e.nearby) for e in giant}) == 1
    assert len({id(e.remote) for e in giant}) == 1
    assert plan.held_bytes < 2 * 150 * ENTRY_BYTES + 2 * entry_bytes(150, 0) + 4 * dict_bytes(150)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3000))   # (0, 0): an entry whose sets are shared
def test_the_size_bounds_are_upper_bounds(size: int) -> None:
    nodes = tuple(f"v{i}" for i in range(size))
    assert sys.getsizeof(frozenset(nodes)) <= set_bytes(size)
    assert sys.getsizeof(dict(zip(nodes, range(size), strict=True))) <= dict_bytes(size)
    assert sys.getsizeof({v: i for i, v in enumerate(nodes)}) <= dict_bytes(size)
    half = size // 2
    quilt, nearby = nodes[:half], nodes[half:]
    sets = sys.getsizeof(quilt) + sys.getsizeof(nearby) + sys.getsizeof(frozenset(nodes))
    assert sets <= entry_bytes(len(nearby), len(quilt)) - ENTRY_BYTES


def test_components_stop_a_node_once_sigma_max_is_decided() -> None:
    # the component planner plans hubs first and stops the others at the σ already needed,
    # as the connected planner does (before, every node of a giant component was searched
    # in full: 2,001 people 15.7 CPU s, 10,001 over 6 minutes); the scale is the same
    fw = _giant(150)
    fast = pp.MarkovQuiltMechanism(epsilon=1.0, max_region=20).calibrate(fw, pp.Count("infected"))
    full = pp.MarkovQuiltMechanism(epsilon=1.0, max_region=20, full_plan=True).calibrate(
        fw, pp.Count("infected"))
    assert fast.scale == full.scale
    enough = "sigma_max: another node already needs the trivial quilt's sigma; not searched"
    assert fast.evidence.trivial_reasons.get(enough, 0) >= 140
    assert enough not in full.evidence.trivial_reasons
