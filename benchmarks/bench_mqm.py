"""Speed of the Markov Quilt Mechanism planners.

1. The chain planner (MQMExact) against the straightforward O(T^3) search of DESIGN §3.3
   (``tests/mqm_reference.py``) at T = 150: the speed ratio, and that every σ_i agrees.
2. The chain planner for T = 10^3 .. 10^7, k = 4 states, |Θ| = 8 random chains with a
   stationary start, secrets on every node, Count query. Framework construction and the full
   ``calibrate`` (which adds the query's Lipschitz check) are timed separately.
3. The network planner on ALARM (37 nodes), secrets on five clinical nodes and on all nodes.

Run: ``python benchmarks/bench_mqm.py`` (``--quick`` stops the chain sizes at 10^5).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from pufferfish_pgm.mechanisms.markov_quilt import MarkovQuiltMechanism
from pufferfish_pgm.queries import Count
from pufferfish_pgm.quilts import plan_chain, plan_network
from pufferfish_pgm.scenarios import BayesianNetworkScenario, MarkovChainScenario, ScenarioClass
from pufferfish_pgm.secrets import Framework, secret_pairs

ROOT = Path(__file__).resolve().parents[1]


def random_class(rng: np.random.Generator, k: int, members: int, length: int) -> ScenarioClass:
    return ScenarioClass([MarkovChainScenario(rng.dirichlet(np.ones(k), size=k), "stationary",
                                              length) for _ in range(members)])


def same_class(cls: ScenarioClass, length: int) -> ScenarioClass:
    return ScenarioClass([m.with_length(length) for m in cls])


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def against_naive(rng: np.random.Generator, length: int = 150) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from oracle import naive_chain_sigmas

    cls = random_class(rng, 2, 2, length)
    fw = Framework(cls)
    plan, fast = timed(lambda: plan_chain(fw, Count(1), 1.0))
    ref, slow = timed(lambda: naive_chain_sigmas(fw, 1.0))
    worst = max(abs(e.sigma - ref[e.node][0]) / ref[e.node][0] for e in plan)
    print(f"T={length}, k=2, |Θ|=2: ours {fast:.3f} s, naive O(T^3) {slow:.1f} s, "
          f"ratio {slow / fast:.0f}x; max relative σ difference {worst:.1e} "
          f"({'equal' if worst < 1e-9 else 'DIFFERENT'}), σ_max {plan.sigma_max:.4f}")


def chain_sizes(rng: np.random.Generator, quick: bool) -> None:
    sizes = [10**3, 10**4, 10**5] + ([] if quick else [10**6, 10**7])
    chains = random_class(rng, 4, 8, 2)  # the same 8 chains at every length
    for length in sizes:
        cls = same_class(chains, length)
        fw, build = timed(lambda c=cls: Framework(c))
        plan, secs = timed(lambda f=fw: plan_chain(f, Count(1), 1.0))
        cal, full = timed(lambda f=fw: MarkovQuiltMechanism(epsilon=1.0).calibrate(f, Count(1)))
        print(f"T={length:>8}, k=4, |Θ|=8: plan {secs:6.2f} s, calibrate {full:6.2f} s "
              f"(Framework: {build:6.1f} s); σ_max {plan.sigma_max:.4f}, "
              f"{plan.run_count} node classes, "
              f"truncated {plan.count_where(plan.run_truncated)}")


def alarm() -> None:
    bn, load = timed(lambda: BayesianNetworkScenario.from_file(ROOT / "models" / "alarm.bif",
                                                               renormalize=1e-6))
    high = [v for v in bn.nodes if "HIGH" in bn.states_of(v)]
    query = Count("HIGH", nodes=high)
    clinical = ["HYPOVOLEMIA", "LVFAILURE", "PULMEMBOLUS", "ANAPHYLAXIS", "INTUBATION"]
    print(f"ALARM loaded in {load:.1f} s; query: count of HIGH over {len(high)} nodes")
    for label, nodes in (("5 clinical nodes", clinical), ("all 37 nodes", None)):
        fw = Framework(bn, secret_pairs(bn, nodes=nodes))
        for eps in (1.0, 4.0):
            plan, secs = timed(lambda f=fw, e=eps: plan_network(f, query, e))
            sigma = max(e.sigma for e in plan.entries)
            trivial = sum(e.trivial for e in plan.entries)
            print(f"  secrets on {label}, ε={eps}: {secs:.2f} s, σ_max {sigma:.3f} "
                  f"(group DP {len(high) / eps:.3f}), empty quilt for {trivial} nodes")


def main() -> None:
    rng = np.random.default_rng(2024)
    against_naive(rng)
    chain_sizes(rng, "--quick" in sys.argv)
    alarm()


if __name__ == "__main__":
    main()
