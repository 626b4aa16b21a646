"""Prediction-quality expressions: ``df.group_by("segment").agg(irm.auc(...))``.

Each function returns one ``pl.Expr`` that aggregates the rows of a group (or of the
whole frame in ``select``): a label column and a prediction column, optionally a
sample-weight column. The values come from the statistics of
:mod:`polars_irmetrics.prediction.statistics` (sums as integer units of 2**-64, AUC from
the group's score histogram; :func:`~polars_irmetrics.prediction.statistics.group_values`):
a group's value is, to the last bit, the one :func:`polars_irmetrics.evaluate` gives for
the same rows in any order, as a mean (``by=`` the group's keys) or per query
(``per_query=True``, grouped by the query column). The result column is named by the
metric's canonical name (``auc``, ``ece@20``); rename it with ``.alias(...)``.

The columns are checked when the plan knows the frame
(:mod:`polars_irmetrics.ground.deferred`): a missing label, prediction, weight or
``gauc`` group column raises :class:`~polars_irmetrics.errors.ColumnNotFoundError`, a
prediction or weight (or a label, unless the positive label is a string) that is not
numeric :class:`~polars_irmetrics.errors.ColumnTypeError`. An expression cannot raise
on a value inside a plan without a Python call per group, so the values that
:func:`polars_irmetrics.evaluate` refuses give NaN instead, never a number that reads
as valid (:func:`_invalid`): in every metric, a null label, prediction or weight (or
``gauc``'s query id), a NaN label, prediction or weight, and a weight that is negative,
2**32 or more, or positive below 2**-30; in the metrics that read a probability
(``logloss``, ``ne``, ``brier``, ``calibration``, ``ece``), a prediction outside
``[0, 1]``; in the binary metrics (those and ``auc``, ``pr_auc``, ``gauc``), a numeric
label that is neither 0 nor the positive label, or text labels of more than two values
in the group, or of two neither of which is the positive label; in the rating metrics
(``rmse``, ``mae``, ``mse``, ``r2``, ``explained_variance``), an infinite label or
prediction, and a label or prediction of magnitude 2**53 or more in an integer dtype
that holds such values (``Int64``, ``UInt64``, the 128-bit integers, decimals of more
than 15 digits: read as float64, 2**53 and 2**53 + 1 are one value, their error 0). A
value beyond float64's range is infinite without a warning.
:func:`polars_irmetrics.evaluate` with ``label=`` and ``prediction=`` checks the table
first and raises an error that names the column, the value and the fix (and warns of a
value beyond float64's range): call it to learn why a value is NaN.
"""

from __future__ import annotations

from typing import Literal

import polars as pl

from polars_irmetrics.ground.deferred import Need, checked
from polars_irmetrics.ground.options import (
    check_column_name,
    checked_positive_label,
    refuse_zero_positive,
)
from polars_irmetrics.ground.validate import FLOAT64_EXACT, wide_numbers
from polars_irmetrics.metrics.prediction import (
    BINARY_METRICS,
    PROBABILITY_METRICS,
    PredictionScope,
)
from polars_irmetrics.metrics.registry import request
from polars_irmetrics.metrics.scope import FIXED_FLOOR, FIXED_LIMIT
from polars_irmetrics.metrics.spec import ParamValue
from polars_irmetrics.prediction.statistics import RATING_METRICS, group_values

__all__ = [
    "auc",
    "brier",
    "calibration",
    "ece",
    "explained_variance",
    "gauc",
    "logloss",
    "mae",
    "mse",
    "ne",
    "pr_auc",
    "r2",
    "rmse",
]

Label = int | float | str


def _wide(inputs: list[tuple[pl.Expr, pl.DataType]]) -> pl.Expr:
    """True where a value of an integer dtype that holds integers beyond 2**53 is of
    magnitude 2**53 or more (as :func:`polars_irmetrics.evaluate` refuses it for the
    rating metrics), else False; chosen by the dtype when the plan knows it."""
    ((column, dtype),) = inputs
    if not wide_numbers(dtype):
        return pl.repeat(False, pl.len())
    return column.cast(pl.Float64).abs() >= FLOAT64_EXACT


def _invalid(name: str, scope: PredictionScope) -> pl.Expr:
    """True where the group holds a value :func:`polars_irmetrics.evaluate` refuses for
    metric ``name`` (the module's list): the expression gives NaN there.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.metrics.prediction import PredictionScope
    >>> scope = PredictionScope("label", "prediction")
    >>> df = pl.DataFrame({"label": [1, 0], "prediction": [1.5, 0.2]})
    >>> df.select(_invalid("logloss", scope), _invalid("auc", scope).alias("a")).row(0)
    (True, False)
    """
    pred = pl.col(scope.prediction).cast(pl.Float64)
    text = isinstance(scope.positive, str)
    label = pl.col(scope.label)
    bad = pred.is_null() | pred.is_nan() | label.is_null()
    if not text:
        bad = bad | label.cast(pl.Float64).is_nan()
    if scope.sample_weight is not None:
        w = pl.col(scope.sample_weight).cast(pl.Float64)
        bad = bad | (
            w.is_null() | w.is_nan() | (w < 0) | (w >= FIXED_LIMIT) | ((w > 0) & (w < FIXED_FLOOR))
        )
    if name == "gauc":
        bad = bad | pl.col(scope.query_id).is_null()
    if name in PROBABILITY_METRICS:
        bad = bad | (pred < 0) | (pred > 1)
    if name in RATING_METRICS:
        bad = bad | pred.is_infinite() | label.cast(pl.Float64).is_infinite()
        # integers float64 cannot hold, where the dtype holds them (the plan knows it)
        for column in (scope.label, scope.prediction):
            bad = bad | pl.pipe_with_dtype([pl.col(column)], _wide)
    flag = bad.any()
    if name in BINARY_METRICS:
        if text:
            labels = label.cast(pl.String).drop_nulls()
            n = labels.n_unique()
            flag = flag | (n > 2) | ((n == 2) & ~(labels == scope.positive).any())
        else:
            value = label.cast(pl.Float64)
            positive = float(scope.positive)  # type: ignore[arg-type]
            flag = flag | ~((value == 0.0) | (value == positive)).all()
    return flag


def _expr(
    name: str,
    label: str,
    prediction: str,
    sample_weight: str | None,
    *,
    positive: Label = 1,
    query_id: str = "query_id",
    k: int | None = None,
    **options: ParamValue,
) -> pl.Expr:
    req = request(name, k=k, options=options)
    positive = checked_positive_label(positive)
    # a column option that is no name was polars' own TypeError (invalid input for col)
    check_column_name("label", label)
    refuse_zero_positive(positive, label)  # as irm.evaluate refuses it
    check_column_name("prediction", prediction)
    check_column_name("sample_weight", sample_weight, optional=True)
    if name == "gauc":
        check_column_name("query_id", query_id)
    scope = PredictionScope(label, prediction, sample_weight, positive, query_id)
    value = group_values(scope, [(req.name, req)])[req.name]
    # a value evaluate refuses gives NaN (the module's list), never a number read as
    # valid (a label 2 was a negative, a probability 1.5 a loss, a null score skipped)
    nan = pl.lit(float("nan"), pl.Float64)
    value = pl.when(_invalid(name, scope)).then(nan).otherwise(value)
    # the columns it reads, checked when the plan knows the frame (ground.deferred): a
    # missing one was polars' own error at collect(), a String prediction was cast
    needs = [
        Need(label, "labels", "name yours with label=...", not isinstance(positive, str)),
        Need(prediction, "predictions", "name yours with prediction=...", True),
    ]
    if sample_weight is not None:
        needs.append(
            Need(sample_weight, "sample weights", "name yours with sample_weight=...", True)
        )
    if name == "gauc":
        needs.append(Need(query_id, "groups (users)", "name yours with query_id=...", False))
    return checked(value.alias(req.name), tuple(needs))


def auc(
    label: str = "label",
    prediction: str = "prediction",
    *,
    sample_weight: str | None = None,
    positive_label: Label = 1,
) -> pl.Expr:
    """ROC AUC of the group's rows: the chance a positive is scored above a negative.

    Ties count one half (average ranks, Hanley & McNeil 1982); equal to
    ``sklearn.metrics.roc_auc_score`` (with ``sample_weight`` too). Null when the group
    has one class only, never a made-up 0.5. The scores are ordered in the column's own
    dtype: integer scores beyond ``2**53`` (``Int64``, ``UInt64``) that differ by 1 are
    two scores, not one tie of their float64 values (as ``pr_auc`` and ``gauc`` order
    them).

    Parameters
    ----------
    label
        The label column: positive where it equals ``positive_label``.
    prediction
        The score column (any real number, or any integer, ordered exactly; higher means
        more likely positive).
    sample_weight
        A column of non-negative row weights, or ``None``.
    positive_label
        The label value of a positive row (default 1; ``True`` for a boolean label).
        A group whose labels are not 0 and the positive one (for text labels: two
        labels neither of which is ``positive_label``, ``'Yes'`` for ``'yes'``, or
        more than two) gives NaN, as :func:`polars_irmetrics.evaluate` refuses them;
        one text label only, not the positive one, is a group of negatives.

    Returns
    -------
    pl.Expr
        A Float64 aggregation named ``auc``.

    See Also
    --------
    gauc : the AUC of each query, averaged.
    pr_auc : the area under the precision-recall curve.

    Examples
    --------
    Two positives and two negatives; one positive ties with a negative (half a pair),
    so 3.5 of the 4 pairs are ordered right. Segment ``b`` has no negative: null.

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> log = pl.DataFrame({
    ...     "segment": ["a", "a", "a", "a", "b"],
    ...     "clicked": [1, 0, 1, 0, 1],
    ...     "p_click": [0.9, 0.4, 0.4, 0.1, 0.5],
    ... })
    >>> log.group_by("segment").agg(irm.auc("clicked", "p_click")).sort("segment")
    shape: (2, 2)
    ┌─────────┬───────┐
    │ segment ┆ auc   │
    │ ---     ┆ ---   │
    │ str     ┆ f64   │
    ╞═════════╪═══════╡
    │ a       ┆ 0.875 │
    │ b       ┆ null  │
    └─────────┴───────┘
    """
    return _expr("auc", label, prediction, sample_weight, positive=positive_label)


def pr_auc(
    label: str = "label",
    prediction: str = "prediction",
    *,
    sample_weight: str | None = None,
    positive_label: Label = 1,
) -> pl.Expr:
    """Average precision: ``sum_n (R_n - R_{n-1}) P_n`` over the distinct scores.

    Equal to ``sklearn.metrics.average_precision_score`` (no interpolation; a tie is
    one threshold). Null when the group has no positive.

    Parameters
    ----------
    label
        The label column: positive where it equals ``positive_label``.
    prediction
        The score column.
    sample_weight
        A column of non-negative row weights, or ``None``.
    positive_label
        The label value of a positive row.
        A group whose labels are not 0 and the positive one (for text labels: two
        labels neither of which is ``positive_label``, ``'Yes'`` for ``'yes'``, or
        more than two) gives NaN, as :func:`polars_irmetrics.evaluate` refuses them;
        one text label only, not the positive one, is a group of negatives.

    Returns
    -------
    pl.Expr
        A Float64 aggregation named ``pr_auc``.

    See Also
    --------
    auc : the area under the ROC curve.

    Examples
    --------
    The positive at 0.9 comes first (precision 1); the one at 0.4 ties with a
    negative, so at that threshold precision is 2/3: ``(1 + 2/3) / 2``.

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"label": [1, 0, 1, 0], "prediction": [0.9, 0.4, 0.4, 0.1]})
    >>> round(df.select(irm.pr_auc()).item(), 6)
    0.833333
    """
    return _expr("pr_auc", label, prediction, sample_weight, positive=positive_label)


def gauc(
    label: str = "label",
    prediction: str = "prediction",
    *,
    query_id: str = "query_id",
    weighting: Literal["rows", "uniform"] = "rows",
    sample_weight: str | None = None,
    positive_label: Label = 1,
) -> pl.Expr:
    """Group AUC: the AUC of each query (user) of the group, averaged.

    ``sum_q n_q AUC_q / sum_q n_q`` over the queries with both classes (Zhou et al.
    2018); queries with one class have no AUC and are left out (count them with
    :func:`polars_irmetrics.evaluate`, column ``gauc_one_class``). Null when no query
    has both classes.

    Parameters
    ----------
    label
        The label column: positive where it equals ``positive_label``.
    prediction
        The score column.
    query_id
        The column of the query (user) each row belongs to.
    weighting
        ``"rows"`` (default): a query weighs its rows (with ``sample_weight``, the sum of
        its weights), as Zhou et al. weigh users by impressions; ``"uniform"``: every
        query weighs 1.
    sample_weight
        A column of non-negative row weights, or ``None``.
    positive_label
        The label value of a positive row.
        A group whose labels are not 0 and the positive one (for text labels: two
        labels neither of which is ``positive_label``, ``'Yes'`` for ``'yes'``, or
        more than two) gives NaN, as :func:`polars_irmetrics.evaluate` refuses them;
        one text label only, not the positive one, is a group of negatives.

    Returns
    -------
    pl.Expr
        A Float64 aggregation named ``gauc`` (``gauc(weighting='uniform')``).

    See Also
    --------
    auc : one AUC over all the rows.

    Examples
    --------
    u1 (3 rows) has AUC 1, u2 (2 rows) has AUC 0, u3 has one class and is left out:
    weighted by rows ``(3 * 1 + 2 * 0) / 5``, uniformly ``(1 + 0) / 2``.

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> log = pl.DataFrame({
    ...     "user": ["u1", "u1", "u1", "u2", "u2", "u3"],
    ...     "label": [1, 0, 0, 1, 0, 1],
    ...     "prediction": [0.8, 0.3, 0.2, 0.1, 0.6, 0.5],
    ... })
    >>> log.select(irm.gauc(query_id="user"), irm.gauc(query_id="user", weighting="uniform"))
    shape: (1, 2)
    ┌──────┬───────────────────────────┐
    │ gauc ┆ gauc(weighting='uniform') │
    │ ---  ┆ ---                       │
    │ f64  ┆ f64                       │
    ╞══════╪═══════════════════════════╡
    │ 0.6  ┆ 0.5                       │
    └──────┴───────────────────────────┘
    """
    return _expr(
        "gauc",
        label,
        prediction,
        sample_weight,
        positive=positive_label,
        query_id=query_id,
        weighting=weighting,
    )


def logloss(
    label: str = "label",
    prediction: str = "prediction",
    *,
    sample_weight: str | None = None,
    positive_label: Label = 1,
) -> pl.Expr:
    """Log loss (binary cross-entropy, natural log) of predicted probabilities.

    ``-sum w (y ln p + (1 - y) ln(1 - p)) / W`` with ``p`` and ``1 - p`` clipped to
    ``[eps, 1 - eps]``, ``eps`` the machine epsilon of the prediction column's dtype, as
    ``sklearn.metrics.log_loss`` clips (``np.finfo(y_pred.dtype).eps``): a confident
    wrong prediction costs ``-ln(eps)``, not infinity: ``36.04`` for ``Float64`` (``eps
    = 2**-52``; integer and decimal columns too), ``15.94`` for ``Float32`` (``2**-23``),
    ``6.93`` for ``Float16`` (``2**-10``). The logarithms are taken in float64, where
    scikit-learn computes in the input's dtype: on float32 input its value differs from
    this one in about the 7th significant digit.

    Parameters
    ----------
    label
        The label column: positive where it equals ``positive_label``.
    prediction
        The predicted probability of the positive class, in ``[0, 1]``; its dtype sets
        the clipping.
    sample_weight
        A column of non-negative row weights, or ``None``.
    positive_label
        The label value of a positive row.
        A group whose labels are not 0 and the positive one (for text labels: two
        labels neither of which is ``positive_label``, ``'Yes'`` for ``'yes'``, or
        more than two) gives NaN, as :func:`polars_irmetrics.evaluate` refuses them;
        one text label only, not the positive one, is a group of negatives.

    Returns
    -------
    pl.Expr
        A Float64 aggregation named ``logloss``.

    See Also
    --------
    ne : log loss over the entropy of the base rate.
    brier : the squared error of the probability.

    Examples
    --------
    A prediction of exactly 0 for a positive is clipped, not infinite; a Float32 one at
    float32's epsilon:

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"label": [1, 0], "prediction": [0.0, 0.0]})
    >>> round(df.select(irm.logloss()).item(), 4)  # (36.0437 + 0) / 2
    18.0218
    >>> round(df.cast({"prediction": pl.Float32}).select(irm.logloss()).item(), 4)
    7.9712
    """
    return _expr("logloss", label, prediction, sample_weight, positive=positive_label)


def ne(
    label: str = "label",
    prediction: str = "prediction",
    *,
    sample_weight: str | None = None,
    positive_label: Label = 1,
) -> pl.Expr:
    """Normalised entropy: log loss over the entropy of the base rate (He et al. 2014).

    Below 1 the model beats always predicting the base rate ``r``; null when ``r`` is 0
    or 1 (the entropy is 0). The log loss is clipped as :func:`logloss` clips it (at the
    prediction dtype's epsilon).

    Parameters
    ----------
    label
        The label column: positive where it equals ``positive_label``.
    prediction
        The predicted probability of the positive class, in ``[0, 1]``.
    sample_weight
        A column of non-negative row weights, or ``None``.
    positive_label
        The label value of a positive row.
        A group whose labels are not 0 and the positive one (for text labels: two
        labels neither of which is ``positive_label``, ``'Yes'`` for ``'yes'``, or
        more than two) gives NaN, as :func:`polars_irmetrics.evaluate` refuses them;
        one text label only, not the positive one, is a group of negatives.

    Returns
    -------
    pl.Expr
        A Float64 aggregation named ``ne``.

    See Also
    --------
    logloss : the numerator.

    Examples
    --------
    Predicting the base rate itself (here 1/4) gives exactly 1:

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"label": [1, 0, 0, 0], "prediction": [0.25] * 4})
    >>> round(df.select(irm.ne()).item(), 12)
    1.0
    """
    return _expr("ne", label, prediction, sample_weight, positive=positive_label)


def brier(
    label: str = "label",
    prediction: str = "prediction",
    *,
    sample_weight: str | None = None,
    positive_label: Label = 1,
) -> pl.Expr:
    """Brier score: ``sum w (p - y)^2 / W``, the squared error of a probability.

    Equal to ``sklearn.metrics.brier_score_loss``.

    Parameters
    ----------
    label
        The label column: positive where it equals ``positive_label``.
    prediction
        The predicted probability of the positive class, in ``[0, 1]``.
    sample_weight
        A column of non-negative row weights, or ``None``.
    positive_label
        The label value of a positive row.
        A group whose labels are not 0 and the positive one (for text labels: two
        labels neither of which is ``positive_label``, ``'Yes'`` for ``'yes'``, or
        more than two) gives NaN, as :func:`polars_irmetrics.evaluate` refuses them;
        one text label only, not the positive one, is a group of negatives.

    Returns
    -------
    pl.Expr
        A Float64 aggregation named ``brier``.

    See Also
    --------
    logloss : the other proper scoring rule.
    mse : the same formula on ratings.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"label": [1, 0], "prediction": [0.5, 0.5]})
    >>> df.select(irm.brier()).item()
    0.25
    """
    return _expr("brier", label, prediction, sample_weight, positive=positive_label)


def calibration(
    label: str = "label",
    prediction: str = "prediction",
    *,
    sample_weight: str | None = None,
    positive_label: Label = 1,
) -> pl.Expr:
    """Predicted over observed positives: ``sum w p / sum w y`` (1 is calibrated).

    Null when the group has no positive.

    Parameters
    ----------
    label
        The label column: positive where it equals ``positive_label``.
    prediction
        The predicted probability of the positive class, in ``[0, 1]``.
    sample_weight
        A column of non-negative row weights, or ``None``.
    positive_label
        The label value of a positive row.
        A group whose labels are not 0 and the positive one (for text labels: two
        labels neither of which is ``positive_label``, ``'Yes'`` for ``'yes'``, or
        more than two) gives NaN, as :func:`polars_irmetrics.evaluate` refuses them;
        one text label only, not the positive one, is a group of negatives.

    Returns
    -------
    pl.Expr
        A Float64 aggregation named ``calibration``.

    See Also
    --------
    ece : calibration within probability bins.

    Examples
    --------
    0.2 + 0.1 + 0.3 = 0.6 clicks predicted, 1 observed; no click in ``b``:

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({
    ...     "segment": ["a", "a", "a", "b"],
    ...     "label": [1, 0, 0, 0],
    ...     "prediction": [0.2, 0.1, 0.3, 0.4],
    ... })
    >>> df.group_by("segment").agg(irm.calibration()).sort("segment")["calibration"].to_list()
    [0.6, None]
    """
    return _expr("calibration", label, prediction, sample_weight, positive=positive_label)


def ece(
    label: str = "label",
    prediction: str = "prediction",
    *,
    bins: int = 10,
    sample_weight: str | None = None,
    positive_label: Label = 1,
) -> pl.Expr:
    """Expected calibration error over ``bins`` equal-width bins of ``[0, 1]``.

    ``sum_b |sum_{i in b} w_i (p_i - y_i)| / W``: row ``i`` falls in bin
    ``min(floor(p_i * bins), bins - 1)`` (so 1.0 is in the last bin); empty bins add
    nothing.

    Parameters
    ----------
    label
        The label column: positive where it equals ``positive_label``.
    prediction
        The predicted probability of the positive class, in ``[0, 1]``.
    bins
        How many equal-width bins (the metric name's ``@``: ``ece@20``).
    sample_weight
        A column of non-negative row weights, or ``None``.
    positive_label
        The label value of a positive row.
        A group whose labels are not 0 and the positive one (for text labels: two
        labels neither of which is ``positive_label``, ``'Yes'`` for ``'yes'``, or
        more than two) gives NaN, as :func:`polars_irmetrics.evaluate` refuses them;
        one text label only, not the positive one, is a group of negatives.

    Returns
    -------
    pl.Expr
        A Float64 aggregation named ``ece`` (``ece@20`` for 20 bins).

    See Also
    --------
    calibration : one ratio over all rows.

    Examples
    --------
    With 2 bins, [0.1, 0.2] (no click, predicted 0.3) and [0.7, 0.9] (1 click, predicted
    1.6): ``(|0.3 - 0| + |1.6 - 1|) / 4``.

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"label": [0, 0, 1, 0], "prediction": [0.1, 0.2, 0.7, 0.9]})
    >>> round(df.select(irm.ece(bins=2)).item(), 12)
    0.225
    """
    return _expr("ece", label, prediction, sample_weight, positive=positive_label, k=bins)


def rmse(
    label: str = "label", prediction: str = "prediction", *, sample_weight: str | None = None
) -> pl.Expr:
    """Root mean squared error of a predicted value: ``sqrt(sum w (p - y)^2 / W)``.

    Equal to ``sklearn.metrics.root_mean_squared_error``.

    Accurate at any finite scale (each group's errors and spreads are scaled by powers of
    two, :mod:`polars_irmetrics.prediction.statistics`): where scikit-learn's float sums
    overflow (errors beyond ``1e154``) or lose the digits of a small spread beside a
    large offset, this keeps its digits: each residual ``y - p`` is rounded to a
    float (as scikit-learn rounds it), then the sums are exact (within about an ulp).

    Parameters
    ----------
    label
        The true value (rating) column.
    prediction
        The predicted value column.
    sample_weight
        A column of non-negative row weights, or ``None``.

    Returns
    -------
    pl.Expr
        A Float64 aggregation named ``rmse``.

    See Also
    --------
    mse : without the square root.
    mae : absolute instead of squared errors.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> ratings = pl.DataFrame({"rating": [4, 2], "predicted": [3.0, 3.0]})
    >>> ratings.select(irm.rmse("rating", "predicted")).item()
    1.0
    """
    return _expr("rmse", label, prediction, sample_weight)


def mse(
    label: str = "label", prediction: str = "prediction", *, sample_weight: str | None = None
) -> pl.Expr:
    """Mean squared error of a predicted value: ``sum w (p - y)^2 / W``.

    Equal to ``sklearn.metrics.mean_squared_error``.

    Accurate at any finite scale (each group's errors and spreads are scaled by powers of
    two, :mod:`polars_irmetrics.prediction.statistics`): where scikit-learn's float sums
    overflow (errors beyond ``1e154``) or lose the digits of a small spread beside a
    large offset, this keeps its digits: each residual ``y - p`` is rounded to a
    float (as scikit-learn rounds it), then the sums are exact (within about an ulp). A mean beyond
    float64's range (errors beyond about ``1e154``: their squares) is ``inf``.

    Parameters
    ----------
    label
        The true value (rating) column.
    prediction
        The predicted value column.
    sample_weight
        A column of non-negative row weights, or ``None``.

    Returns
    -------
    pl.Expr
        A Float64 aggregation named ``mse``.

    See Also
    --------
    rmse : its square root.

    Examples
    --------
    A weight of 3 on the first row: ``(3 * 1 + 1 * 4) / 4``.

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"label": [4, 1], "prediction": [3.0, 3.0], "w": [3.0, 1.0]})
    >>> df.select(irm.mse(sample_weight="w")).item()
    1.75
    """
    return _expr("mse", label, prediction, sample_weight)


def mae(
    label: str = "label", prediction: str = "prediction", *, sample_weight: str | None = None
) -> pl.Expr:
    """Mean absolute error of a predicted value: ``sum w |p - y| / W``.

    Equal to ``sklearn.metrics.mean_absolute_error``.

    Accurate at any finite scale (each group's errors and spreads are scaled by powers of
    two, :mod:`polars_irmetrics.prediction.statistics`): where scikit-learn's float sums
    overflow (errors beyond ``1e154``) or lose the digits of a small spread beside a
    large offset, this keeps its digits: each residual ``y - p`` is rounded to a
    float (as scikit-learn rounds it), then the sums are exact (within about an ulp).

    Parameters
    ----------
    label
        The true value (rating) column.
    prediction
        The predicted value column.
    sample_weight
        A column of non-negative row weights, or ``None``.

    Returns
    -------
    pl.Expr
        A Float64 aggregation named ``mae``.

    See Also
    --------
    rmse : squared instead of absolute errors.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"label": [4, 1], "prediction": [3.0, 3.0]})
    >>> df.select(irm.mae()).item()
    1.5
    """
    return _expr("mae", label, prediction, sample_weight)


def r2(
    label: str = "label", prediction: str = "prediction", *, sample_weight: str | None = None
) -> pl.Expr:
    """Coefficient of determination: ``1 - SS_res / SS_tot``.

    Equal to ``sklearn.metrics.r2_score``, except that constant labels
    (``SS_tot = 0``) give null here, where scikit-learn returns 1.0 or 0.0.

    Accurate at any finite scale (each group's errors and spreads are scaled by powers of
    two, :mod:`polars_irmetrics.prediction.statistics`): where scikit-learn's float sums
    overflow (errors beyond ``1e154``) or lose the digits of a small spread beside a
    large offset, this keeps its digits: each residual ``y - p`` is rounded to a
    float (as scikit-learn rounds it), then the sums are exact (within about an ulp). A value below
    float64's range (errors ``1e154`` times the labels' spread) is ``-inf``.

    Parameters
    ----------
    label
        The true value (rating) column.
    prediction
        The predicted value column.
    sample_weight
        A column of non-negative row weights, or ``None``.

    Returns
    -------
    pl.Expr
        A Float64 aggregation named ``r2``.

    See Also
    --------
    explained_variance : ignores a constant bias of the predictions.

    Examples
    --------
    Constant labels have no variance to explain:

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"label": [3, 3], "prediction": [3.0, 2.0]})
    >>> print(df.select(irm.r2()).item())
    None
    """
    return _expr("r2", label, prediction, sample_weight)


def explained_variance(
    label: str = "label", prediction: str = "prediction", *, sample_weight: str | None = None
) -> pl.Expr:
    """Explained variance: ``1 - Var(y - p) / Var(y)`` (weighted variances).

    Equal to ``sklearn.metrics.explained_variance_score``, except that constant labels
    give null here, where scikit-learn returns 1.0 or 0.0.

    Accurate at any finite scale (each group's errors and spreads are scaled by powers of
    two, :mod:`polars_irmetrics.prediction.statistics`): where scikit-learn's float sums
    overflow (errors beyond ``1e154``) or lose the digits of a small spread beside a
    large offset, this keeps its digits: each residual ``y - p`` is rounded to a
    float (as scikit-learn rounds it), then the sums are exact (within about an ulp).

    Parameters
    ----------
    label
        The true value (rating) column.
    prediction
        The predicted value column.
    sample_weight
        A column of non-negative row weights, or ``None``.

    Returns
    -------
    pl.Expr
        A Float64 aggregation named ``explained_variance``.

    See Also
    --------
    r2 : penalises a constant bias too.

    Examples
    --------
    A prediction off by a constant explains all the variance (R² does not agree):

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"label": [1, 2, 3], "prediction": [2.0, 3.0, 4.0]})
    >>> df.select(irm.explained_variance(), irm.r2()).row(0)
    (1.0, -0.5)
    """
    return _expr("explained_variance", label, prediction, sample_weight)
