"""Dask, ``partitioned_by=``: a run whose partitions already keep each query whole,
evaluated without a shuffle of its rows.

The caller asserts that no query spans two values of the column (a hive column such as
``bucket=07`` of ``dd.read_parquet("run/")``, a hash of the query). Then:

1. **The values of the column** in each partition of the run: when the run is a plain
   ``dd.read_parquet`` of local files and the column is a hive partition column, they
   are read from the files' paths (:mod:`~polars_irmetrics.engines._dask_files`), with
   no pass over the data. Otherwise a metadata pass, at the call, reads that one column
   of every partition and keeps its distinct values (a few per partition). The
   partitions are the frame's own, as ``run.npartitions`` counts them (one per file for
   ``dd.read_parquet``): Dask's optimizer is not let fuse them, since it would fuse the
   two passes' partitions differently; the column alone is read where Dask's logical
   simplification pushes the projection into the reader (Parquet), else each partition
   is computed whole.
2. **Tasks**: partitions that share a value are grouped into one task (connected
   components; a partition usually holds one value, a value often spans several
   files). The run is never shuffled. When it is a plain read of local Parquet files,
   each task is given the names of its files and reads them itself with polars, lazily,
   into the plan that evaluates them, collected by polars' streaming engine
   (:func:`~polars_irmetrics.engines._partition.evaluate_lazy`): no pandas partition
   is held by a worker, read ahead of its task or sent between workers, and a task's
   memory holds a batch of its rows at a time (measured on 2,000,000-row buckets:
   benchmarks/results_scale.md). Otherwise Dask's partitions are regrouped as they
   are (``to_delayed``) and each task evaluates its pandas rows.
3. **Judgments**: when they are a plain read of local files hive-partitioned by the
   column too, each task reads the files of its values; the files of a value no
   partition of the run holds make a task of their own, against an empty run. When
   they carry the column otherwise, each judgment is tagged with the task of its value
   and only the judgments are shuffled (``set_index`` on the task number, one partition
   per task); the judgments of a value no partition of the run holds are evaluated once
   more, against an empty run. When they lack the column, they are gathered in one
   partition that every task reads, and each task takes the judgments of its own
   queries (a semi-join); the judged queries that no task retrieves are evaluated once,
   against an empty run, so the ``unretrieved=`` policies give
   :func:`polars_irmetrics.evaluate`'s results. With ``by`` keys the judgments lack,
   the run's distinct groups of them (one small partition) are crossed with each
   task's judgments, as the one-machine plan does.
4. **The claim is checked**: every task also returns the distinct query ids of its
   rows (run and judgments), and one small task gathers them before any result is
   released: a query found in two tasks raises
   :class:`~polars_irmetrics.errors.InvalidValueError` naming the column and the query,
   instead of evaluating the query twice on parts of its rows. Only one id per query
   and task travels, as many as the per-query values themselves.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import dask.dataframe as dd
import pandas as pd
import polars as pl
import pyarrow as pa
from dask.base import compute
from dask.delayed import delayed

from polars_irmetrics.engines._dask_coverage import carried, carrier_meta
from polars_irmetrics.engines._dask_files import Files, Piece, read_files, read_layout
from polars_irmetrics.engines._dask_frames import (
    arrow_of,
    to_table,
    with_groups,
)
from polars_irmetrics.engines._partition import (
    PART,
    Clicks,
    Job,
    Refusal,
    as_polars_frame,
    evaluate_lazy,
    held_part,
    spanning_error,
)
from polars_irmetrics.ground.partitions import check_partition_column
from polars_irmetrics.offline.coverage import Coverage

__all__ = ["per_query_in_partitions"]

#: What a task is given of one side: Dask's pandas rows, files to read, or a table.
Source: TypeAlias = pd.DataFrame | Files | pa.Table


def per_query_in_partitions(
    run: dd.DataFrame, qrels: dd.DataFrame | None, job: Job, column: str
) -> dd.DataFrame:
    """The per-query values, one task per group of the run's partitions (module doc)."""
    check_partition_column(list(run.columns), column)
    layout = read_layout(run)
    if layout is not None and column in layout.hive:  # the values from the paths
        values = [list(dict.fromkeys(layout.texts(part, column))) for part in layout.parts]
    else:
        values = _values(run, column)
    groups, task_of = _tasks(values)
    runs: list[Any]
    if layout is not None:  # each task reads its files
        runs = [layout.files([p for m in members for p in layout.parts[m]]) for members in groups]
    else:  # the frame's own partitions (Dask's optimizer would fuse small files)
        parts = run.to_delayed(optimize_graph=False)
        runs = [
            parts[members[0]]
            if len(members) == 1
            else delayed(_concat)(*map(parts.__getitem__, members))
            for members in groups
        ]
    count = len(runs)
    query_id = job.options.query_id
    empty = arrow_of(run).empty_table()
    # each task's share of the judgments (the flat judgments whole, semi-joined there)
    flat = qrels is not None and column not in qrels.columns
    judged = None if qrels is None or flat else read_layout(qrels)
    if judged is not None and column not in judged.hive:
        judged = None
    crossing: Any = None
    shares: list[Any] = [None] * count
    extra: list[Any] = []  # the judgments of values no partition of the run holds
    if qrels is not None and flat:
        everything = with_groups(run, qrels, job).repartition(npartitions=1).to_delayed()[0]
        shares = [everything] * count
    elif qrels is not None and judged is not None:  # each task reads its values' files
        if job.run_only_by:  # the run's groups of the by keys the judgments lack
            groups_of = run[list(job.run_only_by)].drop_duplicates(split_out=1)
            crossing = groups_of.repartition(npartitions=1).to_delayed()[0]
        mine: list[list[Piece]] = [[] for _ in range(count)]
        theirs: dict[str | None, list[Piece]] = {}
        every = [p for part in judged.parts for p in part]
        for piece, text in zip(every, judged.texts(every, column), strict=True):
            if text in task_of:
                mine[task_of[text]].append(piece)
            else:
                theirs.setdefault(text, []).append(piece)
        shares = [judged.files(pieces) for pieces in mine]
        extra = [judged.files(pieces) for pieces in theirs.values()]
    elif qrels is not None:  # one share per task, then those of values the run lacks
        tagged = with_groups(run, qrels, job)
        tagged = tagged.map_partitions(
            _tag,
            column,
            task_of,
            count,
            meta=tagged._meta.assign(**{PART: pd.Series([], dtype="int64")}),
        )
        shuffled = tagged.set_index(PART, divisions=tuple(range(count + 2)), sorted=False)
        *shares, last = shuffled.to_delayed()
        extra = [last]
    tasks = [
        delayed(_task, nout=2)(part, share, crossing, job, flat)
        for part, share in zip(runs, shares, strict=True)
    ]
    tasks += [delayed(_task, nout=2)(empty, share, crossing, job, False) for share in extra]
    outputs = [values for values, _ in tasks]
    ids = [found for _, found in tasks]
    # the ids travel on (to the judged queries no task retrieves) only where read
    retrieved = delayed(_whole)(column, query_id, flat, *ids)
    if flat:  # the judged queries that no task retrieves
        outputs.append(delayed(_unretrieved)(empty, everything, retrieved, job))
    released = [delayed(_after)(values, retrieved) for values in outputs]
    return dd.from_delayed(released, meta=carrier_meta(job), verify_meta=False)


def _values(run: dd.DataFrame, column: str) -> list[list[str | None]]:
    """The distinct values of ``column`` in each partition of the run, as text."""
    values = run[column]
    # Dask's logical simplification reads that one column only (a projection pushed
    # into the reader) without fusing partitions; kept only if the partitions stay
    # the run's own
    try:  # dask's own (not public) constructor of a frame from an expression
        from dask._collections import new_collection
    except ImportError:  # pragma: no cover - another Dask: each partition computed whole
        pass
    else:
        simplified = new_collection(values.expr.simplify())
        if simplified.npartitions == run.npartitions:
            values = simplified
    found = [delayed(_distinct)(part) for part in values.to_delayed(optimize_graph=False)]
    return list(compute(*found))


def _distinct(values: pd.Series) -> list[str | None]:
    series = as_polars_frame(to_table(values.to_frame())).to_series()
    return series.cast(pl.String).unique().to_list()


def _tasks(values: list[list[str | None]]) -> tuple[list[list[int]], dict[str | None, int]]:
    """Partitions grouped so that partitions sharing a value are in one group (connected
    components), groups in the order of their first partition; and each value's group.

    Examples
    --------
    Partition 2 holds values 1 and 3, so it joins partitions 0 (value 1) and 3 (value
    3) in one task; an empty partition is a task of its own, with no rows:

    >>> groups, task_of = _tasks([["1"], ["2"], ["1", "3"], ["3"], ["4"], []])
    >>> groups
    [[0, 2, 3], [1], [4], [5]]
    >>> sorted(task_of.items())
    [('1', 0), ('2', 1), ('3', 0), ('4', 2)]
    """
    parent = list(range(len(values)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[str | None, int] = {}
    for index, held in enumerate(values):
        for value in held:
            other = first.setdefault(value, index)
            a, b = root(index), root(other)
            if a != b:
                parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = {}
    for index in range(len(values)):
        groups.setdefault(root(index), []).append(index)
    number = {top: n for n, top in enumerate(groups)}
    task_of = {value: number[root(index)] for value, index in first.items()}
    return list(groups.values()), task_of


def _concat(*parts: pd.DataFrame) -> pd.DataFrame:
    return pd.concat(parts, ignore_index=True)


def _tag(
    frame: pd.DataFrame, column: str, task_of: dict[str | None, int], count: int
) -> pd.DataFrame:
    """Each judgment's task: that of its value, ``count`` (evaluated against an empty
    run) for a value no partition of the run holds."""
    values = as_polars_frame(to_table(frame[[column]]))
    tasks = (
        values.to_series()
        .cast(pl.String)
        .replace_strict(task_of, default=count, return_dtype=pl.Int64)
    )
    return frame.assign(**{PART: tasks.to_numpy()})


def _task(
    run: Source, qrels: Source | None, crossing: pd.DataFrame | None, job: Job, semi: bool
) -> tuple[pd.DataFrame, pa.Table]:
    """One task's per-query values, and the distinct query ids of its rows."""
    query_id = job.options.query_id
    runs = _lazy(run)
    ids = runs.select(query_id).unique().collect(engine="streaming")
    judged = None if qrels is None else _lazy(qrels)
    if judged is not None:
        if semi:  # the judgments of this task's queries
            judged = judged.join(ids.lazy(), on=query_id, how="semi")
        found = judged.select(query_id).unique().collect(engine="streaming")
        ids = pl.concat([ids, found], how="vertical_relaxed").unique()
        if crossing is not None:  # the run's groups of the by keys the judgments lack
            judged = judged.join(_lazy(crossing), how="cross")
    given: list[Coverage | Clicks | Refusal] = []
    # a data error one plan orders is carried beside the values (the least is raised)
    schema = job.per_query_schema
    evaluated = held_part(schema, given.append, evaluate_lazy, job, runs, judged, given.append)
    values = carried(job, evaluated, given)
    return values, ids.to_arrow()


def _lazy(source: Source) -> pl.LazyFrame:
    """One side of a task as a lazy frame (files are read by the plan that uses them)."""
    if isinstance(source, Files):
        return read_files(source)
    table = source if isinstance(source, pa.Table) else to_table(source)
    return as_polars_frame(table).lazy()


def _unretrieved(
    empty: pa.Table, qrels: pd.DataFrame, retrieved: pa.Table, job: Job
) -> pd.DataFrame:
    """The judged queries no task retrieves, evaluated against an empty run."""
    judged = as_polars_frame(to_table(qrels))
    query_id = job.options.query_id
    ids = as_polars_frame(retrieved)
    rest = judged.join(ids.cast(judged.select(query_id).schema), on=query_id, how="anti")
    found: list[Coverage | Clicks] = []
    return carried(job, evaluate_lazy(job, _lazy(empty), rest.lazy(), found.append), found)


def _whole(column: str, query_id: str, keep: bool, *ids: pa.Table) -> pa.Table | None:
    """Every task's query ids, once each (``keep``; else ``None``, a token of the check
    passed); a query found in two tasks is an error.

    Sorted rather than grouped: a query in two tasks is one next to itself, and a sort
    holds less than a group per query (measured with 2,000,000 ids: 100 MiB against
    480 MiB for a window over the query).

    Examples
    --------
    >>> import pyarrow as pa
    >>> _whole("bucket", "query_id", True, pa.table({"query_id": ["b", "a"]}),
    ...        pa.table({"query_id": ["c"]}))["query_id"].to_pylist()
    ['a', 'b', 'c']
    >>> _whole("bucket", "query_id", False, pa.table({"query_id": ["b", None, "a"]}),
    ...        pa.table({"query_id": [None, "b"]}))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: partitioned_by='bucket': query 'b' has rows ...
    """
    found = pl.concat([as_polars_frame(t) for t in ids], how="vertical_relaxed")
    ordered = found.to_series().sort(nulls_last=True)
    later = ordered.slice(1)
    twice = later.filter(later.eq_missing(ordered.slice(0, max(len(ordered) - 1, 0))))
    if len(twice):
        raise spanning_error(column, query_id, twice[0])
    return ordered.to_frame(query_id).to_arrow() if keep else None


def _after(values: pd.DataFrame, checked: pa.Table | None) -> pd.DataFrame:
    """``values``, released once every task's queries are known to be apart."""
    return values
