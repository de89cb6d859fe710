"""Fitting Markov chains to observed state sequences (maximum likelihood with pseudocounts)."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import InvalidDataError, InvalidParameterError, ParameterTypeError
from ._time_varying import block_count, check_period, check_shrinkage, day_stack, shrunk_blocks

__all__ = ["as_sequences", "chain_from_counts", "check_pseudocount", "fit_chain", "fit_groups"]


def _is_sequence(x: Any) -> bool:
    return hasattr(x, "__len__") and not isinstance(x, (str, bytes, dict))


def as_sequences(data: Any) -> list[list]:
    """Normalise one or many sequences into a list of Python lists.

    Accepts a single sequence (list, numpy 1-D array, pandas Series), many sequences (a list of
    those) or a table with one sequence per *row*: a 2-D numpy array or a pandas DataFrame
    whose columns are the time steps in order. That is how a release reads data (one row per
    user), so the frame you fit is the frame you release.

    Examples
    --------
    >>> as_sequences([0, 1, 1])
    [[0, 1, 1]]
    >>> as_sequences([[0, 1], [1, 1, 0]])
    [[0, 1], [1, 1, 0]]
    >>> import pandas as pd
    >>> as_sequences(pd.DataFrame([["a", "b", "b"], ["b", "b", "a"]], columns=[0, 1, 2]))
    [['a', 'b', 'b'], ['b', 'b', 'a']]
    """
    if type(data).__name__ == "DataFrame":
        return data.to_numpy().tolist()  # one row per sequence; columns by position
    if isinstance(data, np.ndarray):
        return [data.tolist()] if data.ndim == 1 else [row.tolist() for row in data]
    if type(data).__name__ == "Series":
        return [data.tolist()]
    if not _is_sequence(data):
        raise ParameterTypeError(
            f"expected a sequence of states or a list of sequences, got {type(data).__name__}"
        )
    items = list(data)
    if items and all(_is_sequence(x) for x in items):
        return [list(x.tolist() if hasattr(x, "tolist") else x) for x in items]
    return [items]


def _is_na(value: Any) -> bool:
    """pandas' missing-value markers (pd.NA, pd.NaT) and numpy's NaT, without importing pandas."""
    if type(value).__name__ in ("NAType", "NaTType"):
        return True
    return isinstance(value, (np.datetime64, np.timedelta64)) and np.isnat(value)


def _check_values(seqs: list[list]) -> None:
    for r, seq in enumerate(seqs):
        if not seq:
            raise InvalidDataError(f"sequence {r} is empty; drop it or give at least one state")
        for t, v in enumerate(seq):
            if v is None or (isinstance(v, float) and np.isnan(v)) or _is_na(v):
                raise InvalidDataError(
                    f"sequence {r} has a missing value ({v!r}) at position {t}; fill or drop it"
                )


def _state_list(seqs: list[list], states: Sequence | None) -> tuple:
    if states is not None:
        names = tuple(states)
        known = set(names)
        for r, seq in enumerate(seqs):
            for t, v in enumerate(seq):
                if v not in known:
                    raise InvalidDataError(
                        f"sequence {r}, position {t}: state {v!r} is not among the given states "
                        f"{list(names)}; add it to states or clean the data"
                    )
        return names
    found = {v for seq in seqs for v in seq}
    try:
        return tuple(sorted(found))
    except TypeError:
        return tuple(sorted(found, key=repr))


def _counts(seqs: list[list], names: tuple,
            period: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Transition counts ``(k, k)``, or with ``period`` per block of start slots
    ``(H, k, k)`` (H = ceil(longest / period)), and first-state counts."""
    index = {s: i for i, s in enumerate(names)}
    k = len(names)
    blocks = 1 if period is None else block_count(max(len(s) for s in seqs), period)
    trans = np.zeros((blocks, k, k))
    first = np.zeros(k)
    for seq in seqs:
        codes = np.fromiter((index[v] for v in seq), dtype=np.int64, count=len(seq))
        first[codes[0]] += 1
        hour = np.zeros(len(seq) - 1, np.int64) if period is None else \
            np.arange(len(seq) - 1) // period
        np.add.at(trans, (hour, codes[:-1], codes[1:]), 1.0)
    return (trans[0] if period is None else trans), first


def fit_chain(cls: type, sequences: Any, *, length: int | None, states: Sequence | None,
              pseudocount: float, initial: str, name: str, period: int | None = None,
              shrinkage: float | None = None) -> Any:
    """Maximum-likelihood transition and initial estimates.

    ``P[s, t] = (n(s→t) + c) / (n(s→·) + k c)`` with pseudocount ``c``. ``initial`` is
    ``"empirical"`` (frequencies of first states, with the same pseudocount), ``"stationary"``
    or ``"any"``. ``length`` defaults to the longest sequence. The counts are turned into
    the chain by :func:`chain_from_counts`, as counts summed over partitions are.

    With ``period=p`` the chain is time-varying: one matrix per block of p slots of the day
    (the day is the longest sequence, slot t the position in a sequence), each row shrunk to
    the pooled fit above by ``shrinkage`` (default 10); see
    :mod:`pufferfish_pgm.scenarios._time_varying`.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> mc = fit_chain(MarkovChainScenario, [[0, 1, 1, 1]], length=None, states=None,
    ...                pseudocount=0.0, initial="empirical", name="x")
    >>> mc.transition.tolist(), mc.initial.tolist(), mc.length
    ([[0.0, 1.0], [0.0, 1.0]], [1.0, 0.0], 4)
    """
    check_pseudocount(pseudocount)
    period = None if period is None else check_period(period)
    if period is None and shrinkage is not None:
        raise InvalidParameterError("shrinkage applies to a time-varying fit only; pass "
                                    "period= (slots per block) too, or drop shrinkage")
    seqs = as_sequences(sequences)
    if not seqs:
        raise InvalidDataError("no sequences given; pass at least one sequence of states")
    _check_values(seqs)
    names = _state_list(seqs, states)
    trans, first = _counts(seqs, names, period)
    day = max(len(s) for s in seqs)
    size = length if length is not None else day
    start = first if initial == "empirical" else initial
    return chain_from_counts(cls, trans, start, size, states=names, pseudocount=pseudocount,
                             name=name, period=period, shrinkage=shrinkage,
                             day=None if period is None else day)


def check_pseudocount(pseudocount: Any) -> float:
    """``pseudocount`` after checking it is a finite number >= 0."""
    if isinstance(pseudocount, bool) or not isinstance(pseudocount, numbers.Real):
        raise ParameterTypeError(
            f"pseudocount must be a number, got the {type(pseudocount).__name__} {pseudocount!r}"
        )
    value = float(pseudocount)
    if not np.isfinite(value) or value < 0:
        raise InvalidParameterError(
            f"pseudocount must be a finite number >= 0, got {pseudocount!r}"
        )
    return value


def _count_array(name: str, counts: Any, shape: tuple[int, ...]) -> np.ndarray:
    """``counts`` as a float array of ``shape`` after checking the entries are finite, >= 0."""
    try:
        array = np.array(counts, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ParameterTypeError(f"{name} must be an array of counts, got {counts!r}") from exc
    if array.shape != shape:
        raise InvalidDataError(f"{name} has shape {array.shape}; expected {shape} (one entry per "
                               "state, transitions as a square from-state x to-state table)")
    if not np.all(np.isfinite(array)) or np.any(array < 0):
        raise InvalidDataError(f"{name} must hold finite counts >= 0, got {counts!r}")
    return array


def chain_from_counts(cls: type, transitions: Any, initial: Any, length: int, *,
                      states: Sequence | None = None, pseudocount: float = 0.0,
                      name: str = "fitted chain", period: int | None = None,
                      shrinkage: float | None = None, day: int | None = None) -> Any:
    """The chain :func:`fit_chain` fits to sequences whose counts are given: ``transitions``
    ``(k, k)`` (from-state x to-state) and ``initial`` (``k`` first-state counts, or
    ``"stationary"`` / ``"any"``), with the same pseudocount rule.

    With ``period=p``, ``transitions`` is ``(H, k, k)``: the counts of each block of p start
    slots of a day of ``day`` slots (default H·p; H must be ceil(day / p)), and the chain is
    time-varying (:mod:`pufferfish_pgm.scenarios._time_varying`).

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> mc = chain_from_counts(MarkovChainScenario, [[0, 1], [0, 2]], [1, 0], 4)
    >>> mc.transition.tolist(), mc.initial.tolist()
    ([[0.0, 1.0], [0.0, 1.0]], [1.0, 0.0])
    """
    c = check_pseudocount(pseudocount)
    if period is None:
        if shrinkage is not None or day is not None:
            raise InvalidParameterError("shrinkage and day apply to per-block counts only; "
                                        "pass period= too")
        k = len(np.asarray(transitions, dtype=object))
        trans = _count_array("transitions", transitions, (k, k))
        rows = _pooled(trans, c, states)
        return cls(rows, _start(initial, c, k), length, states, name=name)
    period = check_period(period)
    blocks = np.asarray(transitions, dtype=object)
    h, k = len(blocks), (len(blocks[0]) if len(blocks) else 0)
    blocks = _count_array("transitions", transitions, (h, k, k))
    pooled = _pooled(blocks.sum(axis=0), c, states)
    day = h * period if day is None else day
    steps = day_stack(shrunk_blocks(blocks, pooled, check_shrinkage(shrinkage)), period, day,
                      length)
    return cls(steps, _start(initial, c, k), length, states, name=name)


def _start(initial: Any, c: float, k: int) -> Any:
    """The initial law from first-state counts (same pseudocount), or the string given."""
    if isinstance(initial, str):
        return initial
    first = _count_array("initial", initial, (k,)) + c
    return first / first.sum()


def _pooled(counts: np.ndarray, c: float, states: Sequence | None) -> np.ndarray:
    """The homogeneous fit (n(s→t) + c) / (n(s→·) + k c) of ``(k, k)`` counts."""
    k = counts.shape[0]
    trans = counts + c
    names = tuple(range(k)) if states is None else tuple(states)
    if len(names) != k:
        raise InvalidDataError(f"{len(names)} states but {k} rows of transition counts; give "
                               "one state per row")
    rows = trans.sum(axis=1)
    if (rows == 0).any():
        s = names[int(np.argmax(rows == 0))]
        raise InvalidDataError(
            f"state {s!r} is never followed by another state in the data, so its transition row "
            "is unknown; pass pseudocount > 0 or more data"
        )
    return trans / rows[:, None]


_GROUP_OPTIONS = ("states", "length", "pseudocount", "initial", "period", "shrinkage")


def fit_groups(class_type: type, chain_type: type, sequences: Sequence, groups: Sequence,
               **options: Any) -> Any:
    """One chain per group label, all over the union of observed (or given) states; with
    ``period=`` one time-of-day chain per group (every group's days must have one length)."""
    unknown = sorted(set(options) - set(_GROUP_OPTIONS))
    if unknown:
        raise ParameterTypeError(
            f"fit_groups() got unexpected options {unknown}; it accepts "
            f"{', '.join(_GROUP_OPTIONS)}")
    seqs = as_sequences(sequences)
    labels = list(groups)
    if len(labels) != len(seqs):
        raise InvalidDataError(
            f"{len(seqs)} sequences but {len(labels)} group labels; give one label per sequence"
        )
    _check_values(seqs)
    names = _state_list(seqs, options.pop("states", None))
    by_group: dict = {}
    for s, lab in zip(seqs, labels, strict=True):
        by_group.setdefault(lab, []).append(s)
    if options.get("period") is not None:
        _check_one_day(by_group)
    members = [fit_chain(chain_type, mine, states=names, name=str(g),
                         length=options.get("length"),
                         pseudocount=options.get("pseudocount", 0.0),
                         initial=options.get("initial", "empirical"),
                         period=options.get("period"), shrinkage=options.get("shrinkage"))
               for g, mine in by_group.items()]
    if options.get("length") is None:
        size = max(m.length for m in members)
        members = [m.with_length(size) for m in members]
    return class_type(members)


def _check_one_day(by_group: dict) -> None:
    """Time-of-day fits per group need one day length (a shorter day cannot be extended)."""
    days = {g: max(len(s) for s in mine) for g, mine in by_group.items()}
    if len(set(days.values())) > 1:
        raise InvalidDataError(
            f"with period= every group's days must have one length, but their longest "
            f"sequences are {days}; pad or cut the sequences to one day, or fit each group "
            "alone with MarkovChainScenario.fit")
