"""``compare`` and ``demo``: every mechanism side by side (internal; see :mod:`pufferfish_pgm.cli`).

A mechanism that fails does not stop the others: its row says ``FAILED`` and why.
``compare --mechanisms`` picks the rows: any of :data:`MECHANISM_ORDER` (the default),
:data:`EXTRA_NAMES` (``optimal``, ``gk16``) and ``optimal+dp``, optimal noise with the plain-DP
floor ``dp_epsilon`` (``--dp-epsilon``, default :data:`DP_FACTOR` · ε). Every row shows
``E|Z|``, the mean absolute noise on one answer: discrete Laplace(scale) for integer answers
(``2q/(1 - q²)``, ``q = e^{-1/scale}``), the scale itself for real answers, the certified law's
``E|Z|`` for optimal noise (which has no Laplace scale).

On a network the default rows leave out ``exact-quilt`` (:data:`NOT_ON_NETWORKS`): its bound
for a node is at least the node's exact realised ε (the empty quilt gives exactly that, every
other quilt more; ``docs/exact-quilt.md``), so its scale is never below ``exact``'s, which the
table has; its only gain is cost where ``exact`` cannot run, and on networks its quilt search
is the slow one (482 s on alarm, where ``exact`` takes 0.02 s). ``--mechanisms`` runs it.
When stderr is a terminal, each row says on stderr when it starts and how long it took, and
the long calibrations draw their progress there (``--progress``/``--no-progress`` force it on
or off; :func:`calibrate_with`).

Examples
--------
>>> _names("exact,optimal+dp", None)
('exact', 'optimal+dp')
>>> _names("exact,optimal", 3.0)
Traceback (most recent call last):
...
pufferfish_pgm.errors.InvalidParameterError: --dp-epsilon sets the DP floor of the ...
"""

from __future__ import annotations

import argparse
import inspect
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import (
    InvalidParameterError,
    PufferfishError,
)
from ..mechanisms import (
    AuditedEvidence,
    Calibration,
    Mechanism,
    OptimalCalibration,
    OptimalNoiseMechanism,
)
from ..mechanisms._engine import EXTRA_NAMES, MECHANISM_ORDER, mechanism
from ..mechanisms.optimal import laplace_loss
from ..plots import plot_scale_vs_epsilon
from ..privacy_loss import audit as run_audit
from ..privacy_loss import audit_integer_noise
from ..queries import Query
from ..scenarios import MarkovChainScenario, Scenario
from ..secrets import Framework
from ._options import _describe, _setup, _table

__all__ = ["DP_FACTOR", "DP_ROW", "NOT_ON_NETWORKS", "calibrate_with", "compare", "demo",
           "progress_wanted"]

#: The row of optimal noise with the plain-DP floor (``compare --mechanisms ...,optimal+dp``).
DP_ROW = "optimal+dp"
#: Its floor ε' is this times ε unless ``--dp-epsilon`` says otherwise.
DP_FACTOR = 2.0
HEADER = ["mechanism", "Laplace scale", "E|Z|", "realised eps", "private"]
#: Default rows left out on networks (see the module docstring), with the reason printed.
NOT_ON_NETWORKS = {"exact-quilt": "its scale is never below exact's (its best quilt, the empty "
                                  "one, is the exact bound) and its quilt search is slow on "
                                  "networks"}


def _defaults(names: tuple[str, ...], given: bool, fw: Framework) -> tuple[tuple[str, ...],
                                                                           list[str]]:
    """The rows to run and a note per default row left out on a network."""
    if given or fw.scenarios.kind != "network":
        return names, []
    notes = [f"{v} not run on a network by default: {NOT_ON_NETWORKS[v]}; run it with "
             f"--mechanisms {','.join(names)}" for v in names if v in NOT_ON_NETWORKS]
    return tuple(v for v in names if v not in NOT_ON_NETWORKS), notes


def _names(text: str | None, dp_epsilon: float | None) -> tuple[str, ...]:
    """The rows of ``--mechanisms`` (None: :data:`MECHANISM_ORDER`), checked."""
    known = (*MECHANISM_ORDER, *EXTRA_NAMES, DP_ROW)
    names = MECHANISM_ORDER if text is None else tuple(
        v.strip() for v in text.split(",") if v.strip())
    unknown = [v for v in names if v not in known]
    if unknown or not names:
        raise InvalidParameterError(f"--mechanisms {text!r} names no mechanism or unknown ones "
                                    f"({', '.join(unknown)}); choose from {', '.join(known)}")
    if dp_epsilon is not None and DP_ROW not in names:
        raise InvalidParameterError(f"--dp-epsilon sets the DP floor of the {DP_ROW} row; add "
                                    f"{DP_ROW} to --mechanisms or drop --dp-epsilon")
    if dp_epsilon is not None and not (0 < dp_epsilon < float("inf")):
        raise InvalidParameterError(f"--dp-epsilon must be a positive number, got {dp_epsilon}")
    return names


def _make(name: str, epsilon: float, dp_epsilon: float | None) -> Mechanism:
    """The mechanism of a row; ``optimal+dp`` with floor ``dp_epsilon`` (default 2ε)."""
    if name == DP_ROW:
        return OptimalNoiseMechanism(epsilon=epsilon,
                                     dp_epsilon=dp_epsilon or DP_FACTOR * epsilon)
    return mechanism(name, epsilon)


def progress_wanted(args: argparse.Namespace) -> bool:
    """``--progress``/``--no-progress`` if given, else whether stderr is a terminal (never in
    pipes, files, CI or captured tests)."""
    wanted = getattr(args, "progress", None)
    return sys.stderr.isatty() if wanted is None else bool(wanted)


def calibrate_with(mech: Mechanism, fw: Framework, query: Query, progress: bool) -> Calibration:
    """``mech.calibrate(fw, query)``, with a progress bar on stderr when ``progress`` and the
    mechanism's calibration is one of the long ones (those taking ``progress=``)."""
    if progress and "progress" in inspect.signature(mech.calibrate).parameters:
        return mech.calibrate(fw, query, progress=True)  # type: ignore[call-arg]
    return mech.calibrate(fw, query)


def _compare_rows(fw: Framework, query: Query, epsilon: float,
                  names: Sequence[str] = MECHANISM_ORDER, dp_epsilon: float | None = None,
                  progress: bool = False) -> tuple[list[dict], list[Calibration | None]]:
    """One row per mechanism of ``names`` (scale, E|Z|, exact realised epsilon, seconds) and
    the calibrations.

    A mechanism that fails with a :class:`PufferfishError` does not stop the others: its row
    has ``"error"`` (the error's type and one-line message) and its calibration is None.
    """
    rows: list[dict] = []
    calibrations: list[Calibration | None] = []
    for i, name in enumerate(names):
        start = time.perf_counter()
        _progress(f"[{i + 1}/{len(names)}] {name} ...", end="\n" if progress else " ")
        try:
            cal = calibrate_with(_make(name, epsilon, dp_epsilon), fw, query, progress)
            row = _row(name, fw, query, cal, epsilon)
        except PufferfishError as err:
            message = " ".join(str(err).split())  # one line
            rows.append({"mechanism": name, "error": f"{type(err).__name__}: {message}",
                         "seconds": time.perf_counter() - start})
            calibrations.append(None)
            _progress(f"FAILED after {rows[-1]['seconds']:.3g} s")
            continue
        rows.append({**row, "seconds": time.perf_counter() - start})
        calibrations.append(cal)
        _progress(f"{rows[-1]['seconds']:.3g} s")
    return rows, calibrations


def _row(name: str, fw: Framework, query: Query, cal: Calibration, epsilon: float) -> dict:
    """The numbers of one finished row (optimal noise: no Laplace scale, its DP floor)."""
    realised = _realised_epsilon(fw, query, cal)
    row = {"mechanism": name, "scale": _scale(cal), "mean_abs": _mean_abs(query, cal),
           "realised_epsilon": realised, "private": bool(realised <= epsilon * (1 + 1e-9))}
    if isinstance(cal, OptimalCalibration):
        row["dp_epsilon"] = cal.evidence.dp_epsilon
        row["dp_realised"] = cal.evidence.dp_realised
    return row


def _scale(cal: Calibration) -> float | None:
    """The Laplace scale (None for optimal noise, which is not Laplace)."""
    return None if isinstance(cal, OptimalCalibration) else cal.scale


def _mean_abs(query: Query, cal: Calibration) -> float:
    """E|Z| of the noise on one answer (see the module docstring)."""
    if isinstance(cal, OptimalCalibration):
        return cal.noise.mean_abs
    if getattr(query, "integer", True):
        return laplace_loss(("abs",), cal.scale)
    return cal.scale


def _cells(row: dict, last: Any) -> list:
    """A table row: a failed mechanism says so (and why) in place of its numbers."""
    if "error" in row:
        return [row["mechanism"], "FAILED", row["error"]]
    scale = "-" if row["scale"] is None else row["scale"]
    return [row["mechanism"], scale, row["mean_abs"], row["realised_epsilon"],
            "yes" if row["private"] else "NO", last]


def _legend(rows: list[dict]) -> list[str]:
    """What the E|Z| column means, and the DP floor of optimal+dp, when optimal rows are shown."""
    floors = {r["dp_epsilon"] for r in rows if r.get("dp_epsilon") is not None}
    if not any("dp_epsilon" in r for r in rows):
        return []
    return ["E|Z|: mean absolute noise on one answer (integer answers: discrete "
            "Laplace(scale); optimal rows: their audited integer law, not Laplace)"
            + "".join(f"; {DP_ROW}: also plain {f:g}-DP for one record" for f in floors)]


def _failures(rows: list[dict]) -> tuple[str, int]:
    """The line naming failed mechanisms and the exit code: 2 only when every one failed."""
    failed = [r["mechanism"] for r in rows if "error" in r]
    if not failed:
        return "", 0
    line = (f"{len(failed)} of {len(rows)} mechanisms failed ({', '.join(failed)}); "
            "the other rows are complete")
    return line, 2 if len(failed) == len(rows) else 0


def _realised_epsilon(fw: Framework, query: Query, cal: Calibration) -> float:
    """The exact realised ε of ``cal``: from its own audit when it made one at its scale (or
    of its integer noise law)."""
    report = cal.evidence.audit if isinstance(cal.evidence, AuditedEvidence) else None
    if isinstance(cal, OptimalCalibration):
        return (report or audit_integer_noise(fw, query, cal.noise)).epsilon
    if report is None or report.scales != (cal.scale,):
        report = run_audit(fw, query, cal.scale)
    return report.epsilon


def _progress(text: str, end: str = "\n") -> None:
    """Progress on stderr, only when stderr is a terminal (never in pipes, files or CI): a
    row's line starts when it starts and ends with its time when it ends."""
    if sys.stderr.isatty():
        print(text, end=end, file=sys.stderr, flush=True)


def compare(args: argparse.Namespace) -> dict:
    """``compare``: the mechanisms' scales, E|Z| and exact realised ε side by side
    (``--mechanisms``: which ones, see the module docstring).

    A mechanism that fails (a :class:`PufferfishError`, e.g. a limit) gets a row saying
    ``FAILED`` and why, and the other rows are still printed. The exit code is 0 when at
    least one mechanism finished and 2 when every mechanism failed; the JSON lists the failed
    mechanisms under ``"failed"`` and gives each failed row an ``"error"``.
    """
    dp_epsilon = getattr(args, "dp_epsilon", None)
    given = getattr(args, "mechanisms", None)
    names = _names(given, dp_epsilon)
    fw, query = _setup(args)
    names, left_out = _defaults(names, given is not None, fw)
    rows, _ = _compare_rows(fw, query, args.epsilon, names, dp_epsilon,
                            progress_wanted(args))
    note, code = _failures(rows)
    if getattr(args, "plot", None) and code == 0:
        plot_scale_vs_epsilon(fw, query, args.plot)
    text = "\n".join([_describe(fw, query, args.epsilon), _table(
        [*HEADER, "seconds"], [_cells(r, r["seconds"]) for r in rows])]
        + _legend(rows) + ([note] if note else []) + left_out)
    return {"text": text, "exit_code": code,
            "json": {"epsilon": args.epsilon, "query": query.name, "rows": rows,
                     "failed": [r["mechanism"] for r in rows if "error" in r],
                     "not_run": left_out}}


def demo(args: argparse.Namespace) -> dict:
    """``demo``: ``compare`` plus one release of a simulated record by each mechanism."""
    fw, query = _setup(args)
    names, left_out = _defaults(MECHANISM_ORDER, False, fw)
    rows, calibrations = _compare_rows(fw, query, args.epsilon, names)
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
        _table([*HEADER, "released"],
               [_cells(r, v) for r, v in zip(rows, released, strict=True)]),
        *([note] if note else []), *left_out,
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
