"""A pgmpy-style front end to the exact engine: ``ExactInference(model).query(...)``.

The interface of pgmpy's ``VariableElimination.query`` (variables, evidence, ``joint``),
answered by :func:`~pufferfish_pgm.inference.conditional` and returned as pgmpy
``DiscreteFactor`` objects (built by the pgmpy adapter, ``scenarios._pgmpy``), so that pgmpy
users can swap engines and cross-check one against the other.

Examples
--------
>>> from pufferfish_pgm.scenarios import BayesianNetworkScenario, default_model_path
>>> asia = BayesianNetworkScenario.from_file(default_model_path("asia.bif"))
>>> factor = ExactInference(asia).query(["lung"], evidence={"smoke": "yes"})
>>> factor.variables, factor.state_names["lung"], factor.values.tolist()
(['lung'], ['yes', 'no'], [0.1, 0.9])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .._progress import Ticker, as_progress
from ..errors import InvalidParameterError, ParameterTypeError
from ..scenarios import BayesianNetworkScenario, MarkovChainScenario
from ..scenarios._engine import DEFAULT_RENORMALIZE, to_discrete_factor
from ._variable_elimination import Budget, conditional

__all__ = ["ExactInference"]


class ExactInference:
    """Exact conditionals of a network or chain, asked and answered the way pgmpy does.

    Parameters
    ----------
    model : BayesianNetworkScenario, MarkovChainScenario or pgmpy DiscreteBayesianNetwork
        A pgmpy network is copied and validated as :class:`BayesianNetworkScenario` does
        (with ``renormalize``); later changes to it are not seen.
    renormalize : float, default 1e-6
        For a pgmpy network only: see :class:`BayesianNetworkScenario`.
    memory_budget : int, str or None
        Passed to :func:`~pufferfish_pgm.inference.conditional`.

    Attributes
    ----------
    scenario : BayesianNetworkScenario or MarkovChainScenario
        The scenario queried (a pgmpy network is converted once, here).

    Examples
    --------
    >>> from pgmpy.models import DiscreteBayesianNetwork
    >>> from pgmpy.factors.discrete import TabularCPD
    >>> m = DiscreteBayesianNetwork([("A", "B")])
    >>> m.add_cpds(TabularCPD("A", 2, [[0.4], [0.6]]),
    ...            TabularCPD("B", 2, [[0.9, 0.2], [0.1, 0.8]], evidence=["A"], evidence_card=[2]))
    >>> ExactInference(m).query(["A"], evidence={"B": 0}).values.round(4).tolist()
    [0.75, 0.25]

    P(A=0 | B=0) = 0.4·0.9 / (0.4·0.9 + 0.6·0.2) = 0.36 / 0.48 = 0.75.
    """

    def __init__(self, model: Any, *, renormalize: float = DEFAULT_RENORMALIZE,
                 memory_budget: Budget = None) -> None:
        if isinstance(model, (BayesianNetworkScenario, MarkovChainScenario)):
            self.scenario: BayesianNetworkScenario | MarkovChainScenario = model
        else:
            self.scenario = BayesianNetworkScenario(model, renormalize=renormalize)
        self.memory_budget = memory_budget

    def query(self, variables: Sequence, evidence: Mapping | None = None, *,
              joint: bool = True, show_progress: bool = False,
              elimination_order: Any = None) -> Any:
        """P(variables | evidence) as pgmpy ``DiscreteFactor`` objects, as pgmpy returns them.

        ``joint=True``: one factor over ``variables`` in the order given, with the model's
        state names. ``joint=False``: a dict ``variable -> factor`` of the marginals. Evidence
        on a variable that is also queried is refused, as pgmpy refuses it; evidence of
        probability 0 raises :class:`~pufferfish_pgm.errors.ImpossibleSecretError` (pgmpy
        returns NaN or drops part of the model). ``elimination_order`` is accepted for pgmpy
        compatibility and ignored (the engine picks its own order). ``show_progress=True``
        shows a bar (tqdm, else lines on stderr; :mod:`pufferfish_pgm._progress`) with one
        step per conditional computed: each variable's with ``joint=False``, the one joint
        otherwise (the elimination runs as one compiled plan, not step by step); a callable
        ``(done, total)`` is called instead. The default is False (pgmpy's is True).

        Examples
        --------
        >>> from pufferfish_pgm.scenarios import BayesianNetworkScenario, default_model_path
        >>> asia = BayesianNetworkScenario.from_file(default_model_path("asia.bif"))
        >>> out = ExactInference(asia).query(["lung", "smoke"], joint=False)
        >>> sorted(out), out["smoke"].values.tolist()
        (['lung', 'smoke'], [0.5, 0.5])
        """
        del elimination_order  # pgmpy's knob; the engine chooses its own order
        steps = Ticker(as_progress(show_progress, "query"))
        targets = _variables(self.scenario, variables, evidence)
        if joint:
            factor = self._factor(targets, evidence)
            steps.finish()
            return factor
        steps.plan(len(targets) - 1)
        out: dict = {}
        for v in targets:
            if out:
                steps.tick()
            out[v] = self._factor([v], evidence)
        steps.finish()
        return out

    def _factor(self, targets: list, evidence: Mapping | None) -> Any:
        """P(targets | evidence) as one pgmpy ``DiscreteFactor`` (targets checked)."""
        scenario = self.scenario
        values = conditional(scenario, targets, evidence, memory_budget=self.memory_budget)
        return to_discrete_factor(targets, [scenario.states_of(v) for v in targets], values)


def _variables(scenario: Any, variables: Any, evidence: Mapping | None) -> list:
    """The queried variables as a list of known nodes, none of them in the evidence."""
    if isinstance(variables, (str, int, np.integer)):
        variables = [variables]
    if not isinstance(variables, Sequence):
        raise ParameterTypeError(
            f"variables must be a list of nodes, got the {type(variables).__name__} "
            f"{variables!r}"
        )
    targets = [scenario.check_node(v) for v in variables]
    if not targets:
        raise InvalidParameterError("variables is empty; name at least one node to query")
    if len(set(targets)) != len(targets):
        raise InvalidParameterError(f"variables repeat a node: {targets}; list each node once")
    common = [v for v in targets if v in (evidence or {})]
    if common:
        raise InvalidParameterError(
            f"the nodes {common} are both queried and in the evidence (pgmpy refuses this "
            "too); their conditional law is a point mass: drop them from one of the two"
        )
    return targets
