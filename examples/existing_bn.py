"""Plug an existing Bayesian network into a private release: ALARM from a BIF file.

The ALARM monitoring network (37 nodes, bnlearn repository) is the attacker's prior. We protect
three clinical diagnoses (HYPOVOLEMIA, LVFAILURE, ANAPHYLAXIS: whether each is TRUE or FALSE),
show the Markov quilt the planner picks for each, and calibrate the noise for a count of
alarming readings (measurements in state "HIGH").

Run: ``python examples/existing_bn.py``
"""

from __future__ import annotations

import pufferfish_pgm as pp
from pufferfish_pgm.scenarios._scenarios import default_model_path

SECRETS = ["HYPOVOLEMIA", "LVFAILURE", "ANAPHYLAXIS"]
READINGS = ["HR", "BP", "CO", "CVP", "PCWP", "HRBP", "HREKG", "HRSAT"]


def main(epsilon: float = 1.0) -> object:
    # alarm.bif has CPT columns that sum to 1 only within ~1e-7: they are rescaled by default
    # and listed in alarm.renormalized.
    alarm = pp.BayesianNetworkScenario.from_file(default_model_path("alarm.bif"))
    framework = pp.Framework(alarm, pp.secret_pairs(alarm, nodes=SECRETS))
    query = pp.Count("HIGH", nodes=READINGS)
    cal = pp.MarkovQuiltMechanism(epsilon=epsilon).calibrate(framework, query)
    for entry in cal.plan:
        print(f"{entry.node:>12}: quilt {sorted(entry.quilt)}  |nearby| {len(entry.nearby)}  "
              f"|remote| {len(entry.remote)}  influence {entry.influence:.3f}  "
              f"sigma {entry.sigma:.3f}{'  (trivial quilt)' if entry.trivial else ''}")
    print(f"Markov quilt mechanism: Laplace scale {cal.scale:.3f} for {query.name} over "
          f"{len(READINGS)} readings (group DP would need "
          f"{pp.GroupDPMechanism(epsilon=epsilon).calibrate(framework, query).scale:.1f})")
    return cal


if __name__ == "__main__":
    main()
