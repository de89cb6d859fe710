"""The records of an exact audit: one pair's realised ε and the whole report (internal;
public through :mod:`pufferfish_pgm.privacy_loss`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["AuditReport", "PairAudit"]


@dataclass(frozen=True, kw_only=True, slots=True)
class PairAudit:
    """The realised ε of one pair under one (fixed-start) scenario.

    ``theta`` indexes the framework's scenario class; ``scenario`` names the scenario (for a
    chain with ``initial="any"``, the audited start); ``output`` is the release value (a
    tuple for vectors) where the supremum is reached.
    """

    pair: Any
    theta: int
    scenario: str
    epsilon: float
    output: float | tuple


@dataclass(frozen=True, kw_only=True)
class AuditReport:
    """Result of an exact audit.

    Attributes
    ----------
    epsilon : float
        The realised ε: the largest |log p_a(w)/p_b(w)| over pairs, scenarios and outputs.
    worst : PairAudit or None
        Where it is reached (None when no pair is possible under any scenario).
    pairs : tuple of PairAudit
        One entry per audited (pair, scenario).
    scales : tuple of float
        The Laplace scale of every released coordinate.
    coordinates : tuple of str
        Names of the released coordinates.
    skipped : tuple
        (pair, θ) combinations not audited because a secret has probability 0 there.
    coverage : str
        What was audited (the finite class; see the module notes on ``initial="any"``).
    """

    epsilon: float
    worst: PairAudit | None
    pairs: tuple
    scales: tuple
    coordinates: tuple
    discrete: bool = False
    skipped: tuple = ()
    coverage: str = "every scenario of the class"

    @property
    def scale(self) -> float:
        """The scale of the first coordinate (all coordinates share it for one query)."""
        return self.scales[0]

    def passes(self, epsilon: float, rtol: float = 1e-12) -> bool:
        """True when the realised ε is at most ``epsilon`` (within a relative ``rtol``)."""
        return self.epsilon <= epsilon * (1.0 + rtol)

    def summary(self) -> str:
        where = "" if self.worst is None else (
            f" at pair {self.worst.pair} under {self.worst.scenario!r}, output "
            f"{self.worst.output}")
        return f"realised ε = {self.epsilon:.6g}{where}"
