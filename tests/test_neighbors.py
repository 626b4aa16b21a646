"""Neighbour recall: ann-benchmarks' formulas over numpy arrays, faiss' intersection."""

from __future__ import annotations

import re
import subprocess
import warnings
from pathlib import Path

import faiss
import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polars_irmetrics as irm
from polars_irmetrics.errors import (
    ColumnTypeError,
    CoverageWarning,
    DuplicateError,
    InvalidValueError,
    MetricParameterError,
    QuerySetError,
)

from .helpers import irm_in_process


def _ann_benchmarks_recalls(
    true_distances: list[np.ndarray],
    run_distances: list[np.ndarray],
    count: int,
    rel: bool,
    epsilon: float,
) -> np.ndarray:
    """ann-benchmarks' get_recall_values (ann_benchmarks/plotting/metrics.py), per query:
    the count of run_distances[i][:count] at most the threshold, over count."""
    recalls = np.zeros(len(run_distances))
    for i in range(len(run_distances)):
        data = true_distances[i]
        t = data[count - 1] * (1 + epsilon) if rel else data[count - 1] + epsilon
        actual = 0
        for d in run_distances[i][:count]:
            if d <= t:
                actual += 1
        recalls[i] = actual
    return recalls / float(count)


@st.composite
def _runs(draw: st.DrawFn) -> tuple[pl.DataFrame, pl.DataFrame]:
    """An exact run (10 neighbours a query, sorted distances with ties) and an
    approximate run of up to 10 of the corpus' documents, in its own order."""
    n_q = draw(st.integers(1, 5))
    exact_rows, approx_rows = [], []
    for q in range(n_q):
        corpus = draw(
            st.lists(st.integers(0, 40).map(lambda x: x / 20), min_size=12, max_size=20)
        )  # distances of the corpus' documents to the query (ties likely)
        order = sorted(range(len(corpus)), key=lambda i: corpus[i])
        exact_rows += [(f"q{q}", i, -corpus[i], r + 1) for r, i in enumerate(order[:10])]
        found = draw(st.lists(st.integers(0, len(corpus) - 1), max_size=10, unique=True))
        approx_rows += [(f"q{q}", i, -corpus[i], r + 1) for r, i in enumerate(found)]
    schema = {"query_id": pl.String, "doc_id": pl.Int64, "score": pl.Float64, "rank": pl.Int64}
    exact = pl.DataFrame(exact_rows, schema=schema, orient="row")
    approx = pl.DataFrame(approx_rows, schema=schema, orient="row")
    return exact, approx


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_runs(), st.integers(1, 10), st.sampled_from([0.0, 1e-3, 0.05, 0.5]))
def test_equals_ann_benchmarks(
    tables: tuple[pl.DataFrame, pl.DataFrame], k: int, eps: float
) -> None:
    exact, approx = tables
    queries = exact["query_id"].unique().sort().to_list()
    true_d = [
        (-exact.filter(pl.col("query_id") == q).sort("rank")["score"]).to_numpy() for q in queries
    ]
    run_d = [
        (-approx.filter(pl.col("query_id") == q).sort("rank")["score"]).to_numpy() for q in queries
    ]
    names = [f"neighbor_recall(epsilon={eps})@{k}", f"neighbor_recall_rel(epsilon={eps})@{k}"]
    got = irm.evaluate(approx.lazy(), names, neighbors=exact.lazy(), per_query=True).collect()
    assert got["query_id"].to_list() == queries
    for name, rel in zip(names, (False, True), strict=True):
        want = _ann_benchmarks_recalls(true_d, run_d, k, rel, eps)
        assert got[name].to_list() == want.tolist(), name
    means = irm.evaluate(approx, names, neighbors=exact)
    assert means["num_q"].item() == len(queries)
    assert means[names[0]].item() == pytest.approx(
        _ann_benchmarks_recalls(true_d, run_d, k, False, eps).mean(), abs=1e-15
    )


def test_default_epsilon_and_ties_of_the_kth_distance() -> None:
    exact = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": [1, 2, 3], "score": [-1.0, -2.0, -3.0]})
    # 7 is 0.0005 past the 2nd true distance (counts with 1e-3), 8 ties with it, 9 is far
    approx = pl.DataFrame(
        {"query_id": ["q"] * 3, "doc_id": [7, 8, 9], "score": [-2.0005, -2.0, -9.0]}
    )
    # none of the run's ids is in neighbors=: named, the values read distances all the same
    with pytest.warns(irm.CoverageWarning, match="^neighbors= holds none of the 3 documents"):
        out = irm.evaluate(
            approx,
            ["neighbor_recall@2", "neighbor_recall(epsilon=0)@2", "neighbor_recall@3"],
            neighbors=exact,
        )
    assert out.row(0) == (1, 1.0, 0.5, 2 / 3)


def test_faiss_intersection_with_an_ivf_index() -> None:
    rng = np.random.default_rng(7)
    d, n, n_q, k = 16, 2000, 50, 10
    corpus = rng.standard_normal((n, d)).astype(np.float32)
    queries = rng.standard_normal((n_q, d)).astype(np.float32)
    exact = irm.knn(queries, corpus, k=k, metric="l2")
    flat = faiss.IndexFlatL2(d)
    flat.add(corpus)
    _, exact_ids = flat.search(queries, k)
    assert exact["doc_id"].to_numpy().reshape(n_q, k).tolist() == exact_ids.tolist()
    ivf = faiss.IndexIVFFlat(faiss.IndexFlatL2(d), d, 32)
    ivf.train(corpus)
    ivf.add(corpus)
    ivf.nprobe = 2
    distances, ids = ivf.search(queries, k)
    found = ids >= 0
    approx = pl.DataFrame(
        {
            "query_id": np.repeat(np.arange(n_q), k)[found.ravel()],
            "doc_id": ids.ravel()[found.ravel()],
            "score": -np.sqrt(np.maximum(distances.ravel()[found.ravel()].astype(np.float64), 0)),
            "rank": np.tile(np.arange(1, k + 1), n_q)[found.ravel()],
        }
    )
    intersection = faiss.eval_intersection(ids, exact_ids) / (k * n_q)
    assert 0.2 < intersection < 1.0  # a real approximation: some neighbours missed
    shared = np.array(
        [len(set(a) & set(b)) / k for a, b in zip(ids.tolist(), exact_ids.tolist(), strict=True)]
    )
    # epsilon=0 is the plain overlap when both runs carry the same scores for a document
    every = irm.knn(queries, corpus, k=n, metric="l2").select("query_id", "doc_id", "score")
    rescored = approx.drop("score").join(every, on=["query_id", "doc_id"])
    plain = "neighbor_recall(epsilon=0)@10"
    got = irm.evaluate(rescored, [plain], neighbors=exact, per_query=True)
    assert got[plain].to_list() == pytest.approx(shared.tolist(), abs=1e-12)
    mean = irm.evaluate(rescored, [plain], neighbors=exact)[plain].item()
    assert mean == pytest.approx(intersection, abs=1e-12)
    # faiss' own distances differ from knn's in the last bits: with the default epsilon
    # (1e-3) the counts are the shared ids where no 11th neighbour is that close to the 10th
    true_11, _ = flat.search(queries, k + 1)
    apart = np.sqrt(true_11[:, k]) - np.sqrt(true_11[:, k - 1]) > 2e-3
    assert apart.sum() > n_q // 2
    default = irm.evaluate(approx, ["neighbor_recall@10"], neighbors=exact, per_query=True)
    values = default["neighbor_recall@10"].to_numpy()
    assert values[apart].tolist() == pytest.approx(shared[apart].tolist(), abs=1e-12)


def test_by_groups_and_queries_missing_from_the_run() -> None:
    exact = pl.DataFrame(
        {
            "query_id": ["a", "a", "b", "b"],
            "doc_id": [1, 2, 3, 4],
            "score": [-1.0, -2.0, -1.0, -2.0],
        }
    )
    approx = pl.DataFrame(
        {
            "shard": ["s1", "s1", "s2", "s2", "s2"],
            "query_id": ["a", "a", "a", "b", "c"],
            "doc_id": [1, 9, 1, 3, 5],
            "score": [-1.0, -5.0, -1.0, -1.0, -1.0],
        }
    )
    # each shard (a system) scored on every query of neighbors=
    out = irm.evaluate(
        approx, ["neighbor_recall@2"], neighbors=exact, systems="shard", per_query=True
    )
    # s1 lacks query b: 0; query c has no truth: left out
    assert out.rows() == [("s1", "a", 0.5), ("s1", "b", 0.0), ("s2", "a", 0.5), ("s2", "b", 0.5)]
    means = irm.evaluate(approx, ["neighbor_recall@2"], neighbors=exact, systems="shard")
    assert means.rows() == [("s1", 2, 0.25), ("s2", 2, 0.5)]
    # by=: an attribute of the query, which neighbors= does not give: q b of s1 unplaced
    with pytest.raises(QuerySetError, match="by key 'shard' is in the run but not in "):
        irm.evaluate(approx, ["neighbor_recall@2"], neighbors=exact, by="shard")


def test_namespace_takes_neighbors() -> None:
    exact = pl.DataFrame({"query_id": ["a", "a"], "doc_id": [1, 2], "score": [-1.0, -2.0]})
    approx = pl.DataFrame({"query_id": ["a", "a"], "doc_id": [2, 7], "score": [-2.0, -3.0]})
    assert approx.irm.evaluate(["neighbor_recall@2"], neighbors=exact).row(0) == (1, 0.5)
    lazy = approx.lazy().irm.evaluate(["neighbor_recall@2"], neighbors=exact.lazy())
    assert lazy.collect().row(0) == (1, 0.5)


def test_list_shaped_runs() -> None:
    exact = pl.DataFrame({"query_id": ["a"], "doc_id": [[1, 2]], "score": [[-1.0, -2.0]]})
    approx = pl.DataFrame({"query_id": ["a"], "doc_id": [[2, 7]], "score": [[-2.0, -3.0]]})
    assert (
        irm.evaluate(approx, ["neighbor_recall@2"], neighbors=exact)["neighbor_recall@2"].item()
        == 0.5
    )


EXACT = pl.DataFrame({"query_id": ["a"], "doc_id": [1], "score": [-1.0]})


@pytest.mark.parametrize(
    ("metrics", "kwargs", "error", "message"),
    [
        (
            ["neighbor_recall@1"],
            {},
            MetricParameterError,
            "metric 'neighbor_recall@1' reads the exact nearest neighbours (e.g. "
            "irm.knn(queries, corpus, k=...)): pass neighbors=... to irm.evaluate",
        ),
        (
            ["neighbor_recall@1", "ndcg@10"],
            {"neighbors": EXACT},
            MetricParameterError,
            "metrics 'neighbor_recall@1' and 'ndcg@10' are computed from different tables "
            "(neighbors: an approximate run and the exact neighbours; offline: a run and "
            "judgments): evaluate them in two calls",
        ),
        (
            ["neighbor_recall(epsilon=-1)@1"],
            {"neighbors": EXACT},
            MetricParameterError,
            "metric 'neighbor_recall(epsilon=-1)@1': epsilon must be a number >= 0, got -1",
        ),
        (
            ["neighbor_recall@1"],
            {"neighbors": EXACT.with_columns(score=pl.lit(float("nan")))},
            InvalidValueError,
            "column 'score' of the neighbors has null, NaN or infinite values in query 'a'",
        ),
        (
            ["neighbor_recall@1"],
            {"neighbors": EXACT.drop("score")},
            irm.ColumnNotFoundError,
            "column 'score' not found in the neighbors",
        ),
        (
            ["neighbor_recall"],
            {"neighbors": EXACT},
            MetricParameterError,
            "neighbor_recall",
        ),
    ],
)
@pytest.mark.parametrize("lazy", [False, True])
def test_bad_input(
    metrics: list[str], kwargs: dict[str, object], error: type[Exception], message: str, lazy: bool
) -> None:
    run = EXACT.lazy() if lazy else EXACT

    def evaluate() -> None:  # a LazyFrame's data checks run when it is collected
        out = irm.evaluate(run, metrics, **kwargs)  # type: ignore[call-overload]
        if isinstance(out, pl.LazyFrame):
            out.collect()

    with pytest.raises(error, match=re.escape(message)):
        evaluate()


@pytest.mark.parametrize(
    "metric", ["neighbor_recall@10", "neighbor_recall_rel(distance='neg_score')@10"]
)
def test_a_recall_above_one_is_refused(metric: str, frame_kind: str) -> None:
    # neighbors= holds 2 neighbours (fewer than k = 10): their number and largest
    # distance (2) stand for k and the k-th; the run lists 4 documents within 2 (c and
    # d, which neighbors= lacks, included), so 4 of its top 10 count against 2: 2.0
    # (scores above 0, positive distances, are refused before: test_vectors_round11)
    run = pl.DataFrame(
        {"query_id": ["q"] * 4, "doc_id": list("abcd"), "score": [-0.5, -1.0, -1.5, -2.0]}
    )
    exact = pl.DataFrame({"query_id": ["q"] * 2, "doc_id": list("ab"), "score": [-1.0, -2.0]})
    message = f"metric {metric!r} would be 2.0 (above 1) for query 'q': neighbors= holds "
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        _evaluate(run, frame_kind, metrics=[metric], neighbors=exact)
    # the same small truth with a run of its kind: 1 of the 2 found, 0.5
    found = pl.DataFrame({"query_id": ["q"] * 2, "doc_id": ["a", "z"], "score": [-1.0, -9.0]})
    assert _evaluate(found, frame_kind, metrics=[metric], neighbors=exact).row(0) == (1, 0.5)


def test_judgment_entry_points_name_the_neighbors_argument() -> None:
    qrels = pl.DataFrame({"query_id": ["a"], "doc_id": [1], "relevance": [1]})
    with pytest.raises(
        MetricParameterError,
        match=re.escape(
            "metric 'neighbor_recall@1' is computed from an approximate run and the exact "
            "neighbours, which irm.compare does not take (it pairs the per-query values of "
            "runs and judgments, or of predictions): evaluate it with irm.evaluate(table, "
            "neighbors=...) for each system"
        ),
    ):
        irm.compare({"x": EXACT, "y": EXACT}, ["neighbor_recall@1"], qrels=qrels)


# --- neighbour recall goes through the checks and options of every metric (issue 38) ---

APPROX = pl.DataFrame(
    {"query_id": ["a", "a", "b"], "doc_id": [1, 2, 3], "score": [-1.0, -2.0, -1.0]}
)
TRUTH = pl.DataFrame(
    {"query_id": ["a", "a", "b", "c"], "doc_id": [1, 2, 3, 4], "score": [-1.0, -2.0, -1.0, -1.0]}
)


def _evaluate(run: pl.DataFrame, frame_kind: str, **kwargs: object) -> pl.DataFrame:
    """``irm.evaluate`` on DataFrames, or on LazyFrames collected (checks run then)."""
    metrics = kwargs.pop("metrics", ["neighbor_recall@2"])
    if frame_kind == "LazyFrame":
        lazy = {
            key: value.lazy() if isinstance(value, pl.DataFrame) else value
            for key, value in kwargs.items()
        }
        out = irm.evaluate(run.lazy(), metrics, **lazy)  # type: ignore[call-overload]
        return out.collect()  # type: ignore[no-any-return]
    return irm.evaluate(run, metrics, **kwargs)  # type: ignore[call-overload,no-any-return]


_DUP = (
    "column 'doc_id' of the {}: query 'a' has 2 repeated listing(s) "
    "(each of a document listed before in the query); each (query, "
    "document) pair may appear once (trec_eval refuses such runs too)"
)
_NULL_QUERY = (
    "column 'query_id' of the {} has null values; every row needs a query_id: drop them, "
    "e.g. .drop_nulls('query_id')"
)


@pytest.mark.parametrize(
    ("run", "kwargs", "error", "message"),
    [
        # each document listed twice: 2.0 before
        (pl.concat([APPROX, APPROX]), {}, DuplicateError, _DUP.format("run")),
        (
            APPROX,
            {"neighbors": pl.concat([TRUTH, TRUTH])},
            DuplicateError,
            _DUP.format("neighbors"),
        ),
        # null query ids: their rows dropped before
        (
            APPROX.with_columns(query_id=pl.when(pl.col("doc_id") == 2).then(pl.col("query_id"))),
            {},
            InvalidValueError,
            _NULL_QUERY.format("run"),
        ),
        (
            APPROX,
            {
                "neighbors": TRUTH.with_columns(
                    query_id=pl.when(pl.col("doc_id") < 4).then("query_id")
                )
            },
            InvalidValueError,
            _NULL_QUERY.format("neighbors"),
        ),
        (
            APPROX.with_columns(doc_id=pl.when(pl.col("doc_id") == 2).then(pl.col("doc_id"))),
            {},
            InvalidValueError,
            "column 'doc_id' of the run has 1 null value(s) in query 'a'",
        ),
        (
            APPROX.with_columns(rank=pl.lit(1)),
            {},
            DuplicateError,
            "column 'rank' of the run: query 'a' has 1 duplicate rank(s)",
        ),
        # unretrieved= ignored before: query c of the neighbors is not in the run
        (
            APPROX,
            {"unretrieved": "error"},
            QuerySetError,
            "1 query is in the judgments but not in the run: 'c'; pass unretrieved='zero'",
        ),
        (
            APPROX.vstack(pl.DataFrame({"query_id": ["z"], "doc_id": [9], "score": [-1.0]})),
            {"unjudged": "error"},
            QuerySetError,
            "1 query is in the run but not in the judgments: 'z'; pass unjudged='zero'",
        ),
        # an unused table or option: accepted silently before
        (
            APPROX,
            {"qrels": pl.DataFrame({"query_id": ["a"], "doc_id": [1], "relevance": [1]})},
            InvalidValueError,
            "qrels= is not read by neighbour recall (neighbor_recall@k, neighbor_recall_rel@k): "
            "it compares the run with the exact neighbours, neighbors=...; drop qrels=",
        ),
        (
            APPROX,
            {"relevance_level": 2},
            InvalidValueError,
            "relevance_level=2 is not read by metric 'neighbor_recall@2': only the "
            "judgment-group measures (*_avgjg) and the ranking metrics of a run and judgments "
            "(ndcg, map, recall...) and the propensity-scored metrics (ps_precision@k, "
            "ps_ndcg@k) read it; drop relevance_level=",
        ),
        (
            APPROX,
            {"depth": 5},
            InvalidValueError,
            "depth=5 is not read by metric 'neighbor_recall@2'",
        ),
        # query ids of two kinds: polars' SchemaError before
        (
            APPROX.with_columns(pl.col("query_id").cast(pl.Categorical).to_physical()),
            {},
            ColumnTypeError,
            "column 'query_id' is UInt32 in the run and String in the neighbors; the "
            "approximate run's queries are matched with the exact run's by their ids, which "
            "must be of one kind: cast one of them, e.g. pl.col('query_id').cast(pl.String)",
        ),
    ],
)
def test_neighbour_recall_checks_its_inputs_as_every_metric(
    run: pl.DataFrame,
    kwargs: dict[str, object],
    error: type[Exception],
    message: str,
    frame_kind: str,
) -> None:
    kwargs = {"neighbors": TRUTH, **kwargs}
    with pytest.raises(error, match=re.escape(message)):
        _evaluate(run, frame_kind, **kwargs)


def test_query_set_policies(frame_kind: str) -> None:
    extra = APPROX.vstack(pl.DataFrame({"query_id": ["z"], "doc_id": [9], "score": [-1.0]}))
    per_query = {"neighbors": TRUTH, "per_query": True}
    # query c of the neighbors is missing from the run: 0 by default, left out with drop
    assert _evaluate(APPROX, frame_kind, **per_query).rows() == [
        ("a", 1.0), ("b", 1.0), ("c", 0.0)
    ]  # fmt: skip
    dropped = _evaluate(APPROX, frame_kind, unretrieved="drop", **per_query)
    assert dropped.rows() == [("a", 1.0), ("b", 1.0)]
    # query z has no truth: left out by default, 0 with unjudged="zero"
    assert _evaluate(extra, frame_kind, **per_query)["query_id"].to_list() == ["a", "b", "c"]
    zero = _evaluate(extra, frame_kind, unjudged="zero", **per_query)
    assert zero.rows() == [("a", 1.0), ("b", 1.0), ("c", 0.0), ("z", 0.0)]


def test_integer_query_ids_of_two_widths(frame_kind: str) -> None:
    run = APPROX.with_columns(
        pl.col("query_id").replace_strict({"a": 1, "b": 2}, return_dtype=pl.Int32)
    )
    truth = TRUTH.with_columns(
        pl.col("query_id").replace_strict({"a": 1, "b": 2, "c": 3}, return_dtype=pl.UInt8)
    )
    out = _evaluate(run, frame_kind, neighbors=truth)
    assert out.row(0) == (3, 2 / 3)


def test_uint64_query_ids_beyond_int64(frame_kind: str) -> None:
    # ids of 2**63 and more beside Int64 ones: matched by value in a dtype that holds
    # both (polars' cast to Int64 failed with its own error); here none line up: warned
    ids = {"a": 2**63 + 1, "b": 2**63 + 2, "c": 2**63 + 3}
    run = APPROX.with_columns(pl.col("query_id").replace_strict({"a": 1, "b": 2}))
    truth = TRUTH.with_columns(pl.col("query_id").replace_strict(ids, return_dtype=pl.UInt64))
    with pytest.warns(CoverageWarning, match="neighbors= holds none of the 2 queries"):
        _evaluate(run, frame_kind, neighbors=truth)
    same = run.with_columns(pl.col("query_id").replace_strict({1: ids["a"], 2: ids["b"]}))
    assert _evaluate(same, frame_kind, neighbors=truth).row(0) == (3, 2 / 3)


@pytest.mark.parametrize("metric", ["cosine", "l2", "dot"])
def test_knns_own_run_measures_one_against_itself(metric: str, frame_kind: str) -> None:
    # neighbor_recall_rel's default read distances as -score: a cosine run (similarities)
    # measured 0.82 against itself
    rng = np.random.default_rng(3)
    queries = pl.DataFrame({"query_id": np.arange(30), "embedding": rng.random((30, 8))})
    corpus = pl.DataFrame({"doc_id": np.arange(400), "embedding": rng.random((400, 8))})
    exact = irm.knn(queries, corpus, k=10, metric=metric)  # type: ignore[arg-type]
    names = ["neighbor_recall@10", "neighbor_recall_rel@10"]
    if metric == "dot":  # scores above 1: no distance that is 0 for the query itself
        with pytest.raises(
            MetricParameterError,
            match=re.escape(
                "metric 'neighbor_recall_rel@10' needs a distance that is 0 for the query "
                "itself, and the scores of the neighbors exceed 1"
            ),
        ):
            _evaluate(exact, frame_kind, neighbors=exact, metrics=names)
        names = names[:1]
    out = _evaluate(exact, frame_kind, neighbors=exact, metrics=names)
    assert out.row(0) == (30, *[1.0] * len(names))
    if metric == "cosine":  # the angular distance, named: the same; -score: not a distance
        rel = _evaluate(
            exact, frame_kind, neighbors=exact,
            metrics=["neighbor_recall_rel(distance=one_minus_score)@10"],
        )  # fmt: skip
        assert rel.row(0) == (30, 1.0)


def _irm(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return irm_in_process(*args, cwd=cwd)


def test_cli_neighbors_from_a_trec_file(tmp_path: Path) -> None:
    (tmp_path / "exact.txt").write_text(
        "q1 Q0 d1 1 -0.1 exact\nq1 Q0 d2 2 -0.2 exact\n2 Q0 d3 1 -0.3 exact\n"
    )
    pl.DataFrame(
        {"query_id": ["q1", "q1", "2"], "doc_id": ["d1", "d9", "d3"], "score": [-0.1, -0.5, -0.3]}
    ).write_parquet(tmp_path / "approx.parquet")
    pl.DataFrame(
        {"query_id": [1, 1], "doc_id": ["d1", "d9"], "score": [-0.1, -0.5]}
    ).write_parquet(tmp_path / "numbers.parquet")
    done = _irm(
        "evaluate", "approx.parquet", "--neighbors", "exact.txt", "-m", "neighbor_recall@2",
        "--per-query", "--format", "csv", cwd=tmp_path,
    )  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines() == ["query_id,neighbor_recall@2", "2,1.0", "q1,0.5"]
    # integer query ids against a TREC file's text ids: polars' SchemaError before
    done = _irm(
        "evaluate", "numbers.parquet", "--neighbors", "exact.txt", "-m", "neighbor_recall@2",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr == (
        "irm: error: numbers.parquet, exact.txt: column 'query_id' is Int64 in the run and "
        "String in the neighbors; the approximate run's queries are matched with the exact "
        "run's by their ids, which must be of one kind: cast one of them, e.g. --ids str (every "
        "id of every file read as text) (the ids of a TREC file are read as text)\n"
    )


SEARCHED = pl.DataFrame(
    {"query_id": [1, 1, 2, 2], "doc_id": [10, 11, 10, 12], "score": [-0.1, -0.2, -0.1, -0.3]}
)


@pytest.mark.parametrize(
    ("exact", "values", "message"),
    [
        (  # another id space: no query in common (once 0 everywhere, in silence)
            SEARCHED.with_columns(pl.col("query_id") + 100),
            [0.0],
            "neighbors= holds none of the 2 queries of the run (column 'query_id'): the 2 it "
            "lacks are left out (unjudged='drop'), and the 2 of its own the run lacks each "
            "score 0 (unretrieved='zero'). Ids that do not line up are the likely cause: give "
            "neighbors= and the run the same 'query_id' values (same spelling, same "
            "collection).",
        ),
        (  # the run searched 2 of the 6 queries
            pl.concat([SEARCHED.with_columns(pl.col("query_id") + 10 * i) for i in range(3)]),
            [2 / 6],
            "the run lists only 2 of the 6 queries of neighbors= (column 'query_id'): the 4 "
            "it lacks each score 0 (unretrieved='zero'). Check that the run searched the "
            "queries neighbors= holds (same query ids, same spelling).",
        ),
        (SEARCHED, [1.0], None),  # the same queries: nothing to say
    ],
)
@pytest.mark.parametrize("lazy", [False, True])
def test_queries_that_do_not_line_up_are_named(
    exact: pl.DataFrame, values: list[float], message: str | None, lazy: bool
) -> None:
    run, truth = (SEARCHED.lazy(), exact.lazy()) if lazy else (SEARCHED, exact)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = irm.evaluate(run, ["neighbor_recall@2"], neighbors=truth)
        out = out.collect() if isinstance(out, pl.LazyFrame) else out
    assert out["neighbor_recall@2"].to_list() == pytest.approx(values)
    said = [str(w.message) for w in caught if issubclass(w.category, CoverageWarning)]
    assert said == ([] if message is None else [message])
