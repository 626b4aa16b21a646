"""The rank-similarity metrics on Spark (:mod:`polars_irmetrics.engines._agreement`).

The run and the reference (their columns the plan reads) are paired by query hash
(:func:`~polars_irmetrics.engines._spark_pairs.paired_map`: ``repartition`` on the
engine's part number, one ``mapInArrow`` task per partition), each task giving its
queries' values; for the means they go to one partition, where one task averages them.
The whole run's query keys and those the reference holds are counted on the driver for
the warning, once the result is computed (a run a part refuses warns of nothing); the
queries where a correlation is null for its ties are counted by each task, whose tally
an accumulator brings to the driver, which warns after. The reference's distinct
groups (the ``by``/``systems`` keys it shares with the run) are gathered on the driver
first: a part refuses a group of the run only where the whole reference lacks it.
:mod:`polars_irmetrics.engines.spark` computes the result at the call and passes its
own part number and schema functions (this module does not import it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator

import polars as pl
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F  # noqa: N812 (Spark's own spelling)
from pyspark.sql.types import StructType

from polars_irmetrics.agreement.coverage import missed_hint
from polars_irmetrics.agreement.keys import reference_group_keys
from polars_irmetrics.engines._agreement import (
    AgreementJob,
    agreement_finish,
    agreement_part,
    prepare_agreement,
    reference_keys,
    split_marks,
    warn_on_reference,
    warn_on_tied,
)
from polars_irmetrics.engines._partition import arrow_schema, as_polars_frame
from polars_irmetrics.engines._spark_arrow import arrow_of
from polars_irmetrics.engines._spark_coverage import keyed_parts, task_key
from polars_irmetrics.engines._spark_pairs import PartOf, carrying, paired_map
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import INTERNAL, Hint, is_text

__all__ = ["agreement_frame"]

#: ``(schema, keys) -> Spark schema`` with the non-key columns renamed (the engine's).
SparkSchema = Callable[[pl.Schema, tuple[str, ...]], StructType]


def agreement_frame(
    run: DataFrame,
    metrics: Iterable[str],
    *,
    reference: DataFrame,
    count: int,
    options: EvalOptions,
    part: PartOf,
    spark_schema: SparkSchema,
) -> tuple[DataFrame, Callable[[], None]]:
    """:func:`polars_irmetrics.spark.evaluate`'s result for the rank-similarity metrics,
    not yet computed (module doc), and the function that warns once it is: of a
    reference that lacks most of the run's queries, then of the correlations null for
    their ties (each task hands its part's tally to an accumulator, by its partition).
    A run a part refuses is refused before anything is warned about, as on one
    machine."""
    job = prepare_agreement(arrow_of(run), arrow_of(reference), metrics, options)
    shared = reference_group_keys(job.options, list(job.reference_schema))
    if shared:  # a part holds some of a group's queries: the whole reference's groups
        found = as_polars_frame(reference.select(*shared).distinct().toArrow())
        held = job.options.replace(reference_groups=tuple(found.rows()))
        job = dataclasses.replace(job, options=held)
    query_id = job.options.query_id
    keys = tuple(job.keys)
    values_schema = spark_schema(job.per_query_schema, keys)
    tallies = keyed_parts(run.sparkSession.sparkContext)

    def evaluate(runs: pa.Table, other: pa.Table | None) -> pa.Table:
        values, tally = split_marks(job, carrying(agreement_part, job, runs, other))
        tallies.add({task_key(): tally})
        return values

    def warn_tied() -> None:
        _warn(job, run, reference)
        warn_on_tied(job, tallies.value.values())

    values = paired_map(
        run.select(*job.run_schema.names()),
        reference.select(*job.reference_schema.names()),
        evaluate,
        query_id=query_id,
        count=count,
        part=part,
        schema=values_schema,
        prefix="r",
    )
    if job.options.per_query:
        return values.orderBy(*keys).toDF(*job.per_query_schema), warn_tied
    names = list(job.per_query_schema)
    rows = pa.schema(
        field.with_name(name)
        for field, name in zip(
            arrow_schema(job.per_query_schema), values_schema.names, strict=True
        )
    )
    result_schema = spark_schema(job.result_schema, tuple(job.options.by_keys))

    def everything(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        table = pa.Table.from_batches(list(batches), schema=rows).rename_columns(names)
        result = carrying(agreement_finish, job, table)
        yield from result.rename_columns(result_schema.names).to_batches()

    # one partition holds every query's values: one result, even for none
    finished = values.repartition(1).mapInArrow(everything, result_schema)
    return finished.toDF(*job.result_schema), warn_tied


def _warn(job: AgreementJob, run: DataFrame, reference: DataFrame) -> None:
    """The warning of a reference that lacks most of the run's queries, from the whole
    run's distinct query keys and those the reference holds (on its keys), counted as
    one machine counts them on the long form: a list-shaped side's queries where their
    list holds a document, its documents one per element (:attr:`AgreementJob.lists`)."""
    on = reference_keys(job)
    held = f"{INTERNAL}held"
    doc = job.options.doc_id
    run_lists, reference_lists = job.lists

    def rows(frame: DataFrame, lists: bool) -> DataFrame:
        return frame.where(F.size(doc) > 0) if lists else frame

    def documents(frame: DataFrame, lists: bool, *others: str, name: str = doc) -> DataFrame:
        column = F.explode(F.col(doc)) if lists else F.col(doc)
        return frame.select(*others, column.alias(name)).distinct()

    found = rows(reference, reference_lists).select(
        *(F.col(c).alias(f"{INTERNAL}r_{c}") for c in on)
    )
    found = found.distinct().withColumn(held, F.lit(1))
    keys = rows(run, run_lists).select(*job.keys).distinct()
    same = [keys[c].eqNullSafe(found[f"{INTERNAL}r_{c}"]) for c in on]  # nulls match
    joined = keys.join(found, same, how="left")
    row = joined.agg(F.count(F.lit(1)).alias("total"), F.count(held).alias("held")).collect()[0]
    listed = documents(reference, reference_lists, name=f"{INTERNAL}r_doc")
    listed = listed.withColumn(held, F.lit(1))
    docs = documents(run, run_lists)
    counted = docs.join(listed, docs[doc] == listed[f"{INTERNAL}r_doc"], how="left")
    by_doc = counted.agg(F.count(F.lit(1)).alias("n"), F.count(held).alias("held")).collect()[0]
    counts = (int(row["total"]), int(row["held"]), int(by_doc["n"]), int(by_doc["held"]))
    systems = list(job.options.system_keys)
    by_system = None
    if systems:  # each system's counts too: a system the reference mostly lacks is named
        system_docs = documents(run, run_lists, *systems)
        system_docs = system_docs.join(
            listed, system_docs[doc] == listed[f"{INTERNAL}r_doc"], how="left"
        )
        tallies = [F.count(F.lit(1)).alias("total"), F.count(held).alias("held")]
        by_system = (
            as_polars_frame(joined.groupBy(*systems).agg(*tallies).toArrow()),
            as_polars_frame(system_docs.groupBy(*systems).agg(*tallies).toArrow()),
        )
    # the reverse: the reference's queries (each group of the run it serves apart), per
    # system, of which the run lists as many as the reference holds of its own
    missing = [k for k in job.keys if k not in on]
    found_systems = [k for k in systems if k in on]
    found_counts = found.groupBy(*(f"{INTERNAL}r_{k}" for k in found_systems)).count()
    found_counts = found_counts.toDF(*found_systems, "n")
    every = None
    if missing:
        groups = rows(run, run_lists).select(*missing).distinct()
        every = as_polars_frame(
            groups.groupBy(*(k for k in systems if k in missing)).count().toArrow()
        ).rename({"count": "n"})
    references = (as_polars_frame(found_counts.toArrow()), every)
    hint = _hint(job, rows(run, run_lists), rows(reference, reference_lists))
    warn_on_reference(job, *counts, by_system, references=references, hint=hint)


def _hint(job: AgreementJob, run: DataFrame, reference: DataFrame) -> Hint | None:
    """The hint of the reference's query ids the run misses that match one of the run's
    once their spelling is ignored (where the ids are text), read on the warning's path
    only: the distinct ids each side lacks of the other's, gathered on the driver."""
    query_id = job.options.query_id
    if not is_text(job.run_schema[query_id]):
        return None

    def ids(frame: DataFrame) -> DataFrame:
        return frame.select(F.col(query_id).cast("string").alias(query_id)).distinct()

    def read() -> str | None:
        ran, held = ids(run), ids(reference)
        lacking = ran.join(held, query_id, "left_anti").toArrow()
        missed = held.join(ran, query_id, "left_anti").toArrow()
        return missed_hint(
            as_polars_frame(lacking).lazy(), as_polars_frame(missed).lazy(), query_id
        )

    return read
