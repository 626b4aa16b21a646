"""The metrics of the items' counts and Elliot's on Spark
(:mod:`polars_irmetrics.engines._recsys`).

The recommendations (the columns the metrics read; for Elliot's, with the test
interactions) are split by user hash
(:func:`~polars_irmetrics.engines._spark_pairs.paired_map`: ``repartition`` on the
engine's part number, one ``mapInArrow`` task per partition), each task giving its rows
with the side tables shipped in the job; the parts' rows go to one partition, where one
task merges them into the result. Elliot's parts hand their coverage to an accumulator,
which the driver adds up and warns about once the result is computed.
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
from pyspark.sql.types import StructType

from polars_irmetrics.engines._partition import judgments_given
from polars_irmetrics.engines._recsys import (
    ElliotJob,
    Kind,
    UnseenJob,
    counts_finish,
    counts_part,
    elliot_finish,
    elliot_part_rows,
    prepare_counts,
    prepare_elliot,
    unseen_finish,
    unseen_part,
)
from polars_irmetrics.engines._spark_arrow import arrow_of
from polars_irmetrics.engines._spark_coverage import Parts, into, task_key
from polars_irmetrics.engines._spark_pairs import PartOf, carrying, finished_in_one, paired_map
from polars_irmetrics.ground.options import EvalOptions

__all__ = ["counts_frame", "elliot_frame", "unseen_frame"]

#: ``(schema, keys) -> Spark schema`` with the non-key columns renamed (the engine's).
SparkSchema = Callable[[pl.Schema, tuple[str, ...]], StructType]


def counts_frame(
    run: DataFrame,
    metrics: Iterable[str],
    *,
    kind: Kind,
    sides: tuple[tuple[str, pa.Table], ...],
    count: int,
    options: EvalOptions,
    part: PartOf,
    spark_schema: SparkSchema,
) -> DataFrame:
    """:func:`polars_irmetrics.spark.evaluate`'s result for the metrics whose parts give
    rows of ``kind`` (the items' counts, or the users' values of RePlay's novelty), not
    yet computed (module doc)."""
    job = prepare_counts(
        arrow_of(run),
        sides,
        metrics,
        options,
        "polars_irmetrics.spark.evaluate",
        kind,
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


def elliot_frame(
    run: DataFrame,
    qrels: DataFrame | None,
    metrics: Iterable[str],
    *,
    sides: tuple[tuple[str, pa.Table], ...],
    count: int,
    options: EvalOptions,
    part: PartOf,
    spark_schema: SparkSchema,
    parts: Parts,
) -> tuple[DataFrame, ElliotJob]:
    """:func:`polars_irmetrics.spark.evaluate`'s result for Elliot's metrics, not yet
    computed (module doc), and its job; each part's coverage goes to ``parts``."""
    job = prepare_elliot(
        arrow_of(run),
        None if qrels is None else arrow_of(qrels),
        sides,
        metrics,
        options,
        "polars_irmetrics.spark.evaluate",
    )
    qrels_given = judgments_given(qrels, "Elliot's metrics", "the test interactions")

    def evaluate(runs: pa.Table, judged: pa.Table | None) -> pa.Table:
        sink = into(parts, task_key("elliot"))
        return carrying(elliot_part_rows, job, runs, judged, sink)

    rows = paired_map(
        run.select(*job.run_schema.names()),
        qrels_given.select(*job.qrels_schema.names()),
        evaluate,
        query_id=job.options.query_id,
        count=count,
        part=part,
        schema=spark_schema(job.part_schema, ()),
        prefix="q",
    )
    finish = partial(elliot_finish, job)
    return finished_in_one(rows, job.part_schema, job.result_schema, finish, spark_schema), job


def unseen_frame(
    run: DataFrame, job: UnseenJob, *, count: int, part: PartOf, spark_schema: SparkSchema
) -> DataFrame:
    """The whole run's refusal of the recommended items the interactions lack
    (:class:`~polars_irmetrics.engines._recsys.UnseenJob`), not yet computed: each part's
    rows of such items, merged in one task that raises one machine's error (no row where
    none is refused). The engine computes it once a part has refused its own."""

    def evaluate(rows: pa.Table, _: pa.Table | None) -> pa.Table:
        return carrying(unseen_part, job, rows)

    parts = paired_map(
        run.select(*job.run_schema.names()),
        None,
        evaluate,
        query_id=job.options.user_id,
        count=count,
        part=part,
        schema=spark_schema(job.part_schema, ()),
        prefix="u",
    )
    finish = partial(unseen_finish, job)
    return finished_in_one(parts, job.part_schema, job.part_schema, finish, spark_schema)
