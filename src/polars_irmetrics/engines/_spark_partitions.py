"""Spark, ``partitioned_by=``: a run stored hive-partitioned by a hash of the query
(``run/qhash=07/part-0.parquet``), evaluated where it lies, without a shuffle of its rows.

Designs (benchmarks/results_scale.md, the second round): Spark's own file scan packs
files of several values into one partition and splits large files between partitions,
so keeping a query whole through it (``mapInArrow`` over the scan's partitions) needs a
shuffle on the column, which is what ``partitioned_by=None`` already does on a hash of
the query (measured: 5x slower at 5M rows); Spark's bucketed tables need the logs
re-written by ``bucketBy`` into a catalog table (the rewrite is the shuffle, once). Not
built, for those reasons. What is kept:

1. **On the driver**, the run must be a plain read of Parquet files (``spark.read
   .parquet(...)``, a catalog table over files, with columns selected or not): its
   files (``inputFiles``) and hive partition columns are taken from Spark's plan; any
   other plan (a filter, a join) is refused, since the files would not hold its rows.
   The files are grouped by their value of the column: **one task per value**.
2. **Tasks**: a small frame of task numbers, one per Spark partition
   (``spark.range(n, numPartitions=n)``), goes through ``mapInArrow``; each task reads
   its value's files with polars on the executor (the hive columns added from the
   paths, the types cast to Spark's), lazily, and evaluates them with the ordinary plan,
   collected by polars' streaming engine (a part of the rows in memory at a time: the
   largest Python worker at 50M run rows from 700 to 404 MiB). Only
   the task numbers and the per-query values travel through Spark.
3. **Judgments**: files hive-partitioned by the same column are read by the task of
   their value (the values only the judgments hold make tasks of their own, with an
   empty run); any other judgments are collected once on the driver and broadcast to
   every task, which keeps those of its own queries (a semi-join); the judged queries
   that no task retrieves are then evaluated on the driver, against an empty run.
4. **The claim is checked**: each task also returns the distinct query ids of its rows
   (run and judgments), gathered on the driver (one row per query and task, as many as
   the values themselves); a query found in two tasks raises
   :class:`~polars_irmetrics.errors.InvalidValueError` naming the column and the query
   (:func:`~polars_irmetrics.engines._partition.spanning_error`), before any value is
   released.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlparse

import polars as pl
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F  # noqa: N812 (Spark's own spelling)
from pyspark.sql.types import LongType, StructField, StructType

from polars_irmetrics.engines._partition import (
    Job,
    as_polars_frame,
    evaluate_lazy,
    evaluate_part,
    held_part,
    spanning_error,
)
from polars_irmetrics.engines._spark_arrow import arrow_in_session, arrow_of
from polars_irmetrics.engines._spark_coverage import Parts, into, refusals_into, undefined_into
from polars_irmetrics.errors import InvalidValueError
from polars_irmetrics.ground.partitions import (
    check_partition_column,
    hive_values,
    scan_hive_files,
)
from polars_irmetrics.ground.validate import INTERNAL

__all__ = ["BATCH_ROWS", "FileLayout", "per_query_in_partitions", "read_layout"]

#: Rows per Arrow batch a task sends back to the JVM (bounded, whatever the task's size).
BATCH_ROWS = 100_000

_TASK = f"{INTERNAL}task"
_KIND = f"{INTERNAL}kind"  # 0: a per-query value, 1: a query id the task holds


@dataclass(frozen=True)
class FileLayout:
    """A plain read of Parquet files, as Spark's plan holds it: each file with its hive
    partition values (as text), the frame's columns, and its Arrow schema."""

    files: tuple[tuple[str, tuple[tuple[str, str | None], ...]], ...]
    columns: tuple[str, ...]
    partition_columns: tuple[str, ...]
    schema: pa.Schema

    def value_of(self, column: str) -> list[Any]:
        """Each file's value of the hive column ``column``, in its Spark type."""
        dtype = _polars_schema(self.schema)[column]
        texts = [dict(values).get(column) for _, values in self.files]
        values: list[Any] = pl.Series(column, texts, dtype=pl.String).cast(dtype).to_list()
        return values


def read_layout(frame: DataFrame) -> FileLayout | None:
    """The files behind ``frame`` when it is a plain read of Parquet files (its columns
    selected or not), else ``None``."""
    plan = frame._jdf.queryExecution().analyzed()
    while _kind(plan) == "SubqueryAlias":
        plan = plan.child()
    if _kind(plan) == "Project":
        projected = plan.projectList()
        if any(_kind(projected.apply(i)) != "AttributeReference" for i in range(projected.size())):
            return None
        plan = plan.child()
        while _kind(plan) == "SubqueryAlias":
            plan = plan.child()
    if _kind(plan) != "LogicalRelation":
        return None
    relation = plan.relation()
    if _kind(relation) != "HadoopFsRelation" or relation.fileFormat().shortName() != "parquet":
        return None
    partitioning = StructType.fromJson(_json(relation.partitionSchema().json()))
    partition_columns = tuple(partitioning.names)
    files = tuple(
        (path, hive_values(urlparse(path).path, partition_columns))
        for path in sorted(frame.inputFiles())
    )
    return FileLayout(
        files=files,
        columns=tuple(frame.columns),
        partition_columns=partition_columns,
        schema=arrow_of(frame),
    )


def per_query_in_partitions(
    run: DataFrame,
    qrels: DataFrame | None,
    job: Job,
    column: str,
    values_schema: StructType,
    compute: Callable[[DataFrame], DataFrame],
    parts: Parts,
) -> DataFrame:
    """The per-query values (``values_schema``), one task per value of ``column``,
    computed (``compute``: the job run with its progress and errors) and checked; each
    task's coverage, and the driver's, handed to ``parts``."""
    check_partition_column(run.columns, column)
    layout = read_layout(run)
    if layout is None:
        raise InvalidValueError(
            f"partitioned_by={column!r} reads the run's files where they lie, so the run "
            "must be a plain read of Parquet files (spark.read.parquet(...), columns "
            "selected or not); filter or join after evaluating, or drop partitioned_by= "
            "to shuffle the rows by query"
        )
    if column not in layout.partition_columns:
        raise InvalidValueError(
            f"partitioned_by={column!r} is not a hive partition column of the run's files "
            f"(they are partitioned by {list(layout.partition_columns)}); name one, e.g. "
            "'qhash' for run/qhash=07/..., or drop partitioned_by= to shuffle the rows by "
            "query"
        )
    spark = run.sparkSession
    judged = None if qrels is None else read_layout(qrels)
    split = judged is not None and column in judged.partition_columns
    tasks: dict[Any, tuple[list[int], list[int]]] = {}
    for index, value in enumerate(layout.value_of(column)):
        tasks.setdefault(value, ([], []))[0].append(index)
    if split and judged is not None:
        for index, value in enumerate(judged.value_of(column)):
            tasks.setdefault(value, ([], []))[1].append(index)
    groups = _groups(run, job)
    broadcast, flat = None, None
    if qrels is not None and not split:
        flat = _arrow(qrels)
        broadcast = spark.sparkContext.broadcast(_ipc(flat))
    work = _Work(
        job=job,
        run=layout,
        qrels=judged if split else None,
        qrels_schema=None if qrels is None else arrow_of(qrels),
        groups=groups,
        broadcast=broadcast,
        tasks=tuple((tuple(r), tuple(q)) for r, q in tasks.values()),
        parts=parts,
    )
    output = StructType(
        [
            *(StructField(f.name, f.dataType, True) for f in values_schema.fields),
            StructField(_TASK, LongType(), False),
            StructField(_KIND, LongType(), False),
        ]
    )
    arrow = arrow_in_session(output, spark)
    names = values_schema.names

    def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            for number in batch.column(0).to_pylist():
                yield from _task(work, number, names, arrow)

    count = max(len(work.tasks), 1)
    found = spark.range(len(work.tasks), numPartitions=count).mapInArrow(task, output)
    return _checked(found, work, column, names, flat, compute)


@dataclass(frozen=True)
class _Work:
    """Everything a task needs, shipped with the task function (it pickles)."""

    job: Job
    run: FileLayout
    qrels: FileLayout | None
    qrels_schema: pa.Schema | None
    groups: pa.Table | None
    broadcast: Any
    tasks: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]
    parts: Parts


def _task(
    work: _Work, number: int, names: Sequence[str], arrow: pa.Schema
) -> Iterator[pa.RecordBatch]:
    """One task: read its files, evaluate, return the values and its query ids."""
    job = work.job
    query_id = job.options.query_id
    run_files, qrels_files = work.tasks[number]
    # the files are read lazily: the query ids in a pass of that one column, then the
    # evaluation by polars' streaming engine, which holds a part of the rows at a time
    run = _read(work.run, run_files)
    ids = run.select(query_id).unique().collect()
    qrels: pl.LazyFrame | None = None
    if work.qrels is not None:
        qrels = _read(work.qrels, qrels_files)
        if work.groups is not None:
            qrels = qrels.join(as_polars_frame(work.groups).lazy(), how="cross")
    elif work.broadcast is not None:
        everything = as_polars_frame(pa.ipc.open_stream(work.broadcast.value).read_all())
        judged = everything.join(ids, on=query_id, how="semi")
        if work.groups is not None:
            judged = as_polars_frame(_with_groups(judged.to_arrow(), work.groups))
        qrels = judged.lazy()
    if qrels is not None:
        judged_ids = qrels.select(query_id).unique().collect()
        ids = pl.concat([ids, judged_ids], how="vertical_relaxed")
    key = ("task", number)
    # a data error one plan orders is handed to the parts (the driver raises the least)
    refused = refusals_into(work.parts, key)
    sink = into(work.parts, key)
    evaluated = held_part(job.per_query_schema, refused, evaluate_lazy, job, run, qrels, sink)
    values = as_polars_frame(undefined_into(work.parts, key, job, evaluated))
    out = pl.concat(
        [
            values.rename(dict(zip(values.columns, names, strict=True))).with_columns(
                pl.lit(0, pl.Int64).alias(_KIND)
            ),
            ids.unique().with_columns(pl.lit(1, pl.Int64).alias(_KIND)),
        ],
        how="diagonal_relaxed",
    ).with_columns(pl.lit(number, pl.Int64).alias(_TASK))
    table = out.select(arrow.names).to_arrow(compat_level=pl.CompatLevel.oldest())
    yield from table.cast(arrow).to_batches(max_chunksize=BATCH_ROWS)


def _checked(
    found: DataFrame,
    work: _Work,
    column: str,
    names: Sequence[str],
    judged: pa.Table | None,
    compute: Callable[[DataFrame], DataFrame],
) -> DataFrame:
    """The values, computed, once no query is found in two tasks; with the judged
    queries no task retrieves (broadcast judgments ``judged``), evaluated on the driver."""
    found = compute(found)
    job = work.job
    query_id = job.options.query_id
    # one id per query and task, gathered on the driver (as many as the values)
    ids = as_polars_frame(found.filter(F.col(_KIND) == 1).select(query_id, _TASK).toArrow())
    twice = ids.filter(pl.len().over(query_id) > 1).sort(query_id, nulls_last=True)
    if twice.height:
        raise spanning_error(column, query_id, twice[query_id][0])
    values = found.filter(F.col(_KIND) == 0).select(*names)
    if judged is None:
        return values
    everything = as_polars_frame(judged)
    retrieved = ids.select(pl.col(query_id).cast(everything.schema[query_id]))
    rest = everything.join(retrieved, on=query_id, how="anti")
    if not rest.height:
        return values
    empty = work.run.schema.empty_table()
    judged_rest = _with_groups(rest.to_arrow(), work.groups)
    table = evaluate_part(job, empty, judged_rest, into(work.parts, ("driver",)))
    table = undefined_into(work.parts, ("driver",), job, table)
    return values.unionByName(found.sparkSession.createDataFrame(table.rename_columns(names)))


def _groups(run: DataFrame, job: Job) -> pa.Table | None:
    """The run's distinct groups of the ``by`` keys the judgments lack (few rows)."""
    if not job.run_only_by:
        return None
    return _arrow(run.select(*job.run_only_by).distinct())


def _with_groups(qrels: pa.Table, groups: pa.Table | None) -> pa.Table:
    """The judgments crossed with the run's groups, as the one-machine plan does."""
    if groups is None:
        return qrels
    crossed = as_polars_frame(qrels).join(as_polars_frame(groups), how="cross")
    return crossed.to_arrow()


def _read(layout: FileLayout, indexes: Sequence[int]) -> pl.LazyFrame:
    """The rows of these files of ``layout``, its hive columns from the paths, cast to
    Spark's types (no file: an empty frame of the schema), not read yet
    (:func:`~polars_irmetrics.ground.partitions.scan_hive_files`)."""
    files = [(_local(layout.files[i][0]), None, layout.files[i][1]) for i in indexes]
    schema = _polars_schema(layout.schema)
    return scan_hive_files(files, layout.columns, layout.partition_columns, schema)


def _local(path: str) -> str:
    """A path as polars reads it: ``file:`` URIs as local paths, others unchanged."""
    parsed = urlparse(path)
    return unquote(parsed.path) if parsed.scheme == "file" else path


def _polars_schema(schema: pa.Schema) -> pl.Schema:
    return as_polars_frame(schema.empty_table()).schema


def _arrow(frame: DataFrame) -> pa.Table:
    return frame.toArrow()


def _ipc(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def _json(text: str) -> dict[str, Any]:
    return dict(json.loads(text))


def _kind(plan: Any) -> str:
    return str(plan.getClass().getSimpleName())
