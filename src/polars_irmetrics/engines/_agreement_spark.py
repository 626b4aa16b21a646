"""The rank-similarity metrics on Spark (:mod:`polars_irmetrics.engines._agreement`).

The run and the reference (their columns the plan reads) are paired by query hash
(:func:`~polars_irmetrics.engines._spark_pairs.paired_map`: ``repartition`` on the
engine's part number, one ``mapInArrow`` task per partition), each task giving its
queries' values; for the means they go to one partition, where one task averages them.
The whole run's query keys and those the reference holds are counted for the warning
by the result's own tasks (:mod:`~polars_irmetrics.engines._agreement_counts`), as are
the queries where a correlation is null for its ties: each task's counts and tally an
accumulator brings to the driver, which warns once the result is computed (a run a part
refuses warns of nothing). The run's documents the reference lists are counted by one
Spark action, and only where no task has shown that it lists one of them (of the run, or
of a system): the warning of documents is given only where it lists none. The
reference's distinct groups (the ``by``/``systems`` keys it shares with the run) are
gathered on the driver first: a part refuses a group of the run only where the whole
reference lacks it; so are the run's distinct groups of the keys the reference lacks
(:func:`_with_run_groups`): a part scores the reference's queries it lacks for every
group of the whole run.
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
    lacked_keys,
    prepare_agreement,
    split_marks,
    warn_on_reference,
    warn_on_tied,
)
from polars_irmetrics.engines._agreement_counts import Counted, merged_counts, part_counts
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
    job = _with_run_groups(job, run)
    query_id = job.options.query_id
    keys = tuple(job.keys)
    values_schema = spark_schema(job.per_query_schema, keys)
    tallies = keyed_parts(run.sparkSession.sparkContext)

    def evaluate(runs: pa.Table, other: pa.Table | None) -> pa.Table:
        values, tally = split_marks(job, carrying(agreement_part, job, runs, other))
        tallies.add({task_key(): (tally, part_counts(job, runs, other))})
        return values

    def warn_tied() -> None:
        told = list(tallies.value.values())
        _warn(job, run, reference, merged_counts(job, (counts for _, counts in told)))
        warn_on_tied(job, (tally for tally, _ in told))

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


def _warn(job: AgreementJob, run: DataFrame, reference: DataFrame, counted: Counted) -> None:
    """The warning of a reference that lacks most of the run's queries, from the counts
    the result's tasks took (:func:`~polars_irmetrics.engines._agreement_counts.part_counts`:
    the whole run's distinct query keys and those the reference holds, per system, the
    reference's, and the run's groups of the ``by`` keys it lacks), counted as one
    machine counts them on the long form: a list-shaped side's queries where their list
    holds a document, its documents one per element (:attr:`AgreementJob.lists`). The
    run's distinct documents and how many the reference lists (for any query), of the
    whole run and per system, are counted by one Spark action, and only where the
    warning of documents can be given: the reference holds some of the run's queries,
    and some system (or the run) has no task whose reference lists one of its documents
    (:attr:`~polars_irmetrics.engines._agreement_counts.Counted.unproven`)."""
    doc = job.options.doc_id
    run_lists, reference_lists = job.lists
    systems = list(job.options.system_keys)

    def rows(frame: DataFrame, lists: bool) -> DataFrame:
        return frame.where(F.size(doc) > 0) if lists else frame

    docs: tuple[int | None, int | None] = (None, None)
    by_docs = None
    if counted.held and counted.unproven:
        docs, by_docs = _documents(job, run, reference)
    by_system = None if counted.by_system is None else (counted.by_system, by_docs)
    hint = _hint(job, rows(run, run_lists), rows(reference, reference_lists))
    warn_on_reference(
        job,
        counted.total,
        counted.held,
        *docs,
        by_system if systems else None,
        references=(counted.found, counted.every),
        hint=hint,
    )


def _documents(
    job: AgreementJob, run: DataFrame, reference: DataFrame
) -> tuple[tuple[int | None, int | None], pl.DataFrame | None]:
    """The run's distinct documents and how many of them the reference lists (for any
    query), and with ``systems=`` each system's (its system keys, ``total`` and
    ``held``), a list-shaped side's documents one per element: read by one Spark action
    (:func:`_gathered`)."""
    held = f"{INTERNAL}held"
    doc = job.options.doc_id
    run_lists, reference_lists = job.lists

    def documents(frame: DataFrame, lists: bool, *others: str, name: str = doc) -> DataFrame:
        column = F.explode(F.col(doc)) if lists else F.col(doc)
        return frame.select(*others, column.alias(name)).distinct()

    listed = documents(reference, reference_lists, name=f"{INTERNAL}r_doc")
    listed = listed.withColumn(held, F.lit(1))
    docs = documents(run, run_lists)
    counted = docs.join(listed, docs[doc] == listed[f"{INTERNAL}r_doc"], how="left")
    parts = {"docs": counted.agg(F.count(F.lit(1)).alias("n"), F.count(held).alias("held"))}
    systems = list(job.options.system_keys)
    if systems:  # each system's counts too: a system the reference mostly lacks is named
        system_docs = documents(run, run_lists, *systems)
        system_docs = system_docs.join(
            listed, system_docs[doc] == listed[f"{INTERNAL}r_doc"], how="left"
        )
        tallies = [F.count(F.lit(1)).alias("total"), F.count(held).alias("held")]
        parts["system_docs"] = system_docs.groupBy(*systems).agg(*tallies)
    read = _gathered(parts)
    row = read["docs"].row(0, named=True)
    return (int(row["n"]), int(row["held"])), read.get("system_docs")


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


def _with_run_groups(job: AgreementJob, run: DataFrame) -> AgreementJob:
    """``job`` with the whole run's distinct groups of the ``by``/``systems`` keys the
    reference lacks (:attr:`~polars_irmetrics.ground.options.EvalOptions.run_groups`,
    gathered on the driver: one Spark action), where it lacks some: one reference
    serves every such group, and a part may hold none of a group's queries, so it
    scores the reference's queries it lacks for every group of the whole run, as one
    machine does. A list-shaped run's groups are those of rows whose list holds a
    document (the long form's)."""
    lacked = lacked_keys(job)
    if not lacked:
        return job
    rows = run.where(F.size(job.options.doc_id) > 0) if job.lists[0] else run
    found = as_polars_frame(rows.select(*lacked).distinct().toArrow())
    options = job.options.replace(run_groups=tuple(found.rows()))
    return dataclasses.replace(job, options=options)
