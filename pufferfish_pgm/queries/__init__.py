"""Queries (counts, integer linear queries, histograms, windowed counts and histograms) and
their exact laws given a secret (DESIGN §3.6): forward–backward with a count axis on chains,
variable elimination with polynomial factors on networks, all in log space.
"""

from ._laws import (
    CountPmf,
    JointPmf,
    fixed_start_variants,
    joint_query_log_pmf,
    log_joint_engine,
    query_distribution,
    query_log_pmf,
)
from ._queries import Count, Histogram, LinearQuery, Query, WeightedQuery
from ._windowed import WindowedCount, WindowedHistogram, WindowedQuery

__all__ = [
    "Count",
    "CountPmf",
    "Histogram",
    "JointPmf",
    "LinearQuery",
    "Query",
    "WeightedQuery",
    "WindowedCount",
    "WindowedHistogram",
    "WindowedQuery",
    "fixed_start_variants",
    "joint_query_log_pmf",
    "log_joint_engine",
    "query_distribution",
    "query_log_pmf",
]
