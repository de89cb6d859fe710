"""Progress of the long calibrations: the ``progress=`` argument as a callable (internal).

A progress callable is called as ``progress(done, total)`` with integers. ``done`` never
decreases, ``total`` never decreases, ``0 <= done <= total``, and the last call of a
calibration that finishes has ``done == total``. Where the amount of work is found as it goes
(the bisection of an exact calibration, the rounds of constraint generation), ``total`` starts
as an estimate and grows when the work outlasts it; it is never shown as finished before the
end.

What the user may pass (:func:`as_progress`):

* ``None`` or ``False``: no progress (the default);
* a callable: called as above (e.g. to update a GUI or log to a file);
* ``True``: a tqdm bar on stderr when tqdm is installed (the ``progress`` extra), else one
  plain line on stderr at each tenth of the work.

Nothing here is global: each call of :func:`as_progress` makes a new reporter.

Examples
--------
>>> seen = []
>>> steps = Ticker(as_progress(lambda done, total: seen.append((done, total))), total=2)
>>> steps.tick(); steps.tick(); steps.tick(); steps.finish()
>>> seen
[(1, 2), (2, 3), (3, 4), (4, 4)]
>>> as_progress("yes")
Traceback (most recent call last):
...
pufferfish_pgm.errors.ParameterTypeError: progress must be None, True, False or a callable ...
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TextIO

from .errors import ParameterTypeError

__all__ = ["Progress", "Ticker", "TextProgress", "as_progress"]

#: ``progress(done, total)``.
Progress = Callable[[int, int], None]


def as_progress(progress: Any, label: str = "calibrating") -> Progress | None:
    """The user's ``progress`` argument as a callable ``(done, total) -> None``, or None.

    ``True`` gives a tqdm bar labelled ``label`` when tqdm can be imported (it is imported
    here, lazily), else a :class:`TextProgress` on stderr; never an import error.

    Raises
    ------
    ParameterTypeError
        ``progress`` is not None, True, False or a callable (the message names the value).
    """
    if progress is None or progress is False:
        return None
    if progress is True:
        try:
            from tqdm import tqdm  # type: ignore[import-untyped]  # the `progress` extra
        except ImportError:
            return TextProgress(label)
        return _Bar(tqdm, label)
    if callable(progress):
        return progress
    raise ParameterTypeError(
        f"progress must be None, True, False or a callable progress(done, total), got the "
        f"{type(progress).__name__} {progress!r}; pass progress=True for a bar on stderr")


class TextProgress:
    """One line on ``stream`` (default: stderr at the time of the call) at each tenth of the
    work, and one at the end (``label: 40 % (4/10)``).

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> show = TextProgress("exact", out)
    >>> for done in range(21):
    ...     show(done, 20)
    >>> out.getvalue().splitlines()[:2], out.getvalue().splitlines()[-1]
    (['exact: 0 % (0/20)', 'exact: 10 % (2/20)'], 'exact: 100 % (20/20)')
    """

    def __init__(self, label: str = "calibrating", stream: TextIO | None = None) -> None:
        self.label, self.stream, self.shown = label, stream, -1

    def __call__(self, done: int, total: int) -> None:
        tenth = 10 if total <= 0 else min(10, 10 * done // total)
        if tenth > self.shown:
            self.shown = tenth
            print(f"{self.label}: {10 * tenth} % ({done}/{total})",
                  file=self.stream or sys.stderr, flush=True)
        if done >= total:   # finished: a next run starts from 0 %
            self.shown = -1


class _Bar:
    """A tqdm bar, opened at the first call and closed when ``done == total``."""

    def __init__(self, tqdm: Any, label: str) -> None:
        self.tqdm, self.label = tqdm, label
        self.bar: Any = None

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            self.bar = self.tqdm(total=total, desc=self.label, unit="step", leave=True)
        self.bar.total = total
        self.bar.update(done - self.bar.n)   # redrawn at tqdm's own pace
        if done >= total:
            self.bar.close()
            self.bar = None


class Ticker:
    """The steps of one calibration, reported as ``(done, total)`` to ``report`` (None: not
    reported; every method then does nothing).

    ``total`` is the work planned so far (:meth:`plan` adds to it); a :meth:`tick` past it
    raises it to one more than done, so only :meth:`finish` reports ``done == total``.
    """

    def __init__(self, report: Progress | None, total: int = 0) -> None:
        self.report, self.done, self.total = report, 0, max(int(total), 1)

    @property
    def active(self) -> bool:
        """Whether anyone listens (engines may skip counting otherwise)."""
        return self.report is not None

    def plan(self, steps: int) -> None:
        """More work is known: ``steps`` more are expected."""
        self.total += max(int(steps), 0)

    def tick(self, steps: int = 1) -> None:
        """``steps`` steps are done."""
        if self.report is None:
            return
        self.done += steps
        self.total = max(self.total, self.done + 1)
        self.report(self.done, self.total)

    def part(self) -> Progress:
        """A progress callable for an inner engine: its steps become steps of this ticker
        (its ``done == total`` is not this ticker's end)."""
        base = self.done

        def inner(done: int, total: int) -> None:
            if self.report is None:
                return
            self.done = max(self.done, base + done)
            self.total = max(self.total, base + total + 1, self.done + 1)
            self.report(self.done, self.total)

        return inner

    def finish(self) -> None:
        """All done: report ``done == total``."""
        if self.report is not None:
            self.done = self.total = max(self.total, self.done)
            self.report(self.done, self.total)
