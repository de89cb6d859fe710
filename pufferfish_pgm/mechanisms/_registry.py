"""The mechanisms by their command-line names, in the order the CLI and plots compare them.

Examples
--------
>>> mechanism("kantorovich-relaxed", 0.5)
KantorovichMechanism(epsilon=0.5, relaxed=True, max_grid=50000000)
"""

from __future__ import annotations

from .base import Mechanism
from .baselines import EntryDPMechanism, GroupDPMechanism
from .exact import ExactLaplaceMechanism
from .kantorovich import KantorovichMechanism
from .markov_quilt import MarkovQuiltMechanism
from .wasserstein import WassersteinMechanism

__all__ = ["MECHANISM_ORDER", "mechanism"]

MECHANISM_ORDER = ("entry", "group", "mqm", "wasserstein", "kantorovich", "kantorovich-relaxed",
                   "exact")

_BY_NAME: dict[str, type[Mechanism]] = {
    "mqm": MarkovQuiltMechanism, "group": GroupDPMechanism, "entry": EntryDPMechanism,
    "wasserstein": WassersteinMechanism, "kantorovich": KantorovichMechanism,
    "exact": ExactLaplaceMechanism,
}


def mechanism(name: str, epsilon: float) -> Mechanism:
    """A mechanism object from its command-line name (one of :data:`MECHANISM_ORDER`)."""
    if name == "kantorovich-relaxed":
        return KantorovichMechanism(epsilon=epsilon, relaxed=True)
    return _BY_NAME[name](epsilon=epsilon)
