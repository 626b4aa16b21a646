"""The metric expressions, round 13.

* A frame of no rows is no ranking: every ranking expression is null over it. With a
  ``doc_id`` column the row count was replaced by the documents' check (all present and
  distinct, which no rows pass), so the value was 0.0 (1.0 for ``rbp_residual``) as if
  the frame were a ranking that found nothing.
* A ``rank=`` expression is read as the same column by name would be: one rank per row
  (``rank=pl.lit(1)`` was one rank for the whole group, never held twice: precision@1
  2.0), of an integer dtype (a Float expression was read as positions, a String one
  was polars' own error), checked when the plan knows its dtype.
* ``compare`` and ``tukey_hsd`` ignored ``system=`` beside a dict of runs (which names
  each system by its key); it is refused, as ``fuse`` refuses it.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics import expressions
from polars_irmetrics.errors import ColumnTypeError, InvalidValueError

#: The required arguments of the ranking expressions that have some.
REQUIRED: dict[str, dict[str, float]] = {
    "f1_beta": {"k": 3},
    "iprec": {"recall": 0.5},
    "mar": {"k": 3},
    "pap": {"k": 3},
    "partial_auc": {"k": 3},
    "rprec_mult": {"multiple": 2.0},
}

#: Every public ranking expression (rank_by_score is a rank, not a metric).
RANKING: list[str] = [name for name in expressions.__all__ if name != "rank_by_score"]


def _metric(name: str) -> pl.Expr:
    function: Callable[..., pl.Expr] = getattr(irm, name)
    return function(**REQUIRED.get(name, {}))


def test_every_ranking_expression_is_covered() -> None:
    # a new expression with a required argument must be added to REQUIRED
    for name in RANKING:
        parameters = inspect.signature(getattr(irm, name)).parameters.values()
        required = {p.name for p in parameters if p.default is inspect.Parameter.empty}
        assert required == set(REQUIRED.get(name, {})), name
    assert len(RANKING) == 33


# ----------------------------------------------------- 1. a frame of no rows is null

EMPTY_SCHEMAS = {
    "ids": {"query_id": pl.String, "doc_id": pl.String, "rank": pl.Int64, "relevance": pl.Int64},
    "doc_id": {"doc_id": pl.String, "rank": pl.Int64, "relevance": pl.Int64},
    "no ids": {"rank": pl.Int64, "relevance": pl.Int64},
}


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
@pytest.mark.parametrize("schema", list(EMPTY_SCHEMAS), ids=list(EMPTY_SCHEMAS))
@pytest.mark.parametrize("name", RANKING)
def test_a_frame_of_no_rows_is_null(name: str, schema: str, lazy: bool) -> None:
    # fails on the old code where the frame has a doc_id column: 0.0 (rbp_residual 1.0)
    empty = pl.DataFrame(schema=EMPTY_SCHEMAS[schema])
    frame = empty.lazy() if lazy else empty
    out = frame.select(_metric(name))
    got = out.collect() if isinstance(out, pl.LazyFrame) else out
    assert got.rows() == [(None,)]


@pytest.mark.parametrize("name", RANKING)
def test_a_ranking_still_has_its_value(name: str) -> None:
    # the fix keeps the documents' check: a one-query ranking has a value, a document
    # listed twice none
    frame = pl.DataFrame(
        {
            "query_id": ["q"] * 3,
            "doc_id": ["a", "b", "c"],
            "rank": [1, 2, 3],
            "relevance": [1, 0, 1],
        }
    )
    assert frame.select(_metric(name)).item() is not None
    twice = frame.with_columns(doc_id=pl.lit("a"))
    assert twice.select(_metric(name)).item() is None


# ------------------------------------------- 2. a rank= expression is read as a column

BASE = pl.DataFrame(
    {
        "query_id": ["q"] * 3 + ["r"] * 2,
        "doc_id": ["a", "b", "c", "a", "b"],
        "rank": [1, 2, 3, 1, 2],
        "relevance": [1, 0, 1, 1, 1],
        "score": [0.3, 0.2, 0.1, 0.5, 0.4],
    }
)
ONE = BASE.filter(pl.col("query_id") == "q")


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
@pytest.mark.parametrize(
    "rank",
    [pl.lit(1), pl.lit(1, pl.Int64), pl.lit(2, pl.UInt8), pl.col("rank") * 0 + 1],
    ids=["lit", "lit-int64", "lit-uint8", "column"],
)
@pytest.mark.parametrize("name", RANKING)
def test_a_rank_held_twice_by_an_expression_is_null(name: str, rank: pl.Expr, lazy: bool) -> None:
    # fails on the old code for a literal: one rank for the group, never held twice
    # (precision@1 2.0, ndcg@2 1.226), where the same column by name gives null
    frame = BASE.lazy() if lazy else BASE
    function: Callable[..., pl.Expr] = getattr(irm, name)
    metric = function(**REQUIRED.get(name, {}), rank=rank)
    out = frame.group_by("query_id").agg(metric).sort("query_id")
    got = out.collect() if isinstance(out, pl.LazyFrame) else out
    assert got.rows() == [("q", None), ("r", None)]
    assert ONE.select(metric).rows() == [(None,)]
    assert BASE.select(metric.over("query_id")).to_series().to_list() == [None] * 5


def test_a_literal_rank_of_one_row_is_its_rank() -> None:
    # one row: rank 1 is one ranking, the value of the same column by name
    row = ONE.head(1)
    by_name = row.select(irm.precision(k=1), irm.ndcg(k=2), irm.mrr()).rows()
    assert (
        row.select(
            irm.precision(k=1, rank=pl.lit(1)),
            irm.ndcg(k=2, rank=pl.lit(1)),
            irm.mrr(rank=pl.lit(1)),
        ).rows()
        == by_name
        == [(1.0, 1.0, 1.0)]
    )


def test_an_integer_rank_expression_keeps_its_value() -> None:
    by_name = BASE.group_by("query_id").agg(irm.ndcg(k=2), irm.map()).sort("query_id")
    expression = BASE.group_by("query_id").agg(
        irm.ndcg(k=2, rank=pl.col("rank").cast(pl.Int32)), irm.map(rank=irm.rank_by_score())
    )
    assert expression.sort("query_id").equals(by_name)


def _wrong_dtype(dtype: str) -> str:
    # a float's cast drops its fraction (a score of 0.9 would become rank 0): said so
    whole = "where every value is a whole number, " if dtype == "Float64" else ""
    dropped = " (a cast drops a fraction: 1.5 becomes 1)" if whole else ""
    return (
        f"the rank= expression has dtype {dtype}; the metric reads its ranks (1 = top) from "
        f"it, which must be an integer: {whole}end it with .cast(pl.Int64){dropped}, or rank "
        "by score with rank=irm.rank_by_score()"
    )


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
@pytest.mark.parametrize("grouped", [False, True], ids=["select", "group_by"])
@pytest.mark.parametrize(
    ("rank", "message"),
    [
        (pl.col("rank").cast(pl.Float64), _wrong_dtype("Float64")),
        (pl.col("score"), _wrong_dtype("Float64")),
        (pl.col("doc_id"), _wrong_dtype("String")),
        (pl.col("rank") > 1, _wrong_dtype("Boolean")),
        (pl.lit(None), _wrong_dtype("Null")),
        (pl.lit(1.0), _wrong_dtype("Float64")),
    ],
    ids=["float-rank", "score", "doc_id", "boolean", "null", "float-literal"],
)
@pytest.mark.parametrize("name", ["ndcg", "mrr", "precision", "rbp_residual"])
def test_a_rank_expression_not_of_an_integer_dtype_is_refused(
    name: str, rank: pl.Expr, message: str, grouped: bool, lazy: bool
) -> None:
    # fails on the old code: accepted (a Float rank read as positions, a String rank
    # polars' own ComputeError) where the same column by name is a ColumnTypeError
    frame = BASE.lazy() if lazy else BASE
    metric = getattr(irm, name)(rank=rank)
    with pytest.raises(ColumnTypeError, match=f"^{re.escape(message)}$"):
        _collected(frame.group_by("query_id").agg(metric) if grouped else frame.select(metric))


def _collected(out: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return out.collect() if isinstance(out, pl.LazyFrame) else out


# ------------------------------- 3. system= beside a dict of runs is refused, not ignored

QRELS = pl.DataFrame(
    {"query_id": ["q", "q", "r"], "doc_id": ["x", "y", "x"], "relevance": [1, 0, 1]}
)
RUNS = {
    name: pl.DataFrame(
        {"query_id": ["q"] * 3 + ["r"] * 2, "doc_id": docs, "score": [3.0, 2.0, 1.0, 2.0, 1.0]}
    )
    for name, docs in (("a", ["x", "y", "z", "x", "y"]), ("b", ["y", "x", "z", "y", "x"]))
}
SYSTEM_CALLS: dict[str, Callable[..., object]] = {
    "compare": lambda **kw: irm.compare(RUNS, "P@1", qrels=QRELS, **kw),
    "compare-per_query": lambda **kw: irm.compare(RUNS, "P@1", qrels=QRELS, per_query=True, **kw),
    "tukey_hsd": lambda **kw: irm.tukey_hsd(RUNS, "P@1", qrels=QRELS, **kw),
}


@pytest.mark.parametrize("system", ["sys", "query_id"])
@pytest.mark.parametrize("call", list(SYSTEM_CALLS.values()), ids=list(SYSTEM_CALLS))
def test_a_dict_of_runs_refuses_system(call: Callable[..., object], system: str) -> None:
    # fails on the old code: system= names a long frame's column, and was ignored
    message = (
        f"system={system!r} is not read with a dict of runs: it names the system column "
        "of one long frame, and a dict names each system by its key; drop system=, or "
        "pass one long frame whose system column names the systems"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        call(system=system)


@pytest.mark.parametrize("call", list(SYSTEM_CALLS.values()), ids=list(SYSTEM_CALLS))
def test_a_dict_of_runs_takes_the_default_system(call: Callable[..., object]) -> None:
    result = call(system="system")
    assert isinstance(result, pl.DataFrame)
    assert result.equals(call())


def test_a_long_frame_reads_its_system_column() -> None:
    long = pl.concat([run.with_columns(run=pl.lit(name)) for name, run in RUNS.items()])
    assert irm.compare(long, "P@1", qrels=QRELS, system="run").equals(
        irm.compare(RUNS, "P@1", qrels=QRELS)
    )
    assert irm.tukey_hsd(long, "P@1", qrels=QRELS, system="run").equals(
        irm.tukey_hsd(RUNS, "P@1", qrels=QRELS)
    )
