"""The scenarios stage's engine face: what the other stages of the library may import from it
beyond the public ``__all__`` of :mod:`pufferfish_pgm.scenarios` (the library's own network
tables, chain validation and the pgmpy adapter's conversion helpers).

Not a user API: names here may change between releases. ``tests/package/test_layers.py`` fails when
another stage imports one of this stage's private modules directly.
"""

from ._chain_validation import check_initial, check_stochastic, stationary_distribution
from ._markov_network import FactorTables, validate_factors
from ._network_tables import DEFAULT_RENORMALIZE, NetworkTables, validate_tables
from ._pgmpy import pgmpy_inference_subclass, to_discrete_factor
from ._posterior import PosteriorRecord, counts_fingerprint, posterior_draws, posterior_of

__all__ = [
    "DEFAULT_RENORMALIZE",
    "FactorTables",
    "NetworkTables",
    "check_initial",
    "check_stochastic",
    "pgmpy_inference_subclass",
    "stationary_distribution",
    "to_discrete_factor",
    "validate_tables",
    "validate_factors",
    "PosteriorRecord",
    "counts_fingerprint",
    "posterior_draws",
    "posterior_of",
]
