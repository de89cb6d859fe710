"""The distributions stage's engine face: what the other stages of the library may import from it
beyond the public ``__all__`` of :mod:`pufferfish_pgm.distributions` (log-space kernels and the
W∞ internals the count laws and audits build on).

Not a user API: names here may change between releases. ``tests/package/test_layers.py`` fails when
another stage imports one of this stage's private modules directly.
"""

from ._exp_moment import smallest_exp_moment_scale
from ._log_space import log_convolve, log_matmul, logsumexp
from ._transport import CDF_TOLERANCE, delta_star_rows
from ._w_infinity import logit_cdf, w_infinity_logits

__all__ = [
    "CDF_TOLERANCE",
    "delta_star_rows",
    "log_convolve",
    "log_matmul",
    "logit_cdf",
    "logsumexp",
    "smallest_exp_moment_scale",
    "w_infinity_logits",
]
