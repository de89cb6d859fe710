"""Release at scale: N users x T slots of int8 codes, against the numpy floor on the same codes.

Each measurement runs in a fresh process that loads the codes from a ``.npy`` file and
reports its CPU seconds (load and work apart) and its peak RSS:

* ``numpy count``: the floor, ``(codes == s).sum(axis=1)`` (and its sum, for the aggregate);
* ``release ...``: ``Calibration.release`` of a Count (and a WindowedCount of hours), one
  noisy answer per user and one noisy aggregate; integer codes, validated, secure exact
  discrete Laplace noise (the default ``rng=None``);
* ``answers + add_noise``: the partition kernel of ``Calibration.answers`` on the same codes;
* ``string labels``: the same release on labels (``--labels``, on a smaller N: labels are
  factorised by pandas, not read as codes).

Run: ``python benchmarks/bench_release.py [--users N] [--length T] [--labels]``
(10^6 x 1,440 needs ~1.5 GB for the codes, plus as much again while they are written).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

P = [[0.9, 0.06, 0.03, 0.01], [0.05, 0.9, 0.04, 0.01],
     [0.02, 0.1, 0.85, 0.03], [0.01, 0.04, 0.15, 0.8]]
NAMES = ["rest", "sit", "walk", "run"]
KINDS = ["numpy count", "release per user", "release aggregate",
         "windowed per user", "windowed aggregate", "answers + add_noise"]


def _calibration(length: int, labels: bool, windowed: bool):  # noqa: ANN202
    import pufferfish_pgm as pp

    states = NAMES if labels else None
    mc = pp.MarkovChainScenario(np.array(P), "stationary", length, states=states)
    walk = mc.states[2]
    query = pp.WindowedCount(walk, 60) if windowed else pp.Count(walk)
    # the scale of MQM on this chain is not what is measured: a fixed scale, as calibrated
    return pp.Calibration(mechanism="MarkovQuilt", epsilon=1.0, scale=3.0, query=query,
                          framework=pp.Framework(mc))


def _work(kind: str, codes: np.ndarray, labels: bool) -> object:
    if kind == "numpy count":
        counts = np.count_nonzero(codes == 2, axis=1)
        return counts, counts.sum()
    data = np.array(NAMES, dtype=object)[codes] if labels else codes
    cal = _calibration(codes.shape[1], labels, kind.startswith("windowed"))
    if kind == "answers + add_noise":
        return cal.add_noise(cal.answers(data))
    return cal.release(data, per_user=kind.endswith("per user")).value


def worker(kind: str, path: str, labels: bool) -> None:
    """One measurement in this process: print a JSON line."""
    start = time.process_time()
    codes = np.load(path)
    loaded = time.process_time()
    _work(kind, codes, labels)
    done = time.process_time()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024     # Linux: KiB
    print(json.dumps({"kind": kind, "load": loaded - start, "work": done - loaded,
                      "peak": peak, "data": codes.nbytes}))


def _measure(kind: str, path: Path, labels: bool) -> dict:
    out = subprocess.run([sys.executable, __file__, "--worker", kind, str(path)]
                         + (["--labels"] if labels else []),
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--length", type=int, default=1440)
    parser.add_argument("--labels", action="store_true")
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker[0], args.worker[1], args.labels)
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "codes.npy"
        rng = np.random.default_rng(0)
        codes = np.lib.format.open_memmap(path, mode="w+", dtype=np.int8,
                                          shape=(args.users, args.length))
        for lo in range(0, args.users, 65_536):
            codes[lo:lo + 65_536] = rng.integers(0, 4, codes[lo:lo + 65_536].shape, np.int8)
        codes.flush()
        del codes
        with open(path, "rb") as warm:      # the page cache holds the file for every worker
            while warm.read(1 << 26):
                pass
        print(f"{args.users:,} users x {args.length:,} slots "
              f"({'string labels' if args.labels else 'int8 codes'}), fresh process each:")
        print(f"{'':>20} {'load s':>7} {'CPU s':>7} {'x floor':>8} {'peak RSS':>9} {'x data':>7}"
              "   (x floor: load + CPU against the numpy count's)")
        floor = None
        for kind in KINDS:
            m = _measure(kind, path, args.labels if kind != "numpy count" else False)
            floor = floor or m["load"] + m["work"]
            print(f"{kind:>20} {m['load']:7.2f} {m['work']:7.2f} "
                  f"{(m['load'] + m['work']) / floor:8.2f} {m['peak'] / 2**30:7.2f} GB "
                  f"{m['peak'] / m['data']:7.2f}")


if __name__ == "__main__":
    main()
