"""Prediction metrics over a table split into parts: statistics per part, merged exactly.

The Spark and Dask engines (:mod:`polars_irmetrics.engines`) split a table by a hash
of ``query_id``; the means of :func:`polars_irmetrics.evaluate` over the whole table
then come from two steps:

1. :func:`part_statistics`, on each part: the same checks as one machine (raised in the
   part, with the one-machine message), and per ``by`` group one row of *sums* that
   every metric's value is a function of, plus, for ``auc`` and ``pr_auc``, the part's
   *score histogram* (one row per distinct score with its positives and negatives).
2. :func:`merge_statistics`, in one place per ``by`` group: the sums are added, the
   histograms merged by adding the counts of equal scores, and each metric computed
   from them.

What each metric keeps (``w`` the sample weight, 1 without; ``y`` the 0/1 label, ``v``
the label as a number, ``p`` the prediction):

==============================  ==========================================================
metric                          sums per part
==============================  ==========================================================
every one                       rows, ``W = sum w``
``logloss``, ``ne``             ``sum w ln(clipped p or 1 - p)``; ``ne`` also ``sum w y``
``brier``                       ``sum w (p - y)^2``
``calibration``                 ``sum w p``, ``sum w y``
``ece@B``                       ``sum w (p - y)`` in each of the B bins
``mse``, ``rmse``, ``r2``       ``sum w (p - v)^2``
``mae``                         ``sum w |p - v|``
``r2``, ``explained_variance``  ``sum w v`` and ``sum w (v - mean_part)^2`` (and the same
                                of ``v - p``): spreads around each part's own mean, merged
                                by the law of total variance, ``M2 = sum_k M2_k +
                                sum_k W_k (mean_k - mean)^2`` (no cancellation of large
                                sums of squares)
``gauc``                        per query its AUC and weight, computed whole in its part
                                (a query never spans two parts): ``sum share AUC_q``,
                                ``sum share`` over the queries with both classes, and the
                                count of those left out
``auc``, ``pr_auc``             the score histogram (:func:`histogram_auc`)
==============================  ==========================================================

Every value is exact in the sense that nothing is approximated (no binning of scores,
no sampling): the sums are those of one machine, added in another order, so they agree
with :func:`polars_irmetrics.evaluate` to the rounding of floating-point addition
(tested to 1e-12); an unweighted ``auc`` adds half-integers, exactly, and is equal to
the last bit to one machine's out-of-core path (``buckets=``,
:mod:`polars_irmetrics.prediction.ranges`). The merged histogram of one ``by`` group is
held in one task: its size is the number of distinct scores, not rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_irmetrics.errors import MetricParameterError
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import INTERNAL
from polars_irmetrics.metrics.prediction import (
    PredictionScope,
    ece_bin,
    ece_bins,
    entropy,
    gauc_weighting,
    histogram_auc,
    histogram_pr_auc,
    log_likelihood,
    spread,
)
from polars_irmetrics.metrics.registry import MetricRequest
from polars_irmetrics.prediction.evaluate import (
    AUC_Q,
    NEG,
    NUM_ROWS,
    POS,
    SCORE,
    WEIGHT_Q,
    beside,
    group,
    per_query_auc,
    prepare_rows,
    score_histogram,
)

__all__ = ["HISTOGRAM", "merge_statistics", "part_statistics"]

#: Boolean column of :func:`part_statistics`: a score-histogram row (else a sums row).
HISTOGRAM = f"{INTERNAL}histogram"

_N = f"{INTERNAL}s_n"
_W = f"{INTERNAL}s_w"
_LOG = f"{INTERNAL}s_log"
_Y = f"{INTERNAL}s_y"
_P = f"{INTERNAL}s_p"
_BRIER = f"{INTERNAL}s_brier"
_SQ = f"{INTERNAL}s_sq"
_ABS = f"{INTERNAL}s_abs"
_V = f"{INTERNAL}s_v"
_M2V = f"{INTERNAL}s_m2v"
_R = f"{INTERNAL}s_r"
_M2R = f"{INTERNAL}s_m2r"
_G_DEFINED = f"{INTERNAL}g_defined"
_G_ONE = f"{INTERNAL}g_one_class"
_HISTOGRAM_METRICS = ("auc", "pr_auc")


def _ece_column(bins: int, b: int) -> str:
    return f"{INTERNAL}s_ece{bins}_{b}"


def _gauc_columns(weighting: str) -> tuple[str, str]:
    return f"{INTERNAL}g_num_{weighting}", f"{INTERNAL}g_den_{weighting}"


def part_statistics(
    table: pl.LazyFrame,
    requests: Sequence[tuple[str, MetricRequest]],
    options: EvalOptions,
    labels: pl.LazyFrame | None = None,
) -> pl.LazyFrame:
    """One part's statistics of ``requests`` (module doc), lazily; the data checks of
    :func:`~polars_irmetrics.prediction.evaluate.build_prediction_plan` are raised when
    it is collected.

    Returns
    -------
    pl.LazyFrame
        Sums rows (``HISTOGRAM`` false; one per ``by`` group, one without ``by``) with
        the ``by`` keys and the sums (Float64; the rows as i64), then, when ``auc`` or
        ``pr_auc`` is asked for, histogram rows (``HISTOGRAM`` true) with the ``by`` keys,
        a score and its positives and negatives.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> log = pl.LazyFrame({"label": [1, 0, 1], "prediction": [0.5, 0.5, 0.25]})
    >>> stats = part_statistics(log, parse_metric_list(["auc"]), EvalOptions()).collect()
    >>> stats.filter("__irm_histogram").sort("__irm_score").select("__irm_score", "__irm_pos",
    ...                                                            "__irm_neg").rows()
    [(0.25, 1.0, 0.0), (0.5, 1.0, 1.0)]
    """
    if options.per_query:  # pragma: no cover - the engines evaluate per query directly
        raise MetricParameterError("part statistics are for means; per query, evaluate each part")
    prepared = prepare_rows(table, requests, options, labels)
    s, rows = prepared.scope, prepared.rows
    by = list(options.by_keys)
    sums: dict[str, pl.Expr] = {_N: pl.len(), _W: s.total}
    gauc = False
    for _, req in requests:
        name = req.metric.name
        if name in ("logloss", "ne"):
            sums[_LOG] = s.weighted(log_likelihood(s)).sum()
        if name in ("ne", "calibration"):
            sums[_Y] = s.weighted(s.y).sum()
        if name == "calibration":
            sums[_P] = s.weighted(s.p).sum()
        if name == "brier":
            sums[_BRIER] = s.weighted((s.p - s.y) ** 2).sum()
        if name in ("mse", "rmse", "r2"):
            sums[_SQ] = s.weighted((s.p - s.value) ** 2).sum()
        if name == "mae":
            sums[_ABS] = s.weighted((s.p - s.value).abs()).sum()
        if name in ("r2", "explained_variance"):
            sums[_V] = s.weighted(s.value).sum()
            sums[_M2V] = spread(s, s.value)
        if name == "explained_variance":
            sums[_R] = s.weighted(s.value - s.p).sum()
            sums[_M2R] = spread(s, s.value - s.p)
        if name == "ece":
            bins = ece_bins(req.params(1.0))
            index = ece_bin(s, bins)
            gap = s.weighted(s.p - s.y)
            for b in range(bins):
                sums[_ece_column(bins, b)] = gap.filter(index == b).sum()
        gauc = gauc or name == "gauc"
    aggs = [e.cast(pl.Int64 if c == _N else pl.Float64).alias(c) for c, e in sums.items()]
    result = prepared.grouped(by, aggs)
    if gauc:
        result = beside(result, _gauc_sums(rows, s, by, options.query_id), by)
    result = result.select(*by, *sums, *_gauc_names(gauc), *prepared.flag_columns)
    result = prepared.raising(result, by)
    result = result.with_columns(pl.lit(False).alias(HISTOGRAM))
    if not any(req.metric.name in _HISTOGRAM_METRICS for _, req in requests):
        return result
    histogram = score_histogram(rows, s, by).with_columns(pl.lit(True).alias(HISTOGRAM))
    return pl.concat([result, histogram], how="diagonal")


def _gauc_names(gauc: bool) -> list[str]:
    if not gauc:
        return []
    return [*_gauc_columns("rows"), *_gauc_columns("uniform"), _G_DEFINED, _G_ONE]


def _gauc_sums(
    rows: pl.LazyFrame, s: PredictionScope, by: list[str], query_id: str
) -> pl.LazyFrame:
    """Per ``by`` group: each weighting's ``sum share AUC_q`` and ``sum share`` over the
    queries with both classes, their count and the count of the others."""
    per_query = per_query_auc(rows, s, [*by, query_id])
    auc_q, weight_q = pl.col(AUC_Q), pl.col(WEIGHT_Q)
    defined = auc_q.is_not_null()
    aggs: list[pl.Expr] = []
    for weighting, share in (("rows", weight_q), ("uniform", pl.lit(1.0))):
        num, den = _gauc_columns(weighting)
        aggs.append((auc_q * share).filter(defined).sum().alias(num))
        aggs.append(share.filter(defined).sum().cast(pl.Float64).alias(den))
    aggs.append(defined.sum().cast(pl.Float64).alias(_G_DEFINED))
    aggs.append(auc_q.is_null().sum().cast(pl.Float64).alias(_G_ONE))
    return group(per_query, by, aggs)


def merge_statistics(
    statistics: pl.LazyFrame,
    requests: Sequence[tuple[str, MetricRequest]],
    options: EvalOptions,
) -> pl.LazyFrame:
    """The means of :func:`polars_irmetrics.evaluate` from the statistics of every part
    (of whole ``by`` groups): the columns and order of its result.

    Examples
    --------
    Two parts of one log, merged, give the log's values:

    >>> import polars as pl
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> requests = parse_metric_list(["auc", "logloss"])
    >>> a = pl.LazyFrame({"label": [1, 0], "prediction": [0.5, 0.5]})
    >>> b = pl.LazyFrame({"label": [1], "prediction": [0.25]})
    >>> parts = [part_statistics(t, requests, EvalOptions()) for t in (a, b)]
    >>> merge_statistics(pl.concat(parts, how="diagonal"), requests, EvalOptions()).collect()
    shape: (1, 3)
    ┌──────────┬──────┬──────────┐
    │ num_rows ┆ auc  ┆ logloss  │
    │ ---      ┆ ---  ┆ ---      │
    │ i64      ┆ f64  ┆ f64      │
    ╞══════════╪══════╪══════════╡
    │ 3        ┆ 0.25 ┆ 0.924196 │
    └──────────┴──────┴──────────┘
    """
    by = list(options.by_keys)
    sums = statistics.filter(~pl.col(HISTOGRAM))
    w = pl.col(_W).sum()
    log_loss = -pl.col(_LOG).sum() / w
    aggs: list[pl.Expr] = [pl.col(_N).sum().cast(pl.Int64).alias(NUM_ROWS)]
    columns = [*by, NUM_ROWS]
    histogram: list[pl.Expr] = []
    for label, req in requests:
        name = req.metric.name
        columns.append(label)
        value: pl.Expr
        if name in _HISTOGRAM_METRICS:
            formula = histogram_auc if name == "auc" else histogram_pr_auc
            histogram.append(formula(SCORE, POS, NEG).alias(label))
            continue
        if name == "gauc":
            num, den = _gauc_columns(gauc_weighting(req.params(1.0)))
            value = pl.when(pl.col(_G_DEFINED).sum() > 0).then(
                pl.col(num).sum() / pl.col(den).sum()
            )
            aggs.append(value.alias(label))
            aggs.append(pl.col(_G_ONE).sum().cast(pl.Int64).alias(f"{label}_one_class"))
            columns.append(f"{label}_one_class")
            continue
        if name == "logloss":
            value = log_loss
        elif name == "ne":
            rate = pl.col(_Y).sum() / w
            value = pl.when((rate > 0) & (rate < 1)).then(log_loss / entropy(rate))
        elif name == "brier":
            value = pl.col(_BRIER).sum() / w
        elif name == "calibration":
            clicks = pl.col(_Y).sum()
            value = pl.when(clicks > 0).then(pl.col(_P).sum() / clicks)
        elif name == "ece":
            bins = ece_bins(req.params(1.0))
            gaps = [pl.col(_ece_column(bins, b)).sum().abs() for b in range(bins)]
            value = pl.sum_horizontal(gaps) / w
        elif name in ("mse", "rmse"):
            value = pl.col(_SQ).sum() / w
            value = value.sqrt() if name == "rmse" else value
        elif name == "mae":
            value = pl.col(_ABS).sum() / w
        elif name == "r2":
            total = _merged_spread(_V, _M2V)
            value = pl.when(total > 0).then(1.0 - pl.col(_SQ).sum() / total)
        elif name == "explained_variance":
            total = _merged_spread(_V, _M2V)
            value = pl.when(total > 0).then(1.0 - _merged_spread(_R, _M2R) / total)
        else:  # pragma: no cover - every prediction metric is listed above
            raise MetricParameterError(f"metric {label!r} has no part statistics")
        aggs.append(value.alias(label))
    result = group(sums, by, aggs)
    if histogram:
        merged = (
            statistics.filter(pl.col(HISTOGRAM))
            .group_by([*by, SCORE])
            .agg(pl.col(POS).sum(), pl.col(NEG).sum())
        )
        result = beside(result, group(merged, by, histogram), by)
    result = result.select(columns)
    return result.sort(by, nulls_last=True) if by else result


def _merged_spread(total: str, m2: str) -> pl.Expr:
    """``sum w (x - mean)^2`` over every part, from each part's weight, ``sum w x`` and
    spread around its own mean: ``sum_k M2_k + sum_k W_k (mean_k - mean)^2``."""
    w, s, m = pl.col(_W), pl.col(total), pl.col(m2)
    mean = s.sum() / w.sum()
    return m.sum() + (w * (s / w - mean) ** 2).filter(w > 0).sum()
