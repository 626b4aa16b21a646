"""Vector search, fourth pass: what a probe of ``irm.knn`` and of neighbour recall found
silently wrong or unwrapped (each case failed before its fix): dot products that
underflow the output dtype, knn's cosine scores rounded past 1 (self-search measured
against itself), embeddings of zero dimensions, and a non-bool ``exclude_self``."""

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

# -- 1. dot products below the output dtype's smallest normal number ------------------

_UNDER = (
    "the dot scores of the queries (largest |value| {} in column 'embedding') against "
    "the corpus (largest {}) fall below {}'s smallest normal number ({}), where distinct "
    "scores round to one value (or to 0) and would be ranked in a wrong order, and cannot "
    "be returned: "
)
_TO64 = "cast both embedding columns to Float64 (the run's scores are then Float64)"
_UP = (
    "scale both sides' embeddings up by one power of two, e.g. multiply both by 2.0**{} "
    "(the dot scores scale by its square, exactly; the neighbours stay the same)"
)


@pytest.mark.parametrize(
    ("dtype", "magnitude", "k", "message"),
    [
        # the tester's case: doc 2 (negative product) came first, its score -0.0
        (np.float64, 1e-170, 1, _UNDER.format("1e-170", "3e-170", "float64", "2.23e-308")
         + _UP.format(563)),
        (np.float64, 1e-170, 3, _UNDER.format("1e-170", "3e-170", "float64", "2.23e-308")
         + _UP.format(563)),
        # float32: the nearer document came second (both scores 0.0, ordered by id)
        (np.float32, 1e-25, 2, _UNDER.format("1e-25", "3e-25", "float32", "1.18e-38") + _TO64),
        (np.float32, 1e-22, 2, _UNDER.format("1e-22", "3e-22", "float32", "1.18e-38") + _TO64),
    ],
)  # fmt: skip
def test_dot_scores_that_underflow_are_refused(
    dtype: type, magnitude: float, k: int, message: str
) -> None:
    base = np.array([[3.0, 0, 0], [1.0, 0, 0], [-1.0, 0, 0]])
    q = (magnitude * np.array([[1.0, 0, 0]])).astype(dtype)
    c = (magnitude * base).astype(dtype)
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.knn(q, c, k=k, metric="dot")
    # the fixes the message gives: the neighbours of the vectors scaled up (or in float64)
    scaled = (
        irm.knn(q * 2.0**563, c * 2.0**563, k=k, metric="dot")
        if dtype == np.float64
        else irm.knn(q.astype(np.float64), c.astype(np.float64), k=k, metric="dot")
    )
    assert scaled["doc_id"].to_list() == [0, 1, 2][:k]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dot_scores_near_underflow_are_exact_or_refused(dtype: type) -> None:
    info = np.finfo(dtype)
    tiny = 2.0**info.minexp  # the smallest normal number
    q = np.array([[3 * 2.0 ** (info.minexp + 20), 0.0]], dtype=dtype)
    # products 3·2**(minexp+20) (normal), ±3·2**(minexp-10) (subnormal, exact), 0, and
    # 3·2**(minexp-nmant-20), below the smallest subnormal: rounded to 0
    c = np.array(
        [
            [1.0, 0.0],
            [2.0**-30, 0.0],
            [-(2.0**-30), 0.0],
            [0.0, 2.0**-30],
            [2.0 ** -(info.nmant + 40), 0.0],
        ],
        dtype=dtype,
    )
    # with the first document, max|q| × max|c| is above the smallest normal number: the
    # rounding of the last product (to 0) is within the stated precision (epsilon ×
    # max|q| × max|c|): returned, ranked as its rounded score (a tie with document 3,
    # broken by id as evaluate breaks it)
    run = irm.knn(q, c, k=5, metric="dot")
    assert run["doc_id"].to_list() == [0, 1, 4, 3, 2]
    assert run["score"].to_list() == [
        3 * 2.0 ** (info.minexp + 20), 3 * 2.0 ** (info.minexp - 10), 0.0, 0.0,
        -3 * 2.0 ** (info.minexp - 10),
    ]  # fmt: skip
    assert 3 * 2.0 ** (info.minexp - 10) < tiny
    # without it every product is below the smallest normal number: the subnormal ones
    # are exact (returned), the one rounded to 0 is not (refused)
    exact = irm.knn(q, c[1:4], k=3, metric="dot")
    assert exact["doc_id"].to_list() == [0, 2, 1]
    assert exact["score"].to_list() == [
        3 * 2.0 ** (info.minexp - 10),
        0.0,
        -3 * 2.0 ** (info.minexp - 10),
    ]
    with pytest.raises(InvalidValueError, match="fall below"):
        irm.knn(q, c[1:], k=4, metric="dot")
    with pytest.raises(InvalidValueError, match="fall below"):  # even where not kept
        irm.knn(q, c[1:], k=1, metric="dot")
    # zero products are exact at any magnitude: a zero query is not refused
    zero = irm.knn(np.zeros((1, 2), dtype=dtype), c[1:], k=3, metric="dot")
    assert zero["score"].to_list() == [0.0, 0.0, 0.0]


# -- 2. cosine scores rounded past 1: self-search measured against itself -------------


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind", ["numpy", "DataFrame"])
def test_a_self_search_cosine_run_measures_one_against_itself(dtype: type, kind: str) -> None:
    corpus = np.random.default_rng(1).standard_normal((200, 16)).astype(dtype)
    queries = corpus[:20]
    if kind == "DataFrame":
        exact = irm.knn(
            pl.DataFrame({"query_id": np.arange(20), "embedding": queries}),
            pl.DataFrame({"doc_id": np.arange(200), "embedding": corpus}),
            k=5,
        )
    else:
        exact = irm.knn(queries, corpus, k=5)
    # the cosine of a vector with itself came out 1.0000000000000004 (float32: 1.0000001)
    assert exact["score"].max() == 1.0
    metrics = [f"neighbor_recall_rel@{k}" for k in (1, 5)]
    metrics += ["neighbor_recall_rel(distance=one_minus_score)@1", "neighbor_recall@1"]
    out = irm.evaluate(exact, metrics, neighbors=exact)
    assert out.row(0) == (20, 1.0, 1.0, 1.0, 1.0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_knns_cosine_scores_stay_within_minus_one_and_one(dtype: type) -> None:
    rng = np.random.default_rng(7)
    corpus = rng.standard_normal((300, 24)).astype(dtype)
    corpus[1::2] = -corpus[::2] * dtype(3)  # opposite documents: cosine -1
    run = irm.knn(corpus[::2], corpus, k=300)
    scores = run["score"].to_numpy()
    assert scores.max() == 1.0
    assert scores.min() >= -1.0
    ones = run.filter(pl.col("rank") == 1)
    assert ones["doc_id"].to_list() == list(range(0, 300, 2))


@pytest.mark.parametrize(
    ("scores", "distance"),
    [
        # a cosine run of another tool rounded past 1 (faiss' float32 inner product of
        # normalised vectors): 1 - score below 0 put the threshold below the k-th itself
        ([1.0000000000000004, 0.5], "one_minus_score"),
        ([1.0000001192092896, 0.5], "one_minus_score"),
        # an l2 run of negated squared distances whose own distance rounded below 0
        ([1.1920929e-07, -0.5], "neg_score"),
    ],
)
def test_a_distance_rounded_below_zero_counts_as_zero(scores: list[float], distance: str) -> None:
    run = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["self", "other"], "score": scores})
    metric = f"neighbor_recall_rel(distance={distance})@1"
    assert irm.evaluate(run, [metric], neighbors=run).row(0) == (1, 1.0)


# -- 3. embeddings of zero dimensions -------------------------------------------------

_NO_DIMS = (
    "the {} matrix has shape {}: its embeddings have 0 dimensions, from which no score can "
    "be computed; pass the model's vectors as a matrix of rows × dimensions (at least one)"
)
_NO_DIMS_COLUMN = (
    "column 'embedding' of the {} holds embeddings of 0 dimensions (id {}), from which no "
    "score can be computed; pass the model's vectors (at least one value each)"
)


def _empty_embeddings(kind: str, ids: str, rows: int, tmp_path: Path) -> Any:
    dtype = pl.Array(pl.Float64, 0) if kind.endswith("Array") else pl.List(pl.Float64)
    frame = pl.DataFrame(
        {ids: np.arange(1, rows + 1), "embedding": [[]] * rows},
        schema={ids: pl.Int64, "embedding": dtype},
    )
    if kind.startswith("LazyFrame"):
        return frame.lazy()
    if kind.startswith("path"):
        path = tmp_path / "corpus.parquet"
        frame.write_parquet(path)
        return path
    return frame


@pytest.mark.parametrize("metric", ["cosine", "dot", "l2"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    ("queries", "corpus", "message"),
    [
        ((2, 0), (3, 0), _NO_DIMS.format("queries", "(2, 0)")),
        ((2, 0), (3, 4), _NO_DIMS.format("queries", "(2, 0)")),
        # no query: the corpus is still read, and refused
        ((0, 4), (3, 0), _NO_DIMS.format("corpus", "(3, 0)")),
        ((0, 0), (3, 0), _NO_DIMS.format("corpus", "(3, 0)")),
    ],
)
def test_numpy_embeddings_of_zero_dimensions_are_refused(
    metric: str, dtype: type, queries: tuple[int, int], corpus: tuple[int, int], message: str
) -> None:
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.knn(np.zeros(queries, dtype), np.zeros(corpus, dtype), k=1, metric=metric)  # type: ignore[arg-type]


@pytest.mark.parametrize("metric", ["cosine", "dot", "l2"])
@pytest.mark.parametrize(
    "kind", ["DataFrame", "DataFrame-Array", "LazyFrame", "LazyFrame-Array", "path", "path-Array"]
)
@pytest.mark.parametrize("side", ["queries", "corpus"])
def test_embedding_columns_of_zero_dimensions_are_refused(
    metric: str, kind: str, side: str, tmp_path: Path
) -> None:
    if side == "queries":  # every query of 0 dimensions
        queries = _empty_embeddings(kind.replace("path", "DataFrame"), "query_id", 2, tmp_path)
        corpus = _empty_embeddings(kind, "doc_id", 3, tmp_path)
    else:  # no query: the corpus is read, and refused
        queries = pl.DataFrame(
            {"query_id": [], "embedding": []},
            schema={"query_id": pl.Int64, "embedding": pl.List(pl.Float64)},
        )
        corpus = _empty_embeddings(kind, "doc_id", 3, tmp_path)
    message = _NO_DIMS_COLUMN.format(side, 1)
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.knn(queries, corpus, k=1, metric=metric)  # type: ignore[arg-type]


def test_empty_tables_of_unknown_dimension_are_still_searched() -> None:
    # no row, so no embedding of 0 dimensions: an empty run, as before
    empty = pl.DataFrame(
        {"query_id": [], "embedding": []},
        schema={"query_id": pl.Int64, "embedding": pl.List(pl.Float64)},
    )
    corpus = pl.DataFrame({"doc_id": [1], "embedding": [[1.0, 0.0]]})
    assert irm.knn(empty, corpus, k=1).height == 0
    assert irm.knn(np.zeros((0, 0)), np.zeros((2, 3)), k=1).height == 0
    # ...but a zero-dimension corpus is refused even then
    with pytest.raises(InvalidValueError, match="0 dimensions"):
        irm.knn(np.zeros((0, 0)), np.zeros((2, 0)), k=1)


# -- 4. exclude_self takes True or False only -----------------------------------------


@pytest.mark.parametrize("value", ["no", "yes", 1, 0, None, np.True_, [True]])
def test_exclude_self_must_be_a_bool(value: object) -> None:
    message = (
        f"exclude_self={value!r} is not True or False; pass exclude_self=True to leave out "
        "each query's own id (a corpus searched with its own rows), or False"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.knn(np.eye(2), np.eye(2), k=1, exclude_self=value)  # type: ignore[arg-type]
    # nothing is read before the options are checked: a missing corpus path is not reached
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.knn(np.eye(2), "/nonexistent/corpus.parquet", k=1, exclude_self=value)  # type: ignore[arg-type]


@pytest.mark.parametrize("option", ["per_query", "check_duplicates", "explain"])
def test_the_bool_options_of_the_neighbors_route_are_checked(option: str) -> None:
    # a guard (these were already refused): the neighbors route's bool options
    run = irm.knn(np.eye(3), np.eye(3), k=2)
    message = f"{option} must be True or False, got 'no'"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
            irm.evaluate(run, ["neighbor_recall@2"], neighbors=run, **{option: "no"})  # type: ignore[call-overload]
