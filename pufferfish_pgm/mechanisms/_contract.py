"""What every ``calibrate`` does besides its mechanism's work (internal): its arguments are
checked first, and a useless result warns (:mod:`._usefulness`).

:class:`~pufferfish_pgm.mechanisms.Mechanism` wraps each subclass's ``calibrate`` with
:func:`contract` when the class is made, so no mechanism can forget either step.

Examples
--------
>>> import pufferfish_pgm as pp
>>> mc = pp.MarkovChainScenario([[0.9, 0.1], [0.2, 0.8]], "stationary", 4)
>>> pp.GroupDPMechanism(epsilon=1.0).calibrate(mc, pp.Count(1))
Traceback (most recent call last):
...
pufferfish_pgm.errors.ParameterTypeError: framework must be a Framework, got the ...
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..errors import ParameterTypeError
from ..queries import Query
from ..secrets import Framework
from . import _usefulness

__all__ = ["check_arguments", "contract"]


def check_arguments(framework: Any, query: Any) -> None:
    """Refuse a ``framework`` that is not a :class:`Framework` and a ``query`` that is not a
    query, naming what was passed and how to fix it."""
    if not isinstance(framework, Framework):
        raise ParameterTypeError(
            f"framework must be a Framework, got the {type(framework).__name__} "
            f"{_short(framework)}; wrap the model: Framework(model) (or Framework(model, "
            "secret_pairs(...)) for chosen pairs)")
    if not isinstance(query, Query):
        raise ParameterTypeError(
            f"query must be a Count, LinearQuery, Histogram or a windowed query, got the "
            f"{type(query).__name__} {_short(query)}; e.g. Count('walk')")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def contract(calibrate: Callable) -> Callable:
    """``calibrate`` with its arguments checked first and its result checked for use."""
    if getattr(calibrate, "_contract", False):
        return calibrate
    useful = _usefulness.checked(calibrate, stacklevel=3)   # the warning names the caller

    @functools.wraps(calibrate)
    def wrapper(self: Any, framework: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        check_arguments(framework, query)
        return useful(self, framework, query, *args, **kwargs)

    wrapper._contract = True  # type: ignore[attr-defined]
    return wrapper
