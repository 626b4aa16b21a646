"""The metrics of a recommendation table that merge from per-part rows other than the
per-query values, on the engines: the metrics of the items' counts
(``catalog_coverage@k``, ``distributional_coverage@k``, ``gini_index@k``,
``novelty@k``) and Elliot's (``pop_rsp@k``, ``pop_reo@k``, ``aclt@k``, ``epc@k``,
``efd@k``).

Both engines split the tables by a hash of the user (``query_id``: the engine's own
part number), so that every row of a user reaches one task: a user's positions and the
checks of a list read the user's rows. The history and the item features travel whole
with the job (:mod:`polars_irmetrics.engines._sides`). Each task gives its rows: one
per (``by`` group, item) with the item's count within each cutoff
(:func:`~polars_irmetrics.recsys.split.part_rows`), or one per user with the counts
and sums of Elliot's formulas (:func:`~polars_irmetrics.offline.elliot_parts.elliot_part`,
with the queries the ranking plan evaluates, which checks its run and judgments and
whose coverage the engine adds up and warns about once). One task then merges every
part's rows into the metrics (:func:`~polars_irmetrics.recsys.split.merge_rows`,
:func:`~polars_irmetrics.offline.elliot_parts.elliot_merge`): whole numbers and exact
sums, so the values are :func:`polars_irmetrics.evaluate`'s to the last bit whatever
the number of parts. That task holds one row per part and item recommended there (per
user, for Elliot's).

Before any task runs, :func:`prepare_counts` and :func:`prepare_elliot` build both
steps on empty frames of the schemas (with the side tables themselves): a missing
column, a wrong dtype, an unknown metric or a bad option is raised there with the
library's usual message.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass

import polars as pl
import pyarrow as pa

from polars_irmetrics.door.evaluate import evaluate_plan
from polars_irmetrics.engines._partition import ParsedJob, _empty, _frame, _to_arrow
from polars_irmetrics.errors import InvalidValueError, IrmError, IrmWarning
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.metrics.elliot import ELLIOT
from polars_irmetrics.metrics.registry import (
    MetricRequest,
    averages_over_history,
    merges_from_counts,
    parse_metric_list,
)
from polars_irmetrics.offline.coverage import Coverage, CoverageSink
from polars_irmetrics.offline.elliot_parts import elliot_merge, elliot_part
from polars_irmetrics.recsys.checks import refused_check
from polars_irmetrics.recsys.options import RecsysOptions, recsys_options
from polars_irmetrics.recsys.split import (
    Kind,
    merge_rows,
    merge_unseen_items,
    part_rows,
    raise_on_unseen_items,
    unseen_item_check,
    unseen_items,
)

__all__ = [
    "CountsJob",
    "ElliotJob",
    "Kind",
    "UnseenJob",
    "counts_finish",
    "counts_part",
    "counts_route",
    "elliot_finish",
    "elliot_part_rows",
    "elliot_route",
    "is_elliot",
    "prepare_counts",
    "prepare_elliot",
    "unseen_finish",
    "unseen_job",
    "unseen_part",
]


def _kind(request: MetricRequest) -> Kind | None:
    if merges_from_counts(request):
        return "counts"
    if averages_over_history(request):
        return "users"
    return None


def counts_route(
    engine: str, metrics: str | Iterable[str], options: EvalOptions
) -> tuple[tuple[str, ...], Kind | None]:
    """The metric names as a tuple and the kind of rows their parts give: ``"counts"``
    for the metrics of the items' counts
    (:func:`~polars_irmetrics.metrics.registry.merges_from_counts`), ``"users"`` for
    RePlay's ``novelty(kind='replay')``
    (:func:`~polars_irmetrics.metrics.registry.averages_over_history`), ``None`` for
    others. A call mixing a kind with other metrics is refused by name (two calls).
    (``partitioned_by=`` is refused before, as for every metric of a recommendation
    table: the options' own check.)

    Examples
    --------
    >>> counts_route("Spark", ["gini_index@5", "novelty@5"], EvalOptions())
    (('gini_index@5', 'novelty@5'), 'counts')
    >>> counts_route("Spark", ["novelty(kind='replay')@5"], EvalOptions())[1]
    'users'
    >>> counts_route("Dask", ["gini_index@5", "surprisal@5"], EvalOptions())
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: metrics 'gini_index@5' and 'surprisal@5' ...
    """
    names = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    requests = parse_metric_list(names)
    kinds = [(label, _kind(r)) for label, r in requests]
    first = next(((label, kind) for label, kind in kinds if kind is not None), None)
    if first is None:
        return names, None
    label, kind = first
    others = [(other, theirs) for other, theirs in kinds if theirs != kind]
    if others:
        how = {"counts": "the items' counts of every part", "users": "the history's users"}
        other, theirs = others[0]
        raise InvalidValueError(
            f"metrics {label!r} and {other!r} merge from different parts on {engine} "
            f"({label!r} from {how[kind]}, {other!r} from "
            f"{how[theirs] if theirs else 'each user or query'}): evaluate them in two calls"
        )
    return names, kind


@dataclass(frozen=True)
class CountsJob(ParsedJob):
    """One evaluation of the metrics a recommendation table's parts give rows of
    ``kind`` for (:func:`counts_route`), resolved on the driver (it pickles, the side
    tables with it): the run's schema, the schemas of a part's rows and of the
    result."""

    metrics: tuple[str, ...]
    options: EvalOptions
    caller: str
    kind: Kind
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
    kind: Kind = "counts",
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
    part_schema = part_rows(empty, requests, frames, options, caller, kind).collect_schema()
    merged = merge_rows(
        pl.LazyFrame(schema=part_schema), empty, requests, frames, options, caller, kind
    )
    return CountsJob(
        metrics=given,
        options=options,
        caller=caller,
        kind=kind,
        run_schema=pl.Schema(_empty(run).schema),
        sides=sides,
        part_schema=part_schema,
        result_schema=merged.collect_schema(),
    )


def counts_part(job: CountsJob, run: pa.Table) -> pa.Table:
    """One part's rows (every row of its users; a data error is the library's own
    exception)."""
    frame = _frame(run).lazy().select(pl.col(c).cast(t) for c, t in job.run_schema.items())
    rows = part_rows(frame, job.requests, job.side_frames(), job.options, job.caller, job.kind)
    return _to_arrow(rows.collect(), job.part_schema)


def counts_finish(job: CountsJob, parts: pa.Table) -> pa.Table:
    """The result from every part's rows (:func:`counts_part`)."""
    counts = _frame(parts).lazy().select(pl.col(c).cast(t) for c, t in job.part_schema.items())
    empty = pl.LazyFrame(schema=job.run_schema)
    merged = merge_rows(
        counts, empty, job.requests, job.side_frames(), job.options, job.caller, job.kind
    )
    return _to_arrow(merged.collect(), job.result_schema)


def is_elliot(request: MetricRequest) -> bool:
    """Whether a metric is one of Elliot's (:data:`~polars_irmetrics.metrics.elliot.ELLIOT`)."""
    return request.route == "offline" and request.metric.name in ELLIOT


def elliot_route(engine: str, metrics: str | Iterable[str]) -> tuple[tuple[str, ...], bool]:
    """The metric names as a tuple and whether they are Elliot's; a call mixing them with
    other metrics is refused by name (two calls).

    Examples
    --------
    >>> elliot_route("Spark", ["pop_rsp@5", "epc@10"])
    (('pop_rsp@5', 'epc@10'), True)
    >>> elliot_route("Dask", ["aclt@5", "ndcg@5"])
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: metrics 'aclt@5' and 'ndcg@5' merge from ...
    """
    names = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    requests = parse_metric_list(names)
    elliot = [label for label, r in requests if is_elliot(r)]
    if not elliot:
        return names, False
    others = [label for label, r in requests if not is_elliot(r)]
    if others:
        raise InvalidValueError(
            f"metrics {elliot[0]!r} and {others[0]!r} merge from different parts on "
            f"{engine} ({elliot[0]!r} from each user's counts against the whole history, "
            f"{others[0]!r} from each query's values): evaluate them in two calls"
        )
    return names, True


@dataclass(frozen=True)
class ElliotJob(ParsedJob):
    """One evaluation of Elliot's metrics, resolved on the driver (it pickles, the
    history with it): the schemas of the run, the judgments, a part's rows and the
    result, and the coverage of no query (the parts' is added to it)."""

    metrics: tuple[str, ...]
    options: EvalOptions
    run_schema: pl.Schema
    qrels_schema: pl.Schema
    history: pa.Table
    part_schema: pl.Schema
    result_schema: pl.Schema
    coverage: Coverage | None

    def frames(self, run: pa.Table | None, qrels: pa.Table | None) -> tuple[pl.LazyFrame, ...]:
        """A part's run and judgments (empty frames of their schemas where ``None``) and
        the history, lazily, in the schemas the driver checked."""

        def frame(table: pa.Table | None, schema: pl.Schema) -> pl.LazyFrame:
            if table is None:
                return pl.LazyFrame(schema=schema)
            return _frame(table).lazy().select(pl.col(c).cast(t) for c, t in schema.items())

        return (
            frame(run, self.run_schema),
            frame(qrels, self.qrels_schema),
            _frame(self.history).lazy(),
        )


def prepare_elliot(
    run: pa.Schema,
    qrels: pa.Schema | None,
    sides: tuple[tuple[str, pa.Table], ...],
    metrics: Iterable[str],
    options: EvalOptions,
    caller: str,
) -> ElliotJob:
    """Check everything that can be checked without the run's and judgments' rows, on
    the driver: one machine's plan built on empty frames of their schemas, with the
    history (``sides``' ``interactions``), and both steps of the parts.

    Examples
    --------
    >>> run = pa.schema([("query_id", pa.string()), ("doc_id", pa.string()),
    ...                  ("rank", pa.int32())])
    >>> qrels = pa.schema([("query_id", pa.string()), ("doc_id", pa.string()),
    ...                    ("relevance", pa.int64())])
    >>> history = pa.table({"query_id": ["u"], "doc_id": ["d"]})
    >>> job = prepare_elliot(run, qrels, (("interactions", history),), ["epc@5"],
    ...                      EvalOptions(), "x")
    >>> list(job.result_schema)  # the queries evaluated, as beside every metric
    ['num_q', 'epc@5']
    >>> prepare_elliot(run, None, (("interactions", history),), ["epc@5"], EvalOptions(),
    ...                "x")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: metric 'epc@5' reads the test ...
    """
    given = tuple(metrics)
    requests = parse_metric_list(given)
    frames = {name: _frame(table).lazy() for name, table in sides}
    empty_run = _empty(run).lazy()
    tables = {"qrels": None if qrels is None else _empty(qrels).lazy(), **frames}
    found: list[Coverage] = []
    result = evaluate_plan(empty_run, requests, tables, options, caller=caller, warn=found.append)
    result_schema = result.collect_schema()
    with warnings.catch_warnings():
        # the coverage of no query (into the sink), not what the values of no user say:
        # PopRSP's and PopREO's NaN of an empty run would warn of every call at build
        warnings.simplefilter("ignore", IrmWarning)
        result.collect()
    history = dict(sides)["interactions"]  # the plan above refuses the metrics without it
    empty_qrels = tables["qrels"]
    if empty_qrels is None:  # pragma: no cover - the plan above refuses it
        raise InvalidValueError("Elliot's metrics read the test interactions as qrels=")
    rows = elliot_part(empty_run, empty_qrels, frames["interactions"], requests, options)
    return ElliotJob(
        metrics=given,
        options=options,
        run_schema=pl.Schema(_empty(run).schema),
        qrels_schema=pl.Schema(empty_qrels.collect_schema()),
        history=history,
        part_schema=rows.collect_schema(),
        result_schema=result_schema,
        coverage=found[0] if found else None,
    )


def elliot_part_rows(
    job: ElliotJob, run: pa.Table | None, qrels: pa.Table | None, sink: CoverageSink | None
) -> pa.Table:
    """One part's rows (every row of its users, from the run and the judgments): its
    checks raised as one machine raises them, its coverage handed to ``sink``."""
    runs, judged, history = job.frames(run, qrels)
    rows = elliot_part(runs, judged, history, job.requests, job.options, warn=sink or False)
    return _to_arrow(rows.collect(), job.part_schema)


def elliot_finish(job: ElliotJob, parts: pa.Table) -> pa.Table:
    """The result from every part's rows (:func:`elliot_part_rows`)."""
    rows = _frame(parts).lazy().select(pl.col(c).cast(t) for c, t in job.part_schema.items())
    return _to_arrow(elliot_merge(rows, job.requests, job.options).collect(), job.result_schema)


@dataclass(frozen=True)
class UnseenJob:
    """The whole run's count of the recommended items the interactions lack, where a
    metric of a recommendation table refuses them (check ``check``:
    :func:`~polars_irmetrics.recsys.plan.unseen_item_check`). Each part of the engine
    checks its own users, so its refusal counts and names that part's recommendations
    alone: the engine counts the whole run's instead (each part's rows by
    :func:`unseen_part`, merged and refused by :func:`unseen_finish`), with one
    machine's message. It pickles (the interactions with it)."""

    check: str
    options: RecsysOptions
    #: the run's ``by`` keys, user and item columns
    run_schema: pl.Schema
    interactions: pa.Table
    part_schema: pl.Schema

    def matches(self, error: IrmError) -> bool:
        """Whether ``error`` is a part's refusal of this check (its count a part's)."""
        return refused_check(error) == self.check


def unseen_job(
    run: pa.Schema,
    sides: Iterable[tuple[str, pa.Table]],
    metrics: str | Iterable[str],
    options: EvalOptions,
) -> UnseenJob | None:
    """The :class:`UnseenJob` of an engine's call, or ``None`` where no metric refuses a
    recommended item the interactions lack (none reads its popularity or co-occurrence,
    ``unseen_items`` scores or drops such items, or no history was given).

    >>> run = pa.schema([("query_id", pa.string()), ("doc_id", pa.string())])
    >>> history = pa.table({"query_id": ["u"], "doc_id": ["d"]})
    >>> unseen_job(run, [("interactions", history)], ["novelty@5"], EvalOptions()).check
    'no_popularity'
    >>> unseen_job(run, [("interactions", history)], ["mcc@5"], EvalOptions())
    """
    history = dict(sides).get("interactions")
    if history is None:
        return None
    built = recsys_options(options)
    requests = [
        (label, r) for label, r in parse_metric_list(metrics) if r.metric.collection is not None
    ]
    check = unseen_item_check(requests, built)
    if check is None:
        return None
    schema = pl.Schema(_empty(run).schema)
    columns = [*built.by_keys, built.user_id, built.item_id]
    run_schema = pl.Schema({c: schema[c] for c in dict.fromkeys(columns) if c in schema})
    empty = pl.LazyFrame(schema=run_schema)
    part_schema = unseen_items(empty, _frame(history).lazy(), built).collect_schema()
    return UnseenJob(check, built, run_schema, history, part_schema)


def unseen_part(job: UnseenJob, run: pa.Table) -> pa.Table:
    """One part's rows of :class:`UnseenJob` (any share of the run's rows): per (``by``
    group, item) the interactions lack, its first user and its number of rows."""
    frame = _frame(run).lazy().select(pl.col(c).cast(t) for c, t in job.run_schema.items())
    rows = unseen_items(frame, _frame(job.interactions).lazy(), job.options)
    return _to_arrow(rows.collect(), job.part_schema)


def unseen_finish(job: UnseenJob, parts: pa.Table) -> pa.Table:
    """Every part's rows (:func:`unseen_part`) added up and refused with one machine's
    message, the whole run's count and example; no row where none is refused."""
    rows = _frame(parts).lazy().select(pl.col(c).cast(t) for c, t in job.part_schema.items())
    history = _frame(job.interactions).lazy()
    empty = pl.LazyFrame(schema=job.run_schema)
    raise_on_unseen_items(
        merge_unseen_items(rows, job.options), empty, history, job.check, job.options
    )
    return _to_arrow(pl.DataFrame(schema=job.part_schema), job.part_schema)
