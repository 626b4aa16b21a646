"""The online wing's plan: click metrics of an impression log, per session or per segment.

One lazy plan: the per-session group-by of :mod:`polars_irmetrics.online.sessions`
(every metric and every data check at once), then, unless ``per_session=True``, one
group-by per ``by`` segment that averages the session values, or, for a ratio metric
(CTR), divides the sum of its numerators by the sum of its denominators.

Out of core (``buckets=N`` or ``"auto"``), the per-session plan runs over hash buckets
of sessions on disk (:func:`~polars_irmetrics.ground.buckets.evaluate_in_buckets`, the
machinery of ``evaluate``), and the per-session frames are aggregated as above: every
sum is exact, so the results are those of the one plan to the last bit.

A ``by`` key that varies within a session is refused when the plan runs
(:func:`~polars_irmetrics.online.sessions.raise_on_split_sessions`), over every
session at once: out of core, after the buckets (each holds whole sessions, and only
the sessions of all of them give the count and the first session the one plan names).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import polars as pl

from polars_irmetrics.errors import IrmWarning
from polars_irmetrics.ground.buckets import evaluate_in_buckets
from polars_irmetrics.ground.options import metrics_named
from polars_irmetrics.ground.validate import warn_empty_table, warn_from_plan
from polars_irmetrics.ground.warning_order import warns_in_order
from polars_irmetrics.metrics.online import ClickMetric
from polars_irmetrics.metrics.registry import MetricRequest
from polars_irmetrics.metrics.scope import beyond_fixed, fixed_sum
from polars_irmetrics.online.columns import LogColumns, refuse_data_keys
from polars_irmetrics.online.sessions import (
    CLICKS,
    column_readers,
    denominator,
    numerator,
    raise_on_split_sessions,
    session_plan,
    warn_on_no_click,
)

__all__ = [
    "OnlineBuckets",
    "aggregate",
    "build_online_plan",
    "warn_on_null_segments",
]

#: ``buckets`` of the online plan: one plan (``None``), N buckets, or ``"auto"``.
OnlineBuckets = int | Literal["auto"] | None


def build_online_plan(
    log: pl.LazyFrame,
    requests: list[tuple[str, MetricRequest]],
    columns: LogColumns,
    by_keys: tuple[str, ...],
    *,
    per_session: bool,
    buckets: OnlineBuckets,
    spill_dir: str | Path | None,
    progress: bool | None = None,
    warn: bool = True,
    clicks: bool = False,
    hint: str = "name your columns, e.g. session_id='query_id', clicked='click'",
) -> pl.LazyFrame:
    """The online wing's plan: per-session values of ``requests`` (``per_session``) or
    their aggregates per ``by`` group, in one plan or out of core in ``buckets``.

    A ``by`` key naming a column an asked metric reads as its data (a dwell, a
    conversion, a timestamp: one value per impression, where a key holds one per
    session) is refused (:func:`~polars_irmetrics.online.columns.refuse_data_keys`);
    one whose values vary within a session is refused when the plan runs
    (:func:`~polars_irmetrics.online.sessions.raise_on_split_sessions`). ``warn``:
    whether a log of no session, or of no click, is warned about (not in an engine's
    part); ``clicks`` (``warn=False`` only): each row keeps its count of clicks
    (:data:`~polars_irmetrics.online.sessions.CLICKS`), which an engine's part hands on
    (the engine adds the parts' up and warns of a log of no click as this plan does)."""
    labels = [label for label, _ in requests]
    refuse_data_keys(by_keys, columns, metrics_named(labels), column_readers(requests))
    plan = session_plan(log, requests, columns, by_keys, hint, segments=by_keys)
    sessions = plan.frame
    if buckets is not None:
        schema = plan.frame.collect_schema()

        def evaluate_part(
            part: pl.LazyFrame, _qrels: pl.LazyFrame | None, _groups: pl.LazyFrame | None
        ) -> pl.LazyFrame:
            # a bucket's sessions are a part of them: split sessions are counted below
            return session_plan(
                part, requests, columns, by_keys, hint, segments=by_keys, split_check=False
            ).frame

        sessions = evaluate_in_buckets(
            log,
            None,
            None,
            query_id=columns.session_id,
            buckets=buckets,
            spill_dir=spill_dir,
            evaluate_part=evaluate_part,
            progress=progress,
            schema=schema,
        )
        if by_keys:  # over every bucket's sessions, as the one plan counts them
            identity = plan.identity

            def check(frame: pl.DataFrame) -> pl.DataFrame:
                raise_on_split_sessions(frame, by_keys, identity)
                return frame

            sessions = sessions.map_batches(check, schema=schema)
    # each row's count of clicks (every session's, whatever the metrics): the check of
    # a log with no click at all
    if per_session:
        result = sessions.select(*plan.keys, *labels, CLICKS).sort(plan.keys)
    else:
        result = aggregate(sessions, requests, by_keys, clicks=True)
    if not warn:
        return result if clicks else result.drop(CLICKS)
    counted = not per_session and not by_keys  # one row, of num_sessions 0 when empty
    sessions_of = pl.len() if per_session else pl.col("num_sessions").sum()

    def warn_if_empty(frame: pl.DataFrame) -> pl.DataFrame:
        # the warning every route gives of a table of no row: no session in the log
        if frame.height == 0 or (counted and frame["num_sessions"].sum() == 0):
            warn_empty_table("the impression log")
        else:
            tally = frame.select(sessions_of.alias("n"), pl.col(CLICKS).sum().alias("c"))
            if tally["c"].item() == 0:
                warn_on_no_click(columns.clicked, tally["n"].item(), [columns.session_id])
            if not per_session:
                warn_on_null_segments(frame, labels, by_keys)
        return frame.drop(CLICKS)

    schema = result.drop(CLICKS).collect_schema()
    return result.map_batches(warns_in_order(warn_if_empty), schema=schema)


def warn_on_null_segments(frame: pl.DataFrame, labels: Sequence[str], by: Sequence[str]) -> None:
    """An :class:`~polars_irmetrics.errors.IrmWarning` for each metric that is null in a
    segment of sessions (:func:`aggregate`'s ``frame``): no session gives it a value (a
    ratio's denominators add up to 0: ``ctr@5`` of impressions all below position 5,
    ``mean_click_position`` of no click), said, never a silent null beside the others'
    values (:func:`~polars_irmetrics.ab_test` refuses such an arm).

    Examples
    --------
    >>> import warnings
    >>> frame = pl.DataFrame({"num_sessions": [2], "ctr@5": [None], "ctr": [0.25]})
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_on_null_segments(frame, ["ctr@5", "ctr"], [])
    >>> str(caught[0].message)[:59]
    "'ctr@5' is null: none of the 2 sessions gives it a value (a"
    """
    sessions = pl.col("num_sessions") > 0
    for label in labels:
        empty = frame.filter(sessions & pl.col(label).is_null())
        if not empty.height:
            continue
        row = empty.row(0, named=True)
        if by:
            segment = ", ".join(f"{key}={row[key]!r}" for key in by)
            count = row["num_sessions"]
            where = f" in {empty.height} segment(s) (first: {segment}, {count} sessions)"
            sessions_said = "none of its sessions"
        else:
            where = ""
            sessions_said = f"none of the {row['num_sessions']} sessions"
        warn_from_plan(
            f"{label!r} is null{where}: {sessions_said} gives it a value (a rate over "
            "the top k has no impression at positions <= k, a rate or a position over "
            "the clicks no click), never a made-up 0: check the log's positions (1 = "
            "top) and clicks, or leave the metric out",
            IrmWarning,
        )


def _summary(label: str, request: MetricRequest) -> pl.Expr:
    metric = request.metric
    if isinstance(metric, ClickMetric) and metric.ratio is not None:
        num = pl.col(numerator(label)).sum()
        den = pl.col(denominator(label)).sum()
        return pl.when(den > 0).then(num / den).alias(label)
    # a fixed-point sum (exact, so the same in any row order and on any engine), unless a
    # value is too large for it
    values = pl.col(label).cast(pl.Float64).drop_nulls()
    total = pl.when(beyond_fixed(values).any()).then(values.sum()).otherwise(fixed_sum(values))
    # no session with a value (an empty log): null, as a ratio metric's 0/0 is, not NaN
    return pl.when(values.count() > 0).then(total / values.count()).alias(label)


def aggregate(
    sessions: pl.LazyFrame,
    requests: Sequence[tuple[str, MetricRequest]],
    by: Sequence[str],
    *,
    clicks: bool = False,
) -> pl.LazyFrame:
    """One row per ``by`` group of the per-session frame: ``num_sessions`` and each
    metric (a ratio of sums for a ratio metric, else the mean of the non-null values);
    ``clicks``: and the group's count of clicks (:data:`~.sessions.CLICKS`).

    Every sum is exact (integer counts, or a fixed-point sum of the session values), so
    the result is the same to the last bit on any layout of the log and either engine.
    """
    exprs = [pl.len().alias("num_sessions"), *(_summary(lab, req) for lab, req in requests)]
    if clicks:
        exprs.append(pl.col(CLICKS).sum())
    if not by:
        return sessions.select(exprs)
    return sessions.group_by(list(by)).agg(exprs).sort(list(by))
