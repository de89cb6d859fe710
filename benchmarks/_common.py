"""What several benchmark scripts share: the fitted Ordóñez day and a one-line calibration.

Imported by name from the scripts in this folder (a script's folder is on ``sys.path`` when it
runs); not part of the library.
"""

from __future__ import annotations

import resource
import time
import warnings
from collections import Counter
from pathlib import Path

import pufferfish_pgm as pp

#: The real activity logs beside the repository.
DATA = Path(__file__).resolve().parents[2] / "shared" / "data-real"


def ordonez_day(home: str, slot: str, data: Path = DATA) -> tuple[pp.Framework, pp.Query]:
    """The chain fitted from one home's log (``read_ordonez(repair=True)``,
    ``sequences_from_events(fill="Idle")``, stationary start, one day) and the count of its
    most frequent non-idle activity."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the repair's report of what it changed
        wide = pp.sequences_from_events(pp.read_ordonez(data / f"Ordonez{home}_ADLs.txt",
                                                        repair=True), slot=slot, fill="Idle")
    chain = pp.MarkovChainScenario.fit(wide, initial="stationary", name=f"Ordonez{home}")
    counts = Counter(v for row in wide.itertuples(index=False) for v in row)
    state = next(s for s, _ in counts.most_common() if s != "Idle")
    return pp.Framework(chain.with_length(wide.shape[1])), pp.Count(state)


def quilt_summary(cal: pp.Calibration) -> str:
    """``scale …`` and, for Markov quilts, how many quilts were trivial and why."""
    trivial = getattr(cal.evidence, "trivial_nodes", None)
    why = getattr(cal.evidence, "trivial_reasons", None) or {}
    if trivial is None:
        return f"scale {cal.scale:.4g}"
    reasons = "".join(f"; {n} by {r.split(':')[0]}" for r, n in why.items())
    return f"scale {cal.scale:.4g} ({trivial} trivial quilts{reasons})"


def calibrated(fw: pp.Framework, query: pp.Query, mechanism: str, start: float) -> dict:
    """Exact Laplace or MQM (``mechanism``) on ``fw``: the scale (with the quilt summary) or
    the refusal, the CPU seconds since ``start`` and this process's peak RSS."""
    try:
        mech = (pp.ExactLaplaceMechanism(epsilon=1.0) if mechanism == "exact"
                else pp.MarkovQuiltMechanism(epsilon=1.0))
        result = quilt_summary(mech.calibrate(fw, query))
    except pp.PufferfishError as err:
        result = f"refused: {type(err).__name__}: {str(err)[:200]}"
    return {"result": result, "cpu_s": round(time.process_time() - start, 2),
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}
