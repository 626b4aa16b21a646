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

A sum whose terms reach 2**32 in magnitude (only where they are not finite: in an
expression over a group whose labels are unchecked, an infinite rating) does not
fit the units (:func:`~polars_irmetrics.metrics.scope.beyond_fixed`); each
statistic also keeps its plain float sum and the count of such terms, and the float
sum is used where that count is not 0. Only then may two paths differ in the last bits
(they add floats in another order). Sample weights of 2**32 or more, and positive ones
below 2**-30, are refused (:mod:`polars_irmetrics.prediction.evaluate`): a weight in
``[2**-30, 2**32)`` is held to ``2**-34`` of itself or better by the units of 2**-64
unscaled (the score histograms of ``auc``, ``pr_auc`` and ``gauc``), whereas a smaller
one would lose digits there (one below 2**-64 counts 0). Every prediction metric is
unchanged when all weights are multiplied by one number only while they stay in that
range.

The rating metrics (``rmse``, ``mae``, ``mse``, ``r2``, ``explained_variance``) read
numbers of any finite scale. Each quantity they square is scaled by a power of two
chosen per group from its own extent, found by a first pass (:func:`scale_maxima`: the
smallest and largest label and half residual, and the largest weight, over the rows of
non-zero weight; :func:`scale_from`):

* the *half residual* ``h = v/2 - p/2`` (half, so that it never overflows: ``v - p``
  does for a label of ``-1e308`` predicted ``1e308``), times ``2**k`` chosen from the
  largest ``|h|`` (the squared and absolute errors of ``mse``, ``rmse``, ``mae`` and
  ``r2``);
* the label less the middle ``c`` of the group's labels, ``(v - c) 2**kt``, ``kt`` from
  their half range (the spread of ``r2`` and ``explained_variance``);
* the half residual less the middle of the half residuals, ``(h - cu) 2**ku`` (the
  spread of the residuals of ``explained_variance``);

each then between ``2**9`` and ``2**13`` in magnitude at its largest; the weights are
multiplied by ``2**c`` (the largest weight between 1/2 and 4). The multiplications are
exact, so every term is below ``2**30`` and kept in units of ``2**-64`` (a spread is
summed around the group's exact mean of the same scaled quantity, a second pass), and
each value is unscaled once at the end (``r2`` and ``explained_variance``: the ratio of
two sums times ``2**(2 + 2 kt - 2 k)``, :func:`finished`). A square is then exact to
``2**-82`` of the largest square of its kind (at least ``2**18``), whatever the scale
of the data and whatever its offset: labels of ``1e6`` plus noise of ``1e-3`` have
their spread scaled from ``1e-3``, not from ``1e6``, and errors of ``1e-9`` beside
labels of 1 are scaled from ``1e-9``. Halving is exact but for subnormal numbers (below
``2**-1022``, where it may be off by ``2**-1075``); a group whose extents are all below
``2**-1012`` keeps the factor ``2**1022``. A value beyond float64's range (``mse`` of
errors beyond ``1e154``, ``r2`` of errors ``1e154`` times the labels' spread) is
infinite: the plan of :func:`polars_irmetrics.evaluate` then warns, and refuses
infinite labels and predictions for these metrics
(:mod:`polars_irmetrics.prediction.evaluate`). Rows of weight 0 add nothing: their
terms are 0 whatever their size, and they take no part in the scale.

The probability metrics (``logloss``, ``ne``, ``brier``, ``calibration``, ``ece``) scale
each of their statistics (the weights, the log-likelihoods, the positives, the
probabilities, the squared errors, the gaps of ``ece``: :func:`probability_statistics`)
by a power of two ``2**k`` of its own, chosen per group from the largest magnitude of its
terms by the same first pass (:func:`scale_maxima`, :func:`scale_from`). ``k`` is 0 where
that largest term is in ``[2**-20, 2**30)`` (every probability metric of probabilities
in ``[1e-3, 1]``): the units, and so the values, of the unscaled sums, each term held to
``2**-44`` of the largest or better. Otherwise the largest scaled term is in ``[2**27,
2**30)``: unscaled, a term below ``2**-30`` lost digits (``calibration`` of
probabilities near 1e-18 was 2% off, and 0 near 1e-30; ``brier`` of negatives near
1e-12 was 0; ``logloss`` of certain predictions, every term ``ln(1 - 2**-52)``, was
2.4e-4 off). ``k`` is at most 1022 (the largest term is clipped to ``2**-994``): a
subnormal term, times ``2**1022``, is still whole units of ``2**-64``. Each value is the
ratio of two scaled sums times ``2**(k_den - k_num)`` (:func:`finished`): exact where it
is a normal float. The terms are computed once, beside the rows
(:func:`with_probability_terms`), for the first pass and the sums.

``logloss`` (and ``ne``) clip a probability to ``[eps, 1 - eps]`` with ``eps`` the
machine epsilon of the prediction column's dtype, as scikit-learn's ``log_loss`` does
(``np.finfo(y_pred.dtype).eps``): ``2**-23`` for ``Float32``, ``2**-10`` for
``Float16``, ``2**-52`` for ``Float64`` and every other dtype (scikit-learn reads them as
float64); the logarithms are taken in float64 (scikit-learn computes in the input's
dtype: its float32 values differ from these in the 7th digit).

``auc``, ``pr_auc`` and ``gauc`` order the rows by the prediction column in its own
dtype (:func:`score_of`): integer scores beyond ``2**53`` (``Int64``, ``UInt64``) that
differ by 1 are two scores, as in scikit-learn on integers, not one tie of their float64
values.

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
then the sum of ``w (v - mean)^2`` as units. One machine computes the scale and the
means of its groups with a ``group_by`` joined back to their rows (an aggregation in a
group context); the engines evaluate their parts once more for each
(:func:`scale_maxima`, :func:`mean_terms`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
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
    "SCALE_EXPONENTS",
    "SCALE_K",
    "SCALE_KT",
    "SCALE_KU",
    "SCALE_MINIMA",
    "SCALE_PREFIX",
    "SCORE",
    "WEIGHT_Q",
    "Scaled",
    "Total",
    "beside_every_row",
    "finished",
    "gauc_aggs",
    "gauc_statistics",
    "group_auc",
    "group_histogram",
    "group_values",
    "histogram_values",
    "is_scale_column",
    "mean_terms",
    "means_from",
    "needs_means",
    "needs_rating_scale",
    "needs_scale",
    "per_query_auc",
    "probability_statistics",
    "query_weight",
    "reads_query_id",
    "scale_columns",
    "scale_exponents",
    "scale_from",
    "scale_maxima",
    "score_histogram",
    "score_of",
    "statistic_aggs",
    "statistic_columns",
    "statistic_terms",
    "with_probability_terms",
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
#: The scale of a group's rating statistics (:func:`scale_from`, module doc), Float64:
#: the exponent ``k`` of its half residuals and their factor ``2**k``, the factor
#: ``2**c`` of its weights, the exponent ``kt``, factor and middle of its labels, and
#: the exponent ``ku``, factor and middle of its half residuals (the exponents are
#: whole numbers).
SCALE_K = f"{INTERNAL}scale_k"
_F = f"{INTERNAL}scale_f"
_G = f"{INTERNAL}scale_g"
SCALE_KT = f"{INTERNAL}scale_kt"
_FT = f"{INTERNAL}scale_ft"
_CT = f"{INTERNAL}scale_ct"
SCALE_KU = f"{INTERNAL}scale_ku"
_FU = f"{INTERNAL}scale_fu"
_CU = f"{INTERNAL}scale_cu"
SCALE_COLUMNS = (SCALE_K, _F, _G, SCALE_KT, _FT, _CT, SCALE_KU, _FU, _CU)
#: The exponents :func:`finished` unscales the rating metrics with.
SCALE_EXPONENTS = (SCALE_K, SCALE_KT, SCALE_KU)
#: The columns of :func:`scale_maxima`: a group's smallest and largest label and half
#: residual (over its rows of non-zero weight) and its largest weight; the parts' merge
#: by their minimum (:data:`SCALE_MINIMA`) or maximum.
_LO_V = f"{INTERNAL}lo_v"
_HI_V = f"{INTERNAL}hi_v"
_LO_H = f"{INTERNAL}lo_h"
_HI_H = f"{INTERNAL}hi_h"
_MAX_W = f"{INTERNAL}max_w"
SCALE_MINIMA = (_LO_V, _LO_H)
#: The extents are clipped to these before their exponent is taken: every factor is
#: then a float (``2**1022`` at most); extents all below ``2**-1012`` (subnormal
#: numbers, 2e-305) are scaled by ``2**1022`` only.
_LOWEST_V, _LOWEST_W, _HIGHEST = 2.0**-1012, 2.0**-1022, 2.0**1023
#: Every column of a group's scale starts with this (:func:`is_scale_column`).
SCALE_PREFIX = f"{INTERNAL}scale_"

#: The statistics of the probability metrics, each scaled by a power of two of its own
#: (module doc): the weights, the log-likelihoods, the positives, the probabilities, the
#: squared errors, and the gaps of ``ece`` (one scale for the bins of every ``ece@B``).
_ECE = f"{INTERNAL}s_ece"
_PROBABILITY_STATISTICS = (_W, _LOG, _Y, _P, _BRIER, _ECE)
#: The statistics each probability metric reads.
_PROBABILITY_READS: dict[str, tuple[str, ...]] = {
    "logloss": (_W, _LOG),
    "ne": (_W, _LOG, _Y),
    "brier": (_W, _BRIER),
    "calibration": (_Y, _P),
    "ece": (_W, _ECE),
}
#: A probability statistic whose largest term is in ``[2**-20, 2**30)`` keeps its units
#: as they are (factor 1: every term is held to ``2**-44`` of the largest or better, and
#: the values of ordinary probabilities keep their bits); any other is scaled to a
#: largest term in ``[2**27, 2**30)`` (:func:`_probability_exponent`); the largest
#: terms are clipped to ``2**-994`` first, so that every factor is a float.
_ORDINARY_LOW_EXP, _ORDINARY_HIGH_EXP, _TOP_P, _LOWEST_P = -20, 30, 28, 2.0**-994


class Scaled(NamedTuple):
    """A term of a probability statistic: ``term`` scaled (its units are summed) and
    ``raw`` unscaled (its float sum, and its count of terms that are not finite, for the
    fallback of :func:`statistic_aggs`: that sum is then not finite either, and the
    same scaled or not). A group context reads the scale once for each term this way,
    not three times."""

    term: pl.Expr
    raw: pl.Expr


class _Scale(NamedTuple):
    """A group's scale (:data:`SCALE_COLUMNS`, in their order) as expressions: columns
    beside each row, or aggregations in a group context. Each factor is referred to
    once per term: a group context evaluates every reference again."""

    k: pl.Expr = pl.col(SCALE_K)
    f: pl.Expr = pl.col(_F)
    g: pl.Expr = pl.col(_G)
    kt: pl.Expr = pl.col(SCALE_KT)
    ft: pl.Expr = pl.col(_FT)
    ct: pl.Expr = pl.col(_CT)
    ku: pl.Expr = pl.col(SCALE_KU)
    fu: pl.Expr = pl.col(_FU)
    cu: pl.Expr = pl.col(_CU)
    #: the factors of the probability statistics by column (:func:`_factor_column`),
    #: in a group context; ``None``: the columns beside each row
    factors: Mapping[str, pl.Expr] | None = None

    def weights(self, s: PredictionScope) -> pl.Expr:
        return s.weights if s.w is None else s.w * self.g

    def weighted(self, s: PredictionScope, term: pl.Expr) -> pl.Expr:
        """``term`` times the scaled weight; 0 where the weight is 0 (such a row takes
        no part in the scale: its term may be beyond any float)."""
        w = s.w
        if w is None:
            return term
        return pl.when(w != 0).then(term * (w * self.g)).otherwise(0.0)

    def label(self, s: PredictionScope) -> pl.Expr:
        """The label less the group's middle label, scaled (the spread of ``r2``)."""
        return (s.value - self.ct) * self.ft

    def residual(self, s: PredictionScope) -> pl.Expr:
        """The half residual less the group's middle one, scaled (the spread of the
        residuals of ``explained_variance``)."""
        return (half_residual(s) - self.cu) * self.fu

    def probability(self, s: PredictionScope, statistic: str) -> Scaled:
        """A probability statistic's term times its group's factor (exact: a power of
        two, module doc), and unscaled: beside each row, the term is a column too
        (:func:`with_probability_terms`: computed once for the scale and the sums)."""
        column = _factor_column(statistic)
        if self.factors is None:
            raw = pl.col(_term_column(statistic))
            return Scaled(raw * pl.col(column), raw)
        raw = _probability_term(s, statistic)
        return Scaled(raw * self.factors[column], raw)


#: The scale as columns beside each row (:func:`with_scale`).
_BESIDE = _Scale()


def _pow2(exponent: pl.Expr) -> pl.Expr:
    """``2**exponent`` (exact: a power of two within a float's range)."""
    return pl.lit(2.0, pl.Float64).pow(exponent)


def _unscaled(value: pl.Expr, exponent: pl.Expr) -> pl.Expr:
    """``value * 2**exponent`` in five steps, each exact where the result is a normal
    float (the exponent may reach about 4,100 in magnitude, beyond a float's range: each
    step's is at most 819, and all have its sign, so a step overflows or underflows
    only where the result does)."""
    part = exponent // 5
    step = _pow2(part)
    return value * step * step * step * step * _pow2(exponent - 4 * part)


def _unscaled_ratio(ratio: pl.Expr, exponent: pl.Expr) -> pl.Expr:
    """A ratio of two probability statistics times ``2**exponent``, their exponents'
    difference: in ``[-1025, 67]`` for weights in ``[2**-30, 2**32)`` (and ``k`` at most
    1022, module doc), so that ``2**exponent`` is a float (a subnormal one below
    ``2**-1022``, exact too) and one product is exact where the value is a normal float
    (rounded once where it is not); ``exponent`` is read once (a group context evaluates
    every reference again)."""
    return ratio * _pow2(exponent)


def half_residual(s: PredictionScope) -> pl.Expr:
    """Each row's half residual ``v/2 - p/2``: finite for any finite label and
    prediction (``v - p`` overflows for ``-1e308`` predicted ``1e308``), and exactly
    half of ``v - p`` rounded, but for subnormal numbers (module doc)."""
    return s.value * 0.5 - s.p * 0.5


def needs_rating_scale(requests: Sequence[tuple[str, MetricRequest]]) -> bool:
    """Whether a rating metric is asked for: its statistics are scaled from the extents
    of the labels and half residuals (:data:`SCALE_COLUMNS`)."""
    return any(req.metric.name in RATING_METRICS for _, req in requests)


def probability_statistics(requests: Sequence[tuple[str, MetricRequest]]) -> tuple[str, ...]:
    """The statistics of the probability metrics asked for (``logloss``, ``ne``,
    ``brier``, ``calibration``, ``ece``), each scaled by a power of two of its own (module
    doc), in a fixed order."""
    read = {stat for _, req in requests for stat in _PROBABILITY_READS.get(req.metric.name, ())}
    return tuple(stat for stat in _PROBABILITY_STATISTICS if stat in read)


def needs_scale(requests: Sequence[tuple[str, MetricRequest]]) -> bool:
    """Whether a rating or a probability metric is asked for: its statistics are scaled
    by powers of two chosen per group (a first pass, :func:`scale_maxima`)."""
    return needs_rating_scale(requests) or bool(probability_statistics(requests))


def _top_column(statistic: str) -> str:
    """The largest magnitude of a probability statistic's terms (:func:`scale_maxima`)."""
    return f"{INTERNAL}top_{statistic.removeprefix(INTERNAL)}"


def _exponent_column(statistic: str) -> str:
    """A probability statistic's exponent ``k`` (Float64, a whole number)."""
    return f"{SCALE_PREFIX}e_{statistic.removeprefix(INTERNAL)}"


def _factor_column(statistic: str) -> str:
    """A probability statistic's factor ``2**k``."""
    return f"{SCALE_PREFIX}m_{statistic.removeprefix(INTERNAL)}"


def _term_column(statistic: str) -> str:
    """A probability statistic's term, unscaled, beside each row
    (:func:`with_probability_terms`)."""
    return f"{INTERNAL}t_{statistic.removeprefix(INTERNAL)}"


def is_scale_column(name: str) -> bool:
    """Whether a column is part of a group's scale (the same in every part of the
    group: the parts' merge keeps it as it is)."""
    return name.startswith(SCALE_PREFIX)


def scale_exponents(requests: Sequence[tuple[str, MetricRequest]]) -> list[str]:
    """The exponents :func:`finished` unscales the ``requests`` with: the rating
    metrics' (:data:`SCALE_EXPONENTS`) and each probability statistic's."""
    rating = list(SCALE_EXPONENTS) if needs_rating_scale(requests) else []
    return rating + [_exponent_column(stat) for stat in probability_statistics(requests)]


def scale_columns(requests: Sequence[tuple[str, MetricRequest]]) -> list[str]:
    """Every column of the scale of the ``requests`` (:func:`scale_from`)."""
    rating = list(SCALE_COLUMNS) if needs_rating_scale(requests) else []
    for stat in probability_statistics(requests):
        rating += [_exponent_column(stat), _factor_column(stat)]
    return rating


def _probability_term(s: PredictionScope, statistic: str) -> pl.Expr:
    """Each row's term of a probability statistic, unscaled (its weight times its
    log-likelihood, label, probability, squared error or gap)."""
    if statistic == _W:
        return s.weights
    if statistic == _LOG:
        return s.weighted(log_likelihood(s))
    if statistic == _Y:
        return s.weighted(s.y)
    if statistic == _P:
        return s.weighted(s.p)
    if statistic == _BRIER:
        return s.weighted((s.p - s.y) ** 2)
    return s.weighted(s.p - s.y)  # the gap of ece, in the row's bin


def with_probability_terms(
    rows: pl.LazyFrame, s: PredictionScope, requests: Sequence[tuple[str, MetricRequest]]
) -> pl.LazyFrame:
    """``rows`` with the term of each probability statistic beside them (unscaled): the
    scale's pass and the sums read them, each computed once (a logarithm per row)."""
    terms = [
        _probability_term(s, stat).alias(_term_column(stat))
        for stat in probability_statistics(requests)
    ]
    return rows.with_columns(terms) if terms else rows


def scale_maxima(
    s: PredictionScope,
    requests: Sequence[tuple[str, MetricRequest]],
    *,
    beside: bool = False,
) -> list[pl.Expr]:
    """Group context: the first pass of the rating and probability metrics (Float64):
    for the rating metrics the smallest and largest label and half residual
    (:func:`half_residual`) over the rows of non-zero weight, and the largest weight;
    for each probability statistic (:func:`probability_statistics`) the largest
    magnitude of its terms (``beside``: read from their columns,
    :func:`with_probability_terms`). The parts' merge by their minimum
    (:data:`SCALE_MINIMA`) or maximum."""
    extents: list[pl.Expr] = []
    if needs_rating_scale(requests):
        v, h = s.value, half_residual(s)
        w = s.w
        if w is not None:  # a row of weight 0 adds nothing: nor does it set the scale
            v, h = pl.when(w != 0).then(v), pl.when(w != 0).then(h)
        top = pl.lit(1.0, pl.Float64) if w is None else w.max()
        extents += [
            v.min().alias(_LO_V),
            v.max().alias(_HI_V),
            h.min().alias(_LO_H),
            h.max().alias(_HI_H),
            top.cast(pl.Float64).alias(_MAX_W),
        ]
    for stat in probability_statistics(requests):
        term = pl.col(_term_column(stat)) if beside else _probability_term(s, stat)
        extents.append(term.abs().max().cast(pl.Float64).alias(_top_column(stat)))
    return extents


def _exponent(m: pl.Expr, top: int, lowest: float) -> pl.Expr:
    """``top - floor(log2 m)``, ``m`` clipped to ``[lowest, 2**1023]`` (0 and infinity
    too: their terms are 0, or not finite and added as floats): ``m 2**exponent`` is
    within a factor 2 of ``[2**top, 2**(top + 1))`` (the logarithm may be one off near
    a power of two); NaN for NaN."""
    return top - m.clip(lowest, _HIGHEST).log(2).floor()


def _probability_exponent(largest: pl.Expr) -> pl.Expr:
    """A probability statistic's exponent ``k`` from the largest magnitude of its terms:
    ``28 - floor(log2 largest)`` (the largest term clipped to ``[2**-994, 2**1023]``:
    ``k`` at most 1022), so that the largest scaled term is in ``[2**27, 2**30)``; but 0
    where the largest term is in ``[2**-20, 2**30)`` (``k`` in ``[-1, 48]``; the
    logarithm may be one off near a power of two) or there is none (null).

    ``largest`` is read once (a group context evaluates every reference again, and a
    condition with two branches would read it twice): the exponents of that range are
    replaced by 0. (In a group context a replacement gives a list of one: take its
    ``first()``, :func:`group_values`.)"""
    k = _exponent(largest, _TOP_P, _LOWEST_P)
    low, high = _TOP_P + 1 - _ORDINARY_HIGH_EXP, _TOP_P - _ORDINARY_LOW_EXP
    return k.replace([float(e) for e in range(low, high + 1)], 0.0).fill_null(0.0)


def scale_from(total: Total, names: Collection[str]) -> list[pl.Expr]:
    """A group's scale (:func:`scale_columns`) from its extents (the columns of
    :func:`scale_maxima`, by ``total``; ``names``: those there are).

    The rating metrics (:data:`SCALE_COLUMNS`): half residuals below ``2**12`` in
    magnitude once scaled (squared: ``2**24``), labels and half residuals less their
    middle below ``2**13`` (less their mean, squared: ``2**28``), weights below 4 (1
    without weights): every term below ``2**30``. A half range is ``hi/2 - lo/2`` and a
    middle ``lo/2 + hi/2``: finite for any finite extents. Each probability statistic:
    its exponent and factor (:func:`_probability_exponent`)."""
    columns: list[pl.Expr] = []
    for stat in _PROBABILITY_STATISTICS:
        if _top_column(stat) in names:
            k = _probability_exponent(total(_top_column(stat)))
            columns += [k.alias(_exponent_column(stat)), _pow2(k).alias(_factor_column(stat))]
    if _LO_V not in names:
        return columns
    lo_v, hi_v, lo_h, hi_h = total(_LO_V), total(_HI_V), total(_LO_H), total(_HI_H)
    k = _exponent(pl.max_horizontal(-lo_h, hi_h), 10, _LOWEST_V)
    kt = _exponent(hi_v * 0.5 - lo_v * 0.5, 10, _LOWEST_V)
    ku = _exponent(hi_h * 0.5 - lo_h * 0.5, 10, _LOWEST_V)
    return [
        k.alias(SCALE_K),
        _pow2(k).alias(_F),
        _pow2(_exponent(total(_MAX_W), 0, _LOWEST_W)).alias(_G),
        kt.alias(SCALE_KT),
        _pow2(kt).alias(_FT),
        (lo_v * 0.5 + hi_v * 0.5).alias(_CT),
        ku.alias(SCALE_KU),
        _pow2(ku).alias(_FU),
        (lo_h * 0.5 + hi_h * 0.5).alias(_CU),
        *columns,
    ]


def with_scale(
    rows: pl.LazyFrame,
    s: PredictionScope,
    by: list[str],
    requests: Sequence[tuple[str, MetricRequest]],
) -> pl.LazyFrame:
    """``rows`` with their group's scale (:func:`scale_columns`) beside each row, and
    the terms of the probability statistics (:func:`with_probability_terms`): the
    groups' extents (one ``group_by``) joined to their rows (cheaper than a window per
    extent)."""
    rows = with_probability_terms(rows, s, requests)
    maxima = scale_maxima(s, requests, beside=True)
    totals = _totals(maxima)
    if not by:
        return beside_every_row(rows, rows.select(maxima).select(scale_from(pl.col, totals)))
    scale = rows.group_by(by).agg(maxima).select(*by, *scale_from(pl.col, totals))
    return rows.join(scale, on=by, how="left", nulls_equal=True)


def beside_every_row(rows: pl.LazyFrame, one_row: pl.LazyFrame) -> pl.LazyFrame:
    """``rows`` with the columns of ``one_row`` (a frame of one row: aggregations over
    ``rows``) beside each of them, in their order: a cross join, not
    ``rows.with_columns(<the aggregations>)``, which polars' in-memory engine (2.1)
    breaks where ``rows`` is read twice (cached) from a DataFrame held in several
    chunks (``pl.concat(..., rechunk=False)``, ``pl.read_parquet`` of several files):
    ``ShapeError: can't broadcast Series 'k' of length 0 to length 2``. Reproducer::

        df = pl.DataFrame({"a": [0.0, 1.0, 0.0, 1.0]})
        chunked = pl.concat([df.slice(0, 2), df.slice(2, 2)], rechunk=False)
        k = (pl.col("a") + 1).max() + (pl.col("a") + 1).min()
        x = chunked.lazy().with_columns(k.alias("k"), (k * 2).alias("f"))
        a_f = pl.col("a") * pl.col("f")
        left = x.select(a_f.sum(), a_f.max().alias("m"), pl.col("k").first())
        pl.concat([left, x.select(pl.col("a").sum().alias("n"))], how="horizontal").collect(
            engine="in-memory"
        )  # ShapeError; the streaming engine and a single chunk are right

    >>> rows = pl.LazyFrame({"a": [3, 1, 2]})
    >>> beside_every_row(rows, rows.select(pl.col("a").max().alias("top"))).collect().rows()
    [(3, 3), (1, 3), (2, 3)]
    """
    return rows.join(one_row, how="cross", maintain_order="left")


def _ece_column(bins: int, b: int) -> str:
    return f"{INTERNAL}s_ece{bins}_{b}"


def _gauc_columns(weighting: str) -> tuple[str, str]:
    return f"{INTERNAL}g_num_{weighting}", f"{INTERNAL}g_den_{weighting}"


def reads_query_id(
    requests: Sequence[tuple[str, MetricRequest]], *, per_query: bool, labels: bool
) -> bool:
    """Whether the prediction metrics asked for read ``query_id``: ``gauc`` (each query's
    AUC), ``per_query=True`` (a row per query) and ``labels=`` (the two-table form,
    joined on ``query_id`` and ``doc_id``); no other. One machine refuses a
    ``query_id=`` given that none reads
    (:func:`~polars_irmetrics.prediction.evaluate.check_keys_read`), and the engines
    split the table by it only where it is read (any row in any part otherwise: the
    parts' statistics merge exactly in any order).

    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> reads_query_id(parse_metric_list(["auc", "rmse"]), per_query=False, labels=False)
    False
    >>> reads_query_id(parse_metric_list(["auc", "gauc"]), per_query=False, labels=False)
    True
    """
    gauc = any(req.metric.name == "gauc" for _, req in requests)
    return per_query or labels or gauc


def needs_means(requests: Sequence[tuple[str, MetricRequest]]) -> bool:
    """Whether a metric reads a spread around the group's mean (two passes)."""
    return any(req.metric.name in ("r2", "explained_variance") for _, req in requests)


def mean_terms(s: PredictionScope, scale: _Scale = _BESIDE) -> dict[str, pl.Expr]:
    """The pass of ``r2`` and ``explained_variance`` after the scale: the terms of the
    weight, the label and the half residual, each less the group's middle one and scaled
    (module doc), whose sums give the group's means of those."""
    return {
        _WR: scale.weights(s),
        _V: scale.weighted(s, scale.label(s)),
        _R: scale.weighted(s, scale.residual(s)),
    }


def means_from(total: Total) -> list[pl.Expr]:
    """The group's mean label (``MEAN_V``) and mean half residual (``MEAN_R``), less
    their middle and scaled, from the totals of :func:`mean_terms` (statistic
    columns)."""
    w = _value(_WR, total)
    return [(_value(_V, total) / w).alias(MEAN_V), (_value(_R, total) / w).alias(MEAN_R)]


def statistic_terms(
    s: PredictionScope,
    requests: Sequence[tuple[str, MetricRequest]],
    means: tuple[pl.Expr, pl.Expr] = (pl.col(MEAN_V), pl.col(MEAN_R)),
    scale: _Scale = _BESIDE,
) -> dict[str, pl.Expr | Scaled]:
    """Per row, the term of each statistic the ``requests`` read (module doc; a
    probability statistic's scaled and unscaled, :class:`Scaled`). The
    spreads of ``r2`` and ``explained_variance`` read the group's mean label and mean
    residual ``means``: the columns ``MEAN_V`` and ``MEAN_R`` beside each row, or (in a
    group context, :func:`group_values`) their aggregations; the rating metrics read
    the group's ``scale`` alike (:data:`SCALE_COLUMNS`)."""
    mean_v, mean_r = means
    scaled = probability_statistics(requests)

    def term(statistic: str) -> pl.Expr | Scaled:  # a probability statistic's
        if statistic in scaled:
            return scale.probability(s, statistic)
        return _probability_term(s, statistic)

    terms: dict[str, pl.Expr | Scaled] = {_W: term(_W)}
    h = half_residual(s)
    if needs_rating_scale(requests):
        terms[_WR] = scale.weights(s)
    for _, req in requests:
        name = req.metric.name
        if name in ("logloss", "ne"):
            terms[_LOG] = term(_LOG)
        if name in ("ne", "calibration"):
            terms[_Y] = term(_Y)
        if name == "calibration":
            terms[_P] = term(_P)
        if name == "brier":
            terms[_BRIER] = term(_BRIER)
        if name in ("mse", "rmse", "r2"):
            terms[_SQ] = scale.weighted(s, (h * scale.f) ** 2)
        if name == "mae":
            terms[_ABS] = scale.weighted(s, h.abs() * scale.f)
        if name in ("r2", "explained_variance"):
            terms[_M2V] = scale.weighted(s, (scale.label(s) - mean_v) ** 2)
        if name == "explained_variance":
            terms[_M2R] = scale.weighted(s, (scale.residual(s) - mean_r) ** 2)
        if name == "ece":
            bins = ece_bins(req.params(1.0))
            index = ece_bin(s, bins)
            gap = term(_ECE)
            for b in range(bins):
                here = index == b
                terms[_ece_column(bins, b)] = (
                    Scaled(pl.when(here).then(gap.term), pl.when(here).then(gap.raw))
                    if isinstance(gap, Scaled)
                    else pl.when(here).then(gap)
                )
    return terms


def statistic_columns(name: str) -> tuple[str, str, str]:
    """A statistic's columns: its units (Int128), its float sum, its count of terms
    beyond the units."""
    return name, f"{name}_f", f"{name}_b"


def statistic_aggs(terms: Mapping[str, pl.Expr | Scaled]) -> list[pl.Expr]:
    """Group context: each term's sum as units (Int128), as a float, and the count of
    terms beyond the units (:func:`statistic_columns`). A probability statistic
    (:class:`Scaled`): the units of its scaled terms, the float sum of its unscaled
    ones, and the count of those that are not finite (its scaled terms, of a finite one,
    are below ``2**30``)."""
    aggs: list[pl.Expr] = []
    for name, given in terms.items():
        fixed, plain, beyond = statistic_columns(name)
        if isinstance(given, Scaled):
            term, raw, count = given.term, given.raw, ~given.raw.is_finite()
        else:
            term, raw, count = given, given, beyond_fixed(given)
        aggs += [
            units(term).sum().alias(fixed),
            raw.sum().cast(pl.Float64).alias(plain),
            count.sum().cast(pl.Int64).alias(beyond),
        ]
    return aggs


def _value(name: str, total: Total) -> pl.Expr:
    """A statistic's sum: its units converted once, or its float sum where a term is
    beyond the units (a probability statistic's: not finite, when its sum is not finite
    either, scaled or not)."""
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
    scaled = probability_statistics(requests)

    def exponent(statistic: str) -> pl.Expr:  # a probability statistic's
        return total(_exponent_column(statistic)) if statistic in scaled else pl.lit(0.0)

    def per_weight(value: pl.Expr, statistic: str) -> pl.Expr:
        """A scaled sum over the scaled weight, unscaled once (module doc)."""
        return _unscaled_ratio(value / w, exponent(_W) - exponent(statistic))

    def log_loss() -> pl.Expr:
        return per_weight(-_value(_LOG, total), _LOG)

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
            rate = per_weight(_value(_Y, total), _Y)
            value = pl.when((rate > 0) & (rate < 1)).then(log_loss() / entropy(rate))
        elif name == "brier":
            value = per_weight(_value(_BRIER, total), _BRIER)
        elif name == "calibration":
            clicks = _value(_Y, total)
            ratio = _unscaled_ratio(_value(_P, total) / clicks, exponent(_Y) - exponent(_P))
            value = pl.when(clicks > 0).then(ratio)
        elif name == "ece":
            value = per_weight(_ece_gaps(ece_bins(req.params(1.0)), total), _ECE)
        elif name == "mse":  # the half residuals' square: times 4
            value = _unscaled(rating_mean(_SQ), 2 - 2 * total(SCALE_K))
        elif name == "rmse":
            value = _unscaled(rating_mean(_SQ).sqrt(), 1 - total(SCALE_K))
        elif name == "mae":
            value = _unscaled(rating_mean(_ABS), 1 - total(SCALE_K))
        elif name in ("r2", "explained_variance"):
            # no weight: the means are NaN (0 / 0), and polars orders NaN above 0
            spread = pl.when(_value(_WR, total) > 0).then(_value(_M2V, total))
            error = _value(_SQ if name == "r2" else _M2R, total)
            k = total(SCALE_K if name == "r2" else SCALE_KU)
            ratio = _unscaled(error / spread, 2 + 2 * total(SCALE_KT) - 2 * k)
            value = pl.when(spread > 0).then(1.0 - ratio)
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


def score_of(s: PredictionScope) -> pl.Expr:
    """The prediction in its own dtype, the order of ``auc``, ``pr_auc`` and ``gauc``:
    integers beyond ``2**53`` (``Int64``, ``UInt64``) that differ by 1 stay two scores
    (their float64 values are one); a float's order is its float64 value's."""
    return pl.col(s.prediction)


def score_histogram(rows: pl.LazyFrame, scope: PredictionScope, keys: list[str]) -> pl.LazyFrame:
    """One row per (``keys`` group, distinct score, :func:`score_of`): the score and the
    positives and negatives that have it, as
    :func:`~polars_irmetrics.metrics.prediction.units` of their weights (Int128)."""
    return rows.group_by([*keys, score_of(scope).alias(SCORE)]).agg(
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
    score = score_of(s)
    end = score.sort().is_last_distinct()  # the last row of each tie

    def through(term: pl.Expr) -> pl.Expr:
        return units(term).sort_by(score).cum_sum().filter(end)

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
        return ranked_auc(s.y, score_of(s).rank("average"))
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
        ranked = rows.with_columns(score_of(scope).rank("average").over(query).alias(_RANK))
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
    scale = _BESIDE
    exponents: dict[str, pl.Expr] = {}
    if needs_scale(rest):
        maxima = _totals(scale_maxima(s, rest))
        scaled = scale_from(lambda c: maxima[c], maxima)  # one value each: first()
        columns = {e.meta.output_name(): e.first() for e in scaled}
        k, f, g, kt, ft, ct, ku, fu, cu = (columns.get(c, pl.col(c)) for c in SCALE_COLUMNS)
        scale = _Scale(k, f, g, kt, ft, ct, ku, fu, cu, factors=columns)  # absent: not read
        exponents = {c: columns[c] for c in scale_exponents(rest)}
    if needs_means(rest):
        mean_totals = _totals(statistic_aggs(mean_terms(s, scale)))
        mean_v, mean_r = means_from(lambda c: mean_totals[c])
        means = (mean_v, mean_r)
    totals = _totals(statistic_aggs(statistic_terms(s, rest, means, scale)))
    totals.update(exponents)
    if any(req.metric.name == "gauc" for _, req in rest):
        query = pl.col(s.query_id)
        first = query.is_first_distinct()
        auc_q = group_auc(s).over(query).filter(first)
        weight_q = query_weight(s).over(query).filter(first)
        totals.update(_totals(gauc_aggs(auc_q, weight_q)))
    labels = {label for label, _ in rest}
    values.update((k, v) for k, v in finished(rest, lambda c: totals[c]) if k in labels)
    return values
