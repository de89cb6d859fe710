"""Exact calibration near its floor (issue 21, item 2): CPU seconds and peak RSS per case.

Cases (``ExactLaplaceMechanism``, ε = 1, every pair on every node):

* ``sticky-<T>``: 4 chains, rows 0.9·I + 0.1·Dirichlet(1), k = 10, stationary starts,
  ``Count(0)`` (the sticky class of issue 21, seed 0 as in ``bench_scale.py``);
* ``benign-<T>``: 4 chains, rows Dirichlet(2), k = 10, ``Count(1)``;
* ``ordonez-<A|B>-<10min|1min>``: the chain fitted from the Ordóñez log of one home
  (``read_ordonez(repair=True)``, ``sequences_from_events(fill="Idle")``,
  ``MarkovChainScenario.fit``, stationary start, one day), the count of its most frequent
  non-idle activity (as ``bench_exact_quilt.py``).

Each case runs in a fresh child process with one BLAS thread and prints CPU seconds
(``time.process_time``), peak RSS and the scale. ``PYTHONPATH`` selects the library (a
worktree of an older commit measures "before").

Run: ``python benchmarks/bench_exact_floor.py [CASE ...] [--data FOLDER]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

from _common import ordonez_day

DATA = Path(__file__).resolve().parents[2] / "shared" / "data-real"
CASES = ["sticky-1440", "benign-1440", "ordonez-A-10min", "ordonez-B-10min", "ordonez-A-1min",
         "ordonez-B-1min", "sticky-10080", "benign-10080", "sticky-43200", "benign-43200"]


def _chains(length: int, sticky: bool):
    import numpy as np

    import pufferfish_pgm as pp

    rng = np.random.default_rng(0)
    k = 10
    rows = ((lambda: 0.9 * np.eye(k) + 0.1 * rng.dirichlet(np.ones(k), size=k)) if sticky
            else (lambda: rng.dirichlet(np.full(k, 2.0), size=k)))
    chains = [pp.MarkovChainScenario(rows(), "stationary", length, name=f"theta{i}")
              for i in range(4)]
    return pp.Framework(pp.ScenarioClass(chains)), pp.Count(0 if sticky else 1)


def run_case(case: str, data: Path) -> str:
    import pufferfish_pgm as pp

    kind, _, rest = case.partition("-")
    if kind == "ordonez":
        home, _, slot = rest.partition("-")
        fw, query = ordonez_day(home, slot, data)
    else:
        fw, query = _chains(int(rest), kind == "sticky")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cal = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(fw, query)
    ev = cal.evidence
    member = fw.scenarios.members[0] if hasattr(fw.scenarios, "members") else fw.scenarios
    return (f"k={member.k} T={member.length:,} scale {cal.scale:.10f}, audit "
            f"{ev.audit.epsilon:.12f} on {len(ev.audit.pairs):,} pairs")


def child(case: str, data: Path) -> None:
    cpu = time.process_time()
    try:
        what = run_case(case, data)
    except Exception as err:  # noqa: BLE001 - the figure to report is the refusal itself
        what = f"{type(err).__name__}: {str(err)[:200]}"
    cpu = time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(json.dumps({"case": case, "cpu_seconds": cpu, "peak_gib": peak, "what": what}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", default=CASES)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.data)
        return
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1")
    for case in args.cases:
        done = subprocess.run([sys.executable, __file__, "--child", case, "--data",
                               str(args.data)], capture_output=True, text=True, check=False,
                              env=env)
        if done.returncode != 0:
            print(f"{case:<18} failed: {done.stderr.strip().splitlines()[-1:]}", flush=True)
            continue
        row = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"{case:<18} {row['cpu_seconds']:8.1f} CPU s  {row['peak_gib']:6.2f} GiB  "
              f"{row['what']}", flush=True)


if __name__ == "__main__":
    main()
