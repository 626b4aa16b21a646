"""Spark: the coverage of each part, gathered on the driver by an accumulator.

Each call of the one plan on a part's queries hands its
:class:`~polars_irmetrics.offline.coverage.Coverage` (a tally per system, and the
hints' data where the tally is suspect: a few rows) to an accumulator, under a key
that names the part (the task's partition, the cogroup's part number, the
``partitioned_by`` task). The key makes it exact: a task run twice (a retry, the
sample Spark takes of the values to sort them) gives the same part the same
coverage, which replaces itself rather than counting twice. Once the job is
computed, the driver adds the parts up and warns as one machine does
(:func:`~polars_irmetrics.engines._partition.warn_coverage`): no second pass over the
data, and no row of the run collected.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import polars as pl
import pyarrow as pa
from pyspark import Accumulator, AccumulatorParam, SparkContext, TaskContext

from polars_irmetrics.engines._partition import (
    Covered,
    Job,
    undefined_of,
    warn_coverage,
    warn_undefined_of,
)
from polars_irmetrics.exposure.rnd import SEGREGATION
from polars_irmetrics.offline.coverage import Coverage, CoverageSink

__all__ = [
    "Parts",
    "coverage_parts",
    "into",
    "task_key",
    "undefined_into",
    "warn_parts",
    "warn_undefined",
]

#: What a part tells the driver: its coverage, or (under ``(_UNDEFINED, key)``) its
#: per-query rows where a rnd/rkl/rrd is undefined, and its count of rows.
Told = Coverage | tuple[pl.DataFrame, int]

#: The accumulator of the parts' coverage (and undefined rows), by key.
Parts = Accumulator[dict[Hashable, Told]]

_UNDEFINED = "undefined"


class _ByKey(AccumulatorParam[dict[Hashable, Told]]):
    """Coverage by part: merged by key (a part seen twice is kept once)."""

    def zero(self, value: dict[Hashable, Told]) -> dict[Hashable, Told]:
        return {}

    def addInPlace(  # noqa: N802 (pyspark's name)
        self, value1: dict[Hashable, Told], value2: dict[Hashable, Told]
    ) -> dict[Hashable, Told]:
        value1.update(value2)
        return value1


def coverage_parts(context: SparkContext) -> Parts:
    """A new, empty accumulator of the parts' coverage."""
    return context.accumulator({}, _ByKey())


def task_key(*more: Any) -> tuple[Any, ...]:
    """The key of a part evaluated by the current task: its partition, and ``more``
    (``None`` outside a task: the driver's own part)."""
    context = TaskContext.get()
    return (None if context is None else context.partitionId(), *more)


def into(parts: Parts, key: Hashable) -> CoverageSink:
    """The sink a part hands its coverage to (in a task or on the driver)."""

    def sink(coverage: Coverage) -> None:
        parts.add({key: coverage})

    return sink


def undefined_into(parts: Parts, key: Hashable, job: Job, per_query: pa.Table) -> pa.Table:
    """``per_query`` (a part's values, as :func:`evaluate_part` gives them), its rows
    where an asked rnd/rkl/rrd is undefined handed to ``parts`` under ``key`` (for
    :func:`warn_undefined`); nothing handed where none is asked for."""
    if any(r.metric.name in SEGREGATION for _, r in job.requests):
        parts.add({(_UNDEFINED, key): undefined_of(job, per_query)})
    return per_query


def warn_parts(job: Covered, parts: Parts) -> None:
    """The coverage warnings of a computed job (:func:`warn_coverage`), on the driver."""
    warn_coverage(job, [v for v in parts.value.values() if isinstance(v, Coverage)])


def warn_undefined(job: Job, parts: Parts) -> None:
    """The warning of a rnd/rkl/rrd undefined on some queries, from the parts'
    :func:`undefined_into` (:func:`warn_undefined_of`), on the driver."""
    found = [v for k, v in parts.value.items() if isinstance(k, tuple) and k[:1] == (_UNDEFINED,)]
    warn_undefined_of(job, [v for v in found if not isinstance(v, Coverage)])
