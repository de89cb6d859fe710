"""Loading scenario classes from files: networks (every format pgmpy reads) and chain JSON.

Chain JSON (``"format": "pufferfish_pgm.chain_class/1"``)::

    {"states": ["sleep", "sit"], "length": 288,
     "members": [{"name": "weekday", "transition": [[0.9, 0.1], [0.2, 0.8]],
                  "initial": "stationary"}]}

A single chain may also be written without ``members`` (``transition`` and ``initial`` at the
top level).

Examples
--------
>>> cls = load_scenarios(default_model_path("activity_chain.json"))
>>> len(cls), cls.kind, cls.nodes[-1]
(2, 'chain', 287)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .._validation import positive_int
from ..errors import (
    InvalidParameterError,
    ModelFileError,
    ModelFileNotFoundError,
    ParameterTypeError,
    PufferfishError,
)
from ._network_tables import DEFAULT_RENORMALIZE, check_renormalize
from ._scenario_class import ScenarioClass
from ._scenarios import BayesianNetworkScenario, MarkovChainScenario, default_model_path

__all__ = ["DEFAULT_MODEL", "default_model_path", "load_scenarios", "save_chain_class"]

DEFAULT_MODEL = "activity_chain.json"


def load_scenarios(path: str | Path | None = None, *, renormalize: float = DEFAULT_RENORMALIZE,
                   length: int | None = None) -> ScenarioClass:
    """Load a scenario class from a network file (``.bif``, ``.xml``, ``.net``, ``.uai``,
    ``.xdsl``, ... : see :meth:`BayesianNetworkScenario.from_file`) or a chain ``.json`` file.

    ``None`` loads the bundled default (the activity chain); a bare file name that is not a
    file here but names a bundled model (``"alarm.bif"``) loads that model, so examples work
    from any directory. ``length`` overrides the length of chains. ``renormalize`` is that of
    :class:`BayesianNetworkScenario` (networks only).

    Examples
    --------
    >>> len(load_scenarios("asia.bif").nodes)
    8
    """
    renormalize = check_renormalize(renormalize)
    if length is not None:
        length = positive_int("length", length)
    path = default_model_path(DEFAULT_MODEL) if path is None else _bundled_or(Path(path))
    if path.is_dir():
        raise ModelFileNotFoundError(
            f"{str(path)!r} is a directory; give a model file in it (a network file or a "
            "chain .json)")
    if not path.is_file():
        raise ModelFileNotFoundError(
            f"model file {str(path)!r} does not exist; give a network file (.bif, .xml, .net, "
            ".uai, .xdsl, .xbn) or a chain .json"
        )
    if path.suffix.lower() == ".json":
        return _load_chain_json(path, length)
    if length is not None:
        raise InvalidParameterError(
            f"length={length} applies to Markov chains, but {path.name!r} is a network, whose "
            "nodes are fixed by the file; drop the length")
    return ScenarioClass(BayesianNetworkScenario.from_file(path, renormalize=renormalize))


def _bundled_or(path: Path) -> Path:
    """``path`` itself, or the bundled model of that name when ``path`` is a bare name that
    does not exist here."""
    if path.exists() or path.parent != Path("."):
        return path
    try:
        return default_model_path(path.name)
    except ModelFileNotFoundError:
        return path


def _load_chain_json(path: Path, length: int | None) -> ScenarioClass:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise ModelFileError(f"{str(path)!r} is not valid JSON ({err}); fix the file") from err
    if not isinstance(doc, dict) or ("members" not in doc and "transition" not in doc):
        raise ModelFileError(
            f"{str(path)!r} has neither 'members' nor 'transition'; see the chain JSON format "
            "in pufferfish_pgm.scenarios"
        )
    members = doc.get("members") or [doc]
    chains = []
    for i, m in enumerate(members):
        try:
            chains.append(MarkovChainScenario(
                m["transition"], m.get("initial", doc.get("initial", "stationary")),
                length or m.get("length", doc.get("length", 1)), m.get("states", doc.get("states")),
                name=m.get("name", f"chain {i}")))
        except KeyError as err:
            raise ModelFileError(f"member {i} of {str(path)!r} has no {err}; add it") from None
        except PufferfishError as err:
            raise type(err)(f"{str(path)!r}, member {i}: {err}") from None
    return ScenarioClass(chains)


def save_chain_class(cls: ScenarioClass, path: str | Path, description: str = "") -> None:
    """Write a class of chains (for example one fitted with ``fit_groups``) as chain JSON."""
    doc: dict[str, Any] = {"format": "pufferfish_pgm.chain_class/1", "description": description,
                           "states": list(cls.members[0].states),
                           "length": cls.members[0].length, "members": []}
    for m in cls:
        if not isinstance(m, MarkovChainScenario):
            raise ParameterTypeError(
                f"save_chain_class writes Markov chains only; member {m.name!r} is a "
                f"{type(m).__name__}"
            )
        init = m.initial if isinstance(m.initial, str) else m.initial.tolist()
        doc["members"].append({"name": m.name, "transition": m.transition.tolist(),
                               "initial": init})
    Path(path).write_text(json.dumps(doc, indent=1), encoding="utf-8")
