"""``auc`` and ``pr_auc`` out of core, exactly: score ranges on disk, one at a time.

With ``buckets=`` a number or ``"auto"``, :func:`polars_irmetrics.evaluate` computes
the global ``auc`` and ``pr_auc`` of each ``by`` group in passes that run when the plan
is collected (behind :func:`polars.defer`), with memory bounded by one score range:

1. **Ranges.** One streaming pass finds the smallest and largest finite score; a second
   counts the rows of 4,096 equal-width slices of that interval (computed on the scores
   times a power of two, exactly, so that any finite scores have a finite width: from
   subnormal ones to ``±1.7e308``) (a ``group_by`` of at
   most 4,096 rows), and consecutive slices are joined into ``N`` ranges of about equal
   row counts (``N`` = ``buckets``, or one per 2 million rows for ``"auto"``). The
   ranges keep the scores' order: every score of range *b* is below every score of
   range *b + 1* (infinite scores go to the first and last range). The slices and
   ranges read each score's float64 value (a map that keeps the order); the score
   itself is kept in its own dtype, so that integers beyond ``2**53`` that differ by 1
   stay two scores in the histograms.
2. **Split.** One streaming pass writes each row's ``by`` keys, score, and (weighted)
   positive and negative to Parquet, partitioned by range
   (:func:`~polars_irmetrics.ground.buckets.sink_buckets`).
3. **Evaluate.** One streaming pass counts each ``by`` group's positives and negatives
   (integer units of 2**-64). The ranges are then read one at a time, from the highest
   scores down. Each range's score histogram (its distinct scores' positives and
   negatives, in units) gives, with the totals and the positives and rows of the ranges
   above carried down (integers), each score's exact counts below and above it, hence
   its AUC and average precision terms
   (:func:`~polars_irmetrics.metrics.prediction.auc_term`), added as units.
4. **Merge.** The ranges' units are added and converted once.

The values are those of :func:`~polars_irmetrics.metrics.prediction.histogram_auc` on the
whole histogram to the last bit: the same integers and the same float operations per
score, only added by range (integers, exactly). Peak memory is
that of the largest range's histogram plus the split's buffers; a range is as large as
the 4,096 slices allow: scores concentrated in one slice of ``[min, max]`` (a few huge
outliers) make one large range. Measured in ``benchmarks/results_prediction.md``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import polars as pl

from polars_irmetrics.ground.buckets import (
    Buckets,
    bucket_count,
    keep_spill_cleanup,
    read_bucket,
    sink_buckets,
    spilling,
)
from polars_irmetrics.ground.progress import track
from polars_irmetrics.ground.validate import INTERNAL
from polars_irmetrics.metrics.prediction import (
    AREA,
    PredictionScope,
    auc_term,
    doubled_u,
    exact_auc,
    from_units,
    pr_auc_term,
    rows_of,
    units,
    whole_rows,
)
from polars_irmetrics.metrics.registry import MetricRequest
from polars_irmetrics.prediction.statistics import score_of

__all__ = ["SLICES", "ranked_in_ranges"]

#: Equal-width slices of ``[min, max]`` that the ranges are made of.
SLICES = 4096

_SCORE = f"{INTERNAL}score"
_POS = f"{INTERNAL}pos"
_NEG = f"{INTERNAL}neg"
_SLICE = f"{INTERNAL}slice"
_LOCAL = f"{INTERNAL}auc_local"
_GAIN = f"{INTERNAL}ap_gain"
_TWO_U = f"{INTERNAL}two_u"
_WHOLE = f"{INTERNAL}whole"
_P = f"{INTERNAL}range_pos"
_N = f"{INTERNAL}range_neg"
_H = f"{INTERNAL}above_pos"
_S = f"{INTERNAL}above_rows"
_TP = f"{INTERNAL}total_pos"
_TN = f"{INTERNAL}total_neg"


def ranked_in_ranges(
    rows: pl.LazyFrame,
    scope: PredictionScope,
    by: list[str],
    requests: Sequence[tuple[str, MetricRequest]],
    buckets: Buckets,
    spill_dir: str | Path | None,
    progress: bool | None = None,
) -> pl.LazyFrame:
    """Each ``by`` group's ``auc`` and ``pr_auc`` (the ``requests``), out of core (module
    doc); nothing runs before the result is collected.

    Returns
    -------
    pl.LazyFrame
        One row per ``by`` group (one row without ``by``): the keys, then one Float64
        column per request, null where undefined (one class; no positive). A bar counts
        the ranges read (``progress``, as :func:`~polars_irmetrics.ground.progress.track`).

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.metrics.prediction import PredictionScope
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> log = pl.LazyFrame({"label": [1, 0, 1, 0], "prediction": [0.9, 0.1, 0.4, 0.6]})
    >>> requests = parse_metric_list(["auc"])
    >>> plan = ranked_in_ranges(log, PredictionScope(), [], requests, 2, None)
    >>> plan.collect().item()
    0.75
    """
    s = scope
    schema = rows.select(*by).collect_schema()
    labels = [(label, req.metric.name) for label, req in requests]
    out_schema = pl.Schema([*schema.items(), *((label, pl.Float64()) for label, _ in labels)])
    # the score in its own dtype (integers beyond 2**53 stay distinct); its float64 value
    # only places it in a range (a monotone map: the ranges keep the scores' order)
    scored = rows.filter(s.p.is_not_null() & s.p.is_not_nan()).select(
        *by,
        score_of(s).alias(_SCORE),
        s.weighted(s.y).alias(_POS),
        s.weighted(1.0 - s.y).alias(_NEG),
    )

    keep_spill_cleanup()  # a SIGTERM while the caller collects removes the spill folder

    def compute() -> pl.DataFrame:
        with spilling(spill_dir) as folder:
            count = buckets if isinstance(buckets, int) else bucket_count(scored, "auto")
            ranges = _split(scored, count, folder)
            kept = scored.collect_schema()
            per_range: list[pl.DataFrame] = []
            totals = _totals(scored, by)
            # nothing above the first range
            zero = pl.lit(0, dtype=pl.Int128)
            above = totals.with_columns(zero.alias(_H), zero.alias(_S))
            for b in track(reversed(range(ranges)), "score ranges", ranges, enabled=progress):
                local = _range_sums(read_bucket(folder, b, kept), by, above).collect()
                per_range.append(local)
                above = _carried(above, local, by)
            return _merged(per_range, totals, by, labels, out_schema)

    return pl.defer(compute, schema=out_schema)


def _split(scored: pl.LazyFrame, count: int, folder: Path) -> int:
    """Write the rows by score range (module doc, steps 1 and 2); the number of ranges."""
    score = pl.col(_SCORE).cast(pl.Float64)
    finite = score.filter(score.is_finite())
    low, high = (
        scored.select(finite.min().alias("low"), finite.max().alias("high")).collect().row(0)
    )
    low = 0.0 if low is None else low
    high = low if high is None else high
    # the scores times a power of two that brings the largest finite magnitude to [1/2, 1)
    # (two exact factors: it may be beyond a float's range): the width of [low, high] is
    # then finite (scores from -1.7e308 to 1.7e308) and not subnormal (subnormal scores),
    # and so is its reciprocal
    exponent = math.frexp(max(abs(low), abs(high)))[1]
    first = math.ldexp(1.0, -exponent // 2)
    second = math.ldexp(1.0, -exponent - (-exponent // 2))
    low, high = low * first * second, high * first * second
    width = high - low if high > low else 1.0
    scaled = score * first * second
    slice_of = ((scaled - low) / width * SLICES).floor().clip(0, SLICES - 1)
    slice_of = slice_of.cast(pl.Int64)
    counts = scored.group_by(slice_of.alias(_SLICE)).agg(pl.len().alias(_N)).sort(_SLICE).collect()
    total = int(counts[_N].sum())
    if total == 0:
        return 0
    # each slice's range: its first row's place among all rows, times count / total
    before = counts[_N].cum_sum() - counts[_N]
    range_of = (before * count // total).cast(pl.Int64)
    # the ranges' first slices, and the scores where they start: a row's range is found
    # by a binary search of its score among them (numpy, block by block); a score on a
    # boundary may land in the range beside the one its slice counted in, which changes
    # the ranges' sizes, never their order
    starts = counts.filter(range_of.diff().fill_null(1) > 0)[_SLICE].to_list()
    bounds = np.array([low + start * width / SLICES for start in starts[1:]], dtype=np.float64)

    def range_of_scores(scores: pl.Series) -> pl.Series:
        values = scores.cast(pl.Float64).to_numpy() * first * second
        return pl.Series(np.searchsorted(bounds, values, side="right"), dtype=pl.Int64)

    key = pl.col(_SCORE).map_batches(range_of_scores, return_dtype=pl.Int64, is_elementwise=True)
    sink_buckets(scored, key, folder)
    return len(starts)


def _totals(scored: pl.LazyFrame, by: list[str]) -> pl.DataFrame:
    """Each ``by`` group's positives and negatives (units, Int128): one streaming pass."""
    aggs = [units(pl.col(_POS)).sum().alias(_TP), units(pl.col(_NEG)).sum().alias(_TN)]
    return (scored.group_by(by).agg(aggs) if by else scored.select(aggs)).collect()


def _range_sums(part: pl.LazyFrame, by: list[str], above: pl.DataFrame) -> pl.LazyFrame:
    """Per ``by`` group of one range: the units of its scores' AUC and average precision
    terms (:func:`~polars_irmetrics.metrics.prediction.auc_term`, from the same integers
    as the whole histogram: the group's totals and the positives and rows of the ranges
    above), and the range's positives and negatives."""
    histogram = part.group_by([*by, _SCORE]).agg(
        units(pl.col(_POS)).sum().alias(_POS), units(pl.col(_NEG)).sum().alias(_NEG)
    )
    carried = above.lazy()
    if by:
        histogram = histogram.join(carried, on=by, how="left", nulls_equal=True)
    else:
        histogram = histogram.join(carried, how="cross")
    pos = pl.col(_POS).sort_by(_SCORE, descending=True)
    neg = pl.col(_NEG).sort_by(_SCORE, descending=True)
    h_above, s_above = pl.col(_H).first(), pl.col(_S).first()
    n1, n0 = pl.col(_TP).first(), pl.col(_TN).first()
    hits = h_above + pos.cum_sum()
    seen = s_above + (pos + neg).cum_sum()
    # the negatives below each score: all but those above the range and at or above it
    below = n0 - (s_above - h_above) - neg.cum_sum()
    aggs = [
        units(auc_term(pos, neg, below, n1, n0)).sum().alias(_LOCAL),
        units(pr_auc_term(pos, hits, seen, n1)).sum().alias(_GAIN),
        doubled_u(pos, neg, below).alias(_TWO_U),
        whole_rows(pos, neg).alias(_WHOLE),
        pos.sum().alias(_P),
        neg.sum().alias(_N),
    ]
    return histogram.group_by(by).agg(aggs) if by else histogram.select(aggs)


def _carried(above: pl.DataFrame, local: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """The totals, and the positives and rows of the ranges above the next one, per
    ``by`` group."""
    if not by:
        h, s = above[_H].item() + local[_P].item(), above[_S].item()
        s += local[_P].item() + local[_N].item()
        return above.with_columns(
            pl.lit(h, dtype=pl.Int128).alias(_H), pl.lit(s, dtype=pl.Int128).alias(_S)
        )
    added = local.select(*by, pl.col(_P).alias("p"), (pl.col(_P) + pl.col(_N)).alias("s"))
    both = above.join(added, on=by, how="left", nulls_equal=True)
    return both.select(
        *by,
        _TP,
        _TN,
        (pl.col(_H) + pl.col("p").fill_null(0)).alias(_H),
        (pl.col(_S) + pl.col("s").fill_null(0)).alias(_S),
    )


def _merged(
    per_range: list[pl.DataFrame],
    totals: pl.DataFrame,
    by: list[str],
    labels: list[tuple[str, str]],
    schema: pl.Schema,
) -> pl.DataFrame:
    """Each ``by`` group's values from its ranges' sums (module doc, step 4): the units
    added (integers, exactly), converted once."""
    if not per_range:
        empty = pl.DataFrame(schema=schema)
        return empty if by else pl.DataFrame({c: [None] for c in schema}, schema=schema)
    sums = pl.concat(per_range, how="vertical_relaxed")
    aggs = [pl.col(_LOCAL).sum(), pl.col(_GAIN).sum(), pl.col(_TWO_U).sum(), pl.col(_WHOLE).all()]
    sums = sums.group_by(by).agg(aggs) if by else sums.select(aggs)
    sums = sums.join(totals, on=by, how="left", nulls_equal=True) if by else sums.hstack(totals)
    n1, n0 = pl.col(_TP), pl.col(_TN)
    # whole counts (no weights): the exact AUC, as auc_area gives it on the whole histogram
    exact = exact_auc(pl.col(_TWO_U), rows_of(n1), rows_of(n0))
    area = pl.when(pl.col(_WHOLE)).then(exact).otherwise(from_units(pl.col(_LOCAL)) / AREA)
    formulas = {
        "auc": pl.when((n1 > 0) & (n0 > 0)).then(area),
        "pr_auc": pl.when(n1 > 0).then(from_units(pl.col(_GAIN)) / AREA),
    }
    out = sums.select(*by, *(formulas[name].alias(label) for label, name in labels))
    return out.select(schema.names()).cast(schema)
