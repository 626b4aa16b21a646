"""The means of per-user values of a recommendation table out of core (``buckets=``):
each bucket of users gives its users' values by the one plan, the exact mean over
every user is the one plan's, the same bits."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError
from tests.test_engines_recsys_users import METRICS, TABLES

CASES: list[tuple[str, dict[str, Any], bool]] = [
    ("means", {}, True),
    ("by-per-user", {"by": "segment", "per_query": True}, True),
    ("by-means", {"by": "segment"}, True),
    ("repeated-items", {"by": "segment", "check_duplicates": False}, False),
]


@pytest.mark.parametrize(
    ("options", "features"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_buckets_give_the_one_plans_bits(options: dict[str, Any], features: bool) -> None:
    metrics = METRICS if features else METRICS[:3]
    run = TABLES["run"] if features else TABLES["repeats"]
    tables = {"item_features": TABLES["item_features"]} if features else {}
    one = irm.evaluate(run, metrics, **tables, **options)
    for buckets in (1, 3, "auto"):
        lazy = {k: v.lazy() for k, v in tables.items()}
        split = irm.evaluate(run.lazy(), metrics, **lazy, buckets=buckets, **options)
        assert split.collect().equals(one), buckets


def test_beside_accuracy_metrics_each_route_in_its_buckets(tmp_path: Path) -> None:
    run = TABLES["run"]
    qrels = run.filter(pl.col("rank") <= 2).select("query_id", "doc_id", relevance=pl.lit(1))
    metrics = ["ndcg@5", "categorical_diversity@5", "P@3"]
    tables = {"qrels": qrels, "item_features": TABLES["item_features"]}
    one = irm.evaluate(run, metrics, **tables)
    split = irm.evaluate(run, metrics, **tables, buckets=3, spill_dir=tmp_path)
    assert split.equals(one)
    assert list(tmp_path.iterdir()) == []


def test_the_others_are_refused_with_buckets() -> None:
    message = (
        "buckets=2: metric 'distributional_coverage@5' reads the interaction history or "
        "every user's rows at once, which are not split into buckets of users; out of core "
        "run the means of per-user values read from each user's own rows and the items' "
        "features "
        "(sufficient_reco@k, unrepeated_reco@k, categorical_diversity@k, "
        "intra_list_diversity@k): drop buckets=, or evaluate those metrics in a call of "
        "their own"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate(TABLES["run"], ["sufficient_reco@5", "distributional_coverage@5"], buckets=2)
    history = TABLES["run"].select("query_id", "doc_id")
    with pytest.raises(InvalidValueError, match="metric 'surprisal@5' reads the interaction"):
        irm.evaluate(TABLES["run"], ["surprisal@5"], interactions=history, buckets=2)
