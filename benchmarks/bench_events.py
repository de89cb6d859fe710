"""Event logs to slots: one user's year of one-minute slots, CPU seconds and peak memory.

Logs: about 100,000 random intervals of 30 s to 10 min with gaps, and 525,600 intervals
(one a minute), each with times as ISO strings ("2023-01-01 00:00:20"), as datetime64
columns, as month-first strings ("01/01/2023 00:00:20", the day/month check reads them all)
and as strings with a UTC offset ("2023-01-01T00:00:20+01:00", converted to UTC). CPU seconds
are the best of ``--repeat`` runs (``time.process_time``); peak memory is traced by
``tracemalloc`` in a separate run (numpy and pandas report their buffers to it).

Run: ``python benchmarks/bench_events.py [--repeat N]``
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from collections.abc import Callable

import numpy as np
import pandas as pd

import pufferfish_pgm as pp

STATES = np.array(["Sleeping", "Eating", "TV", "Walking", "Work", "Toilet"], dtype=object)
ORIGIN = np.datetime64("2023-01-01T00:00:00", "s")


def random_year(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Start and length in seconds of about 100,000 intervals over 2023."""
    rng = np.random.default_rng(seed)
    n = 110_000
    length = rng.integers(30, 600, n)
    gap = rng.integers(0, 60, n) * (rng.random(n) < 0.3)
    start = np.cumsum(length + gap) - length - gap
    keep = start + length < 367 * 86_400
    return start[keep], length[keep]


def minute_year() -> tuple[np.ndarray, np.ndarray]:
    """525,600 intervals of one minute, from 00:00:20 on."""
    start = 20 + 60 * np.arange(525_600)
    return start, np.full(len(start), 60)


def as_log(start: np.ndarray, length: np.ndarray, form: str) -> pd.DataFrame:
    begin = ORIGIN + start.astype("timedelta64[s]")
    end = begin + length.astype("timedelta64[s]")
    states = STATES[np.arange(len(start)) % len(STATES)]
    if form == "datetime64":
        return pd.DataFrame({"user": "u", "start": begin, "end": end, "state": states})
    b, e = pd.Series(begin), pd.Series(end)
    if form == "ISO strings":
        b, e = b.dt.strftime("%Y-%m-%d %H:%M:%S"), e.dt.strftime("%Y-%m-%d %H:%M:%S")
    elif form == "month-first strings":
        b, e = b.dt.strftime("%m/%d/%Y %H:%M:%S"), e.dt.strftime("%m/%d/%Y %H:%M:%S")
    else:
        b, e = (x.dt.strftime("%Y-%m-%dT%H:%M:%S") + "+01:00" for x in (b, e))
    return pd.DataFrame({"user": "u", "start": b, "end": e, "state": states})


def measure(run: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Best CPU seconds of ``repeat`` runs, and the peak traced memory (MB) of one more."""
    best = np.inf
    for _ in range(repeat):
        clock = time.process_time()
        run()
        best = min(best, time.process_time() - clock)
    tracemalloc.start()
    run()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return best, peak / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"pandas {pd.__version__}, numpy {np.__version__}")
    for name, (start, length) in (("100,000 random", random_year()),
                                  ("525,600 minutes", minute_year())):
        for form in ("ISO strings", "datetime64", "month-first strings", "UTC offsets"):
            log = as_log(start, length, form)
            for rule in ("midpoint", "majority"):
                def run(log: pd.DataFrame = log, rule: str = rule) -> object:
                    return pp.sequences_from_events(log, slot="1min", fill="Idle", rule=rule)
                shape = run().shape
                cpu, peak = measure(run, args.repeat)
                print(f"{name:>15}, {form:>19}, {rule:>8}: {cpu:5.2f} CPU s, "
                      f"peak {peak:6.0f} MB, rows x slots {shape}")


if __name__ == "__main__":
    main()
