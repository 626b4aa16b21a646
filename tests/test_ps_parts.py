"""The propensity-scored metrics (ps_precision@k, ps_ndcg@k) over a split run: out of
core (``buckets=``) and on Spark and Dask they give the one plan's values to the last bit
(fixed-point sums over the queries), and the one plan's errors."""

from __future__ import annotations

import functools
import math
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_irmetrics as irm
import polars_irmetrics.ground.buckets as buckets_module
from polars_irmetrics.engines._partition import judgments_given
from polars_irmetrics.errors import DuplicateError, InvalidValueError, MetricParameterError

from .helpers import irm_in_process
from .test_ps_metrics import CASES, _frames, _worked

METRICS = ["ps_precision@1", "ps_precision@3", "ps_ndcg@2", "ps_ndcg@5"]
BY_DOCUMENT = pl.DataFrame({"doc_id": ["a", "b", "c", "d"], "propensity": [0.5, 0.25, 1.0, 0.2]})
BY_POSITION = pl.DataFrame({"position": [1, 2, 3], "propensity": [1.0, 0.5, 0.25]})


@functools.cache
def _tables(case: str) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(run, qrels, propensities): the worked examples of tests/test_ps_metrics.py and
    the pyxclib cases' inputs (runs ranked by score, Jain et al.'s propensities);
    computed once per case (the tests read the frames, never change them)."""
    if case == "worked-by-document":
        run, qrels = _worked()
        return run, qrels, BY_DOCUMENT
    if case == "worked-by-position":
        run, qrels = _worked()
        return run, qrels.filter(pl.col("query_id") != "q3"), BY_POSITION
    found = next(c for c in CASES if c["name"] == case)
    run, qrels, train = _frames(found)
    propensities = irm.label_propensity(train, found["a"], found["b"])
    assert isinstance(propensities, pl.DataFrame)
    return run, qrels, propensities.drop("inv_propensity")


NAMES = ["worked-by-document", "worked-by-position", *(c["name"] for c in CASES)]


def _evaluate(
    frame_kind: str, tables: tuple[pl.DataFrame, ...], metrics: list[str], **kwargs: Any
) -> pl.DataFrame:
    run, qrels, propensities = tables
    if frame_kind == "LazyFrame":
        out = irm.evaluate(
            run.lazy(), metrics, qrels=qrels.lazy(), propensities=propensities.lazy(), **kwargs
        )
        assert isinstance(out, pl.LazyFrame)
        return out.collect()
    result = irm.evaluate(run, metrics, qrels=qrels, propensities=propensities, **kwargs)
    assert isinstance(result, pl.DataFrame)
    return result


#: case x per_query in full, the buckets in a covering design: each case meets every
#: value of buckets (1, 3, "auto") over its two per_query runs (two of them with the
#: means, the third per query), rotated over the cases so that per_query meets every
#: value of buckets too (the pairs that matter: case x per_query, case x buckets,
#: per_query x buckets).
BUCKETS: tuple[int | str, ...] = (1, 3, "auto")
BUCKET_CASES = [
    (case, per_query, [BUCKETS[(i + j) % 3] for j in ((2,) if per_query else (0, 1))])
    for i, case in enumerate(NAMES)
    for per_query in (False, True)
]


@pytest.mark.parametrize(
    ("case", "per_query", "splits"),
    BUCKET_CASES,
    ids=[f"{c}-{q}-{'-'.join(map(str, b))}" for c, q, b in BUCKET_CASES],
)
def test_buckets_give_the_one_plan_bits(
    case: str, per_query: bool, splits: list[int | str], monkeypatch: pytest.MonkeyPatch
) -> None:
    tables = _tables(case)
    # "auto": about three buckets of these small runs
    monkeypatch.setattr(buckets_module, "ROWS_PER_BUCKET", max(2, tables[0].height // 3))
    # the one plan of a DataFrame, the buckets of a LazyFrame
    whole = _evaluate("DataFrame", tables, METRICS, per_query=per_query)
    for buckets in splits:
        split = _evaluate("LazyFrame", tables, METRICS, per_query=per_query, buckets=buckets)
        assert split.columns == whole.columns
        assert split.equals(whole), buckets  # every value, to the last bit, in the same order
        if per_query:
            assert split["query_id"].is_sorted()


def test_worked_example_in_three_buckets(frame_kind: str) -> None:
    tables = _tables("worked-by-document")
    out = _evaluate(frame_kind, tables, ["ps_precision@2", "ps_ndcg@2"], buckets=3)
    # tests/test_ps_metrics.py's arithmetic: weights a 2, b 4, c 1, d 5
    assert out["num_q"].item() == 3
    assert out["ps_precision@2"].item() == (4 + 5) / (5 + 5 + 2)
    d2 = 1 / math.log2(3)
    z1 = 1 + d2
    numerator = 4 * d2 / z1 + 5 * d2
    ideal = (4 + 1 * d2) / z1 + 5 + 2
    assert out["ps_ndcg@2"].item() == pytest.approx(numerator / ideal, abs=1e-15)
    shares = _evaluate(frame_kind, tables, ["ps_precision@2"], buckets=3, per_query=True)
    # each query's N_q over the mean ideal (5 + 5 + 2) / 3
    assert shares.rows() == [("q1", 4 / 4), ("q2", 5 / 4), ("q3", 0.0)]


def test_the_sums_do_not_depend_on_the_row_order() -> None:
    """Fixed-point sums over the queries: the run's rows reversed give the same bits."""
    run, qrels, propensities = _tables(CASES[0]["name"])
    whole = _evaluate("DataFrame", (run, qrels, propensities), METRICS)
    flipped = _evaluate("DataFrame", (run.reverse(), qrels.reverse(), propensities), METRICS)
    assert flipped.equals(whole)


@settings(max_examples=5, deadline=None)  # about 0.8 s an example
@given(
    queries=st.integers(1, 8),
    docs=st.integers(1, 6),
    buckets=st.integers(1, 4),
    seed=st.integers(0, 2**16),
)
def test_random_runs_in_buckets(queries: int, docs: int, buckets: int, seed: int) -> None:
    import random

    rng = random.Random(seed)
    ids = [f"d{i}" for i in range(docs)]
    run_rows, qrels_rows = [], []
    for q in range(queries):
        shown = rng.sample(ids, rng.randint(1, docs))
        run_rows += [(q, d, r + 1) for r, d in enumerate(shown)]
        qrels_rows += [(q, d, rng.randint(0, 2)) for d in rng.sample(ids, rng.randint(1, docs))]
    run = pl.DataFrame(run_rows, schema=["query_id", "doc_id", "rank"], orient="row")
    qrels = pl.DataFrame(qrels_rows, schema=["query_id", "doc_id", "relevance"], orient="row")
    props = pl.DataFrame({"doc_id": ids, "propensity": [rng.uniform(0.01, 1) for _ in ids]})
    tables = (run, qrels, props)
    metrics = ["ps_precision@2", "ps_ndcg@3", "ps_ndcg(rel=2)@5"]
    for per_query in (False, True):
        whole = _evaluate("DataFrame", tables, metrics, per_query=per_query)
        split = _evaluate("DataFrame", tables, metrics, per_query=per_query, buckets=buckets)
        assert split.equals(whole)


@pytest.mark.parametrize(
    ("case", "change", "error", "message"),
    [
        (
            "worked-by-document",
            lambda r, q, p: (r, q, p.with_columns(pl.Series("propensity", [0.5, 0, 1, 0.2]))),
            InvalidValueError,
            "propensities= has propensity 0.0 in column 'propensity' for doc_id 'b'",
        ),
        (
            "worked-by-document",
            lambda r, q, p: (r, q, pl.concat([p, p.tail(1)])),
            DuplicateError,
            "propensities= lists doc_id 'd' twice: give one propensity per doc_id",
        ),
        (
            "worked-by-document",
            lambda r, q, p: (r, q, p.filter(pl.col("doc_id").is_in(["a", "b"]))),
            InvalidValueError,
            "document 'c' of query 'q1' is relevant (relevance >= 1) and has no propensity",
        ),
        (
            "worked-by-document",
            lambda r, q, p: (r, pl.concat([q, q.tail(2)]), p),
            DuplicateError,
            "column 'doc_id' of the judgments: query 'q2' has 1 repeated judgment(s)",
        ),
        (
            "worked-by-position",
            lambda r, q, p: (r, q, p.head(2)),
            InvalidValueError,
            "document 'c' of query 'q1' is relevant (relevance >= 1) and its rank 3 has no "
            "row in propensities= (column 'position')",
        ),
    ],
)
@pytest.mark.parametrize("buckets", [None, 3])
def test_errors_name_the_one_plan_row(
    frame_kind: str, case: str, change: Any, error: type[Exception], message: str, buckets: Any
) -> None:
    """In buckets a check fails in each bucket that holds a bad row; the least one, as
    the one plan names it, is raised."""
    tables = change(*_tables(case))
    with pytest.raises(error, match=re.escape(message)):
        _evaluate(frame_kind, tables, ["ps_ndcg@2"], buckets=buckets)


def test_the_least_failing_query_over_the_buckets() -> None:
    """Two queries miss a propensity; whichever bucket each lands in, the least query is
    named (integer ids compared as integers, as the one plan does)."""
    run = pl.DataFrame({"query_id": [10, 9, 2], "doc_id": [2, 3, 1], "rank": [1, 1, 1]})
    qrels = pl.DataFrame({"query_id": [10, 9, 2], "doc_id": [2, 3, 1], "relevance": [1, 1, 1]})
    props = pl.DataFrame({"doc_id": [1], "propensity": [0.5]})
    # query 9 < 10 as integers ('10' < '9' as text)
    message = "document 3 of query '9' is relevant (relevance >= 1) and has no propensity"
    for buckets in (None, 1, 2, 3, 5):
        with pytest.raises(InvalidValueError, match=re.escape(message)):
            _evaluate("DataFrame", (run, qrels, props), ["ps_precision@1"], buckets=buckets)


def test_lazy_in_buckets_spills_only_on_collect(tmp_path: Path) -> None:
    run, qrels, props = _tables("worked-by-document")
    path = tmp_path / "run.parquet"
    run.write_parquet(path)
    spill = tmp_path / "spill"
    spill.mkdir()
    plan = irm.evaluate(
        pl.scan_parquet(path),
        ["ps_precision@2"],
        qrels=qrels,
        propensities=props,
        buckets=2,
        spill_dir=spill,
    )
    assert isinstance(plan, pl.LazyFrame)
    assert list(spill.iterdir()) == []  # nothing written before collect
    assert plan.collect()["ps_precision@2"].item() == 0.75
    assert list(spill.iterdir()) == []  # the buckets are removed after


def test_spill_dir_without_buckets_is_refused(tmp_path: Path) -> None:
    run, qrels, props = _tables("worked-by-document")
    with pytest.raises(
        InvalidValueError,
        match=re.escape(
            f"spill_dir={str(tmp_path)!r} is the folder of the out-of-core buckets, and the "
            "propensity-scored metrics evaluate in one plan unless buckets= is a number or "
            "'auto': pass buckets=, or drop spill_dir="
        ),
    ):
        irm.evaluate(run, ["ps_ndcg@2"], qrels=qrels, propensities=props, spill_dir=tmp_path)


def test_bad_buckets_value_is_refused() -> None:
    run, qrels, props = _tables("worked-by-document")
    with pytest.raises(InvalidValueError, match=re.escape("buckets must be a positive integer")):
        irm.evaluate(run, ["ps_ndcg@2"], qrels=qrels, propensities=props, buckets=0)


def test_cli_buckets(tmp_path: Path) -> None:

    run, qrels, props = _tables("worked-by-document")
    run.write_parquet(tmp_path / "run.parquet")
    qrels.write_parquet(tmp_path / "qrels.parquet")
    props.write_parquet(tmp_path / "p.parquet")
    argv = ["evaluate", "run.parquet", "--qrels", "qrels.parquet", "-m", "ps_precision@2"]
    argv += ["--propensities", "p.parquet", "--buckets", "3", "--format", "csv"]
    done = irm_in_process(*argv, cwd=tmp_path)
    # (4 + 5) / (5 + 5 + 2): the worked example by document, in three buckets
    assert (done.returncode, done.stdout, done.stderr) == (0, "num_q,ps_precision@2\n3,0.75\n", "")


# --- Spark and Dask: the same bits, the same errors ------------------------------------


def _engine(name: str, request: pytest.FixtureRequest) -> tuple[Any, Any]:
    """The engine's evaluate (computed, as a polars DataFrame) and a converter of polars
    frames to its frames (the real Spark session and Dask cluster of tests/conftest.py)."""
    if name == "spark":
        import polars_irmetrics.spark as irm_spark

        session = request.getfixturevalue("spark")

        def on_spark(*args: Any, **kw: Any) -> pl.DataFrame:
            return pl.from_pandas(irm_spark.evaluate(*args, **kw).toPandas())

        return on_spark, lambda f: session.createDataFrame(f.to_pandas())
    request.getfixturevalue("client")
    import dask.dataframe as dd

    import polars_irmetrics.dask as irm_dask

    def on_dask(*args: Any, **kw: Any) -> pl.DataFrame:
        return pl.from_pandas(irm_dask.evaluate(*args, **kw).compute())

    return on_dask, lambda f: dd.from_pandas(f.to_pandas(), npartitions=2)


ENGINE_CASES = [  # the engines' jobs are the suite's long tail: three calls each
    ("worked-by-position", False),
    ("worked-by-document", True),
    (CASES[0]["name"], False),
]


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engines_give_the_one_plan_bits(engine: str, request: pytest.FixtureRequest) -> None:
    evaluate, frame = _engine(engine, request)
    for case, per_query in ENGINE_CASES:
        run, qrels, props = _tables(case)
        whole = _evaluate("DataFrame", (run, qrels, props), METRICS, per_query=per_query)
        got = evaluate(
            frame(run),
            METRICS,
            qrels=frame(qrels),
            propensities=frame(props),
            per_query=per_query,
            partitions=3,
        )
        assert got.columns == whole.columns
        assert got.cast(whole.schema).equals(whole), (case, per_query)


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engines_raise_the_one_plan_error(engine: str, request: pytest.FixtureRequest) -> None:
    evaluate, frame = _engine(engine, request)
    run, qrels, props = _tables("worked-by-document")
    message = "document 'c' of query 'q1' is relevant (relevance >= 1) and has no propensity"
    lacking = frame(props.filter(pl.col("doc_id") != "c"))
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        evaluate(frame(run), ["ps_ndcg@2"], qrels=frame(qrels), propensities=lacking)


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engines_refuse_what_one_machine_refuses(
    engine: str, request: pytest.FixtureRequest
) -> None:
    evaluate, frame = _engine(engine, request)
    run, qrels, props = _tables("worked-by-document")
    with pytest.raises(
        MetricParameterError,
        match=re.escape(
            "propensities= is read by the propensity-scored metrics (ps_precision@k, "
            "ps_ndcg@k), and no metric asked for reads it: drop propensities="
        ),
    ):
        evaluate(frame(run), ["ndcg@2"], qrels=frame(qrels), propensities=frame(props))
    queries = frame(qrels.select("query_id").unique())
    with pytest.raises(
        InvalidValueError,
        match=re.escape(
            "queries= is not read by the propensity-scored metrics (ps_precision@k, "
            "ps_ndcg@k): they read the run, qrels= and propensities=; drop queries="
        ),
    ):
        evaluate(
            frame(run), ["ps_ndcg@2"], qrels=frame(qrels), propensities=frame(props),
            queries=queries,
        )  # fmt: skip
    with pytest.raises(InvalidValueError, match=re.escape("depth=5 is not read by")):
        evaluate(frame(run), ["ps_ndcg@2"], qrels=frame(qrels), propensities=frame(props), depth=5)
    with pytest.raises(
        MetricParameterError,
        match=re.escape("metric 'ps_ndcg@2' reads relevance judgments (the clicks, with"),
    ):
        evaluate(frame(run), ["ps_ndcg@2"], propensities=frame(props))


def test_an_engine_job_without_judgments_is_refused_by_name() -> None:
    # the engines' jobs refuse these metrics without qrels= while they are prepared,
    # naming the metric; a caller that skipped that step gets the same kind of error
    frame = pl.DataFrame({"query_id": ["q"]})
    assert judgments_given(frame, "the propensity-scored metrics") is frame
    with pytest.raises(
        MetricParameterError,
        match=re.escape("the propensity-scored metrics read the judgments: pass qrels=..."),
    ):
        judgments_given(None, "the propensity-scored metrics")
    with pytest.raises(
        MetricParameterError,
        match=re.escape("Elliot's metrics read the test interactions: pass qrels=..."),
    ):
        judgments_given(None, "Elliot's metrics", "the test interactions")
