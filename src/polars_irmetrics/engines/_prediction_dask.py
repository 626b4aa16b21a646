"""Prediction metrics on Dask (:mod:`polars_irmetrics.engines._prediction`).

The table (and the ``labels``) get each row's part number (a polars hash of its
``query_id``; a table without ``query_id``, which no metric then reads, its position in
its partition modulo ``partitions``) and are shuffled on it into ``partitions``
partitions; each partition (with the same partition of the labels) gives its per-query
values or statistics (``map_partitions``). Means: the statistics are gathered in one
partition and merged. :mod:`polars_irmetrics.engines.dask` passes its own part numbering
(this module does not import it: it imports this one) and persists the result with
``progress=True``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

import dask.dataframe as dd
import numpy as np
import pandas as pd
from dask.delayed import delayed

from polars_irmetrics.engines._dask_coverage import emitter
from polars_irmetrics.engines._dask_frames import after, arrow_of, meta, to_pandas, to_table
from polars_irmetrics.engines._partition import PART, as_polars_frame, warned_to
from polars_irmetrics.engines._prediction import (
    PredictionJob,
    checks_job,
    counts_checks,
    means_job,
    prediction_part,
    prediction_summary,
    prepare_prediction,
    warn_on_summary,
    warn_on_unmatched,
)
from polars_irmetrics.errors import IrmWarning
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.prediction.statistics import NUM_ROWS

__all__ = ["prediction_frame"]

#: ``(partition, query_id, count) -> partition with its part column`` (the engine's).
Tag = Callable[[pd.DataFrame, str, int], pd.DataFrame]


def prediction_frame(
    table: dd.DataFrame,
    metrics: str | Iterable[str],
    *,
    labels: dd.DataFrame | None,
    count: int,
    options: EvalOptions,
    tag: Tag,
) -> dd.DataFrame:
    """:func:`polars_irmetrics.dask.evaluate`'s lazy result for prediction metrics
    (module doc); ``tag`` is the engine's part numbering (both tables are numbered
    alike, so a query's rows and labels meet in one partition)."""
    job = prepare_prediction(
        arrow_of(table), None if labels is None else arrow_of(labels), metrics, options
    )
    query_id = job.options.query_id
    if not job.by_query:  # no query_id column, and no metric reads it: any row, any part
        tag = _by_position
    rows = _shuffled(table, query_id, count, tag)
    truth = None if labels is None else _shuffled(labels, query_id, count, tag)
    # a text label column: its labels over the whole table first; rating and probability
    # metrics: the scale (and r2..., the means); each computed here
    while (first := means_job(job)) is not None:
        scale = _evaluated(rows, truth, first)
        checking = counts_checks(first)
        if checking:  # the data checks in the same graph: no pass of their own later
            checked = _evaluated(rows, truth, checks_job(job)).to_delayed()[0]
            scale = scale.map_partitions(after, checked, meta=scale._meta)
        means = scale.compute()
        job = job.with_means(as_polars_frame(to_table(means)).cast(first.result_schema))
        if checking:
            job = replace(job, checked=True)
    if not job.checked:
        # the data checks counted in every part and raised over the whole table (a
        # part's count is not the table's) before any part of the last pass reads its rows
        checked = _evaluated(rows, truth, checks_job(job)).to_delayed()[0]
        rows = rows.map_partitions(after, checked, meta=rows._meta)
    values = _evaluated(rows, truth, job)
    if labels is None or options.unmatched != "drop":
        return values
    # as one machine warns: the pairs the metrics read against both tables' rows
    sizes = [frame.map_partitions(len).sum().to_delayed() for frame in (table, labels)]
    matched = values[NUM_ROWS].sum().to_delayed()
    warned = delayed(_warn_on_unmatched)(matched, *sizes, job.options)
    return values.map_partitions(after, warned, meta=values._meta)


def _warn_on_unmatched(matched: Any, predictions: Any, labels: Any, options: EvalOptions) -> bool:
    """The task that warns when the labels pair with few predictions, on the client
    that computes the result."""
    return warn_on_unmatched(
        options,
        matched=int(matched),
        predictions=int(predictions),
        labels=int(labels),
        emit=emitter(),
    )


def _evaluated(rows: dd.DataFrame, truth: dd.DataFrame | None, job: PredictionJob) -> dd.DataFrame:
    """Each part's values or statistics, and (means) their summary."""
    part_meta = meta(job.part_schema)
    if truth is None:
        values = rows.map_partitions(_one_table, job, meta=part_meta, enforce_metadata=False)
    else:
        values = dd.map_partitions(
            _two_tables,
            rows,
            truth,
            job,
            meta=part_meta,
            enforce_metadata=False,
            align_dataframes=False,
        )
    if not job.options.per_query or job.stage != "values":  # a first pass: merged too
        values = values.repartition(npartitions=1).map_partitions(
            _summarize, job, meta=meta(job.result_schema), enforce_metadata=False
        )
    return values


def _shuffled(frame: dd.DataFrame, query_id: str, count: int, tag: Tag) -> dd.DataFrame:
    """``frame`` with its part column, shuffled on it into ``count`` partitions."""
    tagged_meta = frame._meta.assign(**{PART: pd.Series([], dtype="int64")})
    tagged = frame.map_partitions(tag, query_id, count, meta=tagged_meta)
    return tagged.shuffle(on=PART, npartitions=count, ignore_index=True)


def _by_position(frame: pd.DataFrame, query_id: str, count: int) -> pd.DataFrame:
    """``frame`` with its part column where it has no ``query_id`` column and no metric
    reads one: each row's position in its partition, modulo ``count``."""
    return frame.assign(**{PART: np.arange(len(frame), dtype=np.int64) % count})


def _one_table(rows: pd.DataFrame, job: PredictionJob) -> pd.DataFrame:
    return to_pandas(prediction_part(job, to_table(rows), None))


def _two_tables(rows: pd.DataFrame, labels: pd.DataFrame, job: PredictionJob) -> pd.DataFrame:
    return to_pandas(prediction_part(job, to_table(rows), to_table(labels)))


def _summarize(statistics: pd.DataFrame, job: PredictionJob) -> pd.DataFrame:
    means = prediction_summary(job, to_table(statistics))
    # the means' warnings, as one machine gives them (on the client, from a worker)
    warned_to(lambda: warn_on_summary(job, means), emit=emitter(IrmWarning))
    return to_pandas(means)
