"""The noise half of a partitioned release: an exact combine, then one draw (internal).

Spark, Dask DataFrame, Ray Data and Beam run a function per partition and combine the results;
:meth:`Calibration.answers <pufferfish_pgm.mechanisms.Calibration.answers>` is that function
(exact integer answers, no randomness) and
:meth:`Calibration.add_noise <pufferfish_pgm.mechanisms.Calibration.add_noise>` adds the
calibrated noise where the release is made:

* per user: each partition calls ``add_noise(answers(part), rng)`` itself;
* aggregate: partitions return ``answers(part).sum()``, the sums are added up exactly (integers)
  and ``add_noise`` draws once, on the total.

Reproducible noise (tests only): the noise of piece ``i`` comes from child ``i`` of one root
``numpy.random.SeedSequence`` (``root.spawn(n)[i]``), and an aggregate is piece 0. This is how
:meth:`Calibration.release` seeds its chunks, so a release made partition by partition with
``rng=SeedSequence(s)`` equals ``release(data, rng=SeedSequence(s), chunk_size=c)`` bit for bit
when partition ``i`` holds the users of chunk ``i``. ``rng=None`` (the default) is the OS's
secure randomness, on every worker.

Examples
--------
>>> import numpy as np
>>> import pandas as pd
>>> import pufferfish_pgm as pp
>>> mc = pp.MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 4)
>>> cal = pp.Calibration(mechanism="by hand", epsilon=1.0, scale=2.0, query=pp.Count(1),
...                      framework=pp.Framework(mc))
>>> part = pd.DataFrame([[0, 1, 1, 0], [1, 1, 1, 1]], index=["ann", "bob"])
>>> cal.answers(part).to_dict()
{'ann': 2, 'bob': 4}
>>> root = np.random.SeedSequence(7)
>>> add_noise(cal, cal.answers(part).sum(), root.spawn(1)[0]) == cal.release(
...     part, np.random.SeedSequence(7), per_user=False).value
True
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ParameterTypeError

__all__ = ["add_noise"]


def add_noise(cal: Any, values: Any, rng: Any = None) -> Any:
    """``values`` (exact answers, or their exact sum) plus the calibrated noise, of the same
    kind: a numpy array, a number, or a pandas Series/DataFrame (index and columns kept).

    ``rng``: None (the OS's secure randomness), a ``numpy.random.SeedSequence`` (this piece's
    own child of a root, used as ``default_rng(rng)``) or a seeded ``Generator``.
    """
    generator = _generator(rng)
    if type(values).__name__ in ("Series", "DataFrame"):
        noisy = cal.noisy(values.to_numpy(), generator)
        return type(values)(noisy, index=values.index, **_labels(values))
    return cal.noisy(values, generator)


def _labels(values: Any) -> dict:
    """The keyword that keeps a Series' name or a DataFrame's columns."""
    if type(values).__name__ == "Series":
        return {"name": values.name}
    return {"columns": values.columns}


def _generator(rng: Any) -> np.random.Generator | None:
    """The noise source for one piece: a SeedSequence is that piece's own seed."""
    if rng is None or isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    raise ParameterTypeError(
        f"rng must be None (secure), a numpy.random.SeedSequence (this partition's child of a "
        f"root, root.spawn(n)[i]) or a numpy Generator, got the {type(rng).__name__} {rng!r}")
