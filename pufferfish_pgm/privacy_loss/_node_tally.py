"""Progress of the streamed exact calibration: nodes audited across its passes (internal).

:class:`Tally` counts the nodes whose laws a pass has streamed and audited and reports them as
``progress(done, total)``: ``done`` never decreases, ``total`` never decreases, ``done <=
total``, and the last call has ``done == total``. ``total`` is announced per pass (the nodes
of the pass, and those of the passes already planned after it); it grows only when the work
outlasts the plan (the middle nodes' bound fails its check and every node is audited, or a
node fails the full pass and the pass is repeated above it). Serial runs report every node;
on an executor each stream's pass reports its nodes as one block when it returns (a callable
does not travel to a worker process).

Examples
--------
>>> seen = []
>>> tally = Tally(lambda done, total: seen.append((done, total)))
>>> tick = tally.start(2, None, later=1)
>>> tick(1); tick(1)
>>> tally.blocks([1], "an executor"); tally.finish()
>>> seen
[(1, 3), (2, 3), (3, 3)]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["Tally"]

#: ``progress(done, total)``.
Progress = Callable[[int, int], None]


class Tally:
    """Nodes audited so far and planned, reported to ``progress`` (one per calibration)."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.done = self.total = 0
        self.shown: tuple[int, int] | None = None

    def start(self, nodes: int, executor: Any, later: int = 0) -> Callable[[int], None] | None:
        """A pass of ``nodes`` nodes begins (``later`` more are planned after it): the
        per-node callback for a serial run, None on an executor (see :meth:`blocks`)."""
        self.total = max(self.total, self.done + nodes + later)
        return self.tick if executor is None else None

    def tick(self, nodes: int = 1) -> None:
        """``nodes`` more nodes are audited."""
        self.done += nodes
        self.total = max(self.total, self.done)
        self.shown = (self.done, self.total)
        self.progress(self.done, self.total)

    def blocks(self, counts: Sequence[int], executor: Any) -> None:
        """On an executor, each stream's nodes as one block once its pass has returned."""
        if executor is not None:
            for n in counts:
                self.tick(n)

    def finish(self) -> None:
        """Report ``done == total`` unless the last report already did."""
        self.total = self.done = max(self.done, self.total)
        if self.shown != (self.done, self.total):
            self.shown = (self.done, self.total)
            self.progress(self.done, self.total)
