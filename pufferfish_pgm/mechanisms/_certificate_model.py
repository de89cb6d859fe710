"""The model and query of a calibration certificate: written, fingerprinted, checked (internal).

Part of :mod:`pufferfish_pgm.mechanisms._certificate` (``docs/certificates.md``). The query is
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

from ..errors import CertificateError, InvalidParameterError
from ..queries import (
    Count,
    Histogram,
    LinearQuery,
    Query,
    WindowedCount,
    WindowedHistogram,
)
from ..scenarios import BayesianNetworkScenario, MarkovChainScenario, Scenario, ScenarioClass
from ..secrets import Framework, JointSecret, NodeSecret
from ._certificate_values import canonical, floats, jsonable, lookup, plain, sha256

__all__ = ["PAIR_LIST_LIMIT", "check_framework", "pairs_json", "query_from", "query_json",
           "scenario_json", "scenario_parts"]

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


def _windowed_from(doc: dict, cls: ScenarioClass) -> Query:
    width = doc.get("width")
    if isinstance(width, bool) or not isinstance(width, int):
        raise CertificateError(f"the certificate's windowed query has width {width!r}; a "
                               "window width is a whole number of slots")
    try:
        query: Query = (WindowedHistogram(width) if doc["type"] == "WindowedHistogram" else
                        WindowedCount(lookup(doc.get("state"), cls.states_of(cls.nodes[0]),
                                              "state"), width))
        query.lipschitz_for(cls)  # a width longer than the chain, or a network, fails here
    except InvalidParameterError as err:
        raise CertificateError(f"the certificate's query does not fit the model: {err}") from err
    return query


def query_from(doc: Any, cls: ScenarioClass) -> Query:
    """The query a record of :func:`query_json` describes, in the model's own names."""
    if isinstance(doc, dict) and doc.get("type") in ("WindowedCount", "WindowedHistogram"):
        return _windowed_from(doc, cls)
    if not isinstance(doc, dict) or doc.get("type") not in ("Count", "LinearQuery", "Histogram"):
        raise CertificateError(f"the certificate's query {doc!r} is not a Count, LinearQuery, "
                               "Histogram or windowed query")
    nodes = doc.get("nodes")
    model_nodes = None if nodes is None else tuple(lookup(v, cls.nodes, "node") for v in nodes)
    states = cls.states_of((model_nodes or cls.nodes)[0])
    query: Query
    if doc["type"] == "Histogram":
        query = Histogram(model_nodes)
    elif doc["type"] == "Count":
        query = Count(lookup(doc["state"], states, "state"), model_nodes)
    else:
        weights = {lookup(s, states, "state"): w for s, w in doc["weights"]}
        query = LinearQuery(weights, model_nodes, integer=bool(doc["integer"]))
    query.lipschitz_for(cls)  # unknown states fail here, naming them
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


def check_framework(doc: dict, framework: Framework) -> None:
    """Refuse (:class:`CertificateError`) a framework whose scenarios or pairs are not the
    certified ones, naming the scenario and the tables that differ."""
    cls = framework.scenarios
    certified = doc["scenarios"]
    if len(certified) != len(cls):
        raise CertificateError(f"the framework has {len(cls)} scenario(s), the certificate was "
                               f"written for {len(certified)}")
    for entry, scenario in zip(certified, cls, strict=True):
        parts = scenario_parts(scenario)
        if sha256(parts) == entry["sha256"]:
            continue
        theirs = entry["parts"]
        what = [k for k in sorted(set(parts) | set(theirs)) if parts.get(k) != theirs.get(k)]
        label = [(f"the CPT of node {k[4:]}" if k.startswith("cpt ") else
                  "the set of nodes" if k == "nodes" else f"the {k}") for k in what]
        if "length" in what and isinstance(scenario, MarkovChainScenario):
            label[what.index("length")] = (f"the length (certified {entry.get('length')}, "
                                           f"given {scenario.length})")
        raise CertificateError(
            f"scenario {entry['index']} ({entry['name']!r} in the certificate, "
            f"{scenario.name!r} given) differs from the certified one: "
            + ", ".join(label[:5]) + (f" and {len(label) - 5} more" if len(label) > 5 else "")
            + (" differ" if len(label) > 1 else " differs")
            + "; the certificate is for another model")
    pairs = pairs_json(framework)
    if pairs["sha256"] != doc["pairs"]["sha256"]:
        raise CertificateError(
            f"the secret pairs differ: the certificate protects {doc['pairs']['description']} "
            f"({doc['pairs']['count']} pairs), the framework {pairs['count']} pairs that are "
            "not the same; build the framework with the pairs the certificate was written for")
