"""Secrets and discriminative pairs (Kifer & Machanavajjhala): node secrets, joint secrets,
Blowfish-style policy graphs and the secret compiler that turns them into a
:class:`Framework` with the impossible pairs recorded, not silently dropped (a secret that is
impossible under every scenario is left out of the pairs the library builds and listed in
:attr:`Framework.skipped_secrets`).
"""

from ._framework import CompiledPair, Framework, SkippedPair, compile_secrets
from ._possible import check_possible, possible_secrets
from ._secrets import (
    GeneratedPairs,
    JointSecret,
    NodeSecret,
    SecretPair,
    complete_graph,
    distance_threshold_graph,
    partition_graph,
    secret_pairs,
)

__all__ = [
    "CompiledPair",
    "Framework",
    "GeneratedPairs",
    "JointSecret",
    "NodeSecret",
    "SecretPair",
    "SkippedPair",
    "check_possible",
    "compile_secrets",
    "complete_graph",
    "distance_threshold_graph",
    "partition_graph",
    "possible_secrets",
    "secret_pairs",
]
