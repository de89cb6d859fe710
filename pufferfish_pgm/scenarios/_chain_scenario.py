"""The Markov-chain scenario: a chain X_0, ..., X_{T-1}, time-homogeneous or time-varying.

Examples
--------
>>> mc = MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 3)
>>> mc.initial.round(4).tolist(), mc.nodes
([0.6667, 0.3333], range(0, 3))
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._validation import positive_int
from ..errors import (
    InvalidModelError,
    ParameterTypeError,
    UnknownNodeError,
)
from . import _network_tables, _pgmpy
from ._chain_validation import (
    check_initial,
    check_steps,
    check_stochastic,
    stationary_distribution,
)
from ._fit import fit_chain
from ._network_scenario import BayesianNetworkScenario, _Domain

__all__ = ["MarkovChainScenario"]


@dataclass(frozen=True, eq=False)
class MarkovChainScenario(_Domain):
    """A Markov chain X_0, ..., X_{T-1} over k states, time-homogeneous or time-varying.

    Parameters
    ----------
    transition : array_like (k, k) or (T - 1, k, k), or pgmpy.models.MarkovChain
        Row-stochastic matrix ``P[s, t] = P(X_{n+1}=t | X_n=s)`` (rows sum to 1 within 1e-9),
        or one such matrix per step: ``transition[n]`` moves X_n to X_{n+1}, for a
        time-varying chain (routines by time of day; every step and row is checked, and
        ``initial="stationary"`` is refused: such a chain has no stationary law).
    initial : array_like, "stationary" or "any"
        Distribution of X_0; ``"any"`` means every initial distribution (the worst case is
        taken wherever it matters). With a pgmpy chain, its start state is used if it has one.
    length : int
        T >= 1, the number of time steps (nodes 0..T-1).
    states : sequence, optional
        State names; 0..k-1 when omitted.

    Notes
    -----
    ``initial="stationary"`` is resolved to an array when the chain is made, so
    ``dataclasses.replace(mc, length=10)`` keeps the start distribution and
    ``dataclasses.replace(mc, transition=q)`` does not recompute it (pass
    ``initial="stationary"`` again for that). Like a network, a chain holds no cache written
    by other stages (see :class:`BayesianNetworkScenario`).

    Examples
    --------
    >>> mc = MarkovChainScenario(transition=[[0.9, 0.1], [0.5, 0.5]], initial=[1, 0],
    ...                          length=4, states=["rest", "walk"])
    >>> mc.marginal(2).round(3).tolist()
    [0.86, 0.14]
    >>> day = MarkovChainScenario([[[0.9, 0.1], [0.5, 0.5]], [[0.2, 0.8], [0.0, 1.0]]],
    ...                           [1, 0], 3)
    >>> day.time_varying, day.step(1).tolist(), day.marginal(2).round(3).tolist()
    (True, [[0.2, 0.8], [0.0, 1.0]], [0.18, 0.82])
    """

    transition: np.ndarray
    initial: np.ndarray | str
    length: int
    states: tuple
    name: str = "chain"
    #: P^n by n, filled by :meth:`power` only (the one cache a chain holds, and its own).
    _powers: dict[int, np.ndarray] = field(init=False, repr=False, compare=False)

    def __init__(self, transition: Any, initial: Any = "stationary", length: int = 1,
                 states: Sequence | None = None, *, name: str = "chain") -> None:
        start = None
        if type(transition).__name__ == "MarkovChain":
            transition, default_states, start = _pgmpy.chain_from_pgmpy(transition)
            states = states if states is not None else default_states
            start = None if start is None else default_states.index(start)  # pgmpy's index
        length = positive_int("length", length)
        varying = np.ndim(transition) == 3
        p = check_steps(transition, length) if varying else check_stochastic(transition)
        k = p.shape[-1]
        names = tuple(range(k)) if states is None else tuple(states)
        bad = next((n for n in names if not isinstance(n, Hashable)), None)
        if bad is not None:
            raise ParameterTypeError(f"state names must be hashable (a str, an int, ...), got "
                                     f"the {type(bad).__name__} {bad!r}")
        if len(names) != k or len(set(names)) != k:
            raise InvalidModelError(
                f"states must name the {k} states once each, got {list(names)}"
            )
        if start is not None and isinstance(initial, str) and initial == "stationary":
            initial = np.eye(k)[start]
        object.__setattr__(self, "transition", p)
        object.__setattr__(self, "initial", self._resolve_initial(initial, p))
        object.__setattr__(self, "length", length)
        object.__setattr__(self, "states", names)
        object.__setattr__(self, "name", str(name))
        object.__setattr__(self, "_powers", {})
        self.transition.setflags(write=False)

    @staticmethod
    def _resolve_initial(initial: Any, p: np.ndarray) -> np.ndarray | str:
        if isinstance(initial, str):
            if initial == "stationary" and p.ndim == 3:
                raise InvalidModelError(
                    "a time-varying chain has no stationary distribution; give the law of X_0 "
                    "(for example the empirical one, MarkovChainScenario.fit's default) or "
                    "initial='any'")
            if initial == "stationary":
                q = stationary_distribution(p)
            elif initial == "any":
                return "any"
            else:
                raise InvalidModelError(
                    f"initial must be an array, 'stationary' or 'any', got {initial!r}"
                )
        else:
            q = check_initial(initial, p.shape[-1])
        q.setflags(write=False)
        return q

    @property
    def nodes(self) -> range:
        """Time steps 0..T-1, as a ``range`` (a sequence that takes no memory per step)."""
        return range(self.length)

    @property
    def k(self) -> int:
        """Number of states."""
        return self.transition.shape[-1]

    @property
    def time_varying(self) -> bool:
        """True when every step has its own matrix (``transition`` is ``(T - 1, k, k)``)."""
        return self.transition.ndim == 3

    @property
    def steps(self) -> np.ndarray:
        """``(T - 1, k, k)``: the matrix of every step (a read-only view, no copy, for a
        homogeneous chain)."""
        if self.time_varying:
            return self.transition
        return np.broadcast_to(self.transition, (self.length - 1, self.k, self.k))

    def step(self, t: int) -> np.ndarray:
        """The matrix moving X_t to X_{t+1} (0 <= t < T - 1)."""
        if not 0 <= t < self.length - 1:
            raise UnknownNodeError(f"chain {self.name!r} has steps 0..{self.length - 2} "
                                   f"(X_t -> X_t+1), not {t!r}")
        return self.transition[t] if self.time_varying else self.transition

    def product(self, start: int, stop: int) -> np.ndarray:
        """``P(X_stop | X_start)`` as a k x k matrix: the product of the steps from ``start``
        to ``stop`` (``power(stop - start)`` when homogeneous, the identity when equal)."""
        if not 0 <= start <= stop < self.length:
            raise UnknownNodeError(f"chain {self.name!r}: need 0 <= start <= stop < "
                                   f"{self.length}, got start={start!r}, stop={stop!r}")
        if not self.time_varying:
            return self.power(stop - start)
        out = np.eye(self.k)
        for t in range(start, stop):
            out = out @ self.transition[t]
        return out

    def require_homogeneous(self, what: str, alternative: str) -> None:
        """Raise :class:`InvalidModelError` naming ``what`` cannot take this time-varying
        chain and the ``alternative``; nothing for a homogeneous chain."""
        if self.time_varying:
            raise InvalidModelError(
                f"{what} needs a time-homogeneous chain, but chain {self.name!r} is "
                f"time-varying (one matrix per step); {alternative}")

    @property
    def initial_is_any(self) -> bool:
        """True when the class of all initial distributions is meant."""
        return isinstance(self.initial, str)

    @property
    def initial_distribution(self) -> np.ndarray:
        """The distribution of X_0 (read-only; an error for ``initial="any"``)."""
        if isinstance(self.initial, str):
            raise InvalidModelError(
                f"chain {self.name!r} has initial='any', so X_0 has no single distribution; "
                "give an initial distribution"
            )
        return self.initial

    def states_of(self, node: Any) -> tuple:
        self.check_node(node)
        return self.states

    def check_node(self, node: Any) -> Any:
        ok = isinstance(node, (int, np.integer)) and not isinstance(node, bool)
        if not ok or not 0 <= node < self.length:
            raise UnknownNodeError(
                f"unknown node {node!r} in chain {self.name!r}; nodes are the time steps "
                f"0..{self.length - 1}"
            )
        return int(node)

    def power(self, n: int) -> np.ndarray:
        """P^n (computed once per scenario; read-only). A time-varying chain has no single
        P^n: use :meth:`product`."""
        self.require_homogeneous("power(n)", "use product(start, stop) for the n-step matrix "
                                 "from a given time")
        powers = self._powers
        if n not in powers:
            p = np.linalg.matrix_power(self.transition, n)
            p.setflags(write=False)
            powers[n] = p
        return powers[n]

    def marginal(self, t: int) -> np.ndarray:
        """Distribution of X_t (needs a fixed initial distribution)."""
        if isinstance(self.initial, str):
            raise InvalidModelError(
                f"chain {self.name!r} has initial='any', so X_{t} has no single distribution; "
                "give an initial distribution"
            )
        t = self.check_node(t)
        if not self.time_varying:
            return self.initial @ self.power(t)
        q = self.initial
        for n in range(t):
            q = q @ self.transition[n]
        return q

    def to_bayesian_network(self) -> BayesianNetworkScenario:
        """Unroll into a Bayesian network with nodes 0..T-1 (needs a fixed initial); node t
        has the CPT of step t - 1, so a time-varying chain is the same model as its network.
        """
        q0 = self.marginal(0)
        cpts = {0: q0.copy()}
        cpts.update({t: self.step(t - 1).T.copy() for t in range(1, self.length)})
        tables = _network_tables.NetworkTables(
            nodes=tuple(self.nodes), states={t: self.states for t in self.nodes},
            parents={t: (() if t == 0 else (t - 1,)) for t in self.nodes}, cpts=cpts)
        return BayesianNetworkScenario(tables, name=f"{self.name} (unrolled)")

    def to_network(self) -> BayesianNetworkScenario:
        """The same model as an unrolled Bayesian network, nodes 0..T-1 (see
        :meth:`to_bayesian_network`): what the network engines take, as a cross-check or
        for a mechanism that refuses time-varying chains.

        Examples
        --------
        >>> day = MarkovChainScenario([[[0.9, 0.1], [0.5, 0.5]], [[0.2, 0.8], [0.0, 1.0]]],
        ...                           [1, 0], 3)
        >>> day.to_network().cpt(2).tolist()
        [[0.2, 0.0], [0.8, 1.0]]
        """
        return self.to_bayesian_network()

    def with_length(self, length: int) -> MarkovChainScenario:
        """The same chain over a different number of steps (a time-varying chain can only be
        cut: its steps past the end are unknown)."""
        transition = self.transition
        if self.time_varying:
            length = positive_int("length", length)
            if length > self.length:
                raise InvalidModelError(
                    f"chain {self.name!r} is time-varying with {self.length - 1} steps; it "
                    f"cannot be extended to length {length}: fit it with length={length} "
                    "(MarkovChainScenario.fit repeats the day's matrices) or pass the steps")
            transition = transition[:length - 1]
        return MarkovChainScenario(transition, self.initial, length, self.states,
                                   name=self.name)

    @classmethod
    def fit(cls, sequences: Any, *, length: int | None = None, states: Sequence | None = None,
            pseudocount: float = 0.0, initial: str = "empirical",
            name: str = "fitted chain", period: int | None = None,
            shrinkage: float | None = None) -> MarkovChainScenario:
        """Maximum-likelihood chain from one or many state sequences.

        ``sequences`` is one sequence, a list of sequences, or a table with one sequence per
        row (a 2-D array or a DataFrame whose columns are the time steps in order), the same
        orientation as :meth:`Calibration.release` reads. See
        :func:`pufferfish_pgm.scenarios._fit.fit_chain` for the estimator and its options.

        ``period=p`` fits a time-of-day chain: one matrix per block of p slots of the day
        (a sequence is a day; ``period=6`` at 10-minute slots is one per hour), a transition
        counted in the block of its start slot, every row shrunk to the pooled fit:
        ``P_h(i, j) = (C_h(i, j) + s·P̄(i, j)) / (Σ_j C_h(i, j) + s)`` with ``s = shrinkage``
        (default 10 pseudo-transitions per row); a chain longer than a day repeats the day's
        matrices (:mod:`pufferfish_pgm.scenarios._time_varying`).

        Examples
        --------
        >>> mc = MarkovChainScenario.fit([["a", "a", "b", "b", "a"]])
        >>> mc.states, mc.transition.tolist()
        (('a', 'b'), [[0.5, 0.5], [0.5, 0.5]])
        >>> day = MarkovChainScenario.fit([["a", "a", "b", "a", "a"]], period=2, shrinkage=0)
        >>> day.transition[:, 0].tolist()     # row "a", steps 0..3 in blocks 0, 0, 1, 1
        [[0.5, 0.5], [0.5, 0.5], [1.0, 0.0], [1.0, 0.0]]
        """

        return fit_chain(cls, sequences, length=length, states=states,
                         pseudocount=pseudocount, initial=initial, name=name, period=period,
                         shrinkage=shrinkage)

    @classmethod
    def from_counts(cls, transitions: Any, initial: Any, length: int, *,
                    states: Sequence | None = None, pseudocount: float = 0.0,
                    name: str = "fitted chain", period: int | None = None,
                    shrinkage: float | None = None,
                    day: int | None = None) -> MarkovChainScenario:
        """The chain :meth:`fit` gives, from counts: ``transitions[s, t]`` steps from s to t
        and ``initial`` first-state counts (or ``"stationary"`` / ``"any"``), summed over
        partitions (:func:`~pufferfish_pgm.scenarios.transition_counts`); same pseudocount rule.
        With ``period``, ``transitions[h]`` are the counts of block h of a day of ``day``
        slots (as ``transition_counts(..., period=p)`` gives them) and the chain is the
        time-of-day fit of :meth:`fit`.
        See :func:`pufferfish_pgm.scenarios._fit.chain_from_counts`.

        Examples
        --------
        >>> MarkovChainScenario.from_counts([[1, 1], [1, 0]], [1, 0], 4).transition.tolist()
        [[0.5, 0.5], [1.0, 0.0]]
        """
        from ._fit import chain_from_counts

        return chain_from_counts(cls, transitions, initial, length, states=states,
                                 pseudocount=pseudocount, name=name, period=period,
                                 shrinkage=shrinkage, day=day)
