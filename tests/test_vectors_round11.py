"""Vector search, eleventh pass: what a probe of ``irm.knn`` and of neighbour recall
found silently wrong or misdiagnosed (each case failed before its fix): a Float64
corpus that does not fit Float32 queries (NaN or infinite scores from a numpy corpus,
a wrong diagnosis from a DataFrame or Parquet one), and an approximate run whose scores
cannot be of the exact run's kind (positive distances against knn's negated ones)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

# -- 1, 2. a Float64 corpus scored in the Float32 queries' dtype -------------------------

_IN32 = (
    "float32, the dtype of the queries' embeddings, in which the corpus is scored; cast "
    "the queries' embeddings to Float64 (the run's scores are then Float64)"
)
_OVER = "{} holds {} in the embedding of {}, beyond the range (3.4e+38) of " + _IN32
_ZERO = (
    "{} holds a nonzero vector in the embedding of {} (largest |value| {}) whose values "
    "all round to 0, a zero vector, in " + _IN32
)
_COLUMN = "column 'embedding' of the corpus"

_HUGE = np.array([[1.0, 0.0], [2.0, -1e39], [1e39, 1e39]])
_TINY = np.array([[1.0, 0.0], [1e-300, -2e-300], [0.5, 1e-300]])


def _corpus(kind: str, vectors: np.ndarray, tmp_path: Path) -> Any:
    """The corpus ``vectors`` (ids 0..n-1) as ``kind``: a numpy matrix, a DataFrame of an
    Array or a List column, a LazyFrame, or a Parquet file by path."""
    if kind == "numpy":
        return vectors
    frame = pl.DataFrame({"doc_id": np.arange(len(vectors)), "embedding": vectors})
    if kind == "list":
        return frame.with_columns(pl.col("embedding").cast(pl.List(pl.Float64)))
    if kind == "lazy":
        return frame.lazy()
    if kind == "parquet":
        path = tmp_path / "corpus.parquet"
        frame.write_parquet(path)
        return path
    return frame


_KINDS = ["numpy", "array", "list", "lazy", "parquet"]


@pytest.mark.parametrize("kind", _KINDS)
@pytest.mark.parametrize("metric", ["cosine", "dot", "l2"])
@pytest.mark.parametrize(
    ("vectors", "message"),
    [
        # 1e39 fits float64 and became inf in float32: NaN / inf scores (numpy), or
        # "a NaN, infinite or null value" in the user's finite data (a DataFrame)
        (_HUGE, lambda name, row: _OVER.format(name, "-1e+39", row(1))),
        # a nonzero vector that became a zero vector: "holds a zero vector ... drop it"
        (_TINY, lambda name, row: _ZERO.format(name, row(1), "2e-300")),
    ],
)
def test_float64_corpus_that_does_not_fit_float32_queries(
    kind: str, metric: str, vectors: np.ndarray, message: Any, tmp_path: Path
) -> None:
    queries = np.ones((2, 2), np.float32)
    if kind != "numpy":
        queries = pl.DataFrame({"query_id": [0, 1], "embedding": queries})
    corpus = _corpus(kind, vectors, tmp_path)
    name, row = (
        ("the corpus matrix", lambda at: f"row {at}")
        if kind == "numpy"
        else (_COLUMN, lambda at: f"id {at}")
    )
    expected = message(name, row)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy RuntimeWarning leaks
        with pytest.raises(InvalidValueError, match=f"^{re.escape(expected)}$"):
            irm.knn(queries, corpus, k=2, metric=metric, block_size=2)


@pytest.mark.parametrize("kind", _KINDS)
@pytest.mark.parametrize("metric", ["cosine", "dot", "l2"])
def test_float64_corpus_that_fits_float32_queries(kind: str, metric: str, tmp_path: Path) -> None:
    """Values that round to float32 (partly below its range: 1e-300 beside 0.5) are
    scored in float32, as the corpus cast beforehand; the fix (queries in Float64)
    scores what was refused."""
    queries = np.ones((1, 2), np.float32)
    fitting = np.array([[1.0, 0.0], [0.5, 1e-300], [3e38, -1.0]])
    frame = pl.DataFrame({"query_id": [0], "embedding": queries})
    run = irm.knn(frame, _corpus(kind, fitting, tmp_path), k=3, metric=metric)
    cast = irm.knn(frame, fitting.astype(np.float32), k=3, metric=metric)
    assert run.equals(cast.with_columns(pl.col("doc_id").cast(run.schema["doc_id"])))
    wide = pl.DataFrame({"query_id": [0], "embedding": queries.astype(np.float64)})
    for vectors in (_HUGE, _TINY):
        out = irm.knn(wide, _corpus(kind, vectors, tmp_path), k=3, metric=metric)
        assert out.height == 3
        assert out["score"].dtype == pl.Float64
        assert out["score"].is_finite().all()
