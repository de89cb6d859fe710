"""Our exact engine as a pgmpy inference algorithm: ``model.predict(df, algo=PgmpyExactInference)``.

pgmpy's ``DiscreteBayesianNetwork.predict`` and ``predict_probability``-style code accept only
subclasses of ``pgmpy.inference.Inference``, constructed as ``algo(model)`` and asked
``map_query``/``query``. :data:`PgmpyExactInference` is that subclass, built on first use (pgmpy
is imported by the adapter, lazily) and answered by :class:`ExactInference`: same conditionals
(to rounding), our memory budget, and :class:`~pufferfish_pgm.errors.PufferfishError` refusals
for unknown nodes and states or impossible evidence.

Examples
--------
>>> import pandas as pd
>>> from pufferfish_pgm.scenarios import BayesianNetworkScenario, default_model_path
>>> asia = BayesianNetworkScenario.from_file(default_model_path("asia.bif")).to_pgmpy()
>>> algo = pgmpy_exact_inference()
>>> algo(asia).map_query(["lung"], evidence={"smoke": "yes", "xray": "yes"})
{'lung': 'yes'}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

import numpy as np

from ..errors import InvalidParameterError
from ..scenarios._engine import DEFAULT_RENORMALIZE, pgmpy_inference_subclass
from ._pgmpy_style import ExactInference
from ._variable_elimination import Budget

__all__ = ["pgmpy_exact_inference"]


def _init(self: Any, model: Any, *, renormalize: float = DEFAULT_RENORMALIZE,
          memory_budget: Budget = None) -> None:
    """Validate ``model`` once (as :class:`ExactInference` does) and keep pgmpy's ``model``."""
    self.model = model
    self.engine = ExactInference(model, renormalize=renormalize, memory_budget=memory_budget)


def _query(self: Any, variables: Sequence, evidence: Mapping | None = None,
           virtual_evidence: Any = None, elimination_order: Any = None, joint: bool = True,
           show_progress: bool = False) -> Any:
    """P(variables | evidence) as pgmpy ``DiscreteFactor`` objects (pgmpy's ``query``)."""
    _refuse_virtual_evidence(virtual_evidence)
    return self.engine.query(variables, evidence, joint=joint, show_progress=show_progress,
                             elimination_order=elimination_order)


def _map_query(self: Any, variables: Sequence | None = None, evidence: Mapping | None = None,
               virtual_evidence: Any = None, elimination_order: Any = None,
               show_progress: bool = False) -> dict:
    """The most probable joint state of ``variables`` given ``evidence`` (pgmpy's
    ``map_query``): the argmax of the exact joint conditional, as ``{variable: state}``."""
    _refuse_virtual_evidence(virtual_evidence)
    if variables is None:
        variables = [v for v in self.engine.scenario.nodes if v not in (evidence or {})]
    factor = _query(self, list(variables), evidence, elimination_order=elimination_order)
    best = np.unravel_index(int(np.argmax(factor.values)), factor.values.shape)
    return {v: factor.state_names[v][int(i)] for v, i in zip(factor.variables, best, strict=True)}


def _refuse_virtual_evidence(virtual_evidence: Any) -> None:
    if virtual_evidence:
        raise InvalidParameterError(
            "virtual evidence is not supported by the exact engine; condition on observed "
            "states (evidence=) or use pgmpy's VariableElimination for soft evidence"
        )


@cache
def pgmpy_exact_inference() -> type:
    """The pgmpy ``Inference`` subclass answered by our exact engine (one class per process).

    Construct it as pgmpy does, ``algo(model, renormalize=1e-6, memory_budget=None)``; it
    answers ``query`` and ``map_query`` with pgmpy's signatures (``virtual_evidence`` is
    refused; ``elimination_order`` and ``show_progress`` are accepted and ignored: the engine
    chooses its own order and one query has nothing to report).

    Examples
    --------
    >>> from pgmpy.inference import Inference
    >>> issubclass(pgmpy_exact_inference(), Inference)
    True
    """
    return pgmpy_inference_subclass("PgmpyExactInference", {
        "__doc__": __doc__, "__module__": __name__, "__init__": _init,
        "query": _query, "map_query": _map_query,
    })
