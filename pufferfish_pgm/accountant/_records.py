"""One recorded release of the accountant (shared by the accountant and its composition rules)."""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

from ..mechanisms import Calibration

__all__ = ["RecordedRelease"]


@dataclass(frozen=True, kw_only=True)
class RecordedRelease:
    """One recorded calibration and the label of the users' data it was released on.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework
    >>> from pufferfish_pgm.queries import Count
    >>> from pufferfish_pgm.mechanisms import GroupDPMechanism
    >>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 3))
    >>> cal = GroupDPMechanism(epsilon=0.5).calibrate(fw, Count(1))
    >>> RecordedRelease(calibration=cal, dataset="default").describe(0)
    '#1 (GroupDP, ε=0.5)'
    """

    calibration: Calibration
    dataset: Hashable

    def describe(self, index: int) -> str:
        """How error messages name this release: its position, mechanism and ε."""
        c = self.calibration
        return f"#{index + 1} ({c.mechanism}, ε={c.epsilon:g})"
