"""The one list of mechanisms: what each guarantees, on which models, and its noise for a count.

The README's mechanism table and the documentation's mechanisms page are generated from
:data:`CATALOGUE` (``tests/package/test_docs_site.py`` fails when the README's copy differs;
regenerate it with ``python -m pufferfish_pgm.mechanisms._catalogue``). The command-line names are
those of :func:`~pufferfish_pgm.mechanisms._registry.mechanism`.

Examples
--------
>>> [entry.name for entry in CATALOGUE][:3]
['EntryDPMechanism', 'GroupDPMechanism', 'MarkovQuiltMechanism']
>>> mechanism_table().splitlines()[0]
'| mechanism | CLI name | models | guarantee | noise for a count |'
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CATALOGUE", "MechanismEntry", "mechanism_table"]


@dataclass(frozen=True)
class MechanismEntry:
    """One row of the mechanism list.

    Attributes
    ----------
    name : str
        The public name (``pp.<name>``).
    cli : str
        The command-line name (``calibrate --mechanism``), or ``""`` when there is none.
    models : str
        The scenarios it calibrates on.
    guarantee : str
        What a release with it is proven to satisfy.
    noise : str
        The noise it adds for a count, and where its details are.
    """

    name: str
    cli: str
    models: str
    guarantee: str
    noise: str


CATALOGUE: tuple[MechanismEntry, ...] = (
    MechanismEntry("EntryDPMechanism", "entry", "chains, networks",
                   "ε-DP for one entry; **not** Pufferfish private under correlation "
                   "(the auditor shows how much it leaks)", "L/ε"),
    MechanismEntry("GroupDPMechanism", "group", "chains, networks",
                   "ε-DP for the whole record, hence ε-Pufferfish for every Θ", "L·n/ε"),
    MechanismEntry("MarkovQuiltMechanism", "mqm", "chains, networks",
                   "ε-Pufferfish by Markov quilts [SWC17]: exact max-influence, best quilt "
                   "per secret node", "L·card(nearby)/(ε − influence)"),
    MechanismEntry("MQMApproxMechanism", "", "every chain with at least a given eigengap and "
                   "π_min", "ε-Pufferfish for that whole family of chains [SWC17]",
                   "from (π_min, eigengap)"),
    MechanismEntry("ExactQuiltMechanism", "exact-quilt", "chains (counts, windowed queries)",
                   "ε-Pufferfish: per node the best quilt with the *exact* Laplace loss of "
                   "its nearby block; never noisier than MQM", "between MQM and exact "
                   "(exact-quilt.md)"),
    MechanismEntry("WassersteinMechanism", "wasserstein", "chains, networks",
                   "ε-Pufferfish [SWC17]: W∞ between the query's conditional laws", "W∞/ε"),
    MechanismEntry("KantorovichMechanism", "kantorovich", "chains, networks",
                   "Ding's Prop. 2 (equals W∞ in 1-D), or eq. 20 with ``relaxed=True`` "
                   "(CLI ``kantorovich-relaxed``), audited", "≤ W∞/ε"),
    MechanismEntry("ExactLaplaceMechanism", "exact", "chains, networks",
                   "the smallest Laplace scale the exact auditor proves ε-Pufferfish for the "
                   "finite class", "bisection and a final audit of every pair (real-sizes.md)"),
    MechanismEntry("OptimalNoiseMechanism", "optimal", "chains, networks (integer queries)",
                   "ε-Pufferfish with the integer noise law of least E|Z| (an LP), audited on "
                   "the quantised law sampled; ``dp_epsilon`` adds a plain-DP floor",
                   "LP with constraint generation (optimal-noise.md)"),
    MechanismEntry("GK16Mechanism", "gk16", "binary chains",
                   "Ghosh & Kleinberg's inferential privacy, a baseline", "L/ε_DP"),
    MechanismEntry("BlowfishLaplaceMechanism", "", "independent records with a policy graph",
                   "Blowfish privacy [HMD14]", "policy sensitivity/ε"),
    MechanismEntry("ContinuousSum", "", "sums of continuous attributes",
                   "values protected to ±k [KM12 §7.1]", "4k/ε"),
    MechanismEntry("PlanarLaplace", "", "locations in the plane",
                   "geo-indistinguishability [ABCP13]", "r/ε, radial"),
    MechanismEntry("multiuser", "", "several users' records",
                   "the multi-user theorems and lemmas of [DLYZ], and the exact scale",
                   "multiuser.md"),
)


def mechanism_table() -> str:
    """The catalogue as a Markdown table (the README's and the docs' mechanism list).

    Examples
    --------
    >>> table = mechanism_table().splitlines()
    >>> len(table) == len(CATALOGUE) + 2, table[3][:32]
    (True, '| `GroupDPMechanism` | `group` |')
    """
    rows = ["| mechanism | CLI name | models | guarantee | noise for a count |",
            "|---|---|---|---|---|"]
    for entry in CATALOGUE:
        cli = f"`{entry.cli}`" if entry.cli else "—"
        guarantee = entry.guarantee.replace("``", "`").replace("|", "\\|")
        rows.append(f"| `{entry.name}` | {cli} | {entry.models} | {guarantee} | "
                    f"{entry.noise.replace('|', chr(92) + '|')} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(mechanism_table())
