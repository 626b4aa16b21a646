"""The means of per-user values of a recommendation table out of core (``buckets=``):
each bucket of users gives its users' values by the one plan, the exact mean over
every user is the one plan's, the same bits."""

from __future__ import annotations

import re
import warnings
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
        "buckets=2: metric 'distributional_coverage@5' reads every user's rows at once (or "
        "averages over the history's users), which are not split into buckets of users; out "
        "of core run the means of per-user values over the users of the recommendations "
        "(sufficient_reco@k, categorical_diversity@k, intra_list_diversity@k, "
        "serendipity@k, surprisal@k, average_popularity@k, long_tail_share@k...): drop "
        "buckets=, or evaluate those metrics in a call of their own"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate(TABLES["run"], ["sufficient_reco@5", "distributional_coverage@5"], buckets=2)
    history = TABLES["run"].select("query_id", "doc_id")
    replay = "buckets=2: metric \"novelty(kind='replay')@5\" reads every user's rows"
    with pytest.raises(InvalidValueError, match=re.escape(replay)):
        irm.evaluate(TABLES["run"], ["novelty(kind='replay')@5"], interactions=history, buckets=2)


HISTORY_METRICS = [
    "surprisal@10",
    "average_popularity@10",
    "long_tail_share@10",
    "serendipity@10",
    "intra_list_diversity@10",
    "intra_list_diversity(item_sim_measure='item_cooccurrence_count')@10",
    "serendipity(item_sim_measure='item_cooccurrence_count')@5",
]


@pytest.mark.parametrize(
    "options",
    [{}, {"by": "seg"}, {"by": "seg", "per_query": True}],
    ids=["means", "by", "per-user"],
)
def test_buckets_read_the_whole_history(options: dict[str, Any]) -> None:
    # each bucket's plan reads the whole interaction history (popularity, each user's
    # history, the co-occurrences): the per-user values and their exact means are the
    # one plan's
    from tests.test_order_free import TABLES as HISTORY_TABLES

    run = HISTORY_TABLES["run"]
    tables = {k: HISTORY_TABLES[k] for k in ("interactions", "item_features")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irm.CoverageWarning)
        one = irm.evaluate(run, HISTORY_METRICS, **tables, **options)
        split = irm.evaluate(run, HISTORY_METRICS, **tables, buckets=3, **options)
    assert split.equals(one)


def test_the_historys_warning_is_the_whole_tables_once() -> None:
    # the history holds 5 of the recommendations' 60 items: one warning, one machine's
    # words (each bucket alone holds some of the items)
    run = TABLES["run"]
    history = run.filter(pl.col("doc_id").is_in([f"i{i}" for i in range(5)])).select(
        "query_id", "doc_id"
    )
    with pytest.warns(irm.CoverageWarning) as one:
        irm.evaluate(run, ["surprisal@5"], interactions=history)
    with pytest.warns(irm.CoverageWarning) as split:
        irm.evaluate(run, ["surprisal@5"], interactions=history, buckets=3)
    assert [str(w.message) for w in split] == [str(w.message) for w in one]
