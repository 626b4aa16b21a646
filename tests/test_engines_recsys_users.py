"""The metrics of a recommendation table that are the mean of per-user values read from
each user's own rows and the items' features (``sufficient_reco@k``,
``unrepeated_reco@k``, ``categorical_diversity@k``, ``intra_list_diversity@k``) on Spark
and Dask: each part gives its users' values, the mean over every user is the one plan's
exact mean, the same bits; ``item_features=`` handed whole to every part."""

from __future__ import annotations

import random
import re
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError, MetricParameterError
from tests.test_engines_recsys42 import PARTS, _engine


def _tables() -> dict[str, pl.DataFrame]:
    """40 users in two segments with lists of 1 to 12 of 60 items (``repeats``: with an
    item listed twice in some), each item's category and a 4-dimensional feature
    vector."""
    rng = random.Random(3)
    rows, repeated = [], []
    for u in range(40):
        items = rng.sample(range(60), rng.randint(1, 12))
        rows += [(f"u{u:02d}", f"i{i}", r + 1, f"s{u % 2}") for r, i in enumerate(items)]
        again = [*items, items[0]] if u % 3 == 0 else items
        repeated += [(f"u{u:02d}", f"i{i}", r + 1, f"s{u % 2}") for r, i in enumerate(again)]
    schema = ["query_id", "doc_id", "rank", "segment"]
    run = pl.DataFrame(rows, schema=schema, orient="row")
    features = pl.DataFrame(
        {
            "doc_id": [f"i{i}" for i in range(60)],
            "category_id": [i % 7 for i in range(60)],
            "features": [[rng.gauss(0, 1) for _ in range(4)] for _ in range(60)],
        }
    )
    repeats = pl.DataFrame(repeated, schema=schema, orient="row")
    return {"run": run, "repeats": repeats, "item_features": features}


TABLES = _tables()
METRICS = [
    "sufficient_reco@5",
    "sufficient_reco(deep=True)@5",
    "unrepeated_reco@10",
    "categorical_diversity@5",
    "intra_list_diversity@10",
    "intra_list_diversity",
]


@pytest.mark.parametrize("engine", ["spark", "dask"])
@pytest.mark.parametrize(
    ("options", "features"),
    [
        ({}, True),
        ({"by": "segment", "per_query": True}, True),
        ({"by": "segment", "check_duplicates": False}, False),
    ],
    ids=["means", "by-per-user", "repeated-items"],
)
def test_means_of_per_user_values_equal_one_machine(
    engine: str, options: dict[str, Any], features: bool, request: pytest.FixtureRequest
) -> None:
    evaluate, frame, back = _engine(engine, request)
    metrics = METRICS if features else METRICS[:3]
    tables = {"item_features": TABLES["item_features"]} if features else {}
    run = TABLES["run"] if features else TABLES["repeats"]  # unrepeated_reco's repeats
    one = irm.evaluate(run, metrics, **tables, **options)
    got = back(
        evaluate(
            frame(run),
            metrics,
            **{k: frame(v) for k, v in tables.items()},
            partitions=PARTS,
            **options,
        )
    )
    if options.get("per_query"):  # Dask gives the users' rows part by part
        got = got.sort(["segment", "query_id"])
    assert got.equals(one)


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_the_others_are_refused_by_name(engine: str, request: pytest.FixtureRequest) -> None:
    evaluate, frame, _ = _engine(engine, request)
    name = "Spark" if engine == "spark" else "Dask"
    run, features = frame(TABLES["run"]), frame(TABLES["item_features"])
    mixed = (
        "metrics 'sufficient_reco@5' and 'ndcg@5' are computed from different tables "
        "('sufficient_reco@5' describes the recommendation table, 'ndcg@5' the run against "
        f"its other tables): on {name}, evaluate them in two calls"
    )
    qrels = frame(TABLES["run"].select("query_id", "doc_id", relevance=pl.lit(1)))
    with pytest.raises(InvalidValueError, match=re.escape(mixed)):
        evaluate(run, ["sufficient_reco@5", "ndcg@5"], qrels=qrels)
    unread = (
        "item_features= is read by categorical_diversity@k and intra_list_diversity@k (the "
        "items' categories and feature vectors), and no metric asked for reads it: drop "
        "item_features=, or ask for one of them"
    )
    with pytest.raises(MetricParameterError, match=re.escape(unread)):
        evaluate(run, ["sufficient_reco@5"], item_features=features)
    replay = (
        "metrics \"novelty(kind='replay')@5\" and 'sufficient_reco@5' merge from different "
        f"parts on {name} (\"novelty(kind='replay')@5\" from the history's users, "
        "'sufficient_reco@5' from each user or query): evaluate them in two calls"
    )
    history = frame(TABLES["run"].select("query_id", "doc_id"))
    with pytest.raises(InvalidValueError, match=re.escape(replay)):
        evaluate(run, ["novelty(kind='replay')@5", "sufficient_reco@5"], interactions=history)


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_a_data_error_is_the_librarys_from_the_part_that_finds_it(
    engine: str, request: pytest.FixtureRequest
) -> None:
    # item i5 has no category: the first part that lists it raises one machine's error;
    # its count of such recommendations is that part's (documented in scale_out.md)
    evaluate, frame, back = _engine(engine, request)
    lacking = TABLES["item_features"].filter(pl.col("doc_id") != "i5")
    pattern = (
        r"item 'i5' \(recommended to user 'u\d\d'\) has no row, or a null category, in "
        r"item_features \(\d recommendations name such items\): categorical_diversity "
        r"counts the categories of each list"
    )
    with pytest.raises(InvalidValueError, match=pattern):
        irm.evaluate(TABLES["run"], ["categorical_diversity@5"], item_features=lacking)
    with pytest.raises(InvalidValueError, match=pattern):
        back(
            evaluate(
                frame(TABLES["run"]),
                ["categorical_diversity@5"],
                item_features=frame(lacking),
                partitions=PARTS,
            )
        )
