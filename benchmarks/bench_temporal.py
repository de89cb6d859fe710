"""Per-slot DP's temporal leakage on the real Ordóñez chains, and what our mechanisms cost.

Run: ``python benchmarks/bench_temporal.py`` (needs ../shared/data-real/OrdonezA_ADLs.txt and
OrdonezB_ADLs.txt). For each home: the chain fitted (pseudocount 0, stationary law) to the
10-minute slots of every day (fill "Idle"); per-slot ε-DP on the slot's value (e.g. Laplace of
scale 2/ε on the one-hot indicator) over a day (144 slots) and a week (1,008 slots); its
temporal leakage by the definition of Cao et al. (max over slots of TPL_t, max over state
pairs) and the supremum over an unbounded horizon. Then, on the day's count of the most
frequent non-idle activity, the Laplace scale that MQM and the exact mechanism need for
ε = that day's TPL, next to the noise per-slot DP puts on the same count (the sum of 144
per-slot Laplace(2/ε) coordinates: standard deviation sqrt(144 · 2) · 2/ε), and the scale they
need for the guarantee per-slot DP claims but does not give over the day (ε itself). The
chains are fitted with pseudocount 0 (the maximum-likelihood chain, as ``fit`` defaults) and
0.5 (every transition possible, as in tests/scenarios/test_events.py).
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

import pufferfish_pgm as pp
from pufferfish_pgm.privacy_loss import leakage_supremum, temporal_leakage
from pufferfish_pgm.scenarios import read_ordonez, sequences_from_events

DATA = Path(__file__).resolve().parents[2] / "shared" / "data-real"


def main() -> None:
    homes = {h: DATA / f"Ordonez{h}_ADLs.txt" for h in "AB"}
    if not all(p.is_file() for p in homes.values()):
        sys.exit(f"the Ordóñez files are not in {DATA}")
    print("home pc   k eps/slot  day TPL  week TPL  sup TPL  count state     per-slot sd   "
          "MQM@TPL  exact@TPL   MQM@eps  exact@eps")
    for (home, path), pc in [(h, c) for h in homes.items() for c in (0.0, 0.5)]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")          # the repair's report of what it changed
            wide = sequences_from_events(read_ordonez(path, repair=True), slot="10min",
                                         fill="Idle")
        chain = pp.MarkovChainScenario.fit(wide, initial="stationary", pseudocount=pc,
                                           name=f"Ordonez{home}")
        counts = Counter(v for row in wide.itertuples(index=False) for v in row)
        state = next(s for s, _ in counts.most_common() if s != "Idle")
        fw = pp.Framework(chain.with_length(144))
        query = pp.Count(state)
        for eps in (0.1, 1.0):
            day = temporal_leakage(chain.transition, [eps] * 144).max_total
            week = temporal_leakage(chain.transition, [eps] * 1008).max_total
            sup = leakage_supremum(chain.transition, eps).total
            sd = math.sqrt(144 * 2) * 2 / eps
            t0 = time.perf_counter()
            scales = [mech(epsilon=e).calibrate(fw, query).scale
                      for e in (day, eps)
                      for mech in (pp.MarkovQuiltMechanism, pp.ExactLaplaceMechanism)]
            secs = time.perf_counter() - t0
            print(f"{home:4} {pc:3} {chain.k:2} {eps:8.1f} {day:8.3f} {week:9.3f} {sup:8.3f}  "
                  f"{state[:14]:14} {sd:11.1f} " + " ".join(f"{x:9.2f}" for x in scales)
                  + f"   ({secs:.1f} s)")


if __name__ == "__main__":
    main()
