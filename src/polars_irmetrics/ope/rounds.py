"""The last steps of the slate and cascade plans: each round's sum of its slots'
contributions, the means over rounds (with the weights' diagnostics) and the intervals
over rounds."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import polars as pl

from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import INTERNAL
from polars_irmetrics.ope.checks import Check, raising
from polars_irmetrics.ope.intervals import BUCKET, bootstrap_part, joined_intervals
from polars_irmetrics.ope.normal import normal_interval, wants_normal
from polars_irmetrics.ope.ratio_intervals import RATIO_BUCKET, ratio_part
from polars_irmetrics.ope.scale import SCALE
from polars_irmetrics.ope.sums import (
    PartsPlan,
    Summary,
    effective_sample_size,
    exact_sum,
    exact_total,
)

#: A side merge's finish: ``(result, its rows of every part) -> result with its columns``.
Finish = Callable[[pl.LazyFrame, pl.LazyFrame], pl.LazyFrame]

__all__ = ["NUM_ROUNDS", "over_rounds"]

#: The column counting the rounds (slates) of a slate estimate.
NUM_ROUNDS = "num_rounds"

_TOP = f"{INTERNAL}top"
_ONE = f"{INTERNAL}one"


def _round(label: str) -> str:
    """A metric's round value, on each of the round's rows (the normal interval's)."""
    return f"{INTERNAL}round_{label}"


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
    round); else per ``by`` group ``num_rounds``, each metric's sum over the number of
    rounds, then ``<label>_ess`` and ``<label>_max_weight`` of its rows' weights; with
    ``ci=``, the interval over rounds.
    """
    rnd = [*by, round_id]
    if options.per_query:
        result = rows.group_by(rnd).agg(
            *(exact_sum(pl.col(value)).alias(label) for label, (value, _) in columns.items()),
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
        summary = Summary(NUM_ROUNDS, pl.col(round_id).n_unique(), checks=checks, scale=SCALE)
    else:  # sums per position; a round counted at its top row
        rows = rows.with_columns(pl.lit(1.0).alias(_ONE))
        summary = Summary(
            NUM_ROUNDS, pl.col(_TOP).sum(), checks=checks, within=slates[0], scale=SCALE
        )
        summary.sums[_ONE] = pl.col(_ONE)
    n = pl.col(NUM_ROUNDS).cast(pl.Float64)
    ratios: dict[str, tuple[str, str, str]] = {}  # the self-normalised: rw, w, where
    plain: dict[str, str] = {}  # the others: their rows' values
    for label, (value, weight) in columns.items():
        w = pl.col(weight)
        summary.sums.update({f"{label}:w": w, f"{label}:w2": w * w})
        summary.maxima[f"{INTERNAL}{label}:max"] = w
        normalised = None if slates is None else slates[1][label][1]
        plain_value = value if slates is None else slates[1][label][0]
        summary.sums[f"{label}:v"] = pl.col(plain_value)
        if normalised is None:
            total = exact_total(f"{label}:v")
            plain[label] = plain_value
        else:
            ratios[label] = (plain_value, weight, normalised)
            if normalised == "all":  # sum r w / (sum w / rows)
                total = exact_total(f"{label}:v") * exact_total(_ONE) / exact_total(f"{label}:w")
            else:  # the same within each position, added over the positions
                term = f"{INTERNAL}{label}:p"
                summary.within_outputs[term] = (
                    exact_total(f"{label}:v") * exact_total(_ONE) / exact_total(f"{label}:w")
                )
                total = pl.col(term)
        bounds: list[pl.Expr] = []
        if normal and normalised is None:  # the rounds' values squared, at their top rows
            rows = rows.with_columns(exact_sum(pl.col(plain_value)).over(rnd).alias(_round(label)))
            x = pl.when(pl.col(_TOP)).then(pl.col(_round(label)))
            bounds = normal_interval(
                summary,
                label,
                [(x.otherwise(0.0), None)],
                f"{label}:v",
                n,
                options.ci or 0.0,
                present=pl.col(_TOP),
            )
        summary.outputs.extend(
            [
                pl.when(n > 0).then(total / n).alias(label),
                *bounds,
                effective_sample_size(f"{label}:w", f"{label}:w2").alias(f"{label}_ess"),
                pl.col(f"{INTERNAL}{label}:max").alias(f"{label}_max_weight"),
            ]
        )
    part = summary.part(rows, by)
    sides: list[tuple[str, pl.LazyFrame, Finish]] = []
    if options.ci is not None and not normal:
        if plain:  # the bootstrap over rounds, each round's values an exact sum
            values = sorted(set(plain.values()))
            rounds = rows.group_by(rnd).agg(exact_sum(pl.col(v)).alias(v) for v in values)
            terms = [(label, [(pl.col(value), None)]) for label, value in plain.items()]
            boot = bootstrap_part(rounds, [round_id], terms, by, options)
            labels = list(plain)

            def finish(result: pl.LazyFrame, buckets: pl.LazyFrame) -> pl.LazyFrame:
                return joined_intervals(result, boot.intervals(buckets), labels, by)

            sides.append((BUCKET, boot.frame, finish))
        if ratios and slates is not None:  # recomputed in each resample
            keys = (round_id, slates[0], _TOP)
            ratio = ratio_part(rows, ratios, by, keys, options)
            sides.append((RATIO_BUCKET, ratio.frame, ratio.finish))
    if parts:
        frame = pl.concat([part, *(f for _, f, _ in sides)], how="diagonal")
        beside = tuple((m, f) for m, _, f in sides)
        return PartsPlan(frame, summary, by, beside=beside, labels=tuple(columns))
    result = summary.merge(part, by, options)
    for _, frame, finish_with in sides:  # as PartsPlan.merge, over the one part
        result = finish_with(result, frame)
    return result
