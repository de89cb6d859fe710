"""``pufferfish-pgm advise`` (internal): the advisor's table, JSON and picture.

Examples
--------
>>> from pufferfish_pgm.cli._main import build_parser
>>> args = build_parser().parse_args(["advise", "--length", "24", "--mechanisms", "group"])
>>> advise(args)["json"]["rows"][0]["cohort"]    # E|Z| 23.99 / (0.1 · mean 3.81): 63 days
63
"""

from __future__ import annotations

import argparse

import numpy as np

from ..advisor import advise as run_advise
from ..errors import InvalidParameterError
from ..mechanisms import Calibration
from ..mechanisms._engine import EXTRA_NAMES, MECHANISM_ORDER
from ._options import _describe, _setup

__all__ = ["advise", "usefulness_lines"]


def _names(text: str | None) -> list[str]:
    if text is None:
        return ["group", "mqm", "wasserstein", "exact"]
    names = [n.strip() for n in text.split(",") if n.strip()]
    known = (*MECHANISM_ORDER, *EXTRA_NAMES)
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise InvalidParameterError(f"--mechanisms {text!r}: unknown {unknown}; choose from "
                                    f"{', '.join(known)}")
    return names


def advise(args: argparse.Namespace) -> dict:
    """``advise``: per mechanism the noise at ε, the ε for a target error and the number of
    users or days to sum for a relative error on the total (``pp.advise``)."""
    fw, query = _setup(args)
    plot = getattr(args, "plot", None)
    curve = np.geomspace(args.epsilon / 10, args.epsilon * 10, 9).tolist() if plot else None
    out = run_advise(fw, query, epsilon=args.epsilon, target_error=args.target_error,
                     target_relative=args.target_relative, mechanisms=_names(args.mechanisms),
                     curve=curve)
    text = "\n".join([_describe(fw, query, args.epsilon), out.table(),
                      f"n: independent users or days summed (one noisy total, --aggregate) "
                      f"for {out.target_relative:.0%} error on the total; useful n: from where "
                      "the total's noise is below its standard deviation"])
    if plot:
        text += f"\npicture written to {out.plot(plot)}"
    return {"text": text, "json": out.to_json()}


def usefulness_lines(cal: Calibration) -> tuple[list[str], dict]:
    """The line printed under a useless result (none when useful or unknown) and the JSON."""
    report = cal.usefulness()
    data = {"mean_abs_error": report.mean_abs_error, "halfwidth_95": report.halfwidth,
            "spread": report.spread, "spread_of": report.spread_of, "useful": report.useful}
    if report.useful is not False:
        return [], data
    return [f"useless: the noise's E|Z| {report.mean_abs_error:.4g} (95% within "
            f"±{report.halfwidth:.4g}) is larger than the answer's standard deviation "
            f"{report.spread:.4g} (largest, under {report.spread_of}); see pufferfish-pgm "
            "advise"], data
