"""``release --events``: activity event logs in, a private profile per window and day out.

The whole activity workflow from the command line: each log (an Ordóñez ADL file, repaired as
:func:`~pufferfish_pgm.read_ordonez` does, or a CSV with columns user, start, end, state) is
cut into slots (:func:`~pufferfish_pgm.sequences_from_events`), one chain per user (home) is
fitted from that user's days (the class Θ), and the count of one activity in every window
(``--window``, default one hour) is released for every day, with one Laplace scale on every
coordinate. Each day is one release on independent days, so the total over the days is the ε
of one day (parallel composition, ``docs/composition.md``).
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InvalidParameterError
from ..mechanisms import Calibration
from ..mechanisms._registry import mechanism
from ..queries import WindowedCount
from ..scenarios import ScenarioClass, read_ordonez, sequences_from_events
from ..secrets import Framework

__all__ = ["release_events"]

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
    """Every log's days, and what the Ordóñez repair changed (one line per file)."""
    import pandas as pd  # type: ignore[import-untyped]  # pandas is read by the events stage

    with warnings.catch_warnings(record=True) as repaired:
        warnings.simplefilter("always", UserWarning)
        days = pd.concat([_read_log(p, slot, fill) for p in paths])
    return days, [f"repaired {w.message}" for w in repaired]


def _window_slots(window: str, slot: str, length: int) -> int:
    import pandas as pd

    try:
        ratio = pd.Timedelta(window) / pd.Timedelta(slot)
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
    cls = ScenarioClass.fit_groups(days, users, pseudocount=0.5, initial="stationary")
    query = WindowedCount(_state(args.query, cls, days),
                          _window_slots(args.window, args.slot, len(cls.nodes)))
    epsilon = 1.0 if args.epsilon is None else args.epsilon
    return mechanism(args.mechanism or "mqm", epsilon).calibrate(Framework(cls), query), cls


def release_events(args: argparse.Namespace) -> dict:
    """Fit, calibrate and release every day of the logs (see the module docstring)."""
    days, repaired = _days(args.events, args.slot, args.fill)
    cal, cls = _calibrate(args, days)
    rng = None if args.seed is None else np.random.SeedSequence(args.seed)
    rel = cal.release(days.to_numpy(), rng)
    low, high = rel.interval(0.95)
    half = float(np.max(np.asarray(high) - np.asarray(rel.value), initial=0.0))
    rows = [f"{user} {day:%Y-%m-%d}: " + " ".join(str(v) for v in values)
            for (user, day), values in zip(days.index, np.atleast_2d(rel.value), strict=True)]
    text = "\n".join([
        f"logs: {len(args.events)} file(s), {len(days)} days, {len(cls.nodes)} slots of "
        f"{args.slot}; one chain per user: {[m.name for m in cls]}", *repaired,
        cal.summary(), f"columns: {', '.join(rel.coordinates[:4])}, ...", *rows[:20],
        *(["..."] if len(rows) > 20 else []),
        f"accuracy: each value is within ±{half:g} of its true answer with probability 0.95; "
        f"days are independent releases: ε = {cal.epsilon:g} in all"])
    return {"text": text, "json": {
        "mechanism": rel.mechanism, "scale": rel.scale, "epsilon": rel.epsilon,
        "coordinates": list(rel.coordinates),
        "days": [[str(u), f"{d:%Y-%m-%d}"] for u, d in days.index],
        "values": np.atleast_2d(rel.value).tolist(),
        "interval_95": [np.asarray(low).tolist(), np.asarray(high).tolist()]}}
