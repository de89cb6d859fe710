"""How fast exact Laplace refuses a contact network too wide for exact inference (issue 24).

Barabási–Albert (m = 2) and Watts–Strogatz (k = 4, p = 0.1) graphs of 1,000 and 10,000
people, ``pp.scenarios.contagion`` (base 0.05, spread 0.2 and 0.4: two scenarios), directed
(noisy-OR) and undirected (Ising-type), count of "infected", ε = 1. Each case runs in a fresh
process; CPU seconds of the import and the build, then of the calibrate call up to the
exception (the refusal), and the first line of the message.

Run: ``python benchmarks/bench_network_refusal.py [--sizes 1000 10000]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time


def run_one(kind: str, n: int, directed: bool) -> dict:
    """One case in this process: build and refusal CPU seconds, and the message."""
    start = time.process_time()
    import networkx as nx

    import pufferfish_pgm as pp

    graph = (nx.barabasi_albert_graph(n, 2, seed=1) if kind == "ba"
             else nx.watts_strogatz_graph(n, 4, 0.1, seed=1))
    members = [pp.scenarios.contagion(graph, base=0.05, spread=s, directed=directed,
                                      name=f"spread {s}") for s in (0.2, 0.4)]
    fw = pp.Framework(pp.ScenarioClass(members))
    built = time.process_time()
    try:
        cal = pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(fw, pp.Count("infected"))
        result = f"scale {cal.scale:.4g}"
    except pp.PufferfishError as err:
        result = f"{type(err).__name__}: {err}"
    done = time.process_time()
    return {"build_s": round(built - start, 2), "refuse_s": round(done - built, 3),
            "result": result}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one[0], int(args.one[1]), args.one[2] == "directed")))
        return
    print("| graph | people | model | import+build CPU s | calibrate→refusal CPU s | message |")
    print("|---|---|---|---|---|---|")
    for n in args.sizes:
        for kind in ("ba", "ws"):
            for model in ("directed", "undirected"):
                done = subprocess.run([sys.executable, __file__, "--one", kind, str(n), model],
                                      capture_output=True, text=True, check=False)
                row = (json.loads(done.stdout.strip().splitlines()[-1]) if done.stdout
                       else {"build_s": "", "refuse_s": "",
                             "result": f"crashed: {done.stderr.strip()[-300:]}"})
                print(f"| {kind} | {n:,} | {model} | {row['build_s']} | {row['refuse_s']} "
                      f"| {row['result']} |", flush=True)


if __name__ == "__main__":
    main()
