"""The last steps of the slate and cascade plans: each round's sum of its slots'
contributions, the means over rounds (with the weights' diagnostics) and the intervals
over rounds."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import polars as pl

from polars_irmetrics.errors import InvalidValueError, SupportWarning
from polars_irmetrics.ground.known_schema import mapped, schema_of
from polars_irmetrics.ground.options import EvalOptions, metrics_named
from polars_irmetrics.ground.validate import INTERNAL, warn_from_plan
from polars_irmetrics.ground.warning_order import warns_in_order
from polars_irmetrics.ope.checks import Check, raising
from polars_irmetrics.ope.intervals import BUCKET, bootstrap_part, joined_intervals
from polars_irmetrics.ope.normal import normal_interval, wants_normal
from polars_irmetrics.ope.ratio_intervals import RATIO_BUCKET, ratio_part
from polars_irmetrics.ope.scale import SCALE, sum_scale
from polars_irmetrics.ope.sums import (
    PartsPlan,
    Summary,
    effective_sample_size,
    exact_sum,
    exact_total,
    unscaled_total,
)

#: A side merge's finish: ``(result, its rows of every part) -> result with its columns``.
Finish = Callable[[pl.LazyFrame, pl.LazyFrame], pl.LazyFrame]

__all__ = ["NUM_ROUNDS", "over_rounds", "unweighted_warning"]

#: The column counting the rounds (slates) of a slate estimate.
NUM_ROUNDS = "num_rounds"

_TOP = f"{INTERNAL}top"
_ONE = f"{INTERNAL}one"


def _round(label: str) -> str:
    """A metric's round value, on each of the round's rows (the normal interval's)."""
    return f"{INTERNAL}round_{label}"


def _at(name: str) -> str:
    """The column of a rows' value column's scale (that of the sum of its terms)."""
    return f"{INTERNAL}{name}#at"


def _beyond(label: str, values: Sequence[str], refusal: str | None, round_id: str) -> Check:
    """``per_query=True``'s refusal of a row value of ``label`` beyond float64's range
    (a column of ``values``: the row's value, and a self-normalised slate estimator's
    ``r w`` before its division by the mean weight, which turns an infinity into NaN),
    in the words of the estimate's (``refusal``, ``{label}`` the metric): the round's
    sum would be NaN. Its first round (of column ``round_id``) is counted as every
    check's, not named: the estimate's words."""
    text = refusal or "metric {label} cannot be summed: a term is beyond float64's range"
    # a check's template is formatted: the braces of the names it holds kept as text
    text = text.replace("{label}", repr(label)).replace("{", "{{").replace("}", "}}")
    bad = pl.any_horizontal(pl.col(value).is_infinite() for value in values).fill_null(False)
    return Check(f"beyond_{label}", bad, InvalidValueError, text, keys=(round_id,))


def _raw_of(
    slates: tuple[str, Mapping[str, tuple[str, str | None]]] | None, label: str
) -> list[str]:
    """A slate estimator's column of its rows' ``r w`` (``slates``' first of the label),
    none for ``cascade_dr``."""
    return [] if slates is None else [slates[1][label][0]]


def unweighted_warning(
    result: pl.LazyFrame, by: list[str], labels: Sequence[str], *, parts: bool = False
) -> pl.LazyFrame:
    """``result`` (one row per ``by`` group with :data:`NUM_ROUNDS` and each metric's
    largest weight: ``<label>_max_weight``, or with ``parts`` the parts' maxima), warning
    when it is collected (:class:`~polars_irmetrics.errors.SupportWarning`) if in a group
    with rounds (the whole log without ``by``) every weight of a slate estimator or
    ``cascade_dr`` is 0: the policy gives every logged slate (logged action) probability
    0, so the estimate reads none of the logged rewards (a slate IPS estimate 0, a
    self-normalised one NaN, ``cascade_dr`` the reward model's value of the top slots),
    as the single-action estimators' groups warn
    (:func:`~polars_irmetrics.ope.evaluate.warn_unsupported_groups`)."""

    def column(label: str) -> str:
        return f"{INTERNAL}{label}:max" if parts else f"{label}_max_weight"

    schema = schema_of(result)
    present = [label for label in labels if column(label) in schema]
    if not present or NUM_ROUNDS not in schema:  # per_query: no maxima
        return result

    def warning(frame: pl.DataFrame) -> pl.DataFrame:
        rounds = pl.col(NUM_ROUNDS) > 0
        hit = [
            label
            for label in present
            if frame.filter(rounds & (pl.col(column(label)) == 0.0)).height
        ]
        if hit:
            empty = frame.filter(
                rounds & pl.any_horizontal(pl.col(column(label)) == 0.0 for label in hit)
            )
            first = ", ".join(f"{k}={empty[k][0]}" for k in by)
            where = f"in {empty.height} by group(s) (first: {first})" if by else "in the log"
            warn_from_plan(
                f"every importance weight of {metrics_named(hit)} is 0 {where}: the policy "
                "gives each logged slate (each logged action, for cascade_dr) probability 0 "
                "there, so the estimates read none of the logged rewards (a slate IPS "
                "estimate 0, a self-normalised one NaN, cascade_dr the reward model's value "
                "of the top slots alone; <metric>_ess 0): the log cannot support the policy "
                "there",
                SupportWarning,
            )
        return frame

    return mapped(result, warns_in_order(warning), schema)


def over_rounds(
    rows: pl.LazyFrame,
    columns: Mapping[str, tuple[str, str]],
    by: list[str],
    round_id: str,
    checks: list[Check],
    options: EvalOptions,
    *,
    parts: bool = False,
    slates: tuple[str, Mapping[str, tuple[str, str | None]]] | None = None,
    peaks: dict[str, float | None] | None = None,
    refusal: str | None = None,
) -> pl.LazyFrame | PartsPlan:
    """``columns`` maps each metric's label to its rows' contribution and weight columns.

    ``slates``: the position column and, for each label, the column of its rows' ``r w``
    and where it normalises (``"all"``, ``"position"`` or ``None``,
    :data:`~polars_irmetrics.metrics.ope.SLATE_COLUMNS`): the estimate is then made of
    sums per position (``sum r w`` over the rows' mean weight, of every row or of its
    position's), exact, so that it does not depend on how the log is split.

    The rows' values are the rewards times their scale (a column of the rows,
    :data:`~polars_irmetrics.ope.scale.SCALE`), which the result carries for the caller
    to divide by (:func:`~polars_irmetrics.ope.scale.unscaled`).

    ``per_query=True``: each round's sum of contributions (one row per ``by`` group and
    round), exact at a power of two of the round's own; else per ``by`` group
    ``num_rounds``, each metric's sum over the number of rounds, then ``<label>_ess``
    and ``<label>_max_weight`` of its rows' weights; with ``ci=``, the interval over
    rounds.

    Each sum (the weights, their squares, the values, the rounds' values squared of the
    normal interval, scaled from a bound of them: each round's largest row value times
    its rows) is read at a power of two of its own, as the single-action
    estimators' (:class:`~polars_irmetrics.ope.sums.Summary`'s ``scaled``), and so are
    the rounds' values (each an exact sum of its rows' values) and the bootstrap's
    bucket sums: at the scale of the sum of the same terms. ``peaks``: the whole log's
    largest magnitude of each sum's terms (a split log's second pass; ``{}``: every
    scale 1, its first), ``None``: the rows are the whole log. ``refusal``: what the
    refusal of a term beyond float64's range says (``{label}`` the metric).
    """
    rnd = [*by, round_id]
    if options.per_query:
        # each round's sum at a power of two of its own (from its rows' largest value:
        # a part holds whole rounds, so every path reads the same), so that values all
        # tiny keep their digits and values of 2**96 or more are summed, as the
        # estimate's sums are; a value beyond float64's range is refused as there
        checks = [
            *checks,
            *(
                _beyond(label, [value, *_raw_of(slates, label)], refusal, round_id)
                for label, (value, _) in columns.items()
            ),
        ]
        # the scale a column of the rows first (a window), not an aggregation inside the
        # sum's: polars evaluates that group by group (ten times slower)
        owns = {label: f"{INTERNAL}{label}#own" for label in columns}
        rows = rows.with_columns(
            sum_scale(pl.col(value).cast(pl.Float64).abs().max().over(rnd)).alias(owns[label])
            for label, (value, _) in columns.items()
        )
        sums = [
            (exact_sum(pl.col(value) * pl.col(owns[label])) / pl.col(owns[label]).first()).alias(
                label
            )
            for label, (value, _) in columns.items()
        ]
        result = rows.group_by(rnd).agg(
            *sums,
            pl.col(SCALE).max(),  # the rewards' scale, divided by last
            *(e for check in checks for e in check.aggs()),
        )
        return raising(result.sort(rnd, nulls_last=True), checks, options)
    # a part holds whole rounds (of every by group), so the rounds' counts add up; a
    # round's first row (its top slot on a slate) is flagged
    normal = wants_normal(options.ci, options.ci_method)
    if slates is not None:
        rows = rows.with_columns(
            (pl.col(slates[0]) == pl.col(slates[0]).min().over(rnd)).alias(_TOP)
        )
    elif normal:
        rows = rows.with_columns((pl.int_range(pl.len()).over(rnd) == 0).alias(_TOP))
    if slates is None:
        summary = Summary(
            NUM_ROUNDS,
            pl.col(round_id).n_unique(),
            checks=checks,
            scale=SCALE,
            scaled=True,
            refusal=refusal,
        )
    else:  # sums per position; a round counted at its top row
        rows = rows.with_columns(pl.lit(1.0).alias(_ONE))
        summary = Summary(
            NUM_ROUNDS,
            pl.col(_TOP).sum(),
            checks=checks,
            within=slates[0],
            scale=SCALE,
            scaled=True,
            refusal=refusal,
        )
        summary.sums[_ONE] = pl.col(_ONE)
        summary.fixed.add(_ONE)  # a count: read at scale 1
    n = pl.col(NUM_ROUNDS).cast(pl.Float64)
    ratios: dict[str, tuple[str, str, str]] = {}  # the self-normalised: rw, w, where
    plain: dict[str, str] = {}  # the others: their rows' values
    for label, (value, weight) in columns.items():
        w = pl.col(weight)
        summary.sums.update({f"{label}:w": w, f"{label}:w2": w * w})
        summary.squares[f"{label}:w2"] = f"{label}:w"
        summary.maxima[f"{INTERNAL}{label}:max"] = w
        normalised = None if slates is None else slates[1][label][1]
        plain_value = value if slates is None else slates[1][label][0]
        summary.sums[f"{label}:v"] = pl.col(plain_value)
        values, weights = unscaled_total(f"{label}:v"), unscaled_total(f"{label}:w")
        if normalised is None:
            total = values
            plain[label] = plain_value
        else:
            ratios[label] = (plain_value, weight, normalised)
            if normalised == "all":  # sum r w / (sum w / rows)
                total = values * exact_total(_ONE) / weights
            else:  # the same within each position, added over the positions
                term = f"{INTERNAL}{label}:p"
                summary.within_outputs[term] = values * exact_total(_ONE) / weights
                total = pl.col(term)
        bounds: list[pl.Expr] = []
        if normal and normalised is None:  # the rounds' values squared, at their top rows
            # each round's value an exact sum at its rows' values' scale (the whole log's);
            # the scale of their squares from a bound of each round's value, its rows'
            # largest magnitude times their count (one rounding: the same on every path,
            # and on a split log's every pass, whatever the scale of the rows' values), a
            # column (an expression with windows would be computed again in each sum)
            at, bound = _at(plain_value), _at(f"{plain_value}#bound")
            rows = rows.with_columns(
                summary.sum_scale(f"{label}:v", peaks).alias(at),
                (pl.col(plain_value).abs().max().over(rnd) * pl.len().over(rnd)).alias(bound),
            )
            scaled = exact_sum(pl.col(plain_value) * pl.col(at)).over(rnd) / pl.col(at)
            rows = rows.with_columns(scaled.alias(_round(label)))
            x = pl.when(pl.col(_TOP)).then(pl.col(_round(label)))
            bounds = normal_interval(
                summary,
                label,
                [(x.otherwise(0.0), None)],
                f"{label}:v",
                n,
                options.ci or 0.0,
                present=pl.col(_TOP),
                peak=pl.when(pl.col(_TOP)).then(pl.col(bound)).otherwise(0.0),
            )
        summary.outputs.extend(
            [
                pl.when(n > 0).then(total / n).alias(label),
                *bounds,
                effective_sample_size(f"{label}:w", f"{label}:w2", scaled=True).alias(
                    f"{label}_ess"
                ),
                pl.col(f"{INTERNAL}{label}:max").alias(f"{label}_max_weight"),
            ]
        )
    part = summary.part(rows, by, peaks)
    sides: list[tuple[str, pl.LazyFrame, Finish]] = []
    if options.ci is not None and not normal:
        if plain:  # the bootstrap over rounds, each round's values an exact sum
            # at the scale of the sum of its rows' values (the whole log's), as the
            # bootstrap's bucket sums of them
            owner = {v: label for label, v in reversed(plain.items())}
            columns_at = sorted(owner)
            scaled_rows = rows.with_columns(
                summary.sum_scale(f"{owner[v]}:v", peaks).alias(_at(v)) for v in columns_at
            )
            rounds = scaled_rows.group_by(rnd).agg(
                *(
                    (exact_sum(pl.col(v) * pl.col(_at(v))) / pl.col(_at(v)).first()).alias(v)
                    for v in columns_at
                ),
                *(pl.col(_at(v)).first() for v in columns_at),
            )
            terms = [(label, [(pl.col(value), None)]) for label, value in plain.items()]
            scales = [pl.col(_at(value)) for value in plain.values()]
            boot = bootstrap_part(rounds, [round_id], terms, by, options, scales)
            labels = list(plain)

            def finish(result: pl.LazyFrame, buckets: pl.LazyFrame) -> pl.LazyFrame:
                return joined_intervals(result, boot.intervals(buckets), labels, by)

            sides.append((BUCKET, boot.frame, finish))
        if ratios and slates is not None:  # recomputed in each resample
            keys = (round_id, slates[0], _TOP)
            scales = [
                summary.sum_scale(f"{label}:{which}", peaks)
                for label in ratios
                for which in ("v", "w")
            ]
            ratio = ratio_part(rows, ratios, by, keys, options, scales)
            sides.append((RATIO_BUCKET, ratio.frame, ratio.finish))
    if parts:
        frame = pl.concat([part, *(f for _, f, _ in sides)], how="diagonal")
        beside = tuple((m, f) for m, _, f in sides)
        return PartsPlan(frame, summary, by, beside=beside, labels=tuple(columns))
    result = summary.merge(part, by, options)
    for _, frame, finish_with in sides:  # as PartsPlan.merge, over the one part
        result = finish_with(result, frame)
    return result
