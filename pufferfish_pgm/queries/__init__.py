"""Queries (counts, integer linear queries, histograms, windowed counts and histograms) and
their exact laws given a secret (DESIGN §3.6): forward–backward with a count axis on chains,
variable elimination with polynomial factors on networks, all in log space.
"""

from typing import Any

from .._compat import moved_name
from ._laws import CountPmf, JointPmf, joint_query_log_pmf, query_distribution, query_log_pmf
from ._queries import Count, GroupCount, Histogram, LinearQuery, Query, WeightedQuery
from ._windowed import WindowedCount, WindowedHistogram, WindowedQuery

__all__ = [
    "Count",
    "CountPmf",
    "GroupCount",
    "Histogram",
    "JointPmf",
    "LinearQuery",
    "Query",
    "WeightedQuery",
    "WindowedCount",
    "WindowedHistogram",
    "WindowedQuery",
    "joint_query_log_pmf",
    "query_distribution",
    "query_log_pmf",
]


def __getattr__(name: str) -> Any:
    """0.1.0 exported some engine names here; they moved to the stage's engine face."""
    return moved_name(__name__, name)
