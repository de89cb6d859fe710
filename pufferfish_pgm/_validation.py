"""Argument checks shared by every module (internal)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from typing import Any

import numpy as np

from .errors import InvalidParameterError, ParameterTypeError


def positive_finite(name: str, value: object) -> float:
    """Return ``value`` as a float after checking it is a finite number > 0.

    Examples
    --------
    >>> positive_finite("epsilon", 0.5)
    0.5
    >>> positive_finite("epsilon", "1")
    Traceback (most recent call last):
    ...
    pufferfish_pgm.errors.ParameterTypeError: epsilon must be a real number, got the str '1'; ...
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ParameterTypeError(
            f"{name} must be a real number, got the {type(value).__name__} {value!r}; "
            f"pass a positive float such as {name}=1.0"
        )
    try:
        out = float(value)
    except OverflowError:   # an int past float's range, such as 10**400
        out = math.copysign(math.inf, 1 if str(value)[0] != "-" else -1)
    if math.isnan(out) or math.isinf(out) or out <= 0:
        raise InvalidParameterError(
            f"{name} must be a finite number > 0, got {out!r}; pass a positive float such as "
            f"{name}=1.0"
        )
    return out


def positive_int(name: str, value: object, minimum: int = 1) -> int:
    """Return ``value`` as an int after checking it is an integer >= ``minimum``.

    Examples
    --------
    >>> positive_int("length", 5)
    5
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise ParameterTypeError(
            f"{name} must be an integer, got the {type(value).__name__} {value!r}"
        )
    if int(value) < minimum:
        raise InvalidParameterError(f"{name} must be >= {minimum}, got {int(value)}")
    return int(value)


def node_tuple(nodes: Any, what: str = "the query's nodes") -> tuple | None:
    """``nodes`` as a tuple: None stays None, one node name (a str or int) is one node, an
    empty list is refused.

    Examples
    --------
    >>> node_tuple("lung"), node_tuple(3), node_tuple([0, 1]), node_tuple(None)
    (('lung',), (3,), (0, 1), None)
    """
    if nodes is None:
        return None
    if isinstance(nodes, (str, int, np.integer)):
        return (nodes,)
    if not isinstance(nodes, Iterable):
        raise ParameterTypeError(f"{what} must be a list of node names (or one name), got the "
                                 f"{type(nodes).__name__} {nodes!r}")
    out = tuple(nodes)
    if not out:
        raise InvalidParameterError(f"{what} are empty; give at least one node, or None for "
                                    "every node")
    return out
