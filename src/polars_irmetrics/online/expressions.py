"""``click_metric()``: one click metric as a polars expression, for your own group-by."""

from __future__ import annotations

import polars as pl

from polars_irmetrics.errors import MetricParameterError
from polars_irmetrics.ground.deferred import Need, checked
from polars_irmetrics.ground.options import check_column_name
from polars_irmetrics.metrics.online import ClickScope
from polars_irmetrics.metrics.registry import parse_metric
from polars_irmetrics.online.sessions import refuse_unread_column

__all__ = ["click_metric"]


def _expr(column: str | pl.Expr) -> pl.Expr:
    return pl.col(column) if isinstance(column, str) else column


def _invalid(
    position: str, clicked: str, optional: dict[str, str | pl.Expr], used: set[str]
) -> pl.Expr:
    """True where the session holds a value :func:`polars_irmetrics.evaluate_online`
    refuses (its checks, :mod:`polars_irmetrics.online.sessions`): the session's value
    is NaN there (:func:`click_metric`).

    Examples
    --------
    >>> import polars as pl
    >>> log = pl.DataFrame({"position": [1, 2], "clicked": [2, 0]})
    >>> log.select(_invalid("position", "clicked", {}, set())).item()
    True
    """
    pos = pl.col(position)
    click = pl.col(clicked).cast(pl.Float64)
    bad = (
        click.is_null() | ~((click == 0.0) | (click == 1.0)) | pos.is_null() | (pos < 1)
    ).any() | (pos.count() != pos.drop_nulls().n_unique())
    is_click = click == 1.0
    if "dwell" in used:
        dwell = _expr(optional["dwell"]).cast(pl.Float64)
        bad = (
            bad
            | (
                (dwell < 0) | (is_click & (dwell.is_null() | dwell.is_nan())) | dwell.is_infinite()
            ).any()
        )
    if "converted" in used:
        converted = _expr(optional["converted"]).cast(pl.Float64)
        bad = bad | (converted.is_null() | ~((converted == 0.0) | (converted == 1.0))).any()
    if "timestamp" in used:
        time = _expr(optional["timestamp"]).cast(pl.Float64)
        bad = bad | (time.is_null() | time.is_nan() | time.is_infinite()).any()
    return bad


def click_metric(
    name: str,
    *,
    position: str = "position",
    clicked: str = "clicked",
    dwell: str | pl.Expr = "dwell",
    converted: str | pl.Expr = "converted",
    timestamp: str | pl.Expr = "timestamp",
) -> pl.Expr:
    """A click metric over the impressions of one session, as a polars aggregation.

    For ``log.group_by("session_id").agg(irm.click_metric("ctr@10"))``: the value of
    each session, without :func:`polars_irmetrics.evaluate_online`'s aggregation over
    sessions (a ratio metric's session value is the session's own ratio). An
    expression cannot raise on a value inside a plan: a session holding a value
    ``evaluate_online`` refuses (a null or non-0/1 click, a null, repeated or non-positive
    position; a negative or infinite dwell, or a null or NaN one of a click; a null or
    non-0/1 conversion; a null or non-finite time; the last three where the metric
    reads them) gives NaN, never a number that reads as valid; ``evaluate_online`` on
    the same log names the column, the session and the fix. The columns
    it reads are checked when the plan knows the frame: a missing one raises
    :class:`~polars_irmetrics.errors.ColumnNotFoundError`, a position that is not an
    integer or a click (dwell, conversion, time) that is not numeric or Boolean
    :class:`~polars_irmetrics.errors.ColumnTypeError`.

    Parameters
    ----------
    name
        A click metric, e.g. ``"ctr@10"`` or ``"click_ndcg(signal='satisfied')@10"``.
    position, clicked
        Column names of the position (1 = top) and of the click (Boolean or 0/1).
    dwell, converted, timestamp
        Column names or expressions: the dwell in seconds, the conversion flag, and the
        time of the impression in seconds (a number; for a Datetime column pass the
        seconds since the session's first impression, e.g.
        ``(pl.col("ts") - pl.col("ts").min()).dt.total_microseconds() / 1e6`` in a
        ``group_by`` of the sessions: seconds since 1970 as a float, such as
        ``pl.col("ts").dt.epoch("ms") / 1000``, step by 2.4e-7 s, and 3.9 s comes out
        3.9000000953674316). One given (other than its default name)
        that the metric does not read is refused (``InvalidValueError``).

    Returns
    -------
    pl.Expr
        Named by the metric's canonical name.

    Raises
    ------
    UnknownMetricError, MetricParameterError
        An unknown metric, or one that is not a click metric.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> log = pl.DataFrame({
    ...     "session_id": ["s1", "s1", "s1", "s2", "s2"],
    ...     "position": [3, 1, 2, 1, 2],
    ...     "clicked": [True, False, True, False, False],
    ... })
    >>> log.group_by("session_id").agg(
    ...     irm.click_metric("click_mrr"), irm.click_metric("CTR@2")
    ... ).sort("session_id")
    shape: (2, 3)
    ┌────────────┬───────────┬───────┐
    │ session_id ┆ click_mrr ┆ ctr@2 │
    │ ---        ┆ ---       ┆ ---   │
    │ str        ┆ f64       ┆ f64   │
    ╞════════════╪═══════════╪═══════╡
    │ s1         ┆ 0.5       ┆ 0.5   │
    │ s2         ┆ 0.0       ┆ 0.0   │
    └────────────┴───────────┴───────┘
    """
    request = parse_metric(name)
    if "clicks" not in request.metric.reads:
        raise MetricParameterError(
            f"metric {name!r} is not a click metric; use its expression function (e.g. "
            "irm.ndcg(k=10)) on a judged table, or a click metric such as 'ctr@10'"
        )
    # a column option that is no name was an AttributeError or polars' own TypeError
    check_column_name("position", position)
    check_column_name("clicked", clicked)
    for role, value in (("dwell", dwell), ("converted", converted), ("timestamp", timestamp)):
        check_column_name(role, value, expression=f"pl.col({role!r})")
    scope = ClickScope(
        position,
        clicked,
        dwell=_expr(dwell).cast(pl.Float64),
        converted=_expr(converted).cast(pl.Boolean),
        timestamp=_expr(timestamp).cast(pl.Float64),
    )
    expr = request.expr(scope, 1.0)
    # a value evaluate_online refuses gives NaN, never a number read as valid (a click
    # of 2 counted twice, a position 0 gave click_mrr inf, a null position was skipped)
    optional = {"dwell": dwell, "converted": converted, "timestamp": timestamp}
    invalid = _invalid(position, clicked, optional, scope.used)
    expr = pl.when(invalid).then(pl.lit(float("nan"))).otherwise(expr).alias(request.name)
    # a column named that the metric does not read is refused, never ignored
    for role, value in (("dwell", dwell), ("converted", converted), ("timestamp", timestamp)):
        if role not in scope.used and not (isinstance(value, str) and value == role):
            refuse_unread_column(role, value, [name])
    # the columns it reads, checked when the plan knows the frame (ground.deferred): a
    # missing one, or a String position, was polars' own error at collect()
    needs = [
        Need(position, "positions (1 = top)", "name yours with position=...", True, True),
        Need(clicked, "clicks (Boolean or 0/1)", "name yours with clicked=...", True),
    ]
    for role, value, what in (
        ("dwell", dwell, "dwell times in seconds"),
        ("converted", converted, "conversions (Boolean or 0/1)"),
        ("timestamp", timestamp, "impression times in seconds"),
    ):
        if role in scope.used and isinstance(value, str):
            seconds = role == "timestamp"
            needs.append(Need(value, what, f"name yours with {role}=...", True, seconds=seconds))
    return checked(expr, tuple(needs))
