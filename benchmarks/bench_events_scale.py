"""Event logs at scale: N users x D days of synthetic intervals (~50 a day) in Parquet.

Writes the log (one Parquet file per block of users, ~50 intervals per user and day, four
states), then in fresh processes, each reporting CPU seconds and peak RSS:

* ``fit``: Θ = one chain of 1,440 one-minute slots, by map-reduce over every user: the
  transition counts of each batch straight from its intervals (``event_transition_counts``,
  no slots; ``event_batches`` under a 2 GB cap), summed;
* ``calibrate``: the Markov Quilt Mechanism once, for ``Count(walk)`` on that chain;
* ``release``: the D daily aggregates (minutes walked, summed over users) from the intervals
  (``event_batches`` under a 2 GB cap, ``event_counts`` per batch, no slots), one draw each;
* ``cli``: all of it in one command, ``pufferfish-pgm release --events FOLDER --aggregate
  --slot 1min --window 1d --memory-budget 2GB`` (pass 1 fit, one calibration, pass 2): its
  CPU seconds and peak RSS (a child process);
* ``dask``: the same aggregates on a 2-worker ``LocalCluster`` (one task per file); the CPU
  seconds are the driver's (the workers' are in the wall time), the workers' peak RSS is that
  of the cluster's processes once they have exited.

Needs pyarrow (the ``arrow`` extra) and, for ``dask``, ``dask[distributed]``.
Run: ``python benchmarks/bench_events_scale.py [--users N] [--days D] [--dask]
[--steps S ...]``
"""

from __future__ import annotations

import argparse
import json
import pickle
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

STATES = np.array(["rest", "sit", "walk", "run"], dtype=object)
BLOCK = 1_000            # users per Parquet file
SLOT = "1min"


def write_log(folder: Path, users: int, days: int) -> int:
    """The synthetic log, one file per block of users; returns the number of intervals."""
    import pandas as pd

    rng = np.random.default_rng(0)
    per_user = int((days + 4) * 50)
    limit = (days + 1) * 86_400 + 43_200       # every log ends at noon of day days + 1
    origin = np.datetime64("2024-01-01T00:00:00", "s")
    rows = 0
    for first in range(0, users, BLOCK):
        n = min(BLOCK, users - first)
        seconds = np.maximum(rng.exponential(1728.0, (n, per_user)).astype(np.int64), 1)
        ends = np.cumsum(seconds, axis=1) + rng.integers(0, 86_400, (n, 1))
        starts = ends - seconds
        codes = rng.integers(0, 4, (n, per_user))
        keep = (starts < limit).ravel()
        frame = pd.DataFrame({
            "user": np.repeat(np.arange(first, first + n), per_user).astype(np.int32)[keep],
            "start": origin + starts.ravel()[keep].astype("timedelta64[s]"),
            "end": origin + np.minimum(ends, limit).ravel()[keep].astype("timedelta64[s]"),
            "state": pd.Categorical.from_codes(codes.ravel()[keep], categories=list(STATES))})
        frame.to_parquet(folder / f"users{first:09d}.parquet", index=False)
        rows += len(frame)
    return rows


def _fit(folder: Path) -> object:
    import pufferfish_pgm as pp
    from pufferfish_pgm.scenarios._engine import event_transition_counts

    total = 0
    for batch in pp.scenarios.event_batches(folder, batch_rows=1_000_000, memory_budget="2GB"):
        total = total + event_transition_counts(batch.astype({"state": object}), slot=SLOT,
                                                states=list(STATES))
    return total.chain(pseudocount=1.0, initial="stationary", name="minutes")


def _calibrate(chain: object) -> object:
    import pufferfish_pgm as pp

    return pp.MarkovQuiltMechanism(epsilon=1.0).calibrate(pp.Framework(chain), pp.Count("walk"))


def _day_totals(batch: object) -> object:
    import pufferfish_pgm as pp

    counts = pp.event_counts(batch.astype({"state": object}), "walk", slot=SLOT)
    return counts.groupby(level="day").sum()


def _release(folder: Path, cal: object) -> object:
    import pufferfish_pgm as pp

    totals = None
    for batch in pp.scenarios.event_batches(folder, batch_rows=500_000, memory_budget="2GB"):
        part = _day_totals(batch)
        totals = part if totals is None else totals.add(part, fill_value=0)
    return cal.add_noise(totals.astype(np.int64))


def _dask(folder: Path, cal: object) -> object:
    import pandas as pd
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True) as cluster, \
            Client(cluster) as client:
        files = sorted(folder.glob("*.parquet"))
        parts = client.map(lambda f: _day_totals(pd.read_parquet(f)), files)
        totals = client.submit(lambda ps: pd.concat(ps).groupby(level=0).sum(), parts).result()
    return cal.add_noise(totals.astype(np.int64))


def _cli(folder: Path) -> str:
    """The whole release as one command in a child process (its RSS is the child's)."""
    out = subprocess.run([sys.executable, "-m", "pufferfish_pgm.cli", "release", "--events",
                          str(folder), "--aggregate", "--slot", SLOT, "--window", "1d",
                          "--query", "count:walk", "--memory-budget", "2GB", "--progress"],
                         capture_output=True, text=True, check=False)
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    lines = out.stdout.splitlines()
    batches = sum(" batch " in line for line in out.stderr.splitlines())
    return f"{batches} batch reads; {lines[2][:60]}; {lines[3][:40]} ... {lines[-2][:40]}"


def _short(out: object) -> str:
    """One line: a chain's name and length, or the first and last released days."""
    if hasattr(out, "length"):
        return f"chain {out.name!r}, {out.length} slots, states {out.states}"
    values = out.to_numpy()
    return (f"{len(values)} noisy day totals: {out.index[0]:%m-%d} {values[0]:,} ... "
            f"{out.index[-1]:%m-%d} {values[-1]:,}")


def worker(step: str, folder: str, state: str) -> None:
    start, wall = time.process_time(), time.perf_counter()
    if step == "fit":
        out: object = _fit(Path(folder))
    elif step == "cli":
        out = _cli(Path(folder))
    else:
        cal = pickle.loads(Path(state).read_bytes())
        out = {"calibrate": _calibrate, "release": lambda c: _release(Path(folder), c),
               "dask": lambda c: _dask(Path(folder), c)}[step](cal)
    if step in ("fit", "calibrate"):
        Path(state).write_bytes(pickle.dumps(out))
    cpu = time.process_time() - start
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    if step == "cli":
        cpu += children.ru_utime + children.ru_stime
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    child = children.ru_maxrss * 1024
    shown = out if isinstance(out, str) else getattr(out, "summary", lambda: None)() or _short(out)
    print(json.dumps({"step": step, "cpu": cpu, "wall": time.perf_counter() - wall,
                      "peak": peak, "child_peak": child, "out": shown}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument("--days", type=int, default=30)
    parser.add_argument("--dask", action="store_true")
    parser.add_argument("--steps", nargs="+",
                        choices=["fit", "calibrate", "release", "cli", "dask"],
                        help="only these steps (calibrate needs fit; release and dask need "
                             "calibrate)")
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker)
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "log"
        folder.mkdir()
        t = time.perf_counter()
        rows = write_log(folder, args.users, args.days)
        size = sum(f.stat().st_size for f in folder.iterdir())
        print(f"{args.users:,} users x {args.days} days: {rows:,} intervals, "
              f"{size / 2**20:,.0f} MB of Parquet (written in {time.perf_counter() - t:.0f} s)")
        state = Path(tmp) / "state.pickle"
        steps = args.steps or ["fit", "calibrate", "release", "cli"] + (["dask"] if args.dask
                                                                          else [])
        for step in steps:
            out = subprocess.run([sys.executable, __file__, "--worker", step, str(folder),
                                  str(state)], capture_output=True, text=True)
            if out.returncode:
                print(f"{step}: failed\n{out.stderr[-2000:]}")
                return
            m = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"{step:>9}: {m['cpu']:8.1f} CPU s ({m['wall']:.0f} s wall), "
                  f"peak RSS {m['peak'] / 2**30:5.2f} GB"
                  + (f" (workers {m['child_peak'] / 2**30:.2f} GB)" if step == "dask" else "")
                  + (f" (the command {m['child_peak'] / 2**30:.2f} GB)" if step == "cli" else "")
                  + f"  {m['out'][:160]}")


if __name__ == "__main__":
    main()
