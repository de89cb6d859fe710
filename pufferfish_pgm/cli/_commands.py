"""The command-line subcommands (internal; see :mod:`pufferfish_pgm.cli`).

Each takes the parsed arguments and returns ``{"text": str, "json": dict}``.

Examples
--------
>>> from pufferfish_pgm.cli._main import build_parser
>>> args = build_parser().parse_args(["calibrate", "--length", "5", "--mechanism", "group"])
>>> out = calibrate(args)
>>> out["json"]["mechanism"], out["json"]["scale"], out["json"]["query"]
('GroupDP', 5.0, 'count(walk)')
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from ..certificates import verify as verify_certificate
from ..errors import (
    CertificateError,
    InvalidDataError,
    InvalidParameterError,
    ModelFileNotFoundError,
)
from ..mechanisms import Calibration
from ..mechanisms._engine import mechanism, quiet
from ..noise import Release
from ..plots import plot_privacy_loss, plot_quilt
from ..privacy_loss import AuditReport
from ..privacy_loss import audit as run_audit
from ..queries import Histogram, Query, query_distribution
from ..quilts import ChainPlan
from ..scenarios import ScenarioClass
from ..secrets import Framework
from ._advise import advise, usefulness_lines
from ._compare import calibrate_with, compare, demo, progress_wanted
from ._options import (
    _certified,
    _coerce,
    _describe,
    _json_nodes,
    _query,
    _query_nodes,
    _setup,
    _span,
    _table,
)

__all__ = ["advise", "audit", "calibrate", "compare", "demo", "plan", "release", "verify"]


def plan(args: argparse.Namespace) -> dict:
    """``plan``: the Markov quilt of every secret node (MQM), with σ_i and the scale."""
    fw, query = _setup(args)
    cal = mechanism("mqm", args.epsilon).calibrate(fw, query)
    shown = _plan_rows(cal.plan)
    rows = [[label, _quilt_text(label, e), len(e.nearby), len(e.remote), e.influence,
             e.sigma, "yes" if e.trivial else "no"] for label, e in shown]
    worst = max((e for _, e in shown), key=lambda e: e.sigma)
    text = "\n".join([_describe(fw, query, args.epsilon),
                      _table(["node", "quilt", "|nearby|", "|remote|", "influence", "sigma",
                              "trivial"],
                             rows), f"sigma_max = {worst.sigma:.6g}; "
                      f"Laplace scale for {query.name}: {cal.scale:.6g}", *_skipped(fw)])
    if getattr(args, "plot", None):
        plot_quilt(fw.scenarios[0], worst, args.plot)
    data = [{"node": label, "quilt": list(e.quilt), "nearby": len(e.nearby),
             "remote": len(e.remote), "influence": e.influence, "sigma": e.sigma,
             "trivial": e.trivial} for label, e in shown]
    return {"text": text, "json": {"scale": cal.scale, "query": query.name,
                                   "query_nodes": _json_nodes(query), "plan": data,
                                   "skipped_secrets": _skipped_json(fw)}}


def _plan_rows(plan: Any) -> list[tuple[Any, Any]]:
    """(label, entry) per row: one per secret node of a network; one per node class of a
    chain (nodes ``a..b`` sharing one quilt shape; the entry shown is the class's first node),
    so a chain of 10^9 steps prints a few dozen rows."""
    if not isinstance(plan, ChainPlan):
        return [(e.node, e) for e in plan]
    return [(f"{a}..{b - 1}" if b - a > 1 else a, plan[int(k)])
            for a, b, k in zip(plan.starts.tolist(), plan.stops.tolist(),
                               plan.offsets[:-1].tolist(), strict=True)]


def _quilt_text(label: Any, entry: Any) -> str:
    """The quilt of a row; for a class of chain steps relative to its node i (``{i-60, i+61}``)."""
    if not (isinstance(label, str) and ".." in label):
        return _span(entry.quilt)
    return "{" + ", ".join(f"i{v - entry.node:+d}" for v in entry.quilt) + "}"


def calibrate(args: argparse.Namespace) -> dict:
    """``calibrate``: the Laplace scale of one mechanism."""
    fw, query = _setup(args)
    mech = mechanism(args.mechanism, args.epsilon)
    with quiet():     # said in the output instead
        cal = calibrate_with(mech, fw, query, progress_wanted(args))
    lines, useful = usefulness_lines(cal)
    text = "\n".join([_describe(fw, query, args.epsilon), cal.summary(), *lines])
    out = {"mechanism": cal.mechanism, "scale": cal.scale, "epsilon": cal.epsilon,
           "query": query.name, "query_nodes": _json_nodes(query), "notes": cal.notes(),
           "usefulness": useful}
    if getattr(args, "out", None):
        Path(args.out).write_text(cal.to_json(mechanism=mech) + "\n", encoding="utf-8")
        text += f"\ncertificate written to {args.out}"
        out["certificate"] = args.out
    return {"text": text, "json": out}


def _read_csv(path: str, cls: ScenarioClass) -> Any:
    """The CSV as text (``TRUE`` stays the state ``TRUE``, ``007`` stays ``007``, an empty cell
    stays empty), then each cell as the model's own state it names (a chain file's state 1 is
    the integer 1); a cell that names no state is kept, for the release to name it."""
    import pandas as pd  # type: ignore[import-untyped]

    if not Path(path).is_file():
        raise ModelFileNotFoundError(f"data file {path!r} does not exist")
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (ValueError, UnicodeDecodeError) as err:
        raise InvalidDataError(f"cannot read {path!r} as CSV: {err}") from None
    if cls.kind == "chain":
        return pd.DataFrame(_as_states(frame.to_numpy(), cls.states_of(cls.nodes[0])),
                            columns=frame.columns)
    frame.columns = [_coerce(str(c), cls.nodes) for c in frame.columns]
    for column in frame.columns:
        if column in set(cls.nodes):
            frame[column] = _as_states(frame[column].to_numpy(), cls.states_of(column))
    return frame


def _as_states(values: np.ndarray, states: tuple) -> np.ndarray:
    """Text cells as the states they name (unchanged when every state is a string).

    Examples
    --------
    >>> _as_states(np.array(["1", "0", "x"], dtype=object), (0, 1)).tolist()
    [1, 0, 'x']
    """
    if all(isinstance(s, str) for s in states):
        return values
    import pandas as pd

    names = {str(s): s for s in states}
    labels, uniques = pd.factorize(values.ravel())
    table = np.array([names.get(u, u) for u in uniques] + [""], dtype=object)
    return table[labels].reshape(values.shape)


def release(args: argparse.Namespace) -> dict:
    """``release``: noisy answers for the users of a CSV file (one row per user).

    With ``--calibration FILE`` the certificate's scale is used (checked against the model,
    never recalibrated); ``--epsilon``, ``--mechanism`` and ``--query``, if given, must agree
    with it.
    """
    if (args.data is None) == (args.events is None):
        raise InvalidParameterError("release needs exactly one of --data FILE (a CSV) and "
                                    "--events FILE (activity logs)")
    if args.events:
        from ._events import release_events  # deferred: only the events path reads logs

        return release_events(args)
    fw, cal = _release_calibration(args)
    frame = _read_csv(args.data, fw.scenarios)
    rng = None if args.seed is None else np.random.default_rng(args.seed)
    return _release_report(cal, cal.release(frame, rng=rng, per_user=not args.aggregate))


def _release_calibration(args: argparse.Namespace) -> tuple[Framework, Calibration]:
    """The framework and the calibration to release with: the certificate's (checked to agree
    with the options) or a new one."""
    if args.calibration:
        fw, text = _certified(args, args.calibration)
        cal = Calibration.from_json(text, fw)
        _agree(args, cal)
        return fw, cal
    fw, query = _setup(args)
    epsilon = 1.0 if args.epsilon is None else args.epsilon
    with quiet():
        return fw, mechanism(args.mechanism or "mqm", epsilon).calibrate(fw, query)


def _release_report(cal: Calibration, rel: Release) -> dict:
    """The released values with their 95 % intervals and usefulness, as text and JSON."""
    values = np.atleast_1d(rel.value).tolist()
    low, high = (np.atleast_1d(b) for b in rel.interval(0.95))
    half = float(np.max(high - np.atleast_1d(rel.value), initial=0.0))
    lines, useful = usefulness_lines(cal)
    text = "\n".join([cal.summary(), "released: " + ", ".join(map(str, values[:20]))
                      + (" ..." if len(values) > 20 else ""),
                      f"accuracy: each value is within ±{half:g} of its true answer with "
                      "probability 0.95 (each on its own; Release.interval)", *lines])
    return {"text": text, "json": {"mechanism": rel.mechanism, "scale": rel.scale,
                                   "epsilon": rel.epsilon, "values": values,
                                   "interval_95": [low.tolist(), high.tolist()],
                                   "usefulness": useful}}


def _agree(args: argparse.Namespace, cal: Calibration) -> None:
    """Refuse options that contradict the certificate instead of silently ignoring them."""
    if args.epsilon is not None and args.epsilon != cal.epsilon:
        raise CertificateError(f"--epsilon {args.epsilon} contradicts the certificate's "
                               f"epsilon {cal.epsilon}; drop --epsilon")
    if args.mechanism is not None and mechanism(args.mechanism, cal.epsilon).name \
            != cal.mechanism:
        raise CertificateError(f"--mechanism {args.mechanism} contradicts the certificate's "
                               f"mechanism {cal.mechanism}; drop --mechanism")
    if args.query is not None and _query(args.query, cal.framework.scenarios,
                                         _query_nodes(args, cal.framework)) != cal.query:
        raise CertificateError(f"--query {args.query} contradicts the certificate's query "
                               f"{cal.query.name}; drop --query")


def verify(args: argparse.Namespace) -> dict:
    """``verify``: re-prove a certificate for the model (exit 2 when it does not hold)."""
    fw, text = _certified(args, args.file)
    report = verify_certificate(text, fw)
    if not report.holds:
        raise CertificateError(report.message)
    return {"text": report.message, "json": {
        "holds": report.holds, "epsilon": report.epsilon, "scale": report.scale,
        "audited_epsilon": report.audited_epsilon, "replanned_scale": report.replanned_scale,
        "message": report.message}}


def audit(args: argparse.Namespace) -> dict:
    """``audit``: the exact realised ε of a given scale or of a mechanism's scale."""
    fw, query = _setup(args)
    scale = args.scale
    label = f"Laplace scale {scale}"
    if scale is None:
        cal = mechanism(args.mechanism, args.epsilon).calibrate(fw, query)
        scale, label = cal.scale, cal.summary()
    report = run_audit(fw, query, scale)
    if getattr(args, "plot", None):
        _plot_worst_pair(fw, query, report, scale, args)
    worst = report.worst
    where = "no pair could be audited" if worst is None else (
        f"worst case: pair {worst.pair} under {worst.scenario!r} at output {worst.output}")
    text = "\n".join([label, f"realised epsilon = {report.epsilon:.6g} (target {args.epsilon}); "
                             f"{where}", *(_skipped(fw) if args.scale is not None else [])])
    return {"text": text, "json": {"scale": scale, "realised_epsilon": report.epsilon,
                                   "target_epsilon": args.epsilon, "worst": _worst_json(report),
                                   "skipped_secrets": _skipped_json(fw)}}


def _skipped(fw: Framework) -> list[str]:
    """A footer line naming the secrets the framework left out (none: no line); a mechanism's
    summary already says it in its notes."""
    skipped = fw.skipped_secrets
    if not skipped:
        return []
    shown = ", ".join(f"{v}={s}" for v, s in skipped[:6]) + (", ..." if len(skipped) > 6 else "")
    return [f"skipped {len(skipped)} secret(s) impossible under every scenario (nothing to "
            f"protect): {shown}"]


def _skipped_json(fw: Framework) -> list:
    """The secrets the framework left out, as ``[node, state]`` pairs of JSON types."""
    return [[_plain(v), _plain(s)] for v, s in fw.skipped_secrets]


def _plain(x: Any) -> Any:
    """A JSON type for a node or state (numpy integers become ints, other objects strings)."""
    if isinstance(x, (bool, int, float, str)) or x is None:
        return x
    return int(x) if hasattr(x, "__index__") else str(x)


def _worst_json(report: AuditReport) -> dict | None:
    """Where the audit's maximum is reached, as JSON (None when no pair was audited)."""
    worst = report.worst
    if worst is None:
        return None
    return {"pair": [_secret_json(worst.pair.first), _secret_json(worst.pair.second)],
            "theta": worst.theta, "scenario": worst.scenario, "epsilon": worst.epsilon,
            "output": worst.output}


def _secret_json(secret: Any) -> Any:
    """One secret of a pair: its evidence ``{node: state}`` (its text when it has none)."""
    evidence = getattr(secret, "evidence", None)
    if isinstance(evidence, dict):
        return {str(k): v for k, v in evidence.items()}
    return str(secret)


def _plot_worst_pair(fw: Framework, query: Query, report: AuditReport, scale: float,
                     args: argparse.Namespace) -> None:
    """The privacy-loss curve of the pair and scenario where the audit's maximum is reached."""
    worst = report.worst
    if worst is None or isinstance(query, Histogram):
        raise InvalidParameterError("--plot draws the loss curve of a scalar query with at "
                                    "least one audited pair")
    scenario = fw.scenarios[worst.theta]
    mu_a, mu_b = (query_distribution(scenario, query, s.evidence)
                  for s in (worst.pair.first, worst.pair.second))
    plot_privacy_loss(mu_a, mu_b, scale, args.plot, epsilon=args.epsilon,
                      label=f"for {worst.pair} under {worst.scenario}")
