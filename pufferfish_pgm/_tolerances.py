"""The library's numerical tolerances, defined once (each is a rounding allowance, not privacy).

Examples
--------
>>> PROBABILITY_SUM, STATIONARITY, RELATIVE, LOG_RANGE
(1e-09, 1e-12, 1e-09, 350.0)
"""

from __future__ import annotations

__all__ = ["LOG_RANGE", "PROBABILITY_SUM", "RELATIVE", "STATIONARITY"]

#: A distribution, a CPD column or a transition row must sum to 1 within this (float rounding
#: of tables written to 9+ digits; larger deviations are wrong tables, or ``renormalize``).
PROBABILITY_SUM = 1e-9
#: ``q P = q`` (a chain started at its stationary law) and detailed balance are accepted within
#: this, per entry.
STATIONARITY = 1e-12
#: Relative slack when two computations of the same ε or scale are compared (certificates,
#: composition, the exact bisection's stopping rule).
RELATIVE = 1e-9
#: The widest range of log values (nats) carried in linear space before a computation switches
#: to log space: e^350 is far inside float64's range, and e^-350 relative masses are kept.
LOG_RANGE = 350.0
