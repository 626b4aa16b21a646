"""Fusion computes in Float64: integer order values beyond 2**53 are refused (they would
tie with their neighbours there), those within it fused exactly."""

from __future__ import annotations

import re

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

T = 1_700_000_000_000_000_000  # a timestamp in nanoseconds: beyond 2**53
RECENCY = pl.DataFrame(
    {"query_id": ["q1"] * 3, "doc_id": ["a", "b", "c"], "score": [T + 100, T, T - 10**9]}
)
BM25 = RECENCY.with_columns(pl.Series("score", [3.0, 2.0, 1.0]))


def _message(column: str, run: str, doc: str) -> str:
    return (
        f"column {column!r} of run {run!r} holds an integer beyond 2**53 (query 'q1', "
        f"document {doc!r}): fusion computes in Float64, where such integers tie with "
        "their neighbours (timestamps in nanoseconds); give the run an order that is exact "
        f"there, e.g. pl.col({column!r}).rank('dense').over('query_id')"
    )


@pytest.mark.parametrize("method", ["rrf", "combsum", "bordafuse", "condorcet"])
@pytest.mark.parametrize("dtype", [pl.Int64, pl.UInt64, pl.Int128])
def test_integer_scores_beyond_2_53_are_refused(method: str, dtype: pl.DataType) -> None:
    # before: fused in Float64, where a (T + 100) and b (T) tie: b ranked first by id
    recency = RECENCY.with_columns(pl.col("score").cast(dtype))
    message = _message("score", "recency", "a")
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.fuse({"recency": recency, "bm25": BM25}, method=method)


def test_a_long_frame_and_a_rank_column_are_refused_alike() -> None:
    long = pl.concat([RECENCY.with_columns(pl.lit(s).alias("system")) for s in ("x", "y")])
    with pytest.raises(InvalidValueError, match=re.escape(_message("score", "x", "a"))):
        irm.fuse(long, system="system")
    ranked = RECENCY.drop("score").with_columns(pl.Series("rank", [1, 2, 2**60]))
    with pytest.raises(InvalidValueError, match=re.escape(_message("rank", "ranked", "c"))):
        irm.fuse({"ranked": ranked, "bm25": BM25})


def test_the_fix_the_message_gives_fuses_exactly() -> None:
    exact = RECENCY.with_columns(pl.col("score").rank("dense").over("query_id"))
    fused = irm.fuse({"recency": exact, "same": exact}, method="rrf")
    assert fused.sort("rank")["doc_id"].to_list() == ["a", "b", "c"]


@pytest.mark.parametrize("dtype", [pl.Int64, pl.UInt64, pl.Int32, pl.UInt32])
def test_integers_within_2_53_fuse_as_before(dtype: pl.DataType) -> None:
    small = RECENCY.with_columns(
        pl.Series("score", [2**53, 2**53 - 1, 5]).cast(dtype, strict=False)
    )
    if dtype in (pl.Int32, pl.UInt32):
        small = RECENCY.with_columns(pl.Series("score", [7, 6, 5]).cast(dtype))
    fused = irm.fuse({"small": small, "bm25": BM25}, method="rrf")
    assert fused.sort("rank")["doc_id"].to_list() == ["a", "b", "c"]


# Decimal order values: the same rule, by value (round 10). Before, 2**53 + 1 and 2**53
# as Decimal(20, 0) (and 0.30000000000000001 beside 0.3 as Decimal(20, 17)) were fused
# in Float64, where they tie: b ranked above a, in silence, by every method.
def _decimal(run: str, doc: str) -> str:
    return (
        f"column 'score' of run {run!r} holds a decimal that Float64 rounds (query 'q1', "
        f"document {doc!r}): fusion computes in Float64, where such values may tie with "
        "their neighbours; give the run an order that is exact there, e.g. "
        "pl.col('score').rank('dense').over('query_id')"
    )


@pytest.mark.parametrize("method", ["rrf", "max", "sum", "bordafuse"])
@pytest.mark.parametrize(
    ("values", "dtype"),
    [
        ([2**53 + 1, 2**53, 5], pl.Decimal(20, 0)),
        (["0.30000000000000001", "0.3", "0.1"], pl.Decimal(20, 17)),
    ],
    ids=["whole", "fraction"],
)
def test_decimals_float64_rounds_are_refused(
    method: str, values: list, dtype: pl.DataType
) -> None:
    from decimal import Decimal

    scores = pl.Series("score", [Decimal(str(v)) for v in values], dtype=dtype)
    run = RECENCY.with_columns(scores)
    with pytest.raises(InvalidValueError, match=f"^{re.escape(_decimal('decimals', 'a'))}$"):
        irm.fuse({"decimals": run, "bm25": BM25}, method=method)


def test_decimals_float64_holds_fuse_exactly() -> None:
    from decimal import Decimal

    scores = pl.Series("score", [Decimal("0.3"), Decimal("0.25"), Decimal("-1.5")])
    run = RECENCY.with_columns(scores.cast(pl.Decimal(20, 17)))
    fused = irm.fuse(
        {"decimals": run, "floats": run.with_columns(pl.col("score").cast(pl.Float64))}
    )
    plain = irm.fuse({"decimals": BM25, "floats": BM25})
    assert fused.sort("rank")["doc_id"].to_list() == ["a", "b", "c"]
    assert fused.equals(plain)
