"""Two Spark frames evaluated together, query by query, in one ``mapInArrow`` task each.

Both the run-and-judgments route of :mod:`polars_irmetrics.engines.spark` and its
prediction metrics (:mod:`polars_irmetrics.engines._prediction_spark`, predictions and
``labels=``) pair two frames the same way: the rows of both in one frame (the second's
columns renamed, a side flag), ``repartition``-ed on each row's part number (a hash of
its query id, the engine's own), and each partition's rows split back into the two
tables and evaluated at once by a Python function. A library error raised in a task
leaves as a :class:`~polars_irmetrics.engines._partition.CarriedError`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import polars as pl
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F  # noqa: N812 (Spark's own spelling)
from pyspark.sql.types import StructType

from polars_irmetrics.engines._partition import PART, arrow_schema, as_polars_frame, carry_error
from polars_irmetrics.errors import IrmError
from polars_irmetrics.ground.validate import INTERNAL

if TYPE_CHECKING:
    from pyspark.sql import Column

__all__ = ["PartOf", "carrying", "finished_in_one", "paired_map"]

#: ``(frame, query_id, count) -> part column`` (the engine's ``_part``).
PartOf = Callable[[DataFrame, str, int], "Column"]


def carrying(function: Callable[..., pa.Table], *args: Any) -> pa.Table:
    """``function(*args)`` in a task: a library error leaves as a
    :class:`~polars_irmetrics.engines._partition.CarriedError`, whose text survives
    Spark's error handling (raised again on the driver)."""
    try:
        return function(*args)
    except IrmError as exc:
        raise carry_error(exc) from exc


def paired_map(
    first: DataFrame,
    second: DataFrame | None,
    evaluate: Callable[[pa.Table, pa.Table | None], pa.Table],
    *,
    query_id: str | None,
    count: int,
    part: PartOf,
    schema: StructType,
    prefix: str,
) -> DataFrame:
    """``evaluate(first rows, second rows)`` on each of ``count`` partitions of both
    frames (module doc), its result's columns renamed to ``schema``'s; a partition
    without rows gives none. ``prefix`` names the second frame's renamed columns.
    ``query_id`` ``None`` (one frame alone, whose rows need not meet by query): the rows
    are dealt round robin (``repartition(count)``) instead of by their part number."""
    side = f"{INTERNAL}side"
    columns = first.columns
    inner = schema.names
    if query_id is None:
        if second is not None:  # the two frames' rows meet by query
            raise TypeError("paired_map: two frames are paired by query_id")
        both = first.withColumn(side, F.lit(0))
    else:
        both = first.withColumn(PART, part(first, query_id, count)).withColumn(side, F.lit(0))
    renamed: dict[str, str] = {}
    if second is not None and query_id is not None:
        renamed = {c: f"{INTERNAL}{prefix}_{c}" for c in second.columns}
        other = second.withColumn(PART, part(second, query_id, count)).select(
            *(F.col(c).alias(n) for c, n in renamed.items()), PART, F.lit(1).alias(side)
        )
        both = both.unionByName(other, allowMissingColumns=True)
    paired = second is not None

    def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        found = list(batches)
        if not found:  # no row, so no query, in this partition
            return
        frame = as_polars_frame(pa.Table.from_batches(found))
        rows = frame.filter(pl.col(side) == 0).select(columns).to_arrow()
        other = None
        if paired:
            kept = frame.filter(pl.col(side) == 1)
            other = kept.select(pl.col(n).alias(c) for c, n in renamed.items()).to_arrow()
        yield from evaluate(rows, other).rename_columns(inner).to_batches()

    parts = both.repartition(count) if query_id is None else both.repartition(count, PART)
    return parts.mapInArrow(task, schema)


def finished_in_one(
    parts: DataFrame,
    part_schema: pl.Schema,
    result: pl.Schema,
    finish: Callable[[pa.Table], pa.Table],
    spark_schema: Callable[[pl.Schema, tuple[str, ...]], StructType],
    keys: tuple[str, ...] = (),
) -> DataFrame:
    """Every row of ``parts`` (the parts' rows of ``part_schema``, their columns other
    than ``keys`` renamed by ``spark_schema``) gathered in one partition, where one task
    gives ``finish``'s result (of ``result``'s schema, one even for no row); named back
    to the columns of ``result``. A library error leaves as a
    :class:`~polars_irmetrics.engines._partition.CarriedError`."""
    names = list(part_schema)
    renamed = spark_schema(part_schema, keys)
    rows = pa.schema(
        field.with_name(name)
        for field, name in zip(arrow_schema(part_schema), renamed.names, strict=True)
    )
    result_schema = spark_schema(result, keys)

    def everything(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        table = pa.Table.from_batches(list(batches), schema=rows).rename_columns(names)
        finished = carrying(finish, table)
        yield from finished.rename_columns(result_schema.names).to_batches()

    return parts.repartition(1).mapInArrow(everything, result_schema).toDF(*result)
