"""``polars_irmetrics.dask.evaluate``: the evaluation plan on Dask DataFrames.

How the work divides (see also :mod:`polars_irmetrics.engines`):

1. **At the call**, on the client: the one-machine plan is built on empty frames of
   the two frames' schemas (:func:`~polars_irmetrics.engines._partition.prepare`):
   a missing column, a wrong dtype, an unknown metric or a bad option raises the
   library's own error before any task is built.
2. **Shuffled by query hash**: each row of the run and of the judgments gets a part
   number (a polars hash of ``query_id``, integers as 64-bit, modulo ``partitions``)
   and both frames are shuffled on it into ``partitions`` partitions: partition *i*
   of the run and of the judgments then hold every row of the same queries. Each
   pair of partitions is turned into Arrow, then polars, and evaluated by the
   ordinary plan (``map_partitions``); one row per query comes back. With ``by`` keys
   the judgments lack, the judgments are crossed with the run's distinct ``by``
   groups first, as the one-machine plan does.
3. **Means**: the per-query values are gathered in one partition, sorted by the keys
   and averaged by the same polars expression as on one machine, so they equal
   :func:`polars_irmetrics.evaluate`'s to the last bit.

The result is a lazy Dask DataFrame with pyarrow-backed columns (no NaN stands for a
null); a data error found in a task (a duplicate document, a null id) is raised by
``compute()`` as the library's own exception with its message. Per-query rows come
in partition order; sort them if the order matters.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import polars as pl
import pyarrow as pa

from polars_irmetrics.engines._partition import (
    PART,
    Job,
    arrow_schema,
    evaluate_part,
    prepare,
    summarize_part,
)
from polars_irmetrics.errors import ColumnTypeError, InvalidValueError, MissingDependencyError
from polars_irmetrics.plan.options import EvalOptions, Order
from polars_irmetrics.plan.validate import Policy

try:
    import dask.dataframe as dd
    import pandas as pd
except ImportError as exc:  # pragma: no cover - the test environment has dask
    raise MissingDependencyError(
        "polars_irmetrics.dask needs Dask's dataframe package: "
        "pip install 'polars_irmetrics[dask]'"
    ) from exc

__all__ = ["evaluate"]


def evaluate(
    run: dd.DataFrame,
    metrics: str | Iterable[str],
    *,
    qrels: dd.DataFrame | None = None,
    by: str | Sequence[str] | None = None,
    per_query: bool = False,
    order: Order = "auto",
    relevance_level: float = 1,
    depth: int | None = None,
    unjudged: Policy = "drop",
    unretrieved: Policy = "zero",
    check_duplicates: bool = True,
    query_id: str = "query_id",
    doc_id: str = "doc_id",
    rank: str = "rank",
    score: str = "score",
    relevance: str = "relevance",
    partitions: int | None = None,
) -> dd.DataFrame:
    """Evaluate a run held in a Dask DataFrame against judgments (lazily).

    The arguments, defaults, metric names, policies, errors and values are those of
    :func:`polars_irmetrics.evaluate` (see there); only the frames are Dask's.

    Parameters
    ----------
    run, qrels
        Dask DataFrames with the columns :func:`polars_irmetrics.evaluate` reads.
    metrics, by, per_query, order, relevance_level, depth, unjudged, unretrieved
        As in :func:`polars_irmetrics.evaluate`.
    check_duplicates, query_id, doc_id, rank, score, relevance
        As in :func:`polars_irmetrics.evaluate`.
    partitions
        How many parts the queries are hashed into (each part is one task's work):
        default the run's number of partitions. A part's rows are held in one worker's
        memory: aim at a few million run rows per part.

    Returns
    -------
    dask.dataframe.DataFrame
        Lazy; ``compute()`` gives a pandas DataFrame with pyarrow-backed columns and
        the columns and values of :func:`polars_irmetrics.evaluate`'s result (per-query
        rows in partition order, means sorted by the ``by`` keys).

    Raises
    ------
    ColumnNotFoundError, ColumnTypeError, UnknownMetricError, MetricParameterError
        Raised by this call, before any task is built.
    InvalidValueError, DuplicateError, QuerySetError
        Found in the data by a task and raised by ``compute()``, with the message
        :func:`polars_irmetrics.evaluate` gives.

    Examples
    --------
    On a cluster's logs (a sketch, not run by the tests, which use a LocalCluster)::

        import dask.dataframe as dd
        import polars_irmetrics.dask as irm_dask
        run = dd.read_parquet("logs/run/")
        qrels = dd.read_parquet("logs/qrels.parquet")
        irm_dask.evaluate(run, ["ndcg@10"], qrels=qrels, by="day").compute()
    """
    _ensure_frame(run, "run")
    if qrels is not None:
        _ensure_frame(qrels, "qrels")
    options = EvalOptions(
        by=by,
        per_query=per_query,
        order=order,
        relevance_level=relevance_level,
        depth=depth,
        unjudged=unjudged,
        unretrieved=unretrieved,
        check_duplicates=check_duplicates,
        query_id=query_id,
        doc_id=doc_id,
        rank=rank,
        score=score,
        relevance=relevance,
    )
    job = prepare(
        _arrow(run._meta), None if qrels is None else _arrow(qrels._meta), metrics, options
    )
    count = _partitions(run, partitions)
    runs = _shuffled(run, job, count)
    values_meta = _meta(job.per_query_schema)
    if qrels is None:
        values = runs.map_partitions(_one_side, job, meta=values_meta, enforce_metadata=False)
    else:
        if job.run_only_by:
            # a cross join (Dask has none): every judgment meets every group, the
            # groups in one partition so that they are broadcast, not shuffled
            one = f"{PART}_one"
            groups = run[list(job.run_only_by)].drop_duplicates().repartition(npartitions=1)
            qrels = (
                qrels.assign(**{one: 1})
                .merge(groups.assign(**{one: 1}), on=one, how="inner")
                .drop(columns=one)
            )
        judged = _shuffled(qrels, job, count)
        values = dd.map_partitions(
            _both_sides,
            runs,
            judged,
            job,
            meta=values_meta,
            enforce_metadata=False,
            align_dataframes=False,
        )
    if per_query:
        return values
    return values.repartition(npartitions=1).map_partitions(
        _summarize, job, meta=_meta(job.means_schema), enforce_metadata=False
    )


def _shuffled(frame: dd.DataFrame, job: Job, count: int) -> dd.DataFrame:
    """``frame`` with its part column, shuffled on it into ``count`` partitions."""
    meta = frame._meta.assign(**{PART: pd.Series([], dtype="int64")})
    tagged = frame.map_partitions(_tag, job.options.query_id, count, meta=meta)
    return tagged.shuffle(on=PART, npartitions=count, ignore_index=True)


def _tag(frame: pd.DataFrame, query_id: str, count: int) -> pd.DataFrame:
    ids = pl.from_arrow(pa.Table.from_pandas(frame[[query_id]], preserve_index=False))
    assert isinstance(ids, pl.DataFrame)  # a Table always converts to a DataFrame
    column = pl.col(query_id)
    column = column.cast(pl.Int64) if ids.schema[query_id].is_integer() else column
    parts = ids.select((column.cast(pl.String).hash(seed=0x1E1A) % count).cast(pl.Int64))
    return frame.assign(**{PART: parts.to_series().to_numpy()})


def _one_side(run: pd.DataFrame, job: Job) -> pd.DataFrame:
    return _pandas(evaluate_part(job, _table(run), None))


def _both_sides(run: pd.DataFrame, qrels: pd.DataFrame, job: Job) -> pd.DataFrame:
    return _pandas(evaluate_part(job, _table(run), _table(qrels)))


def _summarize(values: pd.DataFrame, job: Job) -> pd.DataFrame:
    return _pandas(summarize_part(job, _table(values)))


def _table(frame: pd.DataFrame) -> pa.Table:
    return pa.Table.from_pandas(frame, preserve_index=False)


def _pandas(table: pa.Table) -> pd.DataFrame:
    return table.to_pandas(types_mapper=pd.ArrowDtype)


def _meta(schema: pl.Schema) -> pd.DataFrame:
    return _pandas(arrow_schema(schema).empty_table())


def _arrow(meta: pd.DataFrame) -> pa.Schema:
    """The Arrow schema of a Dask frame, from its empty ``_meta`` (an object column,
    which holds Python strings in Dask, reads as a string column)."""
    schema = pa.Schema.from_pandas(meta, preserve_index=False)
    fields = [f.with_type(pa.string()) if pa.types.is_null(f.type) else f for f in schema]
    return pa.schema(fields)


def _partitions(run: dd.DataFrame, partitions: int | None) -> int:
    if partitions is None:
        return int(run.npartitions)
    if isinstance(partitions, bool) or not isinstance(partitions, int) or partitions < 1:
        raise InvalidValueError(
            f"partitions must be a positive integer or None, got {partitions!r}"
        )
    return partitions


def _ensure_frame(frame: Any, name: str) -> None:
    if not isinstance(frame, dd.DataFrame):
        raise ColumnTypeError(
            f"{name} must be a Dask DataFrame, got {type(frame).__name__}; for polars "
            "frames use polars_irmetrics.evaluate, or convert, e.g. "
            "dd.from_pandas(frame.to_pandas(), npartitions=4)"
        )
