"""Exact kNN: against a brute-force oracle (every pair, Python's sort), in blocks, out of
core, and its errors."""

from __future__ import annotations

import math
import re
import tempfile
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_irmetrics as irm
from polars_irmetrics.errors import (
    ColumnTypeError,
    DuplicateError,
    FileFormatError,
    InvalidValueError,
    MissingFileError,
)
from polars_irmetrics.vectors.embeddings import Block
from polars_irmetrics.vectors.knn import TILE, _Tiles
from polars_irmetrics.vectors.parquet import corpus_files, parquet_blocks


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
    st.sampled_from(["DataFrame", "LazyFrame", "Array", "path"]),
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
    with tempfile.TemporaryDirectory() as folder:
        if kind == "path":  # two files: blocks run across them
            corpus = Path(folder)  # type: ignore[assignment]
            d_frame.head(len(docs) // 2).write_parquet(Path(folder) / "a.parquet")
            d_frame.slice(len(docs) // 2).write_parquet(Path(folder) / "b.parquet")
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


@pytest.mark.parametrize("kind", ["DataFrame", "LazyFrame", "path"])
@pytest.mark.parametrize("ids", [pl.String, pl.Int32])
def test_an_empty_corpus_keeps_its_id_dtype(kind: str, ids: pl.DataType, tmp_path: Path) -> None:
    queries = pl.DataFrame({"query_id": ["q"], "embedding": [[1.0]]})
    empty = pl.DataFrame(
        {"doc_id": [], "embedding": []},
        schema={"doc_id": ids, "embedding": pl.List(pl.Float64)},
    )
    corpus: object = empty.lazy() if kind == "LazyFrame" else empty
    if kind == "path":
        empty.write_parquet(tmp_path / "empty.parquet")
        corpus = tmp_path / "empty.parquet"
    run = irm.knn(queries, corpus, k=5)  # type: ignore[arg-type]
    assert run.height == 0
    assert run.schema == pl.Schema(
        {"query_id": pl.String, "doc_id": ids, "score": pl.Float64, "rank": pl.Int64}
    )


def _brute_force(q: np.ndarray, c: np.ndarray, metric: str) -> np.ndarray:
    """Every pair in float64, written plainly: each vector first divided by a power of
    two (exact), so that the squares neither overflow nor underflow."""
    q, c = q.astype(np.float64), c.astype(np.float64)
    if metric == "dot":
        return q @ c.T
    if metric == "l2":
        scale = 2.0 ** np.frexp(max(np.abs(q).max(), np.abs(c).max()))[1]
        diff = q[:, None, :] / scale - c[None, :, :] / scale
        return -np.sqrt((diff**2).sum(axis=2)) * scale
    qs = q / np.abs(q).max(axis=1, keepdims=True)
    cs = c / np.abs(c).max(axis=1, keepdims=True)
    qs /= np.sqrt((qs**2).sum(axis=1, keepdims=True))
    cs /= np.sqrt((cs**2).sum(axis=1, keepdims=True))
    return qs @ cs.T


def _check_against_brute_force(
    run: pl.DataFrame, q: np.ndarray, c: np.ndarray, k: int, metric: str
) -> None:
    """Each query's run is a top k of the float64 brute force up to the precision the
    docs state: every returned document is within ``tol`` of the k-th true score, and
    its score within ``tol`` of its true score."""
    truth = _brute_force(q, c, metric)
    single = q.dtype == np.float32
    assert run.height == len(q) * min(k, c.shape[0])
    for row, (qid, group) in enumerate(run.group_by("query_id", maintain_order=True)):
        assert qid == (row,)
        scores = truth[row]
        kth = np.sort(scores)[::-1][min(k, len(scores)) - 1]
        if metric == "l2":  # relative to the k-th distance, and to the farthest one
            tol = (1.2e-2 if single else 1e-6) * -kth + 1e-7 * np.abs(scores).max()
        elif metric == "dot":  # relative to the largest magnitudes of the products
            size = np.abs(q[row]).max() * np.abs(c).max() * q.shape[1]
            tol = (1e-5 if single else 1e-13) * size
        else:
            tol = 1e-5 if single else 1e-13
        docs = group["doc_id"].to_numpy()
        assert (scores[docs] >= kth - tol).all(), (metric, kth, scores[docs])
        got = group["score"].to_numpy().astype(np.float64)
        assert np.abs(got - scores[docs]).max() <= tol, (metric, got, scores[docs])
        assert group["rank"].to_list() == list(range(1, len(docs) + 1))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    offset=st.sampled_from([0.0, 1e-3, 1.0, -7.0, 100.0, 1e4, -1e6]),
    spread=st.sampled_from([1e-4, 1e-2, 1.0, 1e3]),
    metric=st.sampled_from(["l2", "dot", "cosine"]),
    dtype=st.sampled_from([np.float32, np.float64]),
    k=st.integers(1, 12),
    block_size=st.sampled_from([7, 64, 65_536]),
)
def test_knn_equals_a_float64_brute_force_over_offset_and_spread(
    seed: int,
    offset: float,
    spread: float,
    metric: str,
    dtype: type,
    k: int,
    block_size: int,
) -> None:
    # a common offset far larger than the spread: l2's |q|² - 2 q·c + |c|² cancelled to
    # -0.0 for every pair in float32 (offset 100, spread 0.01) before it was centred
    rng = np.random.default_rng(seed)
    dim = int(rng.integers(1, 24))
    q = (offset + spread * rng.standard_normal((int(rng.integers(1, 6)), dim))).astype(dtype)
    c = (offset + spread * rng.standard_normal((int(rng.integers(1, 120)), dim))).astype(dtype)
    if metric == "cosine" and (not np.abs(q).max(axis=1).all() or not np.abs(c).max(axis=1).all()):
        return  # a zero vector: refused under cosine (tested with the errors)
    run = irm.knn(q, c, k=k, metric=metric, block_size=block_size)  # type: ignore[arg-type]
    _check_against_brute_force(run, q, c, k, metric)


@pytest.mark.parametrize(
    ("metric", "dtype", "magnitude"),
    [
        ("l2", np.float32, 100.0),  # offset 100, spread 0.01: cancelled to -0.0 before
        ("cosine", np.float32, 3e19),  # the squared norm overflowed: every cosine 0
        ("l2", np.float32, 3e19),
        ("dot", np.float32, 1e9),
        ("cosine", np.float64, 1e200),  # an empty run before
        ("l2", np.float64, 1e200),
        ("l2", np.float64, 1e-200),
        ("cosine", np.float64, 1e-300),
        ("dot", np.float64, 1e150),
        ("l2", np.float32, 1e-30),
    ],
)
@pytest.mark.parametrize("kind", ["numpy", "DataFrame", "LazyFrame", "path"])
def test_vectors_far_from_one_in_magnitude(
    metric: str, dtype: type, magnitude: float, kind: str, tmp_path: Path
) -> None:
    rng = np.random.default_rng(5)
    spread = magnitude * 1e-4 if magnitude == 100.0 else magnitude
    offset = magnitude if magnitude == 100.0 else 0.0
    q = (offset + spread * rng.standard_normal((4, 16))).astype(dtype)
    c = (offset + spread * rng.standard_normal((300, 16))).astype(dtype)
    queries: object = q
    corpus: object = c
    if kind != "numpy":
        queries = pl.DataFrame({"query_id": np.arange(4), "embedding": q})
        frame = pl.DataFrame({"doc_id": np.arange(300), "embedding": c})
        corpus = frame.lazy() if kind == "LazyFrame" else frame
        if kind == "path":
            frame.write_parquet(tmp_path / "corpus.parquet", row_group_size=50)
            corpus = tmp_path / "corpus.parquet"
    run = irm.knn(queries, corpus, k=10, metric=metric, block_size=64)  # type: ignore[arg-type]
    _check_against_brute_force(run, q, c, 10, metric)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_one_query_of_tiny_vectors_under_l2(dtype: type) -> None:
    # one query, centred on itself, is the zero vector: its exponent 0 hid the corpus'
    # (about 2**-664), so the squares underflowed: both scores -0.0, the match second
    magnitude = 1e-200 if dtype == np.float64 else 1e-30
    q = np.array([[magnitude, 0.0]], dtype=dtype)
    c = np.array([[magnitude, 0.0], [0.0, magnitude], [magnitude, magnitude]], dtype=dtype)
    run = irm.knn(q, c, k=3, metric="l2")
    assert run["doc_id"].to_list() == [0, 2, 1]
    _check_against_brute_force(run, q, c, 3, "l2")
    assert run["score"][0] == 0.0


_F32, _F64 = ("float32", "3.4e+38"), ("float64", "1.8e+308")
_RANGE = (
    "the {} scores of the queries (largest |value| {} in column 'embedding') against the "
    "corpus (largest {}) exceed {}'s range ({}) and cannot be returned: "
)
_TO64 = "cast both embedding columns to Float64 (the run's scores are then Float64)"
_DOWN = "scale both sides' embeddings down by one factor"


@pytest.mark.parametrize(
    ("metric", "dtype", "magnitude", "message"),
    [
        ("dot", np.float32, 3e19, _RANGE.format("dot", "7.3e+19", "1.05e+20", *_F32) + _TO64),
        ("l2", np.float32, 5e37, _RANGE.format("l2", "1.22e+38", "1.74e+38", *_F32) + _TO64),
        ("dot", np.float64, 1e160, _RANGE.format("dot", "2.43e+160", "3.49e+160", *_F64) + _DOWN),
        ("l2", np.float64, 1e308, _RANGE.format("l2", "1.8e+308", "1.79e+308", *_F64) + _DOWN),
    ],
)  # fmt: skip
def test_scores_beyond_the_dtype_are_refused(
    metric: str, dtype: type, magnitude: float, message: str
) -> None:
    # every pair is kept (k = the corpus): the farthest l2 distances exceed the dtype
    rng = np.random.default_rng(5)
    with np.errstate(over="ignore"):
        q = np.clip(magnitude * rng.standard_normal((4, 16)), -1.79e308, 1.79e308).astype(dtype)
        c = np.clip(magnitude * rng.standard_normal((300, 16)), -1.79e308, 1.79e308).astype(dtype)
    q[0, 0] = np.finfo(dtype).max if magnitude == 1e308 else q[0, 0]
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.knn(q, c, k=300, metric=metric, block_size=64)  # type: ignore[arg-type]


def test_many_ties_keep_memory_bounded_by_the_blocks() -> None:
    # 200 queries and 20,000 identical documents under dot: every document ties with the
    # k-th; all of them were kept while the corpus was read (142 MiB at the peak, 4M
    # candidates), where exactly k per query are now (8 MiB)
    import tracemalloc

    n = 20_000
    corpus = pl.DataFrame(
        {"doc_id": [f"d{i}" for i in range(n)], "embedding": np.tile([[1.0, 0.0]], (n, 1))},
        schema={"doc_id": pl.String, "embedding": pl.Array(pl.Float32, 2)},
    )
    queries = pl.DataFrame(
        {"query_id": np.arange(200), "embedding": np.tile([[1.0, 0.0]], (200, 1))},
        schema={"query_id": pl.Int64, "embedding": pl.Array(pl.Float32, 2)},
    )
    tracemalloc.start()
    try:
        run = irm.knn(queries, corpus, k=10, metric="dot", block_size=1_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40 * 2**20, peak / 2**20
    # the ties broken as evaluate breaks them: doc_id descending as text
    best = sorted((f"d{i}" for i in range(n)), reverse=True)[:10]
    assert run.filter(pl.col("query_id") == 0)["doc_id"].to_list() == best
    assert run.height == 2_000


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    k=st.integers(1, 8),
    block_size=st.integers(1, 40),
    string_ids=st.booleans(),
)
def test_ties_equal_a_brute_force_with_the_same_rule(
    seed: int, k: int, block_size: int, string_ids: bool
) -> None:
    # one-hot and repeated vectors under dot: most scores tie; the brute force ranks by
    # score descending, then by id as text descending (trec_eval's rule, evaluate's)
    rng = np.random.default_rng(seed)
    n, dim = int(rng.integers(1, 60)), int(rng.integers(1, 4))
    c = np.eye(dim)[rng.integers(0, dim, n)] * rng.integers(1, 3, (n, 1))
    q = np.eye(dim)[rng.integers(0, dim, 3)]
    ids = rng.permutation(200)[:n]
    doc_ids: list[object] = [f"x{i}" for i in ids] if string_ids else ids.tolist()
    corpus = pl.DataFrame({"doc_id": doc_ids, "embedding": c.tolist()})
    queries = pl.DataFrame({"query_id": ["a", "b", "c"], "embedding": q.tolist()})
    run = irm.knn(queries, corpus, k=k, metric="dot", block_size=block_size)
    want = _oracle(
        list(zip(["a", "b", "c"], q.tolist(), strict=True)),
        list(zip(doc_ids, c.tolist(), strict=True)),
        k,
        "dot",
    )
    assert run.rows() == want


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
@pytest.mark.parametrize("kind", ["DataFrame", "LazyFrame", "path"])
def test_bad_input(
    queries: pl.DataFrame,
    corpus: pl.DataFrame | np.ndarray,
    kwargs: dict[str, object],
    error: type[Exception],
    message: str,
    kind: str,
    tmp_path: Path,
) -> None:
    source: object = corpus
    if kind == "LazyFrame" and isinstance(corpus, pl.DataFrame):
        source = corpus.lazy()
    if kind == "path" and isinstance(corpus, pl.DataFrame):
        corpus.write_parquet(tmp_path / "corpus.parquet")
        source = str(tmp_path / "corpus.parquet")
    with pytest.raises(error, match=re.escape(message)):
        irm.knn(queries, source, **kwargs)  # type: ignore[arg-type]


# --- a corpus given as Parquet path(s), read with pyarrow -----------------------------

#: File sizes of the corpus split into files (blocks run across row groups and files).
_SPLITS = (70, 130, 100)


def _corpus(ids: str, embedding: pl.DataType, rows: int = 300, dim: int = 6) -> pl.DataFrame:
    """A corpus with ties: rows 5..9 repeat rows 0..4 (the same vectors under other ids)."""
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((rows, dim))
    vectors[5:10] = vectors[0:5]
    vectors[200:203] = vectors[0]
    doc_ids = [f"d{i}" for i in range(rows)] if ids == "str" else list(range(rows))
    frame = pl.DataFrame({"doc_id": doc_ids, "embedding": vectors})
    return frame.cast({"embedding": embedding})


def _write(frame: pl.DataFrame, folder: Path, source: str) -> object:
    """``frame`` as Parquet in ``folder``, named as ``source`` says (one file for "file"
    and "Path", three files of ``_SPLITS`` rows for the others, row groups of 33)."""
    folder.mkdir(exist_ok=True)
    if source in ("file", "Path"):
        frame.write_parquet(folder / "corpus.parquet", row_group_size=33)
        return str(folder / "corpus.parquet") if source == "file" else folder / "corpus.parquet"
    paths, offset = [], 0
    for part, size in enumerate(_SPLITS):
        path = folder / f"part-{part}.parquet"
        frame.slice(offset, size).write_parquet(path, row_group_size=33)
        paths.append(path)
        offset += size
    return {
        "glob": str(folder / "part-*.parquet"),
        "folder": folder,
        "list": [str(p) for p in paths],
    }[source]


@pytest.mark.parametrize(
    ("metric", "embedding", "ids", "block_size", "source", "exclude_self"),
    [
        ("cosine", pl.Array(pl.Float32, 6), "str", 37, "glob", False),
        ("dot", pl.List(pl.Float32), "int", 1000, "file", False),
        ("l2", pl.List(pl.Float64), "str", 64, "folder", True),
        ("cosine", pl.Array(pl.Float64, 6), "int", 100, "list", False),
        ("dot", pl.Array(pl.Float32, 6), "int", 1, "Path", False),
        ("l2", pl.List(pl.Float32), "str", 70, "list", False),
        ("cosine", pl.List(pl.Float64), "int", 33, "glob", True),
    ],
)
def test_a_parquet_path_gives_the_in_memory_run_bit_for_bit(
    metric: str,
    embedding: pl.DataType,
    ids: str,
    block_size: int,
    source: str,
    exclude_self: bool,
    tmp_path: Path,
) -> None:
    docs = _corpus(ids, embedding)
    # float32 queries for float32 corpora; an Array[f64] corpus is cast to float32 queries
    q_type = pl.Array(pl.Float32, 6) if embedding != pl.List(pl.Float64) else embedding
    queries = docs.slice(0, 12).rename({"doc_id": "query_id"}).cast({"embedding": q_type})
    path = _write(docs, tmp_path / "corpus", source)
    options = {"k": 8, "metric": metric, "exclude_self": exclude_self}
    # the same block_size: BLAS may round a product of another shape differently
    whole = irm.knn(queries, docs, block_size=block_size, **options)  # type: ignore[arg-type]
    scanned = irm.knn(queries, pl.scan_parquet(path), block_size=block_size, **options)  # type: ignore[arg-type]
    from_path = irm.knn(queries, path, block_size=block_size, **options)  # type: ignore[arg-type]
    assert_frame_equal(from_path, whole, check_exact=True)
    assert_frame_equal(from_path, scanned, check_exact=True)
    assert from_path.height == 12 * 8
    # the five copies of row 0's vector (ids 0, 5, 200, 201, 202) tie: broken by id as text
    if metric == "cosine" and not exclude_self:
        first = from_path.filter(pl.col("query_id") == docs["doc_id"][0]).head(5)
        assert first["doc_id"].cast(pl.String).to_list() == sorted(
            [str(docs["doc_id"][i]) for i in (0, 5, 200, 201, 202)], reverse=True
        )


def _set(frame: pl.DataFrame, row: int, **values: object) -> pl.DataFrame:
    """``frame`` with the cells of ``row`` replaced (as Python objects)."""
    rows = frame.rows(named=True)
    rows[row] = {**rows[row], **values}
    return pl.DataFrame(rows, schema=frame.schema)


_LIST = _corpus("str", pl.List(pl.Float64))
_ARRAY = _corpus("int", pl.Array(pl.Float32, 6))


@pytest.mark.parametrize(
    ("corpus", "error", "message"),
    [
        (  # in the second file, in the fourth block of 37 rows
            _set(_LIST, 150, embedding=[1.0] * 5),
            InvalidValueError,
            "column 'embedding' of the corpus mixes dimensions: id 'd148' has 6 values, id "
            "'d150' has 5; every embedding must have the same length",
        ),
        (
            _set(_LIST, 140, embedding=None),
            InvalidValueError,
            "column 'embedding' of the corpus has a null embedding (id 'd140'); every row "
            "needs a vector: drop those rows",
        ),
        (
            _set(_LIST, 160, embedding=[1.0, None, 1.0, 1.0, 1.0, 1.0]),
            InvalidValueError,
            "column 'embedding' of the corpus has a null value in the embedding of id "
            "'d160'; fill or drop it",
        ),
        (
            _set(_ARRAY, 170, embedding=[1.0, float("nan"), 1.0, 1.0, 1.0, 1.0]),
            InvalidValueError,
            "column 'embedding' of the corpus has a NaN, infinite or null value in the "
            "embedding of id 170; embeddings must be finite: fix or drop that row",
        ),
        (
            _set(_ARRAY, 180, embedding=[1.0, None, 1.0, 1.0, 1.0, 1.0]),
            InvalidValueError,
            "column 'embedding' of the corpus has a NaN, infinite or null value in the "
            "embedding of id 180; embeddings must be finite: fix or drop that row",
        ),
        (
            _set(_ARRAY, 290, embedding=[float("inf"), 1.0, 1.0, 1.0, 1.0, 1.0]),
            InvalidValueError,
            "column 'embedding' of the corpus has a NaN, infinite or null value in the "
            "embedding of id 290",
        ),
        (
            _set(_LIST, 190, embedding=[0.0] * 6),
            InvalidValueError,
            "column 'embedding' of the corpus holds a zero vector (id 'd190'), which has no "
            "direction for cosine similarity; drop it, or use metric='dot' or 'l2'",
        ),
        (  # the same id in the first and the third file
            _set(_LIST, 250, doc_id="d10"),
            DuplicateError,
            "column 'doc_id' of the corpus: id 'd10' appears more than once; each id may "
            "appear once: keep one row per id, e.g. .unique('doc_id')",
        ),
        (
            _set(_ARRAY, 120, doc_id=None),
            InvalidValueError,
            "column 'doc_id' of the corpus has null value(s); every row needs an id: drop "
            "them, e.g. .drop_nulls('doc_id')",
        ),
        (
            _corpus("int", pl.Array(pl.Float32, 5), dim=5),
            InvalidValueError,
            "column 'embedding': the queries' embeddings have 6 dimensions and the corpus' "
            "5; both must come from one model",
        ),
        (
            _LIST.rename({"doc_id": "id"}),
            irm.ColumnNotFoundError,
            "column 'doc_id' not found in the corpus (its columns: 'id', 'embedding')",
        ),
        (
            _ARRAY.cast({"embedding": pl.Array(pl.Int32, 6)}),
            ColumnTypeError,
            "column 'embedding' of the corpus has dtype Array(Int32, shape=(6,)); embeddings "
            "must be Array or List of Float32 or Float64",
        ),
        (
            _ARRAY.cast({"doc_id": pl.Float64}),
            ColumnTypeError,
            "column 'doc_id' in the corpus has dtype Float64; ids must be strings or integers",
        ),
    ],
)
@pytest.mark.parametrize("kind", ["DataFrame", "LazyFrame", "path"])
def test_a_corpus_error_is_the_same_from_memory_a_scan_and_a_path(
    corpus: pl.DataFrame, error: type[Exception], message: str, kind: str, tmp_path: Path
) -> None:
    source: object = corpus
    if kind != "DataFrame":
        source = _write(corpus, tmp_path / "corpus", "list")
        if kind == "LazyFrame":
            source = pl.scan_parquet(source)  # type: ignore[arg-type]
    queries = pl.DataFrame(
        {"query_id": ["q"], "embedding": [[1.0, 0.0, 0.0, 0.0, 0.0, 0.0]]},
        schema={"query_id": pl.String, "embedding": pl.List(pl.Float64)},
    )
    with pytest.raises(error, match=re.escape(message)):
        irm.knn(queries, source, k=3, block_size=37)  # type: ignore[arg-type]


_EXPECTED = "expected a corpus of embeddings: Parquet files with an id and an embedding column"


def _damage(path: Path, column: int) -> None:
    """Overwrite the page header of ``column`` in the second row group of ``path``."""
    offset = pq.ParquetFile(path).metadata.row_group(1).column(column).data_page_offset
    raw = bytearray(path.read_bytes())
    raw[offset : offset + 16] = b"\xff" * 16
    path.write_bytes(bytes(raw))


@pytest.mark.parametrize(
    ("name", "error", "message"),
    [
        ("missing", MissingFileError, "{d}/nope.parquet: no such file or folder; {e}"),
        ("no match", MissingFileError, "{d}/*.pq: the pattern matches no file; {e}"),
        ("empty folder", MissingFileError, "{d}/empty: the folder holds no file; {e}"),
        ("missing in a list", MissingFileError, "{d}/nope.parquet: no such file or folder"),
        (
            "not Parquet",
            FileFormatError,
            "{d}/notes.parquet: not a Parquet file (it does not start with PAR1); {e}",
        ),
        (
            "truncated",
            FileFormatError,
            "{d}/a.parquet: a truncated Parquet file (it does not end with Parquet's footer, "
            "100 bytes); write it again, or copy it whole; {e}",
        ),
        (
            "damaged embedding",
            FileFormatError,
            "{d}/a.parquet: a damaged Parquet file (column 'embedding' cannot be decoded); "
            "write it again; {e}",
        ),
        (
            "damaged ids",
            FileFormatError,
            "{d}/a.parquet: a damaged Parquet file (column 'doc_id' cannot be decoded); "
            "write it again; {e}",
        ),
        (
            "other dtypes",
            FileFormatError,
            "{d}/b.parquet: column 'embedding' is List(Float32), but {d}/a.parquet has it as "
            "Array(Float32, shape=(6,)); every file of a corpus of embeddings needs the same "
            "column types: write the files again with one type",
        ),
        (
            "other columns",
            FileFormatError,
            "{d}/b.parquet: no column 'doc_id', which {d}/a.parquet has; every file of a "
            "corpus of embeddings needs the same columns",
        ),
    ],
)
def test_a_corpus_path_that_cannot_be_read(
    name: str, error: type[Exception], message: str, tmp_path: Path
) -> None:
    a, b = tmp_path / "a.parquet", tmp_path / "b.parquet"
    _ARRAY.write_parquet(a, row_group_size=100)
    source: object = a
    if name == "missing":
        source = tmp_path / "nope.parquet"
    elif name == "no match":
        source = str(tmp_path / "*.pq")
    elif name == "empty folder":
        (tmp_path / "empty").mkdir()
        source = tmp_path / "empty"
    elif name == "missing in a list":
        source = [a, tmp_path / "nope.parquet"]
    elif name == "not Parquet":
        source = tmp_path / "notes.parquet"
        source.write_text("doc_id,embedding\n")
    elif name == "truncated":
        a.write_bytes(a.read_bytes()[:100])
    elif name.startswith("damaged"):
        _damage(a, 1 if name == "damaged embedding" else 0)
    elif name == "other dtypes":
        _ARRAY.cast({"embedding": pl.List(pl.Float32)}).write_parquet(b)
        source = [a, b]
    else:
        _ARRAY.rename({"doc_id": "id"}).write_parquet(b)
        source = [a, b]
    queries = _ARRAY.head(1).rename({"doc_id": "query_id"})
    expected = message.format(d=tmp_path, e=_EXPECTED)
    with pytest.raises(error, match=re.escape(expected)):
        irm.knn(queries, source, k=3)  # type: ignore[arg-type]


@pytest.mark.parametrize("embedding", [pl.Array(pl.Float32, 6), pl.List(pl.Float32)])
def test_parquet_blocks_are_cut_every_block_size_rows_without_copying(
    embedding: pl.DataType, tmp_path: Path
) -> None:
    corpus = _corpus("int", embedding)
    paths = [tmp_path / f"{i}.parquet" for i in range(3)]
    for path, (offset, size) in zip(paths, [(0, 128), (128, 100), (228, 72)], strict=True):
        corpus.slice(offset, size).write_parquet(path, row_group_size=50)
    files = corpus_files(paths, "doc_id", "embedding")
    ids = files.ids("doc_id")
    assert ids.to_list() == list(range(300))
    blocks = list(parquet_blocks(files, ids, "embedding", 64, np.float32))
    assert [len(b.ids) for b in blocks] == [64, 64, 64, 64, 44]
    assert [b.ids[0] for b in blocks] == [0, 64, 128, 192, 256]
    expected = corpus.cast({"embedding": pl.Array(pl.Float32, 6)})["embedding"].to_numpy()
    assert np.array_equal(np.concatenate([b.vectors for b in blocks]), expected)
    # a block that is one of pyarrow's batches is a view of its buffer (read-only: not
    # copied), across row groups too; rows 192..255 run over two files and rows 256..299
    # over two batches of the third file (whose batches start at its row 0, row 228):
    # joined, a copy
    assert [b.vectors.flags.writeable for b in blocks] == [False, False, False, True, True]


@pytest.mark.parametrize("side", ["corpus", "queries"])
def test_a_damaged_file_under_a_lazyframe_is_the_librarys_error(side: str, tmp_path: Path) -> None:
    # polars reads a scan_parquet LazyFrame: its error is wrapped, with the fix
    a = tmp_path / "a.parquet"
    _ARRAY.write_parquet(a, row_group_size=100)
    _damage(a, 1)
    damaged = pl.scan_parquet(a)
    queries = _ARRAY.head(1).rename({"doc_id": "query_id"})
    pair = (
        (queries, damaged)
        if side == "corpus"
        else (damaged.rename({"doc_id": "query_id"}), _ARRAY)
    )
    with pytest.raises(FileFormatError) as raised:
        irm.knn(*pair, k=3)
    message = str(raised.value)
    assert message.startswith(f"the {side} could not be read (ComputeError: ")
    assert message.endswith(
        "); if it scans Parquet files, one may be damaged: pass the files' path instead of "
        "a LazyFrame (e.g. irm.knn(queries, 'corpus/*.parquet')) to have the file and "
        "column named"
    )
    assert isinstance(raised.value.__cause__, pl.exceptions.PolarsError)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("metric", ["dot", "cosine", "l2"])
def test_the_scores_bits_do_not_depend_on_the_blocks(dtype: type, metric: str) -> None:
    # BLAS picks its kernels by the product's shape: before, a block of 7 documents or
    # one query changed most scores in their last bit against one block of them all
    rng = np.random.default_rng(5)
    queries = pl.DataFrame(
        {"query_id": np.arange(9), "embedding": rng.standard_normal((9, 96)).astype(dtype)}
    )
    corpus = pl.DataFrame(
        {"doc_id": np.arange(2100), "embedding": rng.standard_normal((2100, 96)).astype(dtype)}
    )
    whole = irm.knn(queries, corpus, k=20, metric=metric)  # type: ignore[arg-type]
    for block_size in (1, 2, 7, 64, 2099, 4096):
        blocks = irm.knn(queries, corpus, k=20, metric=metric, block_size=block_size)  # type: ignore[arg-type]
        assert_frame_equal(blocks, whole, check_exact=True)
    sliced = irm.knn(queries.lazy(), corpus.lazy(), k=20, metric=metric, block_size=333)  # type: ignore[arg-type]
    assert_frame_equal(sliced, whole, check_exact=True)  # a LazyFrame read in slices
    if metric != "l2":  # l2 is centred on the queries of the call (its docstring says so)
        each = [irm.knn(queries[i : i + 1], corpus, k=20, metric=metric) for i in range(9)]  # type: ignore[arg-type]
        assert_frame_equal(pl.concat(each), whole, check_exact=True)


@pytest.mark.parametrize(
    "sizes", [[8192, 4096], [1, 4095, 4097, 3], [10_000, 10_000, 5], [4095], [5000, 100, 3000]]
)
def test_the_blocks_are_recut_into_whole_tiles_in_order(sizes: list[int]) -> None:
    tiles, out, start = _Tiles(), [], 0
    for size in sizes:
        ids = pl.Series("doc_id", np.arange(start, start + size))
        out += tiles.add(Block(ids, np.arange(start, start + size, dtype=np.float32)[:, None]))
        start += size
    assert all(len(b.ids) % TILE == 0 and len(b.ids) for b in out)
    rest = tiles.rest()
    out += [rest] if rest is not None else []
    assert (rest is None) == (start % TILE == 0)
    got = np.concatenate([b.ids.to_numpy() for b in out])
    assert got.tolist() == list(range(start))
    assert np.concatenate([b.vectors[:, 0] for b in out]).tolist() == list(range(start))
