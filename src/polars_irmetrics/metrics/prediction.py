"""Prediction quality: AUC, group AUC, log loss, normalised entropy, calibration, rating
errors.

These metrics judge a model's predictions point by point, not a ranked list: they read
one table of predictions (``reads=("predictions",)``) with a label column and a
prediction column (and optionally a sample-weight column). This module holds their
registry entries and the pieces of their formulas (:class:`PredictionScope`, the units
of 2**-64, the histogram areas); every value, mean or per query, is computed from integer
statistics by :mod:`polars_irmetrics.prediction.statistics`, for
:func:`polars_irmetrics.evaluate` with ``label=`` and ``prediction=``
(:mod:`polars_irmetrics.prediction`) and for the expression functions
:func:`polars_irmetrics.auc`, :func:`polars_irmetrics.logloss`, ... alike.

Conventions (each tested against scikit-learn where it has the metric):

* Binary metrics (``auc``, ``pr_auc``, ``gauc``, ``logloss``, ``ne``, ``brier``,
  ``calibration``, ``ece``) read a label that is positive when it equals the positive
  label (``1`` by default) and negative otherwise.
* Probability metrics (``logloss``, ``ne``, ``brier``, ``calibration``, ``ece``) need
  predictions in ``[0, 1]``; ``auc``, ``pr_auc`` and ``gauc`` read any real score.
* Weighted sums: with a sample weight ``w`` every sum is a weighted sum; without, every
  weight is 1.
* A value that is undefined is null, never a made-up number: AUC of a group with one
  class, normalised entropy with a base rate of 0 or 1, calibration without positives,
  R² and explained variance with constant labels.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import polars as pl
import polars.selectors as cs

from polars_irmetrics.errors import MetricParameterError
from polars_irmetrics.metrics.scope import Scope
from polars_irmetrics.metrics.spec import Alias, CutoffRule, Metric, Param, Params, ParamValue

__all__ = [
    "AREA",
    "BINARY_METRICS",
    "EPS",
    "PREDICTION_METRICS",
    "PROBABILITY_METRICS",
    "UNIT",
    "PredictionScope",
    "auc_area",
    "auc_term",
    "doubled_u",
    "ece_bin",
    "ece_bins",
    "entropy",
    "exact_auc",
    "from_units",
    "gauc_weighting",
    "histogram_auc",
    "histogram_pr_auc",
    "log_likelihood",
    "pr_auc_area",
    "pr_auc_term",
    "prediction_eps",
    "rows_of",
    "units",
    "whole_rows",
]

#: Log loss clips probabilities to ``[eps, 1 - eps]`` with ``eps`` the machine epsilon
#: of the prediction's dtype, as scikit-learn's ``log_loss`` does (read in scikit-learn
#: 1.9.1's source: ``eps = finfo(y_proba.dtype).eps``, then ``clip(y_proba, eps, 1 -
#: eps)`` on both columns ``1 - p`` and ``p``; integers and decimals are read as
#: float64): float64's 2**-52 (:data:`EPS`), float32's 2**-23, float16's 2**-10.
EPS: float = float(np.finfo(np.float64).eps)
_EPS32 = float(np.finfo(np.float32).eps)
_EPS16 = float(np.finfo(np.float16).eps)

#: Default number of equal-width bins of ``ece`` (``ece@10``).
DEFAULT_BINS = 10


@dataclass(frozen=True)
class PredictionScope:
    """The columns of one prediction table, as expressions over the rows of one group.

    Parameters
    ----------
    label
        The label column: 0/1 (or the positive label) for binary metrics, the true
        rating for rating metrics.
    prediction
        The predicted probability or score (or rating).
    sample_weight
        A column of non-negative weights, or ``None`` (every row weighs 1).
    positive
        The label value that counts as positive (default 1).
    query_id
        The column grouping rows into queries (users) for ``gauc``.

    Examples
    --------
    >>> import polars as pl
    >>> s = PredictionScope("clicked", "p")
    >>> pl.DataFrame({"clicked": [True, False], "p": [0.9, 0.2]}).select(s.y).to_series().to_list()
    [1.0, 0.0]
    """

    label: str = "label"
    prediction: str = "prediction"
    sample_weight: str | None = None
    positive: ParamValue = 1
    query_id: str = "query_id"

    @property
    def y(self) -> pl.Expr:
        """1.0 for a positive row, 0.0 for a negative one."""
        positive = self.positive
        if isinstance(positive, int | float):  # bool is an int: True == 1
            hit = pl.col(self.label).cast(pl.Float64) == float(positive)
        else:
            hit = pl.col(self.label).cast(pl.String) == positive
        return hit.cast(pl.Float64)

    @property
    def value(self) -> pl.Expr:
        """The label as a number (the true rating)."""
        return pl.col(self.label).cast(pl.Float64)

    @property
    def p(self) -> pl.Expr:
        """The prediction as float64."""
        return pl.col(self.prediction).cast(pl.Float64)

    @property
    def w(self) -> pl.Expr | None:
        """The sample weight as float64, or ``None``."""
        return None if self.sample_weight is None else pl.col(self.sample_weight).cast(pl.Float64)

    @property
    def weights(self) -> pl.Expr:
        """The sample weight per row, 1.0 on every row without weights."""
        w = self.w
        return self.y * 0.0 + 1.0 if w is None else w

    def weighted(self, term: pl.Expr) -> pl.Expr:
        """``term`` times the weight (``term`` itself without weights)."""
        w = self.w
        return term if w is None else term * w

    @property
    def total(self) -> pl.Expr:
        """The sum of the weights (the row count without weights)."""
        w = self.w
        return pl.len().cast(pl.Float64) if w is None else w.sum()

    def mean(self, term: pl.Expr) -> pl.Expr:
        """The weighted mean of ``term``."""
        return self.weighted(term).sum() / self.total


def _predictions_only(name: str) -> Callable[[Scope, Params], pl.Expr]:
    def compute(scope: Scope, params: Params) -> pl.Expr:
        raise MetricParameterError(
            f"metric {name!r} reads predictions and labels, not a ranked run: compute it "
            "with irm.evaluate(table, [...], label=..., prediction=...) or the expression "
            f"irm.{name}(label=..., prediction=...)"
        )

    return compute


# --------------------------------------------------------------------------- formulas
#: The means of :func:`polars_irmetrics.evaluate` add every float in whole units of
#: 2**-64 (:func:`units`), as :func:`~polars_irmetrics.metrics.scope.fixed_sum` does:
#: integers, added exactly in any order and converted to a float once.
UNIT: float = 2.0**64
#: The terms of a histogram's area (each at most 1) are added times 2**31, so that a
#: term's rounding down to a unit costs 2**-95 of the area, not 2**-64.
AREA: float = 2.0**31


def units(value: pl.Expr) -> pl.Expr:
    """Per row: ``value`` (nulls as 0) in whole units of 2**-64, rounded down, as Int128.

    The sum of a group's units, converted once (:func:`from_units`), is
    :func:`~polars_irmetrics.metrics.scope.fixed_sum`: the same to the last bit in any
    order and any split of the rows. Null where the value is
    :func:`~polars_irmetrics.metrics.scope.beyond_fixed` (2**32 or more, or not finite).

    Examples
    --------
    >>> import polars as pl
    >>> pl.select(units(pl.lit(0.5)).alias("u")).item() == 2**63
    True
    """
    # floor first: a float-to-integer cast of a value with a fraction rounds one way in
    # one engine and the other way in another
    return (value.fill_null(0.0) * UNIT).floor().cast(pl.Int128, strict=False)


def from_units(total: pl.Expr) -> pl.Expr:
    """A sum of :func:`units` (Int128) as the float it counts."""
    return total.cast(pl.Float64) / UNIT


def auc_term(pos: pl.Expr, neg: pl.Expr, below: pl.Expr, n1: pl.Expr, n0: pl.Expr) -> pl.Expr:
    """One distinct score's share of the ROC AUC, times :data:`AREA`: ``pos (below +
    neg / 2) / (n1 n0)``, from exact integer counts (:func:`units` of the weights) of its
    positives and negatives, the negatives scored below it, and the group's totals.

    The same integers give the same float on every path, whatever the split of the rows
    (by part, by score range), and the terms are added as :func:`units`. The totals are
    multiplied by their reciprocals, never divided by: polars divides a column by a
    broadcast scalar in one way in one context and in another way in another (measured:
    10/11 differed in the last bit between an eager and a lazy select)."""
    f = pl.Float64
    part = (below.cast(f) + neg.cast(f) * 0.5) * (1.0 / n0.cast(f))
    return pos.cast(f) * (1.0 / n1.cast(f)) * part * AREA


def pr_auc_term(pos: pl.Expr, hits: pl.Expr, seen: pl.Expr, n1: pl.Expr) -> pl.Expr:
    """One distinct score's share of average precision, times :data:`AREA`: ``pos / n1 *
    hits / seen`` (the positives and rows scored at or above it), from exact integer
    counts (see :func:`auc_term`); 0 for a score without positives."""
    f = pl.Float64
    share = pos.cast(f) * (1.0 / n1.cast(f)) * (hits.cast(f) / seen.cast(f)) * AREA
    return pl.when(pos > 0).then(share).otherwise(0.0)


def _column(name: str | pl.Expr) -> pl.Expr:
    return pl.col(name) if isinstance(name, str) else name


def histogram_auc(positives: str | pl.Expr, negatives: str | pl.Expr) -> pl.Expr:
    """ROC AUC from a score histogram: one row per distinct score, **in ascending score
    order**, with the positives and negatives that have it, in :func:`units` (Int128) of
    their weights.

    ``sum_s pos(s) (neg(< s) + neg(s) / 2) / (P N)``: the AUC of the rows, since AUC
    depends on the rows only through these counts. Histograms of parts of a table merge
    by adding the (integer) counts of equal scores, and each term (:func:`auc_term`) is
    computed from integers and added as units, so the value is the same to the last bit
    however the rows were split (parts, score ranges out of core).

    Examples
    --------
    >>> import polars as pl
    >>> h = pl.DataFrame({"s": [0.1, 0.5], "pos": [0, 2], "neg": [1, 1]})
    >>> h.sort("s").select(histogram_auc("pos", "neg")).item()  # (2 (1 + 1/2)) / (2 * 2)
    0.75
    """
    pos, neg = _column(positives), _column(negatives)
    return auc_area(pos, neg, neg.cum_sum() - neg, pos.sum(), neg.sum())


def auc_area(pos: pl.Expr, neg: pl.Expr, below: pl.Expr, n1: pl.Expr, n0: pl.Expr) -> pl.Expr:
    """The ROC AUC from the integer counts (:func:`units`) of each distinct score in
    ascending order (its positives, negatives and the negatives below it) and the
    totals; null with one class.

    Where every count is a whole number of rows (no weights, or whole weights), the
    AUC is :func:`exact_auc` of the doubled Mann-Whitney count ``2U = sum pos (2 below +
    neg)`` (Int128, exact): the correctly rounded ``U / (P N)``, the value of the rank
    formula too. Otherwise the terms of :func:`auc_term`, added as units."""
    terms = units(auc_term(pos, neg, below, n1, n0))
    fractional = from_units(terms.sum()) / AREA
    exact = exact_auc(doubled_u(pos, neg, below), rows_of(n1), rows_of(n0))
    whole = whole_rows(pos, neg)
    return pl.when((n1 > 0) & (n0 > 0)).then(pl.when(whole).then(exact).otherwise(fractional))


#: One row in :func:`units` (Int128).
_ONE = pl.lit(2**64, pl.Int128)


def whole_rows(pos: pl.Expr, neg: pl.Expr) -> pl.Expr:
    """Aggregate: whether every count (:func:`units`) is a whole number of rows (no
    weights, or whole weights): then :func:`exact_auc` applies."""
    return ((pos % _ONE == 0) & (neg % _ONE == 0)).all()


def rows_of(count: pl.Expr) -> pl.Expr:
    """A count in :func:`units` as the rows it counts (Int128; whole where
    :func:`whole_rows`)."""
    return count // _ONE


def doubled_u(pos: pl.Expr, neg: pl.Expr, below: pl.Expr) -> pl.Expr:
    """Aggregate: the doubled Mann-Whitney count ``2U = sum pos (2 below + neg)`` of a
    histogram's scores (counts in :func:`units`, whole numbers of rows), Int128."""
    return (rows_of(pos) * (2 * rows_of(below) + rows_of(neg))).sum()


def exact_auc(two_u: pl.Expr, n1: pl.Expr, n0: pl.Expr) -> pl.Expr:
    """The ROC AUC ``U / (P N)`` from the doubled Mann-Whitney count ``2U`` and the
    positives ``P`` and negatives ``N`` (whole numbers, Int128): one float division,
    correctly rounded while ``2U`` and ``2 P N`` are below 2**53. The same operations
    on every path (a histogram, ranks in a group, score ranges out of core), so the
    same bits.

    Examples
    --------
    >>> import polars as pl
    >>> i128 = pl.Int128
    >>> pl.select(exact_auc(pl.lit(3, i128), pl.lit(2, i128), pl.lit(2, i128))).item()
    0.375
    """
    f = pl.Float64
    return two_u.cast(f) / (2.0 * n1.cast(f) * n0.cast(f))


def histogram_pr_auc(positives: str | pl.Expr, negatives: str | pl.Expr) -> pl.Expr:
    """Average precision from a score histogram in ascending score order (see
    :func:`histogram_auc`): each score's positives and rows at or above it are the
    totals less those below it (integers)."""
    pos, neg = _column(positives), _column(negatives)
    n1, n0 = pos.sum(), neg.sum()
    hits = n1 - (pos.cum_sum() - pos)
    seen = (n1 + n0) - ((pos + neg).cum_sum() - (pos + neg))
    return pr_auc_area(pos, hits, seen, n1)


def pr_auc_area(pos: pl.Expr, hits: pl.Expr, seen: pl.Expr, n1: pl.Expr) -> pl.Expr:
    """Average precision from the integer counts of each distinct score (its positives,
    the positives and rows at or above it) and the positives' total: the terms of
    :func:`pr_auc_term` added as units (:func:`histogram_pr_auc`); null without
    positives."""
    terms = units(pr_auc_term(pos, hits, seen, n1))
    return pl.when(n1 > 0).then(from_units(terms.sum()) / AREA)


def gauc_weighting(params: Params) -> str:
    """``"rows"`` or ``"uniform"``: how ``gauc`` weighs its queries."""
    return params.choice("weighting")


def prediction_eps(s: PredictionScope) -> pl.Expr:
    """The machine epsilon of the prediction column's dtype (a literal, resolved with
    the schema): ``2**-23`` for ``Float32``, ``2**-10`` for ``Float16``, ``2**-52`` for
    any other (scikit-learn's ``log_loss`` reads integers and decimals as float64)."""
    dtype = pl.dtype_of(s.prediction)
    return (
        pl.when(dtype.matches(cs.by_dtype(pl.Float32)))
        .then(pl.lit(_EPS32, pl.Float64))
        .when(dtype.matches(cs.by_dtype(pl.Float16)))
        .then(pl.lit(_EPS16, pl.Float64))
        .otherwise(pl.lit(EPS, pl.Float64))
    )


def log_likelihood(s: PredictionScope) -> pl.Expr:
    """Each row's log-likelihood ``ln p`` (positive) or ``ln(1 - p)`` (negative), in
    float64, the probability clipped to ``[eps, 1 - eps]`` with ``eps`` the machine
    epsilon of the prediction's dtype (:func:`prediction_eps`), as scikit-learn's
    ``log_loss`` clips."""
    eps = prediction_eps(s)
    prob = s.p
    right = pl.when(s.y == 1.0).then(prob).otherwise(1.0 - prob)
    return right.clip(eps, 1.0 - eps).log()


def entropy(rate: pl.Expr) -> pl.Expr:
    """The entropy (natural log) of a base rate, the denominator of ``ne``."""
    return -(rate * rate.log() + (1.0 - rate) * (1.0 - rate).log())


def ece_bins(params: Params) -> int:
    """The number of bins of ``ece@bins`` (10 without ``@``)."""
    return DEFAULT_BINS if params.k is None else params.k


def ece_bin(s: PredictionScope, bins: int) -> pl.Expr:
    """Each row's bin of ``ece@bins``: ``min(floor(p bins), bins - 1)``, clipped at 0 (a
    NaN prediction has none: null here, refused by name by the plan's checks)."""
    return (s.p * bins).floor().clip(0, bins - 1).cast(pl.Int64, strict=False)


#: Metrics whose label is binary (positive label or not).
BINARY_METRICS = frozenset(
    {"auc", "pr_auc", "gauc", "logloss", "ne", "brier", "calibration", "ece"}
)
#: Metrics whose prediction must be a probability in [0, 1].
PROBABILITY_METRICS = frozenset({"logloss", "ne", "brier", "calibration", "ece"})

# --------------------------------------------------------------------------- registry
_SKLEARN = "scikit-learn"
_RECOMMENDERS = "recommenders"
_FIXTURES = (
    "python_evaluation 1.2.1 (values on random inputs, inner merge of rating_true and "
    "rating_pred: tests/data/recommenders_prediction.json), to 1e-12"
)


def _metric(
    name: str,
    summary: str,
    *,
    formula: str,
    latex: str,
    matches: dict[str, str],
    aliases: tuple[Alias, ...] = (),
    params: tuple[Param, ...] = (),
    higher_is_better: bool | None = True,
    cutoff: CutoffRule = "none",
) -> Metric:
    return Metric(
        name,
        summary,
        _predictions_only(name),
        cutoff=cutoff,
        binary=False,
        aliases=aliases,
        params=params,
        higher_is_better=higher_is_better,
        formula=formula,
        latex=latex,
        reads=("predictions",),
        matches=matches,
    )


PREDICTION_METRICS: tuple[Metric, ...] = (
    _metric(
        "auc",
        "ROC AUC: the chance a random positive is scored above a random negative "
        "(ties count one half)",
        aliases=(Alias("roc_auc"),),
        formula="Mann-Whitney U / (n1 n0) with average ranks (Hanley & McNeil 1982): "
        "(sum of the positives' ranks - n1 (n1 + 1) / 2) / (n1 n0); weighted: "
        "sum over positive-negative pairs of w_i w_j ([s_i > s_j] + [s_i = s_j] / 2) "
        "/ (W1 W0). Null when the group has one class (never 0.5).",
        latex=r"\frac{\sum_{i \in +} \sum_{j \in -} w_i w_j \left([s_i > s_j] + "
        r"\tfrac{1}{2}[s_i = s_j]\right)}{W_+ W_-}",
        matches={
            _SKLEARN: "roc_auc_score (sample_weight too), to 1e-12",
            _RECOMMENDERS: f"auc: {_FIXTURES}",
        },
    ),
    _metric(
        "pr_auc",
        "average precision: the area under the precision-recall curve, as a step sum",
        aliases=(Alias("average_precision"), Alias("ap_score")),
        formula="sum over thresholds n (the distinct scores, descending) of "
        "(R_n - R_{n-1}) P_n, scikit-learn's average_precision_score (no interpolation); "
        "null without positives",
        latex=r"\sum_n (R_n - R_{n-1}) P_n",
        matches={_SKLEARN: "average_precision_score (sample_weight too), to 1e-12"},
    ),
    _metric(
        "gauc",
        "group AUC: the AUC of each query (user), averaged weighted by its rows; "
        "queries with one class are left out and counted",
        params=(
            Param(
                "weighting",
                "rows",
                ("rows", "uniform"),
                "'rows': each query weighs its rows (its sample weights' sum), as Zhou et "
                "al. 2018 weigh by impressions; 'uniform': each query weighs 1",
            ),
        ),
        formula="sum_q n_q AUC_q / sum_q n_q over the queries q with both classes "
        "(Zhou et al. 2018, Deep Interest Network, eq. 8; n_q = rows or weight of q); "
        "the queries left out are counted in the column '<name>_one_class' of "
        "irm.evaluate",
        latex=r"\frac{\sum_{q:\,n_q^+ n_q^- > 0} n_q \,\mathrm{AUC}_q}"
        r"{\sum_{q:\,n_q^+ n_q^- > 0} n_q}",
        matches={_SKLEARN: "a loop of roc_auc_score over the queries, to 1e-12"},
    ),
    _metric(
        "logloss",
        "log loss (binary cross-entropy, natural log), predictions clipped as scikit-learn does",
        aliases=(Alias("nll"), Alias("log_loss"), Alias("cross_entropy")),
        higher_is_better=False,
        formula="-sum_i w_i (y_i ln p_i + (1 - y_i) ln(1 - p_i)) / W, with p_i (and "
        "1 - p_i) clipped to [eps, 1 - eps], eps the machine epsilon of the prediction's "
        "dtype (2**-52 for float64, integers and decimals; 2**-23 for float32), as "
        "scikit-learn's log_loss clips (checked against 1.9.1)",
        latex=r"-\frac{1}{W}\sum_i w_i \left(y_i \ln p_i + (1 - y_i)\ln(1 - p_i)\right)",
        matches={
            _SKLEARN: "log_loss (sample_weight too), to 1e-12",
            _RECOMMENDERS: f"logloss: {_FIXTURES}",
        },
    ),
    _metric(
        "ne",
        "normalised entropy: log loss over the entropy of the base rate (below 1 beats "
        "predicting the base rate)",
        aliases=(Alias("normalized_entropy"), Alias("normalised_entropy")),
        higher_is_better=False,
        formula="logloss / H(r), r = sum_i w_i y_i / W, H(r) = -(r ln r + (1 - r) "
        "ln(1 - r)) (He et al. 2014, Practical Lessons from Predicting Clicks on Ads at "
        "Facebook); null when r is 0 or 1",
        latex=r"\frac{\mathrm{logloss}}{-\left(r \ln r + (1 - r)\ln(1 - r)\right)}",
        matches={_SKLEARN: "log_loss over the entropy of the mean label, to 1e-12"},
    ),
    _metric(
        "brier",
        "Brier score: the mean squared error of a probability",
        aliases=(Alias("brier_score"),),
        higher_is_better=False,
        formula="sum_i w_i (p_i - y_i)^2 / W (Brier 1950)",
        latex=r"\frac{1}{W}\sum_i w_i (p_i - y_i)^2",
        matches={_SKLEARN: "brier_score_loss (sample_weight too), to 1e-12"},
    ),
    _metric(
        "calibration",
        "predicted over observed positives: 1 is calibrated, above 1 over-predicts",
        higher_is_better=None,
        formula="sum_i w_i p_i / sum_i w_i y_i (He et al. 2014); null without positives. "
        "1 is calibrated, so neither a higher nor a lower value is better "
        "(higher_is_better=None: compare counts no wins, report bolds nothing)",
        latex=r"\frac{\sum_i w_i p_i}{\sum_i w_i y_i}",
        matches={"numpy": "explicit arithmetic, to 1e-12"},
    ),
    _metric(
        "ece",
        "expected calibration error over equal-width probability bins (ece@B: B bins, default 10)",
        cutoff="optional",
        higher_is_better=False,
        formula="sum_b |sum_{i in b} w_i (p_i - y_i)| / W over the bins b = "
        "min(floor(p B), B - 1) of [0, 1] (equal width, the last one closed; Naeini et "
        "al. 2015, Guo et al. 2017); empty bins add nothing",
        latex=r"\sum_{b=1}^{B} \frac{W_b}{W}\left|\bar p_b - \bar y_b\right|",
        matches={"numpy": "explicit arithmetic (hand-computed bins), to 1e-12"},
    ),
    _metric(
        "rmse",
        "root mean squared error of a predicted rating",
        higher_is_better=False,
        formula="sqrt(sum_i w_i (p_i - y_i)^2 / W)",
        latex=r"\sqrt{\frac{1}{W}\sum_i w_i (p_i - y_i)^2}",
        matches={
            _SKLEARN: "root_mean_squared_error (sample_weight too), to 1e-12",
            _RECOMMENDERS: f"rmse: {_FIXTURES}",
        },
    ),
    _metric(
        "mae",
        "mean absolute error of a predicted rating",
        higher_is_better=False,
        formula="sum_i w_i |p_i - y_i| / W",
        latex=r"\frac{1}{W}\sum_i w_i |p_i - y_i|",
        matches={
            _SKLEARN: "mean_absolute_error (sample_weight too), to 1e-12",
            _RECOMMENDERS: f"mae: {_FIXTURES}",
        },
    ),
    _metric(
        "mse",
        "mean squared error of a predicted rating",
        higher_is_better=False,
        formula="sum_i w_i (p_i - y_i)^2 / W",
        latex=r"\frac{1}{W}\sum_i w_i (p_i - y_i)^2",
        matches={_SKLEARN: "mean_squared_error (sample_weight too), to 1e-12"},
    ),
    _metric(
        "r2",
        "coefficient of determination R² of a predicted rating",
        aliases=(Alias("rsquared"), Alias("r_squared")),
        formula="1 - sum_i w_i (y_i - p_i)^2 / sum_i w_i (y_i - ybar)^2, ybar the weighted "
        "mean label; null when the labels are constant (scikit-learn returns 1.0 or 0.0 "
        "there)",
        latex=r"1 - \frac{\sum_i w_i (y_i - p_i)^2}{\sum_i w_i (y_i - \bar y)^2}",
        matches={
            _SKLEARN: "r2_score (sample_weight too), to 1e-12",
            _RECOMMENDERS: f"rsquared: {_FIXTURES}",
        },
    ),
    _metric(
        "explained_variance",
        "explained variance of a predicted rating",
        aliases=(Alias("exp_var"),),
        formula="1 - Var_w(y - p) / Var_w(y), weighted variances around weighted means; "
        "null when the labels are constant (scikit-learn returns 1.0 or 0.0 there)",
        latex=r"1 - \frac{\mathrm{Var}_w(y - p)}{\mathrm{Var}_w(y)}",
        matches={
            _SKLEARN: "explained_variance_score (sample_weight too), to 1e-12",
            _RECOMMENDERS: f"exp_var: {_FIXTURES}",
        },
    ),
)
