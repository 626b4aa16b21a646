"""Out of core without re-writing: a run already partitioned so that no query spans two
partitions, evaluated partition by partition.

Data lakes often store logs hive-partitioned by a hash of the query
(``run/qhash=07/part-0.parquet``). With ``evaluate(..., partitioned_by="qhash")``,
when the evaluation must go out of core (``buckets="auto-memory"`` finds the run
larger than ``memory_limit``, or ``buckets=N`` / ``"auto"`` is given), each value of
that column is evaluated in turn: a filter on a hive column reads only that
partition's files (polars prunes the others), so nothing is written to disk and every
row is read once, where :mod:`polars_irmetrics.ground.buckets` reads it twice.

The judgments follow the same partitions when they carry the column too (those of a
value no partition of the run holds are evaluated last, against an empty run);
otherwise each partition takes the judgments of its own queries (a semi-join), and the
judged queries that no partition of the run holds are evaluated last, against an empty
run (they are the unretrieved ones). No query may span two partitions (in the run, or
in the run and the judgments where these carry the column): it would be evaluated with
part of its rows in each. Each partition's distinct queries are read in the pass that
evaluates it (one scan for both), and a query found under two values is refused
(:func:`spanning_error`, the engines' error too) once every partition is read.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from urllib.parse import unquote

import polars as pl
import pyarrow.parquet as pq

from polars_irmetrics.errors import ColumnNotFoundError, InvalidValueError
from polars_irmetrics.ground.buckets import EvaluatePart
from polars_irmetrics.ground.progress import track
from polars_irmetrics.ground.validate import UnplacedParts

__all__ = [
    "check_partition_column",
    "evaluate_in_partitions",
    "hive_values",
    "scan_hive_files",
    "spanning_error",
]

#: The folder name Spark and Hive write for a null value (``bucket=__HIVE_DEFAULT_PARTITION__``)
_DEFAULT = "__HIVE_DEFAULT_PARTITION__"


def check_partition_column(columns: Collection[str], column: str | None) -> None:
    """Raise :class:`ColumnNotFoundError` unless ``column`` (when given) is one of the
    run's ``columns`` (those of a polars schema, or of a Dask frame)."""
    if column is not None and column not in columns:
        raise ColumnNotFoundError(
            f"partitioned_by={column!r} is not a column of the run; name its hive partition "
            "column (e.g. partitioned_by='qhash' for run/qhash=07/...), or pass "
            "partitioned_by=None"
        )


def spanning_error(column: str, query_id: str, query: object) -> InvalidValueError:
    """The error for a ``partitioned_by=`` claim found false: ``query`` has rows under
    two values of ``column`` (one machine and both engines raise it).

    Examples
    --------
    >>> print(spanning_error("qhash", "query_id", 7))  # doctest: +ELLIPSIS
    partitioned_by='qhash': query 7 has rows under more than one value of 'qhash' ...
    """
    return InvalidValueError(
        f"partitioned_by={column!r}: query {query!r} has rows under more than one value of "
        f"{column!r} (in the run or the judgments), so the partitions do not keep each query "
        f"whole; partition by a function of {query_id!r} alone, or drop partitioned_by= to "
        "shuffle the rows by query"
    )


def evaluate_in_partitions(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame | None,
    groups: pl.LazyFrame | None,
    *,
    query_id: str,
    column: str,
    evaluate_part: EvaluatePart,
    schema: pl.Schema,
    progress: bool | None = None,
) -> pl.LazyFrame:
    """Per-query results of ``evaluate_part`` over the run's partitions (module doc).

    Nothing runs until the returned LazyFrame is collected. A bar counts the partitions
    evaluated (``progress``: :class:`~polars_irmetrics.ground.progress.Progress`'s
    ``enabled``).

    Examples
    --------
    Two partitions, the judgments without the column; ``q3`` is judged but retrieved
    in no partition, so it is evaluated last, against an empty run:

    >>> import polars as pl
    >>> run = pl.LazyFrame({"part": [0, 0, 1], "query_id": ["q1", "q1", "q2"]})
    >>> qrels = pl.LazyFrame({"query_id": ["q1", "q2", "q3"]})
    >>> def count(run, qrels, groups):
    ...     return pl.LazyFrame({"runs": [run.select(pl.len()).collect().item()],
    ...                          "judged": [qrels.select(pl.len()).collect().item()]})
    >>> evaluate_in_partitions(run, qrels, None, query_id="query_id", column="part",
    ...     evaluate_part=count, schema=pl.Schema({"runs": pl.UInt32, "judged": pl.UInt32})
    ... ).collect().rows()
    [(2, 1), (1, 1), (0, 1)]
    """

    def run_partitions() -> pl.DataFrame:
        values = run.select(pl.col(column).unique().sort()).collect().to_series()
        qrels_split = qrels is not None and column in qrels.collect_schema()
        all_groups = None if groups is None else groups.collect().lazy()
        parts, placed = [], []
        # a judged query some by-group did not retrieve, refused by a partition, is
        # refused once with every partition's (and the rest's), as one plan does
        refusals = UnplacedParts()
        for value in track(values, "partitions", len(values), enabled=progress):
            # null is a value of its own (Hive's default partition, a null in memory)
            part = run.filter(pl.col(column).eq_missing(value))
            if qrels is None:
                judged = None
            elif qrels_split:
                judged = qrels.filter(pl.col(column).eq_missing(value))
            else:
                judged = qrels.join(part.select(query_id).unique(), on=query_id, how="semi")
            # the partition's queries from the scan that evaluates it (one read of it)
            queries = part.select(
                pl.col(query_id).unique(), pl.lit(value, values.dtype).alias(column)
            )
            with refusals.part():
                out, held = pl.collect_all([evaluate_part(part, judged, all_groups), queries])
                parts.append(out)
                placed.append(held)
        if refusals.refused and qrels is not None:  # the rest's judged queries too
            with refusals.part():
                evaluate_part(
                    run.clear(), _rest(run, qrels, values, query_id, column), all_groups
                ).collect()
        refusals.raise_together()
        if qrels_split and qrels is not None:  # a query judged under another value
            placed.append(qrels.select(query_id, column).unique().collect())
        _refuse_spanning(placed, query_id, column)
        if qrels is not None:
            rest = _rest(run, qrels, values, query_id, column)
            parts.append(evaluate_part(run.clear(), rest, all_groups).collect())
        return pl.concat([p.cast(schema) for p in parts], how="vertical")

    return pl.defer(run_partitions, schema=schema)


def _rest(
    run: pl.LazyFrame, qrels: pl.LazyFrame, values: pl.Series, query_id: str, column: str
) -> pl.LazyFrame:
    """The judgments no partition of the run evaluates: those of the values no partition
    holds, where the judgments carry the column, else those of the queries the run does
    not retrieve."""
    if column in qrels.collect_schema():
        held = values.cast(pl.String).implode()
        return qrels.filter(~pl.col(column).cast(pl.String).is_in(held, nulls_equal=True))
    return qrels.join(run.select(query_id).unique(), on=query_id, how="anti")


def _refuse_spanning(placed: list[pl.DataFrame], query_id: str, column: str) -> None:
    """Raise :func:`spanning_error` for the first query (in order) that ``placed`` (its
    frames of distinct (query, partition value) pairs) puts under two values."""
    if not placed:
        return
    pairs = pl.concat(placed, how="vertical_relaxed").unique()
    twice = pairs.filter(pl.col(query_id).is_duplicated()).get_column(query_id).sort()
    if twice.len():
        raise spanning_error(column, query_id, twice[0])


def hive_values(path: str, columns: Sequence[str]) -> tuple[tuple[str, str | None], ...]:
    """The hive values of ``columns`` in a file's local ``path`` (``.../bucket=07/...``),
    as text, in the order of the path (null for Hive's default partition).

    Examples
    --------
    >>> hive_values("/data/run/day=2024-01-02/bucket=07/part.parquet", ["bucket"])
    (('bucket', '07'),)
    >>> hive_values("/run/bucket=__HIVE_DEFAULT_PARTITION__/a.parquet", ["bucket"])
    (('bucket', None),)
    """
    found: dict[str, str | None] = {}
    for segment in path.split("/")[:-1]:
        name, equals, text = segment.partition("=")
        name = unquote(name)
        if equals and name in columns:
            value = unquote(text)
            found[name] = None if value == _DEFAULT else value
    return tuple(found.items())


#: One file to read: its local path, the row groups to read of it (``None``: all), and
#: its hive values as text (:func:`hive_values`).
HiveFile = tuple[str, Sequence[int] | None, Sequence[tuple[str, str | None]]]


def scan_hive_files(
    files: Sequence[HiveFile], columns: Sequence[str], hive: Sequence[str], schema: pl.Schema
) -> pl.LazyFrame:
    """The rows of ``files`` as a frame of ``columns`` holds them (an engine's task
    reading its partition's files): the data columns from each file, the ``hive``
    columns from its path (null where the path lacks one), every column cast to
    ``schema``; no file: an empty frame of the schema.

    Lazy: the plan that evaluates them reads the files (whole files by polars' scan,
    some row groups by pyarrow).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp()) / "bucket=07"
    >>> folder.mkdir()
    >>> pl.DataFrame({"query_id": ["q1"]}).write_parquet(folder / "part.parquet")
    >>> path = str(folder / "part.parquet")
    >>> schema = pl.Schema({"query_id": pl.String, "bucket": pl.Int64})
    >>> files = [(path, None, hive_values(path, ["bucket"]))]
    >>> scan_hive_files(files, ["query_id", "bucket"], ["bucket"], schema).collect().row(0)
    ('q1', 7)
    """
    data = [c for c in columns if c not in hive]
    frames = []
    for path, row_groups, values in files:
        if row_groups is None:
            lazy = pl.scan_parquet(path, hive_partitioning=False)
        else:
            table = pq.ParquetFile(path).read_row_groups(list(row_groups), data)
            lazy = pl.DataFrame(table).lazy()
        texts = dict(values)
        literals = [
            pl.lit(texts.get(name), pl.String).cast(schema[name]).alias(name)
            for name in hive
            if name in schema
        ]
        frames.append(lazy.select(data).with_columns(literals).select(columns))
    if not frames:
        return pl.LazyFrame(schema=schema)
    return pl.concat([frame.cast(schema) for frame in frames], how="vertical")
