"""The last steps of the slate and cascade plans: each round's sum of its slots'
contributions, the means over rounds (with the weights' diagnostics) and the intervals
over rounds."""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ope.checks import Check, raising
from polars_irmetrics.ope.intervals import with_intervals

__all__ = ["NUM_ROUNDS", "over_rounds"]

#: The column counting the rounds (slates) of a slate estimate.
NUM_ROUNDS = "num_rounds"


def over_rounds(
    rows: pl.LazyFrame,
    columns: Mapping[str, tuple[str, str]],
    by: list[str],
    round_id: str,
    checks: list[Check],
    options: EvalOptions,
) -> pl.LazyFrame:
    """``columns`` maps each metric's label to its rows' contribution and weight columns.

    ``per_query=True``: each round's sum of contributions (one row per ``by`` group and
    round); else per ``by`` group ``num_rounds``, each metric's sum over the number of
    rounds, then ``<label>_ess`` and ``<label>_max_weight`` of its rows' weights; with
    ``ci=``, the interval over rounds.
    """
    rnd = [*by, round_id]
    if options.per_query:
        result = rows.group_by(rnd).agg(
            *(pl.col(value).sum().alias(label) for label, (value, _) in columns.items()),
            *(e for check in checks for e in check.aggs()),
        )
        return raising(result.sort(rnd, nulls_last=True), checks, options)
    n = pl.col(round_id).n_unique()
    aggs = [n.cast(pl.Int64).alias(NUM_ROUNDS)]
    for label, (value, weight) in columns.items():
        w = pl.col(weight)
        aggs += [
            (pl.col(value).sum() / n).alias(label),
            (w.sum() ** 2 / (w * w).sum()).alias(f"{label}_ess"),
            w.max().alias(f"{label}_max_weight"),
        ]
    aggs += [e for check in checks for e in check.aggs()]
    result = rows.group_by(by).agg(aggs).sort(by, nulls_last=True) if by else rows.select(aggs)
    result = raising(result, checks, options)
    if options.ci is None:
        return result
    values = sorted({value for value, _ in columns.values()})
    rounds = rows.group_by(rnd).agg(pl.col(values).sum())
    parts = [(label, [(pl.col(value), None)]) for label, (value, _) in columns.items()]
    return with_intervals(result, rounds, [round_id], parts, by, options)
