"""The package's layer contract: imports flow down the pipeline, never up, and never in a circle.

The stages, top to bottom (docs/design.md §2); a module may import its own stage and the
stages below it, never a stage above it or a different stage on its own level:

    cli/, demos/  ->  advisor.py  ->  accountant/, plots.py  ->  mechanisms/  ->
    quilts/, privacy_loss/  ->  secrets/, queries/  ->  inference/  ->  scenarios/  ->
    noise/, distributions/  ->  _budget.py, _parallel.py  ->  _validation.py  ->  errors.py

Every import counts, including function-local ones (a deferred import is still a dependency).
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
    "mechanisms": 7,
    "quilts": 6, "privacy_loss": 6,
    "secrets": 5, "queries": 5,
    "inference": 4,
    "scenarios": 3,
    "noise": 2, "distributions": 2,
    "_budget": 1.5, "_parallel": 1.5,
    "_validation": 1,
    "errors": 0,
}
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
            if target in modules and target != name:
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


@pytest.mark.parametrize("name", PUBLIC)
def test_all_is_sorted_and_complete(name: str) -> None:
    module = importlib.import_module(name)
    names = getattr(module, "__all__", None)
    assert names is not None, f"{name} has no __all__"
    assert list(names) == sorted(names), f"{name}.__all__ is not sorted"
    missing = [n for n in names if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names what it does not have: {missing}"
    assert len(set(names)) == len(names)
