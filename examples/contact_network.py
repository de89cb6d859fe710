"""A contact network: how many people are infected, protecting each person's status.

Sixty people in a small-world contact network (Watts–Strogatz: each knows their four nearest
neighbours, a tenth of the links rewired). The attacker believes infection spreads along the
links weakly or strongly (two scenarios), written two ways: a noisy-OR Bayesian network over
an orientation of the graph (``directed=True``), and an Ising-type undirected model
(``directed=False``, a ``pp.MarkovNetworkScenario``), both built from the networkx graph in
one call (``pp.scenarios.contagion``). The example prints, for each prior, the noise of each
mechanism against group DP and entry DP, and what the exact auditor says each really leaks:
entry DP promises ε = 1 and leaks more, because a neighbour's status tells on a person. The
last column compares the noise E|Z| with the count's standard deviation under the prior: for
one small network even the exact calibration's noise is about as large as the answer's spread,
which is what Pufferfish privacy costs on correlated records (sum over several networks, or
choose a larger ε).

A connected network is one component, so its exact count law needs elimination over the whole
graph: fine at sixty people, refused (with the size, before any work) at a thousand
(docs/guide/correlated-records.md, "Contact networks").

Run: ``python examples/contact_network.py``
"""

from __future__ import annotations

import warnings

import networkx as nx

import pufferfish_pgm as pp


def contact_prior(people: int, *, directed: bool, seed: int = 7) -> pp.ScenarioClass:
    """Two contagion scenarios (weak and strong spread) on one Watts–Strogatz graph."""
    graph = nx.watts_strogatz_graph(people, 4, 0.1, seed=seed)
    return pp.ScenarioClass([
        pp.scenarios.contagion(graph, base=0.05, spread=spread, directed=directed,
                               name=f"spread {spread}")
        for spread in (0.2, 0.4)])


def main(epsilon: float = 1.0, people: int = 60) -> dict[tuple[str, str], tuple[float, float]]:
    """{(prior, mechanism): (Laplace scale, exactly audited ε)}, printed as a table (the
    usefulness warnings become its last column)."""
    query = pp.Count("infected")
    mechanisms = [pp.EntryDPMechanism(epsilon=epsilon), pp.ExactLaplaceMechanism(epsilon=epsilon),
                  pp.MarkovQuiltMechanism(epsilon=epsilon), pp.GroupDPMechanism(epsilon=epsilon)]
    results = {}
    print(f"{people} people in a Watts–Strogatz contact network, ε = {epsilon}")
    print(f"{'prior':<12}{'mechanism':<16}{'Laplace scale':>14}{'audited ε':>12}"
          f"{'E|Z| / sd':>11}")
    for prior, directed in (("noisy-OR", True), ("Ising", False)):
        framework = pp.Framework(contact_prior(people, directed=directed))
        for mech in mechanisms:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", pp.UsefulnessWarning)
                cal = mech.calibrate(framework, query)
            realised = pp.audit(framework, query, cal.scale).epsilon
            use = cal.usefulness()
            results[prior, mech.name] = (cal.scale, realised)
            print(f"{prior:<12}{mech.name:<16}{cal.scale:>14.3f}{realised:>12.3f}"
                  f"{use.mean_abs_error / use.spread:>11.2f}")
    return results


if __name__ == "__main__":
    main()
