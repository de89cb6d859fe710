"""Contact networks as undirected priors (issue 24, item 3): MQM and exact, or the refusal.

Barabási–Albert (m = 2) and Watts–Strogatz (k = 4, p = 0.1) graphs of 100, 1,000 and 10,000 people
as Ising-type Markov networks (``pp.scenarios.contagion(graph, directed=False)``, base 0.05,
spread 0.2 and 0.4: two scenarios), count of "infected", ε = 1. Each case runs in a fresh
process (CPU seconds and peak RSS of that process; a case that does not finish within
``--timeout`` seconds is reported as such). Prints a Markdown table.

MQM's result says how many quilts were trivial and why (``trivial_reasons``).

Run: ``python benchmarks/bench_contact_undirected.py [--sizes 100 1000 10000]
[--mechanisms mqm exact] [--timeout 300]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from _common import calibrated


def _framework(kind: str, n: int):
    import networkx as nx

    import pufferfish_pgm as pp

    graph = (nx.barabasi_albert_graph(n, 2, seed=1) if kind == "ba"
             else nx.watts_strogatz_graph(n, 4, 0.1, seed=1))
    members = [pp.scenarios.contagion(graph, base=0.05, spread=s, directed=False,
                                      name=f"spread {s}") for s in (0.2, 0.4)]
    return pp.Framework(pp.ScenarioClass(members))


def run_one(kind: str, n: int, mechanism: str) -> dict:
    """One case in this process: the scale or the refusal, CPU seconds, peak RSS."""
    import pufferfish_pgm as pp

    start = time.process_time()
    fw = _framework(kind, n)
    query = pp.Count("infected")
    return {"case": kind, "n": n, "mechanism": mechanism,
            **calibrated(fw, query, mechanism, start)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--mechanisms", nargs="+", default=["mqm", "exact"])
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--one", nargs=3, metavar=("KIND", "N", "MECHANISM"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one[0], int(args.one[1]), args.one[2])))
        return
    print("| graph | people | mechanism | result | CPU s | peak RSS MB |")
    print("|---|---|---|---|---|---|")
    for kind in ("ba", "ws"):
        for n in args.sizes:
            for mech in args.mechanisms:
                started = time.perf_counter()
                try:
                    done = subprocess.run([sys.executable, __file__, "--one", kind, str(n),
                                           mech], capture_output=True, text=True,
                                          timeout=args.timeout, check=False)
                    row = json.loads(done.stdout.strip().splitlines()[-1]) if done.stdout \
                        else {"result": f"crashed: {done.stderr.strip()[-200:]}",
                              "cpu_s": "", "peak_mb": ""}
                except subprocess.TimeoutExpired:
                    row = {"result": f"did not finish in {args.timeout:.0f} s (wall "
                                     f"{time.perf_counter() - started:.0f} s)", "cpu_s": "",
                           "peak_mb": ""}
                print(f"| {kind} | {n} | {mech} | {row['result']} | {row['cpu_s']} "
                      f"| {row['peak_mb']} |", flush=True)


if __name__ == "__main__":
    main()
