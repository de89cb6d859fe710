"""The package's layer contract: imports flow down the pipeline, never up, and never in a circle.

The stages, top to bottom (docs/design.md §2); a module may import its own stage and the
stages below it, never a stage above it or a different stage on its own level:

    cli/, demos/  ->  advisor.py  ->  accountant/, plots.py  ->  certificates/  ->
    mechanisms/, standalone/  ->  quilts/, privacy_loss/  ->  secrets/, queries/  ->
    inference/  ->  scenarios/  ->  noise/, distributions/  ->  _budget.py, _parallel.py  ->
    _validation.py  ->  _compat.py, _tolerances.py  ->  errors.py

Every import counts, including function-local ones (a deferred import is still a dependency);
the only exceptions are the :data:`DELEGATES`, 0.1.0 methods kept as one-line delegates.

**Faces.** Another stage may import a stage's public names (its ``__all__``) or its engine face
(``<stage>/_engine.py``) and nothing else: no private module, no name the face does not list.
Also checked here: pgmpy is imported by the adapter modules only, and every public module's
``__all__`` is sorted and names only what the module has.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import networkx as nx
import pytest

import pufferfish_pgm

PACKAGE = Path(pufferfish_pgm.__file__).parent
RANK = {
    "cli": 9, "demos": 9,
    "advisor": 8.5,
    "accountant": 8, "plots": 8,
    "certificates": 7.5,
    "mechanisms": 7, "standalone": 7,
    "quilts": 6, "privacy_loss": 6,
    "secrets": 5, "queries": 5,
    "inference": 4,
    "scenarios": 3,
    "noise": 2, "distributions": 2,
    "_budget": 1.5, "_parallel": 1.5, "_progress": 1.5,
    "_validation": 1,
    "_compat": 0.5, "_tolerances": 0.5,
    "errors": 0,
}
#: Imports against the layer order that are allowed: 0.1.0's ``Calibration.to_json`` and
#: ``from_json``, kept as methods that import the certificates stage when called.
DELEGATES = {("pufferfish_pgm.mechanisms.base", "pufferfish_pgm.certificates")}
#: The pgmpy adapter: the only modules that import pgmpy (networks and chains; model files;
#: dynamic networks), all in scenarios/.
PGMPY_ADAPTERS = {"pufferfish_pgm.scenarios._pgmpy", "pufferfish_pgm.scenarios._pgmpy_files",
                  "pufferfish_pgm.scenarios._pgmpy_dbn"}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _imports(name: str, path: Path) -> set[str]:
    """Absolute names of every package module ``name`` imports (anywhere in its body).

    ``from pkg import sub`` where ``pkg.sub`` is a module depends on ``pkg.sub`` only (the
    package is already being initialised; its ``__init__`` is not read again).
    """
    modules = _modules()
    is_init = path.name == "__init__.py"
    package = name if is_init else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            subs = {f"{target}.{a.name}" for a in node.names}
            found.update(subs)
            if not subs <= set(modules):
                found.add(target)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def _graph() -> nx.DiGraph:
    modules = _modules()
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        for target in _imports(name, path):
            if target in modules and target != name and (name, target) not in DELEGATES:
                graph.add_edge(name, target)
    return graph


def _stage(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def test_every_module_belongs_to_a_stage() -> None:
    unknown = sorted({_stage(m) for m in _modules()} - set(RANK) - {None})
    assert not unknown, f"add these stages to RANK and to docs/design.md §2: {unknown}"


def test_no_import_goes_up_or_sideways() -> None:
    bad = []
    for src, dst in _graph().edges:
        a, b = _stage(src), _stage(dst)
        if a is None or a == b:
            continue      # the package __init__ sits on top; a stage imports itself freely
        if b is None or RANK[b] >= RANK[a]:   # b is None: the top package itself
            bad.append(f"{src} -> {dst}")
    assert not bad, "imports against the layer order:\n" + "\n".join(sorted(bad))


def test_no_import_circle() -> None:
    graph = _graph()
    graph.remove_node("pufferfish_pgm")
    cycles = list(nx.simple_cycles(graph))
    assert not cycles, f"import circles: {cycles[:5]}"


def test_the_contract_catches_an_upward_import(tmp_path: Path) -> None:
    # a guard that cannot fail guards nothing: an upward import in a fake module is seen
    fake = tmp_path / "m.py"
    fake.write_text("def f():\n    from ..mechanisms import base\n")
    found = _imports("pufferfish_pgm.scenarios.m", fake)
    assert "pufferfish_pgm.mechanisms.base" in found
    assert RANK[_stage("pufferfish_pgm.mechanisms.base")] > RANK["scenarios"]


def test_only_the_adapter_imports_pgmpy() -> None:
    users = sorted(name for name, path in _modules().items()
                   if any(t == "pgmpy" or t.startswith("pgmpy.") for t in _imports(name, path)))
    assert users == sorted(PGMPY_ADAPTERS)


PUBLIC = sorted(m for m in _modules() if not any(p.startswith("_") for p in m.split(".")))


def _all_problems(name: str) -> list[str]:
    module = importlib.import_module(name)
    names = getattr(module, "__all__", None)
    if names is None:
        return [f"{name} has no __all__"]
    problems = [f"{name}.__all__ is not sorted"] if list(names) != sorted(names) else []
    missing = [n for n in names if not hasattr(module, n)]
    problems += [f"{name}.__all__ names what it does not have: {missing}"] if missing else []
    problems += [f"{name}.__all__ repeats a name"] if len(set(names)) != len(names) else []
    return problems


def test_every_public_all_is_sorted_and_complete() -> None:
    problems = [p for name in PUBLIC for p in _all_problems(name)]
    assert not problems, "\n".join(problems)
    assert _all_problems("pufferfish_pgm._compat") == []   # the checker reads a good module


# -- faces ------------------------------------------------------------------------------------

def _from_imports(name: str, source: str) -> list[tuple[str, list[str], int]]:
    """``(absolute target module, imported names, line)`` of every ``from`` import of module
    ``name`` in ``source`` that resolves inside the package."""
    package = name if name.count(".") == 1 and _modules().get(name, Path()).name == "__init__.py" \
        else name.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package.split(".")[:len(package.split(".")) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        if target.split(".")[0] == "pufferfish_pgm":
            out.append((target, [a.name for a in node.names], node.lineno))
    return out


def _face(module: str) -> set[str]:
    """What other stages may import from ``module`` (a stage's package or its ``_engine``):
    its ``__all__``."""
    return set(getattr(importlib.import_module(module), "__all__", ()))


def face_violations(name: str, source: str) -> list[str]:
    """Cross-stage imports in ``source`` (module ``name``) that go past the target's face."""
    modules, bad = _modules(), []
    own = _stage(name)
    for target, names, line in _from_imports(name, source):
        stage = _stage(target)
        if stage is None or stage == own or (name, target) in DELEGATES:
            continue
        if not (PACKAGE / stage).is_dir():
            continue          # a single-module stage (errors, _budget, ...) is its own face
        tail = target.split(".")[2:]
        if tail and tail != ["_engine"] and not all(t[0] != "_" for t in tail):
            bad.append(f"{name}:{line} imports the private module {target}")
            continue
        if tail and tail != ["_engine"]:
            continue          # a public module of the stage (mechanisms.evidence, ...)
        allowed = _face(target)
        extra = [n for n in names if n not in allowed and f"{target}.{n}" not in modules]
        if extra:
            bad.append(f"{name}:{line} imports {extra} from {target}, which its face does not "
                       "list (add them to the stage's _engine.py, or import what it offers)")
    return bad


def test_every_cross_stage_import_goes_through_a_face() -> None:
    bad = [v for name, path in _modules().items() for v in face_violations(name, path.read_text())]
    assert not bad, "imports past a stage's face:\n" + "\n".join(sorted(bad))


@pytest.mark.parametrize("source, found", [
    ("from ..privacy_loss._pair_rows import build_groups\n", "private module"),
    ("def f():\n    from ..queries._laws import query_log_pmf\n", "private module"),
    ("from ..quilts import power_stack\n", "does not list"),
    ("from ..privacy_loss._engine import not_a_face_name\n", "does not list"),
])
def test_the_face_check_catches_a_private_import(source: str, found: str) -> None:
    # a guard that cannot fail guards nothing: each of these is refused in a fake module
    bad = face_violations("pufferfish_pgm.mechanisms.fake", source)
    assert len(bad) == 1 and found in bad[0], bad


def test_the_face_check_accepts_faces() -> None:
    source = ("from ..privacy_loss import audit\nfrom ..privacy_loss._engine import build_groups\n"
              "from ..errors import PufferfishError\nfrom ._registry import mechanism\n")
    assert face_violations("pufferfish_pgm.mechanisms.fake", source) == []


def test_delegates_are_deferred() -> None:
    # the delegates' imports sit inside function bodies, so importing the stage never runs them
    for src, target in DELEGATES:
        tree = ast.parse(_modules()[src].read_text())
        top = {t for t, _, _ in _from_imports(src, ast.unparse(ast.Module(
            body=[n for n in tree.body if isinstance(n, ast.ImportFrom)], type_ignores=[])))}
        assert target not in top


def test_moved_names_resolve() -> None:
    from pufferfish_pgm._compat import MOVED_MODULES, MOVED_NAMES
    for (module, name), (new_module, new_name) in MOVED_NAMES.items():
        with pytest.warns(DeprecationWarning, match=f"{new_module}.{new_name}"):
            assert getattr(importlib.import_module(module), name) is getattr(
                importlib.import_module(new_module), new_name)
    for old, new in MOVED_MODULES.items():
        assert importlib.import_module(old) is importlib.import_module(new)
