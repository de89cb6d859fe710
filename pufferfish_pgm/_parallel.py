"""Scale-out on an existing engine: the library's expensive loops on any Executor (internal).

Every loop that can run in parallel (per scenario in the exact engine, per secret node in the
network planner, per chunk of users in ``release``) takes ``executor=``: ``None`` (the default)
runs it here, serially; any :class:`concurrent.futures.Executor` runs its items there, and the
results are collected in the order of the items, so they are identical to the serial run. On a
cluster, ``dask.distributed``'s ``Client.get_executor()`` is such an executor (the ``dask``
extra). Thread pools share the caches of the scenarios; process pools and Dask workers get
copies (the work functions and their arguments must pickle, which the library's values do).

Randomness: a seeded release with an executor takes a :class:`numpy.random.SeedSequence`,
spawned once per chunk, so no two chunks draw the same noise; one ``Generator`` shared by
workers is refused (its stream would be split in an order nobody controls, and copies sent to
processes would repeat the same noise).

Examples
--------
>>> from concurrent.futures import ThreadPoolExecutor
>>> with ThreadPoolExecutor(2) as pool:
...     run_map(abs, [-1, 2, -3], pool)
[1, 2, 3]
>>> run_map(abs, [-1, 2, -3])
[1, 2, 3]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import Executor
from typing import Any, TypeVar

import numpy as np

from .errors import InvalidParameterError, ParameterTypeError

__all__ = ["check_executor", "chunk_rngs", "run_map"]

T = TypeVar("T")


def check_executor(executor: Any) -> Executor | None:
    """``executor`` itself after checking it is None or a :class:`concurrent.futures.Executor`.

    Examples
    --------
    >>> check_executor("threads")
    Traceback (most recent call last):
    ...
    pufferfish_pgm.errors.ParameterTypeError: executor must be None or a ...
    """
    if executor is None or isinstance(executor, Executor):
        return executor
    raise ParameterTypeError(
        f"executor must be None or a concurrent.futures.Executor (e.g. ThreadPoolExecutor(), "
        f"ProcessPoolExecutor() or dask.distributed.Client().get_executor()), got the "
        f"{type(executor).__name__} {executor!r}")


def run_map(fn: Callable[[Any], T], items: Iterable, executor: Any = None) -> list[T]:
    """``[fn(x) for x in items]``, on ``executor`` when one is given (same order, same values).

    An error raised by ``fn`` in a worker is raised here, as in the serial run.
    """
    pool = check_executor(executor)
    if pool is None:
        return [fn(x) for x in items]
    return list(pool.map(fn, list(items)))


def chunk_rngs(rng: Any, chunks: int, executor: Any = None) -> list[Any]:
    """One randomness source per chunk: None (the OS's secure source) for ``rng=None``;
    children of a SeedSequence; a single Generator only for a serial run (shared in turn).

    Examples
    --------
    >>> a, b = chunk_rngs(np.random.SeedSequence(7), 2)
    >>> int(a.integers(10**9)) != int(b.integers(10**9))
    True
    >>> from concurrent.futures import ThreadPoolExecutor
    >>> chunk_rngs(np.random.default_rng(0), 2, ThreadPoolExecutor(1))
    Traceback (most recent call last):
    ...
    pufferfish_pgm.errors.InvalidParameterError: a single numpy Generator cannot be shared ...
    """
    if rng is None:
        return [None] * chunks
    if isinstance(rng, np.random.SeedSequence):
        return [np.random.default_rng(child) for child in rng.spawn(chunks)]
    if not isinstance(rng, np.random.Generator):
        raise ParameterTypeError(
            f"rng must be None (secure), a numpy.random.SeedSequence or a numpy Generator, got "
            f"the {type(rng).__name__} {rng!r}")
    if check_executor(executor) is not None:
        raise InvalidParameterError(
            "a single numpy Generator cannot be shared by parallel workers (they would draw in "
            "an uncontrolled order, or repeat the same noise in copies); pass "
            "rng=numpy.random.SeedSequence(seed) to seed each chunk apart, or rng=None for "
            "secure noise")
    return [rng] * chunks
