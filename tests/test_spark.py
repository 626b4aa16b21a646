"""``polars_irmetrics.spark.evaluate`` on a real local Spark session (the ``spark``
fixture of conftest.py): equal to ``irm.evaluate`` to the last bit, and the library's
own errors."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import polars as pl
import pytest
from pyspark.sql import DataFrame, SparkSession

import polars_irmetrics as irm
import polars_irmetrics.spark as irm_spark

from .engine_cases import ERRORS, MATRIX, METRICS, ONE, QRELS, RUN, single_message


def _spark_frame(spark: SparkSession, frame: pl.DataFrame) -> DataFrame:
    return spark.createDataFrame(frame.to_arrow())


def _polars(frame: DataFrame) -> pl.DataFrame:
    out = pl.from_arrow(frame.toArrow())
    assert isinstance(out, pl.DataFrame)
    return out


@pytest.mark.parametrize(
    ("run", "qrels", "options", "per_query"), [c[1:] for c in MATRIX], ids=[c[0] for c in MATRIX]
)
def test_spark_equals_evaluate_bit_for_bit(
    spark: SparkSession,
    run: pl.DataFrame,
    qrels: pl.DataFrame | None,
    options: dict[str, Any],
    per_query: bool,
) -> None:
    expected = irm.evaluate(run, METRICS, qrels=qrels, per_query=per_query, **options)
    got = irm_spark.evaluate(
        _spark_frame(spark, run),
        METRICS,
        qrels=None if qrels is None else _spark_frame(spark, qrels),
        per_query=per_query,
        **options,
    )
    result = _polars(got)
    assert result.schema == expected.schema
    assert result.height == expected.height > 0
    # exact: the same bits, row for row, in the same order
    for column in expected.columns:
        assert result[column].to_list() == expected[column].to_list(), column


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


@pytest.mark.parametrize(
    ("run", "qrels", "options", "per_query"),
    [c[1:] for c in MATRIX if c[0] in ("by-system-score", "judged-table")],
    ids=["by-system-score", "judged-table"],
)
def test_spark_map_strategy_equals_evaluate_bit_for_bit(
    spark: SparkSession,
    monkeypatch: pytest.MonkeyPatch,
    run: pl.DataFrame,
    qrels: pl.DataFrame | None,
    options: dict[str, Any],
    per_query: bool,
) -> None:
    # the other way to reach the tasks (repartition + mapInArrow), measured against
    # the default in benchmarks/scale.py
    from polars_irmetrics.engines import spark as engine

    other = "map" if engine.STRATEGY == "cogroup" else "cogroup"
    monkeypatch.setattr(engine, "STRATEGY", other)
    expected = irm.evaluate(run, METRICS, qrels=qrels, per_query=per_query, **options)
    got = irm_spark.evaluate(
        _spark_frame(spark, run),
        METRICS,
        qrels=None if qrels is None else _spark_frame(spark, qrels),
        per_query=per_query,
        **options,
    )
    result = _polars(got)
    assert result.schema == expected.schema
    for column in expected.columns:
        assert result[column].to_list() == expected[column].to_list(), column
