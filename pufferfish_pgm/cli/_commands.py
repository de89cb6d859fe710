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
import time
from collections.abc import Hashable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import (
    CertificateError,
    InvalidDataError,
    InvalidParameterError,
    MissingDependencyError,
    ModelFileNotFoundError,
    PufferfishError,
    UnknownStateError,
)
from ..mechanisms import AuditedEvidence, Calibration
from ..mechanisms import verify as verify_certificate
from ..mechanisms._registry import MECHANISM_ORDER, mechanism
from ..plots import plot_privacy_loss, plot_quilt, plot_scale_vs_epsilon
from ..privacy_loss import AuditReport
from ..privacy_loss import audit as run_audit
from ..queries import Count, Histogram, LinearQuery, Query, query_distribution
from ..scenarios import MarkovChainScenario, Scenario, ScenarioClass, load_scenarios
from ..secrets import Framework, secret_pairs

__all__ = ["audit", "calibrate", "compare", "demo", "plan", "release", "verify"]

DEMO_STATE = "walk"


def _coerce(value: str, options: tuple) -> Any:
    """Map a command-line string to the model's own node or state name (any hashable)."""
    for o in options:
        if str(o) == value:
            return o
    return value


def _setup(args: argparse.Namespace) -> tuple[Framework, Query]:
    _check_plot(args)
    framework = _framework(args)
    return framework, _query(args.query, framework.scenarios, _query_nodes(args, framework))


def _check_plot(args: argparse.Namespace) -> None:
    """Fail on ``--plot`` without matplotlib before any (possibly long) calibration."""
    if not getattr(args, "plot", None):
        return
    try:
        import matplotlib  # noqa: F401  (an optional extra; plots.py imports it for real)
    except ImportError:
        raise MissingDependencyError(
            "plots need matplotlib, which is not installed; install it with "
            'pip install "pufferfish_pgm[plot]" (or drop --plot)') from None


def _query_nodes(args: argparse.Namespace, fw: Framework) -> tuple | None:
    """The nodes of ``--query-nodes`` in the model's own names (None: not given)."""
    text = getattr(args, "query_nodes", None)
    if text is None:
        return None
    nodes = tuple(_coerce(v.strip(), fw.scenarios.nodes) for v in text.split(",") if v.strip())
    if not nodes:
        raise InvalidParameterError("--query-nodes lists no node; give comma-separated nodes")
    for v in nodes:
        fw.scenarios.members[0].check_node(v)  # unknown nodes fail here, naming the node
    return nodes


def _framework(args: argparse.Namespace) -> Framework:
    cls = load_scenarios(args.model, renormalize=args.renormalize, length=args.length)
    nodes = None
    if args.nodes:
        nodes = [_coerce(v.strip(), cls.nodes) for v in args.nodes.split(",") if v.strip()]
    return Framework(cls, secret_pairs(cls, nodes=nodes))


def _read_certificate(path: str) -> str:
    file = Path(path)
    if not file.is_file():
        raise ModelFileNotFoundError(f"certificate file {path!r} does not exist")
    return file.read_text(encoding="utf-8")


def _query(text: str | None, cls: ScenarioClass, nodes: tuple | None = None) -> Query:
    """The query of ``--query`` over ``nodes`` (``--query-nodes``; None: every node).

    A count (also the default one) without ``--query-nodes`` counts its state over the nodes
    that have it: on a network the nodes' state spaces differ.
    """
    states = cls.states_of((cls.nodes if nodes is None else nodes)[0])
    if text is None:
        return _count(DEMO_STATE if DEMO_STATE in states else states[0], cls, nodes)
    kind, _, rest = text.partition(":")
    if kind == "histogram":
        return Histogram(nodes)
    query: LinearQuery
    if kind == "count" and rest:
        query = _count(rest, cls, nodes)
    elif kind == "linear" and rest:
        weights = {}
        for item in rest.split(","):
            state, _, w = item.partition("=")
            try:
                weights[_coerce(state, states)] = int(w)
            except ValueError:
                raise InvalidParameterError(f"weight {w!r} of state {state!r} is not an "
                                            "integer; write linear:STATE=INT,...") from None
        query = LinearQuery(weights, nodes)
    else:
        raise InvalidParameterError(f"unknown query {text!r}; use count:STATE, histogram or "
                                    "linear:STATE=W,...")
    query.weight_table(cls)  # unknown states fail here, naming the state
    return query


def _count(text: str, cls: ScenarioClass, nodes: tuple | None) -> Count:
    """``Count`` of a state; without explicit ``nodes``, over the nodes that have the state."""
    if nodes is not None:
        return Count(_coerce(text, cls.states_of(nodes[0])), nodes)
    having = []
    state: Any = text
    for v in cls.nodes:
        match = [s for s in cls.states_of(v) if str(s) == text]
        if match:
            having.append(v)
            state = match[0]
    if not having:
        seen: dict = {}
        for v in cls.nodes:
            for s in cls.states_of(v):
                seen[s] = seen.get(s, 0) + 1
        common = sorted(seen, key=lambda s: -seen[s])
        raise UnknownStateError(
            f"no node has state {text!r}; states that exist include "
            f"{', '.join(map(str, common[:8]))}{', ...' if len(common) > 8 else ''}")
    return Count(state, None if len(having) == len(cls.nodes) else tuple(having))


def _table(header: list[str], rows: list[list]) -> str:
    """Aligned columns; the last cell of a row shorter than the header runs on unaligned."""
    cells = [header] + [[_fmt(c) for c in r] for r in rows]
    full = [r for r in cells if len(r) == len(header)]
    widths = [max(len(r[i]) for r in full) for i in range(len(header))]
    lines = ["  ".join(c if len(r) < len(header) and i == len(r) - 1 else c.ljust(widths[i])
                       for i, c in enumerate(r)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _fmt(x: Any) -> str:
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x)


def _describe(fw: Framework, query: Query, epsilon: float) -> str:
    cls = fw.scenarios
    over = "" if query.nodes is None else f" over {len(query.nodes)} nodes"
    return (f"model: {len(cls)} scenario(s) [{', '.join(m.name for m in cls)}], "
            f"{len(cls.nodes)} nodes; secrets on {len(fw.secret_nodes)} nodes "
            f"({fw.pair_count} pairs); query {query.name}{over}; epsilon {epsilon}")


def plan(args: argparse.Namespace) -> dict:
    """``plan``: the Markov quilt of every secret node (MQM), with σ_i and the scale."""
    fw, query = _setup(args)
    cal = mechanism("mqm", args.epsilon).calibrate(fw, query)
    rows = [[e.node, _span(e.quilt), len(e.nearby), len(e.remote), e.influence, e.sigma,
             "yes" if e.trivial else "no"] for e in cal.plan]
    text = "\n".join([_describe(fw, query, args.epsilon),
                      _table(["node", "quilt", "|nearby|", "|remote|", "influence", "sigma",
                              "trivial"],
                             rows), f"sigma_max = {max(e.sigma for e in cal.plan):.6g}; "
                      f"Laplace scale for {query.name}: {cal.scale:.6g}"])
    if getattr(args, "plot", None):
        worst = max(cal.plan, key=lambda e: e.sigma)
        plot_quilt(fw.scenarios[0], worst, args.plot)
    data = [{"node": e.node, "quilt": list(e.quilt), "nearby": len(e.nearby),
             "remote": len(e.remote), "influence": e.influence, "sigma": e.sigma,
             "trivial": e.trivial} for e in cal.plan]
    return {"text": text, "json": {"scale": cal.scale, "query": query.name,
                                   "query_nodes": _json_nodes(query), "plan": data}}


def _json_nodes(query: Query) -> list | None:
    return None if query.nodes is None else list(query.nodes)


def _span(nodes: Iterable[Hashable]) -> str:
    items = list(nodes)
    return "{" + ", ".join(map(str, items[:6])) + (", ..." if len(items) > 6 else "") + "}"


def calibrate(args: argparse.Namespace) -> dict:
    """``calibrate``: the Laplace scale of one mechanism."""
    fw, query = _setup(args)
    mech = mechanism(args.mechanism, args.epsilon)
    cal = mech.calibrate(fw, query)
    text = f"{_describe(fw, query, args.epsilon)}\n{cal.summary()}"
    out = {"mechanism": cal.mechanism, "scale": cal.scale, "epsilon": cal.epsilon,
           "query": query.name, "query_nodes": _json_nodes(query), "notes": cal.notes()}
    if getattr(args, "out", None):
        Path(args.out).write_text(cal.to_json(mechanism=mech) + "\n", encoding="utf-8")
        text += f"\ncertificate written to {args.out}"
        out["certificate"] = args.out
    return {"text": text, "json": out}


def _read_csv(path: str) -> Any:
    import pandas as pd  # type: ignore[import-untyped]

    if not Path(path).is_file():
        raise ModelFileNotFoundError(f"data file {path!r} does not exist")
    try:
        return pd.read_csv(path)
    except (ValueError, UnicodeDecodeError) as err:
        raise InvalidDataError(f"cannot read {path!r} as CSV: {err}") from None


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
    if args.calibration:
        fw = _framework(args)
        cal = Calibration.from_json(_read_certificate(args.calibration), fw)
        _agree(args, cal)
    else:
        fw, query = _setup(args)
        epsilon = 1.0 if args.epsilon is None else args.epsilon
        cal = mechanism(args.mechanism or "mqm", epsilon).calibrate(fw, query)
    frame = _read_csv(args.data)
    if fw.scenarios.kind == "chain":
        states = fw.scenarios.states_of(0)
        frame = frame.apply(lambda col: col.map(lambda v: _coerce(str(v), states)))
    rng = None if args.seed is None else np.random.default_rng(args.seed)
    rel = cal.release(frame, rng=rng, per_user=not args.aggregate)
    values = np.atleast_1d(rel.value).tolist()
    low, high = (np.atleast_1d(b) for b in rel.interval(0.95))
    half = float(np.max(high - np.atleast_1d(rel.value), initial=0.0))
    text = "\n".join([cal.summary(), "released: " + ", ".join(map(str, values[:20]))
                      + (" ..." if len(values) > 20 else ""),
                      f"accuracy: each value is within ±{half:g} of its true answer with "
                      "probability 0.95 (each on its own; Release.interval)"])
    return {"text": text, "json": {"mechanism": rel.mechanism, "scale": rel.scale,
                                   "epsilon": rel.epsilon, "values": values,
                                   "interval_95": [low.tolist(), high.tolist()]}}


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
    fw = _framework(args)
    report = verify_certificate(_read_certificate(args.file), fw)
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
    text = f"{label}\nrealised epsilon = {report.epsilon:.6g} (target {args.epsilon}); {where}"
    return {"text": text, "json": {"scale": scale, "realised_epsilon": report.epsilon,
                                   "target_epsilon": args.epsilon, "worst": _worst_json(report)}}


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


def _compare_rows(fw: Framework, query: Query,
                  epsilon: float) -> tuple[list[dict], list[Calibration | None]]:
    """One row per mechanism (scale, exact realised epsilon, seconds) and the calibrations.

    A mechanism that fails with a :class:`PufferfishError` does not stop the others: its row
    has ``"error"`` (the error's type and one-line message) and its calibration is None.
    """
    rows: list[dict] = []
    calibrations: list[Calibration | None] = []
    for name in _progress(MECHANISM_ORDER, "calibrating and auditing"):
        start = time.perf_counter()
        try:
            cal = mechanism(name, epsilon).calibrate(fw, query)
            realised = _realised_epsilon(fw, query, cal)
        except PufferfishError as err:
            message = " ".join(str(err).split())  # one line
            rows.append({"mechanism": name, "error": f"{type(err).__name__}: {message}",
                         "seconds": time.perf_counter() - start})
            calibrations.append(None)
            continue
        rows.append({"mechanism": name, "scale": cal.scale, "realised_epsilon": realised,
                     "private": bool(realised <= epsilon * (1 + 1e-9)),
                     "seconds": time.perf_counter() - start})
        calibrations.append(cal)
    return rows, calibrations


def _cells(row: dict, last: Any) -> list:
    """A table row: a failed mechanism says so (and why) in place of its numbers."""
    if "error" in row:
        return [row["mechanism"], "FAILED", row["error"]]
    return [row["mechanism"], row["scale"], row["realised_epsilon"],
            "yes" if row["private"] else "NO", last]


def _failures(rows: list[dict]) -> tuple[str, int]:
    """The line naming failed mechanisms and the exit code: 2 only when every one failed."""
    failed = [r["mechanism"] for r in rows if "error" in r]
    if not failed:
        return "", 0
    line = (f"{len(failed)} of {len(rows)} mechanisms failed ({', '.join(failed)}); "
            "the other rows are complete")
    return line, 2 if len(failed) == len(rows) else 0


def _realised_epsilon(fw: Framework, query: Query, cal: Calibration) -> float:
    """The exact realised ε of ``cal``: from its own audit when it made one at its scale."""
    report = cal.evidence.audit if isinstance(cal.evidence, AuditedEvidence) else None
    if report is None or report.scales != (cal.scale,):
        report = run_audit(fw, query, cal.scale)
    return report.epsilon


def _progress(items: Sequence[str], what: str) -> Iterable[str]:
    """A tqdm progress bar on stderr, only when stderr is a terminal (never in pipes or CI)."""
    import sys

    if not sys.stderr.isatty():
        return items
    from tqdm import tqdm  # type: ignore[import-untyped]

    return tqdm(items, desc=what, leave=False, file=sys.stderr)


def compare(args: argparse.Namespace) -> dict:
    """``compare``: every mechanism's scale and exact realised ε side by side.

    A mechanism that fails (a :class:`PufferfishError`, e.g. a limit) gets a row saying
    ``FAILED`` and why, and the other rows are still printed. The exit code is 0 when at
    least one mechanism finished and 2 when every mechanism failed; the JSON lists the failed
    mechanisms under ``"failed"`` and gives each failed row an ``"error"``.
    """
    fw, query = _setup(args)
    rows, _ = _compare_rows(fw, query, args.epsilon)
    note, code = _failures(rows)
    if getattr(args, "plot", None) and code == 0:
        plot_scale_vs_epsilon(fw, query, args.plot)
    text = "\n".join([_describe(fw, query, args.epsilon), _table(
        ["mechanism", "Laplace scale", "realised eps", "private", "seconds"],
        [_cells(r, r["seconds"]) for r in rows])] + ([note] if note else []))
    return {"text": text, "exit_code": code,
            "json": {"epsilon": args.epsilon, "query": query.name, "rows": rows,
                     "failed": [r["mechanism"] for r in rows if "error" in r]}}


def demo(args: argparse.Namespace) -> dict:
    """``demo``: ``compare`` plus one release of a simulated record by each mechanism."""
    fw, query = _setup(args)
    rows, calibrations = _compare_rows(fw, query, args.epsilon)
    note, code = _failures(rows)
    done = [cal for cal in calibrations if cal is not None]
    if not done:
        raise next(InvalidParameterError(f"every mechanism failed; {r['mechanism']}: "
                                         f"{r['error']}") for r in rows)
    day = _sample_day(fw.scenarios[0])
    truth = int(np.asarray(done[0].answer(day)).ravel()[0])
    released = [None if cal is None else cal.release(day).value for cal in calibrations]
    text = "\n".join([
        _describe(fw, query, args.epsilon),
        f"one simulated record; true answer {truth}; each release uses fresh secure noise", "",
        _table(["mechanism", "Laplace scale", "realised eps", "private", "released"],
               [_cells(r, v) for r, v in zip(rows, released, strict=True)]),
        *([note] if note else []),
        "", "entry DP is not Pufferfish private under correlation: the exact audit shows it."])
    for r, v in zip(rows, released, strict=True):
        if v is not None:
            r["released"] = v
    return {"text": text, "exit_code": code, "json": {"truth": truth, "rows": rows}}


def _sample_day(scenario: Scenario) -> list | dict:
    """A fixed simulated record (seeded: the demo's data, not its noise)."""
    rng = np.random.default_rng(2024)
    if isinstance(scenario, MarkovChainScenario):
        q = scenario.marginal(0)
        x = [rng.choice(scenario.k, p=q)]
        for _ in range(scenario.length - 1):  # simulation of one short demo record
            x.append(rng.choice(scenario.k, p=scenario.transition[x[-1]]))
        return [scenario.states[i] for i in x]
    codes: dict = {}
    for v in scenario.nodes:  # ancestral sampling in topological order
        table = scenario.tables.cpts[v]
        column = table[(slice(None), *(codes[p] for p in scenario.tables.parents[v]))]
        codes[v] = int(rng.choice(len(column), p=column))
    return {v: scenario.states_of(v)[c] for v, c in codes.items()}
