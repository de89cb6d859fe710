"""Real sizes (issue "Real sizes"): time and peak memory of the large workloads.

Each case runs in a fresh child process (so its peak resident memory is its own), optionally
under an address-space cap, and prints one line: seconds, peak RSS, and the figure that says
what was computed (a scale, σ_max, or the error that refused it).

Cases:

* ``exact-1440``: global exact calibration, chain T = 1,440 (a day of minutes), k = 10,
  |Θ| = 4 random chains (stationary starts), every pair on every node, count of state 1
  (streamed: the laws are never all held; ``exact-1440-stored`` holds them, the old path).
* ``exact-4320``, ``exact-10080``: the same at three days and a week of minutes.
* ``exact-sticky-<T>``: the sticky class of issue 21 (rows 0.9 I + 0.1 Dirichlet(1), k = 10,
  |Θ| = 4, count of state 0, every pair): scales of 27 where the cuts remove little; the
  middle nodes are bounded together (docs/middle-nodes.md). T = 43,200 is refused by the
  early size check (the full audit's 75 GB) unless PUFFERFISH_PGM_MEMORY_BUDGET is raised.
* ``mqm-<network>``: MQM with secrets on every node of a real network, count of its most
  common state over the nodes that have it (win95pts, hepar2, andes).
* ``exact-andes-1``: the exact count law on andes given one secret (per-secret cost).
* ``exact-1440-pool``, ``exact-1440-dask``: ``exact-1440`` with ``executor=`` a 2-process
  pool, or a Dask ``LocalCluster`` of 2 single-threaded worker processes.
* ``release-1m``, ``release-1m-dask``: release of 1,000,000 users x 1,440 slots (integer
  codes, MQM calibration, seeded by a SeedSequence), serial or on the Dask cluster.

Run: ``python benchmarks/bench_scale.py [CASE ...] [--cap-gb 6]`` (default: every case).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "models-real"
CASES = ["exact-1440", "exact-1440-stored", "exact-1440-pool", "exact-1440-dask", "exact-4320",
         "exact-10080", "mqm-win95pts", "mqm-hepar2", "mqm-andes", "exact-andes-1", "release-1m",
         "release-1m-dask", "exact-sticky-1440", "exact-sticky-2880", "exact-sticky-10080",
         "exact-sticky-43200"]


def _chain_framework(length: int, k: int = 10, n: int = 4, sticky: bool = False):
    """Benign class (rows Dirichlet(2)), or the sticky class of issue 21 (rows 0.9 I + 0.1
    Dirichlet(1), like activity chains fitted from real logs)."""
    import numpy as np

    import pufferfish_pgm as pp

    rng = np.random.default_rng(0)
    rows = ((lambda: 0.9 * np.eye(k) + 0.1 * rng.dirichlet(np.ones(k), size=k)) if sticky
            else (lambda: rng.dirichlet(np.full(k, 2.0), size=k)))
    chains = [pp.MarkovChainScenario(rows(), "stationary", length, name=f"theta{i}")
              for i in range(n)]
    return pp.Framework(pp.ScenarioClass(chains))


def _network(name: str):
    import pufferfish_pgm as pp

    bn = pp.BayesianNetworkScenario.from_file(SHARED / f"{name}.bif")
    state = Counter(s for v in bn.nodes for s in bn.states_of(v)).most_common(1)[0][0]
    return bn, pp.Count(state, [v for v in bn.nodes if state in bn.states_of(v)])


def _executor(kind: str):
    """A context manager yielding the executor of a case (None: serial)."""
    import contextlib
    from concurrent.futures import ProcessPoolExecutor

    if kind == "pool":
        return ProcessPoolExecutor(2)
    if kind == "dask":
        @contextlib.contextmanager
        def cluster():
            import distributed

            with distributed.LocalCluster(n_workers=2, threads_per_worker=1,
                                          dashboard_address=None) as c, \
                    distributed.Client(c) as client:
                yield client.get_executor()
        return cluster()
    return contextlib.nullcontext()


def _release(kind: str) -> str:
    import numpy as np

    import pufferfish_pgm as pp

    fw = _chain_framework(1440, k=4, n=2)
    cal = pp.MarkovQuiltMechanism(epsilon=1.0).calibrate(fw, pp.Count(1))
    data = np.random.default_rng(0).integers(0, 4, size=(1_000_000, 1440), dtype=np.int8)
    with _executor(kind) as pool:
        start = time.perf_counter()
        out = cal.release(data, np.random.SeedSequence(1), executor=pool)
        took = time.perf_counter() - start
    return f"release alone {took:.1f} s, {out.value.size:,} noisy answers, scale {cal.scale:.2f}"


def run_case(case: str) -> str:
    import pufferfish_pgm as pp

    if case.startswith("exact-sticky-"):      # issue 21: sticky class, Count(0), all pairs
        fw = _chain_framework(int(case.rpartition("-")[2]), sticky=True)
        cal = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(fw, pp.Count(0))
        ev = cal.evidence
        return (f"scale {cal.scale:.9f}, failing bracket {ev.lower_bracket:.9f}, audit "
                f"{ev.audit.epsilon:.12f} on {len(ev.audit.pairs):,} pairs")
    name, _, kind = case.partition("-")[2].partition("-")
    if case.startswith("exact-") and name.isdigit():
        fw = _chain_framework(int(name))
        streaming = False if kind == "stored" else None
        with _executor("" if kind == "stored" else kind) as pool:
            cal = pp.ExactLaplaceMechanism(epsilon=1.0, max_grid=10**10,
                                           streaming=streaming).calibrate(
                fw, pp.Count(1), executor=pool)
        ev = cal.evidence
        start = (f"streamed from the failing bracket {ev.lower_bracket:.6f}" if ev.streamed
                 else f"Wasserstein {ev.wasserstein_scale:.6f}")
        return (f"scale {cal.scale:.6f}, {start}, audit {ev.audit.epsilon:.12f} on "
                f"{len(ev.audit.pairs):,} pairs, {ev.bisection_steps} evaluations")
    if case.startswith("mqm-"):
        bn, query = _network(case[4:])
        cal = pp.MarkovQuiltMechanism(epsilon=1.0).calibrate(pp.Framework(bn), query)
        ev = cal.evidence
        return (f"{len(bn.nodes)} nodes, sigma_max {ev.sigma_max:.3f} (group DP "
                f"{len(query.nodes)}), skipped {sum(ev.skipped_quilts.values())}, over budget "
                f"{sum(ev.over_budget_quilts.values())}")
    if case.startswith("release-1m"):
        return _release(kind)
    if case == "exact-andes-1":
        from pufferfish_pgm.queries import query_log_pmf

        bn, query = _network("andes")
        v = bn.nodes[0]
        pmf = query_log_pmf(bn, query, {v: bn.states_of(v)[0]})
        return f"one secret ({v}), {pmf.log_mass.size} counts"
    raise SystemExit(f"unknown case {case!r}; choose from {CASES}")


def child(case: str, cap_gb: float | None) -> None:
    if cap_gb:
        cap = int(cap_gb * 10**9)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    start, cpu = time.perf_counter(), time.process_time()
    try:
        what = run_case(case)
    except Exception as err:  # noqa: BLE001 - the figure to report is the refusal itself
        what = f"{type(err).__name__}: {str(err)[:160]}"
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20
    print(json.dumps({"case": case, "seconds": seconds, "cpu_seconds": cpu, "peak_gib": peak,
                      "what": what, "worker_peak_gib": workers}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", default=CASES)
    parser.add_argument("--cap-gb", type=float, help="address-space cap of each case (ulimit -v)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.cap_gb)
        return
    for case in args.cases:
        cmd = [sys.executable, __file__, "--child", case]
        if args.cap_gb:
            cmd += ["--cap-gb", str(args.cap_gb)]
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(f"{case:<16} failed: {done.stderr.strip().splitlines()[-1:]}")
            continue
        row = json.loads(done.stdout.strip().splitlines()[-1])
        workers = (f" (largest worker {row['worker_peak_gib']:.2f} GiB)"
                   if row["worker_peak_gib"] > 0.05 else "")
        print(f"{case:<16} {row['seconds']:8.1f} s ({row['cpu_seconds']:.1f} CPU s)  "
              f"{row['peak_gib']:6.2f} GiB{workers}  "
              f"{row['what']}", flush=True)


if __name__ == "__main__":
    main()
