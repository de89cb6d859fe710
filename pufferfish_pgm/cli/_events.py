"""``release --events``: activity event logs in, a private profile per window and day out.

The whole activity workflow from the command line: each log (an Ordóñez ADL file, repaired as
:func:`~pufferfish_pgm.read_ordonez` does, or a CSV with columns user, start, end, state) is
cut into slots (:func:`~pufferfish_pgm.sequences_from_events`), one chain per user (home) is
fitted from that user's days (the class Θ), and the count of one activity in every window
(``--window``, default one hour) is released for every day, with one Laplace scale on every
coordinate. Two models (``--unit``, as ``unit=`` of :class:`~pufferfish_pgm.ContinualRelease`):

* ``day`` (the default): one chain per day, fitted from the days; days are *assumed*
  independent under the model (an activity that crosses midnight, like Sleeping, is cut
  there). Under that assumption each day is a separate release and the days compose in
  parallel: the total is the ε of one day (``docs/composition.md``).
* ``window``: one chain over each user's whole log (its consecutive days joined, so the
  midnight transitions are modelled and fitted); every window of every day is one coordinate
  of one release calibrated for the whole log (one calibration per log length), so the total
  is its ε without assuming independent days.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InvalidParameterError, PufferfishWarning
from ..mechanisms import Calibration, Mechanism, Release
from ..mechanisms._engine import mechanism
from ..queries import WindowedCount
from ..queries._engine import coordinate_names
from ..scenarios import MarkovChainScenario, ScenarioClass, read_ordonez, sequences_from_events
from ..secrets import Framework

__all__ = ["release_events"]

#: Nanoseconds in a day.
DAY_NS = 86_400 * 10**9

#: The words of an Ordóñez ADL file's header line.
ORDONEZ_HEADER = ["Start", "time", "End", "time", "Activity"]


def _read_log(path: str, slot: str, fill: str | None) -> Any:
    """One file as one row of slot labels per (user, day)."""
    file = Path(path)
    if not file.is_file():
        raise InvalidParameterError(f"event log {path!r} does not exist; give an Ordóñez ADL "
                                    "file or a CSV with columns user,start,end,state")
    with file.open(encoding="utf-8-sig") as handle:
        first = handle.readline().split()
    events: Any = read_ordonez(file, repair=True) if first == ORDONEZ_HEADER else file
    return sequences_from_events(events, slot=slot, fill=fill)


def _days(paths: list[str], slot: str, fill: str | None) -> tuple[Any, list[str]]:
    """Every log's days, and one line per warning: what the Ordóñez repair changed, or a
    library warning (such as an ambiguous date order) under its own name."""
    import pandas as pd  # type: ignore[import-untyped]  # pandas is read by the events stage

    with warnings.catch_warnings(record=True) as repaired:
        warnings.simplefilter("always", UserWarning)
        days = pd.concat([_read_log(p, slot, fill) for p in paths])
    return days, [f"warning ({w.category.__name__}): {w.message}"
                  if issubclass(w.category, PufferfishWarning) else f"repaired {w.message}"
                  for w in repaired]


def _cohort(args: argparse.Namespace) -> dict:
    """``--theta cohort``: one chain for everyone, the log streamed (:mod:`._cohort`)."""
    from ._cohort import release_cohort  # deferred like this module

    if getattr(args, "calibration", None):
        raise InvalidParameterError("--calibration is not read with --theta cohort; give the "
                                    "chain with --model CHAIN.json (it is calibrated once)")
    per_day = _slots_per_day(args.slot)
    return release_cohort(args, per_day, _window_slots(args.window, args.slot, per_day))


def _theta(args: argparse.Namespace) -> str:
    """``--theta``; by default cohort for a Parquet log (a folder or .parquet/.pq file)."""
    if getattr(args, "theta", None):
        return str(args.theta)
    parquet = [Path(p).is_dir() or Path(p).suffix.lower() in (".parquet", ".pq")
               for p in args.events]
    return "cohort" if any(parquet) else "user"


def _slots_per_day(slot: str) -> int:
    """Slots in a day of ``--slot`` (a whole number of them)."""
    import pandas as pd

    try:
        ns = pd.Timedelta(slot).value
    except ValueError:
        ns = 0
    if not any(c.isalpha() for c in slot) or ns <= 0 or DAY_NS % ns:
        raise InvalidParameterError(f"--slot {slot!r} must be a duration with a unit that "
                                    "divides a day into whole slots, such as 1min or 10min")
    return DAY_NS // ns


def _duration(text: str) -> Any:
    """``pd.Timedelta`` of an option; ``1d`` (the help's own example) is read as ``1D``, the
    spelling pandas 3 keeps (it warns on the lower-case day unit)."""
    import pandas as pd

    text = text.strip()
    return pd.Timedelta(text[:-1] + "D" if text[-1:] == "d" and text[:-1].isdigit() else text)


def _window_slots(window: str, slot: str, length: int) -> int:
    try:
        ratio = _duration(window) / _duration(slot)
    except ValueError:
        raise InvalidParameterError(f"--window {window!r} is not a duration such as 1h or "
                                    "30min") from None
    if ratio < 1 or ratio != int(ratio) or ratio > length:
        raise InvalidParameterError(
            f"--window {window} must be a whole number of {slot} slots between one slot and "
            f"one day ({length} slots)")
    return int(ratio)


def _state(text: str | None, cls: ScenarioClass, days: Any) -> Any:
    """The activity of ``--query count:STATE``; by default the most frequent one."""
    states = cls.states_of(cls.nodes[0])
    if text is None:
        values, counts = np.unique(days.to_numpy().astype(str), return_counts=True)
        return next(s for s in states if str(s) == values[int(np.argmax(counts))])
    kind, _, name = text.partition(":")
    match = [s for s in states if str(s) == name]
    if kind != "count" or not match:
        raise InvalidParameterError(
            f"--query {text!r}: with --events give count:ACTIVITY, one of "
            f"{', '.join(map(str, states))}")
    return match[0]


def _calibrate(args: argparse.Namespace, days: Any) -> tuple[Calibration, Any]:
    users = list(days.index.get_level_values(0))
    period = getattr(args, "period", None)
    if period is None:
        cls = ScenarioClass.fit_groups(days, users, pseudocount=0.5, initial="stationary")
    else:       # a time-varying chain has no stationary law: the days' first slots give it
        cls = ScenarioClass.fit_groups(days, users, pseudocount=0.5, initial="empirical",
                                       period=period, shrinkage=args.shrinkage)
    return _mechanism(args).calibrate(Framework(cls), _query(args, cls, days)), cls


def _check_period(args: argparse.Namespace) -> None:
    """``--period`` fits days (a user's whole log under ``--unit window`` is one chain over
    many days, and a ``--model`` is already fitted)."""
    if getattr(args, "period", None) is None:
        if getattr(args, "shrinkage", None) is not None:
            raise InvalidParameterError("--shrinkage goes with --period SLOTS")
        return
    if args.unit == "window" or getattr(args, "model", None) is not None:
        raise InvalidParameterError(
            "--period (a time-of-day chain fitted from the log) needs --unit day and no "
            "--model: --unit window fits one chain over each user's whole log, and a --model "
            "is already fitted")


def _mechanism(args: argparse.Namespace) -> Mechanism:
    return mechanism(args.mechanism or "mqm", 1.0 if args.epsilon is None else args.epsilon)


def _query(args: argparse.Namespace, cls: ScenarioClass, days: Any) -> WindowedCount:
    """The windowed count of ``--query`` and ``--window`` (a day has ``days.shape[1]`` slots)."""
    width = _window_slots(args.window, args.slot, days.shape[1])
    if args.unit == "window" and days.shape[1] % width:
        raise InvalidParameterError(
            f"with --unit window, --window {args.window} must divide a day ({days.shape[1]} "
            f"slots of {args.slot}) so that every day's windows line up")
    return WindowedCount(_state(args.query, cls, days), width)


def release_events(args: argparse.Namespace) -> dict:
    """Fit, calibrate and release every day of the logs (see the module docstring); with
    ``--theta cohort`` one chain for everyone, the log streamed (:mod:`._cohort`)."""
    _check_period(args)
    if _theta(args) == "cohort":
        return _cohort(args)
    _check_user_options(args)
    days, repaired = _days(args.events, args.slot, args.fill)
    rng = None if args.seed is None else np.random.SeedSequence(args.seed)
    cal, cls, values, half, model, total = (_by_window if args.unit == "window"
                                            else _by_day)(args, days, rng)
    coordinates = coordinate_names(cls, _query(args, cls, days))[:values.shape[1]]
    rows = [f"{user} {day:%Y-%m-%d}: " + " ".join(str(v) for v in row)
            for (user, day), row in zip(days.index, values, strict=True)]
    text = "\n".join([
        f"logs: {len(args.events)} file(s), {len(days)} days, {days.shape[1]} slots of "
        f"{args.slot} a day; {model}", *repaired,
        cal.summary(), f"columns: {', '.join(coordinates[:4])}, ...", *rows[:20],
        *(["..."] if len(rows) > 20 else []),
        f"accuracy: each value is within ±{half:g} of its true answer with probability 0.95; "
        + total])
    return {"text": text, "json": {
        "mechanism": cal.mechanism, "scale": cal.scale, "epsilon": cal.epsilon,
        "unit": args.unit, "coordinates": list(coordinates),
        "days": [[str(u), f"{d:%Y-%m-%d}"] for u, d in days.index],
        "values": values.tolist(),
        "interval_95": [(values - half).tolist(), (values + half).tolist()]}}


def _check_user_options(args: argparse.Namespace) -> None:
    """Options of the cohort design refused with ``--theta user`` (never silently ignored)."""
    for option in ("output", "progress"):
        if getattr(args, option, None):
            raise InvalidParameterError(f"--{option} goes with --theta cohort (one chain for "
                                        "everyone, the log streamed)")
    if getattr(args, "calibration", None):     # it was silently ignored
        raise InvalidParameterError("--calibration is not read with --events: each user's chain "
                                    "is fitted and calibrated from the log; drop it, or give a "
                                    "chain with --theta cohort --model CHAIN.json")


def _by_window(args: argparse.Namespace, days: Any, rng: Any) -> tuple:
    """``--unit window``: calibration, class, values, half-width and the two summary lines."""
    cals, cls, values, half = _release_logs(args, days, rng)
    cal = max(cals.values(), key=lambda c: c.scale)
    model = (f"one chain per user over the whole log (midnight transitions modelled): "
             f"{[m.name for m in cls]}; one calibration per log length: "
             + ", ".join(f"{t} slots: scale {c.scale:.6g}" for t, c in cals.items()))
    total = (f"every window of a user's log is one coordinate of one release: ε = "
             f"{cal.epsilon:g} in all")
    return cal, cls, values, half, model, total


def _by_day(args: argparse.Namespace, days: Any, rng: Any) -> tuple:
    """``--unit day``: as :func:`_by_window`, one chain per user and day."""
    cal, cls = _calibrate(args, days)
    rel = cal.release(days.to_numpy(), rng)
    kind = "time-of-day chain" if getattr(args, "period", None) else "chain"
    model = f"one {kind} per user and day: {[m.name for m in cls]}"
    total = (f"assumed: days are independent under the model (each day is its own chain, so "
             f"an activity across midnight is cut there); then the days compose in parallel: "
             f"ε = {cal.epsilon:g} in all. --unit window models each user's log as one "
             "chain instead")
    return cal, cls, np.atleast_2d(rel.value), _half(rel), model, total


def _half(rel: Release) -> Any:
    """The 95 % half-width of a release's values (the same for every value: one scale)."""
    low, high = rel.interval(0.95)
    return np.max(np.asarray(high) - np.asarray(rel.value), initial=0)


def _release_logs(args: argparse.Namespace, days: Any, rng: Any
                  ) -> tuple[dict[int, Calibration], ScenarioClass, np.ndarray, Any]:
    """``--unit window``: each user's days joined into one sequence, one chain per user fitted
    on them, one calibration per log length; the values one row per day again."""
    users = list(dict.fromkeys(days.index.get_level_values(0)))
    logs = [_joined(days, user) for user in users]
    cls = ScenarioClass.fit_groups(logs, users, pseudocount=0.5, initial="stationary")
    query = _query(args, cls, days)
    by_length: dict[int, Calibration] = {}
    rngs = None if rng is None else rng.spawn(len(users))
    values, half = [], 0
    for i, log in enumerate(logs):
        if len(log) not in by_length:
            members = ScenarioClass([m.with_length(len(log)) for m in cls
                                     if isinstance(m, MarkovChainScenario)])
            by_length[len(log)] = _mechanism(args).calibrate(Framework(members), query)
        rel = by_length[len(log)].release([log], None if rngs is None else rngs[i])
        values.append(np.asarray(rel.value).reshape(len(log) // days.shape[1], -1))
        half = max(half, _half(rel))
    return by_length, cls, np.concatenate(values), half


def _joined(days: Any, user: Any) -> list:
    """One user's days end to end; they must be consecutive calendar days."""
    import pandas as pd

    own = days.xs(user, level=0)
    gaps = np.flatnonzero(np.diff(own.index.to_numpy()) != pd.Timedelta(days=1).to_timedelta64())
    if len(gaps):
        raise InvalidParameterError(
            f"user {user!r}: days {own.index[gaps[0]]:%Y-%m-%d} and "
            f"{own.index[gaps[0] + 1]:%Y-%m-%d} are not consecutive, so the log is not one "
            "chain; use --unit day")
    return own.to_numpy().ravel().tolist()
