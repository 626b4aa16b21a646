"""Rules of the library's source that a linter does not check."""

from __future__ import annotations

import ast
from pathlib import Path

import polars_irmetrics

SOURCE = Path(polars_irmetrics.__file__).parent


def test_the_library_has_no_assert_statement() -> None:
    # an assert vanishes under ``python -O``: a check, even one a caller has made
    # before, raises one of the library's errors instead (errors.py)
    found = [
        f"{path.relative_to(SOURCE)}:{node.lineno}"
        for path in sorted(SOURCE.rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path)))
        if isinstance(node, ast.Assert)
    ]
    assert found == []
