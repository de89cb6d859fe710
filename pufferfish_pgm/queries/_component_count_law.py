"""Count laws of networks made of independent components, plates computed once (internal).

Split from :mod:`._network_count_law` (which computes one component's law): the law of the
sum over components is the convolution of theirs, repeated components by convolution powers.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from .._budget import check_allocation
from ..distributions._engine import log_convolve
from ..inference._engine import NetworkParts, network_index
from ..scenarios import MarkovNetworkScenario
from ._network_count_law import factor_log_joint, tables_log_joint

__all__ = ["ComponentCountLaw", "log_power"]


def log_power(law: np.ndarray, n: int) -> np.ndarray:
    """The law of the sum of ``n`` independent copies (log masses), by repeated squaring.

    Examples
    --------
    >>> np.exp(log_power(np.log([0.5, 0.5]), 3)).round(12).tolist()
    [0.125, 0.375, 0.375, 0.125]
    """
    out, base = np.zeros(1), law
    while n:
        if n & 1:
            out = log_convolve(out, base)
        n >>= 1
        if n:
            base = log_convolve(base, base)
    return out


class ComponentCountLaw:
    """``log P(F = c, evidence)`` on a network of independent components (DESIGN §3.6):
    a Bayesian network's weakly connected components or a Markov network's factor-graph
    components (:func:`~pufferfish_pgm.inference._engine.network_parts`).

    F is the sum of the components' counts, which are independent, and evidence on a
    component changes only its own law. So the law given evidence is the convolution of the
    touched components' laws given their evidence with the untouched components' laws; equal
    components with equal weights (a plate) are computed once, on their representative, and
    the sum of n of them by convolution powers. Results are cached: a secret on a member of a
    plate costs what a secret on its representative costs.

    Examples
    --------
    >>> from pufferfish_pgm.scenarios._network_tables import validate_tables
    >>> from pufferfish_pgm.inference._components import network_parts
    >>> t = validate_tables(["a", "b"], {"a": (0, 1), "b": (0, 1)}, {"a": (), "b": ()},
    ...                     {"a": [0.5, 0.5], "b": [0.5, 0.5]})
    >>> law = ComponentCountLaw(network_parts(t), {"a": np.array([0, 1]), "b": np.array([0, 1])})
    >>> np.exp(law.log_joint({"a": 1})).round(12).tolist()
    [0.0, 0.25, 0.25]
    """

    def __init__(self, parts: NetworkParts, weights: dict,
                 budget: int | float | str | None = None) -> None:
        self.parts, self.budget = parts, budget
        self._group: dict[tuple[int, int], int] = {}      # (plate, member) -> group
        self._groups: list[tuple[int, dict]] = []    # (plate, representative's weights)
        self._sizes: Counter = Counter()               # group -> how many components
        keys: dict[tuple, int] = {}
        for k, plate in enumerate(parts.plates):
            rep = plate.scenario.nodes
            for m, nodes in enumerate(plate.members):
                w = {rep[p]: np.asarray(weights[v]) for p, v in enumerate(nodes) if v in weights}
                key = (k, tuple((v, x.tobytes()) for v, x in w.items()))
                if key not in keys:
                    keys[key] = len(self._groups)
                    self._groups.append((k, w))
                self._group[k, m] = keys[key]
                self._sizes[keys[key]] += 1
        self.width = 1 + sum(int(w.max()) for w in weights.values())
        self._laws: dict[tuple, np.ndarray] = {}
        self._rest: dict[tuple, np.ndarray] = {}
        self._log_z: dict[int, dict] = {}             # plate -> its log partition functions

    def _law(self, g: int, codes: dict) -> np.ndarray:
        """The component law of group ``g`` given representative ``codes`` (cached)."""
        key = (g, tuple(sorted(codes.items(), key=repr)))
        out = self._laws.get(key)
        if out is None:
            k, w = self._groups[g]
            rep = self.parts.plates[k].scenario
            if isinstance(rep, MarkovNetworkScenario):   # normalised by its own Z
                out = factor_log_joint(rep.tables, network_index(rep), w, codes, self.budget,
                                       self._log_z.setdefault(k, {}))
            else:
                out = tables_log_joint(rep.tables, network_index(rep), w, codes, self.budget)
            self._laws[key] = out
        return out

    def _untouched(self, touched: Counter) -> np.ndarray:
        """The law of the sum over every component not in ``touched`` (group -> count)."""
        key = tuple(sorted(touched.items()))
        out = self._rest.get(key)
        if out is None:
            check_allocation(8 * self.width * (len(self._rest) + 4), budget=self.budget,
                             what=f"the count laws of the untouched components "
                                  f"({self.width:,} values each)")
            out = np.zeros(1)
            for g in range(len(self._groups)):
                out = log_convolve(out, log_power(self._law(g, {}), self._sizes[g] - touched[g]))
            self._rest[key] = out
        return out

    def _local(self, codes: dict) -> list[tuple[int, dict]]:
        """The touched components as (group, codes at the representative's nodes)."""
        local: dict[tuple[int, int], dict] = {}
        for v, c in codes.items():
            k, m, p = self.parts.where[v]
            local.setdefault((k, m), {})[self.parts.plates[k].scenario.nodes[p]] = c
        return [(self._group[km], local[km]) for km in sorted(local)]

    def secret_key(self, codes: dict) -> tuple:
        """Equal for evidence with equal laws (see :meth:`LogJointEngine.secret_key`)."""
        return tuple(sorted((g, tuple(sorted(c.items(), key=repr)))
                            for g, c in self._local(codes)))

    def log_joint(self, codes: dict) -> np.ndarray:
        """Unnormalised log masses on 0..C-1 given ``codes`` (node -> state index)."""
        local = self._local(codes)
        out = self._untouched(Counter(g for g, _ in local))
        for g, rep_codes in local:
            out = log_convolve(out, self._law(g, rep_codes))
        full = np.full(self.width, -np.inf)
        full[:out.size] = out[:self.width]
        return full
