"""The package people cite and install: one version, licence files, citation metadata."""

from __future__ import annotations

import re
from importlib import metadata

import tomllib
from helpers import ROOT

import pufferfish_pgm


def test_the_version_has_one_source():
    # pyproject declares the version dynamic and reads it from the package
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r"^version\s*=\s*\"", pyproject, re.M) is None
    assert 'dynamic = ["version"]' in pyproject
    assert 'version = { attr = "pufferfish_pgm.__version__" }' in pyproject
    assert metadata.version("pufferfish_pgm") == pufferfish_pgm.__version__


def test_citation_and_changelog_name_the_current_version():
    citation = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert re.search(r"^version: (\S+)$", citation, re.M).group(1) == pufferfish_pgm.__version__
    assert "cff-version: 1.2.0" in citation and "doi: 10.1145/2514689" in citation
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## {pufferfish_pgm.__version__} " in changelog


def test_licence_metadata_covers_the_code_and_the_bundled_networks():
    meta = metadata.metadata("pufferfish_pgm")
    assert meta["License-Expression"] == "MIT AND CC-BY-SA-3.0"
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert "CC BY-SA 3.0" in (ROOT / "models" / "README.md").read_text(encoding="utf-8")


def test_the_wheel_lists_every_subpackage() -> None:
    # the packages are listed by hand in pyproject.toml: a new stage missing from the list
    # installs fine in editable mode (CI) and breaks `pip install .` (0.2.0's certificates/ and
    # standalone/ did, caught by the README's first command on a fresh machine)
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
                 ["packages"])
    package = ROOT / "pufferfish_pgm"
    on_disk = {"pufferfish_pgm"} | {
        "pufferfish_pgm." + ".".join(init.parent.relative_to(package).parts)
        for init in package.rglob("__init__.py") if init.parent != package}
    assert on_disk - {"pufferfish_pgm.models"} <= listed, sorted(on_disk - listed)
