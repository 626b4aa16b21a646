"""The metric expressions: a ``doc_id=`` naming a column the frame lacks is refused,
and a frame of no rows is no ranking (null, where ``evaluate`` gives no row)."""

from __future__ import annotations

import re

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnNotFoundError, CoverageWarning, MetricParameterError

JUDGED = pl.DataFrame(
    {
        "query_id": ["q", "q", "q"],
        "docno": ["a", "a", "b"],  # a listed twice: not one ranking
        "rank": [1, 2, 3],
        "relevance": [1, 0, 1],
    }
)

MISSPELT = (
    "column 'docid' not found in the frame: the metric reads its document ids from it "
    "(doc_id='docid'); name yours with doc_id=..., or leave doc_id= out where the frame "
    "has no id column"
)


@pytest.mark.parametrize(
    "expr",
    [
        irm.ndcg(k=10, doc_id="docid"),
        irm.map(doc_id="docid"),
        irm.precision(k=2, doc_id="docid"),
        irm.mrr(doc_id="docid"),
    ],
    ids=["ndcg", "map", "precision", "mrr"],
)
@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
def test_misspelt_doc_id_refused(expr: pl.Expr, lazy: bool) -> None:
    # before: the duplicate check was skipped and a value came out (ndcg 0.9197...)
    plan = JUDGED.lazy().group_by("query_id").agg(expr)
    with pytest.raises(ColumnNotFoundError, match=re.escape(MISSPELT)):
        plan.collect() if lazy else JUDGED.group_by("query_id").agg(expr)


def test_named_doc_id_is_read() -> None:
    # the column named: a listed twice, so not one ranking
    out = JUDGED.group_by("query_id").agg(irm.ndcg(k=10, doc_id="docno"))
    assert out["ndcg@10"].to_list() == [None]


def test_default_doc_id_optional() -> None:
    # no 'doc_id' column and doc_id= left out: the documents are not checked (documented)
    out = JUDGED.drop("docno").group_by("query_id").agg(irm.precision(k=3))
    assert out["precision@3"].to_list() == [2 / 3]


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
def test_no_rows_is_null(lazy: bool) -> None:
    # before: 0.0 for every metric over a frame of no rows
    frame = JUDGED.head(0).lazy() if lazy else JUDGED.head(0)
    out = frame.select(irm.ndcg(k=10), irm.map(), irm.precision(k=3), irm.recall(k=3))
    row = (out.collect() if isinstance(out, pl.LazyFrame) else out).row(0)
    assert row == (None, None, None, None)
    # and evaluate gives no row for no queries
    with pytest.warns(CoverageWarning, match="no judged query to evaluate"):
        per_query = irm.evaluate(
            JUDGED.head(0).rename({"docno": "doc_id"}), "ndcg@10", per_query=True
        )
    assert per_query.height == 0


@pytest.mark.parametrize("metric", [irm.ndcg, irm.dcg])
def test_a_score_column_unread_by_broken_ties_is_refused(metric: object) -> None:
    """score= is read only by ties='average' (its tie groups); with ties='break' a
    misspelt column was dropped in silence (irm.evaluate refuses it by name)."""
    message = (
        "score='nope' is read only with ties='average' (the tie groups); with ties='break' "
        "the order comes from rank= alone: drop score=, or pass ties='average'"
    )
    with pytest.raises(MetricParameterError, match=re.escape(message)):
        metric(2, score="nope", rank=irm.rank_by_score())  # type: ignore[operator]
    frame = pl.DataFrame({"doc_id": [1, 2, 3], "s2": [0.9, 0.9, 0.1], "relevance": [0, 1, 1]})
    # the tie groups of the named column, with ties='average'
    averaged = frame.select(
        metric(2, score="s2", ties="average", rank=irm.rank_by_score("s2"))  # type: ignore[operator]
    ).item()
    broken = frame.select(metric(2, rank=irm.rank_by_score("s2"))).item()  # type: ignore[operator]
    assert averaged != broken
