"""Library messages in command-line words: a hint written for Python callers
(``memory_budget=...``, ``fill='Idle'``, ``events.assign(user='me')``) becomes the option or
file change that does the same from the command line.

Examples
--------
>>> cli_words("... raise it with memory_budget=... or the environment variable X")
'... raise it with --memory-budget SIZE (e.g. --memory-budget 8GB) or the environment variable X'
>>> cli_words("a budget of 2GiB would fit: pass memory_budget='2GiB' or set ...")
'a budget of 2GiB would fit: pass --memory-budget 2GiB or set ...'
>>> cli_words("user 'A', day 2: ...; pass fill=<state> (e.g. fill='Idle') to label gaps")
"user 'A', day 2: ...; pass --fill STATE (e.g. --fill Idle) to label gaps"
"""

from __future__ import annotations

import re

__all__ = ["cli_words"]

#: (pattern of a Python hint, its command-line words), applied in order.
REWORDINGS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"memory_budget=\.\.\."), "--memory-budget SIZE (e.g. --memory-budget 8GB)"),
    (re.compile(r"memory_budget=(?P<q>['\"]?)(?P<size>[\w.]+)(?P=q)"),
     "--memory-budget \\g<size>"),
    (re.compile(r"pass fill=<state> \(e\.g\. fill='Idle'\)"),
     "pass --fill STATE (e.g. --fill Idle)"),
    (re.compile(r"events has no column (?P<col>'[^']*') \(the \w+= argument\); its columns are "
                r"(?P<cols>\[.*?\]): pass \w+=<column name>"
                r"(?P<user> \(a single user's log: add one with events\.assign\(user='me'\)\))?"),
     "the event log has no column \\g<col>; its columns are \\g<cols>: a CSV log needs the "
     "header user,start,end,state\\g<user>"),
    (re.compile(r" \(a single user's log: add one with events\.assign\(user='me'\)\)"),
     " (a single user's log: add a column user with one name on every row)"),
    (re.compile(r"^slot\b"), "--slot"),
    (re.compile(r",? or pd\.Timedelta\(minutes=10\)"), ""),
    (re.compile(r"convert them first, e\.g\. pd\.to_datetime\(col, unit='s'\)"),
     "write them as date-times in the log, e.g. 2024-01-02 07:30"),
    (re.compile(r"convert with \.dt\.tz_convert\(<zone>\)\.dt\.tz_localize\(None\)"),
     "write local times without a zone in the log"),
    (re.compile(r"(?P<what>, which the query .* reads; give a column for each of the \d+ nodes "
                r"it reads \(.*\))$"), "\\g<what>, or narrow the query with --query-nodes"),
    (re.compile(r"or raise max_grid"),
     "or ask for fewer coordinates (with --events: a wider --window)"),
)


def cli_words(message: str) -> str:
    """``message`` with the Python hints of :data:`REWORDINGS` in command-line words."""
    for pattern, words in REWORDINGS:
        message = pattern.sub(words, message)
    return message
