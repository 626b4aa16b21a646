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
from typing import Any, TypeVar

import polars as pl
import pyarrow as pa
from pyspark import Accumulator, AccumulatorParam, SparkContext, TaskContext

from polars_irmetrics.engines._partition import (
    Clicks,
    Covered,
    Job,
    PartSink,
    Refusal,
    RefusalSink,
    clicks_of,
    tells_values,
    values_tally,
    warn_coverage,
    warn_on_values,
)
from polars_irmetrics.offline.coverage import Coverage

__all__ = [
    "Parts",
    "coverage_parts",
    "into",
    "keyed_parts",
    "refusals_into",
    "task_key",
    "undefined_into",
    "warn_parts",
    "warn_values",
]

_T = TypeVar("_T")

#: What a part tells the driver: its coverage (or, the click metrics', its count of
#: clicks), or (under ``(_UNDEFINED, key)``) its per-query rows where a rnd/rkl/rrd is
#: undefined, and its count of rows, or (under ``(_REFUSED, key)``) the data error it
#: refused its rows with (the driver raises the least of the parts').
Told = Coverage | Clicks | tuple[pl.DataFrame, int] | Refusal

#: The accumulator of the parts' coverage (and undefined rows), by key.
Parts = Accumulator[dict[Hashable, Told]]

_UNDEFINED = "undefined"
_REFUSED = "refused"


class _ByKey(AccumulatorParam[dict[Hashable, _T]]):
    """A tally by part (its coverage, or another count a task hands the driver):
    merged by key (a part seen twice is kept once)."""

    def zero(self, value: dict[Hashable, _T]) -> dict[Hashable, _T]:
        return {}

    def addInPlace(  # noqa: N802 (pyspark's name)
        self, value1: dict[Hashable, _T], value2: dict[Hashable, _T]
    ) -> dict[Hashable, _T]:
        value1.update(value2)
        return value1


def coverage_parts(context: SparkContext) -> Parts:
    """A new, empty accumulator of the parts' coverage."""
    return context.accumulator({}, _ByKey[Told]())


def keyed_parts(context: SparkContext) -> Accumulator[dict[Hashable, Any]]:
    """A new, empty accumulator of a tally per part, by :func:`task_key` (the same
    merge as the coverage's: a task run twice replaces its own tally)."""
    return context.accumulator({}, _ByKey[Any]())


def task_key(*more: Any) -> tuple[Any, ...]:
    """The key of a part evaluated by the current task: its partition, and ``more``
    (``None`` outside a task: the driver's own part)."""
    context = TaskContext.get()
    return (None if context is None else context.partitionId(), *more)


def into(parts: Parts, key: Hashable) -> PartSink:
    """The sink a part hands its coverage (or its count of clicks) to (in a task or on
    the driver)."""

    def sink(coverage: Coverage | Clicks) -> None:
        parts.add({key: coverage})

    return sink


def refusals_into(parts: Parts, key: Hashable) -> RefusalSink:
    """The sink a part hands its refusal to
    (:func:`~polars_irmetrics.engines._partition.held_part`), under a key of its own
    beside its coverage's."""

    def sink(refusal: Refusal) -> None:
        parts.add({(_REFUSED, key): refusal})

    return sink


def undefined_into(parts: Parts, key: Hashable, job: Job, per_query: pa.Table) -> pa.Table:
    """``per_query`` (a part's values, as :func:`evaluate_part` gives them), its rows
    where an asked rnd/rkl/rrd is undefined and its count of rows handed to ``parts``
    under ``key`` (for :func:`warn_values`); nothing handed where no such warning can
    be given (:func:`tells_values`)."""
    if tells_values(job):
        parts.add({(_UNDEFINED, key): values_tally(job, per_query)})
    return per_query


def warn_parts(job: Covered, parts: Parts) -> None:
    """The coverage warnings of a computed job (:func:`warn_coverage`), on the driver."""
    warn_coverage(job, [v for v in parts.value.values() if isinstance(v, Coverage)])


def warn_values(job: Job, parts: Parts, *, summary: bool = False) -> None:
    """The warnings the whole run's values give (a rnd/rkl/rrd undefined on some
    queries, an impression log of no session or of no click; where the result is the
    means, ``summary``, an expected-exposure measure that leaves out queries), from the
    parts' :func:`undefined_into` and counts of clicks (:func:`warn_on_values`), on the
    driver."""
    found = [v for k, v in parts.value.items() if isinstance(k, tuple) and k[:1] == (_UNDEFINED,)]
    tallies = [v for v in found if isinstance(v, tuple)]
    warn_on_values(job, tallies, summary=summary, clicks=clicks_of(parts.value.values()))
