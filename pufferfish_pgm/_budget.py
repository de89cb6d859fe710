"""The memory budget: how many bytes one step that grows with the model may allocate (internal).

Steps whose size grows with the model (the factors of variable elimination, count tables)
compute their largest allocation before they start and raise :class:`LimitExceededError`
when it exceeds the budget, so a machine never discovers the size by ``MemoryError`` or the
OOM killer. The budget comes from, in this order:

1. the ``memory_budget=`` argument of the call (bytes, or a string such as ``"2GB"``);
2. the environment variable ``PUFFERFISH_PGM_MEMORY_BUDGET`` (same forms), the global setting;
3. a quarter of the memory this process may use on this machine (:func:`machine_memory`):
   the smallest of the total physical memory, the cgroup memory limit (containers) and the
   address-space limit (``ulimit -v``, ``RLIMIT_AS``).

The default depends on the machine and its limits only, never on the memory free at the
moment: the same call is accepted or refused the same way on a quiet machine and under load
(under load an accepted step may be slower, as the system swaps or reclaims cache). Where
none of the three can be read (a platform without ``os.sysconf`` and without the optional
``psutil`` package), the machine is taken to have ``FALLBACK_MEMORY`` = 4 GiB, so the default
budget is 1 GiB; set the environment variable to use more. The Unix-only ``resource`` module
is imported only when the limit is read, so the package imports on Windows too.

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

from ._validation import positive_finite
from .errors import InvalidParameterError, LimitExceededError

__all__ = ["BUDGET_ENV", "check_allocation", "describe_bytes", "machine_memory",
           "memory_budget"]

BUDGET_ENV = "PUFFERFISH_PGM_MEMORY_BUDGET"
#: Share of the usable memory one step may take by default.
DEFAULT_FRACTION = 0.25
#: Under the default budget, allocations up to this size pass without reading the machine's
#: memory and limits, which would cost more than the many small queries themselves.
QUICK_BYTES = 16 * 2**20
#: The memory assumed when neither ``os.sysconf``, ``psutil`` nor a limit can be read.
FALLBACK_MEMORY = 4 * 2**30
#: Where Linux control groups (v2, then v1) state a container's memory limit.
_CGROUP_FILES = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
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


def _physical_memory() -> int | None:
    """Total physical memory: ``os.sysconf`` (Unix), else ``psutil`` if installed, else None."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        pass
    try:
        import psutil  # type: ignore[import-untyped]  # optional, not a dependency
    except ImportError:
        return None
    return int(psutil.virtual_memory().total)


def _cgroup_limit() -> int | None:
    """The container's memory limit (cgroup v2 ``memory.max`` or v1), None when unlimited."""
    for path in _CGROUP_FILES:
        try:
            with open(path, encoding="ascii") as f:
                text = f.read().strip()
        except OSError:
            continue
        return int(text) if text.isdigit() and int(text) < 2**60 else None
    return None


def _address_limit() -> int | None:
    """The soft address-space limit (``ulimit -v``), None when unlimited or unknown."""
    try:
        import resource  # Unix only: imported here so that the package imports on Windows
    except ImportError:
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft == resource.RLIM_INFINITY or soft < 0 else int(soft)


def machine_memory() -> int:
    """Bytes this process may use on this machine, whatever the current load.

    The smallest of the total physical memory, the cgroup memory limit and the address-space
    limit (``ulimit -v``); ``FALLBACK_MEMORY`` (4 GiB) when none of them can be read.

    Examples
    --------
    >>> machine_memory() > 0
    True
    """
    found = [m for m in (_physical_memory(), _cgroup_limit(), _address_limit())
             if m is not None and m > 0]
    return min(found) if found else FALLBACK_MEMORY


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
            return max(int(machine_memory() * DEFAULT_FRACTION), 1)
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

    ``what`` names the allocation (the node, quilt, table...) for the message, which suggests
    a budget only when this machine has that much memory (:func:`machine_memory`). Under the
    default budget, sizes up to ``QUICK_BYTES`` (16 MiB) pass without reading the machine.

    Examples
    --------
    >>> check_allocation(2 * 10**6, budget=10**6, what="the test table")
    Traceback (most recent call last):
    ...
    pufferfish_pgm.errors.LimitExceededError: the test table needs 1.91 MiB, more than the ...
    """
    if budget is None and size <= QUICK_BYTES and not os.environ.get(BUDGET_ENV, "").strip():
        return
    limit = memory_budget(budget)
    if size > limit:
        raise LimitExceededError(
            f"{what} needs {describe_bytes(size)}, more than the memory budget of "
            f"{describe_bytes(limit)}; {_advice(size)}")


def _advice(size: float) -> str:
    """How to get past a refusal: a budget this machine can grant, or a smaller question."""
    machine = machine_memory()
    if size > machine:
        return (f"this machine lets the process use {describe_bytes(machine)} in all (memory "
                "and limits), so no budget makes it fit here: ask a smaller question (fewer "
                "nodes, states or counts) or run it on a machine with more memory")
    need = f"{math.ceil(size / 2**30 * 10) / 10:g}GiB" if size >= 2**30 else \
        f"{math.ceil(size / 2**20)}MiB"
    if _parse(need, "memory_budget") > machine:   # rounded up past the machine: exact bytes
        need = str(math.ceil(size))
    return (f"this machine lets the process use {describe_bytes(machine)}, so a budget of "
            f"{need} would fit: pass memory_budget={need!r} or set the environment variable "
            f"{BUDGET_ENV}={need} (the step then takes that much memory), or ask a smaller "
            "question")
