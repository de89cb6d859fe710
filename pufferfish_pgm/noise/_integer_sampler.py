"""Exact sampling of integer noise given by integer weights and geometric tails (internal).

The law (:class:`~pufferfish_pgm.noise.IntegerNoise`) is a finite list of non-negative integer
weights ``c_0, ..., c_m`` whose first and last entries stand for the left and right tails:
``P(Z = lo + k) = c_k / N`` for ``0 < k < m`` (``N = Σ c``), and the tails put mass
``c_0 / N`` and ``c_m / N`` on ``lo - Y`` and ``lo + m + Y`` with ``Y`` geometric,
``P(Y = y) = (1 - r) r^y``, ``r = exp(-1/λ)``.

Sampling uses no floating point:

* the category ``k`` is ``searchsorted(cumsum(c), U)`` with ``U`` uniform on ``0..N-1``
  (``N < 2**62``), so ``P(k) = c_k / N`` exactly;
* ``Y`` is the one-sided half of Canonne, Kamath and Steinke's Algorithm 2 with ``λ`` read as
  the exact rational ``n/d``: ``X = U' + n V`` is geometric with ratio ``e^{-1/n}`` when
  ``U'`` is uniform on ``0..n-1`` kept with probability ``e^{-U'/n}`` and ``V`` is geometric
  with ratio ``e^{-1}``; then ``Y = floor(X/d)`` has ``P(Y = y) ∝ e^{-y d/n}``.

Examples
--------
>>> import numpy as np
>>> from ._discrete_laplace_sampler import source_for
>>> src = source_for(np.random.default_rng(0))
>>> integer_noise((1, 2, 1), -1, 2.0, 6, src).tolist()
[4, 1, 0, -4, -3, 0]
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from ._discrete_laplace_sampler import (
    Source,
    _bernoulli_exp,
    _geometric_exp1,
    floor_ratio,
)

__all__ = ["integer_noise", "one_sided_geometric"]


def one_sided_geometric(src: Source, scale: float, count: int) -> np.ndarray:
    """``count`` exact draws of ``Y >= 0`` with ``P(Y = y) ∝ exp(-y / scale)``.

    ``scale`` is read as the exact rational ``Fraction(scale) = n / d``. Each round runs the
    rejection step on a batch and keeps the first accepted draws; which draws are kept depends
    only on the accept decisions, so the kept draws are independent and exactly distributed.

    Examples
    --------
    >>> import numpy as np
    >>> from ._discrete_laplace_sampler import source_for
    >>> one_sided_geometric(source_for(np.random.default_rng(1)), 3.0, 5).tolist()
    [2, 1, 0, 9, 12]
    """
    n, d = Fraction(scale).as_integer_ratio()
    parts, missing = [], count
    while missing > 0:
        u = src.below(n, int(missing / 0.6) + 16)
        u = u[_bernoulli_exp(src, u, n)]          # u + n v is geometric with ratio e^{-1/n}
        y = floor_ratio(u, _geometric_exp1(src, u.size), n, d)
        parts.append(y[:missing])
        missing -= parts[-1].size
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def integer_noise(weights: Sequence[int], lo: int, tail_scale: float, count: int,
                  src: Source) -> np.ndarray:
    """``count`` exact draws of the law described in the module docstring, as int64.

    ``weights`` are non-negative Python or numpy integers with a positive sum below ``2**62``.
    """
    cum = np.cumsum(np.asarray([int(c) for c in weights], dtype=np.int64))
    k = np.searchsorted(cum, src.below(int(cum[-1]), count), side="right")
    z = (lo + k).astype(np.int64)
    last = len(weights) - 1
    right, left = np.flatnonzero(k == last), np.flatnonzero(k == 0)
    z[right] += one_sided_geometric(src, tail_scale, right.size)
    z[left] -= one_sided_geometric(src, tail_scale, left.size)
    return z
