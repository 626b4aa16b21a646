"""Metric expressions on a frame that lacks a column raise the library's own errors."""

from __future__ import annotations

from collections.abc import Callable

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics import ColumnNotFoundError, ColumnTypeError

from .bad_inputs import EVERY_METRIC

#: A judged table that carries scores but no rank column.
SCORED = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2"],
        "doc_id": ["a", "b", "a"],
        "score": [2.0, 1.0, 1.0],
        "relevance": [0, 1, 1],
    }
)
NO_RANK = (
    "column 'rank' not found in the frame: the metric reads its ranks (1 = top) from it; "
    "name yours with rank=..., or rank by score with rank=irm.rank_by_score()"
)

CASES: list[tuple[str, pl.DataFrame, Callable[[], pl.Expr], type[Exception], str]] = [
    ("no rank column", SCORED, irm.map, ColumnNotFoundError, NO_RANK),
    (
        "no relevance column",
        SCORED.rename({"relevance": "label"}).with_columns(rank=pl.lit(1)),
        lambda: irm.ndcg(k=10),
        ColumnNotFoundError,
        "column 'relevance' not found in the frame: the metric reads its relevance labels "
        "from it; name yours with relevance=...",
    ),
    (
        "a rank column of text",
        SCORED.with_columns(rank=pl.lit("1")),
        irm.mrr,
        ColumnTypeError,
        "column 'rank' has dtype String; the metric reads its ranks (1 = top) from it, which "
        "must be numeric: cast it, e.g. pl.col('rank').cast(pl.Float64)",
    ),
    (
        "ranked by a score column the frame lacks",
        SCORED.drop("score"),
        lambda: irm.precision(k=1, rank=irm.rank_by_score()),
        ColumnNotFoundError,
        "column 'score' not found in the frame: the metric reads its scores from it; name "
        "yours with irm.rank_by_score(score=..., doc_id=...)",
    ),
    (
        "rank= names a column the frame lacks",
        SCORED,
        lambda: irm.recall(k=5, rank="position"),
        ColumnNotFoundError,
        "column 'position' not found in the frame: the metric reads its ranks (1 = top) from "
        "it; name yours with rank=..., or rank by score with rank=irm.rank_by_score()",
    ),
]


@pytest.mark.parametrize(
    ("frame", "expr", "error", "message"),
    [pytest.param(f, e, err, m, id=i) for i, f, e, err, m in CASES],
)
def test_missing_or_wrong_columns(
    frame_kind: str,
    frame: pl.DataFrame,
    expr: Callable[[], pl.Expr],
    error: type[Exception],
    message: str,
) -> None:
    def run() -> object:
        if frame_kind == "LazyFrame":
            return frame.lazy().group_by("query_id").agg(expr()).collect()
        return frame.group_by("query_id").agg(expr())

    with pytest.raises(error) as info:
        run()
    # polars adds the plan that failed below a lazy query's message
    assert str(info.value).splitlines()[0] == message


@pytest.mark.parametrize("name", [m for m in EVERY_METRIC if hasattr(irm, m)])
def test_every_metric_expression_names_the_missing_rank(name: str) -> None:
    expr = getattr(irm, name)(k=5) if name == "mar" else getattr(irm, name)()
    with pytest.raises(ColumnNotFoundError) as info:
        SCORED.group_by("query_id").agg(expr)
    assert str(info.value).splitlines()[0] == NO_RANK


def test_rank_by_score_gives_what_a_rank_column_gives() -> None:
    ranked = SCORED.with_columns(rank=pl.Series([1, 2, 1]))
    expected = ranked.group_by("query_id").agg(irm.map(), irm.ndcg(k=2)).sort("query_id")
    got = (
        SCORED.group_by("query_id")
        .agg(irm.map(rank=irm.rank_by_score()), irm.ndcg(k=2, rank=irm.rank_by_score()))
        .sort("query_id")
    )
    assert got.equals(expected)
    assert got["map"].to_list() == [0.5, 1.0]  # q1: the relevant b at rank 2
