"""Exact audit of integer answers plus arbitrary integer noise with geometric tails.

The Laplace auditor (DESIGN §3.7) relies on the Laplace shape; this one takes any noise law
``f`` on ℤ of the form of :class:`~pufferfish_pgm.noise.IntegerNoise`: a core on
``lo < z < hi`` and tails ``f(hi + j) = f(hi) r^j``, ``f(lo - j) = f(lo) r^j``,
``r = e^{-1/λ}``. For an integer query with laws ``μ_a, μ_b`` on ``[x_0, x_0 + D]`` the
output ``w = x + z`` has ``p(w) = Σ_x μ(x) f(w - x)``, and

* for ``w >= x_0 + D + hi`` every term uses the right tail, so
  ``p(w) = f(hi) r^{w - hi} Σ_x μ(x) r^{-x}`` and ``p_a/p_b`` is constant; the same holds
  for ``w <= x_0 + lo`` with the left tail. So the supremum over all integers ``w`` is a
  maximum over the ``D + hi - lo + 1`` outputs in between, all of which are evaluated.
* there ``p(w)`` is the core part (a convolution, evaluated as a matrix product in linear space
  on bands of at most 350 nats of each factor, so that every product of two band entries is
  above ``e^{-700}`` and sums of positive terms keep their relative precision) plus the tail
  parts ``f(hi) S_R(w - hi)`` and ``f(lo) S_L(w - lo)`` with
  ``S_R(k) = Σ_{x <= k} μ(x) r^{k - x}``: the one-sided recursions of the Laplace kernel, run
  as the log-space scan of :mod:`~pufferfish_pgm.privacy_loss._laplace_kernel`, where every
  decay is a sum of positive steps.

Nothing is subtracted, so every log density is exact to a few ulps per term, like the Laplace
kernel's (``docs/auditor-precision.md``).

Examples
--------
>>> from pufferfish_pgm.noise import IntegerNoise
>>> g = Group.from_distributions([({0: 1.0}, {1: 1.0})])   # a shift by one
>>> noise = IntegerNoise(lo=-1, weights=(1, 2, 1), tail_scale=1.0)
>>> eps, where = PmfGroup.build(g, noise.tail_scale).epsilons(TailedLaw.of(noise))
>>> round(float(eps[0]), 6), int(where[0])      # log(0.5 / 0.158), first at output 0
(1.151822, 0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidParameterError, ParameterTypeError
from ..noise import IntegerNoise
from ._audit import AuditReport, PairAudit, coverage_note, release_layout
from ._laplace_kernel import decay_scan
from ._pair_rows import MAX_GRID, Group, build_groups

__all__ = ["PmfGroup", "TailedLaw", "audit_integer_noise", "banded_log_matmul", "noise_report"]

#: Largest log range of one band of a factor (two bands multiply to >= e^-700).
BAND = 350.0
#: Rows of a group processed together (bounds the temporaries of the matrix products).
ROW_CHUNK = 256


@dataclass(frozen=True, kw_only=True)
class TailedLaw:
    """A noise law in log space: ``log f`` on ``lo .. hi`` (tails start at the edges) and the
    tails' scale λ. Built from an :class:`IntegerNoise` or from the masses of a solver."""

    lo: int
    log_f: np.ndarray
    tail_scale: float

    @property
    def hi(self) -> int:
        return self.lo + self.log_f.size - 1

    @classmethod
    def of(cls, noise: IntegerNoise) -> TailedLaw:
        """The law of ``noise``, exactly as it samples (log masses on ``lo .. hi``)."""
        z = np.arange(noise.lo, noise.hi + 1)
        return cls(lo=noise.lo, log_f=noise.log_pmf(z), tail_scale=noise.tail_scale)

    @classmethod
    def from_masses(cls, lo: int, masses: np.ndarray, tail_scale: float) -> TailedLaw:
        """From ``(left tail mass, core masses, right tail mass)`` as in IntegerNoise."""
        m = np.clip(np.asarray(masses, dtype=float), 0.0, None)
        m = m / m.sum()
        log1mr = math.log(-math.expm1(-1.0 / tail_scale))
        with np.errstate(divide="ignore"):
            log_f = np.log(m)
        log_f[[0, -1]] += log1mr
        return cls(lo=lo, log_f=log_f, tail_scale=tail_scale)


def _bands(logs: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-slice maxima along ``axis`` and the band ``floor((max - x)/BAND)`` of every entry
    (-1 for zero masses)."""
    peak = np.max(logs, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0.0)
    with np.errstate(invalid="ignore"):
        band = np.where(np.isfinite(logs), np.floor((peak - logs) / BAND), -1.0)
    return peak, band.astype(np.int64)


def banded_log_matmul(la: np.ndarray, lb: np.ndarray) -> np.ndarray:
    """``log(exp(la) @ exp(lb))`` to relative precision (``-inf`` for zero entries).

    ``la`` is cut into bands per row, ``lb`` per column (see the module docstring).

    Examples
    --------
    >>> la = np.log([[1.0, 1e-200]]) * np.array([[1.0, 5.0]])  # masses 1 and 1e-1000
    >>> lb = np.log([[1e-300], [1.0]]) * np.array([[3.0], [1.0]])  # 1e-900 and 1
    >>> float(banded_log_matmul(la, lb)[0, 0] / np.log(10)).__round__(6)  # 1e-900 + 1e-1000
    -900.0
    """
    pa, ba = _bands(la, 1)
    pb, bb = _bands(lb, 0)
    out = np.full((la.shape[0], lb.shape[1]), -np.inf)
    lin_bs = [(c, np.where(bb == c, np.exp(np.where(bb == c, lb - pb + BAND * c, -np.inf)),
                           0.0)) for c in range(int(bb.max(initial=-1)) + 1) if np.any(bb == c)]
    for b in range(int(ba.max(initial=-1)) + 1):
        rows = np.flatnonzero(np.any(ba == b, axis=1))    # only the rows with this band
        if rows.size == 0:
            continue
        here, shift = ba[rows] == b, pa[rows] - BAND * b
        lin_a = np.where(here, np.exp(np.where(here, la[rows] - shift, -np.inf)), 0.0)
        for c, lin_b in lin_bs:
            with np.errstate(divide="ignore"):
                part = np.log(lin_a @ lin_b) + shift + (pb - BAND * c)
            out[rows] = np.logaddexp(out[rows], part)
    return out


def dense_rows(group: Group) -> tuple[int, np.ndarray]:
    """The group's rows on every integer from the smallest to the largest answer."""
    if len(group.grids) != 1:
        raise InvalidParameterError("integer noise is audited for one released coordinate; "
                                    "histograms and windowed queries are not supported")
    grid = group.grids[0]
    if not np.all(grid == np.round(grid)):
        bad = grid[grid != np.round(grid)][0]
        raise InvalidParameterError(f"integer noise needs integer answers, got values such as "
                                    f"{bad!r}; use a Count or an integer LinearQuery")
    x0 = int(grid[0])
    dense = np.full((group.rows.shape[0], int(grid[-1]) - x0 + 1), -np.inf)
    dense[:, grid.astype(np.int64) - x0] = group.rows
    return x0, dense


@dataclass(frozen=True, eq=False)
class PmfGroup:
    """A :class:`Group` on a dense integer axis with its one-sided tail sums (see the
    module docstring): ``right[:, k] = log S_R(x_0 + k)``, ``left[:, k] = log S_L(x_0 + k)``."""

    group: Group
    x0: int
    dense: np.ndarray
    right: np.ndarray
    left: np.ndarray
    tail_scale: float

    @classmethod
    def build(cls, group: Group, tail_scale: float) -> PmfGroup:
        x0, dense = dense_rows(group)
        with np.errstate(over="ignore"):
            gaps = np.full(dense.shape[1], 1.0 / tail_scale)
        gaps[0] = 0.0
        right = decay_scan(dense, gaps)
        left = np.flip(decay_scan(np.flip(dense, axis=1), gaps), axis=1)
        return cls(group, x0, dense, right, left, float(tail_scale))

    @property
    def width(self) -> int:
        """D + 1: the number of integers from the smallest to the largest answer."""
        return self.dense.shape[1]

    def outputs(self, law: TailedLaw) -> np.ndarray:
        """The outputs ``x_0 + lo .. x_0 + D + hi`` where :meth:`log_outputs` evaluates."""
        return np.arange(self.x0 + law.lo, self.x0 + self.width + law.hi)

    def _tails(self, law: TailedLaw, rows: np.ndarray) -> np.ndarray:
        """``f(hi) S_R(w - hi) + f(lo) S_L(w - lo)`` at every output, in log space."""
        m, width = law.hi - law.lo, self.width
        j = np.arange(width + m)
        k = j - m                                   # right tail: S_R at w - hi
        inside = np.clip(k, 0, width - 1)
        right = self.right[np.ix_(rows, inside)] - np.clip(k - (width - 1), 0, None) / \
            self.tail_scale
        right = np.where(k >= 0, right + law.log_f[-1], -np.inf)
        left = np.where(j < width, self.left[np.ix_(rows, np.clip(j, 0, width - 1))]
                        + law.log_f[0], -np.inf)
        return np.logaddexp(right, left)

    def log_outputs(self, law: TailedLaw, rows: Any = None) -> np.ndarray:
        """``log p(w)`` for the given rows (all by default) at every output of :meth:`outputs`.
        ``law.tail_scale`` must be the scale the group was built with."""
        if law.tail_scale != self.tail_scale:
            raise InvalidParameterError("the law's tail scale differs from the group's")
        pick = np.arange(self.dense.shape[0]) if rows is None else np.asarray(rows)
        out = np.empty((pick.size, self.width + law.hi - law.lo))
        for lo in range(0, pick.size, ROW_CHUNK):
            part = pick[lo:lo + ROW_CHUNK]
            out[lo:lo + ROW_CHUNK] = np.logaddexp(self._core(law, self.dense[part]),
                                                  self._tails(law, part))
        return out

    def _core(self, law: TailedLaw, dense: np.ndarray) -> np.ndarray:
        """``log Σ_{lo<z<hi} f(z) μ(w - z)`` at every output: the Toeplitz product, by blocks
        of outputs so that only the band of answers that reach them is multiplied."""
        m, width = law.hi - law.lo, self.width
        inner = law.log_f[1:-1]                      # z = lo + d for d = j - i in 1 .. m-1
        out = np.full((dense.shape[0], width + m), -np.inf)
        block = max(m, 64)
        for j0 in range(0, width + m, block):
            j1 = min(j0 + block, width + m)
            i0, i1 = max(j0 - m + 1, 0), min(j1 - 1, width)
            if i0 >= i1:
                continue
            d = np.arange(j0, j1)[None, :] - np.arange(i0, i1)[:, None]
            toeplitz = np.where((d >= 1) & (d < m), inner[np.clip(d - 1, 0, m - 2)], -np.inf)
            out[:, j0:j1] = banded_log_matmul(dense[:, i0:i1], toeplitz)
        return out

    def term_logs(self, rows: np.ndarray, j: np.ndarray, m: int) -> np.ndarray:
        """Log coefficients of ``p(w)`` in the masses ``(t_L, f(lo+1), ..., f(hi-1), t_R)``
        of a law with ``hi - lo = m``, for row ``rows[n]`` at output index ``j[n]`` (one row
        of the result each): ``p(w) = Σ_k mass_k exp(result[n, k])``."""
        width, scale = self.width, self.tail_scale
        i = j[:, None] - np.arange(1, m)[None, :]
        core = np.where((i >= 0) & (i < width),
                        self.dense[rows[:, None], np.clip(i, 0, width - 1)], -np.inf)
        log1mr = math.log(-math.expm1(-1.0 / scale))
        k = j - m
        right = self.right[rows, np.clip(k, 0, width - 1)] - np.clip(k - width + 1, 0, None) / scale
        right = np.where(k >= 0, right + log1mr, -np.inf)
        left = np.where(j < width, self.left[rows, np.clip(j, 0, width - 1)] + log1mr, -np.inf)
        return np.column_stack([left, core, right])

    def gaps(self, law: TailedLaw, active: Any = None) -> np.ndarray:
        """``log p_a(w) - log p_b(w)`` for every (active) pair and output: 0 where both masses
        are 0 (no such output), ``±inf`` where only one is."""
        g = self.group
        pick = np.arange(len(g.pairs)) if active is None else np.flatnonzero(active)
        used, inverse = np.unique(np.concatenate((g.first[pick], g.second[pick])),
                                  return_inverse=True)
        dens = self.log_outputs(law, used)
        a, b = dens[inverse[:pick.size]], dens[inverse[pick.size:]]
        with np.errstate(invalid="ignore"):
            diff = a - b
        return np.where(np.isneginf(a) & np.isneginf(b), 0.0, diff)

    def epsilons(self, law: TailedLaw, active: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """Realised ε of every (active) pair and the output where it is reached."""
        gap = np.abs(self.gaps(law, active))
        where = np.argmax(gap, axis=1)
        return gap[np.arange(gap.shape[0]), where], self.outputs(law)[where]


def noise_report(groups: list[PmfGroup], noise: IntegerNoise, names: Any, skipped: tuple,
                 coverage: str) -> AuditReport:
    """The exact audit of ``noise`` on every pair of ``groups`` (``scales`` is empty)."""
    law, entries = TailedLaw.of(noise), []
    for g in groups:
        eps, where = g.epsilons(law)
        entries += [PairAudit(pair=p, theta=g.group.theta, scenario=g.group.scenario,
                              epsilon=float(e), output=float(w))
                    for p, e, w in zip(g.group.pairs, eps, where, strict=True)]
    worst = max(entries, key=lambda e: e.epsilon, default=None)
    return AuditReport(epsilon=0.0 if worst is None else worst.epsilon, worst=worst,
                       pairs=tuple(entries), scales=(), coordinates=tuple(names),
                       discrete=True, skipped=skipped, coverage=coverage)


def audit_integer_noise(framework: Any, query: Any, noise: IntegerNoise, *,
                        max_grid: int = MAX_GRID) -> AuditReport:
    """Exact realised ε of ``query + Z`` for integer noise ``Z ~ noise`` (see the module).

    Examples
    --------
    >>> from pufferfish_pgm.scenarios import MarkovChainScenario
    >>> from pufferfish_pgm.secrets import Framework
    >>> from pufferfish_pgm.queries import Count
    >>> iid = Framework(MarkovChainScenario([[0.7, 0.3], [0.7, 0.3]], "stationary", 20))
    >>> geometric = IntegerNoise(lo=-1, weights=(1, 1, 1), tail_scale=1.0)  # not Laplace
    >>> rep = audit_integer_noise(iid, Count(1), geometric)
    >>> round(rep.epsilon, 6), rep.worst.output > 20   # far right: a shift by 1, tails e^-1
    (1.0, True)
    """
    if not isinstance(noise, IntegerNoise):
        raise ParameterTypeError(f"noise must be an IntegerNoise, got {type(noise).__name__}")
    engine, matrix, shift, names = release_layout(framework, query)
    groups, skipped = build_groups(framework, engine, matrix, shift, max_grid)
    pmf = [PmfGroup.build(g, noise.tail_scale) for g in groups]
    return noise_report(pmf, noise, names, skipped, coverage_note(framework))
