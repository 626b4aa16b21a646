"""Prediction metrics on Spark (:mod:`polars_irmetrics.engines._prediction`).

The table (and the ``labels``, in one frame with a side flag and their columns
renamed) is ``repartition``-ed on the part number of each row's query
(``pmod(xxhash64(query_id), partitions)``), and ``mapInArrow`` hands each partition to
one Python task, which gives its per-query values or statistics. Means: the statistics
of each ``by`` group go to one task (``groupBy(by).applyInArrow``; without ``by`` one
partition), which merges them. :mod:`polars_irmetrics.engines.spark` computes the result
at the call (one Spark job), as for the other metrics, and passes its own part number
and schema functions (this module does not import it: it imports this one).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import polars as pl
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F  # noqa: N812 (Spark's own spelling)
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from polars_irmetrics.engines._partition import PART, arrow_schema, as_polars_frame, carry_error
from polars_irmetrics.engines._prediction import (
    PredictionJob,
    means_job,
    prediction_part,
    prediction_summary,
    prepare_prediction,
)
from polars_irmetrics.errors import IrmError
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import INTERNAL

if TYPE_CHECKING:
    from pyspark.sql import Column

__all__ = ["prediction_frame"]

#: ``(frame, query_id, count) -> part column`` (the engine's :func:`_part`).
PartOf = Callable[[DataFrame, str, int], "Column"]
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
) -> DataFrame:
    """:func:`polars_irmetrics.spark.evaluate`'s result for prediction metrics, not yet
    computed (module doc); ``part`` and ``spark_schema`` are the engine's own."""
    job = prepare_prediction(
        to_arrow_schema(table.schema),
        None if labels is None else to_arrow_schema(labels.schema),
        metrics,
        options,
    )
    first = means_job(job)
    if first is not None:  # r2, explained_variance: the means first, collected here
        rows = _summaries(
            _parts(table, labels, first, count, part, spark_schema), first, spark_schema
        )
        means = pl.DataFrame(
            [tuple(r) for r in rows.collect()], schema=first.result_schema, orient="row"
        )
        job = job.with_means(means)
    parts = _parts(table, labels, job, count, part, spark_schema)
    if job.options.per_query:
        return parts.orderBy(*job.keys).toDF(*job.result_schema)
    return _summaries(parts, job, spark_schema).toDF(*job.result_schema)


def _carrying(function: Callable[..., pa.Table], *args: Any) -> pa.Table:
    """``function(*args)`` in a task, a library error carried in the text of a
    :class:`~polars_irmetrics.engines._partition.CarriedError`."""
    try:
        return function(*args)
    except IrmError as exc:
        raise carry_error(exc) from exc


def _parts(
    table: DataFrame,
    labels: DataFrame | None,
    job: PredictionJob,
    count: int,
    part: PartOf,
    spark_schema: SparkSchema,
) -> DataFrame:
    """Each part's per-query values or statistics, one task per partition."""
    schema = spark_schema(job.part_schema, job.keys)
    inner = schema.names
    query_id = job.options.query_id
    columns = table.columns
    side = f"{INTERNAL}side"
    both = table.withColumn(PART, part(table, query_id, count)).withColumn(side, F.lit(0))
    renamed: dict[str, str] = {}
    if labels is not None:
        renamed = {c: f"{INTERNAL}l_{c}" for c in labels.columns}
        truth = labels.withColumn(PART, part(labels, query_id, count)).select(
            *(F.col(c).alias(n) for c, n in renamed.items()), PART, F.lit(1).alias(side)
        )
        both = both.unionByName(truth, allowMissingColumns=True)

    def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        found = list(batches)
        if not found:  # no row, so no query, in this partition
            return
        frame = as_polars_frame(pa.Table.from_batches(found))
        rows = frame.filter(pl.col(side) == 0).select(columns).to_arrow()
        truth = None
        if renamed:
            kept = frame.filter(pl.col(side) == 1)
            truth = kept.select(pl.col(n).alias(c) for c, n in renamed.items()).to_arrow()
        out = _carrying(prediction_part, job, rows, truth).rename_columns(inner)
        yield from out.to_batches()

    return both.repartition(count, PART).mapInArrow(task, schema)


def _summaries(parts: DataFrame, job: PredictionJob, spark_schema: SparkSchema) -> DataFrame:
    """One row of means per ``by`` group, each merged in one task."""
    schema = spark_schema(job.result_schema, job.by)
    inner, names = schema.names, list(job.part_schema)
    fields = zip(arrow_schema(job.part_schema), parts.columns, strict=True)
    statistics = pa.schema(field.with_name(name) for field, name in fields)

    def summarize(table: pa.Table) -> pa.Table:
        merged = _carrying(prediction_summary, job, table.rename_columns(names))
        return merged.rename_columns(inner)

    if job.by:
        return parts.groupBy(*job.by).applyInArrow(summarize, schema).orderBy(*job.by)

    def everything(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        yield from summarize(pa.Table.from_batches(list(batches), schema=statistics)).to_batches()

    # one partition holds every part's statistics: one row of means, even for none
    return parts.repartition(1).mapInArrow(everything, schema)
