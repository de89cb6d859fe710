"""Time exact discrete Laplace sampling on the secure path (OS randomness) and a seeded path.

Run: ``python benchmarks/bench_noise.py [--scale 1.0] [--repeat 3]``. Prints, for 10**4 and
10**6 draws, the best wall-clock seconds over the repeats and the draws per second.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from pufferfish_pgm.noise import add_noise, sample_discrete_laplace


def best_seconds(run, repeat: int) -> float:
    """Fastest of ``repeat`` timed calls of ``run()``."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"discrete Laplace, scale={args.scale}, best of {args.repeat}")
    print(f"{'path':<8} {'draws':>9} {'seconds':>9} {'draws/s':>12}")
    for path in ("secure", "seeded"):
        for size in (10**4, 10**6):
            rng = None if path == "secure" else np.random.default_rng(0)
            seconds = best_seconds(
                lambda size=size, rng=rng: sample_discrete_laplace(args.scale, size=size, rng=rng),
                args.repeat,
            )
            print(f"{path:<8} {size:>9} {seconds:>9.4f} {size / seconds:>12,.0f}")
    single = best_seconds(lambda: [add_noise(3, args.scale) for _ in range(1000)], args.repeat)
    print(f"add_noise on one integer answer, secure: {single / 1000 * 1e6:.1f} us per call")


if __name__ == "__main__":
    main()
