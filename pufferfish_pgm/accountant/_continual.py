"""Continual release: one day, or one window of a long chain, after another, under a budget.

A :class:`ContinualRelease` calibrates a query once, then releases it on each new piece of data
with :meth:`~ContinualRelease.release_next`, records the release in a
:class:`~pufferfish_pgm.accountant.PrivacyAccountant` and keeps a proven bound on the total
leakage. Proofs: ``docs/composition.md``, section "Continual release". Two units:

* ``unit="day"``: the framework models **one day** (one chain per day) and every release is
  the query on a new day's record(s). Days are independent under every θ, so a secret about
  one slot of one day meets one release only: **parallel composition** (Kifer &
  Machanavajjhala 2014, §8.1, eq. 14) gives the horizon ε, whatever the mechanism (each day is
  recorded under its own dataset label).
* ``unit="window"``: the framework models the **whole horizon as one chain** and the query is
  a :class:`~pufferfish_pgm.queries.WindowedCount` or
  :class:`~pufferfish_pgm.queries.WindowedHistogram`; every release is the next window's
  coordinates, computed from that window's slots. The noise of the coordinates is independent,
  so the windows released so far are a marginal of the one calibrated vector release
  (post-processing): the horizon costs the calibration's ε, for every mechanism whose ε is
  proven for the whole vector. The prefix released so far may cost less, by two proven
  bounds: the Markov-quilt bound of the prefix (``e + L·|X_N ∩ released slots|/λ``, MQM plans
  only) and the dataset-level bound ``L·|released slots|/λ``.

A release that would bring the proven total above ``budget`` is refused with
:class:`~pufferfish_pgm.errors.BudgetExceededError` before any data is read.

A continual release is stateful by nature; here the state is a value. ``release_next`` returns
a **new** ContinualRelease (one more release, its accountant updated) with the Release, and
leaves the old one untouched: keep the new one.

Examples
--------
>>> import numpy as np
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> from pufferfish_pgm.secrets import Framework
>>> from pufferfish_pgm.queries import Count
>>> from pufferfish_pgm.mechanisms import GroupDPMechanism
>>> day = Framework(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 4))
>>> cr = ContinualRelease(GroupDPMechanism(epsilon=0.5), day, Count(1), horizon=7, budget=1.0)
>>> rng = np.random.default_rng(0)
>>> for d in range(3):
...     cr, rel = cr.release_next([0, 1, 1, 0], rng=rng)
>>> cr.released, cr.spent, cr.bound_for_horizon, cr.remaining
(3, 0.5, 0.5, 0.5)
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from .._validation import positive_int
from ..errors import (
    BudgetExceededError,
    CompositionError,
    InvalidDataError,
    InvalidParameterError,
    ParameterTypeError,
)
from ..mechanisms import Calibration, Mechanism, Release
from ..queries import Count, Histogram, Query, WindowedCount, WindowedQuery
from ..secrets import Framework
from ._accountant import PrivacyAccountant
from ._composition_rules import check_proven, quilt_bound

__all__ = ["ContinualRelease"]

Unit = Literal["day", "window"]


def _check_budget(budget: object) -> float:
    if isinstance(budget, (bool, np.bool_)) or not isinstance(budget, numbers.Real):
        raise ParameterTypeError(f"budget must be a real number (the total ε allowed over the "
                                 f"horizon), got the {type(budget).__name__} {budget!r}")
    value = float(budget)
    if not (math.isfinite(value) and value > 0):
        raise InvalidParameterError(
            f"budget must be a finite total ε > 0, got {value!r}; an infinite or NaN budget "
            "would let every release through. Pass e.g. budget=1.0")
    return value


def _check_unit(unit: object, query: Query, framework: Framework) -> Unit:
    if unit not in ("day", "window"):
        raise InvalidParameterError(f"unit must be 'day' (one chain per day, independent days) "
                                    f"or 'window' (one chain over the horizon), got {unit!r}")
    if unit == "day":
        return "day"
    if not isinstance(query, WindowedQuery):
        raise InvalidParameterError(
            f"unit='window' releases a windowed query window by window, got {query.name!r}; "
            "pass WindowedCount(state, width) or WindowedHistogram(width) over a chain that "
            "spans the horizon, or use unit='day' with one chain per day")
    query.windows(framework.scenarios)      # a chain, and a width within its length
    return "window"


@dataclass(frozen=True)
class ContinualRelease:
    """A query released again and again (day after day, or window after window) under a total
    ε budget, with a proven bound on the leakage so far and over the whole horizon.

    Parameters
    ----------
    mechanism : Mechanism
        Calibrates ``query`` once, at construction (any mechanism for ``unit="day"``; for
        ``unit="window"`` one that calibrates windowed queries: MarkovQuiltMechanism,
        GroupDPMechanism, ExactLaplaceMechanism on small chains).
    framework : Framework
        ``unit="day"``: one day's chain (or network); ``unit="window"``: the chain of the
        whole horizon.
    query : Query
        ``unit="window"``: a WindowedCount or WindowedHistogram; its windows are the releases.
    horizon : int
        How many releases are planned (>= 1; at most the number of windows for
        ``unit="window"``).
    budget : float
        The total ε a user may lose over the horizon (finite, > 0).
    unit : {"day", "window"}
        See the module notes for what each one assumes and proves.
    executor : Executor, optional
        Passed to ``mechanism.calibrate``.

    Attributes
    ----------
    calibration : Calibration
        The one calibration every release uses.
    accountant : PrivacyAccountant
        Every day's release under its own label (``unit="day"``); the windowed release, recorded
        once at its first window, since every window is a coordinate of it (``unit="window"``).
    releases : tuple of Release
        The releases so far, in order.

    Raises
    ------
    ParameterTypeError, InvalidParameterError
        Bad ``mechanism``, ``horizon``, ``budget`` or ``unit``, or a windowed unit for a query
        or model without windows.
    CompositionError
        A calibration whose ε is only nominal for the framework (entry DP under correlation).

    Examples
    --------
    >>> import numpy as np
    >>> import pufferfish_pgm as pp
    >>> mc = pp.MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 6)
    >>> cr = pp.ContinualRelease(pp.GroupDPMechanism(epsilon=1.0), pp.Framework(mc),
    ...                          pp.WindowedCount(1, 2), horizon=3, budget=0.8, unit="window")
    >>> cr.bound_for_horizon          # all three windows cost the calibrated ε
    1.0
    >>> cr, rel = cr.release_next([0, 1], rng=np.random.default_rng(1))
    >>> round(cr.spent, 6), rel.query      # one window of 2 slots: 1·2/6 by group DP's lemma
    (0.333333, 'count(1)@[0,2)')
    >>> cr, rel = cr.release_next([1, 1], rng=np.random.default_rng(2))
    >>> cr.release_next([1, 0])
    Traceback (most recent call last):
    ...
    pufferfish_pgm.errors.BudgetExceededError: release #3 would bring the proven total to ε = ...
    """

    calibration: Calibration
    horizon: int
    budget: float
    unit: Unit
    accountant: PrivacyAccountant
    releases: tuple[Release, ...]

    def __init__(self, mechanism: Mechanism, framework: Framework, query: Query, *,
                 horizon: int, budget: float, unit: Unit = "day",
                 executor: Any = None) -> None:
        if not isinstance(mechanism, Mechanism):
            raise ParameterTypeError(f"mechanism must be a Mechanism such as "
                                     f"MarkovQuiltMechanism(epsilon=...), got {mechanism!r}")
        horizon = positive_int("horizon", horizon)
        budget = _check_budget(budget)
        kind = _check_unit(unit, query, framework)
        cal = mechanism.calibrate(framework, query, executor=executor)
        check_proven(cal)
        if kind == "window" and horizon > len(_windows(cal)):
            raise InvalidParameterError(
                f"horizon {horizon} exceeds the {len(_windows(cal))} windows of {query.name!r} "
                f"on this chain; pass horizon <= {len(_windows(cal))}, or a longer chain")
        for name, value in (("calibration", cal), ("horizon", horizon), ("budget", budget),
                            ("unit", kind), ("accountant", PrivacyAccountant()),
                            ("releases", ())):
            object.__setattr__(self, name, value)

    @property
    def released(self) -> int:
        """How many releases have been made."""
        return len(self.releases)

    @property
    def spent(self) -> float:
        """The proven total ε of the releases so far (0 before the first)."""
        return self.bound_after(self.released)

    @property
    def bound_for_horizon(self) -> float:
        """The proven total ε once all ``horizon`` releases are made."""
        return self.bound_after(self.horizon)

    @property
    def remaining(self) -> float:
        """``budget - spent``: the ε the budget still allows."""
        return self.budget - self.spent

    def bound_after(self, count: int) -> float:
        """The proven total ε after the first ``count`` releases (0 <= count <= horizon).

        ``unit="day"``: the calibration's ε once a day is released (parallel composition).
        ``unit="window"``: the smallest of the calibration's ε (post-processing of the vector),
        ``L·n/λ`` for the n slots of the first ``count`` windows (no two datasets differ by
        more than L·n there) and, for Markov-quilt plans, the quilt bound of that prefix.
        """
        count = positive_int("count", count, minimum=0)
        if count > self.horizon:
            raise InvalidParameterError(f"count must be at most the horizon {self.horizon}, "
                                        f"got {count}")
        if count == 0:
            return 0.0
        cal = self.calibration
        if self.unit == "day":
            return float(cal.epsilon)
        return min(float(cal.epsilon), _prefix_bound(cal, count))

    def release_next(self, data: Any, rng: Any = None, *,
                     per_user: bool = True) -> tuple[ContinualRelease, Release]:
        """Release the query on the next day's records, or the next window's slots.

        ``data``: ``unit="day"``, what :meth:`Calibration.release` takes (one record, or one row
        per user); ``unit="window"``, the window's slots in time order (a sequence of their
        states, or one row per user). ``rng`` and ``per_user`` as for
        :meth:`Calibration.release`.

        Returns
        -------
        (ContinualRelease, Release)
            The continual release with this release recorded (``self`` is unchanged), and the
            release. A window's Release is named by its coordinate(s) (``'count(1)@[0,2)'``).

        Raises
        ------
        BudgetExceededError
            The proven total after this release would exceed ``budget`` (nothing is released).
        CompositionError
            The horizon is used up.
        InvalidDataError
            ``data`` does not have one value per slot of the day or window.
        """
        index = self.released
        if index >= self.horizon:
            raise CompositionError(
                f"the horizon of {self.horizon} releases is used up; the proven bound covers "
                "those only. Start a new ContinualRelease (with its own budget) for more")
        cost = self.bound_after(index + 1)
        if cost > self.budget:
            raise BudgetExceededError(
                f"release #{index + 1} would bring the proven total to ε = {cost:.6g}, above "
                f"the budget {self.budget:g} (spent so far {self.spent:.6g}); stop releasing, "
                "or calibrate with a smaller ε or a mechanism that needs less (see "
                "docs/composition.md)")
        if self.unit == "day":
            release = self.calibration.release(data, rng, per_user=per_user)
            accountant = self.accountant.record(self.calibration, dataset=("day", index))
        else:
            release = _release_window(self.calibration, index, data, rng, per_user)
            accountant = (self.accountant.record(self.calibration) if index == 0
                          else self.accountant)
        return self._with(accountant, release), release

    def _with(self, accountant: PrivacyAccountant, release: Release) -> ContinualRelease:
        out = object.__new__(ContinualRelease)
        for name in ("calibration", "horizon", "budget", "unit"):
            object.__setattr__(out, name, getattr(self, name))
        object.__setattr__(out, "accountant", accountant)
        object.__setattr__(out, "releases", self.releases + (release,))
        return out

    def summary(self) -> str:
        """One line: releases made, proven ε spent, the horizon's bound and the budget."""
        return (f"{self.released}/{self.horizon} {self.unit}s released with "
                f"{self.calibration.mechanism}: spent ε = {self.spent:.6g}, horizon bound "
                f"{self.bound_for_horizon:.6g}, budget {self.budget:g}")


# ----------------------------------------------------------------------------- windows

def _windows(cal: Calibration) -> tuple[range, ...]:
    query = cal.query
    assert isinstance(query, WindowedQuery)   # checked by _check_unit
    return query.windows(cal.framework.scenarios)


def _slot_query(query: Query, slots: tuple) -> Query:
    """The query restricted to ``slots``: a Count or Histogram over them (same L)."""
    if isinstance(query, WindowedCount):
        return Count(query.state, slots)
    return Histogram(slots)


def _prefix_bound(cal: Calibration, count: int) -> float:
    """Proven ε of the first ``count`` windows of a windowed release (without the ε cap)."""
    cls = cal.framework.scenarios
    slots = tuple(cls.nodes[:_windows(cal)[count - 1].stop])
    lipschitz = cal.query.lipschitz_for(cls)
    dataset_level = math.inf if cal.scale == 0 else lipschitz * len(slots) / cal.scale
    if not len(cal.plan):
        return dataset_level
    prefix = replace(cal, query=_slot_query(cal.query, slots))
    try:
        return min(dataset_level, quilt_bound([prefix]))
    except CompositionError:         # a secret node without a recorded quilt: no quilt bound
        return dataset_level


def _window_rows(cal: Calibration, window: range, data: Any) -> Any:
    """The window's slots placed in full-length records (other slots: a filler state that the
    window's query does not read)."""
    if isinstance(data, Mapping):
        raise InvalidDataError("a window's data is a sequence of its slots' states (or one row "
                               "per user), not a dict")
    if hasattr(data, "to_numpy"):          # a pandas Series or DataFrame, columns in time order
        data = data.to_numpy()
    rows = np.asarray(data, dtype=object)
    if rows.ndim not in (1, 2) or rows.shape[-1] != len(window):
        raise InvalidDataError(
            f"window [{window.start},{window.stop}) has {len(window)} slots; give one value per "
            f"slot (or one row of {len(window)} values per user), got data of shape "
            f"{rows.shape}")
    cls = cal.framework.scenarios
    full = np.full((1 if rows.ndim == 1 else len(rows), len(cls.nodes)),
                   cls.states_of(cls.nodes[0])[0], dtype=object)
    full[:, window.start:window.stop] = rows
    return full[0] if rows.ndim == 1 else full


def _release_window(cal: Calibration, index: int, data: Any, rng: Any,
                    per_user: bool) -> Release:
    """Release window ``index`` of a windowed calibration: its part, at the same scale."""
    window = _windows(cal)[index]
    query = cal.query
    assert isinstance(query, WindowedQuery)
    part = replace(cal, query=query.parts(cal.framework.scenarios)[index])
    release = part.release(_window_rows(cal, window, data), rng, per_user=per_user)
    names = query.coordinates(cal.framework.scenarios)
    per_window = len(names) // len(_windows(cal))
    mine = names[index * per_window:(index + 1) * per_window]
    if isinstance(query, WindowedCount):
        return replace(release, query=mine[0], mechanism=cal.mechanism)
    return replace(release, query=f"{query.name}@[{window.start},{window.stop})",
                   coordinates=mine)
