"""Exact inference on the scenarios (DESIGN §3.1, §3.6): variable elimination in numpy with
per-model elimination orders and compiled plans (a weak-keyed :class:`NetworkIndex` per
network, owned by this stage); chains by matrix powers.
"""

from ._variable_elimination import (
    NetworkIndex,
    conditional,
    elimination_order,
    network_index,
    secret_probability,
)

__all__ = [
    "NetworkIndex",
    "conditional",
    "elimination_order",
    "network_index",
    "secret_probability",
]
