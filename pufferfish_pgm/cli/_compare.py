"""``compare`` and ``demo``: every mechanism side by side (internal; see :mod:`pufferfish_pgm.cli`).

A mechanism that fails does not stop the others: its row says ``FAILED`` and why.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ..errors import (
    InvalidParameterError,
    PufferfishError,
)
from ..mechanisms import AuditedEvidence, Calibration
from ..mechanisms._registry import MECHANISM_ORDER, mechanism
from ..plots import plot_scale_vs_epsilon
from ..privacy_loss import audit as run_audit
from ..queries import Query
from ..scenarios import MarkovChainScenario, Scenario
from ..secrets import Framework
from ._options import _describe, _setup, _table

__all__ = ["compare", "demo"]


def _compare_rows(fw: Framework, query: Query,
                  epsilon: float) -> tuple[list[dict], list[Calibration | None]]:
    """One row per mechanism (scale, exact realised epsilon, seconds) and the calibrations.

    A mechanism that fails with a :class:`PufferfishError` does not stop the others: its row
    has ``"error"`` (the error's type and one-line message) and its calibration is None.
    """
    rows: list[dict] = []
    calibrations: list[Calibration | None] = []
    for name in _progress(MECHANISM_ORDER, "calibrating and auditing"):
        start = time.perf_counter()
        try:
            cal = mechanism(name, epsilon).calibrate(fw, query)
            realised = _realised_epsilon(fw, query, cal)
        except PufferfishError as err:
            message = " ".join(str(err).split())  # one line
            rows.append({"mechanism": name, "error": f"{type(err).__name__}: {message}",
                         "seconds": time.perf_counter() - start})
            calibrations.append(None)
            continue
        rows.append({"mechanism": name, "scale": cal.scale, "realised_epsilon": realised,
                     "private": bool(realised <= epsilon * (1 + 1e-9)),
                     "seconds": time.perf_counter() - start})
        calibrations.append(cal)
    return rows, calibrations


def _cells(row: dict, last: Any) -> list:
    """A table row: a failed mechanism says so (and why) in place of its numbers."""
    if "error" in row:
        return [row["mechanism"], "FAILED", row["error"]]
    return [row["mechanism"], row["scale"], row["realised_epsilon"],
            "yes" if row["private"] else "NO", last]


def _failures(rows: list[dict]) -> tuple[str, int]:
    """The line naming failed mechanisms and the exit code: 2 only when every one failed."""
    failed = [r["mechanism"] for r in rows if "error" in r]
    if not failed:
        return "", 0
    line = (f"{len(failed)} of {len(rows)} mechanisms failed ({', '.join(failed)}); "
            "the other rows are complete")
    return line, 2 if len(failed) == len(rows) else 0


def _realised_epsilon(fw: Framework, query: Query, cal: Calibration) -> float:
    """The exact realised ε of ``cal``: from its own audit when it made one at its scale."""
    report = cal.evidence.audit if isinstance(cal.evidence, AuditedEvidence) else None
    if report is None or report.scales != (cal.scale,):
        report = run_audit(fw, query, cal.scale)
    return report.epsilon


def _progress(items: Sequence[str], what: str) -> Iterable[str]:
    """A tqdm progress bar on stderr, only when stderr is a terminal (never in pipes or CI)."""
    import sys

    if not sys.stderr.isatty():
        return items
    from tqdm import tqdm  # type: ignore[import-untyped]

    return tqdm(items, desc=what, leave=False, file=sys.stderr)


def compare(args: argparse.Namespace) -> dict:
    """``compare``: every mechanism's scale and exact realised ε side by side.

    A mechanism that fails (a :class:`PufferfishError`, e.g. a limit) gets a row saying
    ``FAILED`` and why, and the other rows are still printed. The exit code is 0 when at
    least one mechanism finished and 2 when every mechanism failed; the JSON lists the failed
    mechanisms under ``"failed"`` and gives each failed row an ``"error"``.
    """
    fw, query = _setup(args)
    rows, _ = _compare_rows(fw, query, args.epsilon)
    note, code = _failures(rows)
    if getattr(args, "plot", None) and code == 0:
        plot_scale_vs_epsilon(fw, query, args.plot)
    text = "\n".join([_describe(fw, query, args.epsilon), _table(
        ["mechanism", "Laplace scale", "realised eps", "private", "seconds"],
        [_cells(r, r["seconds"]) for r in rows])] + ([note] if note else []))
    return {"text": text, "exit_code": code,
            "json": {"epsilon": args.epsilon, "query": query.name, "rows": rows,
                     "failed": [r["mechanism"] for r in rows if "error" in r]}}


def demo(args: argparse.Namespace) -> dict:
    """``demo``: ``compare`` plus one release of a simulated record by each mechanism."""
    fw, query = _setup(args)
    rows, calibrations = _compare_rows(fw, query, args.epsilon)
    note, code = _failures(rows)
    done = [cal for cal in calibrations if cal is not None]
    if not done:
        raise next(InvalidParameterError(f"every mechanism failed; {r['mechanism']}: "
                                         f"{r['error']}") for r in rows)
    day = _sample_day(fw.scenarios[0])
    truth = int(np.asarray(done[0].answer(day)).ravel()[0])
    released = [None if cal is None else cal.release(day).value for cal in calibrations]
    text = "\n".join([
        _describe(fw, query, args.epsilon),
        f"one simulated record; true answer {truth}; each release uses fresh secure noise", "",
        _table(["mechanism", "Laplace scale", "realised eps", "private", "released"],
               [_cells(r, v) for r, v in zip(rows, released, strict=True)]),
        *([note] if note else []),
        "", "entry DP is not Pufferfish private under correlation: the exact audit shows it."])
    for r, v in zip(rows, released, strict=True):
        if v is not None:
            r["released"] = v
    return {"text": text, "exit_code": code, "json": {"truth": truth, "rows": rows}}


def _sample_day(scenario: Scenario) -> list | dict:
    """A fixed simulated record (seeded: the demo's data, not its noise)."""
    rng = np.random.default_rng(2024)
    if isinstance(scenario, MarkovChainScenario):
        q = scenario.marginal(0)
        x = [rng.choice(scenario.k, p=q)]
        for _ in range(scenario.length - 1):  # simulation of one short demo record
            x.append(rng.choice(scenario.k, p=scenario.transition[x[-1]]))
        return [scenario.states[i] for i in x]
    codes: dict = {}
    for v in scenario.nodes:  # ancestral sampling in topological order
        table = scenario.tables.cpts[v]
        column = table[(slice(None), *(codes[p] for p in scenario.tables.parents[v]))]
        codes[v] = int(rng.choice(len(column), p=column))
    return {v: scenario.states_of(v)[c] for v, c in codes.items()}
