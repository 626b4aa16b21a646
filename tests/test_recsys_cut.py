"""The recommendation-table metrics read from the rows within their largest cutoff.

Where every formula of a call reads the rows within a cutoff (``@k``) and nothing per
whole list (similarities), the plan joins the history and the item features to those
rows only, and to one row per user beyond them
(:func:`~polars_irmetrics.recsys.plan.build_recsys_plan`); the checks still read every
row. A metric without a cutoff in the same call (``catalog_coverage``) makes the plan
join every row: the two plans must give the same bits, and the same errors.
"""

from __future__ import annotations

import re
from typing import Any
from unittest.mock import patch

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_irmetrics as irm
from polars_irmetrics.errors import DuplicateError, InvalidValueError
from polars_irmetrics.metrics.registry import parse_metric
from polars_irmetrics.recsys import plan as recsys_plan

from .conftest import Evaluate

#: Every metric of the recommendation table that the plan computes from the cut rows.
PER_USER = [
    "sufficient_reco@{k}",
    "sufficient_reco(deep=True)@{k}",
    "unrepeated_reco@{k}",
    "unrepeated_reco(deep=True)@{k}",
    "surprisal@{k}",
    "categorical_diversity(category='genre')@{k}",
    "novelty(kind='replay')@{k}",
    "average_popularity@{k}",
    "long_tail_share@{k}",
]
WHOLE_TABLE = [
    "catalog_coverage@{k}",
    "distributional_coverage@{k}",
    "gini_index@{k}",
    "novelty@{k}",
]
#: In the same call, a metric of every row: the plan joins the whole table.
UNCUT = "catalog_coverage"


@st.composite
def _tables(draw: st.DrawFn) -> dict[str, pl.DataFrame]:
    """Users whose lists start at rank 1 to 4 with gaps (some wholly beyond a small
    cutoff), in two segments; items 10 and 11 unknown to the history, 11 to the item
    features too."""
    rows = []
    for u in range(draw(st.integers(1, 7))):
        items = draw(st.lists(st.integers(0, 11), min_size=1, max_size=6, unique=True))
        rank = draw(st.integers(1, 4))
        for i in items:
            rows.append((f"u{u}", f"i{i}", rank, u % 2))
            rank += draw(st.integers(1, 2))
    run = pl.DataFrame(rows, schema=["query_id", "doc_id", "rank", "seg"], orient="row")
    seen = draw(st.lists(st.integers(0, 9), min_size=1, max_size=25))
    users = draw(st.lists(st.integers(0, 9), min_size=len(seen), max_size=len(seen)))
    history = pl.DataFrame(
        {"query_id": [f"u{u}" for u in users], "doc_id": [f"i{i}" for i in seen]}
    )
    genres = draw(st.lists(st.sampled_from("abc"), min_size=11, max_size=11))
    features = pl.DataFrame({"doc_id": [f"i{i}" for i in range(11)], "genre": genres})
    return {"run": run, "interactions": history, "item_features": features}


def _both(
    tables: dict[str, pl.DataFrame], metrics: list[str], **options: Any
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The metrics from the cut rows, and from every row: beside ``UNCUT``, or (per
    user, where ``UNCUT`` is refused) with the plan's cut turned off."""
    run, given = tables["run"], {k: v for k, v in tables.items() if k != "run"}
    cut = irm.evaluate(run, metrics, **given, unseen_items="drop", **options)
    if options.get("per_query"):
        with patch.object(recsys_plan, "_cut", lambda scope: None):
            whole = irm.evaluate(run, metrics, **given, unseen_items="drop", **options)
        return cut, whole
    whole = irm.evaluate(run, [*metrics, UNCUT], **given, unseen_items="drop", **options)
    return cut, whole.drop(UNCUT)


@settings(max_examples=20, deadline=None)
@given(_tables(), st.integers(1, 4), st.booleans())
def test_the_cut_rows_give_every_rows_bits(
    tables: dict[str, pl.DataFrame], k: int, by: bool
) -> None:
    metrics = [m.format(k=k) for m in [*PER_USER, *WHOLE_TABLE]]
    cut, whole = _both(tables, metrics, **({"by": "seg"} if by else {}))
    assert_frame_equal(cut, whole, check_exact=True)


@settings(max_examples=25, deadline=None)
@given(_tables(), st.integers(1, 4))
def test_the_cut_rows_give_every_users_values(tables: dict[str, pl.DataFrame], k: int) -> None:
    # a user whose list lies wholly beyond k keeps its row (0, null or 1 as the formula
    # gives an empty top k)
    metrics = [m.format(k=k) for m in PER_USER]
    cut, whole = _both(tables, metrics, per_query=True, by="seg")
    assert_frame_equal(cut, whole, check_exact=True)


def test_a_list_wholly_beyond_the_cutoff_counts_as_an_empty_one(evaluate: Evaluate) -> None:
    run = pl.DataFrame(
        {"query_id": ["a", "a", "b", "b"], "doc_id": ["x", "y", "x", "z"], "rank": [1, 2, 3, 4]}
    )
    history = pl.DataFrame({"query_id": ["a", "b", "c"], "doc_id": ["y", "z", "x"]})
    got = evaluate(
        run, ["sufficient_reco@2", "novelty(kind='replay')@2"], interactions=history,
        per_query=True,
    )  # fmt: skip
    # a: x and y within 2, a saw y: sufficient, novelty 1 - 1/2; b: nothing within 2,
    # not sufficient, novelty 1 (RePlay's value for an empty list of a known user); c,
    # a user of the history without recommendations: novelty 1 (RePlay's)
    assert got.rows() == [("a", 1.0, 0.5), ("b", 0.0, 1.0), ("c", None, 1.0)]


#: (metrics, run, tables, error, message): a row beyond every cutoff is still checked.
_RUN = {"query_id": ["a", "a", "a", "b", "b"], "doc_id": ["x", "y", "z", "z", "w"]}
ERRORS = [
    (
        ["average_popularity@2"],
        {**_RUN, "rank": [1, 2, 7, 5, 6]},
        {"interactions": {"query_id": ["h1", "h2"], "doc_id": ["x", "y"]}},
        InvalidValueError,
        "item 'w' (recommended to user 'b') never occurs in the interactions, so it has "
        "no popularity (3 recommendations name such items)",
    ),
    (
        ["categorical_diversity(category='genre')@2"],
        {**_RUN, "rank": [1, 2, 7, 5, 6]},
        {
            "item_features": {"doc_id": ["x", "y", "w"], "genre": ["a", "b", "a"]},
            "interactions": {"query_id": ["h1"] * 4, "doc_id": ["x", "y", "z", "w"]},
        },
        InvalidValueError,
        "item 'z' (recommended to user 'a') has no row, or a null category, in "
        "item_features (2 recommendations name such items)",
    ),
    (
        ["sufficient_reco@2"],
        {"query_id": ["a", "a", "a", "b"], "doc_id": ["x", "y", "x", "y"], "rank": [1, 2, 7, 5]},
        {"interactions": {"query_id": ["a"], "doc_id": ["x"]}},
        DuplicateError,
        "column 'doc_id' of the run: query 'a' has 1 repeated listing(s)",
    ),
    (
        ["sufficient_reco@2"],
        {"query_id": ["a", "a", "b"], "doc_id": ["x", "y", "y"], "rank": [1, 2, 0]},
        {"interactions": {"query_id": ["a"], "doc_id": ["x"]}},
        InvalidValueError,
        "column 'rank' of the run has 1 rank(s) below 1 in query 'b'",
    ),
]


@pytest.mark.parametrize(("metrics", "run", "tables", "error", "message"), ERRORS)
@pytest.mark.parametrize("uncut", [False, True], ids=["cut", "whole"])
def test_every_row_is_checked(
    metrics: list[str],
    run: dict[str, list[Any]],
    tables: dict[str, dict[str, list[Any]]],
    error: type[Exception],
    message: str,
    uncut: bool,
) -> None:
    given = {name: pl.DataFrame(table) for name, table in tables.items()}
    asked = [*metrics, UNCUT] if uncut else metrics
    reads = {table for m in asked for table in parse_metric(m).reads}
    given = {name: table for name, table in given.items() if name in reads}
    with pytest.raises(error) as caught:
        irm.evaluate(pl.DataFrame(run), asked, **given)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("metrics", "message"),
    [
        # alone, the recommendation-table plan counts the duplicates itself, in the
        # accuracy metrics' words
        (["catalog_coverage@10"], "column 'doc_id' of the run: query 'u1' has "
         "1 repeated listing(s)"),
        # beside accuracy metrics, theirs is the one count of the same rows
        (["ndcg@10", "catalog_coverage@10"], "column 'doc_id' of the run: query 'u1' has "
         "1 repeated listing(s)"),
    ],
)  # fmt: skip
def test_an_item_listed_twice_is_refused_alone_and_beside_accuracy_metrics(
    metrics: list[str], message: str
) -> None:
    run = pl.DataFrame(
        {
            "query_id": ["u1", "u1", "u1", "u2"],
            "doc_id": ["a", "b", "a", "c"],
            "rank": [1, 2, 3, 1],
        }
    )
    qrels = pl.DataFrame({"query_id": ["u1"], "doc_id": ["a"], "relevance": [1]})
    history = pl.DataFrame({"query_id": ["u1", "u2", "u3"], "doc_id": ["a", "b", "c"]})
    judged = {"qrels": qrels} if "ndcg@10" in metrics else {}
    with pytest.raises(DuplicateError, match=re.escape(message)):
        irm.evaluate(run, metrics, interactions=history, **judged)
    lazy = irm.evaluate(run.lazy(), metrics, interactions=history.lazy(), **judged)
    with pytest.raises(DuplicateError, match=re.escape(message)):
        lazy.collect()
