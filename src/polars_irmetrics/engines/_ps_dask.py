"""The propensity-scored metrics on Dask (:mod:`polars_irmetrics.engines._ps`).

The run and the judgments (their columns the metrics read) get each row's part number
(the engine's polars hash of its ``query_id``) and are shuffled on it into
``partitions`` partitions; each pair of partitions gives its queries' sums
(``map_partitions``, the propensities shipped in the job), which are gathered in one
partition and finished into the result. :mod:`polars_irmetrics.engines.dask` passes its
own part numbering (this module does not import it: it imports this one).
"""

from __future__ import annotations

from collections.abc import Iterable

import dask.dataframe as dd
import pandas as pd
import pyarrow as pa

from polars_irmetrics.engines._dask_coverage import emitter
from polars_irmetrics.engines._dask_frames import arrow_of, meta, to_pandas, to_table
from polars_irmetrics.engines._ope_dask import Tag, _shuffled
from polars_irmetrics.engines._partition import judgments_given, warned_to
from polars_irmetrics.engines._ps import PsJob, prepare_ps, ps_finish, ps_part
from polars_irmetrics.ground.options import EvalOptions

__all__ = ["ps_frame"]


def ps_frame(
    run: dd.DataFrame,
    metrics: Iterable[str],
    *,
    qrels: dd.DataFrame | None,
    propensities: dd.DataFrame,
    count: int,
    options: EvalOptions,
    tag: Tag,
) -> dd.DataFrame:
    """:func:`polars_irmetrics.dask.evaluate`'s lazy result for the propensity-scored
    metrics (module doc); the propensities are computed now."""
    job = prepare_ps(
        arrow_of(run),
        None if qrels is None else arrow_of(qrels),
        to_table(propensities.compute()),
        metrics,
        options,
        "polars_irmetrics.dask.evaluate",
    )
    qrels_given = judgments_given(qrels, "the propensity-scored metrics")
    query_id = job.options.query_id
    runs = _shuffled(run[list(job.run_schema)], query_id, count, tag)
    judged = _shuffled(qrels_given[list(job.qrels_schema)], query_id, count, tag)
    parts = dd.map_partitions(
        _part,
        runs,
        judged,
        job=job,
        meta=meta(job.part_schema),
        enforce_metadata=False,
        align_dataframes=False,
    )
    return parts.repartition(npartitions=1).map_partitions(
        _finish, job, meta=meta(job.result_schema), enforce_metadata=False
    )


def _part(run: pd.DataFrame, qrels: pd.DataFrame, *, job: PsJob) -> pd.DataFrame:
    return to_pandas(ps_part(job, to_table(run), to_table(qrels)))


def _finish(parts: pd.DataFrame, job: PsJob) -> pd.DataFrame:
    # the coverage warning of the whole run is given here, in a worker's task: handed
    # to the client (distributed.warn), as the other routes' are
    done: list[pa.Table] = []
    warned_to(lambda: done.append(ps_finish(job, to_table(parts))), emitter())
    return to_pandas(done[0])
