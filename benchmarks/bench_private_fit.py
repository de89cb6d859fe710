"""The private fit on the Ordóñez days: what user-level DP on the fit costs the release.

Both homes at 10-minute slots (``read_ordonez(repair=True)``, ``sequences_from_events(fill=
"Idle")``), one user = one day (144 slots), the count of the most frequent non-idle activity,
ε = 1 for the release. For ε_fit ∈ {1, 5} and max_steps ∈ {143, 24}, five seeded private fits
(pseudocount 1) against the exact fit (pseudocount 1): the exact Laplace scale calibrated on
each, and the realised ε of the exact fit's calibration audited against the private chain
(and of the private calibration against the exact fit): how far apart the two beliefs are.
The homes have 12 and 21 days, so a user-level private fit there is mostly noise; the same is
then run on synthetic cohorts of 1,000 and 10,000 days drawn from home A's exact fit, to show
how many users a private fit needs.

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_private_fit.py [--data FOLDER]``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections import Counter
from pathlib import Path

import numpy as np

import pufferfish_pgm as pp
from pufferfish_pgm.scenarios._private_fit import private_transition_counts

DATA = Path(__file__).resolve().parents[2] / "shared" / "data-real"


def _days(home: str, data: Path) -> tuple[list, tuple, str]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the repair's report of what it changed
        wide = pp.sequences_from_events(pp.read_ordonez(data / f"Ordonez{home}_ADLs.txt",
                                                        repair=True), slot="10min",
                                        fill="Idle")
    days = [list(row) for row in wide.itertuples(index=False)]
    counts = Counter(v for row in days for v in row)
    state = next(s for s, _ in counts.most_common() if s != "Idle")
    return days, tuple(sorted(counts)), state


def _exact(chain: pp.MarkovChainScenario, query: pp.Query) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pp.UsefulnessWarning)
        return pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(pp.Framework(chain),
                                                               query).scale


def _rows(label: str, days: list, states: tuple, query: pp.Query,
          exact_chain: pp.MarkovChainScenario) -> None:
    base = _exact(exact_chain, query)
    for eps_fit in (1.0, 5.0):
        for steps in (143, 24):
            start = time.process_time()
            scales, on_private, on_exact = [], [], []
            for seed in range(5):
                private = private_transition_counts(
                    days, states=states, length=144, epsilon=eps_fit, max_steps=steps,
                    rng=np.random.default_rng(seed))
                chain = private.chain(initial="stationary")
                scales.append(_exact(chain, query))
                on_private.append(pp.audit(pp.Framework(chain), query, base).epsilon)
                on_exact.append(pp.audit(pp.Framework(exact_chain), query,
                                         scales[-1]).epsilon)
            cpu = time.process_time() - start
            print(f"| {label} | {len(days):,} | {eps_fit:g} | {steps} | {base:.4g} | "
                  f"{min(scales):.4g}–{max(scales):.4g} | {min(on_private):.3g}–"
                  f"{max(on_private):.3g} | {min(on_exact):.3g}–{max(on_exact):.3g} | "
                  f"{cpu:.1f} |", flush=True)


def _synthetic(chain: pp.MarkovChainScenario, n: int, seed: int) -> list:
    """``n`` days drawn from ``chain`` (vectorised over days, a loop over the 144 slots)."""
    rng = np.random.default_rng(seed)
    p, q = np.asarray(chain.transition), np.asarray(chain.initial_distribution)
    cum = np.cumsum(p, axis=1)
    x = np.empty((n, chain.length), dtype=np.int64)
    x[:, 0] = rng.choice(chain.k, size=n, p=q)
    for t in range(1, chain.length):
        x[:, t] = np.minimum((rng.random(n)[:, None] > cum[x[:, t - 1]]).sum(axis=1),
                             chain.k - 1)
    names = np.array(chain.states, dtype=object)
    return [list(row) for row in names[x]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    print("| home | days | ε_fit | max_steps | exact scale (exact fit) | exact scale (private, "
          "5 seeds) | ε of exact-fit cal. on private chain | ε of private cal. on exact fit | "
          "CPU s |\n|---|---|---|---|---|---|---|---|---|")
    for home in ("A", "B"):
        days, states, state = _days(home, args.data)
        exact_chain = pp.transition_counts(days, states=states).chain(
            pseudocount=1.0, initial="stationary", length=144)
        _rows(home, days, states, pp.Count(state), exact_chain)
        if home == "A":
            source, query_a = exact_chain, pp.Count(state)
    for n in (1_000, 10_000):
        days = _synthetic(source, n, seed=n)
        exact_chain = pp.transition_counts(days, states=source.states).chain(
            pseudocount=1.0, initial="stationary", length=144)
        _rows("A synthetic", days, tuple(source.states), query_a, exact_chain)


if __name__ == "__main__":
    main()
