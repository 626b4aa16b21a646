"""The metrics of the items' counts and Elliot's on Dask
(:mod:`polars_irmetrics.engines._recsys`).

The recommendations (the columns the metrics read; for Elliot's, the test interactions
too) get each row's part number (the engine's polars hash of its user, ``query_id``)
and are shuffled on it into ``partitions`` partitions; each partition gives its rows
(``map_partitions``, the side tables shipped in the job), which are gathered in one
partition and merged into the result. Elliot's parts carry their coverage in rows of
their own (:data:`~polars_irmetrics.engines._dask_coverage.COVERAGE`), which the last
task adds up and warns about on the client that computes the result.
:mod:`polars_irmetrics.engines.dask` passes its own part numbering (this module does not
import it: it imports this one).
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable

import dask.dataframe as dd
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from polars_irmetrics.engines._dask_coverage import COVERAGE, emitter
from polars_irmetrics.engines._dask_frames import after, arrow_of, meta, to_pandas, to_table
from polars_irmetrics.engines._ope_dask import Tag, _shuffled
from polars_irmetrics.engines._partition import judgments_given, warn_coverage, warned_to
from polars_irmetrics.engines._recsys import (
    CountsJob,
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
    unseen_job,
    unseen_part,
)
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.offline.coverage import Coverage

__all__ = ["counts_frame", "elliot_frame", "unseen_gated"]


def counts_frame(
    run: dd.DataFrame,
    metrics: Iterable[str],
    *,
    kind: Kind,
    sides: tuple[tuple[str, pa.Table], ...],
    count: int,
    options: EvalOptions,
    tag: Tag,
) -> dd.DataFrame:
    """:func:`polars_irmetrics.dask.evaluate`'s lazy result for the metrics whose parts
    give rows of ``kind`` (the items' counts, or the users' values of RePlay's novelty;
    module doc)."""
    caller = "polars_irmetrics.dask.evaluate"
    job = prepare_counts(arrow_of(run), sides, metrics, options, caller, kind)
    runs = _shuffled(run[list(job.run_schema)], job.options.query_id, count, tag)
    parts = runs.map_partitions(_part, job=job, meta=meta(job.part_schema), enforce_metadata=False)
    return parts.repartition(npartitions=1).map_partitions(
        _finish, job, meta=meta(job.result_schema), enforce_metadata=False
    )


def _part(run: pd.DataFrame, *, job: CountsJob) -> pd.DataFrame:
    return to_pandas(counts_part(job, to_table(run)))


def _finish(parts: pd.DataFrame, job: CountsJob) -> pd.DataFrame:
    # the warnings of the merged values (a metric NaN...), from a worker's task: handed
    # to the client, each as its own class
    done: list[pa.Table] = []
    warned_to(lambda: done.append(counts_finish(job, to_table(parts))), emitter())
    return to_pandas(done[0])


def elliot_frame(
    run: dd.DataFrame,
    qrels: dd.DataFrame | None,
    metrics: Iterable[str],
    *,
    sides: tuple[tuple[str, pa.Table], ...],
    count: int,
    options: EvalOptions,
    tag: Tag,
) -> dd.DataFrame:
    """:func:`polars_irmetrics.dask.evaluate`'s lazy result for Elliot's metrics
    (module doc)."""
    job = prepare_elliot(
        arrow_of(run),
        None if qrels is None else arrow_of(qrels),
        sides,
        metrics,
        options,
        "polars_irmetrics.dask.evaluate",
    )
    qrels_given = judgments_given(qrels, "Elliot's metrics", "the test interactions")
    user = job.options.query_id
    runs = _shuffled(run[list(job.run_schema)], user, count, tag)
    judged = _shuffled(qrels_given[list(job.qrels_schema)], user, count, tag)
    schema = pl.Schema({**job.part_schema, COVERAGE: pl.Binary()})
    parts = dd.map_partitions(
        _elliot_part,
        runs,
        judged,
        job=job,
        meta=meta(schema),
        enforce_metadata=False,
        align_dataframes=False,
    )
    return parts.repartition(npartitions=1).map_partitions(
        _elliot_finish, job, meta=meta(job.result_schema), enforce_metadata=False
    )


def _elliot_part(run: pd.DataFrame, qrels: pd.DataFrame, *, job: ElliotJob) -> pd.DataFrame:
    """A part's rows and, in rows of their own, the coverage its ranking plan gave."""
    found: list[Coverage] = []
    rows = elliot_part_rows(job, to_table(run), to_table(qrels), found.append)
    rows = rows.append_column(COVERAGE, pa.nulls(rows.num_rows, pa.binary()))
    extra = {f.name: pa.nulls(len(found), f.type) for f in rows.schema if f.name != COVERAGE}
    given = pa.array([pickle.dumps(c) for c in found], pa.binary())
    coverage = pa.table({**extra, COVERAGE: given}, schema=rows.schema)
    return to_pandas(pa.concat_tables([rows, coverage]))


def _elliot_finish(parts: pd.DataFrame, job: ElliotJob) -> pd.DataFrame:
    """The result from every part's rows; the coverage of every part warned about."""
    table = to_table(parts)
    held = table.column(COVERAGE)
    carried = [pickle.loads(v) for v in held.drop_null().to_pylist()]
    warn_coverage(job, carried, emit=emitter())
    rows = table.filter(pc.is_null(held)).drop_columns([COVERAGE])
    # PopRSP's and PopREO's NaN (an IrmWarning), from a worker's task: handed to the
    # client as one (it stayed in a worker process's log)
    done: list[pa.Table] = []
    warned_to(lambda: done.append(elliot_finish(job, rows)), emitter())
    return to_pandas(done[0])


def unseen_gated(
    run: dd.DataFrame,
    sides: tuple[tuple[str, pa.Table], ...],
    metrics: str | Iterable[str],
    options: EvalOptions,
) -> dd.DataFrame:
    """``run``, each partition released once the whole run's recommended items the
    interactions lack have been counted and refused with one machine's error
    (:class:`~polars_irmetrics.engines._recsys.UnseenJob`: each partition's rows of such
    items, merged in one task), so that no part refuses its own users' share first;
    ``run`` itself where no metric refuses such items."""
    job = unseen_job(arrow_of(run), sides, metrics, options)
    if job is None:
        return run
    part_meta = meta(job.part_schema)
    rows = run[list(job.run_schema)].map_partitions(
        _unseen_part, job, meta=part_meta, enforce_metadata=False
    )
    (checked,) = (
        rows.repartition(npartitions=1)
        .map_partitions(_unseen_finish, job, meta=part_meta, enforce_metadata=False)
        .to_delayed()
    )
    return run.map_partitions(after, checked, meta=run._meta)


def _unseen_part(run: pd.DataFrame, job: UnseenJob) -> pd.DataFrame:
    return to_pandas(unseen_part(job, to_table(run)))


def _unseen_finish(parts: pd.DataFrame, job: UnseenJob) -> pd.DataFrame:
    return to_pandas(unseen_finish(job, to_table(parts)))
