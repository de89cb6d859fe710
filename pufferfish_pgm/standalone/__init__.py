"""Mechanisms that need no framework: each protects its own kind of secret on its own data.

They do not follow the :class:`~pufferfish_pgm.mechanisms.Mechanism` contract (no scenario
class, no secret pairs, no ``calibrate``): their secrets and the attacker's knowledge are
fixed by the theorem each implements.

====================  ===========================================  ==========================
name                  what it protects                             source
====================  ===========================================  ==========================
:class:`ContinuousSum`  a continuous value to ±k (absolute or       seed 002 §7.1, Lemma 7.1
                      relative), in a released sum
:class:`PlanarLaplace`  a location within radius r                 Andrés et al. 2013
:mod:`multiuser`      one user's report or presence in a sum       seed 004, Theorems 1–4
====================  ===========================================  ==========================

The 0.1.0 names ``ContinuousSumMechanism`` and ``PlanarLaplaceMechanism`` still import (with a
``DeprecationWarning``) from ``pufferfish_pgm`` and ``pufferfish_pgm.mechanisms``.
"""

from . import multiuser
from .continuous import ContinuousSum
from .geo import GeoRelease, PlanarLaplace

__all__ = ["ContinuousSum", "GeoRelease", "PlanarLaplace", "multiuser"]
