"""Utility: Laplace scales of every mechanism on binary chains (T = 100, ε = 1).

For every chain with Pr(1|0), Pr(1|1) in {0.1, ..., 0.9} (stationary start), release the count
of state 1 and print the Laplace scale of GroupDP (T/ε), GK16 (Ghosh & Kleinberg's inferential
privacy, the paper's baseline; nan where its influence matrix has norm >= 1), MQMExact,
MQMApprox, Wasserstein,
Kantorovich (plain and relaxed) and the exact calibration, then the median ratio of the exact
scale to MQMExact's. Each scale is checked with the exact audit (realised ε <= ε).

Run: ``python benchmarks/bench_utility.py [--length T] [--epsilon EPS]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from pufferfish_pgm.errors import InvalidModelError
from pufferfish_pgm.mechanisms.exact import ExactLaplaceMechanism
from pufferfish_pgm.mechanisms.gk16 import GK16Mechanism
from pufferfish_pgm.mechanisms.kantorovich import KantorovichMechanism
from pufferfish_pgm.mechanisms.markov_quilt import (
    MarkovQuiltMechanism,
    chain_mixing,
    mqm_approx_scale,
)
from pufferfish_pgm.mechanisms.wasserstein import WassersteinMechanism
from pufferfish_pgm.privacy_loss import audit
from pufferfish_pgm.queries import Count
from pufferfish_pgm.scenarios import MarkovChainScenario
from pufferfish_pgm.secrets import Framework

COLUMNS = ("GroupDP", "GK16", "MQMExact", "MQMApprox", "Wasserstein", "Kantorovich",
           "KantRelaxed", "Exact")
GRID = np.round(np.arange(0.1, 1.0, 0.1), 1)


def _gk16(fw: Framework, query: Count, eps: float) -> float:
    try:
        return GK16Mechanism(epsilon=eps).calibrate(fw, query).scale
    except InvalidModelError:   # ‖Γ‖ >= 1: the theorem gives nothing (the paper's NaN)
        return float("nan")


def scales_for(p01: float, p11: float, length: int, eps: float) -> dict:
    """Every mechanism's Laplace scale for one chain (and a check of each with the audit)."""
    chain = MarkovChainScenario([[1 - p01, p01], [1 - p11, p11]], "stationary", length)
    fw, query = Framework(chain), Count(1)
    pi_min, gap = chain_mixing(chain)
    out = {
        "GroupDP": length / eps,
        "GK16": _gk16(fw, query, eps),
        "MQMExact": MarkovQuiltMechanism(epsilon=eps).calibrate(fw, query).scale,
        "MQMApprox": mqm_approx_scale(pi_min=pi_min, eigengap=gap, epsilon=eps,
                                      length=length),
        "Wasserstein": WassersteinMechanism(epsilon=eps).calibrate(fw, query).scale,
        "Kantorovich": KantorovichMechanism(epsilon=eps).calibrate(fw, query).scale,
        "KantRelaxed": KantorovichMechanism(epsilon=eps, relaxed=True).calibrate(fw, query).scale,
        "Exact": ExactLaplaceMechanism(epsilon=eps).calibrate(fw, query).scale,
    }
    for name, scale in out.items():
        if not np.isfinite(scale):
            continue
        realised = audit(fw, query, scale).epsilon
        if realised > eps * (1 + 1e-9):
            out[name + " LEAKS"] = realised
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=100)
    parser.add_argument("--epsilon", type=float, default=1.0)
    args = parser.parse_args()
    start = time.perf_counter()
    print(f"binary chains, T = {args.length}, eps = {args.epsilon}, stationary start, "
          "count of state 1; Laplace scales (smaller is better)")
    print(f"{'P(1|0)':>6} {'P(1|1)':>6} " + " ".join(f"{c:>11}" for c in COLUMNS))
    ratios, leaks = [], []
    for p01 in GRID:
        for p11 in GRID:
            row = scales_for(float(p01), float(p11), args.length, args.epsilon)
            print(f"{p01:>6.1f} {p11:>6.1f} " + " ".join(f"{row[c]:>11.3f}" for c in COLUMNS))
            ratios.append(row["Exact"] / row["MQMExact"])
            leaks += [(p01, p11, k, v) for k, v in row.items() if k.endswith("LEAKS")]
    print(f"median Exact / MQMExact = {np.median(ratios):.3f} "
          f"(min {np.min(ratios):.3f}, max {np.max(ratios):.3f}) over {len(ratios)} chains")
    for p01, p11, name, realised in leaks:
        print(f"LEAK: chain ({p01}, {p11}) {name}: realised eps {realised:.6g}")
    print("no mechanism leaked" if not leaks else f"{len(leaks)} leaks")
    print(f"total time {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
