"""Activity sequences for the time-series example: real Ordóñez ADL labels when available.

The Ordóñez "Activities of Daily Living" labels (two homes, A and B; attribution and
non-commercial terms, see ../shared/data-real/README.md) are read from a folder holding
``OrdonezA_ADLs.txt`` and ``OrdonezB_ADLs.txt`` (by default ``../shared/data-real``); they are
never copied into this repository. A folder that was asked for and lacks them is an error.
Otherwise (the default folder lacks them, or synthetic days were asked for) a documented
synthetic generator produces days of the same shape. Either way the first line on stderr says
which data ran: a run on synthetic days must not pass for one on the real logs.

Each whole calendar day becomes one sequence of ``24 * 60 // slot_minutes`` slots labelled by
the activity covering the slot's midpoint ("Idle" where no interval covers it), by the
library's own ``pp.read_ordonez(..., repair=True)`` and ``pp.sequences_from_events``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data-real"
IDLE = "Idle"
FILES = ("OrdonezA_ADLs.txt", "OrdonezB_ADLs.txt")


class DataNotFound(FileNotFoundError):
    """A data folder that was asked for lacks the Ordóñez files."""


def _real_days(slot_minutes: int, folder: Path) -> tuple[list[list[str]], list[str]]:
    """Both homes' logs through the library: repaired (the report is printed), cut into
    slots, gaps labelled Idle; one row per whole calendar day."""
    import warnings

    import pandas as pd

    import pufferfish_pgm as pp

    with warnings.catch_warnings(record=True) as repaired:
        warnings.simplefilter("always", UserWarning)
        logs = [pp.read_ordonez(folder / f"Ordonez{h}_ADLs.txt", user=h, repair=True)
                for h in "AB"]
    for w in repaired:
        print(f"repaired {w.message}")
    wide = pp.sequences_from_events(pd.concat(logs), slot=f"{slot_minutes}min", fill=IDLE)
    return wide.to_numpy().tolist(), list(wide.index.get_level_values(0))


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


def load_days(slot_minutes: int = 10, folder: Path | None = None, synthetic: bool = False
              ) -> tuple[list[list[str]], list[str], str]:
    """(days, home label per day, source description); the source is also the first line
    written to stderr.

    ``folder`` (default :data:`DATA`) must hold both Ordóñez files when it is given
    (:class:`DataNotFound` otherwise); the default folder without them, or ``synthetic=True``,
    gives synthetic days, said loudly.
    """
    where = DATA if folder is None else Path(folder)
    found = all((where / name).is_file() for name in FILES)
    if folder is not None and not found and not synthetic:
        raise DataNotFound(f"{where} does not hold {' and '.join(FILES)}; give the folder of "
                           "the Ordóñez ADL files, or --synthetic")
    if found and not synthetic:
        print(f"data: Ordóñez ADL logs (real) from {where}", file=sys.stderr, flush=True)
        days, homes = _real_days(slot_minutes, where)
        return days, homes, f"Ordóñez ADL labels (real data, {where})"
    why = "asked for" if synthetic else f"the Ordóñez files are not in {where}"
    print(f"data: SYNTHETIC days, not the real logs ({why}); pass the folder of "
          f"{' and '.join(FILES)} to run on them", file=sys.stderr, flush=True)
    days = synthetic_days(14, "A", slot_minutes, 1) + synthetic_days(21, "B", slot_minutes, 2)
    return days, ["A"] * 14 + ["B"] * 21, f"synthetic days ({why})"
