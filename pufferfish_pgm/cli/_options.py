"""What the subcommands share: reading the model, secrets and query options, and tables.

Internal to :mod:`pufferfish_pgm.cli`; each subcommand module imports what it needs.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Hashable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ..errors import (
    CertificateError,
    InvalidParameterError,
    MissingDependencyError,
    ModelFileNotFoundError,
    UnknownStateError,
)
from ..queries import Count, Histogram, LinearQuery, Query
from ..scenarios import ScenarioClass, load_scenarios
from ..secrets import Framework, secret_pairs

__all__ = ["DEMO_STATE"]

DEMO_STATE = "walk"


def _coerce(value: str, options: Sequence) -> Any:
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
    if not args.nodes:   # every pair of every node, never built as objects (a day of seconds)
        return Framework(cls)
    nodes = [_coerce(v.strip(), cls.nodes) for v in args.nodes.split(",") if v.strip()]
    return Framework(cls, secret_pairs(cls, nodes=nodes))


def _read_certificate(path: str) -> str:
    file = Path(path)
    if not file.is_file():
        raise ModelFileNotFoundError(f"certificate file {path!r} does not exist")
    return file.read_text(encoding="utf-8")


def _certified(args: argparse.Namespace, path: str) -> tuple[Framework, str]:
    """The framework of ``--model`` and the certificate's text; without ``--model``, a
    certificate written for another model is refused naming it (not the bundled default's
    scenario count)."""
    text = _read_certificate(path)
    fw = _framework(args)
    named = _certificate_scenarios(text)
    ours = [m.name for m in fw.scenarios]
    if args.model is None and named is not None and named != ours:
        raise CertificateError(
            f"the certificate {path} was written for the model with scenario(s) "
            f"{', '.join(map(repr, named))}, but no --model was given, so the bundled default "
            f"(the activity chain: {', '.join(map(repr, ours))}) was used; pass --model FILE, "
            "the model file the certificate was calibrated on")
    return fw, text


def _certificate_scenarios(text: str) -> list | None:
    """The scenario names a certificate records (None when it does not say: the library's
    reader then names what is wrong with it)."""
    try:
        doc = json.loads(text)
        names = [s["name"] for s in doc["scenarios"]]
    except (ValueError, KeyError, TypeError):
        return None
    return names if names and all(isinstance(n, str) for n in names) else None


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
    looked = cls.nodes[:1] if cls.kind == "chain" else cls.nodes   # a chain's steps agree
    having = []
    state: Any = text
    for v in looked:
        match = [s for s in cls.states_of(v) if str(s) == text]
        if match:
            having.append(v)
            state = match[0]
    if not having:
        seen: dict = {}
        for v in looked:
            for s in cls.states_of(v):
                seen[s] = seen.get(s, 0) + 1
        common = sorted(seen, key=lambda s: -seen[s])
        raise UnknownStateError(
            f"no node has state {text!r}; states that exist include "
            f"{', '.join(map(str, common[:8]))}{', ...' if len(common) > 8 else ''}")
    return Count(state, None if len(having) == len(looked) else tuple(having))


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


def _json_nodes(query: Query) -> list | None:
    return None if query.nodes is None else list(query.nodes)


def _span(nodes: Iterable[Hashable]) -> str:
    items = list(nodes)
    return "{" + ", ".join(map(str, items[:6])) + (", ..." if len(items) > 6 else "") + "}"
