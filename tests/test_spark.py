"""``polars_irmetrics.spark.evaluate`` on a real local Spark session (the ``spark``
fixture of conftest.py): equal to ``irm.evaluate`` to the last bit, and the library's
own errors."""

from __future__ import annotations

import importlib
import re
import sys
import warnings
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from pyspark.sql import DataFrame, SparkSession

import polars_irmetrics as irm
import polars_irmetrics.spark as irm_spark

from .engine_cases import (
    DENSE,
    ERRORS,
    MATRIX,
    METRICS,
    ONE,
    PARTITIONED,
    QRELS,
    QUERIES,
    RUN,
    UNREAD,
    single_message,
    with_bucket,
)
from .prediction_cases import (
    BINARY_KW,
    PREDICTION_CASES,
    assert_histogram_exact,
    assert_same,
    ids_read,
)
from .prediction_cases import LOG as PREDICTION_LOG
from .prediction_cases import expected as prediction_expected
from .test_prediction import DROP_KW, NO_PAIR, PRED, SHIFTED, TRUTH


def _spark_frame(spark: SparkSession, frame: pl.DataFrame) -> DataFrame:
    return spark.createDataFrame(frame.to_arrow())


def _polars(frame: DataFrame) -> pl.DataFrame:
    out = pl.from_arrow(frame.toArrow())
    assert isinstance(out, pl.DataFrame)
    return out


_REFERENCES: dict[tuple[int, int, str, bool], pl.DataFrame] = {}


def _reference(
    run: pl.DataFrame, qrels: pl.DataFrame | None, options: dict[str, Any], per_query: bool
) -> pl.DataFrame:
    """``irm.evaluate``'s result with every metric, computed once per case: the matrix,
    the partitioned runs and the cogroup way share cases (the module's frames live as long
    as the module, so their ids name them)."""
    key = (id(run), id(qrels), repr(sorted(options.items())), per_query)
    if key not in _REFERENCES:
        _REFERENCES[key] = irm.evaluate(run, METRICS, qrels=qrels, per_query=per_query, **options)
    return _REFERENCES[key]


#: Which cases run on Spark, and which way to the tasks (engine.STRATEGY). Every
#: per-query case (each a path of the parts' plan) but "unchecked": it and rank-order
#: differ only by options no engine reads, handed to each part's one-machine plan
#: (check_duplicates=False, order="rank"), on the same ranked run with systems, so
#: rank-order runs here and unchecked on Dask; of the means (one code path over
#: per-query values already checked, engine_cases.MATRIX), with ``by`` (by-system-score)
#: and without (judged-table): the means of no-by-zero-drop and integer-ids run on
#: Dask, test_dask.py (the union of the two engines holds every case of MATRIX). The
#: other way to the tasks, "cogroup" (measured against the default in
#: benchmarks/scale.py), meets both its branches: run-only ``by`` groups crossed with
#: the judgments (unretrieved-drop, systems as in by-system-score) and no judgments
#: (means-judged-table, under the means without ``by``); "map" meets both too
#: (by-system-score, judged-table).
_SPARK_MATRIX = {
    "by-system-score": "map",
    "rank-order": "map",
    "unretrieved-drop": "cogroup",
    "no-by-zero-drop": "map",
    "judged-table": "map",
    "integer-ids": "map",
    "means-by-system-score": "map",
    "means-judged-table": "cogroup",
}
SPARK_MATRIX = [(*c, _SPARK_MATRIX[c[0]]) for c in MATRIX if c[0] in _SPARK_MATRIX]


def _matrix_call(
    spark: SparkSession,
    run: pl.DataFrame,
    qrels: pl.DataFrame | None,
    options: dict[str, Any],
    per_query: bool,
) -> pl.DataFrame:
    """A case of the matrix on Spark, every metric, as a polars frame."""
    got = irm_spark.evaluate(
        _spark_frame(spark, run),
        METRICS,
        qrels=None if qrels is None else _spark_frame(spark, qrels),
        per_query=per_query,
        **options,
    )
    return _polars(got)


#: The Spark calls :func:`map_values` makes at once (threads of this process)
SPARK_CALLS_AT_ONCE = 4


@pytest.fixture(scope="module")
def map_values(spark: SparkSession) -> dict[str, Future[pl.DataFrame]]:
    """The cases of SPARK_MATRIX that take the default way to the tasks ("map"), by id:
    each its own ``evaluate`` call, the calls made from a few threads at once, so that
    their jobs share the session's time rather than wait one call after another; every
    call ended before the first test takes one (none runs beside a later test, which
    may set another STRATEGY). Each case's test takes its own call's result, or its
    error, from its ``Future``."""
    pool = ThreadPoolExecutor(SPARK_CALLS_AT_ONCE)
    calls = {
        name: pool.submit(_matrix_call, spark, run, qrels, options, per_query)
        for name, run, qrels, options, per_query, strategy in SPARK_MATRIX
        if strategy == "map"
    }
    pool.shutdown(wait=True)
    return calls


@pytest.mark.parametrize(
    ("name", "run", "qrels", "options", "per_query", "strategy"),
    SPARK_MATRIX,
    ids=[f"{c[0]}-{c[-1]}" for c in SPARK_MATRIX],
)
def test_spark_equals_evaluate_bit_for_bit(
    spark: SparkSession,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    name: str,
    run: pl.DataFrame,
    qrels: pl.DataFrame | None,
    options: dict[str, Any],
    per_query: bool,
    strategy: str,
) -> None:
    from polars_irmetrics.engines import spark as engine

    expected = _reference(run, qrels, options, per_query)
    if strategy == "map":  # the default way to the tasks: made by map_values
        result = request.getfixturevalue("map_values")[name].result()
    else:
        monkeypatch.setattr(engine, "STRATEGY", strategy)
        result = _matrix_call(spark, run, qrels, options, per_query)
    assert result.schema == expected.schema
    assert result.height == expected.height > 0
    # exact: the same bits, row for row, in the same order
    for column in expected.columns:
        assert result[column].to_list() == expected[column].to_list(), column


def test_spark_cases_cover_the_matrix_with_dask() -> None:
    # the covering design above: each case of MATRIX runs on Spark or on Dask (or both);
    # each engine runs every per-query case (but unchecked and rank-order: one each), and
    # the means with and without ``by``
    from .test_dask import DASK_MATRIX

    spark_ids = {c[0] for c in SPARK_MATRIX}
    dask_ids = {c[0] for c in DASK_MATRIX}
    assert spark_ids | dask_ids == {c[0] for c in MATRIX}
    means_by = {c[0] for c in MATRIX if not c[4] and "systems" in c[3]}
    means_flat = {c[0] for c in MATRIX if not c[4] and "systems" not in c[3]}
    one_engine = {"unchecked", "rank-order"}
    assert len(one_engine & spark_ids) == len(one_engine & dask_ids) == 1
    for ids in (spark_ids, dask_ids):
        assert {c[0] for c in MATRIX if c[4]} - one_engine <= ids
        assert ids & means_by
        assert ids & means_flat
    assert set(_SPARK_MATRIX.values()) == {"map", "cogroup"}
    # and every partitioned case runs on Dask (zero-drop there only)
    from .test_dask import PARTITIONED_CASES as DASK_PARTITIONED

    assert {c[0].rsplit("-", 1)[0] for c in DASK_PARTITIONED} == {c[0] for c in PARTITIONED}


def test_spark_and_dask_cover_the_prediction_cases() -> None:
    # the two engines' prediction cases (SPARK_PREDICTION, test_dask.DASK_PREDICTION)
    # together are every case of PREDICTION_CASES, and each engine meets each metric
    # family, table form, by= mode, per-query values and means, weighted means and not
    from .test_dask import DASK_PREDICTION
    from .test_dask import FALSE_CLAIMS as DASK_FALSE_CLAIMS

    assert {c[0] for c in SPARK_PREDICTION} | {c[0] for c in DASK_PREDICTION} == {
        c[0] for c in PREDICTION_CASES
    }
    for cases in (SPARK_PREDICTION, DASK_PREDICTION):
        traits = set()
        for _, _, labels, metrics, options, per_query in cases:
            traits |= {
                ("rating" if "rmse" in metrics else "binary"),
                ("two tables" if labels is not None else "one table"),
                ("by" if "by" in options else "no by"),
                ("per query" if per_query else "means"),
            }
            if not per_query:
                traits.add("weighted" if "sample_weight" in options else "unweighted")
        assert traits == {
            "rating", "binary", "two tables", "one table", "by", "no by",
            "per query", "means", "weighted", "unweighted",
        }  # fmt: skip
    # each engine: both ways of the judgments, the means and the per-query values; the
    # two engines together every pair
    for claims in (FALSE_CLAIMS, DASK_FALSE_CLAIMS):
        assert {q for q, _ in claims} == {b for _, b in claims} == {True, False}
    assert set(FALSE_CLAIMS) | set(DASK_FALSE_CLAIMS) == {
        (q, b) for q in (True, False) for b in (True, False)
    }


def test_spark_means_of_no_query(spark: SparkSession) -> None:
    empty = RUN.clear()
    expected = irm.evaluate(empty, ["map", "P@5"], qrels=QRELS.clear())
    got = irm_spark.evaluate(
        _spark_frame(spark, empty), ["map", "P@5"], qrels=_spark_frame(spark, QRELS.clear())
    )
    assert (
        _polars(got).to_dicts() == expected.to_dicts() == [{"num_q": 0, "map": None, "P@5": None}]
    )


@pytest.mark.parametrize(
    ("run", "qrels", "metrics", "options", "error", "part"),
    [e[1:] for e in ERRORS],
    ids=[e[0] for e in ERRORS],
)
def test_spark_data_errors_are_the_librarys(
    spark: SparkSession,
    run: pl.DataFrame,
    qrels: pl.DataFrame | None,
    metrics: list[str],
    options: dict[str, Any],
    error: type,
    part: str,
) -> None:
    message = single_message(run, qrels, metrics, **options)
    assert part in message
    with pytest.raises(error) as raised:
        irm_spark.evaluate(
            _spark_frame(spark, run),
            metrics,
            qrels=None if qrels is None else _spark_frame(spark, qrels),
            **options,
        )
    assert type(raised.value) is error
    assert str(raised.value) == message  # the message, not a Java stack trace


# (id, metrics, options, run columns dropped, error class, the message)
DRIVER_ERRORS: list[tuple[str, list[str], dict[str, Any], list[str], type, str]] = [
    (
        "unknown-metric",
        ["ndcg@10", "mapp"],
        {},
        [],
        irm.UnknownMetricError,
        "unknown metric 'mapp'",
    ),
    (
        "missing-column",
        ["map"],
        {},
        ["doc_id"],
        irm.ColumnNotFoundError,
        "column 'doc_id' not found in the run",
    ),
    (
        "bad-policy",
        ["map"],
        {"unjudged": "ignore"},
        [],
        irm.InvalidValueError,
        "unjudged='ignore'",
    ),
    (
        "bad-partitions",
        ["map"],
        {"partitions": 0},
        [],
        irm.InvalidValueError,
        "partitions must be a positive integer or None, got 0",
    ),
]


@pytest.mark.parametrize(
    ("metrics", "options", "dropped", "error", "part"),
    [e[1:] for e in DRIVER_ERRORS],
    ids=[e[0] for e in DRIVER_ERRORS],
)
def test_spark_schema_errors_raise_before_any_job(
    spark: SparkSession,
    metrics: list[str],
    options: dict[str, Any],
    dropped: list[str],
    error: type,
    part: str,
) -> None:
    run = _spark_frame(spark, ONE.drop(dropped))
    qrels = _spark_frame(spark, QRELS)
    tracker = spark.sparkContext.statusTracker()
    jobs = len(tracker.getJobIdsForGroup())
    with pytest.raises(error) as raised:
        irm_spark.evaluate(run, metrics, qrels=qrels, **options)
    assert part in str(raised.value)
    if "partitions" not in options:
        with pytest.raises(error) as same:
            irm.evaluate(ONE.drop(dropped), metrics, qrels=QRELS, **options)
        assert str(raised.value) == str(same.value)
    assert len(tracker.getJobIdsForGroup()) == jobs  # no Spark job ran


def test_spark_refuses_polars_frames(spark: SparkSession) -> None:
    with pytest.raises(irm.ColumnTypeError, match="run must be a Spark DataFrame, got DataFrame"):
        irm_spark.evaluate(ONE, ["map"], qrels=_spark_frame(spark, QRELS))  # type: ignore[arg-type]


def test_spark_module_without_pyspark_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("polars_irmetrics.spark", "polars_irmetrics.engines.spark"):
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pyspark", None)
    monkeypatch.setitem(sys.modules, "pyspark.sql", None)
    with pytest.raises(irm.MissingDependencyError) as raised:
        importlib.import_module("polars_irmetrics.spark")
    assert str(raised.value) == (
        "polars_irmetrics.spark needs Apache Spark's Python package: "
        "pip install 'polars_irmetrics[spark]'"
    )
    assert isinstance(raised.value, ImportError)


def _hive(frame: pl.DataFrame, folder: Path, files: int = 2) -> Path:
    """``frame`` written as ``folder/bucket=NN/part-K.parquet`` (``files`` files per
    bucket, without the column, as data lakes hold them)."""
    for (bucket,), rows in frame.group_by("bucket"):
        (folder / f"bucket={bucket:02d}").mkdir(parents=True)
        size = -(-rows.height // files)
        for k, piece in enumerate(rows.drop("bucket").iter_slices(size)):
            piece.write_parquet(folder / f"bucket={bucket:02d}" / f"part-{k}.parquet")
    return folder


# the cases with flat judgments (broadcast) or judgments in the run's buckets: each
# case once at least, each way of the judgments with and without unretrieved queries,
# per query and means. zero-drop, which adds to unretrieved-zero only the policies each
# task's one-machine plan is handed (unjudged="zero", unretrieved="drop"), runs on Dask
# (test_dask.py, with the judgments in the run's buckets as here)
PARTITIONED_CASES = [
    (f"{name}-{kind}", run, qrels, options, per_query, kind == "bucketed")
    for name, run, qrels, options, per_query in PARTITIONED
    for kind in ("flat", "bucketed")
    if f"{name}-{kind}"
    in {
        "by-system-bucketed",
        "means-by-system-flat",
        "unretrieved-zero-flat",
        "means-unretrieved-zero-bucketed",
        "judged-table-flat",
        "integer-ids-bucketed",
    }
]


#: The buckets of the partitioned runs compared with irm.evaluate: two (and the
#: unretrieved judged queries' own), so that each call merges the values of several
#: tasks, each task a plan of every metric
BUCKETS = 2


def _judged(spark: SparkSession, qrels: pl.DataFrame | None, bucketed: bool, folder: Path) -> Any:
    if qrels is None:
        return None
    if bucketed:
        return spark.read.parquet(str(_hive(with_bucket(qrels, BUCKETS), folder / "qrels")))
    return _spark_frame(spark, qrels)


def _recording(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The physical plan of each job the engine runs (its ``_compute``), in order."""
    from polars_irmetrics.engines import spark as engine

    plans: list[str] = []
    compute = engine._compute

    def recording(frame: DataFrame, *args: Any) -> DataFrame:
        plans.append(frame._jdf.queryExecution().executedPlan().toString())
        return compute(frame, *args)

    monkeypatch.setattr(engine, "_compute", recording)
    return plans


@pytest.mark.parametrize(
    ("run", "qrels", "options", "per_query", "bucketed"),
    [c[1:] for c in PARTITIONED_CASES],
    ids=[c[0] for c in PARTITIONED_CASES],
)
def test_spark_partitioned_by_equals_evaluate_bit_for_bit(
    spark: SparkSession,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    run: pl.DataFrame,
    qrels: pl.DataFrame | None,
    options: dict[str, Any],
    per_query: bool,
    bucketed: bool,
) -> None:
    expected = _reference(run, qrels, options, per_query)
    plans = _recording(monkeypatch)
    got = irm_spark.evaluate(
        spark.read.parquet(str(_hive(with_bucket(run, BUCKETS), tmp_path / "run"))),
        METRICS,
        qrels=_judged(spark, qrels, bucketed, tmp_path),
        per_query=per_query,
        partitioned_by="bucket",
        **options,
    )
    # the run is not shuffled nor scanned by Spark: the first job is the tasks reading
    # their files (flat judgments broadcast, bucketed ones read by the tasks too); the
    # shuffle path does both (test_spark_shuffle_path_scans_and_moves_the_run)
    first = plans[0]
    assert "Exchange" not in first
    assert "FileScan" not in first
    assert "MapInArrow" in first
    result = _polars(got)
    assert result.schema == expected.schema
    assert result.height == expected.height > 0
    for column in expected.columns:
        assert result[column].to_list() == expected[column].to_list(), column


def test_spark_shuffle_path_scans_and_moves_the_run(
    spark: SparkSession,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # the other side of the plan checks of the partitioned runs above (they can fail):
    # without partitioned_by the run's files are scanned by Spark and shuffled by query
    plans = _recording(monkeypatch)
    run = spark.read.parquet(str(_hive(with_bucket(ONE), tmp_path / "run")))
    shuffled = irm_spark.evaluate(run, ["map"], qrels=_spark_frame(spark, QRELS), per_query=True)
    assert "Exchange" in plans[-1]
    assert "FileScan parquet" in plans[-1]
    expected = irm.evaluate(ONE, ["map"], qrels=QRELS, per_query=True)
    assert _polars(shuffled).rows() == expected.rows()
    # progress=None, not a terminal: nothing drawn
    # (test_spark_progress_draws_every_stage_done draws it when asked)
    assert capsys.readouterr().err == ""


#: (per_query, bucketed): both ways of the judgments; the means and the per-query values
#: once each. A query found in two tasks is refused when the tasks' values are checked
#: (engines/_spark_partitions._checked), before the per-query values or the means are
#: made of them
FALSE_CLAIMS = [(True, False), (False, True)]


@pytest.mark.parametrize(
    ("per_query", "bucketed"), FALSE_CLAIMS, ids=["flat-qrels-per-query", "bucketed-qrels-means"]
)
def test_spark_partitioned_by_a_false_claim_is_an_error(
    spark: SparkSession, tmp_path: Path, per_query: bool, bucketed: bool
) -> None:
    # every other row of a query in another bucket: each query spans two buckets
    run = ONE.with_columns(bucket=pl.int_range(pl.len()).mod(2).cast(pl.Int64))
    if bucketed:
        qrels = spark.read.parquet(str(_hive(with_bucket(QRELS, 2), tmp_path / "qrels")))
    else:
        qrels = _spark_frame(spark, QRELS)
    with pytest.raises(irm.InvalidValueError) as raised:
        irm_spark.evaluate(
            spark.read.parquet(str(_hive(run, tmp_path / "run"))),
            ["map"],
            qrels=qrels,
            per_query=per_query,
            partitioned_by="bucket",
        )
    assert str(raised.value) == (
        "partitioned_by='bucket': query 'q001' has rows under more than one value of "
        "'bucket' (in the run or the judgments), so the partitions do not keep each query "
        "whole; partition by a function of 'query_id' alone, or drop partitioned_by= to "
        "shuffle the rows by query"
    )


def test_spark_partitioned_by_a_judgments_only_false_claim_is_an_error(
    spark: SparkSession, tmp_path: Path
) -> None:
    # the run keeps its queries whole, the judgments put q001 under a second bucket
    judged = with_bucket(QRELS).with_columns(
        bucket=pl.when((pl.col("query_id") == "q001") & (pl.int_range(pl.len()) % 2 == 0))
        .then(pl.col("bucket") + 1)
        .otherwise("bucket")
    )
    with pytest.raises(irm.InvalidValueError, match=re.escape("query 'q001' has rows under")):
        irm_spark.evaluate(
            spark.read.parquet(str(_hive(with_bucket(ONE), tmp_path / "run"))),
            ["map"],
            qrels=spark.read.parquet(str(_hive(judged, tmp_path / "qrels"))),
            partitioned_by="bucket",
        )


def test_spark_partitioned_by_unretrieved_error_as_evaluate(
    spark: SparkSession, tmp_path: Path
) -> None:
    # DENSE misses a judged query: with broadcast judgments it is evaluated on the
    # driver against an empty run, where the "error" policy names it as irm.evaluate does
    message = single_message(DENSE, QRELS, ["map"], unretrieved="error")
    with pytest.raises(irm.QuerySetError) as raised:
        irm_spark.evaluate(
            spark.read.parquet(str(_hive(with_bucket(DENSE), tmp_path / "run"))),
            ["map"],
            qrels=_spark_frame(spark, QRELS),
            unretrieved="error",
            partitioned_by="bucket",
        )
    assert str(raised.value) == message


def test_spark_partitioned_by_refusals(spark: SparkSession, tmp_path: Path) -> None:
    folder = str(_hive(with_bucket(ONE), tmp_path / "run"))
    run = spark.read.parquet(folder)
    qrels = _spark_frame(spark, QRELS)
    tracker = spark.sparkContext.statusTracker()
    jobs = len(tracker.getJobIdsForGroup())
    refusals: list[tuple[DataFrame, dict[str, Any], type, str]] = [
        (
            run.drop("bucket"),
            {"partitioned_by": "bucket"},
            irm.ColumnNotFoundError,
            "partitioned_by='bucket' is not a column of the run; name its hive partition "
            "column (e.g. partitioned_by='qhash' for run/qhash=07/...), or pass "
            "partitioned_by=None",
        ),
        (
            run,
            {"partitioned_by": "doc_id"},
            irm.InvalidValueError,
            "partitioned_by='doc_id' is not a hive partition column of the run's files "
            "(they are partitioned by ['bucket']); name one, e.g. 'qhash' for "
            "run/qhash=07/..., or drop partitioned_by= to shuffle the rows by query",
        ),
        (
            run.filter("score > 0"),
            {"partitioned_by": "bucket"},
            irm.InvalidValueError,
            "partitioned_by='bucket' reads the run's files where they lie, so the run must "
            "be a plain read of Parquet files (spark.read.parquet(...), columns selected "
            "or not); filter or join after evaluating, or drop partitioned_by= to shuffle "
            "the rows by query",
        ),
        (
            run,
            {"partitioned_by": "bucket", "partitions": 2},
            irm.InvalidValueError,
            "partitions=2 and partitioned_by='bucket' exclude each other: with "
            "partitioned_by each value of the column makes one task; drop partitions=",
        ),
    ]
    for frame, options, error, message in refusals:
        with pytest.raises(error) as raised:
            irm_spark.evaluate(frame, ["map"], qrels=qrels, **options)
        assert str(raised.value) == message
    assert len(tracker.getJobIdsForGroup()) == jobs  # no Spark job ran


def test_spark_progress_draws_every_stage_done(
    spark: SparkSession, capsys: pytest.CaptureFixture[str]
) -> None:
    context = spark.sparkContext
    context.setLocalProperty("spark.jobGroup.id", "callers-group")
    got = irm_spark.evaluate(
        _spark_frame(spark, ONE), ["map"], qrels=_spark_frame(spark, QRELS), progress=True
    )
    # tqdm's bar (the test extra installs it): "spark stage 3/3: 100%|...| 7/7 [...]"
    drawn = capsys.readouterr().err.rstrip("\n").split("\r")[-1]
    stages, bar = drawn.split(": ", 1)
    done, total = stages.removeprefix("spark stage ").split("/")
    assert stages.startswith("spark stage ")
    assert done == total
    assert int(total) >= 2  # the shuffle's two sides at least
    assert bar.startswith("100%|")
    tasks, of = bar.split("| ")[1].split()[0].split("/")
    assert tasks == of
    assert context.getLocalProperty("spark.jobGroup.id") == "callers-group"  # restored
    context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
    assert _polars(got).rows() == irm.evaluate(ONE, ["map"], qrels=QRELS).rows()
    # not a terminal: nothing drawn by default (test_spark_shuffle_path_scans_and_moves_the_run)


def test_spark_refuses_a_by_key_only_the_run_has(spark: SparkSession) -> None:
    # as on Dask (engines._partition.prepare): refused on the driver, before any job
    message = (
        "by key 'system' is in the run but not in the judgments: on Spark and Dask each "
        "part sees its own queries"
    )
    with pytest.raises(irm.QuerySetError, match=re.escape(message)):
        irm_spark.evaluate(
            _spark_frame(spark, RUN), ["map"], qrels=_spark_frame(spark, QRELS), by="system"
        )


# per query on Spark, the means on Dask (test_dask.py): queries= is joined onto both
# sides before the parts (spark._with_attributes), the per-query values and the means
# are made of the parts' values as in every other call
@pytest.mark.parametrize("per_query", [True], ids=["per-query"])
def test_spark_queries_place_unretrieved_judged_queries(
    spark: SparkSession, per_query: bool
) -> None:
    options: dict[str, Any] = {"by": "segment", "per_query": per_query}
    expected = irm.evaluate(DENSE, METRICS, qrels=QRELS, queries=QUERIES, **options)
    got = _polars(
        irm_spark.evaluate(
            _spark_frame(spark, DENSE),
            METRICS,
            qrels=_spark_frame(spark, QRELS),
            queries=_spark_frame(spark, QUERIES),
            **options,
        )
    )
    assert got.rows() == expected.rows()
    assert expected["segment"].n_unique() == 2


def test_spark_refuses_the_one_machine_options(spark: SparkSession) -> None:
    message = (
        "spill_dir= is an option of the one-machine out-of-core plan "
        "(polars_irmetrics.evaluate); on Spark the work divides into partitions= parts "
        "(or by partitioned_by=): drop spill_dir="
    )
    with pytest.raises(irm.InvalidValueError, match=re.escape(message)):
        irm_spark.evaluate(
            _spark_frame(spark, DENSE), ["map"], qrels=_spark_frame(spark, QRELS), spill_dir="/tmp"
        )


# --------------------------------------------------------------------------- prediction
#: The prediction cases on Spark: each metric family (binary, rating), table form (one
#: table, two), by= mode, the per-query values and the means, weighted and not; the other
#: cases run on Dask (test_dask.py), the union of the two engines every case. The two
#: tables' means are met here too by test_spark_drop_warns_of_unmatched_labels_as_one_machine.
SPARK_PREDICTION = [
    c
    for c in PREDICTION_CASES
    if c[0] in {"means", "weighted-by-segment", "two-tables-per-user", "weighted-ratings-per-user"}
]


@pytest.mark.parametrize(
    ("table", "labels", "metrics", "options", "per_query"),
    [c[1:] for c in SPARK_PREDICTION],
    ids=[c[0] for c in SPARK_PREDICTION],
)
def test_spark_prediction_metrics_equal_evaluate(
    spark: SparkSession,
    table: pl.DataFrame,
    labels: pl.DataFrame | None,
    metrics: list[str],
    options: dict[str, Any],
    per_query: bool,
) -> None:
    want = prediction_expected(table, labels, metrics, options, per_query)
    got = irm_spark.evaluate(
        _spark_frame(spark, table),
        metrics,
        labels=None if labels is None else _spark_frame(spark, labels),
        per_query=per_query,
        partitions=3,
        **ids_read(options, metrics, labels, per_query),
    )
    result = _polars(got)  # sorted by the keys, as evaluate's
    assert_same(result, want)
    assert_histogram_exact(result, table, labels, metrics, options, per_query)


# warned and not, the means and the per-query values once each (the warning is the
# driver's, after the values: the same code for both); Dask takes the other pairs
@pytest.mark.parametrize(
    ("truth", "per_query", "warned"),
    [(SHIFTED, False, True), (TRUTH, True, False)],
    ids=["no-pair-means", "every-pair-per-query"],
)
def test_spark_drop_warns_of_unmatched_labels_as_one_machine(
    spark: SparkSession, truth: pl.DataFrame, per_query: bool, warned: bool
) -> None:
    """unmatched='drop': the whole table's pairs against both tables' rows, warned of
    once (not by each part), in one machine's words."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = _polars(
            irm_spark.evaluate(
                _spark_frame(spark, PRED),
                ["rmse"],
                labels=_spark_frame(spark, truth),
                per_query=per_query,
                **DROP_KW,
            )
        )
    said = [str(w.message) for w in caught if issubclass(w.category, irm.IrmWarning)]
    assert said == ([NO_PAIR] if warned else [])
    assert got["num_rows"].sum() == (0 if warned else TRUTH.height)


def test_spark_prediction_errors_are_the_librarys(spark: SparkSession) -> None:
    # the users as the query_id column, which splits the table though no metric reads
    # it: user 5's rows in one part, whose task's message counts them all
    log = PREDICTION_LOG.rename({"user": "query_id"})
    log = log.with_columns(p=pl.when(pl.col("query_id") == 5).then(1.5).otherwise("p"))
    read = ids_read(BINARY_KW, ["auc"], None, False)
    with pytest.raises(irm.InvalidValueError) as one_machine:
        irm.evaluate(log, ["auc", "logloss"], **read)
    with pytest.raises(irm.InvalidValueError) as raised:  # found in a task
        irm_spark.evaluate(_spark_frame(spark, log), ["auc", "logloss"], **read)
    assert str(raised.value) == str(one_machine.value)
    frame = _spark_frame(spark, PREDICTION_LOG)
    with pytest.raises(
        irm.InvalidValueError,
        match=re.escape(
            "partitioned_by= is not available for prediction metrics on Spark: the table is "
            "shuffled by query hash; drop partitioned_by="
        ),
    ):
        irm_spark.evaluate(frame, ["auc"], partitioned_by="segment", **BINARY_KW)
    with pytest.raises(irm.ColumnNotFoundError, match=re.escape("column 'score' not found")):
        irm_spark.evaluate(frame, ["auc"], **{**read, "prediction": "score"})


@pytest.mark.parametrize(
    ("metrics", "kind", "options"), [c[1:] for c in UNREAD], ids=[c[0] for c in UNREAD]
)
def test_spark_refuses_an_option_no_metric_reads(
    spark: SparkSession, metrics: list[str], kind: str, options: dict[str, Any]
) -> None:
    table_kind = DENSE if kind == "run" else PREDICTION_LOG
    message = single_message(table_kind, QRELS if kind == "run" else None, metrics, **options)
    table = _spark_frame(spark, DENSE if kind == "run" else PREDICTION_LOG)
    qrels = _spark_frame(spark, QRELS) if kind == "run" else None
    with pytest.raises(irm.InvalidValueError) as raised:
        irm_spark.evaluate(table, metrics, qrels=qrels, **options)
    assert str(raised.value) == message
    assert "is not read by" in message or "unmatched=" in message


def test_spark_refuses_unseen_items_without_the_tables_that_know_the_items(
    spark: SparkSession,
) -> None:
    # as irm.evaluate refuses it (the door's check_item_options)
    recommendations = DENSE.select("query_id", "doc_id", "score")
    message = single_message(
        recommendations, None, ["distributional_coverage@10"], unseen_items="drop"
    )
    assert message.startswith("unseen_items='drop' says what becomes of a recommended item")
    with pytest.raises(irm.InvalidValueError) as raised:
        irm_spark.evaluate(
            _spark_frame(spark, recommendations),
            ["distributional_coverage@10"],
            unseen_items="drop",
        )
    assert str(raised.value) == message
