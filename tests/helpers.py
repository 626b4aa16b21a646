"""Small builders shared by the tests."""

from __future__ import annotations

import polars as pl


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
