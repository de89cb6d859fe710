"""Every chain mechanism on the chains users fit: one table of scale, noise and CPU seconds.

The Ordóñez activity logs of both homes (``read_ordonez(repair=True)``,
``sequences_from_events(fill="Idle")`` at 10- and 1-minute slots, ``MarkovChainScenario.fit``,
stationary start, one day), every pair on every node, the count of the most frequent non-idle
activity, ε = 1. Each mechanism runs in its own process (CPU seconds by
``time.process_time``, peak RSS) under a CPU limit (``--limit``, default 900 s); a refusal
prints its one-line reason, a run over the limit prints "over the limit". E|Z| is the expected
absolute error of the noise the release adds (``Calibration.usefulness``), against the
answer's standard deviation under the model ("sd").

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_ordonez.py [--data FOLDER] [--limit S]
[--only NAME]``.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

from _common import DATA, ordonez_day

import pufferfish_pgm as pp
from pufferfish_pgm.errors import PufferfishError

CASES = [("A", "10min"), ("B", "10min"), ("A", "1min"), ("B", "1min")]
MECHANISMS = {
    "entry": lambda e: pp.EntryDPMechanism(epsilon=e),
    "group": lambda e: pp.GroupDPMechanism(epsilon=e),
    "gk16": lambda e: pp.GK16Mechanism(epsilon=e),
    "mqm-approx": lambda e: pp.MQMApproxMechanism(epsilon=e),
    "mqm": lambda e: pp.MarkovQuiltMechanism(epsilon=e),
    "exact-quilt": lambda e: pp.ExactQuiltMechanism(epsilon=e),
    "wasserstein": lambda e: pp.WassersteinMechanism(epsilon=e),
    "kantorovich": lambda e: pp.KantorovichMechanism(epsilon=e),
    "kantorovich-relaxed": lambda e: pp.KantorovichMechanism(epsilon=e, relaxed=True),
    "exact": lambda e: pp.ExactLaplaceMechanism(epsilon=e),
    "optimal": lambda e: pp.OptimalNoiseMechanism(epsilon=e),
}


def one(home: str, slot: str, name: str, data: Path) -> None:
    """One calibration in this process; prints one table row."""
    fw, query = ordonez_day(home, slot, data)
    chain = fw.scenarios.members[0]
    row = f"| {home} | {slot} | {chain.k} | {chain.length:,} | {name} |"
    start = time.process_time()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pp.UsefulnessWarning)
            cal = MECHANISMS[name](1.0).calibrate(fw, query)
    except PufferfishError as error:
        print(f"{row} refused: {str(error)[:90]} | | | {time.process_time() - start:.1f} | |",
              flush=True)
        return
    cpu = time.process_time() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    use = cal.usefulness()
    scale = "(integer law)" if cal.scale != cal.scale else f"{cal.scale:.4g}"   # NaN: optimal
    print(f"{row} {scale} | {use.mean_abs_error:.4g} | {use.spread:.4g} | {cpu:.1f} | "
          f"{peak:.0f} |", flush=True)


def table(data: Path, limit: int, only: str | None) -> None:
    print("| home | slot | k | T | mechanism | scale | E\\|Z\\| | sd | CPU s | peak MB |\n"
          "|---|---|---|---|---|---|---|---|---|---|", flush=True)
    for home, slot in CASES:
        for name in MECHANISMS:
            if only and name != only:
                continue
            done = subprocess.run(
                [sys.executable, __file__, "--one", home, slot, name, "--data", str(data)],
                check=False, preexec_fn=lambda: resource.setrlimit(
                    resource.RLIMIT_CPU, (limit, limit)))
            if done.returncode != 0:
                print(f"| {home} | {slot} | | | {name} | over the limit ({limit} CPU s) or "
                      f"failed (exit {done.returncode}) | | | | |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--limit", type=int, default=900)
    parser.add_argument("--only", choices=sorted(MECHANISMS))
    parser.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        one(*args.one, args.data)
    else:
        table(args.data, args.limit, args.only)


if __name__ == "__main__":
    main()
