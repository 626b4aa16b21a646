"""Prediction metrics on Spark (:mod:`polars_irmetrics.engines._prediction`).

The table (and the ``labels``, in one frame with a side flag and their columns
renamed) is ``repartition``-ed on the part number of each row's query
(``pmod(xxhash64(query_id), partitions)``; a table without ``query_id``, which no
metric then reads, round robin: ``repartition(partitions)``), and ``mapInArrow`` hands
each partition to one Python task, which gives its per-query values or statistics.
Means: the statistics of each ``by`` group go to one task (``groupBy(by).applyInArrow``;
without ``by`` one partition), which merges them. :mod:`polars_irmetrics.engines.spark`
computes the result at the call (one Spark job), as for the other metrics, and passes
its own part number and schema functions (this module does not import it: it imports
this one). Each task of the last pass also hands the driver its rows of either table
(an accumulator keyed by its partition): the two tables' sizes, which the warning of
``unmatched='drop'`` reads, with no Spark job of their own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import polars as pl
import pyarrow as pa
from pyspark import Accumulator
from pyspark.sql import DataFrame
from pyspark.sql.types import StructType

from polars_irmetrics.engines._partition import arrow_schema, raise_carried
from polars_irmetrics.engines._prediction import (
    PredictionJob,
    checks_job,
    counts_checks,
    means_job,
    prediction_part,
    prediction_summary,
    prepare_prediction,
)
from polars_irmetrics.engines._spark_arrow import arrow_of
from polars_irmetrics.engines._spark_coverage import keyed_parts, task_key
from polars_irmetrics.engines._spark_pairs import PartOf, carrying, paired_map
from polars_irmetrics.ground.options import EvalOptions

if TYPE_CHECKING:
    pass

__all__ = ["prediction_frame", "raise_checks"]

#: ``(schema, keys) -> Spark schema`` with the non-key columns renamed (the engine's).
SparkSchema = Callable[[pl.Schema, tuple[str, ...]], StructType]


def prediction_frame(
    table: DataFrame,
    metrics: str | Iterable[str],
    *,
    labels: DataFrame | None,
    count: int,
    options: EvalOptions,
    part: PartOf,
    spark_schema: SparkSchema,
) -> tuple[DataFrame, PredictionJob, Callable[[], tuple[int, int]]]:
    """:func:`polars_irmetrics.spark.evaluate`'s result for prediction metrics, not yet
    computed (module doc), its job (whose means' warnings the caller gives once it
    is computed, :func:`~polars_irmetrics.engines._prediction.warn_on_summary`) and the
    function that gives, once it is computed, the rows of the table and of ``labels``
    (each task's count of its rows, by its partition: a task run twice counts once);
    ``part`` and ``spark_schema`` are the engine's own."""
    job = prepare_prediction(
        arrow_of(table),
        None if labels is None else arrow_of(labels),
        metrics,
        options,
    )
    # a text label column: its labels over the whole table first; rating and probability
    # metrics: the scale (and r2..., the means); each collected here
    while (first := means_job(job)) is not None:
        # the scale pass's tasks also count the data checks of their rows (by partition)
        counted = keyed_parts(table.sparkSession.sparkContext) if counts_checks(first) else None
        rows = _summaries(
            _parts(table, labels, first, count, part, spark_schema, checks_by_part=counted),
            first,
            spark_schema,
        )
        try:  # the labels pass raises a task's library error (one machine's message)
            collected = rows.collect()
        except Exception as exc:  # a Spark error, which may carry one of ours
            raise_carried(exc)
        if counted is not None:  # raised over the whole table before any later pass
            _raise_counted(job, counted.value.values())
            job = replace(job, checked=True)
        means = pl.DataFrame(
            [tuple(r) for r in collected], schema=first.result_schema, orient="row"
        )
        job = job.with_means(means)
    rows_by_part = keyed_parts(table.sparkSession.sparkContext)

    def sizes() -> tuple[int, int]:
        counted = rows_by_part.value.values()
        return sum(c[0] for c in counted), sum(c[1] for c in counted)

    parts = _parts(table, labels, job, count, part, spark_schema, rows_by_part)
    if job.options.per_query:
        return parts.orderBy(*job.keys).toDF(*job.result_schema), job, sizes
    return _summaries(parts, job, spark_schema).toDF(*job.result_schema), job, sizes


def raise_checks(
    table: DataFrame,
    labels: DataFrame | None,
    job: PredictionJob,
    *,
    count: int,
    part: PartOf,
    spark_schema: SparkSchema,
) -> None:
    """Where a part has refused its rows (its count is that part's, not the table's):
    the data checks counted in every part and raised over the whole table with one
    machine's message (:func:`~polars_irmetrics.engines._prediction.checks_job`, one
    more Spark job); nothing where they pass, or where the scale pass counted them
    (``job.checked``: they passed)."""
    if job.checked:
        return
    checks = checks_job(job)
    rows = _summaries(
        _parts(table, labels, checks, count, part, spark_schema), checks, spark_schema
    )
    try:
        rows.collect()
    except Exception as exc:  # a Spark error, which may carry one of ours
        raise_carried(exc)


def _raise_counted(job: PredictionJob, counts: Iterable[pa.Table]) -> None:
    """The data checks the scale pass's tasks counted, merged on the driver and raised
    over the whole table with one machine's message; nothing where they pass."""
    tables = list(counts)
    if tables:
        prediction_summary(checks_job(job), pa.concat_tables(tables))


def _parts(
    table: DataFrame,
    labels: DataFrame | None,
    job: PredictionJob,
    count: int,
    part: PartOf,
    spark_schema: SparkSchema,
    rows_by_part: Accumulator[dict[Any, Any]] | None = None,
    checks_by_part: Accumulator[dict[Any, Any]] | None = None,
) -> DataFrame:
    """Each part's per-query values or statistics, one task per partition; with
    ``rows_by_part``, each task's rows of the table and of the labels handed to it;
    with ``checks_by_part``, its counts of the data checks (a task run twice counts
    once)."""
    checks = None if checks_by_part is None else checks_job(job)

    def evaluate(rows: pa.Table, truth: pa.Table | None) -> pa.Table:
        if rows_by_part is not None:
            rows_by_part.add({task_key(): (rows.num_rows, 0 if truth is None else truth.num_rows)})
        values = carrying(prediction_part, job, rows, truth)
        if checks_by_part is not None and checks is not None:
            checks_by_part.add({task_key(): carrying(prediction_part, checks, rows, truth)})
        return values

    return paired_map(
        table,
        labels,
        evaluate,
        # no query_id column, and no metric reads it: any row in any part (round robin)
        query_id=job.options.query_id if job.by_query else None,
        count=count,
        part=part,
        schema=spark_schema(job.part_schema, job.keys),
        prefix="l",
    )


def _summaries(parts: DataFrame, job: PredictionJob, spark_schema: SparkSchema) -> DataFrame:
    """One row of means per ``by`` group, each merged in one task."""
    schema = spark_schema(job.result_schema, job.by)
    inner, names = schema.names, list(job.part_schema)
    fields = zip(arrow_schema(job.part_schema), parts.columns, strict=True)
    statistics = pa.schema(field.with_name(name) for field, name in fields)

    def summarize(table: pa.Table) -> pa.Table:
        merged = carrying(prediction_summary, job, table.rename_columns(names))
        return merged.rename_columns(inner)

    if job.by:
        return parts.groupBy(*job.by).applyInArrow(summarize, schema).orderBy(*job.by)

    def everything(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        yield from summarize(pa.Table.from_batches(list(batches), schema=statistics)).to_batches()

    # one partition holds every part's statistics: one row of means, even for none
    return parts.repartition(1).mapInArrow(everything, schema)
