"""Homogeneous vs hourly (time-varying) vs posterior Θ on the Ordóñez homes (issue 22).

Data: ``read_ordonez(repair=True)``, ``sequences_from_events(slot="10min", fill="Idle")``,
one sequence per day (T = 144). Models (empirical start for the two fits):

* ``homogeneous``: ``MarkovChainScenario.fit(days)`` (one matrix, pseudocount 0);
* ``hourly``: ``MarkovChainScenario.fit(days, period=6)`` (one matrix per hour of the day,
  shrunk to the pooled fit with the default s = 10);
* ``posterior``: ``ScenarioClass.from_posterior(days, coverage=0.99, seed=2026)`` (688
  homogeneous draws at confidence 0.999).

Queries: the daily count of ``Sleeping`` and of ``Spare_Time/TV``, ε = 1. Mechanisms: MQM
and exact Laplace; quilt-local exact is tried on the hourly chain (it refuses time-varying
chains: the refusal is printed). On the posterior class only MQM runs by default (exact on
688 members costs ~4 CPU minutes per query, ``docs/posterior.md``; ``--posterior-exact``
runs it), and MQM is calibrated once per home: its scale is σ_max times the count's
sensitivity 1 over the same 144 nodes, the same for both counts.

Every calibration is audited (``pp.audit``) against the two single-chain models it was NOT
calibrated on (homogeneous and hourly); auditing against the 688-member class is skipped
(one exact audit per member).

Run: ``OMP_NUM_THREADS=1 python benchmarks/bench_time_varying.py [--homes A B]``.
CPU seconds (``time.process_time``) of the calibration only.
"""

from __future__ import annotations

import argparse
import time
import warnings

from _common import DATA

import pufferfish_pgm as pp

QUERIES = ("Sleeping", "Spare_Time/TV")
EPSILON, SEED, COVERAGE = 1.0, 2026, 0.99


def _days(home: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the repair's report of what it changed
        return pp.sequences_from_events(pp.read_ordonez(DATA / f"Ordonez{home}_ADLs.txt",
                                                        repair=True), slot="10min", fill="Idle")


def _models(home: str) -> dict:
    wide = _days(home)
    length = wide.shape[1]
    homogeneous = pp.MarkovChainScenario.fit(wide, name=f"{home} homogeneous")
    hourly = pp.MarkovChainScenario.fit(wide, period=6, name=f"{home} hourly")
    start = time.process_time()
    cls = pp.ScenarioClass.from_posterior(wide, coverage=COVERAGE, seed=SEED, length=length)
    print(f"<!-- home {home}: T = {length}, {len(wide)} days, k = {homogeneous.k}, posterior "
          f"n = {len(cls)} drawn in {time.process_time() - start:.2f} CPU s -->", flush=True)
    return {"homogeneous": pp.Framework(homogeneous.with_length(length)),
            "hourly": pp.Framework(hourly), "posterior": pp.Framework(cls)}


def _calibrate(make, fw: pp.Framework, query: pp.Query) -> tuple[str, float, float]:
    """(scale or refusal, scale as a number, CPU seconds)."""
    start = time.process_time()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", pp.UsefulnessWarning)
            scale = make().calibrate(fw, query).scale
    except pp.PufferfishError as err:
        return f"refused ({type(err).__name__}: {str(err)[:90]}…)", float("nan"), \
            time.process_time() - start
    return f"{scale:.4g}", scale, time.process_time() - start


def _audits(models: dict, own: str, query: pp.Query, scale: float) -> str:
    out = []
    for other in ("homogeneous", "hourly"):
        if other != own and scale == scale:
            eps = pp.audit(models[other], query, scale).epsilon
            out.append(f"{other}: {eps:.3f}")
    return ", ".join(out) or "–"


def _rows(home: str, models: dict, posterior_exact: bool):
    mqm = lambda: pp.MarkovQuiltMechanism(epsilon=EPSILON)      # noqa: E731
    exact = lambda: pp.ExactLaplaceMechanism(epsilon=EPSILON)   # noqa: E731
    quilt = lambda: pp.ExactQuiltMechanism(epsilon=EPSILON)     # noqa: E731
    posterior_mqm = None
    for state in QUERIES:
        query = pp.Count(state)
        for model, fw in models.items():
            runs = [("MQM", mqm), ("exact", exact)]
            if model == "hourly":
                runs.append(("quilt-local exact", quilt))
            if model == "posterior" and not posterior_exact:
                runs = runs[:1]
            for name, make in runs:
                if model == "posterior" and name == "MQM" and posterior_mqm is not None:
                    shown, scale, _ = posterior_mqm
                    cpu = "(same σ_max as above)"
                else:
                    shown, scale, seconds = _calibrate(make, fw, query)
                    cpu = f"{seconds:.2f}"
                    if model == "posterior" and name == "MQM":
                        posterior_mqm = (shown, scale, seconds)
                yield (f"| {home} | {state} | {model} | {name} | {shown} | {cpu} | "
                       f"{_audits(models, model, query, scale)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--homes", nargs="+", default=["A", "B"])
    parser.add_argument("--posterior-exact", action="store_true")
    args = parser.parse_args()
    print("| home | count of | model | mechanism | scale (ε = 1) | CPU s | realised ε on the "
          "other models |\n|---|---|---|---|---|---|---|", flush=True)
    for home in args.homes:
        models = _models(home)
        for row in _rows(home, models, args.posterior_exact):
            print(row, flush=True)


if __name__ == "__main__":
    main()
