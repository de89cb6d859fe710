"""Homogeneous vs hourly (time-varying) chains vs their posterior classes on the Ordóñez homes
(issue 22, "Measured").

Data: ``read_ordonez(repair=True)``, ``sequences_from_events(slot="10min", fill="Idle")``,
one sequence per day (T = 144). Models (empirical start for the two fits, ε = 1):

* (a) ``homogeneous``: ``MarkovChainScenario.fit(days)`` (one matrix, pseudocount 0);
* (b) ``hourly``: ``MarkovChainScenario.fit(days, period=6)`` (one matrix per hour, shrunk to
  the pooled fit with the default s = 10);
* (c) ``posterior``: ``ScenarioClass.from_posterior(days, coverage=0.99, seed=2026)``
  (n = 688 homogeneous draws at confidence 0.999, prior 1 per cell);
* (d) ``hourly posterior``: the same with ``period=6`` (every hour's rows from
  Dirichlet(C_h + 10·P̄ + 1), ``docs/posterior.md``).

Queries: the daily count of ``Sleeping`` and of ``Spare_Time/TV``. Mechanisms: MQM,
quilt-local exact (``ExactQuiltMechanism``; refusals are printed) and exact Laplace. On the
classes, MQM runs on the whole class (once per class: its scale is σ_max times the count's
sensitivity 1 over the same nodes, the same for both counts), exact runs member by member
(``accountant._memberwise.memberwise_scale``, equal to the class calibration) and measures in the
same pass the class's realised ε at the two point fits' exact scales (``also=``); quilt-local
exact on a class runs only with ``--posterior-quilt`` (one calibration per member).

Realised ε columns: every calibration audited exactly against the models it was not
calibrated on. A point fit's MQM or quilt-local scale is at least its exact scale, so its
realised ε on a class is at most that of the exact scale (monotone in the scale): shown "≤".

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_time_varying.py [--homes A B]``.
CPU seconds (``time.process_time``) of the calibration only.
"""

from __future__ import annotations

import argparse
import time
import warnings

from _common import DATA

import pufferfish_pgm as pp
from pufferfish_pgm.accountant._memberwise import memberwise_scale

QUERIES = ("Sleeping", "Spare_Time/TV")
EPSILON, SEED, COVERAGE = 1.0, 2026, 0.99
FITS, CLASSES = ("homogeneous", "hourly"), ("hourly posterior", "posterior")
MECHS = {"MQM": pp.MarkovQuiltMechanism, "quilt-local exact": pp.ExactQuiltMechanism,
         "exact": pp.ExactLaplaceMechanism}


def _models(home: str) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the repair's report of what it changed
        wide = pp.sequences_from_events(pp.read_ordonez(DATA / f"Ordonez{home}_ADLs.txt",
                                                        repair=True), slot="10min", fill="Idle")
    length = wide.shape[1]
    out = {"homogeneous": pp.MarkovChainScenario.fit(wide, name=f"{home} homogeneous"
                                                     ).with_length(length),
           "hourly": pp.MarkovChainScenario.fit(wide, period=6, name=f"{home} hourly")}
    for name, period in zip(CLASSES, (6, None), strict=True):
        start = time.process_time()
        out[name] = pp.ScenarioClass.from_posterior(wide, coverage=COVERAGE, seed=SEED,
                                                    period=period, length=length)
        print(f"<!-- home {home}: T = {length}, {len(wide)} days, {name} n = "
              f"{len(out[name])} drawn in {time.process_time() - start:.2f} CPU s -->",
              flush=True)
    return {k: pp.Framework(v) for k, v in out.items()}


def _calibrate(mech: type, fw: pp.Framework, query: pp.Query) -> tuple[str, float, float]:
    """(scale or refusal, scale as a number, CPU seconds)."""
    start = time.process_time()
    try:
        scale = mech(epsilon=EPSILON).calibrate(fw, query).scale
    except pp.PufferfishError as err:
        return f"refused ({type(err).__name__}: {str(err)[:80]}…)", float("nan"), \
            time.process_time() - start
    return f"{scale:.4g}", scale, time.process_time() - start


def _audit(fw: pp.Framework, query: pp.Query, scale: float) -> str:
    return f"{pp.audit(fw, query, scale).epsilon:.3f}" if scale == scale else "–"


def _point_rows(home: str, models: dict, query: pp.Query, state: str) -> dict:
    scales: dict = {}
    for model in FITS:
        other = FITS[1 - FITS.index(model)]
        for name, mech in MECHS.items():
            shown, scale, cpu = _calibrate(mech, models[model], query)
            scales[(model, name)] = scale
            print(f"| {home} | {state} | {model} | {name} | {shown} | {cpu:.2f} | {other}: "
                  f"{_audit(models[other], query, scale)} |", flush=True)
    return scales


def _class_rows(home: str, models: dict, query: pp.Query, state: str, fits: dict,
                mqm: dict, quilt: bool) -> None:
    fit_exact = tuple(fits[(f, "exact")] for f in FITS)
    for cls in CLASSES:
        fw = models[cls]
        if cls not in mqm:
            mqm[cls] = _calibrate(MECHS["MQM"], fw, query)
            cpu = f"{mqm[cls][2]:.2f}"
        else:
            cpu = "(same σ_max as above)"
        print(f"| {home} | {state} | {cls} | MQM | {mqm[cls][0]} | {cpu} | "
              f"{_fit_audits(models, query, mqm[cls][1])} |", flush=True)
        if quilt:
            start = time.process_time()
            out = memberwise_scale(MECHS["quilt-local exact"](epsilon=EPSILON), fw, query)
            print(f"| {home} | {state} | {cls} | quilt-local exact | {out.scale:.4g} | "
                  f"{time.process_time() - start:.2f} | "
                  f"{_fit_audits(models, query, out.scale)} |", flush=True)
        start = time.process_time()
        out = memberwise_scale(MECHS["exact"](epsilon=EPSILON), fw, query, also=fit_exact)
        cpu = time.process_time() - start
        print(f"| {home} | {state} | {cls} | exact | {out.scale:.4g} | {cpu:.2f} | "
              f"{_fit_audits(models, query, out.scale)} (member by member: {out.calibrated} "
              f"calibrated, {out.audited} audits, {out.rounds} rounds) |", flush=True)
        for fit, eps in zip(FITS, out.also, strict=True):
            bounds = ", ".join(f"{m} ≤ {eps:.3f}" for m in ("MQM", "quilt-local exact")
                               if fits[(fit, m)] == fits[(fit, m)])
            print(f"| {home} | {state} | {fit} → {cls} | exact | {fits[(fit, 'exact')]:.4g} | "
                  f"(same pass) | {cls}: {eps:.3f}; {bounds} |", flush=True)


def _fit_audits(models: dict, query: pp.Query, scale: float) -> str:
    return ", ".join(f"{f}: {_audit(models[f], query, scale)}" for f in FITS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--homes", nargs="+", default=["A", "B"])
    parser.add_argument("--posterior-quilt", action="store_true")
    args = parser.parse_args()
    print("| home | count of | model | mechanism | scale (ε = 1) | CPU s | realised ε on the "
          "other models |\n|---|---|---|---|---|---|---|", flush=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pp.UsefulnessWarning)
        for home in args.homes:
            models, mqm = _models(home), {}
            for state in QUERIES:
                query = pp.Count(state)
                fits = _point_rows(home, models, query, state)
                _class_rows(home, models, query, state, fits, mqm, args.posterior_quilt)


if __name__ == "__main__":
    main()
