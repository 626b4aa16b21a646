"""Small builders shared by the tests."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import polars as pl
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[1]


def script(path: str) -> ModuleType:
    """A Python file of the repository that is not part of the package (a docs build
    hook, a fixture script), by its path from the repository root."""
    name = "_script_" + path.replace("/", "_").removesuffix(".py")
    spec = importlib.util.spec_from_file_location(name, ROOT / path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{path} cannot be loaded")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def docs_hook(name: str) -> ModuleType:
    """A docs build hook (docs/hooks/NAME.py), which is not part of the package."""
    return script(f"docs/hooks/{name}.py")


def judged_list(query_id: str, relevance: list[float]) -> pl.DataFrame:
    """A judged table: one query whose documents at ranks 1..n have these labels."""
    n = len(relevance)
    return pl.DataFrame(
        {
            "query_id": [query_id] * n,
            "doc_id": [f"d{i}" for i in range(1, n + 1)],
            "rank": list(range(1, n + 1)),
            "relevance": relevance,
        }
    )


def property_settings(max_examples: int) -> settings:
    """Hypothesis settings of the property tests: reproducible, no deadline."""
    return settings(
        max_examples=max_examples,
        deadline=None,
        derandomize=True,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def by_query(frame: pl.DataFrame) -> dict[str, dict[str, Any]]:
    """A per-query result frame as ``{query_id: {metric: value}}``."""
    return {row.pop("query_id"): row for row in frame.iter_rows(named=True)}
