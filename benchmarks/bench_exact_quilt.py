"""Exact quilt mechanism: speed on a long chain, and its scale against global exact and MQM.

1. T = 10^6, k = 4, |Θ| = 8 random stationary chains (rows Dirichlet(1)), every pair on
   every node, Count of state 1, ε = 1: seconds to calibrate (target <= 60 s).
2. 20 random sticky activity-like chains (k = 4, diagonal uniform in [0.8, 0.98], the rest of
   each row Dirichlet(1)), stationary start, one chain per framework, Count of state 1, ε = 1:
   scale ratio to the global exact Laplace scale (target <= 1.25) and to MQM, at T = 1,440
   (``--length`` to change), with the realised ε of the exact quilt scale (exact audit).

Run: ``python benchmarks/bench_exact_quilt.py [--skip-long] [--length T] [--chains N]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

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


def _sticky_chains(length: int, count: int) -> None:
    rng = np.random.default_rng(7)
    print(f"(2) {count} sticky chains, T = {length:,}, count(1), ε = 1:")
    print("    chain  exact-quilt   global exact   MQM          EQ/exact  EQ/MQM  realised ε"
          "  EQ s   exact s")
    ratios, to_mqm = [], []
    for j in range(count):
        fw = pp.Framework(_sticky(rng, length))
        start = time.perf_counter()
        cal = pp.ExactQuiltMechanism(epsilon=1.0).calibrate(fw, pp.Count(1))
        eq_s = time.perf_counter() - start
        start = time.perf_counter()
        exact = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(fw, pp.Count(1)).scale
        ex_s = time.perf_counter() - start
        realised = pp.audit(fw, pp.Count(1), cal.scale).epsilon
        ratios.append(cal.scale / exact)
        to_mqm.append(cal.scale / cal.evidence.mqm_scale)
        print(f"    {j:5d}  {cal.scale:11.4f}  {exact:13.4f}  {cal.evidence.mqm_scale:11.4f}"
              f"  {ratios[-1]:8.4f}  {to_mqm[-1]:6.3f}  {realised:10.8f}  {eq_s:5.1f}  "
              f"{ex_s:6.1f}")
    print(f"    EQ / global exact: median {np.median(ratios):.4f}, max {max(ratios):.4f}; "
          f"EQ / MQM: median {np.median(to_mqm):.3f}, max {max(to_mqm):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-long", action="store_true")
    parser.add_argument("--long-length", type=int, default=10**6)
    parser.add_argument("--length", type=int, default=1440)
    parser.add_argument("--chains", type=int, default=20)
    args = parser.parse_args()
    if not args.skip_long:
        _long_chain(args.long_length)
    _sticky_chains(args.length, args.chains)


if __name__ == "__main__":
    main()
