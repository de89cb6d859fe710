"""``release --events --theta cohort``: one chain for a whole cohort, its log streamed in batches.

The design for 10⁵–10⁷ people, whose log (a Parquet file or folder, or a CSV file, grouped by
user) never sits in memory whole:

1. **Θ, pass 1**: every batch of whole users (:func:`~pufferfish_pgm.scenarios.event_batches`)
   gives its transition counts straight from the intervals (no slots); the partials add up
   exactly and ONE chain of one day of slots is fitted from the total
   (:meth:`~pufferfish_pgm.scenarios.TransitionCounts.chain`, the same pseudocount rule as the
   per-user path). ``--model`` (a chain of one day of slots, JSON) skips this pass.
2. **One calibration** of the windowed count on that chain.
3. **Pass 2**: the batches are read again and answered exactly per (user, day) from the
   intervals (:func:`~pufferfish_pgm.scenarios.event_counts`, equal to ``Calibration.answers``
   on the slots). Per user, each batch gets its noise (``add_noise``; secure, or child ``i``
   of ``--seed``'s ``SeedSequence`` for batch ``i``) and is appended to ``--output`` (CSV or
   Parquet); ``--aggregate`` sums the exact answers over users per day and draws once.

Memory: a batch holds at most half the memory budget at :data:`ROW_WORK_BYTES` a row of the
log (the other half is the interpreter, the libraries and the output); a user whose rows alone
pass that is refused before any output is written. Progress goes to stderr, one line a batch,
when stderr is a terminal or with ``--progress``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._budget import describe_bytes, memory_budget
from ..errors import InvalidDataError, InvalidParameterError
from ..mechanisms import Calibration, Release
from ..queries import WindowedCount
from ..scenarios import (
    ScenarioClass,
    event_batches,
    event_counts,
    event_transition_counts,
    load_scenarios,
)
from ..secrets import Framework
from ._cohort_output import Sink, is_parquet_name

__all__ = ["ROW_WORK_BYTES", "release_cohort"]

#: Bytes a row of the log takes while a batch is read and answered (measured: ~180 for
#: Parquet, more for a CSV's text columns; kept generous).
ROW_WORK_BYTES = 512

#: The start of the error of a batch (or log) with no whole day (the first and last days of
#: each user are dropped): such a batch is skipped; a log with none is refused.
NO_WHOLE_DAY = "no user has a whole calendar day"


@dataclass(frozen=True)
class Source:
    """The log and how it is read: its path, the slot options and the batch size."""

    path: Path
    slot: str
    fill: Any
    batch_rows: int
    budget: int
    show: bool
    period: int | None = None

    def batches(self, label: str) -> Iterator[tuple[int, Any]]:
        """``(i, batch)`` of whole users, with a progress line per batch on stderr."""
        started, users = time.perf_counter(), 0
        frames = event_batches(self.path, batch_rows=self.batch_rows,
                               row_bytes=ROW_WORK_BYTES, memory_budget=self.budget // 2)
        for i, batch in enumerate(frames):
            users += int(batch["user"].nunique())
            if self.show:
                print(f"{label}: batch {i + 1}: {len(batch):,} intervals, {users:,} users so "
                      f"far, {time.perf_counter() - started:.1f} s", file=sys.stderr,
                      flush=True)
            yield i, batch


def source(args: argparse.Namespace) -> Source:
    """The log of ``--events`` (one path) and its batch size under the memory budget."""
    if len(args.events) != 1:
        raise InvalidParameterError(
            f"with --theta cohort give one --events path (a Parquet file or folder, or a CSV "
            f"file), got {len(args.events)}; put the logs in one folder")
    path = Path(args.events[0])
    if not path.exists():
        raise InvalidParameterError(f"event log {args.events[0]!r} does not exist; give a "
                                    "Parquet file or folder, or a CSV file")
    if args.unit != "day":
        raise InvalidParameterError("--theta cohort fits one chain of one day for everyone, so "
                                    "it needs --unit day; --unit window needs --theta user")
    budget = memory_budget()
    rows = budget // (2 * ROW_WORK_BYTES)
    if rows < 1:
        raise InvalidParameterError(f"--memory-budget {budget} bytes is too small for a batch "
                                    f"of one row ({2 * ROW_WORK_BYTES} bytes)")
    show = bool(args.progress) or sys.stderr.isatty()
    return Source(path, args.slot, args.fill, int(rows), budget, show,
                  getattr(args, "period", None))


def _or_skip(count: Callable[[Any], Any], batch: Any) -> Any:
    """``count(batch)``, or None for a batch in which no user has a whole day."""
    try:
        return count(batch)
    except InvalidDataError as err:
        if str(err).startswith(NO_WHOLE_DAY):
            return None
        raise


def fit(src: Source) -> Any:
    """Pass 1: the transition counts of every batch, summed (one chain's worth of data)."""
    total = None
    for _, batch in src.batches("pass 1 (fit)"):
        part = _or_skip(lambda b: event_transition_counts(b, slot=src.slot, fill=src.fill,
                                                          period=src.period), batch)
        if part is not None:
            total = part if total is None else total + part
    if total is None:
        raise _no_whole_day(src)
    return total


def _no_whole_day(src: Source) -> InvalidDataError:
    return InvalidDataError(f"{NO_WHOLE_DAY} in {src.path} (the partial first and last days "
                            "of each user are dropped); give a log that spans at least three "
                            "calendar days")


def theta(args: argparse.Namespace, src: Source, per_day: int) -> tuple[ScenarioClass, Any]:
    """Θ: ``--model`` (a chain of one day of slots), else one chain fitted by pass 1; and the
    slots' state frequencies when fitted (for the default query), else None."""
    if args.model is not None:
        cls = load_scenarios(args.model, renormalize=args.renormalize)
        lengths = {len(m.nodes) for m in cls}
        if cls.kind != "chain" or lengths != {per_day}:
            raise InvalidParameterError(
                f"--model {args.model} must be a chain of one day of {args.slot} slots "
                f"({per_day} steps); it has {sorted(lengths)} steps")
        return cls, None
    counts = fit(src)
    if src.period is None:
        chain = counts.chain(pseudocount=0.5, initial="stationary", name="cohort")
    else:       # a time-of-day chain has no stationary law: the days' first slots give it
        chain = counts.chain(pseudocount=0.5, initial="empirical", name="cohort",
                             shrinkage=args.shrinkage)
    arrivals = counts.transitions.reshape(-1, len(counts.states)).sum(axis=0)
    return ScenarioClass([chain]), counts.initial + arrivals


def query(args: argparse.Namespace, cls: ScenarioClass, frequency: Any,
          width: int) -> WindowedCount:
    """``--query count:STATE`` per window; by default the most frequent state."""
    states = cls.states_of(cls.nodes[0])
    if args.query is None:
        if frequency is None:
            raise InvalidParameterError("with --model give --query count:ACTIVITY, one of "
                                        f"{', '.join(map(str, states))}")
        return WindowedCount(states[int(np.argmax(frequency))], width)
    kind, _, name = args.query.partition(":")
    match = [s for s in states if str(s) == name]
    if kind != "count" or not match:
        raise InvalidParameterError(
            f"--query {args.query!r}: with --events give count:ACTIVITY, one of "
            f"{', '.join(map(str, states))}")
    return WindowedCount(match[0], width)


def answers(src: Source, q: WindowedCount, batch: Any) -> Any:
    """The exact answers of one batch per (user, day), one column per window; None when no
    user of the batch has a whole day."""
    return _or_skip(lambda b: event_counts(b, q.state, slot=src.slot, width=q.width,
                                           fill=src.fill), batch)


def aggregate(src: Source, cal: Calibration, q: WindowedCount, seed: int | None) -> Any:
    """Pass 2, ``--aggregate``: the exact answers summed over users per day, one draw."""
    total = None
    for _, batch in src.batches("pass 2 (answers)"):
        part = answers(src, q, batch)
        if part is not None:
            part = part.groupby(level="day").sum()
            total = part if total is None else total.add(part, fill_value=0)
    if total is None:
        raise _no_whole_day(src)
    rng = None if seed is None else np.random.SeedSequence(seed).spawn(1)[0]
    return cal.add_noise(total.astype(np.int64), rng)


def per_user(src: Source, cal: Calibration, q: WindowedCount, seed: int | None,
             sink: Sink) -> None:
    """Pass 2 per user: batch ``i`` gets its own noise (child ``i`` of the seed) and goes
    to the sink."""
    root = None if seed is None else np.random.SeedSequence(seed)
    for _, batch in src.batches("pass 2 (release)"):
        part = answers(src, q, batch)
        rng = None if root is None else root.spawn(1)[0]   # child i for batch i
        if part is not None:
            sink.write(cal.add_noise(part, rng))


def half_width(cal: Calibration) -> Any:
    """The 95 % half-width of every released value (one scale, integer answers)."""
    low, _ = Release(value=0, scale=cal.scale, epsilon=cal.epsilon, mechanism=cal.mechanism,
                     query=cal.query.name).interval(0.95)
    return -low


def release_cohort(args: argparse.Namespace, per_day: int, width: int) -> dict:
    """Fit once, calibrate once, release every (user, day) or every day's total."""
    src = source(args)
    if not args.aggregate and args.output is None:
        raise InvalidParameterError("--theta cohort releases per user into a file: give "
                                    "--output FILE.csv or FILE.parquet, or --aggregate for "
                                    "one noisy total per day")
    if args.output is not None and is_parquet_name(args.output):
        Sink.check_parquet()
    cls, frequency = theta(args, src, per_day)
    q = query(args, cls, frequency, width)
    cal = _mechanism(args).calibrate(Framework(cls), q)
    if args.aggregate:
        noisy = aggregate(src, cal, q, args.seed)
        if args.output is not None:
            with Sink(Path(args.output)) as sink:
                sink.write(noisy)
        return _report(args, src, cal, cls, noisy, None)
    with Sink(Path(args.output)) as sink:
        per_user(src, cal, q, args.seed, sink)
    return _report(args, src, cal, cls, None, sink)


def _mechanism(args: argparse.Namespace) -> Any:
    from ..mechanisms._engine import mechanism

    return mechanism(args.mechanism or "mqm", 1.0 if args.epsilon is None else args.epsilon)


def _report(args: argparse.Namespace, src: Source, cal: Calibration, cls: ScenarioClass,
            noisy: Any, sink: Sink | None) -> dict:
    """The text and JSON of a cohort release."""
    half = half_width(cal)
    chain = cls.members[0]
    head = [f"log: {src.path} read in batches of at most {src.batch_rows:,} rows (memory "
            f"budget {describe_bytes(src.budget)}); Θ: "
            + (f"--model {args.model}" if args.model else
               f"one chain for the cohort, fitted from the intervals ({len(chain.nodes)} "
               f"slots of {args.slot}, states {', '.join(map(str, chain.states))})"),
            cal.summary()]
    accuracy = (f"accuracy: each value is within ±{half:g} of its true answer with probability "
                f"0.95; assumed: days are independent under the model, so the days compose in "
                f"parallel: ε = {cal.epsilon:g} in all")
    json_out = {"mechanism": cal.mechanism, "scale": cal.scale, "epsilon": cal.epsilon,
                "theta": "cohort", "unit": "day", "half_width_95": half}
    if noisy is not None:
        rows = [f"{day:%Y-%m-%d}: " + " ".join(str(v) for v in row)
                for day, row in zip(noisy.index, noisy.to_numpy(), strict=True)]
        json_out.update(coordinates=list(noisy.columns),
                        days=[f"{d:%Y-%m-%d}" for d in noisy.index],
                        values=noisy.to_numpy().tolist())
        lines = [*head, f"one noisy total over users per day: {', '.join(noisy.columns[:4])}"
                 + (", ..." if noisy.shape[1] > 4 else ""), *rows, accuracy]
    else:
        assert sink is not None
        json_out.update(output=str(args.output), rows=sink.rows, users=sink.users)
        lines = [*head, f"wrote {sink.rows:,} noisy rows ({sink.users:,} users, one row per "
                 f"user and day) to {args.output}", accuracy]
    if args.output is not None and noisy is not None:
        json_out["output"] = str(args.output)
    return {"text": "\n".join(lines), "json": json_out}

