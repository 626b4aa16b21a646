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


# -- 3. an approximate run whose scores cannot be of the exact run's kind ----------------

_KIND = (
    "column 'score' of the run holds {value} in query {query}, above {bound} beyond "
    "rounding, where every score of neighbors= is at most {bound} ({kind}): {never}, and "
    "no document scores above a query's best, which neighbors= holds; neighbour recall "
    "reads both tables' scores as one kind of distance: give the run scores of the exact "
    "run's kind ({fix})"
)
_NEGATED = {
    "bound": 0,
    "kind": "negated distances, as knn's l2 runs score",
    "never": "a negated distance is never above 0",
    "fix": "if they are distances, negate them, e.g. pl.col('score').neg()",
}
_COSINE = {
    "bound": 1,
    "kind": "similarities, as knn's cosine runs score",
    "never": "a cosine similarity is never above 1",
    "fix": "cosine similarities; from cosine distances, 1 - pl.col('score')",
}
_BOTH = ["neighbor_recall@10", "neighbor_recall_rel@10"]


def _probe_runs() -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The probe's case: an exact l2 run and an exact cosine run (knn's), and an
    approximate run of 10 random documents per query scored with true distances
    (positive) or true dot products."""
    rng = np.random.default_rng(1)
    corpus, queries = rng.standard_normal((300, 8)), rng.standard_normal((20, 8))
    pick = np.stack([rng.choice(300, 10, replace=False) for _ in range(20)])
    frame = {
        "query_id": np.repeat(np.arange(20), 10),
        "doc_id": pick.ravel(),
        "rank": np.tile(np.arange(1, 11), 20),
    }
    distance = np.linalg.norm(queries[:, None] - corpus[pick], axis=2)
    dot = np.einsum("qd,qkd->qk", queries, corpus[pick])
    return (
        irm.knn(queries, corpus, k=10, metric="l2"),
        irm.knn(queries, corpus, k=10),
        pl.DataFrame({**frame, "score": distance.ravel()}),
        pl.DataFrame({**frame, "score": dot.ravel()}),
    )


_L2, _COS, _DISTANCES, _DOTS = _probe_runs()


def _first_above(run: pl.DataFrame, bound: float) -> str:
    """The largest score above ``bound`` of the first query (in id order) holding one."""
    above = run.filter(pl.col("score") > bound).sort("query_id")
    query = above["query_id"][0]
    return repr(above.filter(pl.col("query_id") == query)["score"].max())


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize(
    ("run", "exact", "metrics", "fields"),
    [
        # the probe's case: positive distances against knn's l2 run measured 1.0, 1.0
        (_DISTANCES, _L2, _BOTH, _NEGATED),
        (_DISTANCES, _L2, ["neighbor_recall@10"], _NEGATED),
        (_DISTANCES, _L2, ["neighbor_recall_rel(distance='neg_score')@10"], _NEGATED),
        # dot products (above 1) against knn's cosine run
        (_DOTS, _COS, ["neighbor_recall@10"], _COSINE),
        (_DOTS, _COS, ["neighbor_recall_rel@10"], _COSINE),
    ],
)
def test_an_approximate_score_of_another_kind_is_refused(
    run: pl.DataFrame,
    exact: pl.DataFrame,
    metrics: list[str],
    fields: dict[str, Any],
    lazy: bool,
) -> None:
    value = _first_above(run, fields["bound"])
    message = _KIND.format(value=value, query=0, **fields)

    def evaluate() -> None:  # a LazyFrame's data checks run when it is collected
        out = irm.evaluate(
            run.lazy() if lazy else run, metrics, neighbors=exact.lazy() if lazy else exact
        )
        if isinstance(out, pl.LazyFrame):
            out.collect()

    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        evaluate()


def test_scores_that_can_be_of_the_exact_runs_kind_are_read() -> None:
    """Not refused: negated distances; rounding above the bound (a negated squared
    distance at 1e-9, another tool's cosine at 1.0000001); a dot-product run against
    an exact one whose scores exceed 1 (no bound) or are all at most 1 (its scores below
    -1 are dot products that can be); a query neighbors= lacks (no truth, left out)."""
    negated = _DISTANCES.with_columns(-pl.col("score"))
    assert irm.evaluate(negated, _BOTH, neighbors=_L2).row(0)[0] == 20
    rounded = _L2.with_columns(
        pl.when(pl.col("rank") == 1).then(1e-9).otherwise(pl.col("score")).alias("score")
    )
    assert irm.evaluate(rounded, _BOTH, neighbors=_L2).row(0) == (20, 1.0, 1.0)
    past_one = _COS.with_columns(
        pl.when(pl.col("rank") == 1).then(1.0000001).otherwise(pl.col("score")).alias("score")
    )
    assert irm.evaluate(past_one, _BOTH, neighbors=_COS).row(0) == (20, 1.0, 1.0)
    exact_dot = irm.knn(*_dot_inputs(1.0), k=10, metric="dot")
    assert exact_dot["score"].max() > 1
    assert irm.evaluate(_DOTS, ["neighbor_recall@10"], neighbors=exact_dot).row(0)[0] == 20
    small = irm.knn(*_dot_inputs(0.1), k=10, metric="dot")  # every score <= 1
    assert small["score"].max() <= 1
    below = small.with_columns(pl.col("score") - 5.0)  # below -1: a dot product's
    assert irm.evaluate(below, ["neighbor_recall@10"], neighbors=small).row(0)[0] == 20
    extra = pl.DataFrame(
        {"query_id": [99], "doc_id": [0], "score": [5.0], "rank": [1]},
        schema=_DISTANCES.schema,
    )
    run = pl.concat([_L2.select(_DISTANCES.columns), extra])
    assert irm.evaluate(run, _BOTH, neighbors=_L2).row(0) == (20, 1.0, 1.0)


def _dot_inputs(scale: float) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    corpus, queries = rng.standard_normal((300, 8)), rng.standard_normal((20, 8))
    return queries * scale, corpus * scale
