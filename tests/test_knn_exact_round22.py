"""knn's scores near the top k recomputed from the vectors: a vector and itself at
distance exactly 0 (cosine exactly 1), identical documents tied, near-duplicates at
their distance, and the top k equal to a direct float64 brute force (round 22)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm

# (dtype, scale, offset): vectors of spread `scale` around `offset`; before round 22 the
# squared-norm expansion gave float32 self-distances of 1e-3 to 0.35 on the larger ones
DATA = [
    (np.float32, 1.0, 0.0),
    (np.float32, 37.3, 5.0),
    (np.float32, 1e3, 0.0),
    (np.float32, 1e-20, 0.0),
    (np.float64, 1.0, 0.0),
    (np.float64, 37.3, 5.0),
    (np.float64, 1e3, 0.0),
    (np.float64, 1e150, 0.0),
]


def _corpus(dtype: type, scale: float, offset: float, rows: int = 600) -> np.ndarray:
    rng = np.random.default_rng(22)
    return (rng.standard_normal((rows, 48)) * scale + offset).astype(dtype)


def _brute(queries: np.ndarray, corpus: np.ndarray, metric: str) -> np.ndarray:
    """Every pair's score in float64, one formula per metric (no expansion)."""
    q, c = queries.astype(np.float64), corpus.astype(np.float64)
    if metric == "l2":
        top = max(float(np.abs(q).max()), float(np.abs(c).max()))
        diff = (q[:, None, :] - c[None, :, :]) / top
        scores = -np.sqrt((diff**2).sum(axis=2)) * top
    elif metric == "cosine":
        qn = q / np.abs(q).max(axis=1, keepdims=True)
        cn = c / np.abs(c).max(axis=1, keepdims=True)
        qn /= np.linalg.norm(qn, axis=1, keepdims=True)
        cn /= np.linalg.norm(cn, axis=1, keepdims=True)
        scores = np.clip(qn @ cn.T, -1, 1)
    else:
        scores = q @ c.T
    return scores.astype(queries.dtype).astype(np.float64)


@pytest.mark.parametrize(("dtype", "scale", "offset"), DATA)
@pytest.mark.parametrize(("metric", "self_score"), [("l2", 0.0), ("cosine", 1.0)])
def test_a_vector_and_itself_score_exactly(
    dtype: type, scale: float, offset: float, metric: str, self_score: float
) -> None:
    corpus = _corpus(dtype, scale, offset)
    run = irm.knn(corpus[::3], corpus, k=2, metric=metric)
    first = run.filter(pl.col("rank") == 1)
    assert first["doc_id"].to_list() == list(range(0, len(corpus), 3))
    assert first["score"].to_list() == [self_score] * len(first)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(
    ("metric", "tied"), [("l2", 0.0), ("cosine", 1.0), ("dot", None)], ids=str
)
def test_identical_documents_tie_and_are_ordered_by_id_as_text(
    dtype: type, metric: str, tied: float | None
) -> None:
    # ids 3 and 12 hold one vector: tied, "3" > "12" as text comes first (evaluate's
    # rule), though 12 > 3 as a number
    corpus = _corpus(dtype, 37.3, 5.0, rows=20)
    corpus[12] = corpus[3]
    run = irm.knn(corpus[3:4], corpus, k=3, metric=metric)
    assert run["doc_id"].to_list()[:2] == [3, 12]
    scores = run["score"].to_list()
    assert scores[0] == scores[1] > scores[2]
    if tied is not None:
        assert scores[0] == tied


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_self_match_excluded_leaves_its_identical_copy_at_zero(dtype: type) -> None:
    float = pl.Float64 if dtype == np.float64 else pl.Float32
    corpus = pl.DataFrame(
        {"doc_id": ["a", "b", "c"], "embedding": [[1.5, -2.25], [1.5, -2.25], [9.0, 1.0]]},
        schema={"doc_id": pl.String, "embedding": pl.Array(float, 2)},
    )
    queries = corpus.rename({"doc_id": "query_id"})
    run = irm.knn(queries, corpus, k=1, metric="l2", exclude_self=True)
    assert run.rows() == [("a", "b", 0.0, 1), ("b", "a", 0.0, 1), ("c", "b", run["score"][2], 1)]
    assert run["score"][2] == pytest.approx(-np.hypot(7.5, 3.25), rel=1e-7)


def test_near_duplicates_are_ranked_by_their_distance() -> None:
    # four documents 1e-9 to 4e-9 from a query 100 from the origin: the expansion's
    # rounding (about 1e-6 in distance) hid their order; computed directly, each
    # distance is the stored difference
    query = np.full((1, 8), 100.0)
    corpus = np.repeat(query, 4, axis=0)
    corpus[:, 0] += np.array([3e-9, 1e-9, 4e-9, 2e-9])
    run = irm.knn(query, corpus, k=4, metric="l2")
    assert run["doc_id"].to_list() == [1, 3, 0, 2]
    assert run["score"].to_list() == list(-np.abs(corpus[[1, 3, 0, 2], 0] - 100.0))


@pytest.mark.parametrize(
    ("dtype", "scale", "offset", "metric"),
    # dot scores of 1e150 vectors exceed float64, of 1e-20 float32 ones fall below
    # float32's normal numbers: both refused (tests/test_knn.py)
    [
        (*data, metric)
        for data in DATA
        for metric in ("l2", "cosine", "dot")
        if metric != "dot" or 1e-10 < data[1] < 1e100
    ],
)
@pytest.mark.parametrize("block_size", [65_536, 100])
def test_the_top_k_equals_a_float64_brute_force(
    dtype: type, scale: float, offset: float, metric: str, block_size: int
) -> None:
    corpus = _corpus(dtype, scale, offset)
    rng = np.random.default_rng(5)
    # queries near documents: near-duplicates around the k-th
    queries = corpus[rng.choice(len(corpus), 40)] * (1 + 1e-4 * rng.standard_normal((40, 48)))
    queries = queries.astype(dtype)
    k = 10
    run = irm.knn(queries, corpus, k=k, metric=metric, block_size=block_size)
    brute = _brute(queries, corpus, metric)
    got_ids = run["doc_id"].to_numpy().reshape(len(queries), k)
    got = run["score"].to_numpy().astype(np.float64).reshape(len(queries), k)
    want = -np.sort(-brute, axis=1)[:, :k]
    eps = float(np.finfo(dtype).eps)
    # l2: relative to the distance; cosine: absolute; dot: eps × d × max|q| × max|c|
    rtol = 4 * eps if metric == "l2" else 0.0
    atol = {"l2": 0.0, "cosine": 16 * eps}.get(
        metric, 4 * 48 * eps * float(np.abs(queries).max()) * float(np.abs(corpus).max())
    )
    # the run's scores are the brute force's for its documents, which are the best k
    mine = np.take_along_axis(brute, got_ids, axis=1)
    np.testing.assert_allclose(got, mine, rtol=rtol, atol=atol)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("metric", ["l2", "cosine"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_queries_split_over_calls_get_the_same_bits(metric: str, dtype: type) -> None:
    # each call centres l2's product on its own queries; the recomputed scores do not
    # depend on it
    corpus = _corpus(dtype, 37.3, 5.0)
    queries = corpus[:60] + np.asarray(0.01, dtype)
    whole = irm.knn(queries, corpus, k=5, metric=metric)
    halves = [irm.knn(queries[:17], corpus, k=5, metric=metric)]
    halves.append(
        irm.knn(queries[17:], corpus, k=5, metric=metric).with_columns(pl.col("query_id") + 17)
    )
    assert whole.equals(pl.concat(halves))
