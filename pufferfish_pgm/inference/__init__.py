"""Exact inference on the scenarios (DESIGN §3.1, §3.6): variable elimination in numpy with
per-model elimination orders and compiled plans (a weak-keyed :class:`NetworkIndex` per
network, owned by this stage); chains by matrix powers. :class:`ExactInference` asks and
answers in pgmpy's terms (``query`` returning pgmpy ``DiscreteFactor`` objects), and
:func:`pgmpy_exact_inference` is it as a pgmpy ``Inference`` class (``model.predict(algo=...)``).
"""

from typing import Any

from .._compat import moved_name
from ._pgmpy_algo import pgmpy_exact_inference
from ._pgmpy_style import ExactInference
from ._variable_elimination import conditional, elimination_order, secret_probability

__all__ = [
    "ExactInference",
    "conditional",
    "elimination_order",
    "pgmpy_exact_inference",
    "secret_probability",
]


def __getattr__(name: str) -> Any:
    """0.1.0 exported some engine names here; they moved to the stage's engine face."""
    return moved_name(__name__, name)
