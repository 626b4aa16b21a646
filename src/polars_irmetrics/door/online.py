"""``evaluate_online()``: click metrics of an impression log, per session or per segment.

One lazy plan: the per-session group-by of :mod:`polars_irmetrics.online.sessions`
(every metric and every data check at once), then, unless ``per_session=True``, one
group-by per ``by`` segment that averages the session values, or, for a ratio metric
(CTR), divides the sum of its numerators by the sum of its denominators.

It is :func:`~polars_irmetrics.evaluate` on the log, its keywords translated:
``session_id`` is ``query_id``, ``position`` is ``rank`` and ``per_session`` is
``per_query``; so the same log gives the same numbers, or the same refusal (named in
:func:`~polars_irmetrics.evaluate`'s keywords), through either door.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import overload

import polars as pl

from polars_irmetrics.door.evaluate import evaluate_tables
from polars_irmetrics.ground.buckets import Buckets
from polars_irmetrics.online.columns import check_log_names, refuse_nested

__all__ = ["evaluate_online"]


@overload
def evaluate_online(
    log: pl.DataFrame,
    metrics: str | Iterable[str],
    *,
    by: str | Sequence[str] | None = ...,
    per_session: bool = ...,
    buckets: Buckets = ...,
    spill_dir: str | Path | None = ...,
    progress: bool | None = ...,
    session_id: str = ...,
    position: str = ...,
    clicked: str = ...,
    dwell: str = ...,
    converted: str = ...,
    timestamp: str = ...,
) -> pl.DataFrame: ...


@overload
def evaluate_online(
    log: pl.LazyFrame,
    metrics: str | Iterable[str],
    *,
    by: str | Sequence[str] | None = ...,
    per_session: bool = ...,
    buckets: Buckets = ...,
    spill_dir: str | Path | None = ...,
    progress: bool | None = ...,
    session_id: str = ...,
    position: str = ...,
    clicked: str = ...,
    dwell: str = ...,
    converted: str = ...,
    timestamp: str = ...,
) -> pl.LazyFrame: ...


def evaluate_online(
    log: pl.DataFrame | pl.LazyFrame,
    metrics: str | Iterable[str],
    *,
    by: str | Sequence[str] | None = None,
    per_session: bool = False,
    buckets: Buckets = None,
    spill_dir: str | Path | None = None,
    progress: bool | None = None,
    session_id: str = "session_id",
    position: str = "position",
    clicked: str = "clicked",
    dwell: str = "dwell",
    converted: str = "converted",
    timestamp: str = "timestamp",
) -> pl.DataFrame | pl.LazyFrame:
    """Click metrics of an impression log, per session or per segment, in one plan.

    Parameters
    ----------
    log
        One row per impression (an item shown): ``session_id``, ``position``
        (1 = top) and ``clicked`` (Boolean or 0/1); ``dwell`` (seconds), ``converted``
        and ``timestamp`` where a metric reads them. A click on an impression that was
        not shown (``clicked`` true with a null ``position``) is an error.
    metrics
        Click metric names (see :mod:`polars_irmetrics.metrics.online`), e.g.
        ``["ctr@10", "abandonment", "click_ndcg@10", "sat_click_rate(dwell_threshold=10)"]``;
        result columns are named by the strings as given.
    by
        Segment keys (arm, day, market, device): each combination is evaluated apart.
        A key holds one value per session: the columns the metrics read as their data
        (``position``, ``clicked``, and ``dwell``, ``converted`` or ``timestamp`` where an
        asked metric reads it) are refused, as ``session_id`` is; and, when the plan
        runs, a key whose values vary within a session (a per-impression device or
        time), which would evaluate each part of the session as a session of its own.
        A session is one ``session_id`` value (as without ``by``): one shared by two
        users is one session, which ``by=user_id`` does not split.
    per_session
        ``evaluate``'s ``per_query``. ``True``: one row per session (and segment), one
        column per metric.
        ``False`` (default): one row per segment with ``num_sessions``; a ratio metric
        (``ctr``, ``sat_click_rate``, ``mean_click_position``) is the sum of its
        numerators over the sum of its denominators (``sum(clicks) / sum(impressions)``),
        the others the mean of the session values that are not null.
    buckets
        ``None`` (default): one plan over the whole log, the fastest path while the log
        fits in memory. ``N`` or ``"auto"``: out of core, for logs larger than memory
        (:mod:`polars_irmetrics.ground.buckets`): when collected, one streaming pass writes
        the log to Parquet in N buckets by a hash of ``session_id``, then the buckets are
        evaluated one after the other by the same per-session plan. Peak memory is about
        one bucket's; every row is read twice; the results are identical to ``None``'s.
        ``"auto"`` makes one bucket per 2 million log rows (counting them is free for
        Parquet, one extra pass otherwise). ``"auto-memory"`` (``evaluate``'s default)
        is one plan too: its memory model is that of a run, not measured for a log.
    spill_dir
        Folder for the buckets' temporary files (default: the system's temporary
        folder, ``TMPDIR``); they need up to twice the log's Parquet size on disk
        (written uncompressed, for speed) and are removed when the evaluation ends.
        Ignored without ``buckets``.
    progress
        A bar of the buckets evaluated: ``None`` (default) in a terminal or a notebook
        only, ``True`` on any stream, ``False`` never
        (:mod:`polars_irmetrics.ground.progress`).
    session_id, position, clicked, dwell, converted, timestamp
        Column names in ``log`` (``session_id`` is ``evaluate``'s ``query_id``, ``position``
        its ``rank``; messages name them so, but for a ``position`` column the log lacks,
        named as ``position=``).

    Returns
    -------
    pl.DataFrame or pl.LazyFrame
        The same kind as ``log``; a LazyFrame computes nothing before ``collect()``.
        Rows are sorted by the keys. A metric no session of a segment gives a value
        (``ctr@5`` of impressions all below position 5, ``mean_click_position`` of no
        click) is null there, with an :class:`~polars_irmetrics.errors.IrmWarning`
        naming it and the first such segment.

    Raises
    ------
    ColumnNotFoundError, ColumnTypeError
        A missing column (one a requested metric reads) or a wrong dtype.
    InvalidValueError, DuplicateError
        A null click, a click on an impression with no position, a position below 1
        or held twice in a session, a negative dwell, a null key, a ``by`` key with two
        values in a session (when the plan runs); a ``by`` key naming ``session_id`` or
        a column the metrics read (see ``by``);
        ``buckets`` not a positive integer, ``"auto"`` or ``None``.
    UnknownMetricError, MetricParameterError
        An unknown metric, or one that needs judgments (``ndcg@10``: use
        ``click_ndcg@10``).

    Examples
    --------
    Two sessions of four impressions: ``s1`` clicks positions 2 and 3, ``s2`` nothing.
    CTR@4 is 2 clicks / 8 impressions = 0.25 (not the mean of 0.5 and 0); click MRR is
    (1/2 + 0) / 2 = 0.25, abandonment 1/2; the median click position is that of ``s1``
    alone (2.5), as ``s2`` has no click:

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> log = pl.DataFrame({
    ...     "session_id": ["s1"] * 4 + ["s2"] * 4,
    ...     "position": [1, 2, 3, 4] * 2,
    ...     "clicked": [False, True, True, False] + [False] * 4,
    ... })
    >>> metrics = ["ctr@4", "click_mrr", "abandonment", "median_click_position"]
    >>> irm.evaluate_online(log, metrics)
    shape: (1, 5)
    ┌──────────────┬───────┬───────────┬─────────────┬───────────────────────┐
    │ num_sessions ┆ ctr@4 ┆ click_mrr ┆ abandonment ┆ median_click_position │
    │ ---          ┆ ---   ┆ ---       ┆ ---         ┆ ---                   │
    │ u32          ┆ f64   ┆ f64       ┆ f64         ┆ f64                   │
    ╞══════════════╪═══════╪═══════════╪═════════════╪═══════════════════════╡
    │ 2            ┆ 0.25  ┆ 0.25      ┆ 0.5         ┆ 2.5                   │
    └──────────────┴───────┴───────────┴─────────────┴───────────────────────┘
    >>> irm.evaluate_online(log, metrics, per_session=True)
    shape: (2, 5)
    ┌────────────┬───────┬───────────┬─────────────┬───────────────────────┐
    │ session_id ┆ ctr@4 ┆ click_mrr ┆ abandonment ┆ median_click_position │
    │ ---        ┆ ---   ┆ ---       ┆ ---         ┆ ---                   │
    │ str        ┆ f64   ┆ f64       ┆ f64         ┆ f64                   │
    ╞════════════╪═══════╪═══════════╪═════════════╪═══════════════════════╡
    │ s1         ┆ 0.5   ┆ 0.5       ┆ 0.0         ┆ 2.5                   │
    │ s2         ┆ 0.0   ┆ 0.0       ┆ 1.0         ┆ null                  │
    └────────────┴───────┴───────────┴─────────────┴───────────────────────┘

    Out of core, in two hash buckets of sessions, the values are the same bits (a
    bucket no session hashes to is simply empty):

    >>> irm.evaluate_online(log, metrics, buckets=2).equals(irm.evaluate_online(log, metrics))
    True
    """
    _refuse_nested_keys(log, session_id, by)
    # in this door's keywords, before evaluate's (query_id=, rank=) would name them
    check_log_names({"session_id": session_id, "position": position, "clicked": clicked})
    options = {
        "by": by,
        "per_query": per_session,
        "buckets": buckets,
        "spill_dir": spill_dir,
        "progress": progress,
        "query_id": session_id,
        "rank": position,
        "clicked": clicked,
        "dwell": dwell,
        "converted": converted,
        "timestamp": timestamp,
    }
    return evaluate_tables(
        log,
        metrics,
        {},
        options,
        route="online",
        caller="irm.evaluate_online",
        table_name="log",
        keywords={"rank": ("position", "positions (1 = top)")},
    )


def _refuse_nested_keys(
    log: pl.DataFrame | pl.LazyFrame, session_id: str, by: str | Sequence[str] | None
) -> None:
    """A session id or a segment key of nested dtype (List, Array, Struct) refused as
    :func:`~polars_irmetrics.ab_test` and :func:`~polars_irmetrics.interleaving_test`
    refuse it: a key is one value per row (the others' checks are the plan's)."""
    if not isinstance(log, pl.DataFrame | pl.LazyFrame):
        return  # another frame: converted, then checked, by the plan
    try:
        schema = log.collect_schema()
    except pl.exceptions.PolarsError:
        return  # a plan that cannot be read: the plan names it
    # a by= that is no name or list of names (by=3) is left to the option check, which
    # names it as evaluate's does
    listed = by if isinstance(by, Sequence) else ()
    keys = [by] if isinstance(by, str) else [k for k in listed if isinstance(k, str)]
    refuse_nested(schema, {session_id: "the session id"} | dict.fromkeys(keys, "a segment key"))
