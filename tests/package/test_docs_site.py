"""The documentation: every Python block in the README and docs runs, the site builds strictly,
its API reference lists every public name, and the mechanism list has one source."""

from __future__ import annotations

import doctest
import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT

import pufferfish_pgm as pp
from pufferfish_pgm.mechanisms._catalogue import CATALOGUE, mechanism_table

ROOT = ROOT
PAGES = sorted([ROOT / "README.md", *ROOT.joinpath("docs").rglob("*.md")])
STAGES = ("accountant", "advisor", "certificates", "distributions", "errors", "inference",
          "mechanisms", "noise", "plots", "privacy_loss", "queries", "quilts", "scenarios",
          "secrets", "standalone")


def run_block(block: str, name: str, namespace: dict) -> None:
    """Run one block: plain code by ``exec``; a ``>>>`` session as a doctest (outputs checked)."""
    if not block.lstrip().startswith(">>>"):
        exec(compile(block, name, "exec"), namespace)
        return
    test = doctest.DocTestParser().get_doctest(block, namespace, name, name, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test, clear_globs=False)
    namespace.update(test.globs)        # the doctest ran on a copy; later blocks see its names
    assert runner.failures == 0, f"{name}: {runner.failures} example(s) print otherwise"


def python_blocks(page: Path) -> list[str]:
    """The fenced ```python blocks of a Markdown page, in order."""
    return re.findall(r"^```python\n(.*?)^```", page.read_text(encoding="utf-8"),
                      flags=re.M | re.S)


@pytest.mark.parametrize("page", [p for p in PAGES if python_blocks(p)],
                         ids=lambda p: str(p.relative_to(ROOT)))
@pytest.mark.filterwarnings("ignore::pufferfish_pgm.errors.UsefulnessWarning")
def test_every_python_block_runs(page: Path, tmp_path, monkeypatch) -> None:
    # the blocks of one page run in order in one namespace, as a reader would run them
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs__"}
    for number, block in enumerate(python_blocks(page), 1):
        try:
            run_block(block, f"{page.name}, block {number}", namespace)
        except Exception as error:  # noqa: BLE001 - report which block failed, then fail
            pytest.fail(f"{page.relative_to(ROOT)} block {number} raised {error!r}")


def test_the_readme_mechanism_table_is_the_generated_one() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shown = re.search(r"<!-- mechanisms:start -->\n(.*?)\n<!-- mechanisms:end -->", readme, re.S)
    assert shown, "README.md lacks the <!-- mechanisms:start --> ... end markers"
    assert shown.group(1) == mechanism_table(), (
        "README's mechanism table differs from the catalogue; regenerate it with "
        "`python -m pufferfish_pgm.mechanisms._catalogue`")


def test_the_catalogue_names_every_mechanism() -> None:
    named = {entry.name for entry in CATALOGUE}
    exported = {n for n in pp.__all__ if n.endswith("Mechanism") and n != "Mechanism"}
    assert exported | set(pp.standalone.__all__) - {"GeoRelease"} == named
    cli = {entry.cli for entry in CATALOGUE if entry.cli}
    from pufferfish_pgm.mechanisms._registry import EXTRA_NAMES, MECHANISM_ORDER

    assert cli == (set(MECHANISM_ORDER) | set(EXTRA_NAMES)) - {"kantorovich-relaxed"}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install '.[docs]'")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
                           "-f", str(ROOT / "mkdocs.yml"), "-d", str(out)],
                          cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}{done.stderr}"
    return out


@pytest.mark.slow
def test_the_site_builds_strictly_and_its_api_reference_lists_every_public_name(site) -> None:
    anchors = set()
    for stage in STAGES:
        html = (site / "api" / stage / "index.html").read_text(encoding="utf-8")
        anchors.update(re.findall(r'id="(pufferfish_pgm\.[\w.]+)"', html))
    missing = [f"pufferfish_pgm.{stage}.{name}" for stage in STAGES
               for name in importlib.import_module(f"pufferfish_pgm.{stage}").__all__
               if f"pufferfish_pgm.{stage}.{name}" not in anchors]
    assert not missing, f"the API reference lacks {missing}"
    documented = {anchor.rsplit(".", 1)[1] for anchor in anchors}
    assert set(pp.__all__) - documented <= {"noise", "multiuser"}, "top-level names undocumented"


@pytest.mark.slow
def test_the_site_shows_the_generated_mechanism_list(site) -> None:
    html = (site / "mechanisms" / "index.html").read_text(encoding="utf-8")
    assert "mechanisms-table" not in html
    assert all(f"<code>{entry.name}</code>" in html for entry in CATALOGUE)
