"""Optimal integer noise against the exact discrete Laplace calibration (issue 13).

For the 81 binary chains of ``bench_utility.py`` (Pr(1|0), Pr(1|1) in {0.1, ..., 0.9},
stationary start, T = 100, ε = 1, count of state 1) calibrate ``OptimalNoiseMechanism`` with
and without ``dp_epsilon = 2`` and report the median and range of E|Z| (optimal) over E|Z|
(exact discrete Laplace), every result audited exactly on the sampled law (the calibration
refuses to return otherwise; the audited ε is re-checked here). Then the time of one
calibration at T = 100 and, with ``--long``, at T = 1,440 with k = 4 states and |Θ| = 2.

``--real`` (issue 23) measures the chains users fit, each case in its own process (CPU
seconds and peak RSS of that process, ``OMP_NUM_THREADS=1``), ε = 1, a count, every state of
every slot a secret, against the exact discrete Laplace calibration:

* the Ordóñez chains at 10-minute slots (T = 144; home A k = 10, home B k = 11;
  ``pp.read_ordonez(repair=True)``, ``pp.sequences_from_events(slot="10min", fill="Idle")``,
  ``MarkovChainScenario.fit(pseudocount=0.5, initial="stationary")``), counts of Sleeping and
  of Spare_Time/TV (target <= 60 s);
* home A's binary "Sleeping or not" chain (every other state "awake"; target <= 10 s);
* T = 1,440 with k = 4, |Θ| = 2 (target <= 30 s and <= 1 GB) and with k = 10 (target
  <= 10 min): a benign class (rows Dirichlet(1)) and a sticky one (rows 0.9 I +
  0.1 Dirichlet(1)), |Θ| = 2 each.

``--backend linprog|scipy|highspy`` picks the LP solver (default: highspy if installed, else
SciPy's bundled HiGHS; ``linprog`` re-solves from scratch every round).

Run: ``python benchmarks/bench_optimal.py [--length T] [--epsilon EPS] [--long]``,
``python benchmarks/bench_optimal.py --real [--data FOLDER] [--backend B] [--cases a,b]``
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

import numpy as np

from pufferfish_pgm.mechanisms import OptimalNoiseMechanism
from pufferfish_pgm.queries import Count
from pufferfish_pgm.scenarios import MarkovChainScenario, ScenarioClass
from pufferfish_pgm.secrets import Framework

GRID = np.round(np.arange(0.1, 1.0, 0.1), 1)


def one_chain(p01: float, p11: float, length: int, eps: float, dp: float | None) -> tuple:
    """(E|Z| ratio, audited ε, dp realised, seconds) for one chain."""
    chain = MarkovChainScenario([[1 - p01, p01], [1 - p11, p11]], "stationary", length)
    start = time.perf_counter()
    cal = OptimalNoiseMechanism(epsilon=eps, dp_epsilon=dp).calibrate(Framework(chain),
                                                                      Count(1))
    ev = cal.evidence
    audited = 0.0 if ev.audit is None else ev.audit.epsilon
    ratio = ev.mean_abs / ev.laplace_mean_abs if ev.laplace_mean_abs else float("nan")
    return ratio, audited, ev.dp_realised, time.perf_counter() - start


def sweep(length: int, eps: float, dp: float | None) -> None:
    ratios, times, worst = [], [], 0.0
    for p01 in GRID:
        for p11 in GRID:
            ratio, audited, dp_real, secs = one_chain(float(p01), float(p11), length, eps, dp)
            ratios.append(ratio)
            times.append(secs)
            worst = max(worst, audited / eps)
            if dp is not None and dp_real is not None and dp_real > dp * (1 + 1e-12):
                print(f"DP FLOOR BROKEN at ({p01}, {p11}): {dp_real}")
    r = np.array(ratios)
    label = "no DP floor" if dp is None else f"dp_epsilon = {dp}"
    print(f"{label}: E|Z| optimal / E|Z| exact discrete Laplace: median {np.nanmedian(r):.4f} "
          f"(min {np.nanmin(r):.4f}, max {np.nanmax(r):.4f}) over {len(r)} chains; largest "
          f"audited eps / eps = {worst:.12f}; seconds per calibration: median "
          f"{np.median(times):.2f}, max {np.max(times):.2f}")


def long_chain(length: int, eps: float) -> None:
    """One calibration with k = 4 states and two scenarios."""
    rng = np.random.default_rng(7)
    chains = []
    for i in range(2):
        p = rng.dirichlet(np.ones(4), size=4) * 0.5 + np.eye(4) * 0.5
        chains.append(MarkovChainScenario(p, "stationary", length, name=f"theta{i}"))
    fw = Framework(ScenarioClass(chains))
    start = time.perf_counter()
    cal = OptimalNoiseMechanism(epsilon=eps).calibrate(fw, Count(1))
    ev = cal.evidence
    print(f"T = {length}, k = 4, |Theta| = 2: {time.perf_counter() - start:.1f} s; E|Z| "
          f"{ev.mean_abs:.4g} vs Laplace {ev.laplace_mean_abs:.4g} (ratio {ev.ratio:.4f}); "
          f"audited eps {ev.audit.epsilon:.12f}; core {ev.core}, LP rows {ev.lp_rows}, "
          f"rounds {ev.lp_rounds}")


DATA = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data-real")
CASES = ("A/Sleeping", "A/Spare_Time/TV", "B/Sleeping", "B/Spare_Time/TV", "A-binary",
         "k4-T1440", "k10-T1440-benign", "k10-T1440-sticky")


def ordonez_chain(home: str, folder: str, binary: bool = False) -> MarkovChainScenario:
    """Home ``home``'s chain at 10-minute slots (binary: Sleeping or "awake")."""
    import pufferfish_pgm as pp

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        log = pp.read_ordonez(os.path.join(folder, f"Ordonez{home}_ADLs.txt"), user=home,
                              repair=True)
    days = pp.sequences_from_events(log, slot="10min", fill="Idle").to_numpy().tolist()
    if binary:
        days = [["Sleeping" if s == "Sleeping" else "awake" for s in d] for d in days]
    return MarkovChainScenario.fit(days, pseudocount=0.5, initial="stationary",
                                   name=f"home {home}")


def synthetic_class(k: int, length: int, sticky: bool, seed: int = 7) -> ScenarioClass:
    """|Θ| = 2 chains, rows Dirichlet(1) (benign) or 0.9 I + 0.1 Dirichlet(1) (sticky)."""
    rng = np.random.default_rng(seed)
    mix = (0.9, 0.1) if sticky else (0.0, 1.0)
    chains = [MarkovChainScenario(mix[0] * np.eye(k) + mix[1] * rng.dirichlet(np.ones(k), k),
                                  "stationary", length, name=f"theta{i}") for i in range(2)]
    return ScenarioClass(chains)


def case_problem(case: str, folder: str) -> tuple[Framework, Count]:
    """The framework and query of one ``--real`` case."""
    if case == "A-binary":
        return Framework(ordonez_chain("A", folder, binary=True)), Count("Sleeping")
    if case == "k4-T1440":
        rng = np.random.default_rng(7)
        chains = [MarkovChainScenario(rng.dirichlet(np.ones(4), size=4) * 0.5 + np.eye(4) * 0.5,
                                      "stationary", 1440, name=f"theta{i}") for i in range(2)]
        return Framework(ScenarioClass(chains)), Count(1)
    if case.startswith("k10-T1440"):
        return Framework(synthetic_class(10, 1440, case.endswith("sticky"))), Count(1)
    home, activity = case.split("/", 1)
    return Framework(ordonez_chain(home, folder)), Count(activity)


def use_backend(name: str) -> None:
    """Make every noise LP of this process use the solver ``name`` (benchmark only)."""
    from pufferfish_pgm.mechanisms import _optimal_highs

    chosen = _optimal_highs.highs_module
    _optimal_highs.highs_module = lambda prefer="auto": chosen(name)  # type: ignore[assignment]


def run_case(case: str, folder: str, eps: float) -> dict:
    """One case in this process: CPU s and peak RSS of the calibration, its E|Z| and audit."""
    from pufferfish_pgm.errors import PufferfishWarning

    fw, query = case_problem(case, folder)
    start = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PufferfishWarning)   # usefulness: not measured here
        cal = OptimalNoiseMechanism(epsilon=eps).calibrate(fw, query)
    ev = cal.evidence
    return {"case": case, "cpu_s": round(time.process_time() - start, 2),
            "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
            "mean_abs": ev.mean_abs, "laplace_mean_abs": ev.laplace_mean_abs,
            "laplace_scale": ev.laplace_scale, "audited_eps": ev.audit.epsilon,
            "rounds": ev.lp_rounds, "rows": ev.lp_rows, "core": list(ev.core)}


def real(args: argparse.Namespace) -> None:
    """Every ``--real`` case in a fresh process, one table row each."""
    print("case                  CPU s  peak MB  E|Z| optimal  E|Z| exact Laplace  ratio  "
          "audited eps      rounds  LP rows")
    for case in (args.cases.split(",") if args.cases else CASES):
        cmd = [sys.executable, __file__, "--one", case, "--data", args.data,
               "--epsilon", str(args.epsilon), "--backend", args.backend]
        env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
        if out.returncode:
            print(f"{case:<20} FAILED: {out.stderr.strip().splitlines()[-1:]}")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{case:<20} {r['cpu_s']:7.1f} {r['peak_mb']:8d}  {r['mean_abs']:12.4g}  "
              f"{r['laplace_mean_abs']:18.4g}  {r['mean_abs'] / r['laplace_mean_abs']:.3f}  "
              f"{r['audited_eps']:.12f} {r['rounds']:6d} {r['rows']:8d}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=100)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--long", action="store_true", help="also T = 1,440, k = 4, |Θ| = 2")
    parser.add_argument("--real", action="store_true", help="the issue-23 cases (see above)")
    parser.add_argument("--cases", default="", help="comma-separated subset of the cases")
    parser.add_argument("--data", default=DATA, help="folder of the Ordóñez ADL files")
    parser.add_argument("--backend", default="auto", choices=("auto", "linprog", "scipy",
                                                              "highspy"))
    parser.add_argument("--one", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        use_backend(args.backend)
        print(json.dumps(run_case(args.one, args.data, args.epsilon)))
        return
    if args.real:
        real(args)
        return
    start = time.perf_counter()
    print(f"binary chains, T = {args.length}, eps = {args.epsilon}, stationary start, count "
          "of state 1")
    sweep(args.length, args.epsilon, None)
    sweep(args.length, args.epsilon, 2.0)
    if args.long:
        long_chain(1440, args.epsilon)
    print(f"total time {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
