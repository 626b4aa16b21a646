"""The last steps of the slate and cascade plans: each round's sum of its slots'
contributions, the means over rounds (with the weights' diagnostics) and the intervals
over rounds."""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import INTERNAL
from polars_irmetrics.ope.checks import Check, raising
from polars_irmetrics.ope.intervals import with_intervals
from polars_irmetrics.ope.sums import PartsPlan, Summary, exact_sum, exact_total

__all__ = ["NUM_ROUNDS", "over_rounds"]

#: The column counting the rounds (slates) of a slate estimate.
NUM_ROUNDS = "num_rounds"

_TOP = f"{INTERNAL}top"
_ONE = f"{INTERNAL}one"


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

    ``per_query=True``: each round's sum of contributions (one row per ``by`` group and
    round); else per ``by`` group ``num_rounds``, each metric's sum over the number of
    rounds, then ``<label>_ess`` and ``<label>_max_weight`` of its rows' weights; with
    ``ci=``, the interval over rounds.
    """
    rnd = [*by, round_id]
    if options.per_query:
        result = rows.group_by(rnd).agg(
            *(exact_sum(pl.col(value)).alias(label) for label, (value, _) in columns.items()),
            *(e for check in checks for e in check.aggs()),
        )
        return raising(result.sort(rnd, nulls_last=True), checks, options)
    # a part holds whole rounds (of every by group), so the rounds' counts add up
    if slates is None:
        summary = Summary(NUM_ROUNDS, pl.col(round_id).n_unique(), checks=checks)
    else:  # sums per position; a round counted at its top row
        position = slates[0]
        rows = rows.with_columns(
            (pl.col(position) == pl.col(position).min().over(rnd)).alias(_TOP),
            pl.lit(1.0).alias(_ONE),
        )
        summary = Summary(NUM_ROUNDS, pl.col(_TOP).sum(), checks=checks, within=position)
        summary.sums[_ONE] = pl.col(_ONE)
    n = pl.col(NUM_ROUNDS).cast(pl.Float64)
    for label, (value, weight) in columns.items():
        w = pl.col(weight)
        summary.sums.update({f"{label}:w": w, f"{label}:w2": w * w})
        summary.maxima[f"{INTERNAL}{label}:max"] = w
        normalised = None if slates is None else slates[1][label][1]
        if slates is None or normalised is None:
            summary.sums[f"{label}:v"] = pl.col(value if slates is None else slates[1][label][0])
            total = exact_total(f"{label}:v")
        else:
            summary.sums[f"{label}:v"] = pl.col(slates[1][label][0])
            if normalised == "all":  # sum r w / (sum w / rows)
                total = exact_total(f"{label}:v") * exact_total(_ONE) / exact_total(f"{label}:w")
            else:  # the same within each position, added over the positions
                term = f"{INTERNAL}{label}:p"
                summary.within_outputs[term] = (
                    exact_total(f"{label}:v") * exact_total(_ONE) / exact_total(f"{label}:w")
                )
                total = pl.col(term)
        summary.outputs.extend(
            [
                pl.when(n > 0).then(total / n).alias(label),
                (exact_total(f"{label}:w") ** 2 / exact_total(f"{label}:w2")).alias(
                    f"{label}_ess"
                ),
                pl.col(f"{INTERNAL}{label}:max").alias(f"{label}_max_weight"),
            ]
        )
    if parts:
        return PartsPlan(summary.part(rows, by), summary, by)
    result = summary.merge(summary.part(rows, by), by, options)
    if options.ci is None:
        return result
    values = sorted({value for value, _ in columns.values()})
    rounds = rows.group_by(rnd).agg(pl.col(values).sum())
    terms = [(label, [(pl.col(value), None)]) for label, (value, _) in columns.items()]
    return with_intervals(result, rounds, [round_id], terms, by, options)
