"""Release at scale: 10,000 users x 1,440 minutes, one noisy count per user and one aggregate.

Times the whole ``Calibration.release`` (encoding and validating every value, evaluating the
count, secure exact discrete Laplace noise) for integer-coded and for string-labelled data.

Run: ``python benchmarks/bench_release.py [--users N] [--length T]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import pufferfish_pgm as pp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument("--length", type=int, default=1440)
    args = parser.parse_args()
    names = ["rest", "sit", "walk", "run"]
    p = np.array([[0.9, 0.06, 0.03, 0.01], [0.05, 0.9, 0.04, 0.01],
                  [0.02, 0.1, 0.85, 0.03], [0.01, 0.04, 0.15, 0.8]])
    for states in (None, names):
        mc = pp.MarkovChainScenario(p, "stationary", args.length, states=states)
        fw = pp.Framework(mc, pp.secret_pairs(mc, nodes=[0]))  # pairs do not affect release
        cal = pp.MarkovQuiltMechanism(epsilon=1.0).calibrate(pp.Framework(mc), pp.Count(
            mc.states[2]))
        cal = pp.Calibration(mechanism=cal.mechanism, epsilon=1.0, scale=cal.scale,
                             query=cal.query, framework=fw)
        codes = np.random.default_rng(0).integers(0, 4, (args.users, args.length))
        data = codes if states is None else np.array(names, dtype=object)[codes]
        kind = "integer codes" if states is None else "string labels"
        for per_user in (True, False):
            start = time.perf_counter()
            rel = cal.release(data, per_user=per_user)
            seconds = time.perf_counter() - start
            shape = np.shape(rel.value)
            print(f"{kind:>13}, {'per user ' if per_user else 'aggregate'}: {seconds:6.2f} s "
                  f"for {args.users} x {args.length} (scale {rel.scale:.3f}, output {shape})")


if __name__ == "__main__":
    main()
