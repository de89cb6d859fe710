"""Which secrets can be true: the possible states of each node under a class, and the checks.

Pufferfish privacy constrains a pair (s, s') under θ only where both secrets have positive
probability. A secret with probability 0 under every θ of the class cannot be true, so there
is nothing to protect: a framework whose pairs the library builds (every pair of every node,
or of some nodes) leaves such secrets out, using :func:`state_support`; a pair the user wrote
out with such a secret is refused by :func:`check_possible`.

For chains possibility is structural: X_0 takes the states of the initial law (every state for
``initial="any"``), X_{t+1} the states one step away from those of X_t, and a stationary start
keeps its support (the rule the chain planners use). For networks it is read off each node's
marginal, one exact inference per node and θ, unless the node's CPT already proves every
state possible (no zero in a state's row: see :func:`node_support`).

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> asleep = MarkovChainScenario([[0.5, 0.5], [0.5, 0.5]], [1.0, 0.0], 3)
>>> support = state_support(asleep)
>>> support.table.tolist()
[[True, False], [True, True], [True, True]]
>>> support.impossible(asleep)
((0, 1),)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._budget import check_allocation
from .._tolerances import STATIONARITY
from ..errors import ImpossibleSecretError
from ..inference import conditional, secret_probability
from ..scenarios import (
    BayesianNetworkScenario,
    MarkovChainScenario,
    MarkovNetworkScenario,
    Scenario,
    ScenarioClass,
    as_class,
)
from ._secrets import NodeSecret, SecretPair

__all__ = ["StateSupport", "chain_support", "check_possible", "node_support", "possible_secrets",
           "state_support", "support_at", "support_cycle"]

#: |q0 P - q0| up to which a start counts as stationary (as in the chain planners).
STATIONARY_TOLERANCE = STATIONARITY


@dataclass(frozen=True, eq=False)
class StateSupport:
    """Which states of each node have positive probability under some θ of a class.

    Attributes
    ----------
    nodes : tuple
        The nodes covered, in model order (``rows`` maps each to its row).
    table : numpy.ndarray
        ``(len(nodes), most states)`` booleans: ``table[i, j]`` is True when state ``j`` of
        ``nodes[i]`` is possible (always False past a node's last state).
    widths : numpy.ndarray
        The number of states of each node.

    Examples
    --------
    >>> s = StateSupport(("A", "B"), np.array([[True, True, False], [True, False, True]]),
    ...                  np.array([2, 3]))
    >>> s.mask("A").tolist(), s.pair_counts().tolist()
    ([True, True], [1, 1])
    """

    nodes: tuple
    table: np.ndarray
    widths: np.ndarray
    rows: dict = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "rows", {v: i for i, v in enumerate(self.nodes)})

    def mask(self, node: Any) -> np.ndarray:
        """Which states of ``node`` are possible (one boolean per state, in model order)."""
        row = self.rows[node]
        return self.table[row, :self.widths[row]]

    def allows(self, scenarios: Any, pair: SecretPair) -> bool:
        """Whether both single-node secrets of ``pair`` are possible."""
        return all(self.mask(s.node)[scenarios.state_index(s.node, s.state)]
                   for s in (pair.first, pair.second) if isinstance(s, NodeSecret))

    def pair_counts(self) -> np.ndarray:
        """The number of pairs of two possible states, per node."""
        count = self.table.sum(axis=1)
        return count * (count - 1) // 2

    def impossible(self, scenarios: Any) -> tuple[tuple[Any, Any], ...]:
        """Every (node, state) with probability 0 under every θ, nodes and states in order."""
        cls = as_class(scenarios)
        real = np.arange(self.table.shape[1]) < self.widths[:, None]
        rows, states = np.nonzero(real & ~self.table)
        return tuple((self.nodes[i], cls.states_of(self.nodes[i])[j])
                     for i, j in zip(rows.tolist(), states.tolist(), strict=True))

    def everything(self) -> StateSupport:
        """The same nodes with every state possible (nothing left out)."""
        real = np.arange(self.table.shape[1]) < self.widths[:, None]
        return StateSupport(self.nodes, real, self.widths)


def state_support(scenarios: Any, nodes: Iterable | None = None) -> StateSupport:
    """The states of ``nodes`` (default: every node) possible under some member of the class.

    ``nodes`` must be known nodes in model order. A network node is settled as soon as one
    member makes all its states possible (later members are not asked).

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import BayesianNetworkScenario, default_model_path
    >>> asia = BayesianNetworkScenario.from_file(default_model_path("asia.bif"))
    >>> state_support(asia, ["smoke"]).mask("smoke").tolist()
    [True, True]
    """
    cls = as_class(scenarios)
    if cls.kind == "chain":
        _check_table_size(cls, nodes)
    chosen = tuple(cls.nodes) if nodes is None else tuple(nodes)
    if cls.kind == "chain":
        k = len(cls.states_of(0))
        table = np.zeros((len(cls.nodes), k), dtype=bool)
        for chain in cls:
            assert isinstance(chain, MarkovChainScenario)   # kind "chain": every member
            table |= chain_support(chain)
        return StateSupport(chosen, table if nodes is None else table[list(chosen)],
                            np.full(len(chosen), k, dtype=np.int64))
    widths = np.array([len(cls.states_of(v)) for v in chosen], dtype=np.int64)
    table = np.zeros((len(chosen), int(widths.max(initial=0))), dtype=bool)
    for row, v in enumerate(chosen):
        for scenario in cls:
            table[row, :widths[row]] |= node_support(scenario, scenario.check_node(v))
            if table[row, :widths[row]].all():
                break
    return StateSupport(chosen, table, widths)


#: Bytes per node of a chain's support table: its booleans twice (the table and one member's
#: rows), the node tuple and widths (8 + 8), and the node -> row dict (~104 per entry).
SUPPORT_BYTES_PER_NODE = 120


def _check_table_size(cls: ScenarioClass, nodes: Iterable | None) -> None:
    """Refuse, before building it, a support table over more nodes than the budget allows."""
    count = len(cls.nodes) if nodes is None else len(list(nodes))
    k = len(cls.states_of(0))
    check_allocation(count * (2 * k + SUPPORT_BYTES_PER_NODE), what=(
        f"the table of which states are possible at each of {count:,} time steps (it lists "
        "every step of the chain; use a shorter chain)"))


def support_cycle(chain: MarkovChainScenario) -> tuple[np.ndarray, int]:
    """Supports S_0, ..., S_{L-1} and ``start`` such that S_L = S_start (first repeat).

    S_{t+1} = N(S_t) is a map on subsets, so the sequence is eventually periodic with period
    L - start (at most 2^k distinct sets; usually a handful). For ``initial="any"`` S_t is
    the set of states reachable in exactly t steps; a stationary start has S_t = S_0.

    Examples
    --------
    >>> flip = MarkovChainScenario([[0.0, 1.0], [1.0, 0.0]], [1.0, 0.0], 3)
    >>> head, start = support_cycle(flip)
    >>> head.tolist(), start
    ([[True, False], [False, True]], 0)
    """
    if chain.time_varying:      # every step its own support (the last one stands for S_T)
        return _varying_supports(chain), chain.length - 1
    if chain.initial_is_any:
        current = np.ones(chain.k, dtype=bool)
    else:
        q0 = chain.initial_distribution
        current = q0 > 0
        if np.max(np.abs(q0 @ chain.transition - q0)) <= STATIONARY_TOLERANCE:
            return current[None], 0
    step = (chain.transition > 0).astype(np.int64)
    seen: dict[bytes, int] = {}
    head: list[np.ndarray] = []
    while current.tobytes() not in seen:
        seen[current.tobytes()] = len(head)
        head.append(current)
        current = (current.astype(np.int64) @ step) > 0
    return np.array(head), seen[current.tobytes()]


def _varying_supports(chain: MarkovChainScenario) -> np.ndarray:
    """``(T, k)`` supports of a time-varying chain: S_{t+1} = states one step t from S_t."""
    out = np.zeros((chain.length, chain.k), dtype=bool)
    out[0] = True if chain.initial_is_any else chain.initial_distribution > 0
    positive = chain.transition > 0
    for t in range(chain.length - 1):
        out[t + 1] = positive[t][out[t]].any(axis=0)
    return out


def support_at(chain: MarkovChainScenario, times: np.ndarray) -> np.ndarray:
    """``(len(times), k)``: the support S_t of X_t at each time (see :func:`support_cycle`)."""
    head, start = support_cycle(chain)
    times = np.asarray(times)
    late = times >= len(head)
    return head[np.where(late, start + (times - start) % (len(head) - start), times)]


def chain_support(chain: MarkovChainScenario) -> np.ndarray:
    """``(T, k)``: whether X_t = s is possible (for ``initial="any"``: under some start).

    Examples
    --------
    >>> flip = MarkovChainScenario([[0.0, 1.0], [1.0, 0.0]], [1.0, 0.0], 3)
    >>> chain_support(flip).tolist()
    [[True, False], [False, True], [True, False]]
    """
    head, start = support_cycle(chain)
    length, cycle = chain.length, head[start:]
    if len(head) >= length:
        return head[:length]
    if start == 0 and len(cycle) == 1:     # one support throughout: a view, no copy
        return np.broadcast_to(cycle[0], (length, chain.k))
    reps = -(-(length - start) // len(cycle))
    return np.concatenate([head[:start], np.tile(cycle, (reps, 1))])[:length]


def node_support(scenario: Scenario, node: Any) -> np.ndarray:
    """Which states of ``node`` have positive probability (for "any": from some start).

    Examples
    --------
    >>> mc = MarkovChainScenario([[1.0, 0.0], [0.5, 0.5]], [1.0, 0.0], 2)
    >>> node_support(mc, 1).tolist()
    [True, False]
    """
    if isinstance(scenario, MarkovChainScenario) and scenario.initial_is_any:
        return np.asarray((scenario.product(0, node) > 0).any(axis=0))
    if isinstance(scenario, BayesianNetworkScenario):
        sure = _surely_possible(scenario, node)
        if sure.all():
            return sure
    if isinstance(scenario, MarkovNetworkScenario):
        sure = _surely_possible_factors(scenario, node)
        if sure.all():
            return sure
    return conditional(scenario, [node]) > 0


def _surely_possible_factors(mn: MarkovNetworkScenario, node: Any) -> np.ndarray:
    """The states ``s`` of ``node`` at which every factor over ``node`` is positive: possible.

    Z > 0 (checked when the model is made) gives a joint state x of positive weight; setting
    x_node = s changes only the factors over ``node``, positive at s, so the weight stays
    positive.
    """
    ok = np.ones(len(mn.states_of(node)), dtype=bool)
    tables = mn.tables
    for j in tables.factors_of.get(node, ()):   # the factors over node only (O(n^2) before)
        scope, positive = tables.scopes[j], tables.values[j] > 0
        if not positive.all():    # (all positive: nothing to rule out, no axis moved)
            ok &= np.moveaxis(positive, scope.index(node), 0).reshape(len(ok), -1).all(axis=1)
    return ok


def _surely_possible(bn: BayesianNetworkScenario, node: Any) -> np.ndarray:
    """The states of ``node`` positive in every column of its CPT: possible, no inference.

    P(X = x) = Σ_u P(pa = u) P(x | u) >= min_u P(x | u), since the P(pa = u) sum to 1; so a
    state whose CPT row has no zero has positive probability whatever the parents do.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import default_model_path
    >>> asia = BayesianNetworkScenario.from_file(default_model_path("asia.bif"))
    >>> _surely_possible(asia, "either").tolist()   # a deterministic OR: rows with zeros
    [False, False]
    """
    cpt = bn.tables.cpts[node]
    return np.asarray((cpt > 0).reshape(cpt.shape[0], -1).all(axis=1))


def possible_secrets(framework: Any) -> set:
    """The secrets of the framework's pairs that have positive probability under some θ.

    What :func:`~pufferfish_pgm.secrets.compile_secrets` learns about possibility, without its
    full pass of probabilities: each distinct secret is checked once, stopping at the first θ
    under which it is possible, and a single-node secret is read off the support of its
    node's marginal (one inference per node and θ, shared by all its states; for a chain
    with ``initial="any"``, the states reachable from some start).

    Examples
    --------
    >>> from pufferfish_pgm.secrets import Framework, SecretPair
    >>> mc = MarkovChainScenario([[1.0, 0.0], [0.5, 0.5]], [1.0, 0.0], 2)
    >>> pair = SecretPair(NodeSecret(1, 0), NodeSecret(1, 1))
    >>> sorted(map(str, possible_secrets(Framework(mc, [pair]))))
    ['1=0']
    """
    supports: dict[tuple[int, Any], np.ndarray] = {}
    possible: set = set()
    seen: set = set()
    for pair in framework.pairs:
        for secret in (pair.first, pair.second):
            if secret in seen:
                continue
            seen.add(secret)
            for theta, scenario in enumerate(framework.scenarios):
                if isinstance(secret, NodeSecret):
                    node = scenario.check_node(secret.node)
                    if (theta, node) not in supports:
                        supports[theta, node] = node_support(scenario, node)
                    ok = bool(supports[theta, node][scenario.state_index(node, secret.state)])
                else:
                    ok = secret_probability(scenario, secret.evidence) > 0
                if ok:
                    possible.add(secret)
                    break
    return possible


def check_possible(pairs: Iterable[SecretPair], possible: set) -> None:
    """Raise :class:`ImpossibleSecretError` for a secret of ``pairs`` not in ``possible``.

    ``possible`` holds the secrets with positive probability under at least one θ.

    Examples
    --------
    >>> pair = SecretPair(NodeSecret("A", "x"), NodeSecret("A", "y"))
    >>> check_possible([pair], {NodeSecret("A", "x")})
    Traceback (most recent call last):
    ...
    pufferfish_pgm.errors.ImpossibleSecretError: secret A=y has probability 0 under every ...
    """
    for pair in pairs:
        for s in (pair.first, pair.second):
            if s not in possible:
                raise ImpossibleSecretError(
                    f"secret {s} has probability 0 under every scenario of the class, so "
                    "there is nothing to protect about it: leave it out of the pairs (a default "
                    "framework does so by itself unless no pair would remain)"
                )
