"""Θ drawn from the posterior of a chain fit, with a stated coverage (``docs/posterior.md``).

A fitted chain is a point estimate; an attacker whose belief is a plausible neighbour of it is
outside Θ. ``ScenarioClass.from_posterior`` (:func:`posterior_members`) draws ``n`` chains
from the Dirichlet posterior of every transition row and of the start, given the transition
counts and a Dirichlet prior with ``prior`` pseudo-observations per cell, where ``n`` is the
smallest integer with ``coverage ** n <= 1 - confidence`` (:func:`posterior_draws`; 688 for 0.99 /
0.999). For every mechanism whose requirement on one θ is a threshold on the Laplace scale, a
scale calibrated on the draws leaves, with probability at least ``confidence`` over the draws,
at most ``1 - coverage`` of the posterior mass needing more noise (proof in
``docs/posterior.md``).

The class records how it was drawn in its attribute ``posterior`` (:class:`PosteriorRecord`:
prior, a fingerprint of the counts, ``n``, coverage, confidence, seed; :func:`posterior_of`
reads it), so a certificate can carry it and
``pufferfish_pgm.verify`` can redraw the class and compare fingerprints.

Examples
--------
>>> chains, record = posterior_members([["a", "a", "b", "b"], ["b", "a", "a", "b"]],
...                                    coverage=0.9, confidence=0.9, seed=1)
>>> len(chains), record.draws, record.seed, chains[0].states
(22, 22, 1, ('a', 'b'))
>>> posterior_draws(0.99, 0.999)
688
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._budget import check_allocation
from .._validation import positive_finite
from ..errors import InvalidParameterError, ParameterTypeError
from ._scenarios import MarkovChainScenario
from ._transition_counts import TransitionCounts, transition_counts

__all__ = ["PosteriorRecord", "counts_fingerprint", "draw_chains", "posterior_draws",
           "posterior_members", "posterior_of"]

#: The default Dirichlet prior: one pseudo-observation per cell (uniform on every row).
DEFAULT_PRIOR = 1.0


def _fraction(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterTypeError(f"{name} must be a number in (0, 1), got the "
                                 f"{type(value).__name__} {value!r}")
    if not 0.0 < float(value) < 1.0:
        raise InvalidParameterError(f"{name} must be in (0, 1) (exclusive), got {value!r}; "
                                    f"for example {name}=0.99")
    return float(value)


def posterior_draws(coverage: float, confidence: float) -> int:
    """The smallest ``n`` with ``coverage ** n <= 1 - confidence``.

    Examples
    --------
    >>> posterior_draws(0.99, 0.999), posterior_draws(0.9, 0.9), posterior_draws(0.5, 0.75)
    (688, 22, 2)
    """
    c, q = _fraction("coverage", coverage), 1.0 - _fraction("confidence", confidence)
    n = max(1, math.ceil(math.log(q) / math.log(c)))
    while c ** n > q:                     # the logarithms' rounding, either way
        n += 1
    while n > 1 and c ** (n - 1) <= q:
        n -= 1
    return n


def counts_fingerprint(counts: TransitionCounts) -> str:
    """SHA-256 of the counts (states by ``repr``, transitions, first states, longest).

    Examples
    --------
    >>> fp = counts_fingerprint(transition_counts([[0, 1, 1]]))
    >>> len(fp), fp == counts_fingerprint(transition_counts([[0, 1, 1]]))
    (64, True)
    """
    doc = {"states": [repr(s) for s in counts.states],
           "transitions": counts.transitions.astype(int).tolist(),
           "initial": counts.initial.astype(int).tolist(), "longest": int(counts.longest)}
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class PosteriorRecord:
    """How a posterior class was drawn (what a certificate records and ``verify`` redraws).

    Attributes
    ----------
    prior : float
        Dirichlet pseudo-observations added to every cell of every row and of the start.
    counts_sha256 : str
        :func:`counts_fingerprint` of the counts the posterior is conditioned on.
    draws, coverage, confidence : int, float, float
        ``draws`` is :func:`posterior_draws` of ``coverage`` and ``confidence``.
    seed : int
        The seed of ``numpy.random.default_rng`` that drew the chains.
    length : int
        The chains' length.
    counts : TransitionCounts
        The counts themselves (private data: not written to certificates, not in the repr).
    """

    prior: float
    counts_sha256: str
    draws: int
    coverage: float
    confidence: float
    seed: int
    length: int
    counts: TransitionCounts = field(repr=False, compare=False)

    def draw(self, n: int | None = None, *,
             seed: int | None = None) -> list[MarkovChainScenario]:
        """``n`` fresh chains from the same posterior (default: as many as the class), e.g.
        beliefs outside Θ for ``pufferfish_pgm.robustness``; ``seed=None``: fresh entropy."""
        size = self.draws if n is None else n
        return draw_chains(self.counts, size, self.prior, _seed(seed), self.length)

    def redraw(self) -> list[MarkovChainScenario]:
        """The chains this record describes, drawn again (``verify`` compares fingerprints)."""
        return draw_chains(self.counts, self.draws, self.prior, self.seed, self.length)


def posterior_of(scenarios: Any) -> PosteriorRecord | None:
    """The :class:`PosteriorRecord` of a class drawn by ``ScenarioClass.from_posterior``
    (None for any other class).

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import ScenarioClass
    >>> cls = ScenarioClass.from_posterior([[0, 1, 1, 0]], coverage=0.5, confidence=0.5, seed=3)
    >>> posterior_of(cls).draws, posterior_of(ScenarioClass(list(cls)))
    (1, None)
    """
    record = getattr(scenarios, "posterior", None)
    return record if isinstance(record, PosteriorRecord) else None


def _seed(seed: Any) -> int:
    """``seed`` checked (an int >= 0), or fresh entropy from the OS when None."""
    if seed is None:
        return int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ParameterTypeError(f"seed must be a whole number >= 0 (or None for fresh "
                                 f"entropy), got {seed!r}")
    return int(seed)


def _normalised(gammas: np.ndarray, what: str, prior: float) -> np.ndarray:
    sums = gammas.sum(axis=-1, keepdims=True)
    if (sums <= 0).any():
        raise InvalidParameterError(
            f"a Dirichlet draw of {what} underflowed to all zeros (prior={prior} is too small "
            "for float arithmetic); use prior >= 0.01")
    return gammas / sums


def draw_chains(counts: TransitionCounts, n: int, prior: float, seed: int,
                length: int) -> list[MarkovChainScenario]:
    """``n`` chains from the Dirichlet posterior (transitions first, then starts; one
    ``numpy.random.default_rng(seed)`` stream), named ``"posterior 0"``, ``"posterior 1"``...

    Examples
    --------
    >>> chains = draw_chains(transition_counts([[0, 1, 1, 0]]), 2, 1.0, 5, 4)
    >>> [c.name for c in chains], chains[0].length
    (['posterior 0', 'posterior 1'], 4)
    """
    k = len(counts.states)
    check_allocation(8.0 * n * k * (k + 1) * 2, what=f"{n} posterior draws of a {k}-state chain")
    rng = np.random.default_rng(seed)
    trans = _normalised(rng.standard_gamma(counts.transitions + prior, size=(n, k, k)),
                        "a transition row", prior)
    start = _normalised(rng.standard_gamma(counts.initial + prior, size=(n, k)),
                        "the start", prior)
    return [MarkovChainScenario(trans[i], start[i], length, counts.states,
                                name=f"posterior {i}") for i in range(n)]


def _counts_of(data: Any, states: Sequence | None) -> TransitionCounts:
    if isinstance(data, TransitionCounts):
        return data if states is None else data.over(states)
    return transition_counts(data, states)


def posterior_members(data: Any, *, coverage: float = 0.99, confidence: float = 0.999,
                      prior: float = DEFAULT_PRIOR, period: int | None = None,
                      seed: int | None = None, length: int | None = None,
                      states: Sequence | None = None,
                      ) -> tuple[list[MarkovChainScenario], PosteriorRecord]:
    """The chains of ``ScenarioClass.from_posterior`` and their record.

    ``data``: sequences as ``MarkovChainScenario.fit`` reads them, or a
    :class:`TransitionCounts` (``transition_counts``, summed over partitions). Every
    transition row and the start get a Dirichlet(counts + ``prior``) posterior; ``length``
    defaults to the longest sequence; ``seed=None`` draws fresh entropy (recorded).

    Raises
    ------
    InvalidParameterError
        ``coverage`` or ``confidence`` outside (0, 1), ``prior`` not > 0, or ``period`` given
        (time-varying posterior chains are not yet supported).
    """
    if period is not None:
        raise InvalidParameterError(
            f"period={period!r}: posterior classes of time-varying chains are not yet "
            "supported; use period=None (one transition matrix for the whole day)")
    n = posterior_draws(coverage, confidence)
    alpha = positive_finite("prior", prior)
    counts = _counts_of(data, states)
    size = counts.longest if length is None else length
    drawn = _seed(seed)
    record = PosteriorRecord(alpha, counts_fingerprint(counts), n, float(coverage),
                             float(confidence), drawn, size, counts)
    return draw_chains(counts, n, alpha, drawn, size), record
