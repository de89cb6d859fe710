"""The package type-checks: ``mypy`` in its default mode reports no error, and ``py.typed`` ships.

Default mode checks the bodies of annotated functions and every call into them; libraries
without type hints (pgmpy, networkx, scipy, pandas, tqdm) are imported with a per-line
``# type: ignore[import-untyped]`` that says so. The cache goes to a temporary folder, so the
check starts cold and writes nothing into the work tree (about 5 s).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import pufferfish_pgm

api = pytest.importorskip("mypy.api")

PACKAGE = Path(pufferfish_pgm.__file__).parent


def test_mypy_reports_no_error(tmp_path: Path) -> None:
    report, errors, status = api.run([str(PACKAGE), "--cache-dir", str(tmp_path / "cache"),
                                      "--no-error-summary", "--hide-error-context"])
    assert status == 0, f"mypy found errors:\n{report}{errors}"


def test_the_package_is_marked_as_typed() -> None:
    assert (PACKAGE / "py.typed").is_file()
