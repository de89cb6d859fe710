"""A private fit: transition counts released with user-level ε-differential privacy.

A Θ fitted from the data it protects reads every record (``docs/privacy-promise.md``). This
fit does not: each user (one sequence: a person, or a day) contributes its first state and at
most ``max_steps`` transitions, taken at evenly spaced positions ``t_j = ⌊j (n − 1) /
max_steps⌋`` of its ``n − 1`` transitions (all of them when ``n − 1 ≤ max_steps``), so adding
or removing one user changes the table of first-state and transition counts by at most
``Δ = max_steps + 1`` in L1. Exact discrete Laplace noise of scale ``Δ / ε`` on every cell
(``k² + k`` cells, the OS's secure source by default) makes the noisy table ε-differentially
private for add/remove-one-user neighbours (the L1 Laplace mechanism, integer version); the
counts are then clipped at 0, which is post-processing. The states and the chain's length
are public inputs: the set of states found in the data would itself be a release.

Fit the chain from the noisy counts (:meth:`PrivateCounts.chain`, the same pseudocount rule as
``MarkovChainScenario.fit``), or use them as pseudo-data for a posterior class.

Examples
--------
>>> import numpy as np
>>> days = [["rest", "rest", "walk", "walk"], ["rest", "walk", "walk", "rest"]]
>>> private = private_transition_counts(days, states=("rest", "walk"), length=4,
...                                     epsilon=1.0, max_steps=3,
...                                     rng=np.random.default_rng(0))
>>> private.sensitivity, private.scale, private.counts.transitions.shape
(4, 4.0, (2, 2))
>>> private.chain(pseudocount=1.0).k
2
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import positive_finite, positive_int
from ..errors import InvalidDataError, InvalidParameterError
from ..noise import sample_discrete_laplace
from ._fit import as_sequences
from ._transition_counts import TransitionCounts

__all__ = ["PrivateCounts", "private_transition_counts"]


@dataclass(frozen=True, eq=False)
class PrivateCounts:
    """Noisy transition and first-state counts and the guarantee they carry.

    Attributes
    ----------
    counts : TransitionCounts
        The released counts (noisy, clipped at 0), over the public states, with ``longest`` the
        public length.
    epsilon : float
        User-level ε of the release (add/remove one sequence).
    max_steps : int
        Transitions counted per user at most.
    sensitivity : int
        ``max_steps + 1``: the L1 change of the table when one user is added or removed.
    scale : float
        The discrete Laplace scale ``sensitivity / epsilon`` added to every cell.
    """

    counts: TransitionCounts
    epsilon: float
    max_steps: int
    sensitivity: int
    scale: float

    def chain(self, *, pseudocount: float = 1.0, initial: str = "empirical",
              name: str = "privately fitted chain") -> Any:
        """The chain fitted from the noisy counts (a row with no count left is uniform through
        ``pseudocount``; 1 by default, since noise zeroes sparse rows)."""
        return self.counts.chain(pseudocount=pseudocount, initial=initial, name=name)


def private_transition_counts(sequences: Any, *, states: Sequence, length: int,
                              epsilon: float, max_steps: int,
                              rng: np.random.Generator | None = None) -> PrivateCounts:
    """User-level ε-DP transition counts of ``sequences`` (see the module).

    ``sequences`` is read as ``MarkovChainScenario.fit`` reads it (one sequence per user).
    ``states`` (the public state space, in order), ``length`` (the public length of the chain
    to fit), ``epsilon`` and ``max_steps`` are required; ``rng=None`` draws the noise from the
    OS's secure source (a Generator is for tests only).

    Raises
    ------
    InvalidDataError
        No sequence, an empty one, or a value outside ``states`` (naming the sequence and the
        position).
    InvalidParameterError, ParameterTypeError
        A bad ε, ``max_steps``, ``length`` or ``states``.
    """
    eps = positive_finite("epsilon", epsilon)
    steps = positive_int("max_steps", max_steps)
    names = _public_states(states)
    seqs = as_sequences(sequences)
    if not seqs or any(len(s) == 0 for s in seqs):
        raise InvalidDataError("no sequences (or an empty one) given; pass at least one "
                               "sequence of states")
    trans, first = _bounded_counts(seqs, names, steps)
    sensitivity = steps + 1
    scale = sensitivity / eps
    noisy_trans = np.maximum(trans + sample_discrete_laplace(scale, trans.shape, rng), 0)
    noisy_first = np.maximum(first + sample_discrete_laplace(scale, first.shape, rng), 0)
    counts = TransitionCounts(names, noisy_trans.astype(np.int64),
                              noisy_first.astype(np.int64), positive_int("length", length))
    return PrivateCounts(counts=counts, epsilon=eps, max_steps=steps,
                         sensitivity=sensitivity, scale=scale)


def _public_states(states: Any) -> tuple:
    names = tuple(states) if isinstance(states, (list, tuple)) else None
    if not names or len(set(names)) != len(names):
        raise InvalidParameterError(
            f"states must be a non-empty list of distinct states, got {states!r}; the states "
            "are a public input of a private fit (the states found in the data would leak)")
    return names


def bounded_positions(transitions: int, max_steps: int) -> np.ndarray:
    """The transitions a user of ``transitions`` steps contributes: ``⌊j (n−1)/m⌋``.

    Examples
    --------
    >>> bounded_positions(3, 5).tolist(), bounded_positions(10, 4).tolist()
    ([0, 1, 2], [0, 2, 5, 7])
    """
    if transitions <= max_steps:
        return np.arange(transitions)
    return (np.arange(max_steps) * transitions) // max_steps


def _bounded_counts(seqs: list[list], names: tuple, max_steps: int
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Exact counts of the bounded contributions, one group of equal-length users at a time
    (a loop over the distinct lengths, not over users)."""
    k = len(names)
    trans, first = np.zeros(k * k, np.int64), np.zeros(k, np.int64)
    by_length: dict[int, list[int]] = {}
    for i, seq in enumerate(seqs):
        by_length.setdefault(len(seq), []).append(i)
    for n, rows in by_length.items():
        codes = _codes([seqs[i] for i in rows], rows, names)
        where = bounded_positions(n - 1, max_steps)
        pairs = codes[:, where] * k + codes[:, where + 1]
        trans += np.bincount(pairs.ravel(), minlength=k * k)
        first += np.bincount(codes[:, 0], minlength=k)
    return trans.reshape(k, k), first


def _codes(block: list[list], rows: list[int], names: tuple) -> np.ndarray:
    """State codes of equal-length sequences (-1: not a state, refused)."""
    import pandas as pd  # type: ignore[import-untyped]

    values = np.array(block, dtype=object)
    codes = pd.Index(list(names)).get_indexer(values.ravel()).astype(np.int64)
    codes = codes.reshape(values.shape)
    if (codes < 0).any():
        r, t = np.argwhere(codes < 0)[0]
        raise InvalidDataError(
            f"sequence {rows[r]}, position {t}: state {values[r, t]!r} is not among the public "
            f"states {list(names)}; add it to states or clean the data")
    return codes
