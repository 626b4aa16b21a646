"""The metrics of the items' counts on Spark (:mod:`polars_irmetrics.engines._counts`).

The recommendations (the columns the metrics read) are split by user hash
(:func:`~polars_irmetrics.engines._spark_pairs.paired_map` without a second frame:
``repartition`` on the engine's part number, one ``mapInArrow`` task per partition),
each task giving its items' counts with the side tables shipped in the job; the parts'
rows go to one partition, where one task adds them up into the result.
:mod:`polars_irmetrics.engines.spark` computes it at the call, as for the other
metrics, and passes its own part number and schema functions (this module does not
import it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial

import polars as pl
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from polars_irmetrics.engines._counts import counts_finish, counts_part, prepare_counts
from polars_irmetrics.engines._spark_pairs import PartOf, carrying, finished_in_one, paired_map
from polars_irmetrics.ground.options import EvalOptions

__all__ = ["counts_frame"]

#: ``(schema, keys) -> Spark schema`` with the non-key columns renamed (the engine's).
SparkSchema = Callable[[pl.Schema, tuple[str, ...]], StructType]


def counts_frame(
    run: DataFrame,
    metrics: Iterable[str],
    *,
    sides: tuple[tuple[str, pa.Table], ...],
    count: int,
    options: EvalOptions,
    part: PartOf,
    spark_schema: SparkSchema,
) -> DataFrame:
    """:func:`polars_irmetrics.spark.evaluate`'s result for the metrics of the items'
    counts, not yet computed (module doc)."""
    job = prepare_counts(
        to_arrow_schema(run.schema), sides, metrics, options, "polars_irmetrics.spark.evaluate"
    )
    user = job.options.query_id
    parts_schema = spark_schema(job.part_schema, ())

    def evaluate(rows: pa.Table, _: pa.Table | None) -> pa.Table:
        return carrying(counts_part, job, rows)

    parts = paired_map(
        run.select(*job.run_schema.names()),
        None,
        evaluate,
        query_id=user,
        count=count,
        part=part,
        schema=parts_schema,
        prefix="c",
    )
    return finished_in_one(
        parts, job.part_schema, job.result_schema, partial(counts_finish, job), spark_schema
    )
