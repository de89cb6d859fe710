"""Warm-started solves of the noise LP (internal; ``docs/optimal-noise.md``, "Solving").

Constraint generation solves one LP many times, each time with a few more rows. Solving from
scratch (``scipy.optimize.linprog``) repeats the whole simplex every round; HiGHS itself keeps
its basis when rows are added, and the dual simplex then needs only the pivots the new rows
cause. :class:`WarmLP` holds one HiGHS instance over the rounds at one target ε. It takes
HiGHS's Python interface from ``highspy`` when installed (``pip install
pufferfish-pgm[highs]``), else the same interface that SciPy (>= 1.15) ships with its own copy
of HiGHS; when neither is importable it falls back to :func:`scipy.optimize.linprog` from
scratch (same LP, same answers up to the solver's tolerances, slower).

The LP, on the scaled columns ``x`` (masses over the discrete Laplace law's):
minimise ``c · x`` subject to ``unit · x = 1``, ``x >= FLOOR`` and rows ``A x <= 0``.

Examples
--------
>>> import numpy as np
>>> lp = WarmLP(np.array([1.0, 2.0]), np.array([1.0, 1.0]), lower=0.0)
>>> lp.add(np.array([[1.0, -1.0]]))             # x0 <= x1
>>> lp.solve().round(6).tolist()
[0.5, 0.5]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import SolverError

__all__ = ["WarmLP", "highs_module"]

#: Feasibility tolerances of every solve (primal and dual).
TOLERANCE = 1e-10


def highs_module(prefer: str = "auto") -> Any:
    """HiGHS's Python module: ``highspy`` (``prefer`` "auto" or "highspy") when installed,
    else SciPy's bundled copy (``prefer`` "auto" or "scipy"); None when neither (or
    ``prefer="linprog"``): then :class:`WarmLP` re-solves with ``linprog``."""
    if prefer in ("auto", "highspy"):
        try:
            import highspy  # type: ignore[import-not-found,import-untyped,unused-ignore]

            return highspy._core
        except ImportError:
            pass
    if prefer in ("auto", "scipy"):
        try:
            import scipy.optimize._highspy._core as core  # type: ignore[import-untyped]

            return core if hasattr(core, "_Highs") else None
        except ImportError:
            return None
    return None


class WarmLP:
    """One LP whose rows ``A x <= 0`` grow between solves (see the module docstring).

    Mutable by design (it is the solver's state); not shared between calibrations.
    """

    def __init__(self, cost: np.ndarray, unit: np.ndarray, lower: float,
                 backend: str = "auto") -> None:
        self.cost, self.unit, self.lower = cost, unit, float(lower)
        self.rows: list[np.ndarray] = []
        self.core = highs_module(backend)
        self.highs: Any = None if self.core is None else self._start()

    @property
    def warm(self) -> bool:
        """Whether solves keep the basis (a HiGHS instance, not ``linprog``)."""
        return self.highs is not None

    def _start(self) -> Any:
        core, n = self.core, self.cost.size
        h = core._Highs()
        h.setOptionValue("output_flag", False)
        for name in ("primal_feasibility_tolerance", "dual_feasibility_tolerance"):
            h.setOptionValue(name, TOLERANCE)
        inf = h.getInfinity()
        h.addVars(n, np.full(n, self.lower), np.full(n, inf))
        h.changeColsCost(n, np.arange(n, dtype=np.int32), self.cost.astype(float))
        h.addRows(1, np.array([1.0]), np.array([1.0]), n, np.array([0], dtype=np.int32),
                  np.arange(n, dtype=np.int32), self.unit.astype(float))
        return h

    def add(self, rows: Any) -> None:
        """Append rows ``A x <= 0`` (dense array or scipy sparse matrix)."""
        from scipy import sparse  # type: ignore[import-untyped]

        if rows is None or rows.shape[0] == 0:
            return
        csr = sparse.csr_matrix(rows)
        csr.eliminate_zeros()
        self.rows.append(csr)
        if self.highs is not None:
            n = csr.shape[0]
            self.highs.addRows(n, np.full(n, -self.highs.getInfinity()), np.zeros(n),
                               csr.nnz, csr.indptr[:-1].astype(np.int32),
                               csr.indices.astype(np.int32), csr.data.astype(float))

    def solve(self) -> np.ndarray:
        """The optimal ``x`` (a :class:`SolverError` when there is none)."""
        if self.highs is None:
            return self._linprog()
        h = self.highs
        h.run()
        status = h.getModelStatus()
        if status != self.core.HighsModelStatus.kOptimal:
            raise SolverError(f"the noise LP failed ({h.modelStatusToString(status)}); ask "
                              "for a smaller epsilon or dp_epsilon, or use "
                              "ExactLaplaceMechanism")
        return np.asarray(h.getSolution().col_value, dtype=float)

    def _linprog(self) -> np.ndarray:
        from scipy import sparse
        from scipy.optimize import linprog  # type: ignore[import-untyped]

        a_ub = sparse.vstack(self.rows).tocsr() if self.rows else None
        res = linprog(self.cost, A_ub=a_ub,
                      b_ub=None if a_ub is None else np.zeros(a_ub.shape[0]),
                      A_eq=self.unit[None, :], b_eq=[1.0], bounds=(self.lower, None),
                      method="highs", options={"primal_feasibility_tolerance": TOLERANCE,
                                               "dual_feasibility_tolerance": TOLERANCE})
        if res.status != 0:
            raise SolverError(f"the noise LP failed ({res.message}); ask for a smaller "
                              "epsilon or dp_epsilon, or use ExactLaplaceMechanism")
        return np.asarray(res.x, dtype=float)
