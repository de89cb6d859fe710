"""Which Dirichlet prior lets an hourly posterior class cover the point fits? (Session 8.)

Session 7 measured that ``ScenarioClass.from_posterior(days, period=6)`` with prior 1 per cell
needs 3-4 times less noise than the hourly and homogeneous point fits and its calibration
leaks ε = 2.4-3.7 against them (``docs/posterior.md``, "The prior can outweigh the data").
This script measures candidate priors side by side.

Data: ``read_ordonez(repair=True)``, ``sequences_from_events(slot="10min", fill="Idle")``,
one sequence per day (T = 144; home A k = 10, 12 days; home B k = 11, 21 days). Fits (as
``bench_time_varying.py``): ``homogeneous`` = ``MarkovChainScenario.fit(days)`` (empirical
start), ``hourly`` = ``fit(days, period=6)`` (s = 10). Class: ``from_posterior(days, period=6,
prior=…, coverage=0.9, confidence=0.95, seed=2026)`` (n = 29 draws), or with ``--homogeneous``
the class without ``period``. Queries: the daily count of Sleeping and of Spare_Time/TV;
ε = 1. For each prior: the exact scale of ``ExactLaplaceMechanism`` on the class (CPU s) and
``pp.robustness(calibration, [hourly fit, homogeneous fit])``, the realised ε of that scale
under each fit. The fits' own exact scales are printed first for reference.

Priors (``--priors``): numbers, ``1/k`` (one pseudo-transition per row, spread evenly),
``1/H`` (the homogeneous prior 1 per cell split over the H = 24 hourly blocks), ``1/kH`` or
``default`` (what ``from_posterior`` uses when ``prior`` is not given).

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_posterior_prior.py [--homes A B]
[--priors 1 1/k 0.01 default] [--homogeneous] [--coverage 0.9 --confidence 0.95]``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from typing import Any

from _common import DATA

import pufferfish_pgm as pp
from pufferfish_pgm.scenarios._posterior import posterior_draws

QUERIES = ("Sleeping", "Spare_Time/TV")
EPSILON, SEED, PERIOD = 1.0, 2026, 6


def _days(home: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the repair's report of what it changed
        return pp.sequences_from_events(pp.read_ordonez(DATA / f"Ordonez{home}_ADLs.txt",
                                                        repair=True), slot="10min", fill="Idle")


def _prior(text: str, k: int, blocks: int) -> float | None:
    if text == "default":
        return None
    named = {"1/k": 1.0 / k, "1/H": 1.0 / blocks, "1/kH": 1.0 / (k * blocks)}
    return named[text] if text in named else float(text)


def _exact(fw: pp.Framework, query: pp.Query) -> tuple[pp.Calibration, float]:
    start = time.process_time()
    cal = pp.ExactLaplaceMechanism(epsilon=EPSILON).calibrate(fw, query)
    return cal, time.process_time() - start


def _rows(home: str, args: argparse.Namespace) -> None:
    wide = _days(home)
    length = wide.shape[1]
    fits = [pp.MarkovChainScenario.fit(wide, period=PERIOD, name="hourly fit"),
            pp.MarkovChainScenario.fit(wide, name="homogeneous fit").with_length(length)]
    k = len(fits[0].states)
    for state in QUERIES:
        query = pp.Count(state)
        own = [_exact(pp.Framework(f), query) for f in fits]
        print(f"| {home} | {state} | fits (hourly / homogeneous) | | "
              f"{own[0][0].scale:.2f} / {own[1][0].scale:.2f} | | "
              f"{own[0][1] + own[1][1]:.1f} |", flush=True)
        for text in args.priors:
            prior = _prior(text, k, -(-length // PERIOD))
            options = {} if prior is None else {"prior": prior}
            cls = pp.ScenarioClass.from_posterior(
                wide, period=None if args.homogeneous else PERIOD, length=length, seed=SEED,
                coverage=args.coverage, confidence=args.confidence, **options)
            cal, cpu = _exact(pp.Framework(cls), query)
            start = time.process_time()
            report = pp.robustness(cal, fits)
            cpu_audit = time.process_time() - start
            print(f"| {home} | {state} | {text} | {cls.posterior.prior:.4g} | {cal.scale:.2f} | "
                  f"{report.realised[0]:.3f} / {report.realised[1]:.3f} | {cpu:.1f} "
                  f"(+{cpu_audit:.1f}) |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--homes", nargs="+", default=["A", "B"])
    parser.add_argument("--priors", nargs="+", default=["1", "1/k", "0.01", "default"])
    parser.add_argument("--homogeneous", action="store_true")
    parser.add_argument("--coverage", type=float, default=0.9)
    parser.add_argument("--confidence", type=float, default=0.95)
    args = parser.parse_args()
    kind = "homogeneous" if args.homogeneous else f"hourly (period={PERIOD})"
    print(f"{kind} posterior classes, n = {posterior_draws(args.coverage, args.confidence)}"
          f" draws, seed {SEED}, ε = {EPSILON}\n\n| home | count of | prior asked | prior per "
          "cell | exact scale | realised ε on hourly / homogeneous fit | CPU s (calibrate "
          "(+ audits)) |\n|---|---|---|---|---|---|---|", flush=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pp.UsefulnessWarning)
        for home in args.homes:
            _rows(home, args)


if __name__ == "__main__":
    main()
