"""Exact quilt mechanism: speed on a long chain, and its scale against global exact and MQM.

0. The bundled activity chain (``models/activity_chain.json``: T = 288, 2 scenarios, secrets
   on every node), count of 'walk', ε = 1: seconds and scale of ExactQuilt (whole-chain laws),
   ExactQuilt with the quilt search only (``max_chain_cells=0``) and global exact.
1. T = 10^6, k = 4, |Θ| = 8 random stationary chains (rows Dirichlet(1)), every pair on
   every node, Count of state 1, ε = 1: seconds to calibrate (target <= 60 s).
2. 20 random sticky activity-like chains (k = 4, diagonal uniform in [0.8, 0.98], the rest of
   each row Dirichlet(1)), stationary start, one chain per framework, Count of state 1, ε = 1:
   scale ratio to the global exact Laplace scale (target <= 1.25) and to MQM, at T = 1,440
   (``--length`` to change), for the default (whole-chain laws when within
   ``max_chain_cells``) and the quilt search only, with the realised ε of both (exact audit)
   and the seconds of each mechanism.

3. ``--table``: the chains users fit (issue 21): the Ordóñez chains of both homes at 10- and
   1-minute slots (``read_ordonez(repair=True)``, ``sequences_from_events(fill="Idle")``,
   ``MarkovChainScenario.fit``, stationary start, one day; count of the most frequent non-idle
   activity) and the sticky class (4 chains, rows 0.9·I + 0.1·Dirichlet(1), k = 10, Count(0))
   at T = 1,440 and 10^6, ε = 1: CPU seconds (``time.process_time``) and peak RSS of
   ExactQuilt, MQM and global exact (not at 10^6), each in its own process. Time-varying
   rows (issue 22): the Ordóñez homes at 10-minute slots fitted hourly
   (``fit(period=6, shrinkage=10)``) and the sticky class with 24 different hourly
   matrices per chain at T = 144 and 1,440 (``hourly ...`` rows).

Run: ``python benchmarks/bench_exact_quilt.py [--skip-long] [--long-length T] [--length T]
[--chains N]``, or ``OMP_NUM_THREADS=1 python benchmarks/bench_exact_quilt.py --table
[--data FOLDER]``.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from _common import ordonez_day

import pufferfish_pgm as pp


def _long_chain(length: int) -> None:
    rng = np.random.default_rng(2026)
    chains = [pp.MarkovChainScenario(rng.dirichlet(np.ones(4), size=4), "stationary", length,
                                     name=f"random {j}") for j in range(8)]
    fw = pp.Framework(pp.ScenarioClass(chains))
    start = time.perf_counter()
    mqm = pp.MarkovQuiltMechanism(epsilon=1.0).calibrate(fw, pp.Count(1))
    mqm_s = time.perf_counter() - start
    start = time.perf_counter()
    cal = pp.ExactQuiltMechanism(epsilon=1.0).calibrate(fw, pp.Count(1))
    seconds = time.perf_counter() - start
    ev = cal.evidence
    print(f"(1) T = {length:,}, k = 4, |Θ| = 8 random stationary chains, all pairs, count(1):")
    print(f"    ExactQuilt {seconds:.1f} s (MQM inside it; MQM alone {mqm_s:.1f} s), scale "
          f"{cal.scale:.4f}, MQM scale {mqm.scale:.4f} (ratio {cal.scale / mqm.scale:.3f}); "
          f"{ev.classes} node classes, {ev.evaluations} loss evaluations, worst node "
          f"{ev.worst_node} with quilt {ev.worst_quilt}")


def _sticky(rng: np.random.Generator, length: int) -> pp.MarkovChainScenario:
    p = np.empty((4, 4))
    for s in range(4):
        stay = rng.uniform(0.8, 0.98)
        rest = rng.dirichlet(np.ones(3)) * (1 - stay)
        p[s] = np.insert(rest, s, stay)
    return pp.MarkovChainScenario(p, "stationary", length)


def _timed(mech: pp.Mechanism, fw: pp.Framework, query: pp.Query) -> tuple[float, float]:
    start = time.perf_counter()
    scale = mech.calibrate(fw, query).scale
    return scale, time.perf_counter() - start


def _bundled() -> None:
    cls = pp.load_scenarios()
    fw = pp.Framework(cls, pp.secret_pairs(cls))
    query = pp.Count("walk")
    eq, eq_s = _timed(pp.ExactQuiltMechanism(epsilon=1.0), fw, query)
    search, search_s = _timed(pp.ExactQuiltMechanism(epsilon=1.0, max_chain_cells=0), fw, query)
    exact, exact_s = _timed(pp.ExactLaplaceMechanism(epsilon=1.0), fw, query)
    print(f"(0) bundled activity chain (T = {cls.members[0].length}, {len(cls)} scenarios), "
          "count('walk'), ε = 1:")
    print(f"    ExactQuilt {eq:.6f} in {eq_s:.2f} s; quilt search only {search:.6f} in "
          f"{search_s:.2f} s; global exact {exact:.6f} in {exact_s:.2f} s")


def _sticky_chains(length: int, count: int) -> None:
    rng = np.random.default_rng(7)
    print(f"(2) {count} sticky chains, T = {length:,}, count(1), ε = 1 (EQ: default; EQ0: "
          "quilt search only):")
    print("    chain  EQ           EQ0          global exact  MQM        EQ/exact  EQ0/exact"
          "  EQ0/MQM  realised EQ, EQ0          EQ s  EQ0 s  exact s")
    rows = []
    for j in range(count):
        fw = pp.Framework(_sticky(rng, length))
        eq, eq_s = _timed(pp.ExactQuiltMechanism(epsilon=1.0), fw, pp.Count(1))
        eq0, eq0_s = _timed(pp.ExactQuiltMechanism(epsilon=1.0, max_chain_cells=0), fw,
                            pp.Count(1))
        exact, ex_s = _timed(pp.ExactLaplaceMechanism(epsilon=1.0), fw, pp.Count(1))
        mqm = pp.MarkovQuiltMechanism(epsilon=1.0).calibrate(fw, pp.Count(1)).scale
        real = [pp.audit(fw, pp.Count(1), x).epsilon for x in (eq, eq0)]
        rows.append((eq / exact, eq0 / exact, eq0 / mqm, eq_s / ex_s, eq0_s / ex_s))
        print(f"    {j:5d}  {eq:11.6f}  {eq0:11.6f}  {exact:12.6f}  {mqm:9.4f}  "
              f"{rows[-1][0]:8.6f}  {rows[-1][1]:9.7f}  {rows[-1][2]:7.4f}  {real[0]:.10f}, "
              f"{real[1]:.10f}  {eq_s:4.1f}  {eq0_s:5.1f}  {ex_s:7.1f}")
    if rows:
        r = np.array(rows)
        print(f"    max EQ/exact {r[:, 0].max():.6f}, max EQ0/exact {r[:, 1].max():.7f}, "
              f"median EQ0/MQM {np.median(r[:, 2]):.4f}; time ratio to exact: EQ median "
              f"{np.median(r[:, 3]):.2f} (max {r[:, 3].max():.2f}), EQ0 median "
              f"{np.median(r[:, 4]):.2f} (max {r[:, 4].max():.2f})")


DATA = Path(__file__).resolve().parents[2] / "shared" / "data-real"
MECHANISMS = {"ExactQuilt": pp.ExactQuiltMechanism, "MQM": pp.MarkovQuiltMechanism,
              "exact": pp.ExactLaplaceMechanism}
CASES = [("Ordonez A 10min", None), ("Ordonez B 10min", None), ("Ordonez A 1min", None),
         ("Ordonez B 1min", None), ("sticky k=10", 1440), ("sticky k=10", 10**6),
         ("hourly Ordonez A 10min", None), ("hourly Ordonez B 10min", None),
         ("hourly sticky k=10", 144), ("hourly sticky k=10", 1440)]


def _hourly_sticky(length: int) -> tuple[pp.Framework, pp.Query]:
    """The sticky class made time-varying: per chain 24 different hourly matrices
    (0.9·I + 0.1·Dirichlet(1) rows), a day of ``length`` slots, a random start."""
    rng = np.random.default_rng(0)
    hour = np.arange(length - 1) * 24 // length
    chains = [pp.MarkovChainScenario(
        (0.9 * np.eye(10) + 0.1 * rng.dirichlet(np.ones(10), size=(24, 10)))[hour],
        rng.dirichlet(np.ones(10)), length, name=f"s{j}") for j in range(4)]
    return pp.Framework(pp.ScenarioClass(chains)), pp.Count(0)


def _hourly_ordonez(home: str, data: Path) -> tuple[pp.Framework, pp.Query]:
    """Ordóñez at 10-minute slots fitted with one matrix per hour (``period=6``,
    ``shrinkage=10``), empirical start, one day; the count of
    :func:`ordonez_day`."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wide = pp.sequences_from_events(pp.read_ordonez(data / f"Ordonez{home}_ADLs.txt",
                                                        repair=True), slot="10min",
                                        fill="Idle")
    chain = pp.MarkovChainScenario.fit(wide, period=6, shrinkage=10,
                                       name=f"Ordonez{home} hourly")
    return pp.Framework(chain), ordonez_day(home, "10min", data)[1]


def _case(name: str, length: int | None, data: Path) -> tuple[pp.Framework, pp.Query]:
    if name.startswith("hourly sticky"):
        return _hourly_sticky(length or 1440)
    if name.startswith("hourly Ordonez"):
        return _hourly_ordonez(name.split()[2], data)
    if name.startswith("sticky"):
        rng = np.random.default_rng(0)
        chains = [pp.MarkovChainScenario(0.9 * np.eye(10) + 0.1 * rng.dirichlet(np.ones(10),
                                         size=10), "stationary", length, name=f"s{j}")
                  for j in range(4)]
        return pp.Framework(pp.ScenarioClass(chains)), pp.Count(0)
    _, home, slot = name.split()
    return ordonez_day(home, slot, data)


def _one(name: str, length: int | None, mech: str, data: Path) -> None:
    """One calibration in this process: prints scale, CPU s, peak MB and the evidence."""
    fw, query = _case(name, length, data)
    start = time.process_time()
    cal = MECHANISMS[mech](epsilon=1.0).calibrate(fw, query)
    cpu = time.process_time() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ev = cal.evidence
    note = f"window {ev.window}, {ev.classes} classes, MQM-bound nodes {ev.mqm_bound_nodes}" \
        if mech == "ExactQuilt" else ""
    member = fw.scenarios.members[0]
    print(f"| {name} | {member.k} | {member.length:,} | {mech} | {cal.scale:.6g} | {cpu:.1f} | "
          f"{peak:.0f} | {note} |", flush=True)


def _table(data: Path) -> None:
    print("| chain | k | T | mechanism | scale | CPU s | peak MB | notes |\n|---|---|---|---|---|"
          "---|---|---|", flush=True)
    for name, length in CASES:
        for mech in MECHANISMS:
            if mech == "exact" and length == 10**6:
                continue
            subprocess.run([sys.executable, __file__, "--one", name, str(length or 0), mech,
                            "--data", str(data)], check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", action="store_true")
    parser.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--skip-long", action="store_true")
    parser.add_argument("--long-length", type=int, default=10**6)
    parser.add_argument("--length", type=int, default=1440)
    parser.add_argument("--chains", type=int, default=20)
    args = parser.parse_args()
    if args.one:
        _one(args.one[0], int(args.one[1]) or None, args.one[2], args.data)
        return
    if args.table:
        _table(args.data)
        return
    _bundled()
    if not args.skip_long:
        _long_chain(args.long_length)
    _sticky_chains(args.length, args.chains)


if __name__ == "__main__":
    main()
