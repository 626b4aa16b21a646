"""Exact kNN: against a brute-force oracle (every pair, Python's sort), in blocks, out of
core, and its errors."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnTypeError, DuplicateError, InvalidValueError


def _oracle(
    queries: list[tuple[object, list[float]]],
    docs: list[tuple[object, list[float]]],
    k: int,
    metric: str,
    exclude_self: bool = False,
) -> list[tuple[object, object, float, int]]:
    """Every pair scored one at a time in float64, ranked by Python's sort: score
    descending, then the id as text descending."""
    rows = []
    for qid, q in queries:
        scored = []
        for did, d in docs:
            if exclude_self and did == qid:
                continue
            if metric == "dot":
                s = math.fsum(a * b for a, b in zip(q, d, strict=True))
            elif metric == "l2":
                s = -math.sqrt(math.fsum((a - b) ** 2 for a, b in zip(q, d, strict=True)))
            else:
                dot = math.fsum(a * b for a, b in zip(q, d, strict=True))
                s = dot / (math.hypot(*q) * math.hypot(*d))
            scored.append((did, s))
        scored.sort(key=lambda pair: str(pair[0]), reverse=True)
        scored.sort(key=lambda pair: pair[1], reverse=True)  # stable: ties keep text order
        rows += [(qid, did, s, i + 1) for i, (did, s) in enumerate(scored[:k])]
    return rows


def _frame(ids: list[object], vectors: list[list[float]], id_name: str) -> pl.DataFrame:
    return pl.DataFrame({id_name: ids, "embedding": vectors})


@st.composite
def _tables(draw: st.DrawFn) -> tuple[list[list[float]], list[list[float]], list[int]]:
    dim = draw(st.integers(1, 3))
    vector = st.lists(st.integers(-2, 2).map(float), min_size=dim, max_size=dim)
    nonzero = vector.filter(lambda v: any(v))
    queries = draw(st.lists(nonzero, min_size=0, max_size=4))
    docs = draw(st.lists(nonzero, min_size=0, max_size=12))
    doc_ids = draw(st.permutations(list(range(0, 120, 10))))[: len(docs)]
    return queries, docs, list(doc_ids)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    _tables(),
    st.integers(1, 6),
    st.sampled_from(["dot", "l2", "cosine"]),
    st.integers(1, 5),
    st.sampled_from(["DataFrame", "LazyFrame", "Array"]),
)
def test_knn_equals_the_brute_force_oracle(
    tables: tuple[list[list[float]], list[list[float]], list[int]],
    k: int,
    metric: str,
    block_size: int,
    kind: str,
) -> None:
    queries, docs, doc_ids = tables
    q_ids = [f"q{i}" for i in range(len(queries))]
    dim = len((queries + docs + [[0.0]])[0])
    q_frame = pl.DataFrame(
        {"query_id": q_ids, "embedding": queries},
        schema={"query_id": pl.String, "embedding": pl.List(pl.Float64)},
    )
    d_frame = pl.DataFrame(
        {"doc_id": doc_ids, "embedding": docs},
        schema={"doc_id": pl.Int64, "embedding": pl.List(pl.Float64)},
    )
    if kind == "Array":
        q_frame = q_frame.cast({"embedding": pl.Array(pl.Float64, dim)})
        d_frame = d_frame.cast({"embedding": pl.Array(pl.Float64, dim)})
    corpus = d_frame.lazy() if kind == "LazyFrame" else d_frame
    got = irm.knn(q_frame, corpus, k=k, metric=metric, block_size=block_size)  # type: ignore[arg-type]
    want = _oracle(
        list(zip(q_ids, queries, strict=True)), list(zip(doc_ids, docs, strict=True)), k, metric
    )
    assert got.columns == ["query_id", "doc_id", "score", "rank"]
    if metric == "cosine":  # rounding of the norms: the ids where scores are clearly apart
        assert got["score"].to_list() == pytest.approx([r[2] for r in want], abs=1e-12)
        assert sorted(got["query_id"].to_list()) == sorted(r[0] for r in want)
        return
    expected = pl.DataFrame(
        want,
        schema={"query_id": pl.String, "doc_id": pl.Int64, "score": pl.Float64, "rank": pl.Int64},
        orient="row",
    )
    assert_frame_equal(got, expected, check_exact=True)


def test_ties_are_broken_as_evaluate_breaks_them() -> None:
    # ids 9 and 10 tie: as text "9" > "10", so 9 comes first (not by number)
    queries = pl.DataFrame({"query_id": ["q"], "embedding": [[1.0, 0.0]]})
    corpus = pl.DataFrame(
        {"doc_id": [10, 9, 8], "embedding": [[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]}
    )
    run = irm.knn(queries, corpus, k=2, metric="dot")
    assert run["doc_id"].to_list() == [9, 10]
    qrels = pl.DataFrame({"query_id": ["q"], "doc_id": [10], "relevance": [1]})
    by_rank = irm.evaluate(run, ["mrr"], qrels=qrels)
    by_score = irm.evaluate(run.drop("rank"), ["mrr"], qrels=qrels)
    assert by_rank["mrr"].item() == by_score["mrr"].item() == 0.5


def test_ties_across_blocks_keep_every_candidate() -> None:
    # five documents tie with the k-th best; the winners (by id as text) are in the last block
    corpus = pl.DataFrame(
        {"doc_id": ["a", "b", "c", "d", "e", "z"], "embedding": [[1.0]] * 5 + [[2.0]]}
    )
    queries = pl.DataFrame({"query_id": ["q"], "embedding": [[1.0]]})
    for block_size in (1, 2, 6):
        run = irm.knn(queries, corpus, k=3, metric="dot", block_size=block_size)
        assert run["doc_id"].to_list() == ["z", "e", "d"], block_size


def test_numpy_matrices_and_float32() -> None:
    rng = np.random.default_rng(0)
    q = rng.standard_normal((5, 8)).astype(np.float32)
    d = rng.standard_normal((40, 8)).astype(np.float32)
    run = irm.knn(q, d, k=3, block_size=7)
    assert run.schema == pl.Schema(
        {"query_id": pl.Int64, "doc_id": pl.Int64, "score": pl.Float32, "rank": pl.Int64}
    )
    cos = (q / np.linalg.norm(q, axis=1, keepdims=True)) @ (
        d / np.linalg.norm(d, axis=1, keepdims=True)
    ).T
    top = np.argsort(-cos.astype(np.float64), axis=1, kind="stable")[:, :3]
    assert run["doc_id"].to_numpy().reshape(5, 3).tolist() == top.tolist()
    # the same with frames of Array[f32, 8]
    frames = irm.knn(
        pl.DataFrame({"query_id": np.arange(5), "embedding": q}),
        pl.DataFrame({"doc_id": np.arange(40), "embedding": d}).lazy(),
        k=3,
    )
    assert_frame_equal(frames, run)


def test_a_null_inside_an_array_embedding() -> None:
    corpus = pl.DataFrame(
        {"doc_id": ["a", "b"], "embedding": [[1.0, None], [2.0, 0.0]]},
        schema={"doc_id": pl.String, "embedding": pl.Array(pl.Float32, 2)},
    )
    with pytest.raises(
        InvalidValueError,
        match=re.escape("a NaN, infinite or null value in the embedding of id 'a'"),
    ):
        irm.knn(QUERIES, corpus)


def test_out_of_core_parquet_equals_in_memory(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    docs = pl.DataFrame(
        {
            "doc_id": [f"d{i}" for i in range(300)],
            "embedding": rng.standard_normal((300, 6)).astype(np.float32),
        }
    )
    docs.write_parquet(tmp_path / "corpus.parquet", row_group_size=50)
    queries = docs.head(20).rename({"doc_id": "query_id"})
    scanned = pl.scan_parquet(tmp_path / "corpus.parquet")
    for metric in ("cosine", "dot", "l2"):
        whole = irm.knn(queries, docs, k=10, metric=metric)  # type: ignore[arg-type]
        blocks = irm.knn(queries, scanned, k=10, metric=metric, block_size=37)  # type: ignore[arg-type]
        assert_frame_equal(blocks, whole)


def test_out_of_core_errors_of_a_later_block_and_of_the_consumer(tmp_path: Path) -> None:
    # an error found in a block read late (a NaN in block 7 of 9), and one of the scoring
    # loop (ids of different kinds under exclude_self), are raised by the call
    rng = np.random.default_rng(2)
    vectors = rng.standard_normal((300, 4)).astype(np.float32)
    vectors[250, 1] = np.nan
    pl.DataFrame({"doc_id": np.arange(300), "embedding": vectors}).write_parquet(
        tmp_path / "nan.parquet", row_group_size=50
    )
    queries = pl.DataFrame({"query_id": [1, 2], "embedding": vectors[:2]})
    with pytest.raises(
        InvalidValueError,
        match=re.escape("column 'embedding' of the corpus has a NaN, infinite or null value "
                        "in the embedding of id 250"),
    ):  # fmt: skip
        irm.knn(queries, pl.scan_parquet(tmp_path / "nan.parquet"), k=3, block_size=37)
    text_ids = queries.with_columns(pl.col("query_id").cast(pl.String))
    with pytest.raises(ColumnTypeError, match=re.escape("exclude_self=True compares query ids")):
        irm.knn(
            text_ids,
            pl.scan_parquet(tmp_path / "nan.parquet"),
            k=3,
            block_size=37,
            exclude_self=True,
        )


def test_exclude_self() -> None:
    corpus = pl.DataFrame({"doc_id": ["a", "b", "c"], "embedding": [[1.0], [2.0], [4.0]]})
    queries = corpus.rename({"doc_id": "query_id"})
    run = irm.knn(queries, corpus, k=1, metric="l2", exclude_self=True, block_size=2)
    assert run.select("query_id", "doc_id").rows() == [("a", "b"), ("b", "a"), ("c", "b")]
    assert run["score"].to_list() == [-1.0, -1.0, -2.0]


def test_fewer_documents_than_k_and_empty_tables() -> None:
    queries = pl.DataFrame({"query_id": ["q"], "embedding": [[1.0]]})
    corpus = pl.DataFrame({"doc_id": [1], "embedding": [[3.0]]})
    assert irm.knn(queries, corpus, k=5)["rank"].to_list() == [1]
    empty = corpus.clear()
    assert irm.knn(queries, empty, k=5).height == 0
    assert irm.knn(queries.clear(), corpus, k=5).height == 0


QUERIES = pl.DataFrame({"query_id": ["q1", "q2"], "embedding": [[1.0, 0.0], [0.0, 1.0]]})
CORPUS = pl.DataFrame({"doc_id": ["a", "b"], "embedding": [[1.0, 1.0], [2.0, 0.0]]})


@pytest.mark.parametrize(
    ("queries", "corpus", "kwargs", "error", "message"),
    [
        (QUERIES, CORPUS, {"k": 0}, InvalidValueError, "k=0 is not a positive integer"),
        (
            QUERIES,
            CORPUS,
            {"metric": "ip"},
            InvalidValueError,
            "metric='ip' is not known; choose one of 'cosine', 'dot', 'l2'",
        ),
        (
            QUERIES,
            CORPUS.with_columns(pl.Series("embedding", [[1.0, 1.0], [2.0]])),
            {},
            InvalidValueError,
            "column 'embedding' of the corpus mixes dimensions: id 'a' has 2 values, id 'b' "
            "has 1; every embedding must have the same length",
        ),
        (
            QUERIES,
            CORPUS.with_columns(pl.Series("embedding", [[1.0], [2.0]])),
            {},
            InvalidValueError,
            "column 'embedding': the queries' embeddings have 2 dimensions and the corpus' 1; "
            "both must come from one model",
        ),
        (
            QUERIES,
            CORPUS.with_columns(pl.Series("embedding", [[1.0, float("nan")], [2.0, 0.0]])),
            {},
            InvalidValueError,
            "column 'embedding' of the corpus has a NaN, infinite or null value in the "
            "embedding of id 'a'; embeddings must be finite: fix or drop that row",
        ),
        (
            QUERIES.with_columns(pl.Series("embedding", [[1.0, 0.0], [0.0, 0.0]])),
            CORPUS,
            {},
            InvalidValueError,
            "column 'embedding' of the queries holds a zero vector (id 'q2'), which has no "
            "direction for cosine similarity; drop it, or use metric='dot' or 'l2'",
        ),
        (
            QUERIES,
            pl.concat([CORPUS, CORPUS]),
            {},
            DuplicateError,
            "column 'doc_id' of the corpus: id 'a' appears more than once; each id may appear "
            "once: keep one row per id, e.g. .unique('doc_id')",
        ),
        (
            pl.concat([QUERIES, QUERIES]),
            CORPUS,
            {},
            DuplicateError,
            "column 'query_id' of the queries: id 'q1' appears more than once",
        ),
        (
            QUERIES,
            CORPUS.with_columns(pl.Series("embedding", [[1.0, 1.0], None])),
            {},
            InvalidValueError,
            "column 'embedding' of the corpus has a null embedding (id 'b'); every row needs "
            "a vector: drop those rows",
        ),
        (
            QUERIES,
            CORPUS.with_columns(pl.col("embedding").cast(pl.List(pl.Int64))),
            {},
            ColumnTypeError,
            "column 'embedding' of the corpus has dtype List(Int64); embeddings must be Array "
            "or List of Float32 or Float64",
        ),
        (
            QUERIES,
            CORPUS.rename({"doc_id": "id"}),
            {},
            irm.ColumnNotFoundError,
            "column 'doc_id' not found in the corpus (its columns: 'id', 'embedding')",
        ),
        (
            QUERIES,
            np.zeros((3, 2), dtype=np.int64),
            {},
            ColumnTypeError,
            "the corpus matrix has shape (3, 2) and dtype int64",
        ),
    ],
)
@pytest.mark.parametrize("lazy", [False, True])
def test_bad_input(
    queries: pl.DataFrame,
    corpus: pl.DataFrame | np.ndarray,
    kwargs: dict[str, object],
    error: type[Exception],
    message: str,
    lazy: bool,
) -> None:
    if lazy and isinstance(corpus, pl.DataFrame):
        corpus = corpus.lazy()  # type: ignore[assignment]
    with pytest.raises(error, match=re.escape(message)):
        irm.knn(queries, corpus, **kwargs)  # type: ignore[arg-type]
