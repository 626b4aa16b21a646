"""The slate IPS estimators (``slate_ips``, ``slate_iips``, ``slate_rips`` and their
self-normalised forms): one lazy plan over a slate log and the evaluation policy's
propensities.

The log has one row per ``(round_id, position)`` with the slot's reward and the logging
policy's propensities (``pscore``: the whole slate; ``pscore_item_position``: the item at
that position; ``pscore_cascade``: the top-l prefix); ``policy=`` has the evaluation
policy's propensities of the logged slate under the same names, keyed by ``(round_id,
position)``. Each estimator reads one of the three (obp's ``SlateStandardIPS``,
``SlateIndependentIPS``, ``SlateRewardInteractionIPS``); only the columns the metrics
asked for read are required. A row's contribution is ``r w`` (self-normalised: divided
by the mean weight of every row, or of the rows at its position), and the estimate the
sum of the contributions over the number of rounds: the expected sum of slot rewards
per round. ``per_query=True`` gives each round's sum. ``ci=``: the bootstrap over rounds
(:mod:`~polars_irmetrics.ope.intervals`); for the self-normalised estimators the ratio is
recomputed in each resample (:mod:`~polars_irmetrics.ope.ratio_intervals`). A positive
propensity the policy gives a ``(round_id, position)`` the log never shows raises a
:class:`~polars_irmetrics.errors.SupportWarning` when the plan is collected, and so
does an estimator whose every weight is 0 in the log or a ``by`` group (the policy
gives each logged slate probability 0 there:
:func:`~polars_irmetrics.ope.rounds.unweighted_warning`).

Checks (raised when the plan is collected, naming the table, the column and the round;
every propensity column a table has is checked, whichever the metrics read):
a propensity in the log that is null, NaN, 0, negative or above 1; one in the policy
that is null, NaN, negative or above 1; a null, NaN or infinite reward; rewards other than 0 all
subnormal, or one other than 0 too small beside the log's largest (its magnitude times
the rewards' scale below 2**-30: :mod:`~polars_irmetrics.ope.scale`); a policy
position below 1 in a logged round (0-based positions read each slot's neighbour); a
logged ``(round_id, position)`` the policy lacks; a ``(round_id, position)`` twice; a
``pscore`` taking two values in one round or a ``pscore_cascade`` rising from one
position to the next, in the log or the policy table (obp refuses both: the whole
slate's probability is one per round, its top-l prefix's cannot rise down the slate); a
slate weight (the policy's propensity over the log's, of a column a metric asked for
reads) that is subnormal or beyond float64's range, which no scale keeps exact (every
other weight, tiny or huge, is summed at a power of two of its own:
:func:`~polars_irmetrics.ope.rounds.over_rounds`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import polars as pl

from polars_irmetrics.errors import (
    DuplicateError,
    InvalidValueError,
    MetricParameterError,
    QuerySetError,
)
from polars_irmetrics.ground.options import EvalOptions, log_key_error
from polars_irmetrics.ground.validate import INTERNAL, check_numeric, require_columns
from polars_irmetrics.metrics._common import divide
from polars_irmetrics.metrics.ope import SLATE_COLUMNS
from polars_irmetrics.metrics.registry import MetricRequest
from polars_irmetrics.ope.checks import (
    SHAPES,
    WHERE,
    Check,
    broken_shape,
    by_null_checks,
    check_keys,
    id_column,
    infinite_reward_check,
    log_id_checks,
    null_id_checks,
    policy_below_check,
    round_hint,
    shape_check,
    slate_columns,
    slate_unsupported_text,
    split_round_checks,
    split_round_flags,
    subnormal_reward_check,
    tiny_reward_check,
    warning_unsupported,
    where_text,
    with_null_ids,
    with_policy_below,
    with_wide_reward_check,
)
from polars_irmetrics.ope.rounds import over_rounds, unweighted_warning
from polars_irmetrics.ope.scale import SCALE
from polars_irmetrics.ope.sums import (
    PartsPlan,
    Summary,
    exact_total_over,
    scale_column,
    unscaled_total,
)

__all__ = ["build_slate_plan", "log_propensity_check", "slate_support_warning"]

#: The slots (log rows) of a ``by`` group and position in the mean weights' pass.
NUM_SLOTS = f"{INTERNAL}slots"
_IN_P = f"{INTERNAL}in_p"
#: The log row's round has a position below 1 in the policy table.
_BELOW = f"{INTERNAL}policy_below"
_DUP = f"{INTERNAL}dup"


def _shape(column: str) -> str:
    """The flag of a row whose round breaks ``column``'s shape
    (:data:`~polars_irmetrics.ope.checks.SHAPES`); ``column`` the log's, or the
    policy's (:func:`_e`)."""
    return f"{INTERNAL}shape_{column}"


#: What each of the slate log's propensity columns holds, as a refusal names it.
_PROPENSITIES = {
    "pscore": "the logging policy's slate propensities",
    "pscore_item_position": "the logging policy's propensities of each slot's item",
    "pscore_cascade": "the logging policy's cascade propensities",
}


def _e(column: str) -> str:
    """The evaluation policy's propensity column, beside the log's."""
    return f"{INTERNAL}e_{column}"


def _raw(label: str) -> str:
    """A slate estimator's rows' ``r w``, not normalised."""
    return f"{INTERNAL}rw_{label}"


def _w(column: str) -> str:
    return f"{INTERNAL}w_{column}"


def build_slate_plan(
    log: pl.LazyFrame,
    requests: Sequence[tuple[str, MetricRequest]],
    policy: pl.LazyFrame,
    options: EvalOptions,
    scale: pl.Expr,
    *,
    parts: bool = False,
    weights: pl.LazyFrame | None = None,
    peaks: dict[str, float | None] | None = None,
) -> pl.LazyFrame | PartsPlan:
    """The lazy slate estimate of ``requests`` (see the module); ``parts``: the sums of
    one part of the log instead (:func:`~polars_irmetrics.ope.evaluate.build_ope_parts`).

    ``per_query=True`` over a split log: ``parts`` gives the first pass, the mean weights
    of the self-normalised estimators (:func:`_mean_weights`), and ``weights`` (their
    merge over every part) the second, each round's value of one part dividing by them:
    the same bits as the one plan's, whose means are exact sums over the whole log.

    ``scale`` (:func:`~polars_irmetrics.ope.scale.scale_column`): the rewards' scale, a
    column of the rows, by which the rewards are read multiplied; the result carries it
    (:data:`~polars_irmetrics.ope.scale.SCALE`) for the caller to divide by. Each sum is
    read at a power of two of its own (``peaks``: the whole log's largest magnitude of
    each sum's terms, a split log's; ``None``: the rows are the whole log;
    :func:`~polars_irmetrics.ope.rounds.over_rounds`).

    Examples
    --------
    Two slates of two slots; the logger showed each slate with probability 0.25, the
    evaluation policy would show them with 0.5 and 0.125 (weights 2 and 0.5); the slot
    rewards are (1, 0) and (1, 1): ``slate_ips`` = (2 * 1 + 0.5 * 2) / 2 = 1.5, and
    ``slate_snips`` divides by the mean weight 1.25: 1.2.

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> log = pl.DataFrame({
    ...     "round_id": [1, 1, 2, 2], "position": [1, 2, 1, 2],
    ...     "reward": [1.0, 0.0, 1.0, 1.0], "pscore": [0.25] * 4,
    ... })
    >>> pi = log.select("round_id", "position", pscore=pl.Series([0.5, 0.5, 0.125, 0.125]))
    >>> out = irm.evaluate(log, ["slate_ips", "slate_snips"], policy=pi)
    >>> out["num_rounds"].item(), out["slate_ips"].item(), round(out["slate_snips"].item(), 12)
    (2, 1.5, 1.2)
    """
    by = list(options.attribute_keys)
    round_id, position, reward = options.round_id, options.position, options.reward
    keys = [round_id, position]
    columns = sorted({SLATE_COLUMNS[request.metric.name][0] for _, request in requests})
    log_schema = log.collect_schema()
    schema = policy.collect_schema()
    # every propensity column a table has is checked, whichever the metrics read: which
    # checks run never depends on the metrics asked for
    known = sorted({column for column, _ in SLATE_COLUMNS.values()})
    logged = sorted({*columns, *(c for c in known if c in log_schema)})
    proposed = sorted({*columns, *(c for c in known if c in schema)})
    for key in by:  # the log's other columns are refused at the call
        if key in logged:
            raise log_key_error(by, key, f"{_PROPENSITIES[key]} (read by the slate estimators)")
    require_columns(
        log_schema,
        [*keys, reward, *columns, *by],
        "log",
        "a slate log has one row per (round_id, position) with the slot's reward and the "
        "logging policy's propensities (pscore, pscore_item_position, pscore_cascade)",
    )
    require_columns(
        schema,
        [*keys, *columns],
        "policy table",
        "for the slate estimators the policy table has one row per (round_id, position) "
        "with the evaluation policy's propensities of the logged slate, under the log's names",
    )
    check_keys(log_schema, schema, keys, "policy", position)
    for column in logged:
        check_numeric(log_schema, column, "log", integer=False)
    for column in proposed:
        check_numeric(schema, column, "policy table", integer=False)
    check_numeric(log_schema, reward, "log", integer=False)
    check_numeric(log_schema, position, "log", integer=True)
    ids = [id_column(log_schema, c) for c in keys]
    evaluation = policy.select(
        *ids,
        *(pl.col(c).cast(pl.Float64).alias(_e(c)) for c in proposed),
        pl.lit(True).alias(_IN_P),
    )
    where = where_text(tuple(keys))  # a null id as "null"
    rows = (
        log.select(*by, *ids, reward, *logged, scale)
        .join(evaluation, on=keys, how="left")
        .with_columns(
            where.alias(WHERE),
            (pl.len().over(keys) > 1).alias(_DUP),
            *_shape_flags(logged, proposed, [*by, round_id], position),
            *split_round_flags(by, round_id),
            *((pl.col(_e(c)) / pl.col(c).cast(pl.Float64)).alias(_w(c)) for c in columns),
        )
    )
    rows = with_null_ids(rows, {"policy": policy}, keys)
    # 0-based positions would meet the log's slots one lower (refused, as for ips)
    rows = with_policy_below(rows, policy, keys, log_schema, _BELOW)
    r = pl.col(reward).cast(pl.Float64) * pl.col(SCALE)
    values = []
    sums: dict[str, tuple[str, str | None]] = {}
    ratios: dict[str, tuple[str, str]] = {}
    for label, request in requests:
        column, normalised = SLATE_COLUMNS[request.metric.name]
        w = pl.col(_w(column))
        values.append((r * w).alias(_raw(label)))
        sums[label] = (_raw(label), normalised)
        if normalised is None:
            values.append((r * w).alias(label))
            continue
        ratios[label] = (_w(column), normalised)
        if options.per_query:  # divided by the mean weight, joined (_mean_weights)
            # (divide: without keys, one mean for every row; see metrics._common)
            values.append(divide(r * w, pl.col(_mean(label))).alias(label))
    checks = [
        *by_null_checks(by),
        *split_round_checks(by, keys, "the slate estimators"),
        *_checks(logged, proposed, keys, reward),
    ]
    checks = with_wide_reward_check(checks, reward, log_schema[reward])
    checks += [check for column in columns for check in _weight_checks(column)]
    # a logged round the policy lacks: the hint of round ids spelt apart (on its path)
    hint = round_hint(log, policy, round_id, "policy=")
    checks = [replace(c, hint=hint) if c.name == "policy_round" else c for c in checks]
    if options.ci is not None and ratios and options.ci_method == "normal":
        raise MetricParameterError(
            f"metric {next(iter(ratios))!r} is a ratio (self-normalised) and has no "
            "closed-form variance: use ci_method='bootstrap'"
        )
    if options.per_query and ratios:
        if parts:  # the first pass over a split log
            return _mean_weights(rows, ratios, by, position, checks, reward, peaks)
        if weights is None:  # the one plan: the same merge, over its one part
            first = _mean_weights(rows, ratios, by, position, checks, reward)
            weights = first.merge(first.frame, options)
        on = [*by, position]
        means = weights.select(*on, *(_mean(label) for label in ratios))
        rows = rows.join(means, on=on, how="left", nulls_equal=True)
    rows = rows.with_columns(values)
    reading = {
        label: (label, _w(SLATE_COLUMNS[request.metric.name][0])) for label, request in requests
    }
    slates = (position, sums)
    plan = over_rounds(
        rows,
        reading,
        by,
        round_id,
        checks,
        options,
        parts=parts,
        slates=slates,
        peaks=peaks,
        refusal=_refusal(reward),
    )
    if parts:  # the engines and buckets: exact sums per part
        return plan
    # then a group whose every weight is 0 (the engines' from the parts' maxima)
    result = _support_warning(_plan(plan), log, policy, keys, columns)
    return unweighted_warning(result, by, [label for label, _ in requests])


#: The smallest normal float64: a slate weight other than 0 below it is refused.
_NORMAL = 2.0**-1022


def _weight_checks(column: str) -> list[Check]:
    """The slate weights of propensity ``column`` (read by a metric asked for) that no
    scale keeps exact: subnormal (other than 0, below 2**-1022: fewer digits than a
    float64) or beyond float64's range, refused with the first one's propensities.
    Every other weight, tiny or huge, is summed at a power of two of the whole log's
    (:func:`~polars_irmetrics.ope.rounds.over_rounds`)."""
    w = pl.col(_w(column))
    values = pl.format(
        f"policy {column}={{}}, log {column}={{}}", pl.col(_e(column)), pl.col(column)
    )
    weight = f"a slate weight (the policy table's {column!r} over the log's)"
    return [
        Check(
            f"weight_subnormal_{column}",
            ((w != 0.0) & (w.abs() < _NORMAL)).fill_null(False),
            InvalidValueError,
            f"{{n}} log row(s) have {weight} that is subnormal, other than 0 but below "
            f"2**-1022 = {_NORMAL!r} (first: {{first}}): such a weight holds fewer digits "
            "than a float64, which no scale gives back; set the policy's propensities that "
            "small to 0, or evaluate such rounds apart",
            detail=values,
        ),
        Check(
            f"weight_infinite_{column}",
            w.is_infinite().fill_null(False),
            InvalidValueError,
            f"{{n}} log row(s) have {weight} beyond float64's range (first: {{first}}): the "
            f"log's {column!r} is too small for the policy's (below it / 1.8e308); drop "
            "those rows, or check how the logging propensities were computed",
            detail=values,
        ),
    ]


def _refusal(reward: str) -> str:
    """What the refusal of a slate sum's term beyond float64's range says (``{label}``:
    the metric; :class:`~polars_irmetrics.ope.sums.Summary`'s ``refusal``)."""
    return (
        "metric {label} cannot be summed: a term of its sums is beyond float64's range (a "
        f"slate weight, the policy's propensity over the log's, times a huge {reward!r}): "
        f"read the rewards at a larger unit (e.g. pl.col({reward!r}) * 2.0**-600, the "
        "estimates then at that unit), or drop those rounds"
    )


def _mean(label: str) -> str:
    """A self-normalised estimator's mean weight (of its ``by`` group, or of the group's
    rows at a position) in the weights of ``per_query=True`` over a split log."""
    return f"{INTERNAL}mean_{label}"


def _mean_weights(
    rows: pl.LazyFrame,
    ratios: dict[str, tuple[str, str]],
    by: list[str],
    position: str,
    checks: list[Check],
    reward: str,
    peaks: dict[str, float | None] | None = None,
) -> PartsPlan:
    """The first pass of ``per_query=True`` over a split log: one row per ``by`` group and
    position with each self-normalised estimator's mean weight, where it normalises
    (over the group's rows at the position, or over all the group's rows), from exact
    sums (each at a power of two of its own, the whole log's: ``peaks``, ``None`` where
    the rows are the whole log), and the data checks of the whole log."""
    on = [*by, position]
    summary = Summary(NUM_SLOTS, pl.len(), checks=checks, scaled=True, refusal=_refusal(reward))
    n = pl.col(NUM_SLOTS).cast(pl.Float64)
    for label, (w, normalised) in ratios.items():
        summary.sums[f"{label}:w"] = pl.col(w)
        if normalised == "position":
            mean = unscaled_total(f"{label}:w") / n
        else:  # the integers of every position of the group added
            count = n.sum().over(by) if by else n.sum()
            # divided value by value: polars divides a column by a broadcast scalar as
            # a multiplication by its reciprocal (a unit in the last place off); the
            # scale is the whole log's, one value on every position's row
            total = exact_total_over(f"{label}:w", by) / scale_column(f"{label}:w")
            mean = divide(total, count)
        summary.outputs.append(mean.alias(_mean(label)))
    return PartsPlan(summary.part(rows, on, peaks), summary, on)


def slate_support_warning(
    result: pl.LazyFrame,
    log: pl.LazyFrame,
    policy: pl.LazyFrame,
    requests: Sequence[tuple[str, MetricRequest]],
    options: EvalOptions,
) -> pl.LazyFrame:
    """``result``, warning as :func:`build_slate_plan` warns (a slot of a logged round's
    slate the log never shows) when it is collected, from the whole ``log`` and
    ``policy``: what the out-of-core plan gives after its buckets."""
    keys = [options.round_id, options.position]
    return _support_warning(result, log, policy, keys, slate_columns(requests))


def _support_warning(
    result: pl.LazyFrame,
    log: pl.LazyFrame,
    policy: pl.LazyFrame,
    keys: list[str],
    columns: list[str],
) -> pl.LazyFrame:
    """``result``, warning (:class:`~polars_irmetrics.errors.SupportWarning`) when it is
    collected if the policy puts mass (a positive propensity in a column the metrics
    read) on a ``(round_id, position)`` the log never shows, in a round the log has: a
    slot of a slate the logging policy never could have shown, whose reward no
    estimator sees (a round the log lacks is estimated by nobody)."""
    log_schema = log.collect_schema()
    ids = [id_column(log_schema, c) for c in keys]
    mass = pl.any_horizontal(pl.col(c).cast(pl.Float64) > 0 for c in columns)
    unsupported = (
        policy.filter(mass)
        .select(ids)
        .unique()
        .join(log.select(ids).unique(), on=keys, how="anti", nulls_equal=True)
    )
    # a slate of a round the log lacks is read by no estimate: only the logged rounds'
    # (the few unsupported slots' rounds looked up in the log)
    rounds = unsupported.select(keys[0]).unique()
    logged = log.select(ids[0]).join(rounds, on=keys[0], how="semi").unique()
    unsupported = unsupported.join(logged, on=keys[0], how="semi")
    return warning_unsupported(result, unsupported, keys, slate_unsupported_text)


def _shape_flags(
    in_log: list[str], in_policy: list[str], rounds: list[str], position: str
) -> list[pl.Expr]:
    """Per row, whether its round breaks the shape of a propensity column (each column
    of the log and of the policy table checked, read or not): a slate's ``pscore``
    taking two values in one round, its ``pscore_cascade`` rising from one position to
    the next (the top-l prefix's probability cannot exceed the top-(l-1)'s). Either
    makes the estimate read one slot's value as the slate's (or a weight no policy
    gives): refused, as obp refuses it, exact values compared."""
    flags = []
    for column, name in [*((c, c) for c in in_log), *((_e(c), c) for c in in_policy)]:
        if name in SHAPES:
            flag = broken_shape(SHAPES[name], pl.col(column), rounds, position)
            flags.append(flag.alias(_shape(column)))
    return flags


def log_propensity_check(column: str, keys: tuple[str, ...] = ()) -> Check:
    """The check of a slate propensity column of the log (``pscore``,
    ``pscore_item_position``, ``pscore_cascade``): in (0, 1], the logging policy's
    probability of the logged slate (the slate estimators' and cascade_dr's words);
    ``keys`` name the first refused row's round."""
    logged = pl.col(column).cast(pl.Float64)
    return Check(
        f"log_{column}",
        ~(logged > 0.0).fill_null(False) | (logged > 1.0) | logged.is_nan(),
        InvalidValueError,
        f"column {column!r} of the log has {{n}} value(s) that are null, NaN, 0, "
        "negative or above 1 (first: {first}); it is the logging policy's "
        "probability of the logged slate, in (0, 1]",
        keys=keys,
    )


def _checks(in_log: list[str], in_policy: list[str], keys: list[str], reward: str) -> list[Check]:
    """The slate plan's data checks; ``in_log`` and ``in_policy``: the propensity columns
    of the log and of the policy table checked (every one each has, read or not)."""
    checks = [log_propensity_check(column) for column in in_log]
    reward_col = pl.col(reward)
    # first: a null id or a position below 1, in the log, then in the policy
    row = "each row gives the evaluation policy's propensities of one logged slot"
    checks[:0] = [
        *log_id_checks(keys),
        *null_id_checks(keys, {"policy": row}),
        policy_below_check(keys[1], _BELOW),
    ]
    checks += [
        Check(
            "reward",
            reward_col.is_null() | reward_col.cast(pl.Float64).is_nan(),
            InvalidValueError,
            f"column {reward!r} of the log has {{n}} null or NaN value(s) (first: {{first}}); "
            "every logged slot needs its reward: drop those rows",
        ),
        infinite_reward_check(reward),
        subnormal_reward_check(reward),
        tiny_reward_check(reward),
        Check(
            "policy_round",
            pl.col(_IN_P).is_null(),
            QuerySetError,
            "{n} log row(s) have a (round_id, position) the policy table lacks (first: "
            "{first}): the policy needs the propensities of every logged slot",
        ),
        Check(
            "dup",
            pl.col(_DUP),
            DuplicateError,
            "{n} row(s) share a (round_id, position) with another in the log or the policy "
            "table (first: {first}): keep one row per slot",
        ),
    ]
    for column in in_policy:
        e = pl.col(_e(column))
        checks.append(
            Check(
                f"policy_{column}",
                pl.col(_IN_P).fill_null(False) & ~e.is_between(0.0, 1.0).fill_null(False),
                InvalidValueError,
                f"column {column!r} of the policy table has {{n}} value(s) that are null, "
                "NaN, negative or above 1 (first: {first}): propensities are in [0, 1]",
            )
        )
    tables = [*((c, c, "log") for c in in_log), *((_e(c), c, "policy table") for c in in_policy)]
    checks += [
        shape_check(name, table, pl.col(_shape(column)))
        for column, name, table in tables
        if name in SHAPES
    ]
    return checks


def _plan(plan: pl.LazyFrame | PartsPlan) -> pl.LazyFrame:
    """The one plan of :func:`~polars_irmetrics.ope.rounds.over_rounds` (``parts=False``)."""
    if isinstance(plan, PartsPlan):  # pragma: no cover - parts=False gives the plan
        raise TypeError("a slate plan")
    return plan
