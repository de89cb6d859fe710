"""Exact inference on the scenarios (DESIGN §3.1, §3.6): variable elimination in numpy with
per-model elimination orders and compiled plans (a weak-keyed :class:`NetworkIndex` per
network, owned by this stage); chains by matrix powers. :class:`ExactInference` asks and
answers in pgmpy's terms (``query`` returning pgmpy ``DiscreteFactor`` objects), and
:func:`pgmpy_exact_inference` is it as a pgmpy ``Inference`` class (``model.predict(algo=...)``).
"""

from ._network_engine import NetworkIndex, network_index
from ._pgmpy_algo import pgmpy_exact_inference
from ._pgmpy_style import ExactInference
from ._variable_elimination import conditional, elimination_order, secret_probability

__all__ = [
    "ExactInference",
    "NetworkIndex",
    "conditional",
    "elimination_order",
    "network_index",
    "pgmpy_exact_inference",
    "secret_probability",
]
