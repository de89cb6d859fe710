"""The Bayesian-network scenario, and what every scenario offers (nodes, states, checks).

Examples
--------
>>> from pufferfish_pgm.scenarios._network_tables import validate_tables
>>> import numpy as np
>>> tables = validate_tables(["a"], {"a": ("x", "y")}, {"a": ()}, {"a": np.array([0.3, 0.7])})
>>> BayesianNetworkScenario(tables).states_of("a")
('x', 'y')
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._tolerances import PROBABILITY_SUM
from ..errors import ModelFileNotFoundError, ParameterTypeError, UnknownNodeError, UnknownStateError
from . import _network_tables, _pgmpy, _pgmpy_dbn, _pgmpy_files

__all__ = ["TOLERANCE", "BayesianNetworkScenario", "default_model_path"]

TOLERANCE = PROBABILITY_SUM


class _Domain(ABC):
    """Lookup of state indices shared by every scenario kind (each kind implements the two
    abstract lookups)."""

    name: str

    @abstractmethod
    def check_node(self, node: Any) -> Any:
        """``node`` if the scenario has it, else :class:`UnknownNodeError`."""

    @abstractmethod
    def states_of(self, node: Any) -> tuple:
        """The states of ``node``, in the model's order."""

    def state_index(self, node: Any, state: Any) -> int:
        """Index of ``state`` among the states of ``node``, with a clear error if unknown."""
        states = self.states_of(self.check_node(node))
        try:
            return states.index(state)
        except ValueError:
            raise UnknownStateError(
                f"node {node!r} has no state {state!r}; its states are {list(states)}"
            ) from None


@dataclass(frozen=True, eq=False)
class BayesianNetworkScenario(_Domain):
    """A scenario given by a discrete Bayesian network (copied and strictly validated).

    Parameters
    ----------
    model : pgmpy.models.DiscreteBayesianNetwork
        The network. It is copied; later changes to it do not affect the scenario.
    name : str, optional
        A label used in plans and error messages.
    renormalize : float, default 1e-6
        Columns of a CPD that sum to 1 only within this tolerance are rescaled to sum to 1
        exactly (real BIF files such as alarm, sachs and hepar2 are off by ~1e-7) and listed
        in :attr:`renormalized`. Columns off by more than ``max(renormalize, 1e-9)`` raise one
        :class:`InvalidModelError` that lists every such column and the ``renormalize=`` that
        would accept them all. A number in [0, 1e-3]; 0 rescales only float rounding (1e-9).
    tables : NetworkTables, optional (keyword only)
        Already validated tables instead of ``model`` (what :func:`dataclasses.replace`
        passes); give one of ``model`` and ``tables``.

    Notes
    -----
    The scenario is immutable and holds no cache: what the stages above derive from it (the
    elimination order and compiled plans of :mod:`pufferfish_pgm.inference`, the count-law
    engines of :mod:`pufferfish_pgm.queries`) is kept by those stages, per scenario object,
    in weak-keyed indices. ``dataclasses.replace(bn, name="other")`` therefore gives a new
    scenario with indices of its own.

    Examples
    --------
    >>> bn = BayesianNetworkScenario.from_file(default_model_path("asia.bif"))
    >>> len(bn.nodes), bn.states_of("either")
    (8, ('yes', 'no'))
    """

    tables: _network_tables.NetworkTables
    name: str = "network"
    _node_set: frozenset = field(init=False, repr=False, compare=False)

    def __init__(self, model: Any = None, *, name: str = "network",
                 renormalize: float = _network_tables.DEFAULT_RENORMALIZE,
                 tables: _network_tables.NetworkTables | None = None) -> None:
        renormalize = _network_tables.check_renormalize(renormalize)
        if isinstance(model, _network_tables.NetworkTables) and tables is None:
            model, tables = None, model
        if (model is None) == (tables is None):
            raise ParameterTypeError(
                "BayesianNetworkScenario needs a pgmpy DiscreteBayesianNetwork (or tables=); "
                + ("got neither" if model is None else "got both a model and tables")
            )
        if tables is None:
            tables = _pgmpy.tables_from_pgmpy(model, renormalize=renormalize,
                                              tolerance=TOLERANCE)
        elif not isinstance(tables, _network_tables.NetworkTables):
            raise ParameterTypeError(
                f"tables must be NetworkTables, got {type(tables).__name__}"
            )
        object.__setattr__(self, "tables", tables)
        object.__setattr__(self, "name", str(name))
        object.__setattr__(self, "_node_set", frozenset(tables.nodes))

    @classmethod
    def from_file(cls, path: str | Path, *,
                  renormalize: float = _network_tables.DEFAULT_RENORMALIZE,
                  name: str | None = None) -> BayesianNetworkScenario:
        """Load a network file in any format pgmpy reads (see the class for ``renormalize``).

        BIF (``.bif``), XMLBIF (``.xml``, ``.xmlbif``), Hugin NET (``.net``), GeNIe XDSL
        (``.xdsl``), XBN (``.xbn``) and UAI (``.uai``, nodes ``"var_0"``, ... with states
        0..k-1); an unknown suffix is recognised by content. Details:
        :mod:`pufferfish_pgm.scenarios._pgmpy_files`.

        Examples
        --------
        >>> alarm = BayesianNetworkScenario.from_file(default_model_path("alarm.bif"))
        >>> len(alarm.renormalized) > 0, alarm.renormalized[0].deviation < 1e-6
        (True, True)
        """
        tables = _pgmpy_files.read_network_file(path, renormalize=renormalize,
                                                tolerance=TOLERANCE)
        return cls(tables, name=name or Path(path).stem)

    @classmethod
    def from_dbn(cls, dbn: Any, length: int, *,
                 renormalize: float = _network_tables.DEFAULT_RENORMALIZE,
                 name: str = "dbn") -> BayesianNetworkScenario:
        """Unroll a pgmpy two-slice ``DynamicBayesianNetwork`` over ``length`` time slices.

        Variable ``v`` at slice ``t`` becomes the node ``"v@t"`` (a string); slice 0 has the
        DBN's slice-0 CPDs, every later slice its slice-1 CPDs. Details:
        :mod:`pufferfish_pgm.scenarios._pgmpy_dbn`.

        Examples
        --------
        >>> from pgmpy.models import DynamicBayesianNetwork
        >>> from pgmpy.factors.discrete import TabularCPD
        >>> dbn = DynamicBayesianNetwork([(("A", 0), ("A", 1))])
        >>> dbn.add_cpds(TabularCPD(("A", 0), 2, [[1.0], [0.0]]),
        ...              TabularCPD(("A", 1), 2, [[0.9, 0.2], [0.1, 0.8]],
        ...                         evidence=[("A", 0)], evidence_card=[2]))
        >>> BayesianNetworkScenario.from_dbn(dbn, length=3).nodes
        ('A@0', 'A@1', 'A@2')
        """
        tables = _pgmpy_dbn.tables_from_dbn(dbn, length, renormalize=renormalize,
                                            tolerance=TOLERANCE)
        return cls(tables, name=name)

    @property
    def nodes(self) -> tuple:
        """Nodes in a topological order."""
        return self.tables.nodes

    @property
    def renormalized(self) -> tuple[_network_tables.RenormalizedColumn, ...]:
        """The CPD columns that summed to 1 only within ``renormalize`` and were rescaled:
        ``(node, parent_states, total)`` records (named tuples; ``.deviation`` is
        ``|total - 1|``), empty when every column summed to 1 within 1e-9."""
        return self.tables.renormalized

    def check_node(self, node: Any) -> Any:
        if node not in self._node_set:
            shown = list(self.nodes[:8]) + (["..."] if len(self.nodes) > 8 else [])
            raise UnknownNodeError(
                f"unknown node {node!r} in scenario {self.name!r}; its nodes are {shown}"
            )
        return node

    def states_of(self, node: Any) -> tuple:
        return self.tables.states[self.check_node(node)]

    def parents_of(self, node: Any) -> tuple:
        """The parents of ``node`` in the order of the axes of its CPT."""
        return self.tables.parents[self.check_node(node)]

    def cpt(self, node: Any) -> np.ndarray:
        """A copy of P(node | parents) with axes ``(node, *parents)``."""
        return self.tables.cpts[self.check_node(node)].copy()

    def edges(self) -> list[tuple]:
        """Directed edges (parent, child)."""
        return [(p, v) for v in self.nodes for p in self.tables.parents[v]]

    def to_pgmpy(self) -> Any:
        """A fresh pgmpy ``DiscreteBayesianNetwork`` with the validated tables."""
        return _pgmpy.tables_to_pgmpy(self.tables)


def default_model_path(name: str) -> Path:
    """Path of a model bundled with the package (``models/`` in the source tree).

    Examples
    --------
    >>> default_model_path("asia.bif").name
    'asia.bif'
    """
    from importlib.resources import files

    try:
        path = Path(str(files("pufferfish_pgm.models").joinpath(name)))
    except ModuleNotFoundError:  # imported from a source tree that is not installed
        path = Path(__file__).resolve().parent.parent / "models" / name
    if not path.is_file():

        raise ModelFileNotFoundError(f"no bundled model named {name!r}; see models/README.md")
    return path
