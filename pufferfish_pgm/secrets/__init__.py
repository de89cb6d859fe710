"""Secrets and discriminative pairs (Kifer & Machanavajjhala): node secrets, joint secrets,
Blowfish-style policy graphs and the secret compiler that turns them into a
:class:`Framework` with the impossible pairs recorded, not silently dropped.
"""

from ._secrets import (
    CompiledPair,
    Framework,
    JointSecret,
    NodeSecret,
    SecretPair,
    SkippedPair,
    check_possible,
    compile_secrets,
    complete_graph,
    distance_threshold_graph,
    partition_graph,
    possible_secrets,
    secret_pairs,
)

__all__ = [
    "CompiledPair",
    "Framework",
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
