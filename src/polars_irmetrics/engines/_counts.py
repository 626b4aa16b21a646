"""The metrics of every row of a recommendation table (``catalog_coverage@k``,
``distributional_coverage@k``, ``gini_index@k``, ``novelty@k``) on the engines.

Both engines split the recommendations by a hash of the user (``query_id``: the
engine's own part number), so that every row of a user reaches one task: a user's
positions and the checks of a list read the user's rows. The history and the item
features travel whole with the job (:mod:`polars_irmetrics.engines._sides`). Each task
gives one row per (``by`` group, item) with the item's count within each cutoff
(:func:`~polars_irmetrics.recsys.counts.part_counts`); one task then adds every part's
counts and computes the metrics from the totals
(:func:`~polars_irmetrics.recsys.counts.merge_part_counts`): whole numbers and exact
sums, so the values are :func:`polars_irmetrics.evaluate`'s to the last bit whatever
the number of parts. That task holds one row per part and item recommended there.

Before any task runs, :func:`prepare_counts` builds both steps on an empty frame of the
run's schema (with the side tables themselves): a missing column, a wrong dtype, an
unknown metric or a bad option is raised there with the library's usual message.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import polars as pl
import pyarrow as pa

from polars_irmetrics.engines._partition import ParsedJob, _empty, _frame, _to_arrow
from polars_irmetrics.errors import InvalidValueError
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.metrics.registry import merges_from_counts, parse_metric_list
from polars_irmetrics.recsys.counts import merge_part_counts, part_counts

__all__ = ["CountsJob", "counts_finish", "counts_part", "counts_route", "prepare_counts"]


def counts_route(
    engine: str, metrics: str | Iterable[str], options: EvalOptions
) -> tuple[tuple[str, ...], bool]:
    """The metric names as a tuple and whether they are merged from the items' counts
    (:func:`~polars_irmetrics.metrics.registry.merges_from_counts`). A call mixing them
    with other metrics is refused by name (two calls). (``partitioned_by=`` is refused
    before, as for every metric of a recommendation table: the options' own check.)

    Examples
    --------
    >>> counts_route("Spark", ["gini_index@5", "novelty@5"], EvalOptions())
    (('gini_index@5', 'novelty@5'), True)
    >>> counts_route("Dask", ["gini_index@5", "surprisal@5"], EvalOptions())
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: metrics 'gini_index@5' and 'surprisal@5' ...
    """
    names = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    requests = parse_metric_list(names)
    counted = [label for label, r in requests if merges_from_counts(r)]
    if not counted:
        return names, False
    others = [label for label, r in requests if not merges_from_counts(r)]
    if others:
        raise InvalidValueError(
            f"metrics {counted[0]!r} and {others[0]!r} merge from different parts on "
            f"{engine} ({counted[0]!r} from the items' counts of every part, "
            f"{others[0]!r} from each user's or query's values): evaluate them in two "
            "calls"
        )
    return names, True


@dataclass(frozen=True)
class CountsJob(ParsedJob):
    """One evaluation of the metrics of the items' counts, resolved on the driver (it
    pickles, the side tables with it): the run's schema, the schemas of a part's rows
    and of the result."""

    metrics: tuple[str, ...]
    options: EvalOptions
    caller: str
    run_schema: pl.Schema
    sides: tuple[tuple[str, pa.Table], ...]
    part_schema: pl.Schema
    result_schema: pl.Schema

    def side_frames(self) -> dict[str, pl.LazyFrame | None]:
        """The side tables as lazy frames, by keyword."""
        return {name: _frame(table).lazy() for name, table in self.sides}


def prepare_counts(
    run: pa.Schema,
    sides: tuple[tuple[str, pa.Table], ...],
    metrics: Iterable[str],
    options: EvalOptions,
    caller: str,
) -> CountsJob:
    """Check everything that can be checked without the run's rows, on the driver: both
    steps built on an empty frame of its schema, with the side tables.

    Examples
    --------
    >>> run = pa.schema([("query_id", pa.string()), ("doc_id", pa.string()),
    ...                  ("rank", pa.int32())])
    >>> history = pa.table({"query_id": ["u"], "doc_id": ["d"]})
    >>> job = prepare_counts(run, (("interactions", history),), ["novelty@5"],
    ...                      EvalOptions(), "x")
    >>> list(job.result_schema), list(job.part_schema)
    (['novelty@5'], ['doc_id', '__irm_count_5'])
    >>> prepare_counts(run, (), ["novelty@5"], EvalOptions(), "x")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: metric 'novelty@5' reads the ...
    """
    given = tuple(metrics)
    requests = parse_metric_list(given)
    options = options.replace(buckets=None, partitioned_by=None)
    empty = _empty(run).lazy()
    frames = {name: _frame(table).lazy() for name, table in sides}
    part = part_counts(empty, requests, frames, options, caller)
    part_schema = part.collect_schema()
    merged = merge_part_counts(
        pl.LazyFrame(schema=part_schema), empty, requests, frames, options, caller
    )
    return CountsJob(
        metrics=given,
        options=options,
        caller=caller,
        run_schema=pl.Schema(_empty(run).schema),
        sides=sides,
        part_schema=part_schema,
        result_schema=merged.collect_schema(),
    )


def counts_part(job: CountsJob, run: pa.Table) -> pa.Table:
    """One part's rows of :func:`~polars_irmetrics.recsys.counts.part_counts` (every row
    of its users; a data error is the library's own exception)."""
    frame = _frame(run).lazy().select(pl.col(c).cast(t) for c, t in job.run_schema.items())
    rows = part_counts(frame, job.requests, job.side_frames(), job.options, job.caller)
    return _to_arrow(rows.collect(), job.part_schema)


def counts_finish(job: CountsJob, parts: pa.Table) -> pa.Table:
    """The result from every part's rows (:func:`counts_part`)."""
    counts = _frame(parts).lazy().select(pl.col(c).cast(t) for c, t in job.part_schema.items())
    empty = pl.LazyFrame(schema=job.run_schema)
    merged = merge_part_counts(
        counts, empty, job.requests, job.side_frames(), job.options, job.caller
    )
    return _to_arrow(merged.collect(), job.result_schema)
