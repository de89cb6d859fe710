"""Exact Laplace calibration of a count on a long chain, one node at a time (internal).

The stored calibrator (:mod:`pufferfish_pgm.privacy_loss._bisection`) holds the law of the
query given every secret of every scenario at once: ``T · k`` laws of ``T + 1`` masses per
scenario, 30 GB for a week of minutes. Here nothing but one node's laws is held:

1. :func:`~pufferfish_pgm.privacy_loss._mgf_bracket.failing_scale` finds a scale ``λ_lo``
   that provably fails (a moment-generating-function limit of the audit), for every node at
   once; the exact scale is above it, so every law is cut for scales ``>= λ_lo``
   (:mod:`pufferfish_pgm.queries._truncated_count_law`, with the proven error bound added to
   every realised ε compared below).
2. *Raise on the likely binding nodes*: per scenario, the ``CANDIDATES`` nodes of largest
   limit loss at ``λ_lo`` get their laws (one backward pass that convolves only theirs); each
   node's pairs are audited at the running scale ``λ`` (starting at ``λ_lo``), and a node
   that fails raises ``λ`` by bisection on its own pairs between ``λ`` (failing) and a passing
   scale. The realised ε never increases with the scale (DESIGN §3.7), so nodes that passed
   earlier still pass.
3. *Audit every pair*: a full pass audits every node at the running scale and builds the
   report. A node that fails there raises the scale by its own bisection and the full pass is
   repeated at the new scale, so the returned scale is the exact one and has passed an exact
   audit of every pair. When the candidates held the binding node (the usual case: the
   binding pair's supremum sits at an extreme output, which the limit loss ranks), every law
   is computed once.

On a homogeneous chain with the same weights at every node, the nodes far from both ends are
bounded together instead (:mod:`pufferfish_pgm.privacy_loss._middle_nodes`, ``docs/
middle-nodes.md``): only the nodes near the ends and one representative are audited one by
one, and the result is kept only when it is within ``rtol`` of a proven lower end.

Each scenario's passes are independent, so they run on an executor when one is given.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .._budget import memory_budget
from .._parallel import run_map
from ..distributions._engine import logsumexp
from ..errors import LimitExceededError
from ..queries._engine import LOG_DELTA, loss_error_bound, stream_node_laws
from ..secrets import SkippedPair, check_possible
from ._audit_report import AuditReport, PairAudit
from ._bisection import SLACK, _bisect
from ._chain_streams import STREAM_CELLS, ChainStream, chain_streams, check_stream_sizes, cut_level
from ._mgf_bracket import failing_scale, node_limit_losses
from ._middle_nodes import MiddlePlan, held_bytes, middle_note, middle_plan
from ._node_tally import Tally
from ._pair_rows import Group

__all__ = ["STREAM_CELLS", "ChainStream", "chain_streams", "streamed_audit",
           "streamed_calibration"]

#: Nodes per scenario whose laws raise the scale before the full pass (largest limit loss).
CANDIDATES = 8


def _node_groups(stream: ChainStream, scale: float, only: frozenset | None = None,
                 log_delta: float = LOG_DELTA, shared: list | None = None,
                 hold: frozenset = frozenset()) -> Iterator[tuple[int, Group | None, list]]:
    """Per node ``t`` (of ``only``, default all): the Group of its possible pairs (None if
    none), whose ``pairs`` are indices into ``stream.nodes[t]`` (numbers travel between
    processes cheaply; the caller maps them back), and of those skipped ``(index, which
    secret is impossible, whether the other is possible)``. ``shared``, ``hold``: forward
    rows kept for a later pass, or read from an earlier one
    (:func:`~pufferfish_pgm.queries._truncated_count_law.stream_node_laws`)."""
    codes = {t: np.array([(a, b) for _, a, b in pairs], dtype=np.int64).reshape(-1, 2)
             for t, pairs in stream.nodes.items() if only is None or t in only}
    wanted = {t: np.unique(ab).tolist() for t, ab in codes.items()}
    m = stream.scenario
    for t, offset, rows in stream_node_laws(m.transition, m.initial_distribution,
                                            stream.weights, wanted, scale / stream.step,
                                            log_delta=log_delta, name=m.name, shared=shared,
                                            hold=hold):
        totals = logsumexp(rows, axis=1)
        where = np.searchsorted(np.array(wanted[t]), codes[t])       # (pairs, 2) row indices
        zero = ~np.isfinite(totals[where])
        lost = np.flatnonzero(zero.any(axis=1))
        skipped = list(zip(lost.tolist(), np.argmax(zero[lost], axis=1).tolist(),
                           (~zero[lost].all(axis=1)).tolist(), strict=True))
        keep = np.flatnonzero(~zero.any(axis=1))
        if not keep.size:
            yield t, None, skipped
            continue
        with np.errstate(invalid="ignore"):
            normal = rows - totals[:, None]
        grid = (stream.offset + stream.step * (offset + np.arange(rows.shape[1]))).astype(float)
        yield t, Group(stream.theta, m.name, (grid,), normal, where[keep, 0], where[keep, 1],
                       tuple(keep.tolist())), skipped


def _raise_node(group: Group, scale: float, epsilon: float, rtol: float) -> tuple[float, int]:
    """Smallest passing scale of one node's pairs above ``scale`` (which fails): steps up by
    growing gaps to a passing scale, then bisects from the last failing one."""
    every = [np.ones(len(group.pairs), dtype=bool)]
    lo, gap = scale, max(scale * rtol, 1e-300)
    for steps in range(1, 2000):     # the scale grows 4x per step: 2000 steps pass any float
        hi = scale + gap
        if group.epsilons(np.array([hi]))[0].max() <= epsilon * (1.0 + SLACK):
            _, hi, n = _bisect([group], every, epsilon, lo, hi, rtol, 0.0)
            return hi, steps + n
        lo, gap = hi, gap * 4.0
    raise LimitExceededError(
        f"no Laplace scale up to {hi:.3g} passes epsilon={epsilon!r} on a node of "
        f"{group.scenario!r}; the target is below what the audit can resolve in floating "
        "point: choose a larger epsilon")


def _raise_pass(task: tuple) -> tuple[float, int, float, list | None]:
    """Raise the scale on one stream's candidate nodes: the scale after them, evaluations,
    the representative middle node's own least scale (``lower`` without a plan), and the
    forward rows of the nodes of ``hold`` for the full pass (None when ``hold`` is None)."""
    stream, lower, epsilon, rtol, plan, hold, tick = task
    shared: list | None = None if hold is None else []
    level = cut_level(len(stream.weights), epsilon)
    limit = epsilon - loss_error_bound(len(stream.weights), level)
    middle = range(0) if plan is None else plan.nodes(len(stream.weights))
    outside = any(t not in middle for t in stream.nodes)     # else every node is bounded
    losses = node_limit_losses(stream.mgf_task(frozenset(middle)), lower) if outside else {}
    ranked = sorted((t for t in losses if t not in middle), key=losses.__getitem__)
    rep = (middle.start + middle.stop) // 2 if plan is not None else -1
    only = frozenset(ranked[max(len(ranked) - CANDIDATES, 0):]) | {rep}
    scale, steps, own = lower, 0, lower
    for t, group, _ in _node_groups(stream, lower, only, level, shared, hold or frozenset()):
        if tick is not None:
            tick(1)
        if group is None:
            continue
        steps += 1
        if t == rep and group.epsilons(np.array([lower]))[0].max() > limit * (1.0 + SLACK):
            own, n = _raise_node(group, lower, limit, rtol)    # its own least scale
            steps += n
        if group.epsilons(np.array([scale]))[0].max() > limit * (1.0 + SLACK):
            scale, n = _raise_node(group, scale, limit, rtol)
            steps += n
    return scale, steps, own, shared


def _final_pass(task: tuple) -> tuple[tuple, float | None, list]:
    """Every pair of one stream audited at ``scale`` as arrays (node, index into its pairs,
    ε, output), the skipped ``(node, *skipped of _node_groups)``, and the raised scale if some
    node failed (then the entries are stale and the pass is repeated above it; the raise
    continues through the stream, so one repeat suffices). ``epsilon`` None: audit only."""
    stream, scale, epsilon, rtol, skip, shared, tick = task
    level = cut_level(len(stream.weights), epsilon)
    limit = None if epsilon is None else epsilon - loss_error_bound(len(stream.weights), level)
    parts: list[tuple] = []
    skipped: list = []
    raised = None
    only = None if not skip else frozenset(stream.nodes) - frozenset(skip)
    for t, group, lost in _node_groups(stream, scale, only, level, shared):
        if tick is not None:
            tick(1)
        skipped += [(t, i, k, live) for i, k, live in lost]
        if group is None:
            continue
        at = raised or scale
        eps, where = group.epsilons(np.array([at]))
        if limit is not None and eps.max() > limit * (1.0 + SLACK):
            raised = _raise_node(group, at, limit, rtol)[0]
            continue
        parts.append((np.full(eps.size, t), np.array(group.pairs), eps, group.grids[0][where]))
    if not parts:
        return (np.empty(0, np.int64),) * 2 + (np.empty(0),) * 2, raised, skipped
    return tuple(np.concatenate(c) for c in zip(*parts, strict=True)), raised, skipped


def _light(stream: ChainStream) -> ChainStream:
    """``stream`` without its pair objects (workers need only the state indices)."""
    return replace(stream, nodes={t: tuple((None, a, b) for _, a, b in pairs)
                                  for t, pairs in stream.nodes.items()})


def _audited(streams: list[ChainStream], scale: float, epsilon: float | None, rtol: float,
             executor: Any, skips: list | None = None, tally: Tally | None = None,
             shared: list | None = None) -> tuple[list, float | None]:
    """Run the full pass on every stream (less the nodes of ``skips``, one range per
    stream; ``shared``: per stream the raise pass's forward rows, or None); the results and
    the highest raised scale."""
    sent = streams if executor is None else [_light(s) for s in streams]
    skips = skips or [range(0)] * len(streams)
    shared = shared or [None] * len(streams)
    counts = [len(set(s.nodes) - set(k)) for s, k in zip(streams, skips, strict=True)]
    tick = None if tally is None else tally.start(sum(counts), executor)
    done = run_map(_final_pass, [(s, scale, epsilon, rtol, k, rows, tick)
                                 for s, k, rows in zip(sent, skips, shared, strict=True)],
                   executor)
    if tally is not None:
        tally.blocks(counts, executor)
    higher = [r[1] for r in done if r[1] is not None]
    return done, (max(higher) if higher else None)


def _entries(streams: list[ChainStream], done: list) -> tuple[list[PairAudit], tuple, set]:
    """The audit entries and skipped pairs, with the streams' own pair objects, and the
    secrets seen possible: both of every audited pair's, and the other secret of a pair
    skipped for one impossible secret (under another θ it may be the only one possible)."""
    entries, skipped, seen = [], [], set()
    for stream, ((node, index, eps, output), _, lost) in zip(streams, done, strict=True):
        name = stream.scenario.name
        entries += [PairAudit(pair=stream.nodes[int(t)][int(i)][0], theta=stream.theta,
                              scenario=name, epsilon=float(e), output=float(w))
                    for t, i, e, w in zip(node, index, eps, output, strict=True)]
        for t, i, k, live in lost:
            pair = stream.nodes[t][i][0]
            zero = (pair.first, pair.second)[k]
            skipped.append(SkippedPair(pair, stream.theta, f"P({zero}) = 0 under {name!r}"))
            if live:
                seen.add((pair.second, pair.first)[k])
    seen |= {x for e in entries for x in (e.pair.first, e.pair.second)}
    return entries, tuple(skipped), seen


def streamed_audit(framework: Any, streams: list[ChainStream], scale: float, names: list,
                   coverage: str, discrete: bool = False, executor: Any = None) -> AuditReport:
    """The exact audit at ``scale``, streamed node by node (laws cut for that scale: each
    pair's ε is at most :func:`loss_error_bound` below the stored audit's value, besides the
    float rounding both share)."""
    check_stream_sizes(streams)
    done, _ = _audited(streams, scale, None, 0.0, executor)
    entries, skipped, possible = _entries(streams, done)
    check_possible(framework.pairs, possible)
    return _report(entries, scale, names, skipped, coverage, discrete)


def _report(entries: list[PairAudit], scale: float, names: list, skipped: tuple,
            coverage: str, discrete: bool) -> AuditReport:
    worst = max(entries, key=lambda e: e.epsilon, default=None)
    return AuditReport(epsilon=0.0 if worst is None else worst.epsilon, worst=worst,
                       pairs=tuple(entries), scales=(float(scale),), coordinates=tuple(names),
                       discrete=discrete, skipped=skipped, coverage=coverage)


@dataclass(frozen=True)
class StreamedResult:
    """What the streamed calibration found (see the module docstring)."""

    scale: float
    report: AuditReport
    lower: float
    steps: int


def streamed_calibration(framework: Any, streams: list[ChainStream], epsilon: float,
                         rtol: float, names: list, coverage: str,
                         executor: Any = None, middle: bool = True,
                         progress: Callable[[int, int], None] | None = None
                         ) -> StreamedResult | None:
    """Exact scale and final audit by streaming (None: no failing scale was found by the
    generating-function limits, e.g. when no noise may be needed; use the stored path).
    ``middle``: bound the middle nodes of long homogeneous chains together
    (:func:`_middle_skips`) instead of auditing them one by one. ``progress``: called as
    ``progress(done, total)`` with the nodes audited across the passes
    (:class:`~pufferfish_pgm.privacy_loss._node_tally.Tally`); never called when None."""
    plans = [_plan(s, epsilon) if middle else None for s in streams]
    check_stream_sizes(streams, plans)
    span = max(float(s.step) * float(s.weights.max(axis=1).sum()) for s in streams)
    lower = failing_scale([s.mgf_task(_middle(s, p)) for s, p in zip(streams, plans, strict=True)],
                          epsilon, max(span, 1.0) / epsilon)
    if lower is None:
        return None
    tally = None if progress is None else Tally(progress)
    raised, holds = _raise_all(streams, plans, lower, epsilon, rtol, executor, tally)
    skips, scale = _middle_skips(streams, plans, raised, lower, max(r[0] for r in raised),
                                 epsilon, rtol)
    shared: list | None = [
        r[3] if h is not None and frozenset(s.nodes) - frozenset(k) <= h else None
        for s, k, h, r in zip(streams, skips, holds, raised, strict=True)]
    done, scale, passes = _final_passes(streams, scale, epsilon, rtol, executor, skips, tally,
                                        shared)
    report = _final_report(framework, streams, skips, done, scale, names, coverage)
    return StreamedResult(scale, report, lower, sum(r[1] for r in raised) + passes)


def _raise_all(streams: list[ChainStream], plans: list, lower: float, epsilon: float,
               rtol: float, executor: Any, tally: Tally | None) -> tuple[list, list]:
    """The raise pass on every stream (:func:`_raise_pass`): its results, and per stream the
    nodes whose forward rows it holds for the full pass (:func:`_holds`)."""
    sent = streams if executor is None else [_light(s) for s in streams]
    counts = [_raise_count(s, p) for s, p in zip(streams, plans, strict=True)]
    tick = None if tally is None else tally.start(
        sum(counts), executor, later=sum(len(set(s.nodes) - _middle(s, p))
                                         for s, p in zip(streams, plans, strict=True)))
    holds = _holds(streams, plans, executor)
    raised = run_map(_raise_pass, [(s, lower, epsilon, rtol, p, h, tick)
                                   for s, p, h in zip(sent, plans, holds, strict=True)], executor)
    if tally is not None:
        tally.blocks(counts, executor)
    return raised, holds


def _final_passes(streams: list[ChainStream], scale: float, epsilon: float, rtol: float,
                  executor: Any, skips: list, tally: Tally | None, shared: list | None
                  ) -> tuple[list, float, int]:
    """The full pass, repeated above the raised scale until no node fails (once at most,
    see :func:`_final_pass`): its results, the final scale and the passes made (one per
    stream each time)."""
    passes = 0
    while True:
        done, higher = _audited(streams, scale, epsilon, rtol, executor, skips, tally, shared)
        passes += len(streams)
        shared = None       # consumed: a repeated pass computes its own forward rows
        if higher is None:
            break
        scale = higher
    if tally is not None:
        tally.finish()
    return done, scale, passes


def _final_report(framework: Any, streams: list[ChainStream], skips: list, done: list,
                  scale: float, names: list, coverage: str) -> AuditReport:
    """The audit report of the last full pass; every secret of the framework must have been
    seen possible (audited, or in a bounded middle)."""
    entries, skipped, possible = _entries(streams, done)
    for stream, skip in zip(streams, skips, strict=True):
        possible |= {x for t in skip for pair, _, _ in stream.nodes.get(t, ())
                     for x in (pair.first, pair.second)}
    check_possible(framework.pairs, possible)
    return _report(entries, scale, names, skipped, coverage + middle_note(
        [frozenset(k) & frozenset(st.nodes) for st, k in zip(streams, skips, strict=True)]),
                   False)


def _middle(stream: ChainStream, plan: MiddlePlan | None) -> frozenset:
    """A plan's middle nodes less the representative (empty without a plan): their limit
    losses are within Lemma 2's drift of the representative's, so the bracket skips them."""
    if plan is None:
        return frozenset()
    middle = plan.nodes(len(stream.weights))
    return frozenset(middle) - {(middle.start + middle.stop) // 2}


def _raise_count(stream: ChainStream, plan: MiddlePlan | None) -> int:
    """Nodes the raise pass audits: the candidates outside the middle, and the
    representative middle node (see :func:`_raise_pass`)."""
    middle = range(0) if plan is None else plan.nodes(len(stream.weights))
    outside = sum(t not in middle for t in stream.nodes)
    return min(CANDIDATES, outside) + int(plan is not None
                                          and (middle.start + middle.stop) // 2 in stream.nodes)


def _plan(stream: ChainStream, epsilon: float) -> MiddlePlan | None:
    m = stream.scenario
    return middle_plan(m.transition, m.initial_distribution, stream.weights, stream.codes,
                       epsilon)


def _middle_skips(streams: list[ChainStream], plans: list, raised: list, lower: float,
                  scale: float, epsilon: float, rtol: float) -> tuple[list, float]:
    """The nodes left out of the full pass, and the scale raised for the middle bounds.

    Each plan's bound covers its middle nodes (``docs/middle-nodes.md``), so the scale is
    raised to where every bound passes. It is kept only when that is within ``rtol`` of a
    proven lower end of the exact scale: the representative middle node's own least scale
    (its exact laws) or the raise pass's scale; otherwise no node is left out (full audit)."""
    if not any(plans):
        return [frozenset()] * len(streams), scale
    bounded = lower
    for stream, plan in zip(streams, plans, strict=True):
        if plan is not None:
            limit = epsilon - loss_error_bound(len(stream.weights),
                                               cut_level(len(stream.weights), epsilon))
            bounded = max(bounded, _bounded_scale(stream, plan, scale, limit, rtol))
    floor = max([scale] + [r[2] for r in raised])
    if bounded > floor * (1.0 + rtol):
        return [frozenset()] * len(streams), scale
    return [_middle(s, p) for s, p in zip(streams, plans, strict=True)], max(scale, bounded)


def _bounded_scale(stream: ChainStream, plan: MiddlePlan, scale: float, limit: float,
                   rtol: float) -> float:
    """Where the plan's bound passes, as far as :func:`_middle_skips` needs it: ``scale``
    itself when the bound passes there (the least such scale is then at most ``scale``, and
    the caller keeps the larger of the two), else the least passing scale above ``scale``
    (to ``rtol``). One evaluation of the bound where the middle does not bind, instead of a
    bisection from the lower bracket."""
    at = scale / stream.step
    if plan.cls.bound(at) <= limit * (1.0 + SLACK):
        return scale
    return stream.step * plan.least_scale(at, limit, rtol, SLACK)


def _holds(streams: list[ChainStream], plans: list, executor: Any) -> list:
    """Per stream, the nodes whose forward rows the raise pass keeps for the full pass (the
    nodes outside the plan's middle, and its representative), or None: on an executor (the
    rows would travel between processes), or when the streams' rows held together would
    take more than a quarter of the memory budget (each pass holds one stream's only)."""
    if executor is not None or sum(held_bytes(s.weights, p) for s, p in
                                   zip(streams, plans, strict=True)) > memory_budget() // 4:
        return [None] * len(streams)
    return [frozenset(s.nodes) - _middle(s, p) for s, p in zip(streams, plans, strict=True)]

