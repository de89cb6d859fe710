"""The options of ``release --events`` (kept apart from :mod:`._main` so that parsing imports
nothing heavy: this module imports only argparse)."""

from __future__ import annotations

import argparse

__all__ = ["event_options"]


def event_options(p: argparse.ArgumentParser) -> None:
    """``--events`` and the options that shape an event-log release."""
    _log_options(p)
    _slot_options(p)
    _chain_options(p)
    _cohort_output_options(p)


def _log_options(p: argparse.ArgumentParser) -> None:
    """The logs to read (``--events``): one chain per user or one for the cohort (``--theta``)."""
    p.add_argument("--events", action="append", metavar="PATH",
                   help="an activity log: an Ordóñez ADL file, a CSV file with columns user, "
                        "start, end, state, or a Parquet file or folder with those columns; "
                        "releases a count of one activity per window and day (instead of "
                        "--data); repeat for several homes (--theta user)")
    p.add_argument("--theta", choices=("user", "cohort"),
                   help="with --events: user fits one chain per user (the log in memory; the "
                        "default for CSV and Ordóñez files); cohort fits one chain for "
                        "everyone and streams the log in batches of whole users, reading it "
                        "twice (the default for Parquet; rows grouped by user)")


def _slot_options(p: argparse.ArgumentParser) -> None:
    """How the log is cut into slots (``--slot``, ``--fill``) and counted (``--window``)."""
    p.add_argument("--slot", default="10min", help="with --events: slot length "
                                                   "(default 10min)")
    p.add_argument("--window", default="1h", help="with --events: window of the released "
                                                  "counts (default 1h; 1d: one count a day)")
    p.add_argument("--fill", help="with --events: state of slots no event covers")


def _chain_options(p: argparse.ArgumentParser) -> None:
    """The chain fitted to the slots: time of day (``--period``, ``--shrinkage``) and
    sequence (``--unit``)."""
    p.add_argument("--period", type=int, metavar="SLOTS",
                   help="with --events --unit day: a time-of-day chain (per user, or the "
                        "cohort's), one transition matrix per block of SLOTS slots (6 at "
                        "10min: hourly), each row shrunk to the pooled fit "
                        "(docs/time-varying.md)")
    p.add_argument("--shrinkage", type=float,
                   help="with --period: pseudo-transitions per row towards the pooled fit "
                        "(default 10)")
    p.add_argument("--unit", choices=("day", "window"), default="day",
                   help="with --events: day (default) fits one chain per day and assumes days "
                        "independent under the model (an activity across midnight is cut "
                        "there); window fits one chain over each user's whole log and "
                        "calibrates its windows as one release (--theta user only)")


def _cohort_output_options(p: argparse.ArgumentParser) -> None:
    """Where a cohort release writes its values (``--output``) and its progress."""
    p.add_argument("--output", metavar="FILE",
                   help="with --theta cohort: write the noisy values to this CSV or Parquet "
                        "(.parquet) file, batch by batch (needed per user; with --aggregate "
                        "the daily totals)")
    p.add_argument("--progress", action="store_true",
                   help="with --theta cohort: one line per batch on stderr (also shown when "
                        "stderr is a terminal)")
