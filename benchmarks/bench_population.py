"""Correlated records at population scale (issue 24): households and contact networks.

Cases, count of the second state ("yes" / "infected"), ε = 1, two scenarios each:

* ``households``: 10,000 people in 2,500 households of 3 types (a parent with 2, 3 or 4
  children, built with ``pp.households``), spread 0.3 and 0.7: exact calibration, MQM, and
  the exact audit of entry DP's scale (what entry DP really leaks);
* ``ba`` / ``ws``: Barabási–Albert (m = 2) and Watts–Strogatz (k = 4, p = 0.1) graphs of 100,
  1,000 and 10,000 people, noisy-OR contagion (``pp.scenarios.contagion``, base 0.05, spread
  0.2 and 0.4): MQM and exact, or the refusal and how long it took. MQM's result says how
  many quilts were trivial and why (``trivial_reasons``).

Each case runs in a fresh process (CPU seconds and peak RSS of that process; a case that does
not finish within ``--timeout`` seconds is reported as such). Prints a Markdown table.

Run: ``python benchmarks/bench_population.py [--sizes 100 1000] [--mechanisms mqm]
[--timeout 300]``
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

from _common import calibrated


def _households(spread: float):
    import pufferfish_pgm as pp

    rows = []
    for h in range(2500):
        rows.append((h, "parent"))
        rows += [(h, "child")] * (2 + h % 3)
    return pp.households(rows, base=0.1, spread=spread, name=f"spread {spread}")


def _graph(kind: str, n: int):
    import networkx as nx

    if kind == "ba":
        return nx.barabasi_albert_graph(n, 2, seed=1)
    return nx.watts_strogatz_graph(n, 4, 0.1, seed=1)


def _framework(kind: str, n: int):
    import pufferfish_pgm as pp

    if kind == "households":
        members = [_households(0.3), _households(0.7)]
    else:
        g = _graph(kind, n)
        members = [pp.scenarios.contagion(g, base=0.05, spread=s, name=f"spread {s}")
                   for s in (0.2, 0.4)]
    return pp.Framework(pp.ScenarioClass(members)), members[0].states_of(members[0].nodes[0])[1]


def run_one(kind: str, n: int, mechanism: str) -> dict:
    """One case in this process: the scale or the refusal, CPU seconds, peak RSS."""
    import pufferfish_pgm as pp

    start = time.process_time()
    fw, state = _framework(kind, n)
    query = pp.Count(state)
    out: dict = {"case": kind, "n": len(fw.scenarios.nodes), "mechanism": mechanism}
    if mechanism != "audit-entry-dp":
        return {**out, **calibrated(fw, query, mechanism, start)}
    try:
        cal = pp.EntryDPMechanism(epsilon=1.0).calibrate(fw, query)
        real = pp.audit(fw, query, cal.scale).epsilon
        out["result"] = f"scale {cal.scale:.4g}: real ε {real:.4g}"
    except pp.PufferfishError as err:
        out["result"] = f"refused: {type(err).__name__}: {str(err)[:160]}"
    out["cpu_s"] = round(time.process_time() - start, 2)
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--mechanisms", nargs="+", default=["mqm", "exact"])
    parser.add_argument("--one", nargs=3, metavar=("KIND", "N", "MECHANISM"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one[0], int(args.one[1]), args.one[2])))
        return
    cases = [("households", 10000, m) for m in ("exact", "mqm", "audit-entry-dp")]
    cases += [(k, n, m) for k in ("ba", "ws") for n in args.sizes for m in args.mechanisms]
    print("| case | people | mechanism | result | CPU s | peak RSS MB |")
    print("|---|---|---|---|---|---|")
    for kind, n, mech in cases:
        started = time.perf_counter()
        try:
            done = subprocess.run([sys.executable, __file__, "--one", kind, str(n), mech],
                                  capture_output=True, text=True, timeout=args.timeout,
                                  check=False)
            row = json.loads(done.stdout.strip().splitlines()[-1]) if done.stdout else {
                "result": f"crashed: {done.stderr.strip()[-160:]}", "cpu_s": "", "peak_mb": ""}
        except subprocess.TimeoutExpired:
            row = {"result": f"did not finish in {args.timeout:.0f} s (wall "
                             f"{time.perf_counter() - started:.0f} s)", "cpu_s": "",
                   "peak_mb": ""}
        print(f"| {kind} | {row.get('n', n)} | {mech} | {row['result']} | {row['cpu_s']} "
              f"| {row['peak_mb']} |", flush=True)


if __name__ == "__main__":
    main()
