"""Speed of the exact engine: exact calibration on a long chain with secrets on every node.

Default: T = 1,000 time steps, k = 4 states, |Θ| = 4 random chains (stationary starts), every
pair of states on every node (24,000 (pair, θ) conditionals), count of state 1, ε = 1. Prints
the time of each stage and of the whole ``ExactLaplaceMechanism.calibrate`` (target: < 60 s).

Run: ``python benchmarks/bench_exact.py [--length T] [--states k] [--scenarios n]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from pufferfish_pgm.mechanisms.exact import ExactLaplaceMechanism
from pufferfish_pgm.privacy_loss._audit import report_from_groups
from pufferfish_pgm.privacy_loss._pair_rows import build_groups
from pufferfish_pgm.queries import Count
from pufferfish_pgm.scenarios import MarkovChainScenario, ScenarioClass
from pufferfish_pgm.secrets import Framework, compile_secrets


def make_framework(length: int, k: int, n: int, seed: int = 0) -> Framework:
    rng = np.random.default_rng(seed)
    chains = [MarkovChainScenario(rng.dirichlet(np.full(k, 2.0), size=k), "stationary", length,
                                  name=f"theta{i}") for i in range(n)]
    return Framework(ScenarioClass(chains))


def timed(label: str, fn, *args):
    start = time.perf_counter()
    out = fn(*args)
    print(f"  {label:<44} {time.perf_counter() - start:8.2f} s")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=1000)
    parser.add_argument("--states", type=int, default=4)
    parser.add_argument("--scenarios", type=int, default=4)
    parser.add_argument("--epsilon", type=float, default=1.0)
    args = parser.parse_args()
    fw = make_framework(args.length, args.states, args.scenarios)
    query = Count(1)
    print(f"T = {args.length}, k = {args.states}, |Theta| = {args.scenarios}, "
          f"{len(fw.pairs)} pairs, eps = {args.epsilon}")
    print("stages (each on fresh scenarios):")
    timed("compile_secrets (probabilities of secrets)", compile_secrets, fw)
    fw2 = make_framework(args.length, args.states, args.scenarios)
    groups, _ = timed("all conditional distributions", build_groups, fw2, [query], [[1]], [0])
    timed("one exact audit of every pair", report_from_groups, groups, [5.0], ["count"], (),
          "", False)
    fw3 = make_framework(args.length, args.states, args.scenarios)
    start = time.perf_counter()
    cal = ExactLaplaceMechanism(epsilon=args.epsilon).calibrate(fw3, query)
    total = time.perf_counter() - start
    ev = cal.evidence
    print(f"ExactLaplaceMechanism.calibrate: {total:.2f} s (target < 60 s)")
    start_from = (f"streamed from the failing bracket {ev.lower_bracket:.6f}" if ev.streamed
                  else f"Wasserstein scale {ev.wasserstein_scale:.6f}")
    print(f"  scale {cal.scale:.6f}, {start_from}, audit {ev.audit.epsilon:.12f}, worst pair "
          f"{ev.audit.worst.pair} under {ev.audit.worst.scenario}, {ev.bisection_steps} "
          "evaluations")
    stored = ExactLaplaceMechanism(epsilon=args.epsilon, streaming=False)
    start = time.perf_counter()
    other = stored.calibrate(make_framework(args.length, args.states, args.scenarios), query)
    print(f"  the stored path (streaming=False): {time.perf_counter() - start:.2f} s, scale "
          f"{other.scale:.6f}")


if __name__ == "__main__":
    main()
