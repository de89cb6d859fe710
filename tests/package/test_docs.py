"""The design notes the docstrings cite exist: every "DESIGN §x" resolves to a heading."""

from __future__ import annotations

import re

import pytest
from helpers import ROOT

ROOT = ROOT
DESIGN = ROOT / "docs" / "design.md"


def _citations() -> set[str]:
    found = set()
    sources = [*ROOT.joinpath("pufferfish_pgm").rglob("*.py"),
               *ROOT.joinpath("docs").glob("*.md"), ROOT / "README.md"]
    for path in sources:
        found.update(m.rstrip(".") for m in re.findall(r"DESIGN §([0-9][0-9.]*)", path.read_text()))
    return found


def _headings() -> set[str]:
    return set(re.findall(r"^#{2,3} ([0-9]+(?:\.[0-9]+)*)\.? ", DESIGN.read_text(), flags=re.M))


def test_the_design_notes_are_in_the_repository() -> None:
    assert DESIGN.is_file()
    assert len(_citations()) >= 10     # the docstrings do cite them


@pytest.mark.parametrize("section", sorted(_citations()))
def test_every_design_reference_resolves(section: str) -> None:
    assert section in _headings(), f"DESIGN §{section} is cited; docs/design.md lacks the heading"
