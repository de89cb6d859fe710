"""How far apart the privacy losses of two nodes of a chain are: what is proven (internal).

Two bounds hold on any fixed-start chain with integer weights (proofs in
``docs/middle-nodes.md``); neither lets the exact calibrator skip a node's law, and the
calibrator does not use them (the interior of the audit is not covered, see the docs):

* **Transfer** (:func:`transfer_gap`): for nodes ``i``, ``j`` and a pair of states ``(a, b)``,
  ``|ε_i(λ) - ε_j(λ)| <= g_λ(a) + g_λ(b)``, where ``g_λ(s)`` is the realised ε of the release
  between the laws of ``F`` given ``X_i = s`` and given ``X_j = s`` (the same state at two
  nodes). Exact, every λ; it needs both nodes' laws.
* **Limit losses** (:func:`limit_loss_drift`): the loss beyond the extreme outputs (the
  generating-function limit of :mod:`pufferfish_pgm.privacy_loss._mgf_bracket`) of two
  nodes with at least ``left`` nodes before and ``right`` after differs by at most a
  Birkhoff-contracted Hilbert diameter, ``τ^{⌊n/m⌋-1} Δ`` per side, with ``Δ`` and ``τ`` of
  the ``m``-step block of the tilted transition ``P diag(e^{γw})``. A block with a zero
  entry has ``Δ = ∞``, ``τ = 1``: the bound is ``inf`` (it refuses itself).

Examples
--------
>>> p = np.array([[0.9, 0.1], [0.2, 0.8]])
>>> round(birkhoff_coefficient(p), 6)    # tanh(log 36 / 4) = (6 - 1)/(6 + 1)
0.714286
>>> birkhoff_coefficient(np.array([[1.0, 0.0], [0.5, 0.5]]))   # a zero transition
1.0
"""

from __future__ import annotations

import numpy as np

from ._laplace_kernel import pair_epsilon

__all__ = ["birkhoff_coefficient", "hilbert_diameter", "hilbert_distance",
           "limit_loss_drift", "tilted_block", "transfer_gap"]


def hilbert_distance(log_x: np.ndarray, log_y: np.ndarray) -> float:
    """Hilbert's projective distance ``max log(x/y) - min log(x/y)`` of two nonnegative
    vectors given as logarithms; entries zero in both are ignored, an entry zero in one only
    gives ``inf``. It bounds ``|log x_a/x_b - log y_a/y_b|`` for every ``a, b``.

    Examples
    --------
    >>> hilbert_distance(np.log([1.0, 2.0]), np.log([2.0, 2.0]))   # log 2 - log 1
    0.6931471805599453
    """
    x, y = np.asarray(log_x, dtype=float), np.asarray(log_y, dtype=float)
    both = np.isfinite(x) & np.isfinite(y)
    if (np.isfinite(x) != np.isfinite(y)).any():
        return float("inf")
    if not both.any():
        return 0.0
    d = x[both] - y[both]
    return float(d.max() - d.min())


def hilbert_diameter(matrix: np.ndarray) -> float:
    """Birkhoff's ``Δ(M) = max log(M_ij M_kl / (M_il M_kj))``, the largest projective
    distance between two rows (equally two columns); ``inf`` when an entry is zero.
    Unchanged by positive diagonal scaling of rows and columns (each factor cancels).

    Examples
    --------
    >>> round(hilbert_diameter(np.array([[0.9, 0.1], [0.2, 0.8]])), 6)   # log 36
    3.583519
    """
    m = np.asarray(matrix, dtype=float)
    if (m <= 0).any():
        return float("inf")
    log_m = np.log(m)
    diff = log_m[:, None, :] - log_m[None, :, :]          # (row i, row k, column)
    return float((diff.max(axis=2) - diff.min(axis=2)).max())


def birkhoff_coefficient(matrix: np.ndarray) -> float:
    """``τ(M) = tanh(Δ(M)/4)``: ``d_H(xM, yM) <= τ d_H(x, y)`` for positive x, y (and the
    same for columns); 1 when an entry is zero (no contraction proven)."""
    delta = hilbert_diameter(matrix)
    return 1.0 if not np.isfinite(delta) else float(np.tanh(delta / 4.0))


def tilted_block(transition: np.ndarray, weights: np.ndarray, gamma: float,
                 block: int) -> np.ndarray:
    """``(P diag(e^{γ w}))^block``, rescaled by its largest entry at every step (Δ and τ
    do not see the scale); entries that underflow are zero, so the block then refuses.

    Examples
    --------
    >>> tilted_block(np.eye(2), np.array([0, 1]), 0.0, 3).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    a = np.asarray(transition, dtype=float) * np.exp(gamma * np.asarray(weights, float))
    out = np.eye(len(a))
    for _ in range(block):
        out = out @ a
        out /= out.max()
    return out


def _contracted(tau: float, delta: float, distance: int, block: int) -> float:
    """``τ^{⌊n/m⌋ - 1} Δ`` (inf below one block or when Δ is infinite)."""
    if distance < block or not np.isfinite(delta):
        return float("inf")
    return float(tau ** (distance // block - 1) * delta)


def limit_loss_drift(transition: np.ndarray, weights: np.ndarray, scale: float, block: int,
                     left: int, right: int, stationary: bool) -> float:
    """Upper bound on ``|ℓ_i - ℓ_j|`` for the limit losses ``ℓ(γ) = log M_a(γ) - log M_b(γ)``
    (``γ = ±1/scale``, either pair order) of any two nodes each with at least ``left`` nodes
    before and ``right`` after, on a homogeneous chain with per-state ``weights``; the start
    term is 0 for a stationary start. ``inf``: not proven (a block with a zero entry, or a
    side shorter than a block)."""
    p = np.asarray(transition, dtype=float)
    start = 0.0
    if not stationary:
        plain = tilted_block(p, np.zeros(len(p)), 0.0, block)
        start = _contracted(birkhoff_coefficient(plain), hilbert_diameter(plain), left, block)
    worst = 0.0
    for gamma in (1.0 / scale, -1.0 / scale):
        b = tilted_block(p, weights, gamma, block)
        tau, delta = birkhoff_coefficient(b), hilbert_diameter(b)
        worst = max(worst, _contracted(tau, delta, left, block)
                    + _contracted(tau, delta, right, block))
    return worst + start


def transfer_gap(law_i: np.ndarray, law_j: np.ndarray, scale: float) -> float:
    """Realised ε at ``scale`` between two normalised log-mass vectors of ``F`` on the grid
    ``0, 1, ...`` (given the same state at two nodes): ``g_λ(s)`` of the transfer bound.

    Examples
    --------
    >>> round(transfer_gap(np.log([0.5, 0.5]), np.log([0.5, 0.5]), 1.0), 12)
    0.0
    """
    n = max(len(law_i), len(law_j))
    pad = [np.concatenate([x, np.full(n - len(x), -np.inf)]) for x in (law_i, law_j)]
    return pair_epsilon(np.arange(n, dtype=float), pad[0], pad[1], scale)[0]
