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

from pyspark import Accumulator, AccumulatorParam, SparkContext, TaskContext

from polars_irmetrics.engines._partition import Covered, warn_coverage
from polars_irmetrics.offline.coverage import Coverage, CoverageSink

__all__ = ["Parts", "coverage_parts", "into", "task_key", "warn_parts"]

#: The accumulator of the parts' coverage, by key.
Parts = Accumulator[dict[Hashable, Coverage]]


class _ByKey(AccumulatorParam[dict[Hashable, Coverage]]):
    """Coverage by part: merged by key (a part seen twice is kept once)."""

    def zero(self, value: dict[Hashable, Coverage]) -> dict[Hashable, Coverage]:
        return {}

    def addInPlace(  # noqa: N802 (pyspark's name)
        self, value1: dict[Hashable, Coverage], value2: dict[Hashable, Coverage]
    ) -> dict[Hashable, Coverage]:
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


def warn_parts(job: Covered, parts: Parts) -> None:
    """The coverage warnings of a computed job (:func:`warn_coverage`), on the driver."""
    warn_coverage(job, parts.value.values())
