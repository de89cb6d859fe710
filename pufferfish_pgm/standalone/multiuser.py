"""Multi-user Pufferfish privacy for a released sum (``004_*``, Ding et al.).

Users ``i`` report independent values ``D_i``; user ``i`` is present with probability
``ζ_i`` and an absent user adds nothing to the sum (``004_*`` Remark 1: absence is reporting
0). The curator releases ``Y = sum_i D_i + Laplace(θ)``. The paper's secret pairs for one
user ``i``, always conditioned on everything about the other users:

=================  =========================================  =================================
pair set           secrets                                    sufficient ``θ``
=================  =========================================  =================================
``S_{a,b}``        reports ``a`` / reports ``b``              Theorem 1, eq. (10): ``|a-b|/ε``
``S_{a,⊥}``        reports ``a`` / is absent                  Theorem 2, eq. (12): ``|a|/ε``
``S_{P,⊥}``        present with ``D_i ~ P`` / absent          Theorem 3, eq. (13) or (14)
``S_{P,Q}``        present with ``D_i ~ P`` / with ``~ Q``    Theorem 4, eq. (16); Bernoulli:
                                                              Lemma 5 (18), Lemma 6 (21)
=================  =========================================  =================================

All of these are *sufficient* conditions. :func:`exact_scale` instead computes the smallest
scale that passes the exact audit of the released sum (DESIGN §3.7) for the actual other
users, and :func:`realised_epsilon` audits any scale; ``docs/multiuser.md`` compares them on
the paper's worked examples.

Examples
--------
>>> rest = sum_distribution([(1.0, {1: 0.5, 2: 0.5}), (0.5, {3: 1.0})])
>>> theorem1_scale(5, 3, epsilon=1.0)
2.0
>>> realised_epsilon([5, 3], rest, scale=2.0) <= 1.0 + 1e-12
True
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence

import numpy as np

from .._tolerances import RELATIVE
from .._validation import positive_finite
from ..distributions import DiscreteDistribution, as_distribution, kantorovich_delta_star
from ..distributions._engine import smallest_exp_moment_scale
from ..errors import InvalidParameterError, ParameterTypeError
from ..privacy_loss import exact_laplace_scale, laplace_pair_epsilon

__all__ = [
    "ABSENT",
    "bernoulli_relaxed_scale",
    "bernoulli_scale",
    "exact_scale",
    "realised_epsilon",
    "released_distribution",
    "sum_distribution",
    "theorem1_scale",
    "theorem2_scale",
    "theorem3_scale",
    "theorem4_scale",
]

#: Marks the alternative "the user is absent" in :func:`exact_scale` (``None`` also works).
ABSENT = "absent"


def _real(name: str, value: object) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ParameterTypeError(
            f"{name} must be a real number, got the {type(value).__name__} {value!r}"
        )
    out = float(value)
    if not math.isfinite(out):
        raise InvalidParameterError(f"{name} must be finite, got {out!r}")
    return out


def _probability(name: str, value: object) -> float:
    out = _real(name, value)
    if not 0.0 <= out <= 1.0:
        raise InvalidParameterError(f"{name} must lie in [0, 1], got {out!r}")
    return out


def theorem1_scale(a: float, b: float, epsilon: float) -> float:
    """Theorem 1, eq. (10): ``θ = |a - b| / ε`` for the pair (reports ``a``, reports ``b``).

    Examples
    --------
    >>> theorem1_scale(5, 3, 1.0)   # 004_* Figure 1: user 4 reports 5 or 3
    2.0
    """
    eps = positive_finite("epsilon", epsilon)
    return abs(_real("a", a) - _real("b", b)) / eps


def theorem2_scale(a: float, epsilon: float) -> float:
    """Theorem 2, eq. (12): ``θ = |a| / ε`` for the pair (reports ``a``, absent).

    Examples
    --------
    >>> theorem2_scale(5, 1.0)   # 004_* Figure 2
    5.0
    """
    return abs(_real("a", a)) / positive_finite("epsilon", epsilon)


def theorem3_scale(dist: object, epsilon: float, method: str = "brent") -> float:
    """Theorem 3 for the pair (present with ``D ~ dist``, absent).

    ``method="max"`` is eq. (14): ``θ = max |t| / ε`` over the support of ``dist``.
    ``method="brent"`` solves eq. (13), ``E[e^{|D|/θ}] = e^ε``, for the smallest such ``θ``
    (Brent's method; the left side decreases in ``θ``); it is never larger than (14).
    Returns 0.0 when ``D = 0`` surely.

    Examples
    --------
    >>> p4 = {1: 0.4, 2: 0.1, 3: 0.0, 4: 0.1, 5: 0.4}   # 004_* Table 3
    >>> theorem3_scale(p4, 1.0, method="max")
    5.0
    >>> round(theorem3_scale(p4, 1.0), 6)
    3.46977
    """
    d = as_distribution(dist, "dist")
    eps = positive_finite("epsilon", epsilon)
    size = np.abs(d.support)
    if method == "max":
        return float(np.max(size)) / eps
    if method == "brent":
        return smallest_exp_moment_scale(size, d.probs, np.array([0]), eps)
    raise InvalidParameterError(f"method must be 'brent' or 'max', got {method!r}")


def theorem4_scale(p_dist: object, q_dist: object, epsilon: float) -> float:
    """Theorem 4, eq. (16)-(17): ``θ = sup_t Δ*(t) / ε`` on the user's own CDFs.

    The pair is (present with ``D ~ P``, present with ``D ~ Q``); ``sup Δ*`` is the
    ∞-Wasserstein distance between ``P`` and ``Q``, see
    :func:`~pufferfish_pgm.distributions.kantorovich_delta_star`.

    Examples
    --------
    >>> p4 = {1: 0.4, 2: 0.1, 4: 0.1, 5: 0.4}
    >>> q4 = {2: 0.05, 3: 0.9, 4: 0.05}          # 004_* Table 3
    >>> theorem4_scale(p4, q4, 1.0)
    2.0
    """
    eps = positive_finite("epsilon", epsilon)
    p, q = as_distribution(p_dist, "p_dist"), as_distribution(q_dist, "q_dist")
    return kantorovich_delta_star(p, q) / eps


def bernoulli_scale(epsilon: float) -> float:
    """Lemma 5, eq. (18): ``θ = 1/ε`` for two Bernoulli alternatives of one user.

    Examples
    --------
    >>> bernoulli_scale(0.5)
    2.0
    """
    return 1.0 / positive_finite("epsilon", epsilon)


def _psi_min(lo: float, hi: float, rest: DiscreteDistribution) -> float:
    """``min_x ψ(x)`` of eq. (21) over the columns ``x = s + 1``, ``s`` in the rest's support.

    ``ψ(x) = ((1 - hi) R(x) / R(x-1) + lo) / (hi - lo)`` with ``lo, hi`` the smaller and larger
    of ``p, q``: the paper's two cases are this one expression. Columns with ``R(x-1) = 0``
    carry no transported mass (``ψ = ∞``) and are skipped.
    """
    nxt = rest.support + 1.0
    idx = np.minimum(np.searchsorted(rest.support, nxt), rest.support.size - 1)
    r_next = np.where(rest.support[idx] == nxt, rest.probs[idx], 0.0)
    return float(np.min(((1.0 - hi) * r_next / rest.probs + lo) / (hi - lo)))


def bernoulli_relaxed_scale(p: float, q: float, rest_dist: object, epsilon: float) -> float:
    """Lemma 6, eq. (21): the relaxed scale for ``D ~ Bernoulli(p)`` against ``Bernoulli(q)``.

    ``θ = sup_x 1 / log(e^ε + (e^ε - 1) ψ(x))`` with ``ψ`` from ``R = rest_dist``, the
    distribution of the sum of the other users (it must be integer-valued, as the lemma's
    derivation needs; the paper assumes all users Bernoulli). This is eq. (20) imposed on
    the columns of the optimal plan only, i.e. the direction "the Bernoulli with the smaller
    mean ≤ e^ε × the other"; the paper does not derive the reverse (row) direction. The exact
    audit has not found it leaking (see ``docs/multiuser.md``). Returns 0.0 when ``p == q``.

    Examples
    --------
    >>> rest = sum_distribution([(1.0, {0: 0.5, 1: 0.5})] * 3)
    >>> bernoulli_relaxed_scale(0.2, 0.9, rest, 1.0) < bernoulli_scale(1.0)
    True
    """
    lo, hi = sorted((_probability("p", p), _probability("q", q)))
    eps = positive_finite("epsilon", epsilon)
    rest = as_distribution(rest_dist, "rest_dist")
    if not rest.is_integer():
        raise InvalidParameterError(
            f"Lemma 6 needs an integer-valued rest distribution, got support "
            f"{rest.support.tolist()!r}; use exact_scale for other value sets"
        )
    if lo == hi:
        return 0.0
    # log(e^ε + (e^ε - 1) ψ) = ε + log1p((1 - e^{-ε}) ψ), smallest at the smallest ψ
    return 1.0 / (eps + math.log1p(-math.expm1(-eps) * _psi_min(lo, hi, rest)))


def sum_distribution(users: Iterable[tuple[float, object]]) -> DiscreteDistribution:
    """Distribution of the sum over independent users, each ``(presence ζ, value dist)``.

    A user is present with probability ``ζ`` and then adds a draw from its distribution;
    absent, it adds 0. (The paper's expressions (7)-(9) carry a factor ``prod_j ζ_j``, the
    event that all other users are present, which cancels in every likelihood ratio; this
    function gives the full distribution instead. No user: the point mass at 0.)

    Examples
    --------
    >>> s = sum_distribution([(0.5, {2: 1.0}), (1.0, {1: 0.5, 3: 0.5})])
    >>> s.support.tolist(), s.probs.tolist()
    ([1.0, 3.0, 5.0], [0.25, 0.5, 0.25])
    """
    total = DiscreteDistribution.point(0.0)
    for k, user in enumerate(users):
        if not isinstance(user, Sequence) or len(user) != 2:
            raise InvalidParameterError(
                f"users[{k}] must be a (presence, distribution) pair, got {user!r}"
            )
        zeta = _probability(f"users[{k}] presence", user[0])
        d = as_distribution(user[1], f"users[{k}] distribution")
        mixed = DiscreteDistribution.from_arrays(
            np.append(d.support, 0.0), np.append(zeta * d.probs, 1.0 - zeta)
        )
        total = total.convolve(mixed)
    return total


def _alternative(value: object, k: int) -> DiscreteDistribution | None:
    if value is None or (isinstance(value, str) and value == ABSENT):
        return None
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)):
        return DiscreteDistribution.point(_real(f"secret_dists[{k}]", value))
    return as_distribution(value, f"secret_dists[{k}]")


def released_distribution(secret: object, rest_dist: object = None) -> DiscreteDistribution:
    """Distribution of the exact sum given one secret about the user.

    ``secret`` is a dict value -> probability (present, ``D ~ dict``), a number (present,
    reports it), or ``None`` / ``"absent"``; ``rest_dist`` is the distribution of the other
    users' sum (``None``: there are none).

    Examples
    --------
    >>> released_distribution(2, {0: 0.5, 1: 0.5}).support.tolist()
    [2.0, 3.0]
    """
    rest = DiscreteDistribution.point(0.0) if rest_dist is None else as_distribution(
        rest_dist, "rest_dist"
    )
    alt = _alternative(secret, 0)
    return rest if alt is None else rest.convolve(alt)


def _released_pairs(secret_dists: object, rest_dist: object) -> list[tuple]:
    if not isinstance(secret_dists, Sequence) or isinstance(secret_dists, str):
        raise InvalidParameterError(
            f"secret_dists must be a list of the user's alternatives, got {secret_dists!r}"
        )
    if len(secret_dists) < 2:
        raise InvalidParameterError(
            f"secret_dists needs at least two alternatives to compare, got {secret_dists!r}"
        )
    for k, value in enumerate(secret_dists):
        _alternative(value, k)  # validates with the right index in the message
    laws = [released_distribution(v, rest_dist) for v in secret_dists]
    return [(laws[i], laws[j]) for i in range(len(laws)) for j in range(i + 1, len(laws))]


def realised_epsilon(secret_dists: Sequence[object], rest_dist: object, scale: float) -> float:
    """Exact realised ε of ``sum + Laplace(scale)`` over all pairs of the user's alternatives.

    Alternatives are as in :func:`released_distribution`.

    Examples
    --------
    >>> round(realised_epsilon([5, None], None, scale=5.0), 12)   # a shift by 5
    1.0
    """
    pairs = _released_pairs(secret_dists, rest_dist)
    return max(laplace_pair_epsilon(a, b, scale)[0] for a, b in pairs)


def exact_scale(
    secret_dists: Sequence[object],
    rest_dist: object,
    epsilon: float,
    *,
    discrete: bool = False,
    rtol: float = RELATIVE,
) -> float:
    """Smallest Laplace scale for which the released sum passes the exact audit.

    Every pair of the user's alternatives (``secret_dists``: dicts, numbers, or ``None`` /
    ``"absent"``) is compared on the actual released-sum distributions ``rest ⊛ alternative``,
    via :func:`~pufferfish_pgm.privacy_loss.exact_laplace_scale` (DESIGN §3.7). Unlike the
    paper's theorems it uses the other users' distribution, and may return 0.0 when their
    randomness alone already hides the user to within ε.

    Examples
    --------
    >>> rest = {0: 0.5, 1: 0.5}
    >>> round(exact_scale([5, 3], rest, 1.0), 6)   # a shift: Theorem 1 is exact
    2.0
    >>> exact_scale([{0: 0.8, 1: 0.2}, {0: 0.1, 1: 0.9}], rest, 1.0) < bernoulli_scale(1.0)
    True
    """
    pairs = _released_pairs(secret_dists, rest_dist)
    return exact_laplace_scale(pairs, epsilon, discrete=discrete, rtol=rtol)
