"""Worked demonstrations of results from the papers that are not mechanisms of their own
(seed 002's deterministic constraints: how much ε-DP leaks when the data obey constraints).
"""


from .constraints import constraint_leakage

__all__ = [
    "constraint_leakage",
]
