"""mkdocs hook: ``<!-- mechanisms-table -->`` in a page becomes the generated mechanism list."""

from __future__ import annotations

from typing import Any

MARKER = "<!-- mechanisms-table -->"


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace the marker by :func:`pufferfish_pgm.mechanisms._catalogue.mechanism_table`."""
    if MARKER not in markdown:
        return markdown
    from pufferfish_pgm.mechanisms._catalogue import mechanism_table

    return markdown.replace(MARKER, mechanism_table())
