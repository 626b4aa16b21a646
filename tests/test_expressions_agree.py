"""Every metric expression gives what ``irm.evaluate`` gives on the same judged table.

A judged table (``qrels=None``) holds one row per judged document: its label, and its
rank, or its score (null: judged, not retrieved). The expressions in a
``group_by("query_id")`` and ``evaluate(..., per_query=True)`` must agree on random
tables with ties, graded and negative labels, unretrieved documents and queries that
retrieved nothing; a group that is not one ranking gives null for every metric.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_irmetrics as irm
from polars_irmetrics import expressions
from polars_irmetrics.errors import InvalidValueError

from .helpers import property_settings

#: (function, keyword arguments): every public metric expression, with its options.
CASES: list[tuple[str, dict[str, Any]]] = [
    ("precision", {"k": 2}),
    ("precision", {}),
    ("recall", {"k": 3, "denominator": "capped"}),
    ("recall", {}),
    ("f1", {"k": 2}),
    ("r_precision", {}),
    ("hit_rate", {"k": 1}),
    ("mrr", {}),
    ("mrr", {"k": 2}),
    ("map", {}),
    ("map", {"k": 3, "denominator": "capped"}),
    ("map", {"denominator": "retrieved"}),
    ("ndcg", {"k": 3}),
    ("ndcg", {"gain": "exponential", "ideal": "retrieved"}),
    ("dcg", {"k": 2}),
    ("idcg", {"k": 3}),
    ("cg", {"k": 2, "gain": "exponential"}),
    ("bpref", {}),
    ("num_ret", {}),
    ("num_rel", {}),
    ("num_rel_ret", {"k": 2}),
    ("err", {"k": 3}),
    ("rbp", {"p": 0.5, "gain": "linear"}),
    ("rbp_residual", {"k": 3}),
    ("arhr", {}),
    ("mar", {"k": 3}),
    ("fcp", {}),
    ("fcp", {"k": 2}),
    ("judged", {"k": 3}),
    ("trec_ndcg", {"gains": {1: 3, 2: 9}}),
    ("iprec", {"recall": 0.5}),
    ("relative_precision", {"k": 2}),
    ("rprec_mult", {"multiple": 2.0}),
    ("infap", {}),
    ("unjudged", {"k": 3}),
    # the recommender libraries' (issue 42; more in test_expressions_recsys.py)
    ("f1_beta", {"k": 2, "beta": 2.0}),
    ("partial_auc", {"k": 3}),
    ("pap", {"k": 2}),
    ("ncrr", {}),
    ("ncrr", {"k": 2}),
    ("rocauc", {}),
    ("rocauc", {"k": 2}),
]

#: Document ids whose order as text differs from their order as numbers (d9 > d10).
DOCS = ["d1", "d2", "d9", "d10", "d11", "x"]
SCHEMA = {
    "query_id": pl.String,
    "doc_id": pl.String,
    "score": pl.Float64,
    "rank": pl.Int64,
    "relevance": pl.Int64,
}


#: Metrics that read the order differently, checked with ``rank=irm.rank_by_score()``
#: too (all of them with a rank column: each costs a few hundred copies of the rank).
BY_SCORE = {"ndcg", "map", "fcp", "num_ret", "judged", "bpref", "err", "mar", "iprec"}


def metric_exprs(rank: str | pl.Expr, only: set[str] | None = None) -> list[pl.Expr]:
    functions: dict[str, Callable[..., pl.Expr]] = {name: getattr(irm, name) for name, _ in CASES}
    return [
        functions[name](**kwargs, rank=rank)
        for name, kwargs in CASES
        if only is None or name in only
    ]


def test_the_cases_cover_every_metric_expression() -> None:
    public = set(expressions.__all__) - {"rank_by_score"}
    assert {name for name, _ in CASES} == public


@st.composite
def judged_tables(draw: st.DrawFn) -> pl.DataFrame:
    """Queries of up to six judged documents; a null score is a document not retrieved.

    The rank is trec_eval's order of the scores, computed here by hand: score
    descending, ties by document id descending as text.
    """
    rows: list[tuple[str, str, float | None, int | None, int]] = []
    for query in range(draw(st.integers(1, 3))):
        docs = draw(st.lists(st.sampled_from(DOCS), max_size=6, unique=True))
        scores = [draw(st.sampled_from([None, 0.0, 0.5, 0.5, 1.0, 2.0])) for _ in docs]
        labels = [draw(st.sampled_from([-1, 0, 0, 1, 2, 3])) for _ in docs]
        retrieved = sorted(
            ((s, d) for s, d in zip(scores, docs, strict=True) if s is not None), reverse=True
        )
        ranks = {d: i + 1 for i, (_, d) in enumerate(retrieved)}
        for doc, score, label in zip(docs, scores, labels, strict=True):
            rows.append((f"q{query}", doc, score, ranks.get(doc), label))
    return pl.DataFrame(rows, schema=SCHEMA, orient="row")


def by_expressions(frame: pl.DataFrame | pl.LazyFrame, exprs: list[pl.Expr]) -> pl.DataFrame:
    out = frame.group_by("query_id").agg(exprs)
    result = out.collect() if isinstance(out, pl.LazyFrame) else out
    assert isinstance(out, pl.LazyFrame) == isinstance(frame, pl.LazyFrame)
    return result.sort("query_id")


def by_evaluate(frame: pl.DataFrame | pl.LazyFrame, exprs: list[pl.Expr]) -> pl.DataFrame:
    names = [e.meta.output_name() for e in exprs]
    out = irm.evaluate(frame, names, per_query=True)
    result = out.collect() if isinstance(out, pl.LazyFrame) else out
    assert isinstance(out, pl.LazyFrame) == isinstance(frame, pl.LazyFrame)
    return result.sort("query_id")


@property_settings(12)
@given(table=judged_tables(), lazy=st.booleans())
def test_expressions_agree_with_evaluate(table: pl.DataFrame, lazy: bool) -> None:
    frame = table.lazy() if lazy else table
    every = metric_exprs("rank")
    by_rank = by_evaluate(frame.drop("score"), every)
    assert_frame_equal(by_expressions(frame, every), by_rank, check_dtypes=False, check_exact=True)
    # ranked by score, evaluate reads a null score as a null rank, as rank_by_score does
    some = metric_exprs(irm.rank_by_score(), BY_SCORE)
    expected = by_rank.select("query_id", *(e.meta.output_name() for e in some))
    assert_frame_equal(by_evaluate(frame.drop("rank"), some), expected)
    assert_frame_equal(by_expressions(frame, some), expected, check_dtypes=False, check_exact=True)
    ranked = frame.with_columns(irm.rank_by_score().over("query_id").alias("by_score"))
    ranks = ranked.collect() if isinstance(ranked, pl.LazyFrame) else ranked
    assert ranks["by_score"].to_list() == table["rank"].to_list()


#: Two queries of one segment, and tables whose single query is not one ranking.
SEGMENT = pl.DataFrame(
    {
        "segment": ["web"] * 5,
        "query_id": ["q1", "q1", "q1", "q2", "q2"],
        "doc_id": ["a", "b", "c", "a", "d"],
        "score": [3.0, 2.0, None, 2.0, 1.0],
        "rank": [1, 2, None, 1, 2],
        "relevance": [1, 0, 2, 0, 1],
    }
)
NOT_ONE_RANKING = [
    ("several queries in the group", SEGMENT, "rank"),
    ("several queries, ranked by score", SEGMENT, irm.rank_by_score()),
    # distinct ranks, but a document listed twice
    ("a document twice", SEGMENT.with_columns(rank=pl.Series([1, 2, None, 3, 4])), "rank"),
    ("a rank held twice", SEGMENT.filter(pl.col("query_id") == "q1").with_columns(rank=1), "rank"),
    (
        "a rank below 1",
        SEGMENT.filter(pl.col("query_id") == "q1").with_columns(rank=pl.Series([0, 1, None])),
        "rank",
    ),
    (
        "a NaN score",
        SEGMENT.filter(pl.col("query_id") == "q1").with_columns(
            score=pl.Series([float("nan"), 2.0, None])
        ),
        irm.rank_by_score(),
    ),
]


@pytest.mark.parametrize(
    ("table", "rank"),
    [(table, rank) for _, table, rank in NOT_ONE_RANKING],
    ids=[case for case, _, _ in NOT_ONE_RANKING],
)
def test_a_group_that_is_not_one_ranking_gives_null(
    frame_kind: str, table: pl.DataFrame, rank: str | pl.Expr
) -> None:
    frame = table.lazy() if frame_kind == "LazyFrame" else table
    out = frame.group_by("segment").agg(metric_exprs(rank))
    result = out.collect() if isinstance(out, pl.LazyFrame) else out
    assert isinstance(out, pl.LazyFrame) == (frame_kind == "LazyFrame")
    assert result.height == 1
    assert result.drop("segment").null_count().row(0) == (1,) * len(CASES)
    # where evaluate, given the group as one query, refuses the table
    order = "rank" if isinstance(rank, str) else "score"
    with pytest.raises(irm.IrmError):
        irm.evaluate(table.drop("query_id"), "map", query_id="segment", order=order)


def test_one_query_per_group_gives_every_value(frame_kind: str) -> None:
    frame = SEGMENT.lazy() if frame_kind == "LazyFrame" else SEGMENT
    out = frame.group_by("segment", "query_id").agg(metric_exprs("rank"))
    result = out.collect() if isinstance(out, pl.LazyFrame) else out
    assert result.drop("segment", "query_id").null_count().row(0) == (0,) * len(CASES)


def test_a_frame_without_doc_ids_checks_the_ranks_only() -> None:
    # no doc_id column: nothing tells a document listed twice at two ranks
    twice = SEGMENT.drop("doc_id").filter(pl.col("query_id") == "q1")
    assert twice.select(irm.num_ret()).item() == 2
    renamed = SEGMENT.rename({"doc_id": "docno"}).with_columns(rank=pl.Series([1, 2, None, 3, 4]))
    # two queries: the query_id column tells them, whatever the document column's name
    assert renamed.select(irm.num_ret()).item() is None
    # without it, ranks 1..4 and no doc_id column: nothing tells this is not one ranking
    alone = renamed.drop("query_id")
    assert alone.select(irm.num_ret()).item() == 4
    assert alone.select(irm.num_ret(doc_id="docno")).item() is None


SEVERAL = pl.DataFrame(
    {
        "segment": ["web"] * 4 + ["app"] * 2,
        "query_id": ["q1", "q1", "q2", "q2", "q3", "q3"],
        "doc_id": ["a", "b", "c", "d", "e", "f"],
        "score": [2.0, 1.0, 2.0, 1.0, 2.0, 1.0],
        "relevance": [1, 0, 0, 1, 1, 0],
    }
)


def test_a_group_of_several_queries_is_null_with_ranks_by_score(frame_kind: str) -> None:
    # rank_by_score never repeats a rank and the documents differ: only the query_id
    # column tells that "web" holds two queries (it gave a number mixing them into one
    # fake ranking); a group of one query keeps its value
    frame = SEVERAL.lazy() if frame_kind == "LazyFrame" else SEVERAL
    metrics = [irm.ndcg(k=10, rank=irm.rank_by_score()), irm.map(rank=irm.rank_by_score())]
    out = frame.group_by("segment").agg(metrics).sort("segment")
    result = out.collect() if isinstance(out, pl.LazyFrame) else out
    assert result.rows() == [("app", 1.0, 1.0), ("web", None, None)]
    per_query = frame.group_by("segment", "query_id").agg(metrics)
    means = per_query.group_by("segment").agg(pl.col("ndcg@10", "map").mean()).sort("segment")
    collected = means.collect() if isinstance(means, pl.LazyFrame) else means
    # web: q1 nDCG 1, AP 1; q2 relevant at rank 2: nDCG 1/log2(3), AP 1/2
    segment, ndcg, ap = collected.row(1)
    assert (segment, ap) == ("web", 0.75)
    assert math.isclose(ndcg, (1 + 1 / math.log2(3)) / 2, rel_tol=1e-15)


@pytest.mark.parametrize("label", [float("nan"), float("inf"), 2.0**32])
def test_a_label_evaluate_refuses_gives_null(frame_kind: str, label: float) -> None:
    # a NaN label counted as relevant (polars orders NaN above every number): MAP 1.0
    judged = SEVERAL.filter(pl.col("query_id") == "q3").with_columns(
        pl.Series("relevance", [label, 0.0])
    )
    frame = judged.lazy() if frame_kind == "LazyFrame" else judged
    out = frame.select(irm.map(rank=irm.rank_by_score()), irm.ndcg(rank=irm.rank_by_score()))
    result = out.collect() if isinstance(out, pl.LazyFrame) else out
    assert result.rows() == [(None, None)]
    message = (
        "column 'relevance' of the judged table has 1 label(s) that are NaN, infinite, of "
        "magnitude 2**32 or more or below 2**-30 (other than 0), or between -1 and 0 in "
        "query 'q3'"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate(judged.drop("segment"), ["map"], order="score")
