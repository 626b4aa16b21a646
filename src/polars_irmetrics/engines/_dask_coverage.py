"""Dask: the coverage of each part, carried beside its values to the task that warns.

A Dask result is lazy, and its tasks may run in other processes: the coverage warning
cannot be given at the call (nothing is computed yet) nor from a part (each sees its
own queries). So each part's per-query values carry its
:class:`~polars_irmetrics.offline.coverage.Coverage` in rows of their own (one more
column, :data:`COVERAGE`, the coverage pickled; null on the value rows). The means'
task, which gathers every part already, adds them up and warns
(:func:`~polars_irmetrics.engines._partition.warn_coverage`); for per-query values, a
small task gathers the parts' coverage rows only, warns, and each partition is released
after it, without those rows. A task on a ``distributed`` worker warns on the client
that computes the result, once (the event ``distributed.warn`` logs: :func:`emitter`);
the threads of Dask's local schedulers warn in this process. No second pass over the
data: the warning is given by ``compute()``, from what the parts computed.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from typing import Any

import dask.dataframe as dd
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
from dask.delayed import Delayed, delayed

from polars_irmetrics.engines._dask_frames import meta, to_pandas, to_table
from polars_irmetrics.engines._partition import (
    Clicks,
    Job,
    Refusal,
    Relay,
    arrow_schema,
    as_polars_frame,
    clicks_of,
    raise_least,
    summarize_part,
    summarized_segments,
    values_tally,
    warn_coverage,
    warn_on_values,
)
from polars_irmetrics.errors import CoverageWarning, IrmWarning
from polars_irmetrics.ground.validate import INTERNAL
from polars_irmetrics.offline.coverage import Coverage

__all__ = [
    "COVERAGE",
    "carried",
    "carrier_meta",
    "emitter",
    "refusals_in",
    "released",
    "summarized",
]

#: The column of a part's coverage rows (the coverage pickled; null on value rows).
COVERAGE = f"{INTERNAL}coverage"


def _schema(job: Job) -> pa.Schema:
    return arrow_schema(pl.Schema({**job.per_query_schema, COVERAGE: pl.Binary()}))


def carrier_meta(job: Job) -> pd.DataFrame:
    """The ``meta`` of a part's values with their coverage rows."""
    return to_pandas(_schema(job).empty_table())


def carried(
    job: Job, values: pa.Table, found: Sequence[Coverage | Clicks | Refusal]
) -> pd.DataFrame:
    """A part's per-query values (in :attr:`Job.per_query_schema`) and, in rows of their
    own, the coverage its plan gave (or its count of clicks), or the data error it
    refused its rows with (:func:`~polars_irmetrics.engines._partition.held_part`: the
    task that gathers the parts raises the least of their refusals, one machine's)."""
    schema = _schema(job)
    rows = values.append_column(COVERAGE, pa.nulls(values.num_rows, pa.binary()))
    columns = {f.name: pa.nulls(len(found), f.type) for f in schema if f.name != COVERAGE}
    given = pa.array([pickle.dumps(c) for c in found], pa.binary())
    extra = pa.table({**columns, COVERAGE: given})
    return to_pandas(pa.concat_tables([rows.cast(schema), extra.cast(schema)]))


def _split(frame: pd.DataFrame) -> tuple[pa.Table, list[Coverage | Clicks | Refusal]]:
    table = to_table(frame)
    given = table.column(COVERAGE)
    values = table.filter(pc.is_null(given)).drop_columns([COVERAGE])
    found = [pickle.loads(b) for b in table.filter(pc.is_valid(given))[COVERAGE].to_pylist()]
    return values, found


def summarized(
    values: dd.DataFrame,
    job: Job,
    segments: Delayed | None = None,
    before: Delayed | None = None,
    told: Job | Delayed | None = None,
) -> dd.DataFrame:
    """The means, in one partition, whose task warns first (after ``before``, a task
    whose warnings one machine gives first: groups='s ids); with ``segments`` (the
    run's distinct ``by`` keys, where the exposure measures are asked alone), a row
    for each group they score no query of too
    (:func:`~polars_irmetrics.engines._partition.summarized_segments`). ``told``: the
    job its task reads, where that is a task's (``job`` with what the parts tell:
    :attr:`~polars_irmetrics.engines._partition.Job.enums`)."""
    return values.repartition(npartitions=1).map_partitions(
        _summarize,
        job if told is None else told,
        segments,
        before,
        meta=meta(job.means_schema),
        enforce_metadata=False,
    )


def released(
    values: dd.DataFrame,
    job: Job,
    before: Delayed | None = None,
    told: Job | Delayed | None = None,
) -> dd.DataFrame:
    """The per-query values, each partition released once the coverage of every part is
    added up and warned about (a task that reads the coverage rows only, run after
    ``before`` and reading ``told`` as :func:`summarized`'s)."""
    parts = values.to_delayed()
    # each part's coverage and its undefined rnd/rkl/rrd rows (a few): tallies only
    found = [delayed(_found_in)(p, job) for p in parts]
    warned = delayed(_warn_all)(job if told is None else told, before, *found)
    kept = [delayed(_values_of)(p, warned) for p in parts]
    return dd.from_delayed(kept, meta=meta(job.per_query_schema), verify_meta=False)


def refusals_in(frame: pd.DataFrame) -> list[Refusal]:
    """The refusals a part's values carry (:func:`carried`), for
    :func:`~polars_irmetrics.engines._dask_frames.computed`."""
    return [f for f in _split(frame)[1] if isinstance(f, Refusal)]


def _summarize(
    values: pd.DataFrame, job: Job, segments: pd.DataFrame | None, _before: object
) -> pd.DataFrame:
    per_query, found = _split(values)
    raise_least(found)  # the least of the parts' refusals, before any warning
    warn_coverage(job, [c for c in found if isinstance(c, Coverage)], emit=emitter())
    warn_on_values(
        job,
        [values_tally(job, per_query)],
        emit=emitter(IrmWarning),
        summary=True,
        clicks=clicks_of(found),
    )
    means = summarize_part(job, per_query)
    if segments is None:
        return to_pandas(means)
    whole = summarized_segments(
        job, as_polars_frame(means), as_polars_frame(to_table(segments)), emitter(IrmWarning)
    )
    return to_pandas(whole.to_arrow(compat_level=pl.CompatLevel.oldest()))


def _found_in(
    frame: pd.DataFrame, job: Job
) -> tuple[list[Coverage | Clicks | Refusal], tuple[pl.DataFrame, int]]:
    values, coverage = _split(frame)
    return coverage, values_tally(job, values)


def _warn_all(
    job: Job,
    _before: object,
    *found: tuple[list[Coverage | Clicks | Refusal], tuple[pl.DataFrame, int]],
) -> bool:
    told = [c for part, _ in found for c in part]
    raise_least(told)  # the least of the parts' refusals, before any warning
    warn_coverage(job, [c for c in told if isinstance(c, Coverage)], emit=emitter())
    warn_on_values(
        job,
        [undefined for _, undefined in found],
        emit=emitter(IrmWarning),
        clicks=clicks_of(told),
    )
    return True


def _values_of(frame: pd.DataFrame, warned: bool) -> pd.DataFrame:
    return to_pandas(_split(frame)[0])


def emitter(category: type[Warning] = CoverageWarning) -> Any:
    """``None`` (warn here) outside a ``distributed`` worker; on one, a
    :class:`~polars_irmetrics.engines._partition.Relay` that warns on the clients of its
    scheduler (the event ``distributed.warn`` logs, which each client warns about), once:
    as ``category``, or, through :func:`~polars_irmetrics.engines._partition.warned_to`,
    as each warning's own class (an IrmWarning stays one).

    Not ``distributed.warn`` itself: it warns in the worker's process too, which is the
    client's own process on an in-process cluster (``Client(processes=False)``), where
    the warning was then given twice; a worker process's copy only reached its log.
    """
    try:
        from distributed import get_worker
    except ImportError:  # pragma: no cover - Dask without distributed
        return None
    try:
        worker = get_worker()
    except ValueError:  # not in a worker's task: the local schedulers' threads
        return None

    def send(text: str, kind: type[Warning]) -> None:
        # the payload distributed.warn logs, which the clients' "warn" handler warns with
        worker.log_event("warn", {"message": pickle.dumps(text), "category": pickle.dumps(kind)})

    return Relay(send, category)
