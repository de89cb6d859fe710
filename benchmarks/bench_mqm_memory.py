"""Peak memory of MQM's network plan: contact networks, households and the real networks.

MQM (``MarkovQuiltMechanism(epsilon=1).calibrate``) on

* ``pp.scenarios.contagion`` on Barabási–Albert (m = 2) and Watts–Strogatz (k = 4, p = 0.1)
  graphs of 1,000 and 10,000 people (base 0.05, spread 0.2 and 0.4: two scenarios),
  directed (noisy-OR) and undirected (Ising-type), count of "infected";
* the same Barabási–Albert noisy-OR network with one isolated person added (``ba+1``: two
  components, so the component planner plans a giant component), 2,000 and 10,000 people;
* ``pp.households`` of about 10,000 people (a parent and 1 to 3 children per household, as
  ``examples/household_survey.py``; spread 0.3 and 0.7), count of "yes";
* the real networks of ``shared/models-real`` (secrets on every node, the count of the first
  node's first state over the nodes that have it).

Each case runs in a fresh process (run it under ``ulimit -v 8000000``). Printed per case:
CPU seconds of ``calibrate``, the peak RSS of the process (MB, ``ru_maxrss``; the build
included) and the RSS growth during ``calibrate``, the plan's entries and what they hold (the
largest nearby set and quilt, and the bytes of the entries with their node tuples and remote
sets, each shared object counted once: ``plan MB``), and the scale or the refusal.

Run: ``python benchmarks/bench_mqm_memory.py [--sizes 1000 10000] [--skip-real]``
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

MODELS = Path(__file__).resolve().parents[2] / "shared" / "models-real"
REAL = ("asia", "sachs", "child", "insurance", "alarm", "win95pts", "hepar2", "andes")


def _rss_mb() -> float:
    """The process's peak RSS so far, in MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def plan_bytes(plan: Any) -> int:
    """Bytes of the plan's entries, their node tuples and remote sets (shared objects once)."""
    seen: set[int] = set()
    total = 0

    def add(obj: Any) -> None:
        nonlocal total
        if id(obj) not in seen:
            seen.add(id(obj))
            total += sys.getsizeof(obj)

    for e in plan:
        add(e)
        for part in (e.quilt, e.nearby, e.remote):
            add(part)
        for name in ("nodes", "universe", "kept"):
            if hasattr(e.remote, name):
                add(getattr(e.remote, name))
    return total


def _framework(kind: str, n: int, directed: bool) -> tuple[Any, Any]:
    import networkx as nx

    import pufferfish_pgm as pp

    if kind == "households":
        rows: list = []
        h = 0
        while len(rows) < n:
            rows += [(h, "parent")] + [(h, "child")] * (1 + h % 3)
            h += 1
        cls = pp.ScenarioClass([pp.households(rows, base=0.1, spread=s, name=f"spread {s}")
                                for s in (0.3, 0.7)])
        return pp.Framework(cls), pp.Count("yes")
    if kind in REAL:
        bn = pp.scenarios.BayesianNetworkScenario.from_file(MODELS / f"{kind}.bif")
        first = bn.states_of(bn.nodes[0])[0]
        nodes = [v for v in bn.nodes if first in bn.states_of(v)]
        return pp.Framework(bn), pp.Count(first, nodes=nodes)
    graph = (nx.barabasi_albert_graph(n, 2, seed=1) if kind.startswith("ba")
             else nx.watts_strogatz_graph(n, 4, 0.1, seed=1))
    if kind == "ba+1":
        graph.add_node(n)
    members = [pp.scenarios.contagion(graph, base=0.05, spread=s, directed=directed,
                                      name=f"spread {s}") for s in (0.2, 0.4)]
    return pp.Framework(pp.ScenarioClass(members)), pp.Count("infected")


def run_one(kind: str, n: int, directed: bool) -> dict:
    """One case in this process."""
    import pufferfish_pgm as pp

    fw, query = _framework(kind, n, directed)
    before = _rss_mb()
    start = time.process_time()
    row: dict = {"people": len(fw.scenarios.nodes)}
    try:
        cal = pp.MarkovQuiltMechanism(epsilon=1.0).calibrate(fw, query)
        plan = cal.plan
        row.update(result=f"scale {cal.scale:.4g}", entries=len(plan),
                   nearby=max(len(e.nearby) for e in plan if not e.trivial) if any(
                       not e.trivial for e in plan) else 0,
                   quilt=max(len(e.quilt) for e in plan),
                   trivial=sum(e.trivial for e in plan),
                   plan_mb=round(plan_bytes(plan) / 2**20, 1))
    except pp.PufferfishError as err:
        row["result"] = f"{type(err).__name__}: {str(err)[:160]}"
    row.update(cpu_s=round(time.process_time() - start, 2), peak_mb=round(_rss_mb()),
               growth_mb=round(_rss_mb() - before))
    return row


def cases(sizes: list[int], real: bool) -> list[tuple[str, int, str]]:
    out = [(kind, n, model) for n in sizes for kind in ("ba", "ws")
           for model in ("directed", "undirected")]
    out += [("ba+1", n, "directed") for n in (2000, 10_000)]
    out.append(("households", 10_000, "directed"))
    if real:
        out += [(name, 0, "directed") for name in REAL if (MODELS / f"{name}.bif").exists()]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--skip-real", action="store_true")
    parser.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one[0], int(args.one[1]), args.one[2] == "directed")))
        return
    print("| case | people | model | calibrate CPU s | peak MB | growth MB | entries "
          "| max nearby (non-trivial) | max quilt | trivial | plan MB | result |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for kind, n, model in cases(args.sizes, not args.skip_real):
        done = subprocess.run([sys.executable, __file__, "--one", kind, str(n), model],
                              capture_output=True, text=True, check=False)
        row = (json.loads(done.stdout.strip().splitlines()[-1]) if done.stdout.strip()
               else {"result": f"crashed: {done.stderr.strip()[-300:]}"})
        cells = [row.get(k, "") for k in ("cpu_s", "peak_mb", "growth_mb", "entries", "nearby",
                                             "quilt", "trivial", "plan_mb", "result")]
        print(f"| {kind} | {row.get('people', n):,} | {model} | "
              + " | ".join(str(c) for c in cells) + " |", flush=True)


if __name__ == "__main__":
    main()
