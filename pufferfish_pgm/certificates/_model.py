"""The model and query of a calibration certificate: written, fingerprinted, checked (internal).

Part of :mod:`pufferfish_pgm.certificates._document` (``docs/certificates.md``). The query is
written as a small JSON record and rebuilt against the model; every scenario is fingerprinted
table by table (names left out) and the secret pairs as a canonical sorted list, so that
:func:`check_framework` can say which scenario and which table differ.

Examples
--------
>>> from pufferfish_pgm.scenarios import MarkovChainScenario
>>> from pufferfish_pgm.secrets import Framework
>>> fw = Framework(MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 4))
>>> query_json(Count(1))
{'type': 'Count', 'state': 1, 'nodes': None}
>>> query_from(query_json(Count(1)), fw.scenarios) == Count(1)
True
>>> sorted(scenario_parts(fw.scenarios[0]))
['initial', 'length', 'states', 'transition']
>>> check_framework({"scenarios": [scenario_json(0, fw.scenarios[0])],
...                  "pairs": pairs_json(fw)}, fw)   # the same model: no error
"""

from __future__ import annotations

from typing import Any

from ..errors import (
    CertificateError,
    InvalidParameterError,
    ParameterTypeError,
    UnknownNodeError,
    UnknownStateError,
)
from ..queries import (
    Count,
    Histogram,
    LinearQuery,
    Query,
    WindowedCount,
    WindowedHistogram,
)
from ..scenarios import BayesianNetworkScenario, MarkovChainScenario, Scenario, ScenarioClass
from ..scenarios._engine import PosteriorRecord, posterior_draws, posterior_of
from ..secrets import Framework, JointSecret, NodeSecret
from ._schema import (
    REPAIR,
    bounded_int,
    check,
    child,
    decimal,
    describe,
    field,
    finite_float,
    refuse,
)
from ._values import canonical, floats, jsonable, lookup, plain, sha256

__all__ = ["PAIR_LIST_LIMIT", "check_framework", "pairs_json", "posterior_json",
           "posterior_statement", "query_from", "query_json", "read_posterior", "scenario_json",
           "scenario_parts"]

#: Frameworks with all pairs of every node are fingerprinted pair by pair up to this many pairs
#: (so that listing them explicitly gives the same fingerprint), by their description beyond.
PAIR_LIST_LIMIT = 100_000


# --- the query ------------------------------------------------------------------------------

def query_json(query: Query) -> dict:
    """The query as a JSON record (``nodes: null`` means every node)."""
    nodes = None if query.nodes is None else [plain(v) for v in query.nodes]
    if type(query) is Histogram:
        return {"type": "Histogram", "nodes": nodes}
    if type(query) is Count:
        return {"type": "Count", "state": plain(query.state), "nodes": nodes}
    if type(query) is LinearQuery:
        return {"type": "LinearQuery", "nodes": nodes, "integer": query.integer,
                "weights": [[plain(s), jsonable(float(w) if not query.integer else int(w))]
                            for s, w in query.weights]}
    if type(query) is WindowedCount:
        return {"type": "WindowedCount", "state": plain(query.state), "width": query.width}
    if type(query) is WindowedHistogram:
        return {"type": "WindowedHistogram", "width": query.width}
    raise CertificateError(f"cannot certify a {type(query).__name__} query; certificates "
                           "describe Count, LinearQuery, Histogram and the windowed queries")


_QUERY_TYPES = ("Count", "LinearQuery", "Histogram", "WindowedCount", "WindowedHistogram")


def _nodes(doc: dict, cls: ScenarioClass) -> tuple | None:
    """The query's nodes in the model's names (None: every node)."""
    nodes = field(doc, "nodes", list, null=True, at="query")
    if nodes == []:
        raise refuse("query.nodes", nodes, "null or a non-empty list of nodes")
    return None if nodes is None else tuple(lookup(v, cls.nodes, "node") for v in nodes)


def _weights(doc: dict, states: tuple) -> tuple[dict, bool]:
    """The weights ``{state: w}`` of a LinearQuery record and whether they are integers."""
    integer = field(doc, "integer", bool, at="query")
    weights = {}
    for i, item in enumerate(field(doc, "weights", list, at="query")):
        where = f"query.weights[{i}]"
        if not isinstance(item, list) or len(item) != 2:
            raise refuse(where, item, "a pair [state, weight]")
        w = check(item[1], f"{where}[1]", int if integer else float)
        if abs(w) > 1e308:
            raise refuse(f"{where}[1]", w, "a finite weight")
        weights[lookup(item[0], states, "state")] = w
    return weights, integer


def _query_of(doc: dict, kind: str, cls: ScenarioClass) -> Query:
    if kind in ("WindowedCount", "WindowedHistogram"):
        width = bounded_int(doc, "width", 1, 2**62, at="query")
        if kind == "WindowedHistogram":
            return WindowedHistogram(width)
        state = field(doc, "state", object, at="query")
        return WindowedCount(lookup(state, cls.states_of(cls.nodes[0]), "state"), width)
    nodes = _nodes(doc, cls)
    states = cls.states_of((nodes or cls.nodes)[0])
    if kind == "Histogram":
        return Histogram(nodes)
    if kind == "Count":
        return Count(lookup(field(doc, "state", object, at="query"), states, "state"), nodes)
    weights, integer = _weights(doc, states)
    return LinearQuery(weights, nodes, integer=integer)


def query_from(doc: Any, cls: ScenarioClass) -> Query:
    """The query a record of :func:`query_json` describes, in the model's own names."""
    kind = field(doc, "type", str, at="query")
    if kind not in _QUERY_TYPES:
        raise refuse("query.type", kind, "one of " + ", ".join(_QUERY_TYPES))
    try:
        query = _query_of(doc, kind, cls)
        query.lipschitz_for(cls)  # unknown states, a window longer than the chain fail here
    except (InvalidParameterError, ParameterTypeError, UnknownNodeError,
            UnknownStateError) as err:
        raise CertificateError(f"the certificate's query does not fit the model: {err}") from None
    return query


# --- fingerprints of the framework ----------------------------------------------------------

def scenario_parts(scenario: Scenario) -> dict[str, str]:
    """One fingerprint per table of a scenario (names are left out: they change nothing)."""
    if isinstance(scenario, MarkovChainScenario):
        initial = "any" if scenario.initial_is_any else floats(scenario.initial)
        return {"transition": sha256(floats(scenario.transition)),
                "initial": sha256(initial), "length": sha256(scenario.length),
                "states": sha256([plain(s) for s in scenario.states])}
    if isinstance(scenario, BayesianNetworkScenario):
        tables = scenario.tables
        parts = {"nodes": sha256(sorted((plain(v) for v in tables.nodes), key=canonical))}
        for v in tables.nodes:
            parts[f"cpt {canonical(plain(v))}"] = sha256({
                "states": [plain(s) for s in tables.states[v]],
                "parents": [plain(p) for p in tables.parents[v]],
                "cpt": floats(tables.cpts[v])})
        return parts
    raise CertificateError(f"cannot fingerprint a {type(scenario).__name__} scenario")


def scenario_json(i: int, scenario: Scenario) -> dict:
    """The certificate's entry for scenario ``i``: its fingerprints and, for chains, length."""
    parts = scenario_parts(scenario)
    out: dict[str, Any] = {"index": i, "name": scenario.name,
                           "kind": "chain" if isinstance(scenario, MarkovChainScenario)
                           else "network", "sha256": sha256(parts), "parts": parts}
    if isinstance(scenario, MarkovChainScenario):
        out["length"] = scenario.length
    return out


def _secret_json(secret: NodeSecret | JointSecret) -> list:
    return sorted(([plain(n), plain(s)] for n, s in secret.evidence.items()), key=canonical)


def pairs_json(framework: Framework) -> dict:
    """The count, description and fingerprint of the framework's secret pairs."""
    explicit = framework._explicit is not None
    count = framework.pair_count
    if explicit or count <= PAIR_LIST_LIMIT:
        listed = sorted((sorted([_secret_json(p.first), _secret_json(p.second)], key=canonical)
                         for p in framework.pairs), key=canonical)
        return {"count": count, "description": f"{count} pairs, fingerprinted one by one",
                "sha256": sha256(listed)}
    skipped = [[plain(n), plain(s)] for n, s in framework.skipped_secrets]
    if not skipped:
        return {"count": count, "description": "every pair of states of every node",
                "sha256": sha256({"all pairs of every node": True})}
    return {"count": count, "description": f"every pair of states of every node but the "
                                           f"{len(skipped)} secret(s) impossible under every "
                                           "scenario",
            "sha256": sha256({"all pairs of every node": True, "skipped": skipped})}


def _entry(raw: Any, i: int) -> dict:
    """Scenario entry ``i`` of a certificate, every field of it checked for its type."""
    at = f"scenarios[{i}]"
    bounded_int(raw, "index", i, i, at=at)
    entry = {"index": i, "name": field(raw, "name", str, at=at),
             "kind": field(raw, "kind", str, at=at), "sha256": field(raw, "sha256", str, at=at),
             "parts": field(raw, "parts", dict, at=at)}
    for key, value in entry["parts"].items():
        check(value, child(f"{at}.parts", key), str)
    if "length" in raw:
        entry["length"] = field(raw, "length", int, at=at)
    return entry


def _differs(entry: dict, scenario: Scenario) -> str:
    """What differs between a certified scenario entry and ``scenario`` (its fingerprints)."""
    parts, theirs = scenario_parts(scenario), entry["parts"]
    what = [k for k in sorted(set(parts) | set(theirs)) if parts.get(k) != theirs.get(k)]
    label = [(f"the CPT of node {k[4:]}" if k.startswith("cpt ") else
              "the set of nodes" if k == "nodes" else f"the {k}") for k in what]
    if "length" in what and isinstance(scenario, MarkovChainScenario):
        label[what.index("length")] = (f"the length (certified {entry.get('length')}, "
                                       f"given {scenario.length})")
    if not label:
        return "its fingerprint differs"
    return (", ".join(label[:5]) + (f" and {len(label) - 5} more" if len(label) > 5 else "")
            + (" differ" if len(label) > 1 else " differs"))


def _check_scenario(raw: Any, i: int, scenario: Scenario) -> None:
    entry = _entry(raw, i)
    expected = scenario_json(i, scenario)
    if entry["sha256"] != expected["sha256"]:
        raise CertificateError(
            f"scenario {i} ({describe(entry['name'])} in the certificate, {scenario.name!r} "
            f"given) differs from the certified one: {_differs(entry, scenario)}; the "
            "certificate is for another model")
    for key in ("kind", "parts", "length"):  # what its sha256 fingerprints must be written
        if entry.get(key) != expected.get(key):
            raise CertificateError(
                f"the certificate's scenarios[{i}].{key} is "
                f"{describe(entry[key]) if key in entry else 'missing'}, not what its "
                f"scenarios[{i}].sha256 fingerprints ({describe(expected.get(key))})" + REPAIR)


def check_framework(doc: dict, framework: Framework) -> None:
    """Refuse (:class:`CertificateError`) a framework whose scenarios or pairs are not the
    certified ones, naming the scenario and the tables that differ."""
    cls = framework.scenarios
    certified = field(doc, "scenarios", list)
    if len(certified) != len(cls):
        raise CertificateError(f"the framework has {len(cls)} scenario(s), the certificate was "
                               f"written for {len(certified)}")
    for i, (raw, scenario) in enumerate(zip(certified, cls, strict=True)):
        _check_scenario(raw, i, scenario)
    _check_posterior(doc, cls)
    pairs = pairs_json(framework)
    sha, count = field(doc, "pairs.sha256", str), bounded_int(doc, "pairs.count", 0, 2**63)
    description = field(doc, "pairs.description", str)
    if sha != pairs["sha256"]:
        raise CertificateError(
            f"the secret pairs differ: the certificate protects {description[:200]} "
            f"({count} pairs), the framework {pairs['count']} pairs that are "
            "not the same; build the framework with the pairs the certificate was written for")
    if count != pairs["count"]:
        raise CertificateError(f"the certificate's pairs.count is {count}, but the pairs its "
                               f"pairs.sha256 fingerprints are {pairs['count']} pairs" + REPAIR)


# --- a class drawn from a posterior (docs/posterior.md) --------------------------------------

def posterior_statement(record: PosteriorRecord) -> str:
    """The coverage statement a posterior class supports, in one sentence."""
    blocks = ("" if record.period is None else f", one matrix per block of {record.period} "
              f"slots shrunk by {record.shrinkage} pseudo-transitions to the pooled fit: an "
              "empirical-Bayes posterior")
    return (f"with probability >= {record.confidence} over the {record.draws} draws, the "
            f"posterior mass of chains needing more Laplace noise than the certified scale is "
            f"<= {1 - record.coverage:.6g} (Dirichlet prior {record.prior} per cell{blocks}; "
            "docs/posterior.md)")


def posterior_json(cls: ScenarioClass, noisy: bool) -> dict:
    """``{"posterior": ...}`` for a class drawn by ``ScenarioClass.from_posterior`` (its
    prior, counts fingerprint, draws, coverage, confidence, seed, length, and period and
    shrinkage for a time-varying class; never the counts),
    else ``{}``. Integer noise is refused: its coverage is not a threshold statement."""
    record = posterior_of(cls)
    if record is None:
        return {}
    if noisy:
        raise CertificateError(
            "cannot certify integer (optimal) noise on a class drawn from a posterior: its "
            "noise law is not one Laplace scale, so the coverage statement of "
            "docs/posterior.md does not hold for it; calibrate a Laplace mechanism "
            "(ExactLaplaceMechanism, MarkovQuiltMechanism, ...) or certify a plain class")
    return {"posterior": {
        "prior": record.prior, "counts_sha256": record.counts_sha256, "draws": record.draws,
        "coverage": record.coverage, "confidence": record.confidence,
        "seed": str(record.seed), "length": record.length,
        **({} if record.period is None else {"period": record.period,
                                             "shrinkage": record.shrinkage}),
        "statement": posterior_statement(record)}}


def read_posterior(doc: dict) -> dict | None:
    """The certificate's ``posterior`` record with every field checked (None: absent)."""
    if "posterior" not in doc:
        return None
    at, sub = "posterior", field(doc, "posterior", dict)
    out = {"prior": finite_float(sub, "prior", positive=True, at=at),
           "counts_sha256": field(sub, "counts_sha256", str, at=at),
           "draws": bounded_int(sub, "draws", 1, 2**40, at=at),
           "coverage": finite_float(sub, "coverage", at=at),
           "confidence": finite_float(sub, "confidence", at=at),
           "seed": decimal(field(sub, "seed", str, at=at), "posterior.seed"),
           "length": bounded_int(sub, "length", 1, 2**62, at=at),
           "period": bounded_int(sub, "period", 1, 2**62, at=at) if "period" in sub else None,
           "shrinkage": finite_float(sub, "shrinkage", at=at) if "period" in sub else None}
    for key in ("coverage", "confidence"):
        if not 0 < out[key] < 1:
            raise refuse(f"posterior.{key}", out[key], "a number in (0, 1)")
    if out["draws"] < posterior_draws(out["coverage"], out["confidence"]):
        raise CertificateError(
            f"the certificate's posterior.draws is {out['draws']}, fewer than the "
            f"{posterior_draws(out['coverage'], out['confidence'])} its coverage and "
            "confidence need" + REPAIR)
    return out


def _check_posterior(doc: dict, cls: ScenarioClass) -> None:
    """A certified posterior record agrees with the class's own record, when it has one."""
    certified, record = read_posterior(doc), posterior_of(cls)
    if certified is not None and "noise" in doc:
        raise CertificateError("the certificate records integer noise on a posterior class, "
                               "which pufferfish_pgm refuses to certify" + REPAIR)
    if certified is None or record is None:
        return
    for key, value in certified.items():
        if getattr(record, key) != value:
            raise CertificateError(
                f"the class was drawn with {key} = {getattr(record, key)!r}, the certificate "
                f"records posterior.{key} = {value!r}; build the class with "
                "ScenarioClass.from_posterior and the certified options")
