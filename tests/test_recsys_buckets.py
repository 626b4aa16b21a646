"""The metrics of a recommendation table out of core (``buckets=``): each bucket of
users gives its users' values (or its items' counts) by the one plan; the exact mean
over every user (the counts added up) gives the one plan's bits."""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_irmetrics as irm
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
    for buckets in (3, "auto"):  # "auto" is buckets=1 at this size
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


@pytest.mark.parametrize(
    ("metrics", "options"),
    [
        (["novelty(kind='replay')@5", "novelty(kind='replay')"], {}),
        (["novelty(kind='replay')@5"], {"by": "seg"}),
        (["novelty(kind='replay')@5", "surprisal@5"], {"per_query": True}),
        (["novelty(kind='replay')@3", "gini_index@3", "surprisal@5"], {"by": "seg"}),
    ],
    ids=["means", "by", "per-user", "mixed"],
)
def test_replay_novelty_counts_the_historys_users_once(
    metrics: list[str], options: dict[str, Any]
) -> None:
    # a mean over the history's users: each bucket gives its users' values, and the
    # merge adds the history's users without recommendations once (each valued 1)
    from tests.test_order_free import TABLES as HISTORY_TABLES

    run = HISTORY_TABLES["run"].filter(pl.col("query_id") >= "u010")
    # users after u090 have no history (left out); their interactions stay, renamed
    history = HISTORY_TABLES["interactions"].with_columns(
        pl.when(pl.col("query_id") > "u090")
        .then(pl.format("x{}", "query_id"))
        .otherwise(pl.col("query_id"))
        .alias("query_id")
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irm.CoverageWarning)
        one = irm.evaluate(run, metrics, interactions=history, **options)
        split = irm.evaluate(run, metrics, interactions=history, buckets=4, **options)
    assert split.equals(one)
    per_query = (
        "metric 'gini_index@5' describes a whole recommendation table, not one query: "
        "evaluate it with per_query=False"
    )
    with pytest.raises(Exception, match=re.escape(per_query)):
        irm.evaluate(run, ["gini_index@5"], interactions=history, buckets=2, per_query=True)


#: the metrics of every row, merged from each bucket's item counts
COUNTED = [
    "catalog_coverage@10",
    "catalog_coverage",
    "distributional_coverage@3",
    "distributional_coverage",
    "gini_index@10",
    "gini_index@1",
    "novelty@10",
    "novelty",
]


@pytest.mark.parametrize(
    ("metrics", "options"),
    [
        (COUNTED, {}),
        (COUNTED, {"by": "seg"}),
        (COUNTED, {"unseen_items": "drop"}),
        (["novelty@5", "catalog_coverage@3"], {"unseen_items": "recommenders"}),
        ([*COUNTED[:3], "surprisal@5", "intra_list_diversity@5"], {"by": "seg"}),
        (["gini_index@3", "sufficient_reco@4", "novelty@2"], {}),
    ],
    ids=["means", "by", "unseen-dropped", "unseen-recommenders", "beside-users", "mixed"],
)
def test_buckets_merge_the_items_counts(metrics: list[str], options: dict[str, Any]) -> None:
    # each bucket of users gives its items' counts within each cutoff; their sums give
    # the one plan's bits (whole numbers, exact sums of the formulas)
    from tests.test_order_free import TABLES as HISTORY_TABLES

    run = HISTORY_TABLES["run"]
    history = HISTORY_TABLES["interactions"]
    if options.get("unseen_items") in ("drop", "recommenders"):  # i0 to i9 not in it
        history = history.filter(pl.col("doc_id").str.slice(1).cast(pl.Int64) >= 10)
    tables: dict[str, pl.DataFrame] = {"interactions": history}
    if any("diversity@5" in m for m in metrics):
        tables["item_features"] = HISTORY_TABLES["item_features"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", irm.CoverageWarning)
        one = irm.evaluate(run, metrics, **tables, **options)
        for buckets in (1, 4):
            split = irm.evaluate(run.lazy(), metrics, **tables, buckets=buckets, **options)
            assert split.collect().equals(one), buckets


def test_a_group_below_every_cutoff_keeps_its_row() -> None:
    # segment 1's ranks start at 4: within no cutoff of 3, its coverage is 0 and its
    # novelty null, in the buckets as in the one plan
    run = pl.DataFrame(
        {
            "query_id": ["a", "a", "b", "c", "c"],
            "doc_id": ["x", "y", "x", "z", "y"],
            "rank": [1, 2, 1, 4, 5],
            "seg": [0, 0, 0, 1, 1],
        }
    )
    history = pl.DataFrame({"query_id": ["a", "b", "d"], "doc_id": ["x", "y", "z"]})
    metrics = ["catalog_coverage@3", "novelty@3", "distributional_coverage@3"]
    one = irm.evaluate(run, metrics, interactions=history, by="seg")
    assert one.row(1) == (1, 0.0, None, 0.0)
    split = irm.evaluate(run, metrics, interactions=history, by="seg", buckets=2)
    assert split.equals(one)


@st.composite
def _recommendations(draw: st.DrawFn) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A random recommendation table (ranks or scores with ties) and a history that
    holds every recommended item."""
    users = draw(st.integers(1, 8))
    rows = []
    for u in range(users):
        items = draw(st.lists(st.integers(0, 9), min_size=1, max_size=6, unique=True))
        scores = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0]), min_size=6, max_size=6))
        rows += [(f"u{u}", f"i{i}", r + 1, scores[r]) for r, i in enumerate(items)]
    run = pl.DataFrame(rows, schema=["query_id", "doc_id", "rank", "score"], orient="row")
    extra = draw(st.lists(st.integers(0, 9), max_size=20))
    history = pl.DataFrame(
        {
            "query_id": [f"h{i % 3}" for i in range(10 + len(extra))],
            "doc_id": [f"i{i}" for i in [*range(10), *extra]],
        }
    )
    return run, history


@settings(max_examples=25, deadline=None)
@given(_recommendations(), st.sampled_from(["rank", "score"]), st.integers(1, 4))
def test_item_counts_merge_to_the_one_plans_bits_on_random_tables(
    tables: tuple[pl.DataFrame, pl.DataFrame], order: str, buckets: int
) -> None:
    run, history = tables
    metrics = [*COUNTED, "gini_index@2", "distributional_coverage@1"]
    one = irm.evaluate(run, metrics, interactions=history, order=order)
    split = irm.evaluate(run, metrics, interactions=history, order=order, buckets=buckets)
    assert split.equals(one)


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
