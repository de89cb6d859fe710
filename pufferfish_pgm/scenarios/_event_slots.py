"""Time slots of an event log: the slot length, its labels and the two slot rules (internal).

Split from :mod:`pufferfish_pgm.scenarios._events`, which builds the table of slots of each
(user, day); :mod:`._event_counts` counts on the same slots without building it. Times are
int64 nanoseconds; a user's times here count from the midnight of their first whole day.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InvalidDataError, InvalidParameterError, ParameterTypeError
from ._event_records import DAY_NS, SECOND_NS, _show

if TYPE_CHECKING:
    import pandas as pd  # type: ignore[import-untyped]  # (no pandas-stubs installed)

#: The slot rules of :func:`~pufferfish_pgm.scenarios.sequences_from_events`.
RULES = ("midpoint", "majority")


def _slot_ns(slot: Any) -> int:
    """The slot length in nanoseconds, checked: at least one second, dividing a day evenly.

    Examples
    --------
    >>> _slot_ns("10min") // SECOND_NS
    600
    >>> _slot_ns("7min")
    Traceback (most recent call last):
    ...
    pufferfish_pgm.errors.InvalidParameterError: slot '7min' does not divide a day evenly \
(205.7 slots a day); every day must have the same slots: pass a divisor of 24 h such as '1min', \
'5min', '10min', '15min', '30min' or '1h'
    """
    import pandas as pd

    length = _slot_length(slot)
    if length is pd.NaT:
        raise InvalidParameterError("slot is NaT; pass a duration such as '10min'")
    ns = int(length.value)
    if ns <= 0:
        raise InvalidParameterError(f"slot must be a positive duration, got {slot!r}")
    if ns < SECOND_NS:
        raise InvalidParameterError(
            f"slot {slot!r} is shorter than one second (86,400 slots a day at most); "
            "pass e.g. '1s' or '1min'")
    if DAY_NS % ns:
        raise InvalidParameterError(
            f"slot {slot!r} does not divide a day evenly ({DAY_NS / ns:.4g} slots a day); "
            "every day must have the same slots: pass a divisor of 24 h such as '1min', '5min', "
            "'10min', '15min', '30min' or '1h'")
    return ns


def _slot_length(slot: Any) -> pd.Timedelta:
    """``slot`` read as a duration (a string with a unit, a timedelta), not yet checked."""
    import pandas as pd

    if isinstance(slot, str):
        text = slot.strip()
        if re.fullmatch(r"[+-]?[\d.]+", text):
            raise InvalidParameterError(
                f"slot {slot!r} has no unit; write e.g. '{text}min' or '{text}s'")
        try:
            return pd.Timedelta(text)
        except (ValueError, TypeError) as err:
            raise InvalidParameterError(
                f"slot {slot!r} is not a duration ({err}); pass e.g. '10min', '1min', '1h' or "
                "pd.Timedelta(minutes=10)") from None
    if isinstance(slot, (timedelta, np.timedelta64)):
        return pd.Timedelta(slot)
    raise ParameterTypeError(
        f"slot must be a duration such as '10min' or pd.Timedelta(minutes=10), got the "
        f"{type(slot).__name__} {slot!r}")


def _slot_labels(slot_ns: int, per_day: int) -> np.ndarray:
    """The start time of each slot of a day, ``"hh:mm"`` (``"hh:mm:ss"`` when the slot is not
    a whole number of minutes), as an object array.

    Examples
    --------
    >>> _slot_labels(6 * 3600 * SECOND_NS, 4).tolist()
    ['00:00', '06:00', '12:00', '18:00']
    >>> _slot_labels(90 * SECOND_NS, 960)[:3].tolist()
    ['00:00:00', '00:01:30', '00:03:00']
    """
    offsets = np.arange(per_day, dtype=np.int64) * (slot_ns // SECOND_NS)
    hours, rest = np.divmod(offsets, 3600)
    minutes, seconds = np.divmod(rest, 60)
    text = np.char.add(np.char.add(np.char.mod("%02d", hours), ":"),
                       np.char.mod("%02d", minutes))
    if slot_ns % (60 * SECOND_NS):
        text = np.char.add(np.char.add(text, ":"), np.char.mod("%02d", seconds))
    return text.astype(object)


def _midpoint(s: np.ndarray, e: np.ndarray, code: np.ndarray, slot: int, n: int) -> np.ndarray:
    """State code per slot, -1 where no interval covers the midpoint.

    Intervals are sorted and disjoint, so the only candidate for a midpoint is the last
    interval starting at or before it. Times are doubled so midpoints stay integers.
    """
    mid2 = (2 * np.arange(n, dtype=np.int64) + 1) * slot
    idx = np.searchsorted(2 * s, mid2, side="right") - 1
    safe = np.maximum(idx, 0)
    covered = (idx >= 0) & (mid2 < 2 * e[safe])
    return np.where(covered, code[safe], -1)


def _majority(s: np.ndarray, e: np.ndarray, code: np.ndarray, slot: int, n: int,
              n_states: int) -> np.ndarray:
    """State code per slot, -1 where the uncovered part is strictly the largest."""
    cs, ce = np.clip(s, 0, n * slot), np.clip(e, 0, n * slot)
    inside = ce > cs
    cs, ce, code = cs[inside], ce[inside], code[inside]
    k0, k1 = cs // slot, (ce - 1) // slot
    counts = k1 - k0 + 1
    ev = np.repeat(np.arange(len(cs)), counts)                    # one entry per (interval, slot)
    heads = np.repeat(np.cumsum(counts) - counts, counts)
    k = k0[ev] + np.arange(len(ev)) - heads
    begin = np.maximum(cs[ev], k * slot)
    part = np.minimum(ce[ev], (k + 1) * slot) - begin
    key = k * (n_states + 1) + code[ev]
    groups, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    spent = np.rint(np.bincount(inverse.ravel(), weights=part)).astype(np.int64)  # exact: < 2^53
    g_slot, g_code, g_first = groups // (n_states + 1), groups % (n_states + 1), begin[first]
    order = np.lexsort((g_first, -spent, g_slot))                # per slot: most time, earliest
    lead = order[np.flatnonzero(np.diff(g_slot[order], prepend=-1))]  # first row of each slot
    out = np.full(n, -1, dtype=np.int64)
    best = np.zeros(n, dtype=np.int64)
    out[g_slot[lead]] = g_code[lead]
    best[g_slot[lead]] = spent[lead]
    covered = np.rint(np.bincount(k, weights=part, minlength=n)).astype(np.int64)
    out[slot - covered > best] = -1
    return out


def _gap_error(user: Any, origin: int, k: int, count: int, slot: int, labels: np.ndarray,
               rule: str) -> InvalidDataError:
    """The error for a user's uncovered slots: the first one (``k`` slots after ``origin``)
    named by day and label, how many there are, and how to label them (``fill``)."""
    day = _show(origin + (k // len(labels)) * DAY_NS)[:10]
    label = labels[k % len(labels)]
    if rule == "midpoint":
        mid = _show(origin + k * slot + slot // 2)[11:]
        what = f"no interval covers the slot's midpoint ({mid})"
    else:
        what = "no state covers more of the slot than the uncovered part"
    plural = "slot of this user is" if count == 1 else "slots of this user are"
    return InvalidDataError(
        f"user {user!r}, day {day}, slot {label!r}: {what}; {count} {plural} uncovered in all; "
        "pass fill=<state> (e.g. fill='Idle') to label gaps, or complete the log")
