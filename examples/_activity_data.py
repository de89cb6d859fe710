"""Activity sequences for the time-series example: real Ordóñez ADL labels when available.

The Ordóñez "Activities of Daily Living" labels (two homes, A and B; attribution and
non-commercial terms, see ../shared/data-real/README.md) are read from ``../shared/data-real``
when that folder exists; they are never copied into this repository. Otherwise a documented
synthetic generator produces days of the same shape.

Each day becomes one sequence of ``24 * 60 // slot_minutes`` slots labelled by the activity
covering the slot's midpoint ("Idle" where no interval covers it).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data-real"
IDLE = "Idle"


def _intervals(path: Path) -> list[tuple[datetime, datetime, str]]:
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        fields = [f.strip() for f in line.split("\t") if f.strip()]
        if len(fields) != 3:
            continue
        start, end = (datetime.strptime(f, "%Y-%m-%d %H:%M:%S") for f in fields[:2])
        if end > start:  # three rows of home A end before they start: dropped
            rows.append((start, end, fields[2]))
    return rows


def _days(rows: list, slot_minutes: int) -> list[list[str]]:
    first = min(r[0] for r in rows).replace(hour=0, minute=0, second=0)
    last = max(r[1] for r in rows)
    slots = 24 * 60 // slot_minutes
    days = []
    day = first
    while day < last:
        mids = [day + timedelta(minutes=slot_minutes * (i + 0.5)) for i in range(slots)]
        labels = [IDLE] * slots
        for start, end, act in rows:
            for i, m in enumerate(mids):
                if start <= m < end:
                    labels[i] = act
        if any(lab != IDLE for lab in labels):
            days.append(labels)
        day += timedelta(days=1)
    return days


def synthetic_days(n_days: int, home: str, slot_minutes: int, seed: int) -> list[list[str]]:
    """Synthetic days: sleep at night, meals around fixed times, TV/idle otherwise.

    A documented stand-in when the real data are absent; home "B" sleeps later.
    """
    rng = np.random.default_rng(seed)
    slots = 24 * 60 // slot_minutes
    shift = 1 if home == "B" else 0
    days = []
    for _ in range(n_days):
        hours = (np.arange(slots) + 0.5) * slot_minutes / 60
        day = np.where((hours < 7 + shift) | (hours > 23), "Sleeping", "Spare_Time/TV")
        for meal, at in (("Breakfast", 8 + shift), ("Lunch", 13), ("Dinner", 20)):
            start = at + rng.normal(0, 0.5)
            day[(hours >= start) & (hours < start + 0.5)] = meal
        leave = rng.uniform(9, 15)
        day[(hours >= leave) & (hours < leave + rng.uniform(0.5, 3))] = "Leaving"
        idle = rng.random(slots) < 0.08
        day[idle] = IDLE
        days.append(day.tolist())
    return days


def load_days(slot_minutes: int = 10) -> tuple[list[list[str]], list[str], str]:
    """(days, home label per day, source description)."""
    files = {h: DATA / f"Ordonez{h}_ADLs.txt" for h in "AB"}
    if all(p.is_file() for p in files.values()):
        days, homes = [], []
        for home, path in files.items():
            mine = _days(_intervals(path), slot_minutes)
            days += mine
            homes += [home] * len(mine)
        return days, homes, "Ordóñez ADL labels (real data, ../shared/data-real)"
    days = synthetic_days(14, "A", slot_minutes, 1) + synthetic_days(21, "B", slot_minutes, 2)
    return days, ["A"] * 14 + ["B"] * 21, "synthetic days (real data folder not found)"
