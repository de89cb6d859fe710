"""Exact inference on the scenarios (DESIGN §3.1, §3.6): variable elimination in numpy with
per-model elimination orders and compiled plans; chains by matrix powers.
"""

from ._variable_elimination import conditional, elimination_order, secret_probability

__all__ = [
    "conditional",
    "elimination_order",
    "secret_probability",
]
