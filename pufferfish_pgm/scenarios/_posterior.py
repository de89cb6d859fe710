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

With ``period=p`` (``docs/time-varying.md``) every block h of p start slots of the day gets its
own rows, drawn from Dirichlet(C_h(i, ·) + s·P̄(i, ·) + prior): the block's counts, the same
``s`` (``shrinkage``) pseudo-transitions per row from the pooled fit P̄ that
``MarkovChainScenario.fit(period=p, shrinkage=s)`` uses (here P̄ is the pooled fit with
pseudocount ``prior``: the mean of the homogeneous posterior), and ``prior``; the members are
time-varying chains repeating the day's matrices. P̄ is estimated from the same data, so this
is an empirical-Bayes posterior (``docs/posterior.md``). The default prior is 1 per cell
without ``period`` and 1 / H per cell with it (H blocks in the day; :func:`default_prior`):
1 per cell in every block outweighs an hour's data, and the class then needs 3-4 times less
noise than the point fits (measured in ``docs/posterior.md``).

The class records how it was drawn in its attribute ``posterior`` (:class:`PosteriorRecord`:
prior, a fingerprint of the counts, ``n``, coverage, confidence, seed, period, shrinkage;
:func:`posterior_of` reads it), so a certificate can carry it and
``pufferfish_pgm.verify`` can redraw the class and compare fingerprints.

Examples
--------
>>> chains, record = posterior_members([["a", "a", "b", "b"], ["b", "a", "a", "b"]],
...                                    coverage=0.9, confidence=0.9, seed=1)
>>> len(chains), record.draws, record.seed, chains[0].states
(22, 22, 1, ('a', 'b'))
>>> posterior_draws(0.99, 0.999)
688
>>> hourly, rec = posterior_members([["a", "a", "b", "b"], ["b", "a", "a", "b"]], period=2,
...                                 coverage=0.5, confidence=0.5, seed=1)
>>> hourly[0].transition.shape, rec.period, rec.shrinkage      # steps 0, 1 | 2: blocks 0 | 1
((3, 2, 2), 2, 10.0)
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
from ..errors import InvalidDataError, InvalidParameterError, ParameterTypeError
from ._scenarios import MarkovChainScenario
from ._time_varying import check_period, check_shrinkage, day_stack
from ._transition_counts import TransitionCounts, transition_counts

__all__ = ["PosteriorRecord", "block_parameters", "counts_fingerprint", "default_prior",
           "draw_chains", "posterior_draws", "posterior_members", "posterior_of"]

#: The default Dirichlet prior of a homogeneous class: one pseudo-observation per cell.
DEFAULT_PRIOR = 1.0
#: The smallest default prior of a time-of-day class (smaller Gamma shapes underflow).
MIN_DEFAULT_PRIOR = 0.01


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


def default_prior(counts: TransitionCounts) -> float:
    """The prior ``posterior_members`` uses when none is given: 1 per cell for homogeneous
    counts; for counts per block (``period``), 1 / H per cell in each of the day's H blocks
    (the day's prior is then the homogeneous class's 1 per cell, split over the blocks), at
    least :data:`MIN_DEFAULT_PRIOR`. Measured on the Ordóñez homes in ``docs/posterior.md``.

    Examples
    --------
    >>> days = [[0, 1, 1, 0, 0, 1]]
    >>> default_prior(transition_counts(days)), default_prior(transition_counts(days, period=2))
    (1.0, 0.3333333333333333)
    """
    if counts.period is None:
        return DEFAULT_PRIOR
    return max(1.0 / len(counts.transitions), MIN_DEFAULT_PRIOR)


def counts_fingerprint(counts: TransitionCounts) -> str:
    """SHA-256 of the counts (states by ``repr``, transitions, first states, longest, and the
    period when counted per block).

    Examples
    --------
    >>> fp = counts_fingerprint(transition_counts([[0, 1, 1]]))
    >>> len(fp), fp == counts_fingerprint(transition_counts([[0, 1, 1]]))
    (64, True)
    """
    doc = {"states": [repr(s) for s in counts.states],
           "transitions": counts.transitions.astype(int).tolist(),
           "initial": counts.initial.astype(int).tolist(), "longest": int(counts.longest)}
    if counts.period is not None:          # homogeneous counts keep their fingerprint
        doc["period"] = int(counts.period)
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class PosteriorRecord:
    """How a posterior class was drawn (what a certificate records and ``verify`` redraws).

    Attributes
    ----------
    prior : float
        Dirichlet pseudo-observations added to every cell of every row and of the start (the
        value used: :func:`default_prior` when none was given).
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
    period : int or None
        Slots per block of a time-varying class (None: homogeneous chains).
    shrinkage : float or None
        Pseudo-transitions per row from the pooled fit (None when ``period`` is None).
    """

    prior: float
    counts_sha256: str
    draws: int
    coverage: float
    confidence: float
    seed: int
    length: int
    counts: TransitionCounts = field(repr=False, compare=False)
    period: int | None = None
    shrinkage: float | None = None

    def draw(self, n: int | None = None, *,
             seed: int | None = None) -> list[MarkovChainScenario]:
        """``n`` fresh chains from the same posterior (default: as many as the class), e.g.
        beliefs outside Θ for ``pufferfish_pgm.robustness``; ``seed=None``: fresh entropy."""
        size = self.draws if n is None else n
        return draw_chains(self.counts, size, self.prior, _seed(seed), self.length,
                           self.shrinkage)

    def redraw(self) -> list[MarkovChainScenario]:
        """The chains this record describes, drawn again (``verify`` compares fingerprints)."""
        return draw_chains(self.counts, self.draws, self.prior, self.seed, self.length,
                           self.shrinkage)


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


def block_parameters(counts: TransitionCounts, prior: float,
                     shrinkage: float) -> np.ndarray:
    """``(H, k, k)`` Dirichlet parameters of per-block counts: C_h + s·P̄ + prior, with P̄
    the pooled fit with pseudocount ``prior``, (C + prior) / (Σ_j C(i, j) + k·prior).

    Examples
    --------
    >>> c = transition_counts([[0, 0, 1, 1]], period=2)    # start slots {0, 1}, {2, 3}
    >>> c.transitions.tolist()                              # pooled C = [[1, 1], [0, 1]]
    [[[1, 1], [0, 0]], [[0, 0], [0, 1]]]
    >>> block_parameters(c, 1.0, 3.0)[1].tolist()  # P̄ = [[1/2, 1/2], [1/3, 2/3]]: + 3 P̄ + 1
    [[2.5, 2.5], [2.0, 4.0]]
    """
    pooled = counts.transitions.sum(axis=0) + prior
    pooled = pooled / pooled.sum(axis=1, keepdims=True)
    return counts.transitions + shrinkage * pooled[None] + prior


def draw_chains(counts: TransitionCounts, n: int, prior: float, seed: int,
                length: int, shrinkage: float | None = None) -> list[MarkovChainScenario]:
    """``n`` chains from the Dirichlet posterior (transitions first, then starts; one
    ``numpy.random.default_rng(seed)`` stream), named ``"posterior 0"``, ``"posterior 1"``...
    Per-block counts (``counts.period``) give time-varying chains: every block's rows from
    :func:`block_parameters` (``shrinkage`` s), the day's blocks repeated over ``length``.

    Examples
    --------
    >>> chains = draw_chains(transition_counts([[0, 1, 1, 0]]), 2, 1.0, 5, 4)
    >>> [c.name for c in chains], chains[0].length
    (['posterior 0', 'posterior 1'], 4)
    """
    k = len(counts.states)
    blocks = 1 if counts.period is None else len(counts.transitions)
    steps = 1 if counts.period is None else max(length - 1, 1)
    check_allocation(8.0 * n * k * (k * (blocks + steps) + 2),
                     what=f"{n} posterior draws of a {k}-state chain")
    rng = np.random.default_rng(seed)
    alpha = counts.transitions + prior if counts.period is None else block_parameters(
        counts, prior, check_shrinkage(shrinkage))
    trans = _normalised(rng.standard_gamma(alpha, size=(n,) + alpha.shape),
                        "a transition row", prior)
    start = _normalised(rng.standard_gamma(counts.initial + prior, size=(n, k)),
                        "the start", prior)
    if counts.period is not None:
        trans = np.stack([day_stack(t, counts.period, counts.longest, length) for t in trans])
    return [MarkovChainScenario(trans[i], start[i], length, counts.states,
                                name=f"posterior {i}") for i in range(n)]


def _counts_of(data: Any, states: Sequence | None, period: int | None) -> TransitionCounts:
    if not isinstance(data, TransitionCounts):
        return transition_counts(data, states, period=period)
    if data.period != period:
        raise InvalidDataError(
            f"period={period!r}, but the transition counts were counted "
            + ("in one table" if data.period is None else f"per block of {data.period} slots")
            + f"; count them with transition_counts(..., period={period!r}) or pass "
            f"period={data.period!r}")
    return data if states is None else data.over(states)


def posterior_members(data: Any, *, coverage: float = 0.99, confidence: float = 0.999,
                      prior: float | None = None, period: int | None = None,
                      shrinkage: float | None = None, seed: int | None = None,
                      length: int | None = None, states: Sequence | None = None,
                      ) -> tuple[list[MarkovChainScenario], PosteriorRecord]:
    """The chains of ``ScenarioClass.from_posterior`` and their record.

    ``data``: sequences as ``MarkovChainScenario.fit`` reads them, or a
    :class:`TransitionCounts` (``transition_counts``, summed over partitions; with ``period``,
    counted with the same ``period``). Every transition row and the start get a
    Dirichlet(counts + ``prior``) posterior; with ``period=p`` every block's rows get
    Dirichlet(C_h + s·P̄ + ``prior``) (:func:`block_parameters`; ``shrinkage`` s, default
    10 as in ``fit``). ``prior=None`` is :func:`default_prior`: 1 per cell, or with
    ``period`` 1 / H per cell for the day's H blocks (prior 1 per block pulls rarely visited
    rows far from the fit, ``docs/posterior.md``); the record holds the prior used.
    ``length`` defaults to the longest sequence (the day); ``seed=None`` draws fresh entropy
    (recorded).

    Raises
    ------
    InvalidParameterError
        ``coverage`` or ``confidence`` outside (0, 1), ``prior`` not > 0, ``period`` not a
        whole number >= 1, ``shrinkage`` not a finite number >= 0 or given without ``period``.
    InvalidDataError
        ``TransitionCounts`` counted with another period.
    """
    n = posterior_draws(coverage, confidence)
    asked = None if prior is None else positive_finite("prior", prior)
    if period is None and shrinkage is not None:
        raise InvalidParameterError("shrinkage applies to a time-varying posterior only; pass "
                                    "period= (slots per block) too, or drop shrinkage")
    period = None if period is None else check_period(period)
    shrink = None if period is None else check_shrinkage(shrinkage)
    counts = _counts_of(data, states, period)
    alpha = default_prior(counts) if asked is None else asked
    size = counts.longest if length is None else length
    drawn = _seed(seed)
    record = PosteriorRecord(alpha, counts_fingerprint(counts), n, float(coverage),
                             float(confidence), drawn, size, counts, period, shrink)
    return draw_chains(counts, n, alpha, drawn, size, shrink), record
