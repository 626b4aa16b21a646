"""The propensity-scored metrics (``ps_precision@k``, ``ps_ndcg@k``) on the engines.

Both engines split the run and the judgments by a hash of ``query_id`` (the engine's own
part number, as for the ranking metrics), so that every row of a query reaches one task;
``propensities=`` is a small table (one row per document or per position), gathered at
the call and shipped whole to every task with the job (a broadcast). Each task gives one
row per judged query of the numerator and ideal sums of each metric, and the first
failing row of its checks (:meth:`PsPlan.part
<polars_irmetrics.offline.propensity.PsPlan.part>`); one task then finishes every part's
rows as the one plan does (:meth:`PsPlan.finish
<polars_irmetrics.offline.propensity.PsPlan.finish>`): fixed-point sums over the queries,
so the values are :func:`polars_irmetrics.evaluate`'s to the last bit whatever the number
of parts, ``per_query=True`` included (its rows sorted by query, as on one machine), and a
data error names the row one machine names.

Before any task runs, :func:`prepare_ps` builds the one-machine plan on empty frames of
the schemas (with the propensities themselves): a missing column, a wrong dtype, an
unknown metric or a bad option is raised there with the library's usual message.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import polars as pl
import pyarrow as pa

from polars_irmetrics.door.evaluate import evaluate_plan
from polars_irmetrics.engines._partition import (
    ParsedJob,
    _empty,
    _frame,
    _to_arrow,
    check_options_read,
    judgments_given,
)
from polars_irmetrics.errors import InvalidValueError, MetricParameterError
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.metrics.registry import parse_metric_list, split_routes
from polars_irmetrics.offline.propensity import PsPlan, prepare_propensity

if TYPE_CHECKING:
    pass

__all__ = ["PsJob", "prepare_ps", "ps_finish", "ps_part", "ps_route"]

#: The tables an engine's evaluate takes that the propensity-scored metrics do not read.
_NOT_READ = ("queries", "labels", "policy", "reward_model")


def ps_route(
    engine: str,
    metrics: str | Iterable[str],
    options: EvalOptions,
    tables: Mapping[str, object],
    *,
    run: pa.Schema | None = None,
) -> tuple[tuple[str, ...], bool]:
    """The metric names as a tuple and whether they are the propensity-scored metrics,
    the tables checked against them as :func:`polars_irmetrics.evaluate` checks them:
    ``propensities=`` without them, or another table beside them, is refused by name;
    with ``run`` (the run's schema), a ``rank=`` or ``score=`` naming no column of it too
    (:func:`~polars_irmetrics.engines._partition.check_run_columns`).

    Examples
    --------
    >>> ps_route("Spark", "ps_ndcg@5", EvalOptions(), {"propensities": object()})
    (('ps_ndcg@5',), True)
    >>> ps_route("Dask", ["ndcg@5"], EvalOptions(), {"propensities": object()})
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: propensities= is read by the ...
    """
    names = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    ps = "propensity" in split_routes(parse_metric_list(names))
    if not ps:
        if tables.get("propensities") is not None:
            raise MetricParameterError(
                "propensities= is read by the propensity-scored metrics (ps_precision@k, "
                "ps_ndcg@k), and no metric asked for reads it: drop propensities=, or ask "
                "for them (in a call of their own)"
            )
        return names, False
    for name in _NOT_READ:
        if tables.get(name) is not None:
            raise InvalidValueError(
                f"{name}= is not read by the propensity-scored metrics (ps_precision@k, "
                f"ps_ndcg@k): they read the run, qrels= and propensities=; drop {name}="
            )
    # an option none of the metrics reads is refused, as irm.evaluate refuses it
    check_options_read(options, names, labels=False, run=run)
    return names, True


@dataclass(frozen=True)
class PsJob(ParsedJob):
    """One evaluation of the propensity-scored metrics, resolved on the driver (it
    pickles, the propensities with it): the schemas of the two split tables, of a part's
    rows and of the result."""

    metrics: tuple[str, ...]
    options: EvalOptions
    run_schema: pl.Schema
    qrels_schema: pl.Schema
    propensities: pl.DataFrame
    part_schema: pl.Schema
    result_schema: pl.Schema
    #: the plan stays behind too (built again once per process)
    _CACHED: ClassVar[tuple[str, ...]] = ("requests", "plan")

    @functools.cached_property
    def plan(self) -> PsPlan:
        """The two steps of the plan, built once per process on empty frames."""
        return prepare_propensity(
            pl.LazyFrame(schema=self.run_schema),
            self.requests,
            pl.LazyFrame(schema=self.qrels_schema),
            self.propensities.lazy(),
            self.options,
        )


def prepare_ps(
    run: pa.Schema,
    qrels: pa.Schema | None,
    propensities: pa.Table,
    metrics: Iterable[str],
    options: EvalOptions,
    caller: str,
) -> PsJob:
    """Check everything that can be checked without the run and judgments, on the
    driver: the one plan built on empty frames of their schemas, with the propensities
    (raising the library's errors for columns, dtypes, metric names and options).

    Examples
    --------
    >>> run = pa.schema([("query_id", pa.string()), ("doc_id", pa.string()),
    ...                  ("rank", pa.int32())])
    >>> qrels = pa.schema([("query_id", pa.string()), ("doc_id", pa.string()),
    ...                    ("relevance", pa.int64())])
    >>> props = pa.table({"position": [1, 2], "propensity": [1.0, 0.5]})
    >>> job = prepare_ps(run, qrels, props, ["ps_ndcg@2"], EvalOptions(), "x")
    >>> list(job.result_schema)
    ['num_q', 'ps_ndcg@2']
    >>> prepare_ps(run, None, props, ["ps_ndcg@2"], EvalOptions(), "x")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: metric 'ps_ndcg@2' reads relevance ...
    """
    given = tuple(metrics)
    requests = parse_metric_list(given)
    options = options.replace(buckets=None, partitioned_by=None)
    empty_run = _empty(run).lazy()
    empty_qrels = None if qrels is None else _empty(qrels).lazy()
    table = _frame(propensities)
    result = evaluate_plan(
        empty_run,
        requests,
        {"qrels": empty_qrels, "propensities": table.lazy()},
        options,
        caller=caller,
    ).collect_schema()
    judged = judgments_given(empty_qrels, "the propensity-scored metrics")
    plan = prepare_propensity(empty_run, requests, judged, table.lazy(), options)
    return PsJob(
        metrics=given,
        options=options,
        run_schema=plan.run_schema,
        qrels_schema=plan.qrels.collect_schema(),
        propensities=table,
        part_schema=plan.part_schema,
        result_schema=result,
    )


def ps_part(job: PsJob, run: pa.Table, qrels: pa.Table | None) -> pa.Table:
    """One part's rows (every row of its queries, from both tables; a table without rows
    in this part is an empty frame of its schema)."""

    def frame(table: pa.Table | None, schema: pl.Schema) -> pl.LazyFrame:
        if table is None:
            return pl.LazyFrame(schema=schema)
        return _frame(table).lazy().select(pl.col(c).cast(t) for c, t in schema.items())

    ran, judged = frame(run, job.run_schema), frame(qrels, job.qrels_schema)
    rows = job.plan.part(ran, judged).collect()
    # the judged queries whose documents are spelt apart: the finish has no run
    return _to_arrow(job.plan.spelt(rows, ran, judged), job.part_schema)


def ps_finish(job: PsJob, parts: pa.Table) -> pa.Table:
    """The result from every part's rows (:func:`ps_part`), the checks raised."""
    rows = _frame(parts).lazy().select(pl.col(c).cast(t) for c, t in job.part_schema.items())
    return _to_arrow(job.plan.finish(rows).collect(), job.result_schema)
