"""Out of core (``buckets=``, ``memory_limit=``), round 14: one plan's bits or one plan's
refusal, whatever else the call asks for."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm

RECS = pl.DataFrame(
    {
        "query_id": [1, 1, 2, 2, 3, 3, 4],
        "doc_id": [10, 11, 10, 12, 11, 13, 12],
        "score": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3],
    }
)
CATEGORIES = pl.DataFrame({"doc_id": [10, 11, 12, 13], "category_id": [0, 1, 1, 2]})
HISTORY = pl.DataFrame({"query_id": [1, 2, 3, 5], "doc_id": [10, 11, 12, 13]})

# categorical_diversity's item features hold categories, no vectors: the metrics merged
# apart in buckets (item counts, the history's users) do not read them
BESIDE_CATEGORIES = [
    "novelty(kind='replay')@5",
    "novelty@5",
    "gini_index@5",
    "catalog_coverage@5",
    "surprisal@5",
]


@pytest.mark.parametrize("other", BESIDE_CATEGORIES)
@pytest.mark.parametrize("buckets", [2, 3, "auto"])
@pytest.mark.parametrize("options", [{}, {"per_query": True}], ids=["means", "per-query"])
def test_categorical_diversity_beside_a_merged_metric_gives_one_plans_bits(
    other: str, buckets: int | str, options: dict[str, Any], tmp_path: Path
) -> None:
    if options and other in ("novelty@5", "gini_index@5", "catalog_coverage@5"):
        pytest.skip("a metric of the whole table has no per-query value")
    metrics = ["categorical_diversity@5", other]
    tables = {"item_features": CATEGORIES, "interactions": HISTORY}
    one = irm.evaluate(RECS, metrics, **tables, **options)
    split = irm.evaluate(RECS, metrics, **tables, **options, buckets=buckets)
    assert split.equals(one)
    path = tmp_path / "recs.parquet"
    RECS.write_parquet(path)
    lazy = irm.evaluate(pl.scan_parquet(path), metrics, **tables, **options, buckets=buckets)
    assert lazy.collect().equals(one)


def test_the_worked_example_of_categories_and_replay_novelty() -> None:
    recs = pl.DataFrame(
        {"query_id": [1, 1, 2, 2], "doc_id": [10, 11, 10, 12], "score": [0.9, 0.8, 0.7, 0.6]}
    )
    feats = pl.DataFrame({"doc_id": [10, 11, 12], "category_id": [0, 1, 1]})
    hist = pl.DataFrame({"query_id": [1, 2, 3], "doc_id": [10, 11, 12]})
    metrics = ["categorical_diversity@5", "novelty(kind='replay')@5"]
    one = irm.evaluate(recs, metrics, item_features=feats, interactions=hist)
    assert one.row(0) == pytest.approx((0.4, 5 / 6))
    split = irm.evaluate(recs, metrics, item_features=feats, interactions=hist, buckets=2)
    assert split.equals(one)
