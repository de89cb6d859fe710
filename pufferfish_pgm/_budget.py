"""The memory budget: how many bytes one step that grows with the model may allocate (internal).

Steps whose size grows with the model (the factors of variable elimination, count tables)
compute their largest allocation before they start and raise :class:`LimitExceededError`
when it exceeds the budget, so a machine never discovers the size by ``MemoryError`` or the
OOM killer. The budget comes from, in this order:

1. the ``memory_budget=`` argument of the call (bytes, or a string such as ``"2GB"``);
2. the environment variable ``PUFFERFISH_PGM_MEMORY_BUDGET`` (same forms), the global setting;
3. a quarter of the memory this process can still use: the smaller of the system's available
   memory and what the address-space limit (``ulimit -v``) leaves above the process's size.

Examples
--------
>>> memory_budget("512MiB")
536870912
>>> memory_budget(10**6)
1000000
>>> check_allocation(4 * 10**5, budget=10**6, what="the test table")   # fits: no error
"""

from __future__ import annotations

import math
import os
import re
import resource

from ._validation import positive_finite
from .errors import InvalidParameterError, LimitExceededError

__all__ = ["BUDGET_ENV", "available_memory", "check_allocation", "describe_bytes",
           "memory_budget"]

BUDGET_ENV = "PUFFERFISH_PGM_MEMORY_BUDGET"
#: Share of the usable memory one step may take by default.
DEFAULT_FRACTION = 0.25
#: Under the default budget, allocations up to this size pass without reading the system's
#: free memory (``/proc``), which would cost more than the many small queries themselves.
QUICK_BYTES = 16 * 2**20
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([a-zA-Z]*)\s*$")


def _parse(text: str, source: str) -> int:
    match = _SIZE.match(text)
    unit = match.group(2).lower() if match else ""
    if match is None or unit not in _UNITS:
        raise InvalidParameterError(
            f"{source} = {text!r} is not a size; write bytes or a number with a unit, such as "
            "'500MB', '2GB' or '1.5GiB'")
    return int(float(match.group(1)) * _UNITS[unit])


def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _process_size() -> int:
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


def available_memory() -> int:
    """Bytes this process can still allocate: system memory available, capped by ``ulimit -v``.

    Examples
    --------
    >>> available_memory() > 0
    True
    """
    found = _meminfo_available()
    if found is None:
        found = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        found = min(found, max(soft - _process_size(), 0))
    return max(int(found), 1)


def memory_budget(budget: int | float | str | None = None) -> int:
    """The budget in bytes: the argument, else ``$PUFFERFISH_PGM_MEMORY_BUDGET``, else the default.

    Examples
    --------
    >>> memory_budget("1.5 GB")
    1500000000
    >>> memory_budget(-1)
    Traceback (most recent call last):
    ...
    pufferfish_pgm.errors.InvalidParameterError: memory_budget must be a finite number > 0, ...
    """
    if budget is None:
        text = os.environ.get(BUDGET_ENV, "").strip()
        if not text:
            return max(int(available_memory() * DEFAULT_FRACTION), 1)
        out = _parse(text, f"the environment variable {BUDGET_ENV}")
    elif isinstance(budget, str):
        out = _parse(budget, "memory_budget")
    else:
        out = math.ceil(positive_finite("memory_budget", budget))
    if out < 1:
        raise InvalidParameterError(f"the memory budget {out} bytes is less than one byte")
    return out


def describe_bytes(size: float) -> str:
    """``size`` bytes in a short human form.

    Examples
    --------
    >>> describe_bytes(3 * 2**30), describe_bytes(512)
    ('3.00 GiB', '512 B')
    """
    for unit, step in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= step:
            return f"{size / step:.2f} {unit}"
    return f"{int(size)} B"


def check_allocation(size: float, *, budget: int | float | str | None = None,
                     what: str) -> None:
    """Raise :class:`LimitExceededError` when ``size`` bytes exceed the budget.

    ``what`` names the allocation (the node, quilt, table...) for the message. Under the
    default budget, sizes up to ``QUICK_BYTES`` (16 MiB) pass without reading the free memory.
    """
    if budget is None and size <= QUICK_BYTES and not os.environ.get(BUDGET_ENV, "").strip():
        return
    limit = memory_budget(budget)
    if size > limit:
        raise LimitExceededError(
            f"{what} needs {describe_bytes(size)}, more than the memory budget of "
            f"{describe_bytes(limit)}; raise it with memory_budget=... or the environment "
            f"variable {BUDGET_ENV} (e.g. '8GB') if the machine has the memory, or ask a "
            "smaller question")
