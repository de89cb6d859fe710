"""The mechanisms by their command-line names, in the order the CLI and plots compare them.

Examples
--------
>>> mechanism("kantorovich-relaxed", 0.5)
KantorovichMechanism(epsilon=0.5, relaxed=True, max_grid=50000000)
>>> mechanism("exact-quilt", 0.5).name
'ExactQuilt'
"""

from __future__ import annotations

from .base import Mechanism
from .baselines import EntryDPMechanism, GroupDPMechanism
from .exact import ExactLaplaceMechanism
from .exact_quilt import ExactQuiltMechanism
from .gk16 import GK16Mechanism
from .kantorovich import KantorovichMechanism
from .markov_quilt import MarkovQuiltMechanism
from .optimal import OptimalNoiseMechanism
from .wasserstein import WassersteinMechanism

__all__ = ["EXTRA_NAMES", "MECHANISM_ORDER", "mechanism"]

MECHANISM_ORDER = ("entry", "group", "mqm", "exact-quilt", "wasserstein", "kantorovich",
                   "kantorovich-relaxed", "exact")
#: Made by name (``calibrate --mechanism``) but not run by ``compare``/``demo`` and the plots:
#: the optimal noise mechanism solves an LP whose size grows with the chain's length (82 s on
#: the demo's chain); GK16 is defined for binary chains only.
EXTRA_NAMES = ("gk16", "optimal")

_BY_NAME: dict[str, type[Mechanism]] = {
    "mqm": MarkovQuiltMechanism, "group": GroupDPMechanism, "entry": EntryDPMechanism,
    "wasserstein": WassersteinMechanism, "kantorovich": KantorovichMechanism,
    "exact": ExactLaplaceMechanism, "exact-quilt": ExactQuiltMechanism,
    "optimal": OptimalNoiseMechanism, "gk16": GK16Mechanism,
}


def mechanism(name: str, epsilon: float) -> Mechanism:
    """A mechanism object from its command-line name (:data:`MECHANISM_ORDER` or
    :data:`EXTRA_NAMES`)."""
    if name == "kantorovich-relaxed":
        return KantorovichMechanism(epsilon=epsilon, relaxed=True)
    return _BY_NAME[name](epsilon=epsilon)
