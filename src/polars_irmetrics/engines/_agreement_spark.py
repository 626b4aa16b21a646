"""The rank-similarity metrics on Spark (:mod:`polars_irmetrics.engines._agreement`).

The run and the reference (their columns the plan reads) are paired by query hash
(:func:`~polars_irmetrics.engines._spark_pairs.paired_map`: ``repartition`` on the
engine's part number, one ``mapInArrow`` task per partition), each task giving its
queries' values; for the means they go to one partition, where one task averages them.
The whole run's query keys and those the reference holds are counted for the warning
(one Spark action reads every count), once the result is computed (a run a part refuses
warns of nothing); the queries where a correlation is null for its ties are counted by
each task, whose tally an accumulator brings to the driver, which warns after. The
reference's distinct groups (the ``by``/``systems`` keys it shares with the run) are
gathered on the driver first: a part refuses a group of the run only where the whole
reference lacks it.
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
    list holds a document, its documents one per element (:attr:`AgreementJob.lists`).
    Every count is read by one Spark action (:func:`_gathered`)."""
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
    listed = documents(reference, reference_lists, name=f"{INTERNAL}r_doc")
    listed = listed.withColumn(held, F.lit(1))
    docs = documents(run, run_lists)
    counted = docs.join(listed, docs[doc] == listed[f"{INTERNAL}r_doc"], how="left")
    tallies = [F.count(F.lit(1)).alias("total"), F.count(held).alias("held")]
    # every count of one Spark query (each a tagged part of one union), read at once
    parts: dict[str, DataFrame] = {
        "queries": joined.agg(*tallies),
        "docs": counted.agg(F.count(F.lit(1)).alias("n"), F.count(held).alias("held")),
    }
    systems = list(job.options.system_keys)
    if systems:  # each system's counts too: a system the reference mostly lacks is named
        system_docs = documents(run, run_lists, *systems)
        system_docs = system_docs.join(
            listed, system_docs[doc] == listed[f"{INTERNAL}r_doc"], how="left"
        )
        parts["system_queries"] = joined.groupBy(*systems).agg(*tallies)
        parts["system_docs"] = system_docs.groupBy(*systems).agg(*tallies)
    # the reverse: the reference's queries (each group of the run it serves apart), per
    # system, of which the run lists as many as the reference holds of its own
    missing = [k for k in job.keys if k not in on]
    found_systems = [k for k in systems if k in on]
    parts["found"] = found.groupBy(*(f"{INTERNAL}r_{k}" for k in found_systems)).agg(
        F.count(F.lit(1)).alias("n")
    )
    parts["found"] = parts["found"].toDF(*found_systems, "n")
    if missing:
        groups = rows(run, run_lists).select(*missing).distinct()
        present = [k for k in systems if k in missing]
        parts["every"] = groups.groupBy(*present).agg(F.count(F.lit(1)).alias("n"))
    read = _gathered(parts)
    first, docs_row = read["queries"].row(0, named=True), read["docs"].row(0, named=True)
    counts = (int(first["total"]), int(first["held"]), int(docs_row["n"]), int(docs_row["held"]))
    by_system = (read["system_queries"], read["system_docs"]) if systems else None
    references = (read["found"], read.get("every"))
    hint = _hint(job, rows(run, run_lists), rows(reference, reference_lists))
    warn_on_reference(job, *counts, by_system, references=references, hint=hint)


def _gathered(parts: dict[str, DataFrame]) -> dict[str, pl.DataFrame]:
    """Each of ``parts`` (small aggregates) computed by one Spark action: their union,
    each part's columns its own (by position, the others null), its rows tagged by its
    name, read back apart in their own dtypes and names."""
    tag = f"{INTERNAL}part"
    names = list(parts)

    def tagged(index: int, frame: DataFrame) -> DataFrame:
        renamed = frame.toDF(*(f"{INTERNAL}{index}_{i}" for i in range(len(frame.columns))))
        return renamed.select(F.lit(index).alias(tag), "*")

    frames = [tagged(i, parts[name]) for i, name in enumerate(names)]
    union = frames[0]
    for frame in frames[1:]:
        union = union.unionByName(frame, allowMissingColumns=True)
    table = as_polars_frame(union.toArrow())
    return {
        name: table.filter(pl.col(tag) == i).select(
            pl.col(f"{INTERNAL}{i}_{j}").alias(c) for j, c in enumerate(parts[name].columns)
        )
        for i, name in enumerate(names)
    }


def _hint(job: AgreementJob, run: DataFrame, reference: DataFrame) -> Hint | None:
    """The hint of the reference's query ids the run misses that match one of the run's
    once their spelling is ignored (where the ids are text), read on the warning's path
    only: the distinct ids each side lacks of the other's, gathered on the driver by one
    Spark action."""
    query_id = job.options.query_id
    if not is_text(job.run_schema[query_id]):
        return None

    def ids(frame: DataFrame) -> DataFrame:
        return frame.select(F.col(query_id).cast("string").alias(query_id)).distinct()

    def read() -> str | None:
        ran, held = ids(run), ids(reference)
        both = _gathered(
            {
                "lacking": ran.join(held, query_id, "left_anti"),
                "missed": held.join(ran, query_id, "left_anti"),
            }
        )
        return missed_hint(both["lacking"].lazy(), both["missed"].lazy(), query_id)

    return read
