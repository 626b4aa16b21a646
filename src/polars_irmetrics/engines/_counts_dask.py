"""The metrics of the items' counts on Dask (:mod:`polars_irmetrics.engines._counts`).

The recommendations (the columns the metrics read) get each row's part number (the
engine's polars hash of its user, ``query_id``) and are shuffled on it into
``partitions`` partitions; each partition gives its items' counts (``map_partitions``,
the side tables shipped in the job), which are gathered in one partition and added up
into the result. :mod:`polars_irmetrics.engines.dask` passes its own part numbering
(this module does not import it: it imports this one).
"""

from __future__ import annotations

from collections.abc import Iterable

import dask.dataframe as dd
import pandas as pd
import pyarrow as pa

from polars_irmetrics.engines._counts import CountsJob, counts_finish, counts_part, prepare_counts
from polars_irmetrics.engines._dask_frames import arrow_of, meta, to_pandas, to_table
from polars_irmetrics.engines._ope_dask import Tag, _shuffled
from polars_irmetrics.ground.options import EvalOptions

__all__ = ["counts_frame"]


def counts_frame(
    run: dd.DataFrame,
    metrics: Iterable[str],
    *,
    sides: tuple[tuple[str, pa.Table], ...],
    count: int,
    options: EvalOptions,
    tag: Tag,
) -> dd.DataFrame:
    """:func:`polars_irmetrics.dask.evaluate`'s lazy result for the metrics of the
    items' counts (module doc)."""
    job = prepare_counts(arrow_of(run), sides, metrics, options, "polars_irmetrics.dask.evaluate")
    runs = _shuffled(run[list(job.run_schema)], job.options.query_id, count, tag)
    parts = runs.map_partitions(_part, job=job, meta=meta(job.part_schema), enforce_metadata=False)
    return parts.repartition(npartitions=1).map_partitions(
        _finish, job, meta=meta(job.result_schema), enforce_metadata=False
    )


def _part(run: pd.DataFrame, *, job: CountsJob) -> pd.DataFrame:
    return to_pandas(counts_part(job, to_table(run)))


def _finish(parts: pd.DataFrame, job: CountsJob) -> pd.DataFrame:
    return to_pandas(counts_finish(job, to_table(parts)))
