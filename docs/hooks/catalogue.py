"""mkdocs hook: the metric catalogue page is generated from the registry at build time."""

from __future__ import annotations

from typing import Any

MARKER = "<!-- catalogue -->"


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    if MARKER not in markdown:
        return markdown
    from polars_irmetrics.door.catalogue import catalogue_markdown

    return markdown.replace(MARKER, catalogue_markdown())
