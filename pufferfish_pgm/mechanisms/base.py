"""What every mechanism shares: the Calibration (noise scale plus its evidence) and Release.

Calibration sees no data and is deterministic; only :meth:`Calibration.release` touches data
and randomness, and it releases through :func:`pufferfish_pgm.noise.add_noise`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .._validation import positive_finite
from ._release import Release, evaluate, release_answer

if TYPE_CHECKING:
    from ..secrets import Framework

__all__ = ["Calibration", "Mechanism"]


@dataclass(frozen=True, kw_only=True)
class Calibration:
    """The noise a mechanism needs for a framework and query, with the evidence for it.

    ``scale`` is the Laplace scale added to the query as given (to every bar of a histogram).
    ``plan`` holds one :class:`PlanEntry` per secret node for Markov-quilt mechanisms;
    ``evidence`` holds mechanism-specific facts (distances, audit results, formulas).
    """

    mechanism: str
    epsilon: float
    scale: float
    query: Any
    framework: Any
    plan: tuple = ()
    evidence: dict = field(default_factory=dict)

    def answer(self, data: Any) -> np.ndarray:
        """The exact query answer(s) on ``data`` (see
        :func:`pufferfish_pgm.mechanisms._release.encode`)."""

        return evaluate(self.framework, self.query, data)

    def release(self, data: Any, rng: np.random.Generator | None = None, *,
                per_user: bool = True) -> Release:
        """Add calibrated noise to the query answer on ``data``.

        ``data`` is one record (dict node -> state, a sequence of states, a pandas Series) or
        many users (2-D array, list of sequences, DataFrame with one row per user). With many
        users, ``per_user=True`` releases one noisy answer per user and ``per_user=False`` one
        noisy answer for the sum over users (the user must then be the unit of privacy; see the
        docs). ``rng=None`` uses the OS's secure randomness; a seeded Generator is reproducible
        and not for production.
        """

        return release_answer(self, data, rng=rng, per_user=per_user)

    def summary(self) -> str:
        return f"{self.mechanism}: scale {self.scale:.6g} for {self.query.name} at ε={self.epsilon}"


@dataclass(frozen=True, kw_only=True)
class Mechanism(ABC):
    """The contract of a mechanism: a validated, keyword-only ε and :meth:`calibrate`.

    Every mechanism is a frozen dataclass whose fields are keyword-only; ``epsilon`` has no
    default, so ``MarkovQuiltMechanism(0.5, 10)`` and ``MarkovQuiltMechanism()`` raise
    ``TypeError`` instead of silently meaning something else.

    Examples
    --------
    >>> from pufferfish_pgm.mechanisms.baselines import GroupDPMechanism
    >>> GroupDPMechanism(epsilon=0.5).epsilon
    0.5
    >>> GroupDPMechanism(0.5)
    Traceback (most recent call last):
    ...
    TypeError: GroupDPMechanism.__init__() takes 1 positional argument but 2 were given
    """

    epsilon: float

    @abstractmethod
    def calibrate(self, framework: Framework, query: Any) -> Calibration:
        """The noise for ``query`` under ``framework``; sees no data."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", positive_finite("epsilon", self.epsilon))

    @property
    def name(self) -> str:
        return type(self).__name__.removesuffix("Mechanism")

    @staticmethod
    def scale_for(query: Any, scenarios: Any, sigma: float) -> float:
        """Laplace scale for an L-Lipschitz query from σ computed for L = 1: L·σ.

        For a histogram (L = 2 in L1) this is Laplace(2σ) on every bar.
        """
        return query.lipschitz_for(scenarios) * sigma
