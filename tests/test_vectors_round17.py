"""Vectors, round 17: the cast an integer embedding column is told to take keeps every
value (Float64 for integers beyond 16 bits: Float32 holds integers exactly only up to
2**24, so the old hint's Float32 changed 16777217 to 16777216 in silence; Float32 where
it holds them all), and ``neighbor_recall``'s tables refuse float document ids as every
route's ids are refused (they were matched by float equality)."""

from __future__ import annotations

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnTypeError

QUERIES = pl.DataFrame({"query_id": [1], "embedding": [[1.0, 0.0]]})
CORPUS = pl.DataFrame({"doc_id": [1, 2], "embedding": [[1.0, 0.0], [0.0, 1.0]]})
F64 = (
    "Float64 keeps 53 bits of each value; Float32 keeps 24, so it holds integers exactly "
    "only up to 2**24 in magnitude)"
)
HINTS = [
    (pl.List(pl.Int64), f"pl.Array(pl.Float64, d)) (d: the embeddings' length; {F64}"),
    (pl.Array(pl.Int32, 2), f"pl.Array(pl.Float64, 2)) ({F64}"),
    (pl.List(pl.UInt32), f"pl.Array(pl.Float64, d)) (d: the embeddings' length; {F64}"),
    (pl.Array(pl.Int16, 2), "pl.Array(pl.Float32, 2)) (Float32 holds every Int16 exactly)"),
    (
        pl.List(pl.UInt8),
        "pl.Array(pl.Float32, d)) (d: the embeddings' length; Float32 holds every UInt8 exactly)",
    ),
]


@pytest.mark.parametrize(("dtype", "hint"), HINTS, ids=[str(h[0]) for h in HINTS])
def test_an_integer_embedding_is_told_a_cast_that_keeps_its_values(
    dtype: pl.DataType, hint: str
) -> None:
    corpus = CORPUS.with_columns(pl.col("embedding").cast(dtype))
    with pytest.raises(ColumnTypeError) as caught:
        irm.knn(QUERIES, corpus, k=1)
    assert str(caught.value) == (
        f"column 'embedding' of the corpus has dtype {dtype}; embeddings must be Array or "
        f"List of Float32 or Float64: cast it, e.g. pl.col('embedding').cast({hint}"
    )


def test_the_float64_cast_keeps_what_float32_would_round() -> None:
    # 2**24 + 1 = 16777217 is not a float32: it rounds to 16777216
    big = pl.Series([[2**24 + 1, 0]], dtype=pl.List(pl.Int64))
    assert big.cast(pl.Array(pl.Float64, 2)).to_list() == [[16777217.0, 0.0]]
    assert big.cast(pl.Array(pl.Float32, 2)).to_list() == [[16777216.0, 0.0]]


RUN = pl.DataFrame({"query_id": [1, 1], "doc_id": [1.0, 2.0], "score": [0.9, 0.8]})
TRUTH = pl.DataFrame({"query_id": [1, 1], "doc_id": [1.0, 3.0], "score": [0.9, 0.85]})
FLOAT_IDS = [
    # both tables Float64: matched by float equality, 0.5 in silence
    ("both", RUN, TRUTH, "run"),
    ("neighbors", RUN.with_columns(pl.col("doc_id").cast(pl.Int64)), TRUTH, "neighbors"),
    ("run", RUN, TRUTH.with_columns(pl.col("doc_id").cast(pl.Int64)), "run"),
]


@pytest.mark.parametrize(
    ("name", "run", "truth", "where"), FLOAT_IDS, ids=[c[0] for c in FLOAT_IDS]
)
def test_neighbor_recall_refuses_float_document_ids(
    name: str, run: pl.DataFrame, truth: pl.DataFrame, where: str
) -> None:
    with pytest.raises(ColumnTypeError) as caught:
        irm.evaluate(run, ["neighbor_recall@2"], neighbors=truth)
    assert str(caught.value) == (
        f"column 'doc_id' in the {where} has dtype Float64; ids must be strings or integers: "
        "cast it, e.g. pl.col('doc_id').cast(pl.Int64)"
    )
    # cast as told: 1 of the 2 exact neighbours (1, 3) retrieved
    ints = [frame.with_columns(pl.col("doc_id").cast(pl.Int64)) for frame in (run, truth)]
    out = irm.evaluate(ints[0], ["neighbor_recall@2"], neighbors=ints[1])
    assert out["neighbor_recall@2"].item() == 0.5
