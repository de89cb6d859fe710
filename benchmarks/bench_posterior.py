"""Posterior classes on the Ordóñez homes (issue 22, items 2-3): time to calibrate Θ of
n = 688 Dirichlet-posterior chains (coverage 0.99, confidence 0.999) at T = 144 with MQM and
exact Laplace, and the realised ε of calibrations against beliefs off their class.

Data: ``read_ordonez(repair=True)``, ``sequences_from_events(slot="10min", fill="Idle")``,
one sequence per day (T = 144); the query is the daily count of the most frequent non-idle
activity (as ``bench_exact_quilt.py --table``). Θ = ``ScenarioClass.from_posterior(days,
seed=2026)`` (prior 1 per cell, the start drawn too); "fit" is the homogeneous maximum-
likelihood chain with its empirical start (``MarkovChainScenario.fit``, pseudocount 0).

Rows (each in its own process, so that the peak memory is its own; CPU seconds):

* ``draw``: drawing the class;
* ``MQM class`` / ``exact class``: the mechanism on the whole class;
* ``exact memberwise``: ``accountant._memberwise.memberwise_scale`` (one member calibrated,
  the others audited at the running maximum, failing ones calibrated);
* ``robust``: ``pp.robustness`` of the exact calibrations of the class and of the fit against
  200 fresh posterior draws (seed 7) and against the fit.

Run: ``python benchmarks/bench_posterior.py`` (both homes, every row), or
``--one HOME ROW`` for one.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

import pufferfish_pgm as pp
from pufferfish_pgm.accountant._memberwise import memberwise_scale

DATA = Path(__file__).resolve().parents[2] / "shared" / "data-real"
ROWS = ("draw", "MQM class", "exact class", "exact memberwise", "robust")
SEED, FRESH = 2026, 200


def _days(home: str) -> tuple:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the repair's report of what it changed
        wide = pp.sequences_from_events(pp.read_ordonez(DATA / f"Ordonez{home}_ADLs.txt",
                                                        repair=True), slot="10min", fill="Idle")
    counts = Counter(v for row in wide.itertuples(index=False) for v in row)
    return wide, pp.Count(next(s for s, _ in counts.most_common() if s != "Idle"))


def _peak() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _robust(cls: pp.ScenarioClass, fit: pp.MarkovChainScenario, query: pp.Query) -> str:
    mech = pp.ExactLaplaceMechanism(epsilon=1.0)
    fresh = cls.posterior.draw(FRESH, seed=7)
    out = []
    for name, fw in (("class", pp.Framework(cls)), ("fit", pp.Framework(fit))):
        cal = mech.calibrate(fw, query)
        off = pp.robustness(cal, fresh)
        on_fit = pp.robustness(cal, fit).realised[0]
        out.append(f"{name}: scale {cal.scale:.4g}, fresh draws: {100 * off.exceed:.3g}% above "
                   f"ε, q0.5 {off.quantiles[1][1]:.3g}, q0.99 {off.quantiles[3][1]:.3g}, max "
                   f"{off.quantiles[4][1]:.3g}; the fit: ε {on_fit:.3g}")
    return " / ".join(out)


def _one(home: str, row: str) -> None:
    wide, query = _days(home)
    start = time.process_time()
    cls = pp.ScenarioClass.from_posterior(wide, seed=SEED)
    fit = pp.MarkovChainScenario.fit(wide, name="fit").with_length(wide.shape[1])
    fw, note, scale = pp.Framework(cls), "", float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pp.UsefulnessWarning)
        if row == "MQM class":
            start, scale = time.process_time(), pp.MarkovQuiltMechanism(epsilon=1.0).calibrate(
                fw, query).scale
        elif row == "exact class":
            start, scale = time.process_time(), pp.ExactLaplaceMechanism(epsilon=1.0).calibrate(
                fw, query).scale
        elif row == "exact memberwise":
            start = time.process_time()
            out = memberwise_scale(pp.ExactLaplaceMechanism(epsilon=1.0), fw, query)
            scale, note = out.scale, (f"binding {out.binding}, {out.calibrated} calibrated, "
                                      f"{out.audited} audits in {out.rounds} rounds")
        elif row == "robust":
            start, note = time.process_time(), _robust(cls, fit, query)
    cpu = time.process_time() - start
    print(f"| Ordonez {home} | {query.name} | {len(cls)} | {row} | {scale:.6g} | {cpu:.2f} | "
          f"{_peak():.0f} | {note} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--one", nargs=2, metavar=("HOME", "ROW"))
    args = parser.parse_args()
    if args.one:
        _one(*args.one)
        return
    print("| home | query | n | row | scale | CPU s | peak MB | notes |\n"
          "|---|---|---|---|---|---|---|---|", flush=True)
    for home in ("A", "B"):
        for row in ROWS:
            subprocess.run([sys.executable, __file__, "--one", home, row], check=False)


if __name__ == "__main__":
    main()
