"""One row per session: every click metric and the log's data checks, in one group-by.

:func:`session_plan` is the lazy plan the online entry points share. It reads the
schema first (missing columns and wrong dtypes raise when the plan is built), then
groups the impressions by the keys (``by`` columns and the session id) and computes
in one aggregation, per session:

* each metric's value (the formulas of :mod:`polars_irmetrics.metrics.online` over a
  :class:`~polars_irmetrics.metrics.online.ClickScope`), and for a ratio metric its
  numerator and denominator (``__irm_num:LABEL``, ``__irm_den:LABEL``);
* counts of bad rows (a null click, a click on an impression with no position, a
  position below 1 or held twice, a negative or infinite dwell, a click's NaN dwell, a
  NaN or infinite timestamp, ...), which
  :func:`raise_on_bad_sessions` reads when the plan runs: the first problem raises an
  error naming the column, the session and the fix;
* a segment key (``by=``) that varies within a session, which splits the session into
  one row per value: :func:`raise_on_split_sessions` reads the per-session frame (one
  row per key combination and session) when the plan runs, after the checks above, and
  refuses a session found in two rows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import polars as pl

from polars_irmetrics.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    CoverageWarning,
    DuplicateError,
    InvalidValueError,
    MetricParameterError,
)
from polars_irmetrics.ground.validate import (
    FLOAT64_EXACT,
    INTERNAL,
    numeric_cast_fix,
    require_columns,
    warn_from_plan,
    wide_numbers,
)
from polars_irmetrics.metrics.online import ClickMetric, ClickScope
from polars_irmetrics.metrics.registry import MetricRequest
from polars_irmetrics.metrics.requests import INPUTS
from polars_irmetrics.online.columns import LogColumns, article, check_log_names

__all__ = [
    "CLICKS",
    "SessionPlan",
    "column_readers",
    "denominator",
    "ensure_click_metrics",
    "numerator",
    "optional_columns",
    "raise_on_bad_sessions",
    "raise_on_split_sessions",
    "refuse_unread_column",
    "session_plan",
    "warn_on_no_click",
]


def numerator(label: str) -> str:
    """Internal column of a ratio metric's per-session numerator."""
    return f"{INTERNAL}num:{label}"


def denominator(label: str) -> str:
    """Internal column of a ratio metric's per-session denominator."""
    return f"{INTERNAL}den:{label}"


#: Internal column of each session's count of clicked impressions, whatever the metrics
#: (:func:`~polars_irmetrics.online.evaluate.build_online_plan` warns of a log with no
#: click at all from it, :func:`~polars_irmetrics.online.ab.ab_test` too, and an
#: engine's part hands it on: :func:`warn_on_no_click`).
CLICKS = f"{INTERNAL}clicks"


def warn_on_no_click(clicked: str, sessions: int, keys: Sequence[str]) -> None:
    """A :class:`~polars_irmetrics.errors.CoverageWarning` for an impression log of
    ``sessions`` sessions (> 0) and no click at all (column ``clicked``): scored as it
    is (every click rate 0, every session abandoned), but most often the sign of a
    join of the clicks onto the impressions that matched nothing. The one check of
    every route that reads an impression log's sessions (:data:`CLICKS`): the one
    machine's plan, ``ab_test``, and Spark and Dask from their parts' counts.

    ``sessions`` counts the sessions as the caller scores them, one per value of
    ``keys``, and the words name them: ``evaluate``'s session id
    (``evaluate_online``'s ``num_sessions``), ``ab_test``'s arm, unit and session id
    (a session id of two users is two sessions there), so a log's two counts differ
    only where they say why.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_on_no_click("clicked", 3, ["arm", "user", "session_id"])
    >>> str(caught[0].message)[:130]
    "column 'clicked' of the impression log has no click: every impression of its 3 session(s) (one per 'arm', 'user' and 'session_id')"
    """  # noqa: E501
    named = [repr(key) for key in keys]
    per = ", ".join(named[:-1]) + " and " + named[-1] if len(named) > 1 else named[0]
    warn_from_plan(
        f"column {clicked!r} of the impression log has no click: every impression of its "
        f"{sessions} session(s) (one per {per}) is unclicked, and is scored so (a click "
        "rate 0, every session abandoned, no click position or dwell); a log without a "
        "click most often comes from a join of the clicks onto the impressions that "
        "matched nothing (ids or dtypes that differ): check the join, or ignore this "
        "warning if no one clicked",
        CoverageWarning,
    )


def _flag(name: str) -> str:
    return f"{INTERNAL}v_{name}"


# (check, error class, column role, message). Templates see {col}, {session}, {n},
# {keys} (the session's key columns and the column: a row's place in the log) and
# {shared} (:data:`_SHARED` where the session id alone tells sessions apart, else empty).
_CHECKS: tuple[tuple[str, type[Exception], str, str], ...] = (
    (
        "null_clicked",
        InvalidValueError,
        "clicked",
        "column {col!r} of the log has {n} null value(s) in session {session}; every "
        "impression is clicked or not: fill them, e.g. pl.col({col!r}).fill_null(False)",
    ),
    (
        "bad_clicked",
        InvalidValueError,
        "clicked",
        "column {col!r} of the log has {n} value(s) other than 0 and 1 in session {session}; "
        "a click is a flag: use True/False or 0/1",
    ),
    (
        "unshown_click",
        InvalidValueError,
        "position",
        "session {session} has {n} click(s) on an impression that was not shown (a null "
        "{col!r}); a click needs the position it was shown at: fix the join of clicks to "
        "impressions, or drop those rows",
    ),
    (
        "null_position",
        InvalidValueError,
        "position",
        "column {col!r} of the log has {n} null value(s) in session {session}; every "
        "impression needs the position it was shown at: fill or drop them",
    ),
    (
        "bad_position",
        InvalidValueError,
        "position",
        "column {col!r} of the log has {n} position(s) below 1 in session {session}; "
        "positions start at 1 for the top: add 1 to 0-based positions, e.g. pl.col({col!r}) + 1",
    ),
    (
        "dup_position",
        DuplicateError,
        "position",
        "column {col!r} of the log: session {session} shows {n} impression(s) at a position "
        "another impression holds; each position shows one item: keep one row per position, "
        "e.g. .unique({keys!r}){shared}",
    ),
    (
        "negative_dwell",
        InvalidValueError,
        "dwell",
        "column {col!r} of the log has {n} negative value(s) in session {session}; a dwell is "
        "a duration in seconds, >= 0: fix or drop them",
    ),
    (
        "null_dwell",
        InvalidValueError,
        "dwell",
        "column {col!r} of the log has {n} clicked impression(s) without a dwell in session "
        "{session}; a satisfied click is decided by its dwell: fill them, e.g. with 0",
    ),
    (
        "nan_dwell",
        InvalidValueError,
        "dwell",
        "column {col!r} of the log has {n} clicked impression(s) with a NaN dwell in session "
        "{session}; a satisfied click is decided by its dwell: fill them, e.g. "
        "pl.col({col!r}).fill_nan(0.0)",
    ),
    (
        "infinite_dwell",
        InvalidValueError,
        "dwell",
        "column {col!r} of the log has {n} infinite value(s) in session {session}; a dwell is "
        "a duration in seconds, finite: fix or drop them",
    ),
    (
        "wide_dwell",
        InvalidValueError,
        "dwell",
        "column {col!r} of the log has {n} value(s) of magnitude 2**53 or more in session "
        "{session}; a dwell is read as seconds, in Float64, which holds such values to a "
        "few units only (2**53 + 1 reads as 2**53), so a threshold would compare rounded "
        "dwells: rescale the column and dwell_threshold by one factor, e.g. "
        "pl.col({col!r}) / 1000 for milliseconds, or cast it to Float64 to read it so "
        "rounded, pl.col({col!r}).cast(pl.Float64)",
    ),
    (
        "null_converted",
        InvalidValueError,
        "converted",
        "column {col!r} of the log has {n} null value(s) in session {session}; every "
        "impression converted or not: fill them, e.g. pl.col({col!r}).fill_null(False)",
    ),
    (
        "bad_converted",
        InvalidValueError,
        "converted",
        "column {col!r} of the log has {n} value(s) other than 0 and 1 in session {session}; "
        "a conversion is a flag: use True/False or 0/1",
    ),
    (
        "null_timestamp",
        InvalidValueError,
        "timestamp",
        "column {col!r} of the log has {n} null value(s) in session {session}; every "
        "impression needs its time for time_to_first_click: fill or drop them",
    ),
    (
        "nonfinite_timestamp",
        InvalidValueError,
        "timestamp",
        "column {col!r} of the log has {n} NaN or infinite value(s) in session {session}; "
        "every impression needs its time for time_to_first_click: fix or drop them, e.g. "
        ".filter(pl.col({col!r}).is_finite())",
    ),
    (
        "wide_timestamp",
        InvalidValueError,
        "timestamp",
        "column {col!r} of the log has {n} integer(s) of magnitude 2**53 or more in session "
        "{session}; a numeric timestamp is read as seconds, in Float64, where integers beyond "
        "2**53 merge with their neighbours (nanoseconds since the epoch?): convert it to a "
        "Datetime, read exactly, e.g. pl.from_epoch(pl.col({col!r}).cast(pl.Int64), "
        "time_unit='ns')",
    ),
)


@dataclass(frozen=True)
class SessionPlan:
    """The per-session plan and how to read it.

    Attributes
    ----------
    frame
        One row per session: the keys, one column per metric label, the ratio
        metrics' numerators and denominators, its count of clicks (:data:`CLICKS`);
        checked (a bad row raises when it runs).
    keys
        The group keys: the ``by`` columns, then the session id.
    segments
        The segment keys among ``keys`` (the caller's ``by=``): each holds one value per
        session (:func:`raise_on_split_sessions`).
    requests
        ``(label, request)`` per metric, in the order given.
    """

    frame: pl.LazyFrame
    keys: tuple[str, ...]
    segments: tuple[str, ...]
    requests: tuple[tuple[str, MetricRequest], ...]

    @property
    def identity(self) -> tuple[str, ...]:
        """The keys that tell one session from another: :attr:`keys` but the segment
        keys (the session id; in an A/B test the arm and the unit too)."""
        return _identity(self.keys, self.segments)


def _identity(keys: Sequence[str], segments: Sequence[str]) -> tuple[str, ...]:
    """The keys that tell one session from another: ``keys`` but the ``segments``."""
    return tuple(k for k in keys if k not in segments)


#: The table :func:`~polars_irmetrics.evaluate` reads first for a route's metrics, as
#: a refused click-metric door names it.
_TABLE_OF_ROUTE = {"ope": "log", "prediction": "predictions"}


def ensure_click_metrics(requests: Iterable[tuple[str, MetricRequest]]) -> None:
    """Refuse a metric that is not a click metric at a door of impression logs
    (``evaluate_online``, ``ab_test``), saying what it reads and where it is evaluated:
    ``irm.evaluate`` with the table it reads (judgments, a policy, interactions...).

    Examples
    --------
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> ensure_click_metrics(parse_metric_list(["ips"]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: metric 'ips' is not a click metric: ...
    """
    for label, req in requests:
        if "clicks" in req.metric.reads:
            continue
        tables = [INPUTS[read] for read in req.reads if read in INPUTS]
        if "predictions" in req.reads:
            what = "labels and predictions"
            keywords = ", label=..., prediction=..."
        else:
            what = " and ".join(description.split(" (")[0] for description, _ in tables)
            keywords = "".join(f", {keyword}=..." for _, keyword in tables)
        table = _TABLE_OF_ROUTE.get(req.metric.route, "run")
        raise MetricParameterError(
            f"metric {label!r} is not a click metric: it reads {what or 'a ranked run'}, "
            f"which an impression log does not hold; evaluate it with irm.evaluate({table}, "
            f"[{label!r}]{keywords}), or choose a click metric such as 'ctr@10' "
            "(irm.list_metrics())"
        )


def _as_flag(schema: pl.Schema, column: str, what: str) -> pl.Expr:
    dtype = schema[column]
    if dtype == pl.Boolean:
        return pl.col(column)
    if dtype.is_integer():
        return pl.col(column) != 0
    raise ColumnTypeError(
        f"column {column!r} of the log has dtype {dtype}; {what} must be Boolean or integers "
        f"0/1: cast it, e.g. pl.col({column!r}).cast(pl.Boolean)"
    )


def _seconds(schema: pl.Schema, column: str) -> tuple[pl.Expr, float]:
    """The timestamps as numbers, and how many of them make a second: a Datetime as its
    whole count of its own unit since the epoch (a float of seconds since 1970 would
    step by 2.4e-7 s today, and a difference of two of them carry that error), a Date
    as whole seconds, a number as seconds; the metric divides its difference last."""
    dtype = schema[column]
    if isinstance(dtype, pl.Datetime):
        unit = dtype.time_unit or "us"
        per_second = {"ns": 1e9, "us": 1e6, "ms": 1e3}[unit]
        return pl.col(column).dt.epoch(unit), per_second
    if dtype == pl.Date:
        return pl.col(column).dt.epoch("d").cast(pl.Int64) * 86400, 1.0
    if dtype.is_numeric():
        return pl.col(column).cast(pl.Float64), 1.0
    raise ColumnTypeError(
        f"column {column!r} of the log has dtype {dtype}; a timestamp must be a Datetime, "
        f"a Date or a number of seconds: cast it, e.g. pl.col({column!r}).str.to_datetime()"
    )


def _numeric(schema: pl.Schema, column: str) -> pl.Expr:
    dtype = schema[column]
    if not dtype.is_numeric():
        # a Duration cast to Float64 is a count of its unit (ns, us, ms), not seconds:
        # 12.5 s in ns would read as 12.5e9 seconds, above every dwell threshold
        fix = (
            f"convert it, e.g. pl.col({column!r}).dt.total_seconds(fractional=True)"
            if isinstance(dtype, pl.Duration)
            else numeric_cast_fix(column, dtype)
        )
        raise ColumnTypeError(
            f"column {column!r} of the log has dtype {dtype}; a dwell must be a number of "
            f"seconds: {fix}"
        )
    return pl.col(column).cast(pl.Float64)


def _metric_values(scope: ClickScope, label: str, req: MetricRequest) -> list[pl.Expr]:
    params = req.params(1.0)
    values = [req.metric.compute(scope, params).alias(label)]
    metric = req.metric
    if isinstance(metric, ClickMetric) and metric.ratio is not None:
        num, den = metric.ratio
        values.append(num(scope, params).alias(numerator(label)))
        values.append(den(scope, params).alias(denominator(label)))
    return values


def optional_columns(requests: Sequence[tuple[str, MetricRequest]]) -> dict[str, set[str]]:
    """The optional log columns (``"dwell"``, ``"converted"``, ``"timestamp"``) each
    click metric reads, by label: what a log without them cannot feed.

    Examples
    --------
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> from polars_irmetrics.online.sessions import optional_columns
    >>> optional_columns(parse_metric_list(["ctr@10", "sat_click_rate"]))
    {'ctr@10': set(), 'sat_click_rate': {'dwell'}}
    """
    ensure_click_metrics(requests)
    scope = ClickScope(
        "position",
        "clicked",
        dwell=pl.col("dwell"),
        converted=pl.col("converted"),
        timestamp=pl.col("timestamp"),
    )
    out: dict[str, set[str]] = {}
    for label, req in requests:
        scope.used = set()
        _metric_values(scope, label, req)
        out[label] = set(scope.used)
    return out


def column_readers(requests: Sequence[tuple[str, MetricRequest]]) -> dict[str, list[str]]:
    """Each optional log column (``"dwell"``, ``"converted"``, ``"timestamp"``) an asked
    click metric reads, with the labels of the metrics that read it (in the order
    asked): the columns a segment key may not name
    (:func:`~polars_irmetrics.online.columns.refuse_data_keys`).

    Examples
    --------
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> from polars_irmetrics.online.sessions import column_readers
    >>> column_readers(parse_metric_list(["ctr", "sat_click_rate", "conversion_rate"]))
    {'dwell': ['sat_click_rate'], 'converted': ['conversion_rate']}
    """
    reads = optional_columns(requests)
    readers = {
        role: [label for label, roles in reads.items() if role in roles]
        for role in ("dwell", "converted", "timestamp")
    }
    return {role: labels for role, labels in readers.items() if labels}


def log_roles(
    columns: LogColumns, requests: Sequence[tuple[str, MetricRequest]]
) -> dict[str, object]:
    """The column roles a click plan reads: the session, the position, the click, and
    the optional columns the asked metrics read (:func:`column_readers`)."""
    roles: dict[str, object] = {
        "session_id": columns.session_id,
        "position": columns.position,
        "clicked": columns.clicked,
    }
    for role in column_readers(requests):
        roles[role] = getattr(columns, role)
    return roles


def session_plan(
    log: pl.LazyFrame,
    requests: Sequence[tuple[str, MetricRequest]],
    columns: LogColumns,
    by: Sequence[str],
    hint: str = "name your columns, e.g. session_id='query_id', clicked='click'",
    *,
    segments: Sequence[str],
    split_check: bool = True,
) -> SessionPlan:
    """The checked per-session values of ``requests`` over ``log``, grouped by
    ``(*by, session)`` (see the module docstring).

    ``segments``: the keys of ``by`` that are the caller's segment keys (``by=``), each
    one value per session; the others (an A/B test's arm and unit) tell sessions apart.
    ``split_check``: refuse a session split by a segment key when the plan runs
    (:func:`raise_on_split_sessions`); ``False`` leaves it to a caller that sees more
    than this log (the buckets of an out-of-core plan, each a part of the sessions)."""
    ensure_click_metrics(requests)
    check_log_names(log_roles(columns, requests))
    schema = log.collect_schema()
    keys = tuple(dict.fromkeys([*by, columns.session_id]))
    segments = tuple(k for k in keys if k in segments)
    require_columns(schema, [*keys, columns.position, columns.clicked], "log", hint)
    if not schema[columns.position].is_integer():
        raise ColumnTypeError(
            f"column {columns.position!r} of the log has dtype {schema[columns.position]}; "
            f"a position must be an integer (1 = top): cast it, e.g. "
            f"pl.col({columns.position!r}).cast(pl.Int64)"
        )
    clicked = _as_flag(schema, columns.clicked, "a click")
    optional = {
        "dwell": columns.dwell,
        "converted": columns.converted,
        "timestamp": columns.timestamp,
    }
    # an optional column named that no metric reads is refused; one no metric reads is
    # not checked either (its dtype is nobody's concern)
    reading = set().union(*optional_columns(requests).values())
    _refuse_unread_columns(columns, reading, [label for label, _ in requests])
    exprs: dict[str, pl.Expr | None] = dict.fromkeys(optional)
    if "dwell" in reading and columns.dwell in schema:
        exprs["dwell"] = _numeric(schema, columns.dwell)
    if "converted" in reading and columns.converted in schema:
        exprs["converted"] = _as_flag(schema, columns.converted, "a conversion")
    per_second = 1.0
    if "timestamp" in reading and columns.timestamp in schema:
        exprs["timestamp"], per_second = _seconds(schema, columns.timestamp)
    given: dict[str, pl.Expr] = {}
    for role, name in optional.items():
        expr = exprs[role]
        given[role] = pl.col(name) if expr is None else expr
    scope = ClickScope(
        columns.position,
        columns.clicked,
        dwell=given["dwell"],
        converted=given["converted"],
        timestamp=given["timestamp"],
        per_second=per_second,
    )
    values: list[pl.Expr] = []
    reads: dict[str, set[str]] = {}
    used: set[str] = set()
    for label, req in requests:
        scope.used = set()
        values.extend(_metric_values(scope, label, req))
        reads[label] = set(scope.used)
        used |= scope.used
    scope.used = used
    for role in sorted(used):
        name = optional[role]
        if exprs[role] is None:
            metric_names = ", ".join(repr(label) for label, _ in requests if role in reads[label])
            raise ColumnNotFoundError(
                f"column {name!r} not found in the log (its columns: "
                f"{', '.join(repr(c) for c in schema.names())}); {metric_names} read"
                f"{'s' if metric_names.count(',') == 0 else ''} the {role}: add it, name yours "
                f"with {role}=..., or leave the metric out"
            )
    checks = _checks(schema, columns, clicked, exprs, scope.used)
    clicks = clicked.cast(pl.Int64).sum().alias(CLICKS)
    frame = log.group_by(list(keys)).agg(*values, clicks, *checks)
    identity = _identity(keys, segments)
    spec = _CheckSpec(keys=keys, columns=columns, alone=identity == (columns.session_id,))

    def check(batch: pl.DataFrame) -> pl.DataFrame:
        batch = raise_on_bad_sessions(batch, spec)
        if split_check:
            raise_on_split_sessions(batch, segments, identity)
        return batch

    # map_batches is not streamable: the function sees the whole per-session frame
    checked = frame.map_batches(check, schema=_out_schema(frame))
    return SessionPlan(frame=checked, keys=keys, segments=segments, requests=tuple(requests))


#: The metrics that read each optional column of the log, and what it holds, in the
#: refusals.
_READERS = {
    "dwell": (
        "sat_click_rate and the satisfied-click signal (click_ndcg, click_precision and "
        "click_mrr with signal='satisfied') read",
        "the dwell",
    ),
    "converted": ("conversion_rate reads", "the conversion flag"),
    "timestamp": ("time_to_first_click reads", "the impressions' time"),
}
_DEFAULT_NAMES = {f.name: f.default for f in dataclasses.fields(LogColumns)}


def _refuse_unread_columns(columns: LogColumns, used: set[str], labels: Sequence[str]) -> None:
    """Refuse an optional column named (``dwell=``, ``converted=``, ``timestamp=`` other
    than its default name) that no metric asked for reads (``used``: the roles their
    formulas read), whether the log has it or not: an option no metric reads is refused,
    never ignored.

    >>> _refuse_unread_columns(LogColumns(dwell="dw"), set(), ["ctr"])
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: dwell='dw' is not read by metric 'ctr': only ...
    """
    for role in _READERS:
        name = getattr(columns, role)
        if role not in used and name != _DEFAULT_NAMES[role]:
            refuse_unread_column(role, name, labels)


def refuse_unread_column(role: str, value: object, labels: Sequence[str]) -> None:
    """Refuse the optional column ``role`` (``"dwell"``, ``"converted"``,
    ``"timestamp"``) given as ``value`` (a name, or an expression: shown by its type)
    where none of the metrics ``labels`` reads it."""
    readers, what = _READERS[role]
    given = "<a polars expression>" if isinstance(value, pl.Expr) else repr(value)
    shown = ", ".join(repr(label) for label in labels[:3]) + (" ..." if len(labels) > 3 else "")
    metrics = f"metric {shown}" if len(labels) == 1 else f"metrics {shown}"
    raise InvalidValueError(
        f"{role}={given} is not read by {metrics}: only {readers} {what}; drop {role}= "
        "(an option no metric reads would change nothing), or evaluate a metric that reads it"
    )


def _checks(
    schema: pl.Schema,
    columns: LogColumns,
    clicked: pl.Expr,
    exprs: dict[str, pl.Expr | None],
    used: set[str],
) -> list[pl.Expr]:
    position = pl.col(columns.position)
    checks = {
        "null_clicked": pl.col(columns.clicked).is_null().sum(),
        "unshown_click": (clicked & position.is_null()).sum(),
        "null_position": (clicked.not_().fill_null(True) & position.is_null()).sum(),
        "bad_position": (position < 1).sum(),
        "dup_position": position.count() - position.drop_nulls().n_unique(),
    }
    if schema[columns.clicked] != pl.Boolean:
        checks["bad_clicked"] = (~pl.col(columns.clicked).is_in([0, 1])).sum()
    dwell, converted, timestamp = exprs["dwell"], exprs["converted"], exprs["timestamp"]
    if "dwell" in used and dwell is not None:
        checks["negative_dwell"] = (dwell < 0).sum()
        checks["null_dwell"] = (clicked & dwell.is_null()).sum()
        # a NaN where no click is decides nothing (pandas' missing value, as a null)
        checks["nan_dwell"] = (clicked & dwell.is_nan()).sum()
        checks["infinite_dwell"] = dwell.is_infinite().sum()
        if wide_numbers(schema[columns.dwell]):  # read in Float64 (_numeric)
            checks["wide_dwell"] = (dwell.abs() >= FLOAT64_EXACT).sum()
    if "converted" in used and converted is not None:
        checks["null_converted"] = converted.is_null().sum()
        if schema[columns.converted] != pl.Boolean:  # as the click's (bad_clicked)
            checks["bad_converted"] = (~pl.col(columns.converted).is_in([0, 1])).sum()
    if "timestamp" in used and timestamp is not None:
        checks["null_timestamp"] = timestamp.is_null().sum()
        as_float = timestamp.cast(pl.Float64)  # a whole count is finite
        checks["nonfinite_timestamp"] = (as_float.is_nan() | as_float.is_infinite()).sum()
        # as seconds, in Float64 (_seconds): an Int64 or a Decimal of over 15 digits
        # (a Decimal(20, 0) of nanoseconds) may hold integers Float64 merges
        if wide_numbers(schema[columns.timestamp]):
            whole = pl.col(columns.timestamp).cast(pl.Float64).abs()
            checks["wide_timestamp"] = (whole >= FLOAT64_EXACT).sum()
    return [expr.cast(pl.Int64).alias(_flag(name)) for name, expr in checks.items()]


def _out_schema(frame: pl.LazyFrame) -> pl.Schema:
    schema = frame.collect_schema()
    return pl.Schema({k: v for k, v in schema.items() if not k.startswith(_flag(""))})


#: Where the session id alone tells one session from another (``evaluate_online``; an
#: A/B test keys its sessions by arm and unit too), a position held twice may be two
#: users' sessions under one id (ids that restart for each user): the refusal says so.
_SHARED = (
    "; or, where two users share the session id {session} (ids that restart for each "
    "user), their impressions are one session here: give each user's sessions ids of "
    "their own, e.g. the user id joined onto the session id"
)


@dataclass(frozen=True)
class _CheckSpec:
    keys: tuple[str, ...]
    columns: LogColumns
    #: whether the session id alone tells sessions apart (no arm or unit key)
    alone: bool = False


def raise_on_bad_sessions(frame: pl.DataFrame, spec: _CheckSpec) -> pl.DataFrame:
    """Raise the first data problem the per-session frame records, else drop the counts."""
    for key in spec.keys:
        if frame[key].null_count():
            raise InvalidValueError(
                f"column {key!r} of the log has null values; every impression needs "
                f"{article(key)}: fill or drop them, e.g. .drop_nulls({key!r})"
            )
    for name, error, role, template in _CHECKS:
        column = _flag(name)
        if column not in frame.columns:
            continue
        bad = frame.filter(pl.col(column) > 0).sort(spec.keys)
        if bad.height:
            row = bad.row(0, named=True)
            session = _describe(row, spec)
            shared = _SHARED.format(session=repr(row[spec.columns.session_id]))
            raise error(
                template.format(
                    col=getattr(spec.columns, role),
                    session=session,
                    n=row[column],
                    keys=[*spec.keys, getattr(spec.columns, role)],
                    shared=shared if spec.alone else "",
                )
            )
    return frame.select(c for c in frame.columns if not c.startswith(_flag("")))


def _describe(row: dict[str, object], spec: _CheckSpec) -> str:
    session = spec.columns.session_id
    parts = [f"{key}={row[key]!r}" for key in spec.keys if key != session]
    text = repr(row[session])
    return f"{text} ({', '.join(parts)})" if parts else text


def raise_on_split_sessions(
    frame: pl.DataFrame, segments: Sequence[str], identity: Sequence[str]
) -> None:
    """Refuse a session that holds more than one value of a segment key.

    ``frame`` holds one row per ``(*segments, *identity)`` combination (the per-session
    frame, the whole of it: a session's rows all in it): a session (its ``identity``
    keys, the session id last, as in the plan's keys) found in two rows was
    split by a key of ``segments`` (``by=``), each part evaluated as a session of its
    own, which counts the session twice and scores fragments of it. The first key of
    ``segments`` that varies is named, with the number of sessions it splits and the
    first of them (by its keys) with two of its values (the smallest). A frame with a
    null key is left to the null checks (:func:`raise_on_bad_sessions`, and
    :func:`~polars_irmetrics.interleaving_test`'s after this one), which name it so.

    Cost: a hash of the identity keys over the per-session rows (5 ms for 100,000
    sessions on two threads), and nothing more where no session is split.

    On Spark and Dask each part (whole sessions: parts are hashed by session id) runs
    it over its own sessions: a split session is refused with this message, whose
    count and first session are those of the part that raised when the split sessions
    lie in several parts.

    Examples
    --------
    >>> frame = pl.DataFrame({"day": ["d1", "d2", "d1"], "session_id": ["s1", "s1", "s2"]})
    >>> raise_on_split_sessions(frame, ["day"], ["session_id"])
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: by=['day']: 1 session(s) hold more than ...
    """
    if not segments or not identity or frame.height < 2:
        return
    if any(frame[key].null_count() for key in (*segments, *identity)):
        return
    ids = pl.struct(identity) if len(identity) > 1 else pl.col(identity[0])
    split = frame.filter(ids.is_duplicated())
    if not split.height:
        return
    for key in segments:
        values = (
            split.group_by(list(identity))
            .agg(pl.col(key).unique().sort())
            .filter(pl.col(key).list.len() > 1)
            .sort(list(identity))
        )
        if not values.height:
            continue
        row = values.row(0, named=True)
        held = row[key]
        shown = f"{held[0]!r} and {held[1]!r}"
        if len(held) > 2:
            shown = f"{len(held)} values, e.g. {shown}"
        *others, session = identity
        where = ", ".join(f"{k}={row[k]!r}" for k in others)
        raise InvalidValueError(
            f"by={list(segments)!r}: {values.height} session(s) hold more than one value of "
            f"{key!r}, e.g. session {row[session]!r}{f' ({where})' if where else ''} holds "
            f"{shown}; a key holds one value per session: group by a column fixed within "
            "each session, or give each part its own session id"
        )
