"""The sums behind the means of prediction metrics: integers, the same on every path.

Every mean of :func:`polars_irmetrics.evaluate` over prediction metrics (``auc``,
``logloss``, ``r2``...) is a function of a few *statistics* per ``by`` group, and every
statistic is a sum of one float per row (or per query, or per distinct score). Each
such sum is kept as whole units of 2**-64
(:func:`~polars_irmetrics.metrics.prediction.units`, Int128), so that adding them is
exact in any order and any split of the rows: one machine (in memory), the out-of-core
path (``buckets=``), and the Spark and Dask engines (:mod:`polars_irmetrics.prediction.parts`,
which add the parts' integers) hold the same integers, convert them once, and compute
each metric from them with the same float operations. The means are then equal to the
last bit on every path.

A sum whose terms reach 2**32 in magnitude (only where they are not finite: an
infinite rating, or in an expression over a group whose labels are unchecked) does not
fit the units (:func:`~polars_irmetrics.metrics.scope.beyond_fixed`); each
statistic also keeps its plain float sum and the count of such terms, and the float
sum is used where that count is not 0. Only then may two paths differ in the last bits
(they add floats in another order). Sample weights of 2**32 or more are refused (every
prediction metric is unchanged when all weights are multiplied by one number).

The rating metrics (``rmse``, ``mae``, ``mse``, ``r2``, ``explained_variance``) read
numbers of any scale: their labels and predictions are first multiplied by a power of
two ``2**k`` chosen per group from their largest magnitude ``m`` (a first pass,
:func:`scale_maxima` and :func:`scale_from`: ``m 2**k`` between ``2**9`` and ``2**12``),
and their weights by ``2**c`` (the largest weight between 1/2 and 4): exact
multiplications (a residual is scaled after the subtraction), so every term is below
``2**32`` and kept in units of ``2**-64``, and each value is unscaled once at the end
(``r2`` and ``explained_variance`` are ratios: the powers of two cancel). A term is then
exact to ``2**-92`` of the group's largest squared label or prediction, whatever its
scale, for labels and predictions from ``2**-1012`` (2e-305) to the largest float; a
squared error below that (predictions equal to the labels to about 15 significant
digits of the largest one) counts as 0. Below ``2**-1012`` (subnormal numbers, which
carry fewer digits themselves) the factor stays ``2**1022``. ``mse`` of numbers beyond
``1e154`` is infinite (its square is), ``rmse`` is not, unless a residual itself
overflows (a label of ``-1e308`` predicted ``1e308``). The binary metrics read
probabilities in ``[0, 1]`` and keep their terms unscaled: a term (a weight) below
``2**-64`` in magnitude counts as 0 there.

Per query (``per_query=True``) the query is one more group key: the same statistics
per query, and ``auc``, ``pr_auc`` (and ``gauc``, the query's AUC) from each query's
score histogram; without weights a query's AUC comes from the ranks of its scores
instead (:func:`ranked_auc`), faster and with the same bits: both give the exact
``U / (P N)`` (:func:`~polars_irmetrics.metrics.prediction.exact_auc`). The expression
functions (``irm.logloss(...)``,
:mod:`polars_irmetrics.prediction.expressions`) compute the same statistics in a group
context (:func:`group_values`; the histogram from cumulative integer sums in score
order, :func:`group_histogram`): in a user's own ``group_by`` they give the values of
:func:`polars_irmetrics.evaluate` (per query, or the means of ``by`` groups of the same
rows) to the last bit, and over a whole table its mean.

``r2`` and ``explained_variance`` read the spread of the labels (and of the residuals)
around the group's mean: two passes, first the exact mean (its sums, converted once),
then the sum of ``w (v - mean)^2`` as units. One machine computes the mean with a
window over the group (an aggregation in a group context); the engines evaluate their
parts twice (:func:`mean_terms`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import polars as pl

from polars_irmetrics.errors import MetricParameterError
from polars_irmetrics.ground.validate import INTERNAL
from polars_irmetrics.metrics.prediction import (
    PredictionScope,
    auc_area,
    ece_bin,
    ece_bins,
    entropy,
    exact_auc,
    from_units,
    gauc_weighting,
    histogram_auc,
    histogram_pr_auc,
    log_likelihood,
    pr_auc_area,
    units,
)
from polars_irmetrics.metrics.registry import MetricRequest
from polars_irmetrics.metrics.scope import beyond_fixed

__all__ = [
    "AUC_Q",
    "HISTOGRAM_METRICS",
    "MEAN_R",
    "MEAN_V",
    "NEG",
    "NUM_ROWS",
    "POS",
    "RATING_METRICS",
    "SCALE_COLUMNS",
    "SCALE_K",
    "SCORE",
    "WEIGHT_Q",
    "Total",
    "finished",
    "gauc_aggs",
    "gauc_statistics",
    "group_auc",
    "group_histogram",
    "group_values",
    "histogram_values",
    "mean_terms",
    "means_from",
    "needs_means",
    "needs_scale",
    "per_query_auc",
    "query_weight",
    "scale_from",
    "scale_maxima",
    "score_histogram",
    "statistic_aggs",
    "statistic_columns",
    "statistic_terms",
    "with_scale",
]

#: The count column of a prediction evaluation: the rows (predictions) of the group.
NUM_ROWS = "num_rows"
#: Each row's rank in its query (:func:`per_query_auc`).
_RANK = f"{INTERNAL}rank"
#: The columns of :func:`per_query_auc`: each query's AUC and weight.
AUC_Q = f"{INTERNAL}auc_q"
WEIGHT_Q = f"{INTERNAL}weight_q"
#: The columns of :func:`score_histogram`: a distinct score, its positives and
#: negatives (Int128 units of their weights).
SCORE = f"{INTERNAL}score"
POS = f"{INTERNAL}pos"
NEG = f"{INTERNAL}neg"
#: The group's mean label and mean residual (``r2``, ``explained_variance``), per row.
MEAN_V = f"{INTERNAL}mean_v"
MEAN_R = f"{INTERNAL}mean_r"
#: ``auc`` and ``pr_auc``: computed from the score histogram.
HISTOGRAM_METRICS = ("auc", "pr_auc")

_W = f"{INTERNAL}s_w"
#: The rating metrics' weights, times ``2**c`` (module doc).
_WR = f"{INTERNAL}s_wr"
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

#: ``column -> its total``: ``pl.col`` over one row per group, or a sum over parts.
Total = Callable[[str], pl.Expr]

#: The metrics that read the label as a number of any scale (module doc).
RATING_METRICS = frozenset({"rmse", "mae", "mse", "r2", "explained_variance"})
#: The scale of a group's rating statistics (:func:`scale_from`): the exponent ``k`` of
#: its labels and predictions (Float64, a whole number), the factors ``2**k`` that
#: multiply them and ``2**c`` that multiply its weights (Float64).
SCALE_K = f"{INTERNAL}scale_k"
_F = f"{INTERNAL}scale_f"
_G = f"{INTERNAL}scale_g"
SCALE_COLUMNS = (SCALE_K, _F, _G)
#: The columns of :func:`scale_maxima`: a group's largest label or prediction magnitude
#: and its largest weight.
_MAX_V = f"{INTERNAL}max_v"
_MAX_W = f"{INTERNAL}max_w"
#: The largest magnitudes are clipped to these before their exponent is taken: every
#: factor is then a float (``2**1023`` at most); labels and predictions all below
#: ``2**-1012`` (subnormal numbers, 2e-305) are scaled by ``2**1022`` only.
_LOWEST_V, _LOWEST_W, _HIGHEST = 2.0**-1012, 2.0**-1022, 2.0**1023


class _Scale(NamedTuple):
    """A group's scale (:data:`SCALE_COLUMNS`) as expressions: columns beside each row,
    or aggregations in a group context. Each factor is referred to once per term: a
    group context evaluates every reference again (a residual is scaled after the
    subtraction, which gives the same float but where it overflows)."""

    k: pl.Expr = pl.col(SCALE_K)
    f: pl.Expr = pl.col(_F)
    g: pl.Expr = pl.col(_G)

    def weights(self, s: PredictionScope) -> pl.Expr:
        return s.weights if s.w is None else s.w * self.g

    def weighted(self, s: PredictionScope, term: pl.Expr) -> pl.Expr:
        return term if s.w is None else term * (s.w * self.g)


#: The scale as columns beside each row (:func:`with_scale`).
_BESIDE = _Scale()


def _pow2(exponent: pl.Expr) -> pl.Expr:
    """``2**exponent`` (exact: a power of two within a float's range)."""
    return pl.lit(2.0, pl.Float64).pow(exponent)


def _unscaled(value: pl.Expr, exponent: pl.Expr) -> pl.Expr:
    """``value * 2**exponent`` in three exact steps (the exponent may reach about 2,050
    in magnitude, beyond a float's range)."""
    a = exponent // 3
    b = (exponent - a) // 2
    return value * _pow2(a) * _pow2(b) * _pow2(exponent - a - b)


def needs_scale(requests: Sequence[tuple[str, MetricRequest]]) -> bool:
    """Whether a rating metric is asked for: its statistics are scaled (a first pass)."""
    return any(req.metric.name in RATING_METRICS for _, req in requests)


def scale_maxima(s: PredictionScope) -> list[pl.Expr]:
    """Group context: the largest label or prediction magnitude and the largest weight
    (Float64), the first pass of the rating metrics; maxima of parts merge by their
    maximum."""
    m = pl.max_horizontal(s.value.abs().max(), s.p.abs().max())
    w = pl.lit(1.0, pl.Float64) if s.w is None else s.w.max()
    return [m.cast(pl.Float64).alias(_MAX_V), w.cast(pl.Float64).alias(_MAX_W)]


def _exponent(m: pl.Expr, top: int, lowest: float) -> pl.Expr:
    """``top - floor(log2 m)``, ``m`` clipped to ``[lowest, 2**1023]`` (0 and infinity
    too: their terms are 0, or not finite and added as floats): ``m 2**exponent`` is
    within a factor 2 of ``[2**top, 2**(top + 1))`` (the logarithm may be one off near
    a power of two); NaN for NaN."""
    return top - m.clip(lowest, _HIGHEST).log(2).floor()


def scale_from(max_v: pl.Expr, max_w: pl.Expr) -> list[pl.Expr]:
    """The columns :data:`SCALE_COLUMNS` from a group's maxima (:func:`scale_maxima`):
    labels and predictions below ``2**12`` (a residual and its spread around its mean
    below ``2**14``, a squared one below ``2**28``), weights below 4 (1 without
    weights): every term below ``2**30``."""
    k = _exponent(max_v, 10, _LOWEST_V)
    return [k.alias(SCALE_K), _pow2(k).alias(_F), _pow2(_exponent(max_w, 0, _LOWEST_W)).alias(_G)]


def with_scale(rows: pl.LazyFrame, s: PredictionScope, by: list[str]) -> pl.LazyFrame:
    """``rows`` with their group's scale (:data:`SCALE_COLUMNS`) beside each row."""
    maxima = scale_maxima(s)
    if by:
        maxima = [m.over(by) for m in maxima]
    totals = {m.meta.output_name(): m for m in maxima}
    return rows.with_columns(scale_from(totals[_MAX_V], totals[_MAX_W]))


def _ece_column(bins: int, b: int) -> str:
    return f"{INTERNAL}s_ece{bins}_{b}"


def _gauc_columns(weighting: str) -> tuple[str, str]:
    return f"{INTERNAL}g_num_{weighting}", f"{INTERNAL}g_den_{weighting}"


def needs_means(requests: Sequence[tuple[str, MetricRequest]]) -> bool:
    """Whether a metric reads a spread around the group's mean (two passes)."""
    return any(req.metric.name in ("r2", "explained_variance") for _, req in requests)


def mean_terms(s: PredictionScope, scale: _Scale = _BESIDE) -> dict[str, pl.Expr]:
    """The pass of ``r2`` and ``explained_variance`` after the scale: the terms of the
    weight, the label and the residual ``v - p`` (scaled, module doc), whose sums give
    the group's means."""
    return {
        _WR: scale.weights(s),
        _V: scale.weighted(s, s.value * scale.f),
        _R: scale.weighted(s, (s.value - s.p) * scale.f),
    }


def means_from(total: Total) -> list[pl.Expr]:
    """The group's mean label (``MEAN_V``) and mean residual (``MEAN_R``), scaled, from
    the totals of :func:`mean_terms` (statistic columns)."""
    w = _value(_WR, total)
    return [(_value(_V, total) / w).alias(MEAN_V), (_value(_R, total) / w).alias(MEAN_R)]


def statistic_terms(
    s: PredictionScope,
    requests: Sequence[tuple[str, MetricRequest]],
    means: tuple[pl.Expr, pl.Expr] = (pl.col(MEAN_V), pl.col(MEAN_R)),
    scale: _Scale = _BESIDE,
) -> dict[str, pl.Expr]:
    """Per row, the term of each statistic the ``requests`` read (module doc). The
    spreads of ``r2`` and ``explained_variance`` read the group's mean label and mean
    residual ``means``: the columns ``MEAN_V`` and ``MEAN_R`` beside each row, or (in a
    group context, :func:`group_values`) their aggregations; the rating metrics read
    the group's ``scale`` alike (:data:`SCALE_COLUMNS`)."""
    mean_v, mean_r = means
    terms: dict[str, pl.Expr] = {_W: s.weights}
    if needs_scale(requests):
        terms[_WR] = scale.weights(s)
    for _, req in requests:
        name = req.metric.name
        if name in ("logloss", "ne"):
            terms[_LOG] = s.weighted(log_likelihood(s))
        if name in ("ne", "calibration"):
            terms[_Y] = s.weighted(s.y)
        if name == "calibration":
            terms[_P] = s.weighted(s.p)
        if name == "brier":
            terms[_BRIER] = s.weighted((s.p - s.y) ** 2)
        if name in ("mse", "rmse", "r2"):
            terms[_SQ] = scale.weighted(s, ((s.p - s.value) * scale.f) ** 2)
        if name == "mae":
            terms[_ABS] = scale.weighted(s, (s.p - s.value).abs() * scale.f)
        if name in ("r2", "explained_variance"):
            terms[_M2V] = scale.weighted(s, (s.value * scale.f - mean_v) ** 2)
        if name == "explained_variance":
            terms[_M2R] = scale.weighted(s, ((s.value - s.p) * scale.f - mean_r) ** 2)
        if name == "ece":
            bins = ece_bins(req.params(1.0))
            index = ece_bin(s, bins)
            for b in range(bins):
                terms[_ece_column(bins, b)] = pl.when(index == b).then(s.weighted(s.p - s.y))
    return terms


def statistic_columns(name: str) -> tuple[str, str, str]:
    """A statistic's columns: its units (Int128), its float sum, its count of terms
    beyond the units."""
    return name, f"{name}_f", f"{name}_b"


def statistic_aggs(terms: dict[str, pl.Expr]) -> list[pl.Expr]:
    """Group context: each term's sum as units (Int128), as a float, and the count of
    terms beyond the units (:func:`statistic_columns`)."""
    aggs: list[pl.Expr] = []
    for name, term in terms.items():
        fixed, plain, beyond = statistic_columns(name)
        aggs += [
            units(term).sum().alias(fixed),
            term.sum().cast(pl.Float64).alias(plain),
            beyond_fixed(term).sum().cast(pl.Int64).alias(beyond),
        ]
    return aggs


def _value(name: str, total: Total) -> pl.Expr:
    """A statistic's sum: its units converted once, or its float sum where a term is
    beyond the units."""
    fixed, plain, beyond = statistic_columns(name)
    return pl.when(total(beyond) > 0).then(total(plain)).otherwise(from_units(total(fixed)))


def finished(
    requests: Sequence[tuple[str, MetricRequest]], total: Total = pl.col
) -> list[tuple[str, pl.Expr]]:
    """``(label, value)`` of each metric but ``auc`` and ``pr_auc``, over one row per
    ``by`` group holding the totals of its statistics (:func:`statistic_aggs`,
    :func:`gauc_statistics`; the engines add their parts' first), or (``total``) from
    the aggregations of those totals in a group context (:func:`group_values`): the
    same float operations on every path."""
    weight = _value(_W, total)
    w = pl.when(weight > 0).then(weight)  # no weight at all: every mean is null

    def log_loss() -> pl.Expr:
        return -_value(_LOG, total) / w

    def rating_mean(name: str) -> pl.Expr:  # scaled; null without weight (module doc)
        wr = _value(_WR, total)
        return pl.when(wr > 0).then(_value(name, total) / wr)

    out: list[tuple[str, pl.Expr]] = []
    for label, req in requests:
        name = req.metric.name
        value: pl.Expr
        if name in HISTOGRAM_METRICS:
            continue
        if name == "gauc":
            num, den = _gauc_columns(gauc_weighting(req.params(1.0)))
            defined = total(_G_DEFINED)
            value = pl.when(defined > 0).then(_value(num, total) / _value(den, total))
            out.append((label, value))
            out.append((f"{label}_one_class", total(_G_ONE).cast(pl.Int64)))
            continue
        if name == "logloss":
            value = log_loss()
        elif name == "ne":
            rate = _value(_Y, total) / w
            value = pl.when((rate > 0) & (rate < 1)).then(log_loss() / entropy(rate))
        elif name == "brier":
            value = _value(_BRIER, total) / w
        elif name == "calibration":
            clicks = _value(_Y, total)
            value = pl.when(clicks > 0).then(_value(_P, total) / clicks)
        elif name == "ece":
            value = _ece_gaps(ece_bins(req.params(1.0)), total) / w
        elif name == "mse":
            value = _unscaled(rating_mean(_SQ), -2 * total(SCALE_K))
        elif name == "rmse":
            value = _unscaled(rating_mean(_SQ).sqrt(), -total(SCALE_K))
        elif name == "mae":
            value = _unscaled(rating_mean(_ABS), -total(SCALE_K))
        elif name in ("r2", "explained_variance"):
            # no weight: the means are NaN (0 / 0), and polars orders NaN above 0
            spread = pl.when(_value(_WR, total) > 0).then(_value(_M2V, total))
            error = _value(_SQ if name == "r2" else _M2R, total)
            value = pl.when(spread > 0).then(1.0 - error / spread)
        else:  # pragma: no cover - every prediction metric is listed above
            raise MetricParameterError(f"metric {label!r} has no statistics")
        out.append((label, value))
    return out


def _ece_gaps(bins: int, total: Total) -> pl.Expr:
    """The sum of the bins' absolute gaps of ``ece@bins``: their units added as
    integers (exact, in any order: polars adds the floats of a horizontal sum in one
    order eagerly and in another lazily), converted once; as floats where a term is
    beyond the units."""
    columns = [statistic_columns(_ece_column(bins, b)) for b in range(bins)]
    fixed = pl.sum_horizontal([total(f).abs() for f, _, _ in columns])
    plain = pl.sum_horizontal([total(p).abs() for _, p, _ in columns])
    beyond = pl.sum_horizontal([total(b) for _, _, b in columns])
    return pl.when(beyond > 0).then(plain).otherwise(from_units(fixed))


def gauc_aggs(auc_q: pl.Expr, weight_q: pl.Expr) -> list[pl.Expr]:
    """Group context, over one row per query (its AUC ``auc_q``, null with one class,
    and its weight ``weight_q``): each weighting's ``sum share AUC_q`` and ``sum share``
    (statistics) over the queries with both classes, their count and the count of the
    others (Int64), which :func:`finished` reads for ``gauc``."""
    defined = auc_q.is_not_null()
    terms: dict[str, pl.Expr] = {}
    for weighting, share in (("rows", weight_q), ("uniform", pl.lit(1.0))):
        num, den = _gauc_columns(weighting)
        terms[num] = pl.when(defined).then(auc_q * share)
        terms[den] = pl.when(defined).then(share)
    aggs = statistic_aggs(terms)
    aggs.append(defined.sum().cast(pl.Int64).alias(_G_DEFINED))
    aggs.append(auc_q.is_null().sum().cast(pl.Int64).alias(_G_ONE))
    return aggs


def gauc_statistics(per_query: pl.LazyFrame, by: list[str]) -> pl.LazyFrame:
    """Per ``by`` group, from :func:`per_query_auc`: :func:`gauc_aggs`."""
    aggs = gauc_aggs(pl.col(AUC_Q), pl.col(WEIGHT_Q))
    return per_query.group_by(by).agg(aggs) if by else per_query.select(aggs)


def score_histogram(rows: pl.LazyFrame, scope: PredictionScope, keys: list[str]) -> pl.LazyFrame:
    """One row per (``keys`` group, distinct score): the score and the positives and
    negatives that have it, as :func:`~polars_irmetrics.metrics.prediction.units` of
    their weights (Int128)."""
    return rows.group_by([*keys, scope.p.alias(SCORE)]).agg(
        units(scope.weighted(scope.y)).sum().alias(POS),
        units(scope.weighted(1.0 - scope.y)).sum().alias(NEG),
    )


def histogram_values(
    histogram: pl.LazyFrame,
    by: list[str],
    requests: Sequence[tuple[str, MetricRequest]],
    *,
    gauc_of_query: bool = False,
) -> pl.LazyFrame:
    """Each ``by`` group's ``auc`` and ``pr_auc`` (of ``requests``; ``gauc`` too with
    ``gauc_of_query``: the group is one query, its ``gauc`` is its AUC) from its
    histogram (sorted by score once: a group keeps the order of its rows)."""
    aggs = []
    for label, req in requests:
        name = req.metric.name
        if name == "gauc" and gauc_of_query:
            name = "auc"
        if name in HISTOGRAM_METRICS:
            formula = histogram_auc if name == "auc" else histogram_pr_auc
            aggs.append(formula(POS, NEG).alias(label))
    ordered = histogram.sort(SCORE)
    return ordered.group_by(by, maintain_order=True).agg(aggs) if by else ordered.select(aggs)


def group_histogram(s: PredictionScope) -> tuple[pl.Expr, pl.Expr]:
    """Group context: the group's score histogram (:func:`score_histogram`) as the
    cumulative positives and negatives at each distinct score, in ascending order (Int128
    units of their weights): cumulative integer sums in score order read at the last row
    of each tie, the same integers in any order of the rows."""
    end = s.p.sort().is_last_distinct()  # the last row of each tie

    def through(term: pl.Expr) -> pl.Expr:
        return units(term).sort_by(s.p).cum_sum().filter(end)

    return through(s.weighted(s.y)), through(s.weighted(1.0 - s.y))


def _areas(s: PredictionScope) -> tuple[pl.Expr, pl.Expr]:
    """Group context: the ``auc`` and ``pr_auc`` of the group's rows from its cumulative
    histogram (:func:`group_histogram`), with the integers and float operations of
    :func:`~polars_irmetrics.metrics.prediction.histogram_auc` and
    :func:`~polars_irmetrics.metrics.prediction.histogram_pr_auc` over its score
    histogram (each cumulative sum is read as few times as can be: a group context
    evaluates every reference again)."""
    pos_through, neg_through = group_histogram(s)
    n1 = units(s.weighted(s.y)).sum()  # the last cumulative sums, without a sort
    n0 = units(s.weighted(1.0 - s.y)).sum()
    pos_below = pos_through.shift(1, fill_value=0)
    neg_below = neg_through.shift(1, fill_value=0)
    pos = pos_through - pos_below
    auc = auc_area(pos, neg_through - neg_below, neg_below, n1, n0)
    seen = (n1 + n0) - (pos_below + neg_below)
    pr_auc = pr_auc_area(pos, n1 - pos_below, seen, n1)
    return auc, pr_auc


def group_auc(s: PredictionScope) -> pl.Expr:
    """Group context: the ROC AUC of the group's rows, to the last bit the ``auc`` of
    :func:`histogram_values` over the same rows: without weights from the ranks of its
    scores (:func:`ranked_auc`, no sort of the rows), with weights from its histogram."""
    if s.w is None:
        return ranked_auc(s.y, s.p.rank("average"))
    return _areas(s)[0]


def ranked_auc(y: pl.Expr, rank: pl.Expr) -> pl.Expr:
    """Group context: the ROC AUC from each row's 0/1 label ``y`` and the average rank of
    its score in the group (1 = lowest): ``2U = 2 R1 - P (P + 1)`` with ``R1`` the sum of
    the positives' ranks (half-integers, so ``2 R1`` is a whole number), then
    :func:`~polars_irmetrics.metrics.prediction.exact_auc`: the same bits as the
    histogram's ``auc`` (whose counts are whole numbers without weights)."""
    # 64-bit integers: exact up to 3e9 rows in the group (n (n + 1) < 2**63)
    i64 = pl.Int64
    two_r1 = (y * rank * 2.0).cast(i64).sum()
    n1 = y.cast(i64).sum()
    n0 = pl.len().cast(i64) - n1
    return pl.when((n1 > 0) & (n0 > 0)).then(exact_auc(two_r1 - n1 * (n1 + 1), n1, n0))


def query_weight(s: PredictionScope) -> pl.Expr:
    """Group context: a query's weight in ``gauc``: its rows, or the sum of its sample
    weights (as units, converted once)."""
    w = s.w
    return pl.len().cast(pl.Float64) if w is None else from_units(units(w).sum())


def per_query_auc(rows: pl.LazyFrame, scope: PredictionScope, query: list[str]) -> pl.LazyFrame:
    """One row per query (the ``query`` keys): its AUC (``AUC_Q``, null with one class)
    and its weight (``WEIGHT_Q``): without weights from the ranks of its scores (a
    window, :func:`ranked_auc`), with weights from the queries' score histograms
    (:func:`score_histogram`, :func:`histogram_auc`); the same to the last bit in any
    order of its rows, and as :func:`group_auc` and :func:`query_weight` give them. A
    row's positive and negative units add up to the units of its weight (its label is 0
    or 1), so the weight is the histogram's total."""
    if scope.w is None:  # ranks by a window (no sort of the rows), then sums per query
        ranked = rows.with_columns(scope.p.rank("average").over(query).alias(_RANK))
        return ranked.group_by(query).agg(
            ranked_auc(scope.y, pl.col(_RANK)).alias(AUC_Q),
            pl.len().cast(pl.Float64).alias(WEIGHT_Q),
        )
    total = from_units(pl.col(POS).sum() + pl.col(NEG).sum())
    return (
        score_histogram(rows, scope, query)
        .sort(SCORE)
        .group_by(query, maintain_order=True)
        .agg(histogram_auc(POS, NEG).alias(AUC_Q), total.alias(WEIGHT_Q))
    )


def _totals(aggs: list[pl.Expr]) -> dict[str, pl.Expr]:
    return {a.meta.output_name(): a for a in aggs}


def group_values(
    s: PredictionScope,
    requests: Sequence[tuple[str, MetricRequest]],
    *,
    gauc_of_query: bool = False,
) -> dict[str, pl.Expr]:
    """Group context (``group_by(...).agg``, ``select``): each metric's value over the
    rows of the group, by label, from the same statistics and the same float operations
    as :func:`finished` and :func:`histogram_values`: to the last bit the value that
    :func:`polars_irmetrics.evaluate` gives for a ``by`` group of the same rows (in any
    order). ``gauc`` reads the query column and averages each query's AUC over the
    group's queries; with ``gauc_of_query`` (the group is one query: ``per_query=True``)
    it is the group's AUC. The ``<label>_one_class`` count of ``gauc`` is left out."""
    values: dict[str, pl.Expr] = {}
    rest: list[tuple[str, MetricRequest]] = []
    auc, pr_auc = group_auc(s), _areas(s)[1]
    for label, req in requests:
        name = req.metric.name
        if name == "auc" or (name == "gauc" and gauc_of_query):
            values[label] = auc
        elif name == "pr_auc":
            values[label] = pr_auc
        else:
            rest.append((label, req))
    if not rest:
        return values
    means = (pl.col(MEAN_V), pl.col(MEAN_R))
    scale, scale_k = _BESIDE, pl.col(SCALE_K)
    if needs_scale(rest):
        maxima = _totals(scale_maxima(s))
        columns = _totals(scale_from(maxima[_MAX_V], maxima[_MAX_W]))
        scale = _Scale(*(columns[c] for c in SCALE_COLUMNS))
        scale_k = columns[SCALE_K]
    if needs_means(rest):
        mean_totals = _totals(statistic_aggs(mean_terms(s, scale)))
        mean_v, mean_r = means_from(lambda c: mean_totals[c])
        means = (mean_v, mean_r)
    totals = _totals(statistic_aggs(statistic_terms(s, rest, means, scale)))
    totals[SCALE_K] = scale_k
    if any(req.metric.name == "gauc" for _, req in rest):
        query = pl.col(s.query_id)
        first = query.is_first_distinct()
        auc_q = group_auc(s).over(query).filter(first)
        weight_q = query_weight(s).over(query).filter(first)
        totals.update(_totals(gauc_aggs(auc_q, weight_q)))
    labels = {label for label, _ in rest}
    values.update((k, v) for k, v in finished(rest, lambda c: totals[c]) if k in labels)
    return values
