"""Correlated records: people linked by family ties, protect each person's value, release a count.

Three families of four: two parents whose flu status is correlated with a shared household
exposure, and two children who catch it from their parents. Records inside a family are
correlated, so entry-level differential privacy underestimates what a count reveals about one
person. The attacker may believe a mild or a contagious season (two scenarios).

Run: ``python examples/correlated_records.py``
"""

from __future__ import annotations

from pgmpy.factors.discrete import TabularCPD
from pgmpy.models import DiscreteBayesianNetwork

import pufferfish_pgm as pp


def family_network(contagion: float, families: int = 3) -> DiscreteBayesianNetwork:
    """A household node per family; parents depend on it, children on both parents."""
    model = DiscreteBayesianNetwork()
    states = ["healthy", "flu"]
    for f in range(families):
        home, mum, dad, kid1, kid2 = (f"home{f}", f"mum{f}", f"dad{f}", f"kid{f}a", f"kid{f}b")
        model.add_edges_from([(home, mum), (home, dad), (mum, kid1), (dad, kid1),
                              (mum, kid2), (dad, kid2)])
        model.add_cpds(TabularCPD(home, 2, [[0.7], [0.3]],
                                  state_names={home: ["clean", "exposed"]}))
        for adult in (mum, dad):
            model.add_cpds(TabularCPD(adult, 2, [[0.9, 0.9 - contagion], [0.1, 0.1 + contagion]],
                                      evidence=[home], evidence_card=[2],
                                      state_names={adult: states, home: ["clean", "exposed"]}))
        for kid in (kid1, kid2):
            p = [0.05, 0.05 + contagion, 0.05 + contagion, 0.05 + 1.5 * contagion]
            model.add_cpds(TabularCPD(kid, 2, [[1 - x for x in p], p], evidence=[mum, dad],
                                      evidence_card=[2, 2],
                                      state_names={kid: states, mum: states, dad: states}))
    return model


def main(epsilon: float = 1.0) -> dict:
    theta = pp.ScenarioClass([pp.BayesianNetworkScenario(family_network(c), name=name)
                              for c, name in ((0.2, "mild season"), (0.5, "contagious season"))])
    people = [v for v in theta.nodes if not str(v).startswith("home")]
    framework = pp.Framework(theta, pp.secret_pairs(theta, nodes=people))
    query = pp.Count("flu", nodes=people)
    results = {}
    for mech in (pp.EntryDPMechanism(epsilon=epsilon), pp.GroupDPMechanism(epsilon=epsilon),
                 pp.MarkovQuiltMechanism(epsilon=epsilon),
                 pp.WassersteinMechanism(epsilon=epsilon),
                 pp.ExactLaplaceMechanism(epsilon=epsilon)):
        cal = mech.calibrate(framework, query)
        realised = pp.audit(framework, query, cal.scale).epsilon
        results[mech.name] = (cal.scale, realised)
        verdict = "ok" if realised <= epsilon * (1 + 1e-9) else "LEAKS"
        print(f"{mech.name:>12}: Laplace scale {cal.scale:7.3f}  realised eps {realised:.3f} "
              f"{verdict}")
    record = {v: "clean" if v.startswith("home") else "healthy" for v in theta.nodes}
    record.update({"home0": "exposed", "mum0": "flu", "kid0a": "flu"})
    cal = pp.ExactLaplaceMechanism(epsilon=epsilon).calibrate(framework, query)
    print(f"true count 2; released {cal.release(record).value} (scale {cal.scale:.3f})")
    return results


if __name__ == "__main__":
    main()
