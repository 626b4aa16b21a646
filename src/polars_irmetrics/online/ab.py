"""``ab_test()``: compare the arms of an experiment at its randomization unit.

The plan: the per-session group-by of :mod:`polars_irmetrics.online.sessions` (every
metric and data check), then one group-by per unit (user) giving each metric's per-unit
``(x, y)`` (:mod:`polars_irmetrics.online.stats`), then one group-by per (segment,
metric, arm) giving the moments of those pairs; polars collects the moments, the units
per arm and the units seen in two arms at once. The tests, intervals, sample-ratio
check and the multiple-testing correction (:func:`polars_irmetrics.stats.multitest.adjust`)
are then vectorised in numpy over the (segment, metric, arm) rows.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

import numpy as np
import numpy.typing as npt
import polars as pl

from polars_irmetrics.errors import InvalidValueError, MetricParameterError
from polars_irmetrics.ground.inputs import as_polars
from polars_irmetrics.ground.options import (
    check_column_name,
    key_names,
    plain_number,
    refuse_repeated_key,
    refuse_result_keys,
    refuse_working_name,
)
from polars_irmetrics.ground.spelling import spelling_change, spelling_folded
from polars_irmetrics.ground.validate import INTERNAL, require_columns
from polars_irmetrics.metrics.online import ClickMetric
from polars_irmetrics.metrics.registry import MetricRequest, parse_metric_list, repeated_metric
from polars_irmetrics.metrics.scope import exact_mean, exact_sum
from polars_irmetrics.online.columns import (
    LogColumns,
    check_log_names,
    refuse_data_keys,
    refuse_nested,
)
from polars_irmetrics.online.sessions import (
    CLICKS,
    column_readers,
    denominator,
    ensure_click_metrics,
    log_roles,
    numerator,
    session_plan,
    warn_on_no_click,
)
from polars_irmetrics.online.stats import ArmMoments, compare, srm_p_values
from polars_irmetrics.stats.multitest import Correction, adjust, check_correction

__all__ = ["ab_test", "check_ab_metrics", "check_ab_options", "segment_keys"]

_X, _Y, _ARMS = f"{INTERNAL}x", f"{INTERNAL}y", f"{INTERNAL}arms"
#: The arm (as text), metric, units-per-arm and metric-order columns of the moments
#: and counts: internal names, so that no column of the log (an arm column named
#: ``metric``, a segment key named ``n``) meets them
_ARM, _METRIC = f"{INTERNAL}arm", f"{INTERNAL}metric"
_UNITS, _ORDER = f"{INTERNAL}units", f"{INTERNAL}order"
_MOMENTS = ("n", "mx", "my", "vxx", "vyy", "cxy")
#: The columns of :func:`ab_test`'s result, which no segment key may name.
_RESULT_COLUMNS = (
    "metric", "arm", "control", "method", "units", "control_units", "mean", "control_mean",
    "delta", "relative", "std_error", "ci_low", "ci_high", "relative_ci_low",
    "relative_ci_high", "p_value", "p_adjusted", "significant", "higher_is_better",
    "srm_p_value", "warnings",
)  # fmt: skip


def _moment(name: str, prefix: str = "") -> str:
    """The internal column of moment ``name`` (of the control arm with ``prefix='c_'``)."""
    return f"{INTERNAL}{prefix}{name}"


def _is_ratio(request: MetricRequest) -> bool:
    metric = request.metric
    return isinstance(metric, ClickMetric) and metric.ratio is not None


def ab_test(
    log: pl.DataFrame | pl.LazyFrame,
    metrics: str | Iterable[str],
    *,
    arm: str = "arm",
    unit: str = "user_id",
    control: str = "A",
    split: Mapping[str, float] | None = None,
    by: str | Sequence[str] | None = None,
    alpha: float = 0.05,
    correction: Correction = "holm",
    srm_alpha: float = 0.001,
    strict: bool = False,
    session_id: str = "session_id",
    position: str = "position",
    clicked: str = "clicked",
    dwell: str = "dwell",
    converted: str = "converted",
    timestamp: str = "timestamp",
) -> pl.DataFrame:
    """Compare each treatment arm with the control arm, metric by metric, per unit.

    The statistics are done at the randomization ``unit`` (a user sees one arm, and
    her sessions are not independent): per unit, a per-unit mean metric (abandonment,
    click MRR, clicks per session, ...) is the mean of the unit's session values, and
    arms are compared by Welch's t-test on those means; a ratio metric (CTR, the
    satisfied-click rate, the mean click position) is ``sum(numerator) /
    sum(denominator)`` over the arm's units, compared by a z-test with the
    delta-method variance (:mod:`polars_irmetrics.online.stats`).

    Parameters
    ----------
    log
        The impression log (see :func:`polars_irmetrics.evaluate_online`) with the
        ``arm`` and ``unit`` columns. A LazyFrame is read in one pass.
    metrics
        Click metric names, e.g. ``["ctr@10", "abandonment"]``.
    arm, unit, control
        The arm column, the randomization unit column, and the control arm's value.
        Two arms that are one once case, the spaces around them and separators are
        ignored (``'A'`` and ``'a'``) are refused: compared as two, one arm's units
        were split and one part tested against the other.
    split
        The intended share of units per arm, e.g. ``{"A": 0.5, "B": 0.5}`` (any
        positive weights); default: equal shares over the arms in the log. Every arm
        of the log needs a share, and every arm named needs units in the log (an arm
        that ran but logged nothing is not counted as 0: it is refused, for the log to
        be checked). The sample-ratio-mismatch (SRM) check compares the units per arm
        with it (chi-square); ``srm_p_value`` is on every row.
    by
        Segment keys (day, market, device): each segment is compared apart (and has its
        own SRM check); all rows form one family for the correction. Every arm needs
        at least 2 units in every segment: a segment without an arm is refused, not
        dropped. A key holds one value per session: the arm, unit and session columns
        are refused, as are the columns the metrics read as their data (``position``,
        ``clicked``, and ``dwell``, ``converted`` or ``timestamp`` where an asked metric
        reads it), and a key whose values vary within a session (one session is one
        ``(arm, unit, session_id)``); a key may vary within a unit (a user's sessions on
        two devices: the unit is in both segments). A key named as a column of the
        result (``metric``, ``arm``, ``p_value``...: see Returns) is refused too: rename
        it in the log first.
    alpha
        Level of the confidence intervals (``1 - alpha``, each for its own comparison,
        not adjusted for the others) and of ``significant`` (which reads the adjusted
        p-value, so a row may be significant with an interval that holds 0, or not
        with one that does not).
    correction
        Multiple-testing correction across every (segment, metric, arm) row:
        ``"holm"`` (default), ``"bonferroni"``, ``"holm-sidak"``, ``"fdr_bh"``,
        ``"fdr_by"`` or ``None`` (:func:`polars_irmetrics.stats.multitest.adjust`).
        With a correction, two spellings of one metric (``'session_ctr'`` and
        ``'session_click_rate'``) are refused: the one test would count twice in the
        family.
    srm_alpha
        An SRM p-value below it adds a warning to the rows of the segment (default
        0.001, the usual threshold).
    strict
        A unit seen in more than one arm (a broken randomization): ``False`` (default)
        leaves such units out and says so in ``warnings``; ``True`` raises.
    session_id, position, clicked, dwell, converted, timestamp
        Column names in ``log``.

    Returns
    -------
    pl.DataFrame
        One row per segment, metric and treatment arm (metrics in the order given):
        ``metric``, ``arm``, ``control``, ``method`` (``"welch"`` or ``"delta"``),
        ``units`` and ``control_units`` (units with a value), ``mean`` and
        ``control_mean``, ``delta`` (mean - control_mean), ``relative`` (delta /
        control_mean), ``std_error`` (of delta), ``ci_low``/``ci_high`` (of delta),
        ``relative_ci_low``/``relative_ci_high`` (Fieller's interval of the ratio of
        the means, less 1: it excludes 0 exactly when ``ci_low``/``ci_high`` do; null
        where the control mean is within the critical value's reach of 0, the set of
        plausible ratios then being unbounded, and where the control mean is 0),
        ``p_value``, ``p_adjusted``, ``significant`` (``p_adjusted <= alpha``, as
        :func:`polars_irmetrics.compare` decides; statsmodels' ``multipletests``
        compares the raw p-values with its thresholds instead, which can decide
        otherwise for a p-value on the boundary, a rounding apart),
        ``higher_is_better`` (the
        metric's declared direction: a significant negative ``delta`` of
        ``abandonment`` is an improvement), ``srm_p_value`` and ``warnings`` (a list
        of messages: SRM, units in two arms, a difference without variance: every
        unit of both arms at its arm's value, so p 0 and a point interval that the
        data cannot support, or every unit of both arms at one value, so p 1 and the
        interval [0, 0], no more supported).

    Raises
    ------
    ColumnNotFoundError, ColumnTypeError
        A missing column or a wrong dtype (a nested arm, unit, session or segment
        key: List, Array, Struct).
    InvalidValueError
        A bad option; a segment key naming a column the metrics read or the result
        holds (see ``by``); an empty log; a control arm not in the log; an arm of the
        log missing from ``split``, or an arm of ``split`` missing from the log; an arm
        with fewer than two units with a value of a metric (overall, or in a segment of
        ``by``); a
        metric undefined in an arm (no clicks); a unit in two arms under
        ``strict=True``; a ``by`` key with two values in a session; the data errors of
        :func:`polars_irmetrics.evaluate_online`.

    Warns
    -----
    CoverageWarning
        A log of sessions and no click at all (every impression unclicked, most often
        a join of the clicks onto the impressions that matched nothing), tested as it
        is, in :func:`polars_irmetrics.evaluate_online`'s words.

    Examples
    --------
    Four users, two per arm, one session each (so the unit is also the session): in
    arm A, user a1 clicks 1 of 2 impressions and a2 none; in B, b1 clicks 2 of 2, b2
    1 of 2. Abandonment (per-unit mean) is 1/2 in A and 0 in B: Welch's t-test on
    [0, 1] against [0, 0]. CTR (a ratio) is 1/4 in A and 3/4 in B:

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> log = pl.DataFrame({
    ...     "arm": ["A"] * 4 + ["B"] * 4,
    ...     "user_id": ["a1", "a1", "a2", "a2", "b1", "b1", "b2", "b2"],
    ...     "session_id": ["s1", "s1", "s2", "s2", "s3", "s3", "s4", "s4"],
    ...     "position": [1, 2] * 4,
    ...     "clicked": [True, False, False, False, True, True, False, True],
    ... })
    >>> out = irm.ab_test(log, ["ctr", "abandonment"])
    >>> out.select("metric", "method", "mean", "control_mean", "delta", "relative")
    shape: (2, 6)
    ┌─────────────┬────────┬──────┬──────────────┬───────┬──────────┐
    │ metric      ┆ method ┆ mean ┆ control_mean ┆ delta ┆ relative │
    │ ---         ┆ ---    ┆ ---  ┆ ---          ┆ ---   ┆ ---      │
    │ str         ┆ str    ┆ f64  ┆ f64          ┆ f64   ┆ f64      │
    ╞═════════════╪════════╪══════╪══════════════╪═══════╪══════════╡
    │ ctr         ┆ delta  ┆ 0.75 ┆ 0.25         ┆ 0.5   ┆ 2.0      │
    │ abandonment ┆ welch  ┆ 0.0  ┆ 0.5          ┆ -0.5  ┆ -1.0     │
    └─────────────┴────────┴──────┴──────────────┴───────┴──────────┘
    >>> out["srm_p_value"].to_list()  # 2 users per arm, as intended
    [1.0, 1.0]
    """
    log = as_polars(log, "log")
    requests = parse_metric_list(metrics)
    for role, value in (("arm", arm), ("unit", unit)):
        check_column_name(role, value)
    columns = LogColumns(
        session_id=session_id,
        user_id=unit,
        position=position,
        clicked=clicked,
        dwell=dwell,
        converted=converted,
        timestamp=timestamp,
    )
    check_log_names(log_roles(columns, requests))  # before any name is used as a key
    by_keys = segment_keys(
        by,
        (arm, unit, session_id),
        "the arm, the unit or the session",
        columns,
        column_readers(requests),
    )
    refuse_result_keys("by", by_keys, _RESULT_COLUMNS, "log")
    # numpy's numbers as Python's (np.float32(0.05) was refused, as a share np.int64(1))
    alpha, srm_alpha = plain_number(alpha), plain_number(srm_alpha)
    check_ab_options(alpha, srm_alpha, strict, arm, unit, control)
    correction = check_correction(correction)
    check_ab_metrics(requests, correction)
    lf = log.lazy()
    require_columns(
        lf.collect_schema(),
        [arm, unit],
        "log",
        "name the experiment's columns, e.g. arm='variant', unit='user_id'",
    )
    refuse_nested(
        lf.collect_schema(),
        {arm: "the arm", unit: "the unit", session_id: "the session id"}
        | dict.fromkeys(by_keys, "a segment key"),
    )
    # a session is told apart by its arm, unit and id (a segment key varying within one
    # is refused when the plan runs); an arm varying within a unit is the mixed units'
    plan = session_plan(lf, requests, columns, (*by_keys, arm, unit), segments=by_keys)
    # every float sum (a unit's mean, an arm's moments) is exact (fixed point), the same
    # bits in any order: the streaming engine adds a group's rows in no fixed order
    # (batches summed apart), however the rows were sorted, so a result is the same to
    # the last bit on every engine, layout or segment filter. Each sum reads its values
    # scaled by a power of two (_pow2_scale, per segment), so that the fixed point's
    # 2**-64 steps are as fine for values of 1e-9 as for values of 1
    unit_keys = [*by_keys, arm, unit]
    sessions = plan.frame.sort(list(plan.keys))
    per_unit = _per_unit(sessions, requests, unit_keys, arm, unit, by_keys)
    per_unit = per_unit.sort(unit_keys).cache()
    clean = per_unit.filter(pl.col(_ARMS) == 1)
    long = pl.concat(
        [
            clean.select(
                *by_keys,
                pl.col(arm).cast(pl.String).alias(_ARM),
                pl.lit(label).alias(_METRIC),
                pl.col(f"{_X}:{label}").alias(_X),
                pl.col(f"{_Y}:{label}").alias(_Y),
            )
            for label, _ in requests
        ]
    ).filter(pl.col(_X).is_not_null())
    moments_plan = _moments_plan(long, [*by_keys, _METRIC, _ARM], [*by_keys, _METRIC])
    counts_plan = clean.group_by([*by_keys, pl.col(arm).cast(pl.String).alias(_ARM)]).agg(
        pl.len().alias(_UNITS)
    )
    mixed_plan = per_unit.filter(pl.col(_ARMS) > 1).select(
        pl.col(unit), pl.col(arm).cast(pl.String)
    )
    # the log's sessions and clicks, whatever the metrics: a log of no click is warned
    clicks_plan = plan.frame.select(pl.len().alias("n"), pl.col(CLICKS).sum().alias("c"))
    moments, counts, mixed, clicks = pl.collect_all(
        [moments_plan, counts_plan, mixed_plan, clicks_plan]
    )

    if not counts.height and not mixed.height:  # no unit at all: not a misnamed control
        raise InvalidValueError(
            f"the log has no rows; ab_test needs one row per impression (its {arm!r}, "
            f"{unit!r}, {session_id!r}, {position!r} and {clicked!r}): check the log, or the "
            "filter that emptied it"
        )
    warnings = _mixed_units(mixed, arm, unit, strict)
    arms = sorted({*counts[_ARM].to_list(), *mixed[arm].to_list()})
    _refuse_spelt_arms(arms, arm, control)
    if control not in arms:
        shown = ", ".join(repr(a) for a in arms) or "none"
        raise InvalidValueError(
            f"control arm {control!r} is not in column {arm!r} of the log (its arms: "
            f"{shown}); name the control arm with control=..."
        )
    if len(arms) < 2:
        raise InvalidValueError(
            f"column {arm!r} of the log holds one arm ({control!r}); an A/B test needs a "
            "control and at least one treatment: check the arm column (arm=...) or the log"
        )
    shares = _shares(split, arms, arm, unit)
    _refuse_absent_arms(counts, by_keys, arms, arm, unit)
    srm = _srm(counts, by_keys, shares)
    rows = _rows(moments, counts, requests, by_keys, arm, control)
    if clicks["c"].item() == 0:  # sessions (the log has rows) and not one click
        warn_on_no_click(clicked, clicks["n"].item(), [arm, unit, session_id])
    return _result(rows, requests, by_keys, control, alpha, correction, srm,
                   srm_alpha, shares, unit, warnings)  # fmt: skip


def check_ab_metrics(requests: Sequence[tuple[str, MetricRequest]], correction: object) -> None:
    """Refuse :func:`ab_test`'s metrics that are bad whatever the log: one that is not
    a click metric, or one metric listed twice under a ``correction`` (the command line
    checks them before it reads a log, so that their errors name no file)."""
    ensure_click_metrics(requests)
    repeat = repeated_metric(list(requests))
    if repeat is not None and correction is not None:
        first, label, name = repeat
        raise MetricParameterError(
            f"metrics {first!r} and {label!r} are one metric, {name!r}, listed twice: "
            "ab_test would test it twice and count both tests in the family that "
            f"correction={correction!r} adjusts, raising every adjusted p-value; list it "
            "once"
        )


def check_ab_options(
    alpha: float,
    srm_alpha: float | None,
    strict: bool,
    arm: str,
    unit: str,
    control: str,
) -> None:
    """Refuse :func:`ab_test`'s options that are bad whatever the log (the command line
    checks them before it reads one, so that their errors name no file; ``srm_alpha``
    ``None``: not given there)."""
    levels = (("alpha", alpha), ("srm_alpha", srm_alpha))
    for name, value in [(n, v) for n, v in levels if v is not None]:
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
            raise InvalidValueError(f"{name} must be a number in (0, 1), e.g. 0.05; got {value!r}")
    if not isinstance(strict, bool):
        raise InvalidValueError(f"strict must be True or False, got {strict!r}")
    if arm == unit:
        raise InvalidValueError(
            f"arm and unit name the same column {arm!r}; the unit is what was randomized "
            "into arms, e.g. unit='user_id'"
        )
    if not isinstance(control, str):
        raise InvalidValueError(
            f"control must be the control arm's name as text, got {control!r}: the arms "
            f"are named as text whatever the column's dtype, e.g. control={str(control)!r}"
        )


def segment_keys(
    by: object,
    ids: Collection[str],
    named: str,
    columns: LogColumns,
    reads: Mapping[str, Sequence[str]] | None = None,
) -> tuple[str, ...]:
    """The segment keys of ``by=`` (a column name, a list of names or ``None``), checked:
    each a name, listed once, none of the ``ids`` (the columns a test groups by itself,
    ``named`` in a message) and none of the log's data columns, which vary within a
    session where a segment key may not: the positions and clicks of ``columns``, and
    the dwell times, conversions or timestamps the asked metrics read (``reads``, see
    :func:`~polars_irmetrics.online.columns.refuse_data_keys`).

    >>> segment_keys(["day", "day"], (), "", LogColumns())
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: by lists 'day' twice; list each key once, ...
    """
    keys = key_names("by", by, fix="; pass e.g. by='day' or by=['day', 'device']")
    for key in keys:
        refuse_repeated_key("by", key, keys)
        refuse_working_name("by", key, keys, table="log")
        if key in ids:
            raise InvalidValueError(
                f"by={list(keys)!r} names {key!r}, which is already {named}; list only "
                "segment keys such as 'day'"
            )
    refuse_data_keys(keys, columns, reads=reads, segments=True)
    return keys


def _pow2_scale(value: pl.Expr) -> pl.Expr:
    """Aggregation (per group, or over a window): ``2**-e``, ``e`` the binary exponent
    of the largest ``|value|`` (clipped to +-1022, so that the scale and its inverse
    are normal floats), 1 where every value is 0, null or not finite.

    A fixed-point sum (:func:`~polars_irmetrics.metrics.scope.exact_sum`) counts units
    of 2**-64 and the rest of each term in units of 2**-128, exact for terms of 2**-76
    and more: terms scaled to below 2 in magnitude keep 53 bits down to 2**-76 of the
    largest whatever their size (values of 1e-30 would keep 29 bits unscaled, their
    squares none). A product by a power of two is exact,
    so a sum divided back by the scale has the bits of the exact sum, rounded once.

    Examples
    --------
    >>> import polars as pl
    >>> frame = pl.DataFrame({"x": [3e-9, -1e-9, 0.0]})
    >>> frame.select(_pow2_scale(pl.col("x"))).item() == 2.0**29  # 3e-9 is 1.6 * 2**-29
    True
    >>> frame.select(_pow2_scale(pl.col("x") * 0)).item()
    1.0
    """
    size = value.abs().max()
    exponent = size.log(2.0).floor().clip(-1022, 1022)
    finite = size.is_finite() & (size > 0)
    return pl.when(finite).then(pl.lit(2.0).pow(-exponent)).otherwise(pl.lit(1.0))


def _moments_plan(long: pl.LazyFrame, keys: list[str], segment: list[str]) -> pl.LazyFrame:
    """One row per group of ``keys`` (segment, metric, arm) of the per-unit ``(x, y)``
    pairs: the moments of :class:`~polars_irmetrics.online.stats.ArmMoments` (sample
    variances and covariance with ``ddof=1``, null under two units) and whether every
    ``x`` and ``y`` is >= 0.

    Two passes, each sum exact (:func:`~polars_irmetrics.metrics.scope.exact_sum`), so
    the same bits in any row order: the means, joined back to the rows, then the sums of
    the products of the deviations. Each sum reads its terms scaled by a power of two
    (:func:`_pow2_scale`): ``x`` and ``y`` by one scale per metric of a ``segment``
    (shared by its arms), each product by one per group, so that a spread tiny beside
    the values keeps its digits too.

    Examples
    --------
    >>> import polars as pl
    >>> long = pl.LazyFrame({"g": [1, 1, 1, 2], "x": [1.0, 2.0, 4.0, 5.0],
    ...                      "y": [1.0, 1.0, 3.0, 1.0]})
    >>> out = _moments_plan(long.rename({"x": _X, "y": _Y}), ["g"], []).collect().sort("g")
    >>> out[_moment("vxx")].to_list(), out[_moment("cxy")].to_list()  # polars' var and cov
    ([2.3333333333333335, None], [1.6666666666666667, None])
    """
    sx, sy = f"{INTERNAL}sx", f"{INTERNAL}sy"
    mx, my = f"{INTERNAL}mx", f"{INTERNAL}my"

    def over(expr: pl.Expr, by: list[str]) -> pl.Expr:
        return expr.over(by) if by else expr

    scaled = long.with_columns(
        over(_pow2_scale(pl.col(_X)), segment).alias(sx),
        over(_pow2_scale(pl.col(_Y)), segment).alias(sy),
    ).with_columns(pl.col(_X) * pl.col(sx), pl.col(_Y) * pl.col(sy))
    means = scaled.group_by(keys).agg(
        exact_mean(pl.col(_X)).alias(mx), exact_mean(pl.col(_Y)).alias(my)
    )
    dx, dy = pl.col(_X) - pl.col(mx), pl.col(_Y) - pl.col(my)
    products = {"vxx": dx * dx, "vyy": dy * dy, "cxy": dx * dy}
    spread = scaled.join(means, on=keys, how="left").with_columns(
        product.alias(name) for name, product in products.items()
    )
    spread = spread.with_columns(
        over(_pow2_scale(pl.col(name)), keys).alias(f"{INTERNAL}s_{name}") for name in products
    )
    n = pl.len()
    scale_x, scale_y = pl.col(sx).first(), pl.col(sy).first()
    back = {"vxx": (scale_x, scale_x), "vyy": (scale_y, scale_y), "cxy": (scale_x, scale_y)}

    def co_spread(name: str) -> pl.Expr:
        scale = pl.col(f"{INTERNAL}s_{name}")
        total = exact_sum(pl.col(name) * scale) / scale.first()
        first, second = back[name]
        return pl.when(n > 1).then(total / (n - 1).cast(pl.Float64) / first / second)

    # x and y hold the scaled values here: their signs are those of the values
    nonnegative = pl.min_horizontal(pl.col(_X).min(), pl.col(_Y).min()) >= 0
    return spread.group_by(keys).agg(
        n.cast(pl.Float64).alias(_moment("n")),
        (pl.col(mx).first() / scale_x).alias(_moment("mx")),
        (pl.col(my).first() / scale_y).alias(_moment("my")),
        *(co_spread(name).alias(_moment(name)) for name in products),
        nonnegative.alias(_moment("nonnegative")),
    )


def _per_unit(
    sessions: pl.LazyFrame,
    requests: Sequence[tuple[str, MetricRequest]],
    keys: list[str],
    arm: str,
    unit: str,
    by: Sequence[str],
) -> pl.LazyFrame:
    """One row per (segment, arm, unit): each metric's ``(x, y)`` and the unit's number
    of arms (over the whole log). Each session column is summed scaled by a power of
    two (:func:`_pow2_scale`, one per column and segment)."""
    columns: list[str] = []
    exprs: list[pl.Expr] = []

    def scaled(column: str, total: Callable[[pl.Expr], pl.Expr]) -> pl.Expr:
        name = f"{INTERNAL}scale:{column}"
        columns.append(column)
        return total(pl.col(column) * pl.col(name)) / pl.col(name).first()

    for label, req in requests:
        if _is_ratio(req):
            exprs.append(scaled(numerator(label), exact_sum).alias(f"{_X}:{label}"))
            exprs.append(scaled(denominator(label), exact_sum).alias(f"{_Y}:{label}"))
        else:
            exprs.append(scaled(label, exact_mean).alias(f"{_X}:{label}"))
            exprs.append(pl.lit(1.0).alias(f"{_Y}:{label}"))
    scales = [_pow2_scale(pl.col(c)) for c in columns]
    return (
        sessions.with_columns(
            (scale.over(list(by)) if by else scale).alias(f"{INTERNAL}scale:{c}")
            for c, scale in zip(columns, scales, strict=True)
        )
        .group_by(keys, maintain_order=True)
        .agg(exprs)
        .with_columns(pl.col(arm).n_unique().over(unit).alias(_ARMS))
    )


def _mixed_units(mixed: pl.DataFrame, arm: str, unit: str, strict: bool) -> list[str]:
    if not mixed.height:
        return []
    units = mixed.group_by(unit).agg(pl.col(arm).unique().sort()).sort(unit)
    first = units.row(0, named=True)
    example = f"e.g. {first[unit]!r} in {' and '.join(repr(a) for a in first[arm])}"
    if strict:
        raise InvalidValueError(
            f"{units.height} {unit} value(s) appear in more than one arm of column {arm!r} "
            f"({example}); randomization by {unit!r} is broken: fix the assignment, or "
            "pass strict=False to leave those units out with a warning"
        )
    return [
        f"{units.height} {unit} value(s) appear in more than one arm ({example}); they are "
        "left out of the comparison (strict=True raises instead)"
    ]


def _shares(
    split: Mapping[str, float] | None, arms: list[str], arm: str, unit: str
) -> dict[str, float]:
    if split is None:
        return dict.fromkeys(arms, 1.0 / len(arms))
    if not isinstance(split, Mapping) or not split:
        raise InvalidValueError(
            f"split must map each arm to its intended share, e.g. {{'A': 0.5, 'B': 0.5}}; "
            f"got {split!r}"
        )
    split = {name: plain_number(weight) for name, weight in split.items()}
    for name, weight in split.items():
        number = not isinstance(weight, bool) and isinstance(weight, int | float)
        if not number or not 0 < weight < math.inf:  # inf / inf: NaN shares
            raise InvalidValueError(
                f"split[{name!r}] must be a positive, finite share, got {weight!r}"
            )
    texts = [name for name in split if not isinstance(name, str) and str(name) in arms]
    if texts:  # the arms are text whatever the column's dtype, as control= reads them
        shown = ", ".join(f"{str(name)!r}: {split[name]!r}" for name in split)
        raise InvalidValueError(
            f"split names arm {texts[0]!r}, and the arms are named as text whatever the "
            f"column's dtype: key the split by text, e.g. split={{{shown}}}"
        )
    missing = [a for a in arms if a not in split]
    if missing:
        raise InvalidValueError(
            f"arm {missing[0]!r} of column {arm!r} is not in the split {dict(split)!r}; give "
            "every arm its intended share"
        )
    absent = [name for name in split if name not in arms]
    if absent:
        shown = ", ".join(repr(a) for a in arms)
        raise InvalidValueError(
            f"the split names arm {absent[0]!r}, which is not in column {arm!r} of the log "
            f"(its arms: {shown}); give the shares of the log's arms only, or, if arm "
            f"{absent[0]!r} ran, find why the log has none of its {unit} values"
        )
    total = float(sum(split.values()))
    return {str(name): float(weight) / total for name, weight in split.items()}


def _refuse_spelt_arms(arms: Sequence[str], arm: str, control: str) -> None:
    """Refuse two arms that are one once case, the spaces around them and separators
    are ignored (``'A'`` and ``'a'``, ``'B '`` and ``'B'``): compared as two arms, one
    arm's units were split in two and one part tested against the other as control.

    Examples
    --------
    >>> _refuse_spelt_arms(["A", "B", "C"], "arm", "A")
    >>> _refuse_spelt_arms(["A", "B", "a"], "arm", "A")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: column 'arm' of the log holds arms 'A' and 'a', ...
    """
    seen: dict[str, str] = {}
    for name in arms:  # a handful of arms, already collected
        key = spelling_folded(name)
        if key not in seen:
            seen[key] = name
            continue
        first = seen[key]
        what, fix = spelling_change(first, name)
        raise InvalidValueError(
            f"column {arm!r} of the log holds arms {first!r} and {name!r}, which are one "
            f"arm once {what}: an arm spelt two ways is compared as two (its units split, one "
            f"part tested against the other or against control {control!r}); give each arm "
            f"one spelling, e.g. pl.col({arm!r}){fix} (and control= in that spelling), or, "
            "if they are two arms, name them apart"
        )


def _refuse_absent_arms(
    counts: pl.DataFrame, by: Sequence[str], arms: list[str], arm: str, unit: str
) -> None:
    """Refuse a segment without a unit of some arm, as an arm with fewer than 2 units
    (:func:`_rows`) is: there is nothing to compare there."""
    present = {(tuple(row[k] for k in by), row[_ARM]) for row in counts.iter_rows(named=True)}
    lacking = [
        (segment, [a for a in arms if (segment, a) not in present])
        for segment in _segments(counts, by)
    ]
    lacking = [(segment, names) for segment, names in lacking if names]
    if not lacking:
        return
    if not by:  # an arm whose every unit is in another arm too (left out)
        raise InvalidValueError(
            f"arm {lacking[0][1][0]!r} of column {arm!r} has no {unit} left to compare: "
            "each of its units also appears in another arm and is left out; fix the "
            "assignment, or filter the log to the other arms"
        )
    shown = "; ".join(
        f"{_describe(segment, by).strip()} has no {unit} in arm {' or '.join(map(repr, names))}"
        for segment, names in lacking[:3]
    ) + (f"; and {len(lacking) - 3} more" if len(lacking) > 3 else "")
    raise InvalidValueError(
        f"{len(lacking)} segment(s) by {', '.join(map(repr, by))} miss an arm of column "
        f"{arm!r}: "
        f"{shown}; each segment compares its arms apart, with at least 2 units in each: "
        "leave those segments out (filter the log), or segment by other keys"
    )


def _segments(frame: pl.DataFrame, by: Sequence[str]) -> list[tuple[object, ...]]:
    if not by:
        return [()]
    return list(frame.select(by).unique().sort(by).iter_rows())


def _srm(
    counts: pl.DataFrame, by: Sequence[str], shares: dict[str, float]
) -> dict[tuple[object, ...], tuple[float, dict[str, int]]]:
    """Per segment: the SRM p-value and the units per arm."""
    segments = _segments(counts, by)
    names = list(shares)
    observed = np.zeros((len(segments), len(names)))
    index = {segment: i for i, segment in enumerate(segments)}
    for row in counts.iter_rows(named=True):
        segment = tuple(row[k] for k in by)
        if row[_ARM] in shares:
            observed[index[segment], names.index(row[_ARM])] = row[_UNITS]
    p = srm_p_values(observed, np.array([shares[n] for n in names]))
    return {
        segment: (float(p[i]), {n: int(observed[i, j]) for j, n in enumerate(names)})
        for segment, i in index.items()
    }


def _describe(segment: Sequence[object], by: Sequence[str]) -> str:
    if not by:
        return ""
    return " (" + ", ".join(f"{k}={v!r}" for k, v in zip(by, segment, strict=True)) + ")"


def _rows(
    moments: pl.DataFrame,
    counts: pl.DataFrame,
    requests: Sequence[tuple[str, MetricRequest]],
    by: Sequence[str],
    arm: str,
    control: str,
) -> pl.DataFrame:
    """Treatment rows joined with their control row; every arm checked for >= 2 units
    (``arm``: the arm column's name, for the messages)."""
    order = pl.DataFrame(
        {_METRIC: [label for label, _ in requests], _ORDER: range(len(requests))},
        schema={_METRIC: pl.String, _ORDER: pl.Int64},
    )
    n, my = _moment("n"), _moment("my")
    expected = counts.select(*by, _ARM).join(order, how="cross")
    full = expected.join(moments, on=[*by, _METRIC, _ARM], how="left").with_columns(
        pl.col(n).fill_null(0.0)
    )
    few = full.filter(pl.col(n) < 2).sort(_ORDER, *by, _ARM)
    if few.height:
        row = few.row(0, named=True)
        segment = _describe([row[k] for k in by], by)
        raise InvalidValueError(
            f"arm {row[_ARM]!r}{segment} has {int(row[n])} unit(s) with a value of "
            f"{row[_METRIC]!r}; comparing arms needs at least 2 units in each: check the "
            f"{arm!r} column, or leave the metric out"
        )
    undefined = full.filter(pl.col(my) == 0).sort(_ORDER, *by, _ARM)
    if undefined.height:
        row = undefined.row(0, named=True)
        segment = _describe([row[k] for k in by], by)
        raise InvalidValueError(
            f"metric {row[_METRIC]!r} is undefined in arm {row[_ARM]!r}{segment}: its "
            "denominator is 0 in every unit (no clicks, or no impressions in the top k); "
            "leave it out"
        )
    keys = [*by, _METRIC]
    treated = full.filter(pl.col(_ARM) != control)
    baseline = full.filter(pl.col(_ARM) == control).select(
        *keys, *(pl.col(_moment(m)).alias(_moment(m, "c_")) for m in (*_MOMENTS, "nonnegative"))
    )
    return treated.join(baseline, on=keys, how="inner").sort(_ORDER, *by, _ARM)


def _moments(rows: pl.DataFrame, prefix: str) -> ArmMoments:
    def col(name: str) -> npt.NDArray[np.float64]:
        values: npt.NDArray[np.float64] = rows[_moment(name, prefix)].cast(pl.Float64).to_numpy()
        return values

    return ArmMoments(*(col(m) for m in _MOMENTS))


def _result(
    rows: pl.DataFrame,
    requests: Sequence[tuple[str, MetricRequest]],
    by: Sequence[str],
    control: str,
    alpha: float,
    correction: Correction,
    srm: dict[tuple[object, ...], tuple[float, dict[str, int]]],
    srm_alpha: float,
    shares: dict[str, float],
    unit: str,
    warnings: list[str],
) -> pl.DataFrame:
    ratio_labels = {label for label, req in requests if _is_ratio(req)}
    direction = {label: req.higher_is_better for label, req in requests}
    welch = ~rows[_METRIC].is_in(list(ratio_labels)).to_numpy()
    treatment, baseline = _moments(rows, ""), _moments(rows, "c_")
    both = rows[_moment("nonnegative")] & rows[_moment("nonnegative", "c_")]
    nonnegative = both.fill_null(False).to_numpy()
    result = compare(treatment, baseline, welch, alpha, nonnegative)
    p_adjusted = adjust(result.p_value, correction)
    segments = [tuple(row) for row in rows.select(by).iter_rows()] if by else [()] * rows.height
    srm_p = [srm[s][0] for s in segments]
    notes = {s: _srm_warning(srm[s], srm_alpha, shares, unit, by, s) for s in set(segments)}
    flat = _flat_notes(rows[_METRIC].to_list(), result.std_error, result.delta, treatment.n,
                       baseline.n, unit)  # fmt: skip
    out = rows.select(
        *by, pl.col(_METRIC).alias("metric"), pl.col(_ARM).alias("arm")
    ).with_columns(
        pl.lit(control).alias("control"),
        pl.Series("method", np.where(welch, "welch", "delta"), dtype=pl.String),
        pl.Series("units", treatment.n.astype(np.int64)),
        pl.Series("control_units", baseline.n.astype(np.int64)),
        pl.Series("mean", treatment.value),
        pl.Series("control_mean", baseline.value),
        pl.Series("delta", result.delta),
        pl.Series("relative", result.relative),
        pl.Series("std_error", result.std_error),
        pl.Series("ci_low", result.ci_low),
        pl.Series("ci_high", result.ci_high),
        # NaN where Fieller's interval is unbounded: null
        pl.Series("relative_ci_low", result.relative_ci_low, nan_to_null=True),
        pl.Series("relative_ci_high", result.relative_ci_high, nan_to_null=True),
        pl.Series("p_value", result.p_value),
        pl.Series("p_adjusted", p_adjusted),
        pl.Series("significant", p_adjusted <= alpha),
        pl.Series(
            "higher_is_better",
            [direction[label] for label in rows[_METRIC]],
            dtype=pl.Boolean,
        ),
        pl.Series("srm_p_value", srm_p, dtype=pl.Float64),
        pl.Series(
            "warnings",
            [[*notes[s], *flat[i], *warnings] for i, s in enumerate(segments)],
            dtype=pl.List(pl.String),
        ),
    )
    relative = ("relative", "relative_ci_low", "relative_ci_high")
    # a control mean of 0 has no relative lift
    return out.with_columns(
        pl.when(pl.col("control_mean") != 0).then(pl.col(c)).alias(c) for c in relative
    )


def _flat_notes(
    metrics: list[str],
    std_error: npt.NDArray[np.float64],
    delta: npt.NDArray[np.float64],
    units: npt.NDArray[np.float64],
    control_units: npt.NDArray[np.float64],
    unit: str,
) -> list[list[str]]:
    """Per row, the warning of a comparison without variance: every unit of both arms
    has its arm's value (standard error 0), so the p-value is 0 and the interval the
    difference itself, a certainty the data cannot give, or, where both arms hold one
    value, the p-value 1 and the interval [0, 0], as certain a "no difference" (scipy's
    ``ttest_ind`` gives NaN for both, with a warning); none elsewhere.

    >>> import numpy as np
    >>> _flat_notes(["ctr", "ctr"], np.array([0.0, 0.1]), np.array([1.0, 1.0]),
    ...             np.array([2.0, 2.0]), np.array([2.0, 2.0]), "user_id")[1]
    []
    """
    out: list[list[str]] = []
    for metric, se, d, n_t, n_c in zip(
        metrics, std_error.tolist(), delta.tolist(), units.tolist(), control_units.tolist(),
        strict=True,
    ):  # fmt: skip
        if se != 0:
            out.append([])
            continue
        if d == 0:
            out.append(
                [
                    f"{metric}: every unit ({unit}) of both arms has the same value (standard "
                    f"error 0), so the p-value of 1 and the interval [0, 0] rest on {int(n_t)} "
                    f"and {int(n_c)} units without spread, not on evidence of no difference; "
                    "a comparison without variance cannot be tested: collect more units "
                    "before reading it as no effect"
                ]
            )
            continue
        out.append(
            [
                f"{metric}: no unit ({unit}) varies within its arm (standard error 0), so the "
                f"p-value of 0 and the interval [{d:.6g}, {d:.6g}] rest on {int(n_t)} and "
                f"{int(n_c)} units without spread, not on evidence; a difference without "
                "variance cannot be tested: collect more units before reading it as certain"
            ]
        )
    return out


def _srm_warning(
    found: tuple[float, dict[str, int]],
    srm_alpha: float,
    shares: dict[str, float],
    unit: str,
    by: Sequence[str],
    segment: tuple[object, ...],
) -> list[str]:
    p, observed = found
    if p >= srm_alpha:
        return []
    seen = ", ".join(f"{a}: {n}" for a, n in observed.items())
    intended = ", ".join(f"{a}: {s:.3g}" for a, s in shares.items())
    return [
        f"sample ratio mismatch{_describe(segment, by)}: {unit} per arm {{{seen}}} against "
        f"the intended split {{{intended}}}, chi-square p = {p:.3g} < {srm_alpha}; the "
        "assignment or the logging is broken: do not trust this comparison"
    ]
