"""The warnings of the prediction means: an empty table, a metric undefined in a group,
an infinite rating metric. One machine's plan gives them when it is collected
(:mod:`polars_irmetrics.prediction.evaluate`), the engines on their merged means
(:mod:`polars_irmetrics.engines._prediction`): the same texts on every path."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_irmetrics.errors import IrmWarning
from polars_irmetrics.ground.validate import warn_empty_table, warn_from_plan
from polars_irmetrics.metrics.registry import MetricRequest
from polars_irmetrics.prediction.statistics import NUM_ROWS, RATING_METRICS

__all__ = ["has_means_warnings", "warn_on_means", "warn_on_overflow"]

#: Why each metric may be null (undefined) in a group, as its formula says.
_UNDEFINED = {
    "auc": "the labels hold one class only, and the AUC orders positive-negative pairs "
    "(scikit-learn's roc_auc_score refuses such labels; never a made-up 0.5)",
    "gauc": "no query holds both classes, and each query's AUC orders positive-negative "
    "pairs (the queries left out are counted in its '_one_class' column)",
    "pr_auc": "the labels hold no positive, and the average precision reads the positives",
    "ne": "the labels' (weighted) mean is 0 or 1, so their entropy, the denominator, is 0",
    "r2": "the labels are constant, so their spread, the denominator, is 0 (scikit-learn's "
    "r2_score gives 1.0 for a perfect prediction and 0.0 otherwise there)",
    "explained_variance": "the labels are constant, so their variance, the denominator, "
    "is 0 (scikit-learn gives 1.0 for a perfect prediction and 0.0 otherwise there)",
    "calibration": "the labels hold no positive, so the observed count, the denominator, is 0",
}


#: The metrics that read each class's weight apart: null too where one class weighs 0.
_BY_CLASS = frozenset({"auc", "gauc", "pr_auc", "ne", "calibration"})


def _undefined_reasons(
    requests: Sequence[tuple[str, MetricRequest]], weight: str | None
) -> list[tuple[str, str | None]]:
    """Per label, why its metric may be null (:data:`_UNDEFINED`, and zero weights)."""

    def why(name: str) -> str | None:
        zero = None
        if weight is not None:
            whose = ", or those of one class," if name in _BY_CLASS else ""
            zero = (
                f"the group's sample weights (column {weight!r}){whose} are all 0: no "
                "weight, no mean (scikit-learn refuses weights that sum to 0)"
            )
        reasons = [r for r in (_UNDEFINED.get(name), zero) if r is not None]
        return ", or ".join(reasons) if reasons else None

    undefined = [(label, why(req.metric.name)) for label, req in requests]
    return undefined if any(reason for _, reason in undefined) else []


def warn_on_means(
    frame: pl.DataFrame,
    requests: Sequence[tuple[str, MetricRequest]],
    keys: Sequence[str],
    weight: str | None = None,
    *,
    empty: bool = True,
) -> None:
    """The warnings of the means ``frame``: an empty table, undefined values (below),
    then infinite rating metrics (:func:`warn_on_overflow`). The engines call it on
    their merged means, one machine when its plan is collected.

    An :class:`~polars_irmetrics.errors.IrmWarning` for each metric that is null in
    some group of one row or more of the means ``frame`` (its value undefined there:
    :data:`_UNDEFINED`; with sample weights (column ``weight``), also where the group's
    weights, or one class's, are all 0), naming the first such group: a null in a table
    of numbers is easy to miss, and a mean over groups would skip it. ``empty``: also
    warn of a table of no row (every metric null); ``False`` where the labels= pairs'
    warning says why (``unmatched='drop'``)."""
    if empty and (frame.height == 0 or not (frame[NUM_ROWS] > 0).any()):
        warn_empty_table()
        return
    for label, reason in _undefined_reasons(requests, weight):
        # a group of no row is null for every metric: the pairs' warning says why
        bad = frame.filter(pl.col(label).is_null() & (pl.col(NUM_ROWS) > 0))
        if reason is None or not bad.height:
            continue
        first = bad.row(0, named=True)
        place = ", ".join(f"{k}={first[k]!r}" for k in keys)
        where = f" in {bad.height} of the {frame.height} groups (first: {place})" if keys else ""
        warn_from_plan(f"{label!r} is null{where}: {reason}", IrmWarning)
    warn_on_overflow(frame, requests, keys)


def warn_on_overflow(
    frame: pl.DataFrame, requests: Sequence[tuple[str, MetricRequest]], keys: Sequence[str]
) -> None:
    """An :class:`~polars_irmetrics.errors.IrmWarning` for each rating metric whose
    value is infinite in some group of the means ``frame``: its true value (from finite
    labels and predictions, which the checks ensure) is beyond float64's range, and inf
    or -inf is the nearest float64 holds."""
    rating = [(label, req.metric.name) for label, req in requests]
    for label, name in [(label, name) for label, name in rating if name in RATING_METRICS]:
        bad = frame.filter(pl.col(label).is_infinite())
        if not bad.height:
            continue
        first = bad.row(0, named=True)
        place = ", ".join(f"{k}={first[k]!r}" for k in keys)
        where = f" (first in the group {place})" if keys else ""
        if name in ("r2", "explained_variance"):
            why = (
                "its true value is below -1.8e308, which float64 cannot hold: the "
                "squared errors are more than 1e308 times the labels' spread around "
                "their mean (a ratio: rescaling both columns does not change it); "
                "check that the predictions are on the labels' scale"
            )
        else:
            why = (
                "its true value is beyond float64's range (about 1.8e308): the errors "
                "are that large; rescale the labels and predictions, e.g. divide both "
                "by 1e150 (rmse and mae scale with them, mse with their square, r2 and "
                "explained_variance do not change)"
            )
        warn_from_plan(f"{label!r} is {first[label]}{where}: {why}", IrmWarning)


def has_means_warnings(
    requests: Sequence[tuple[str, MetricRequest]], weight: str | None, *, empty: bool
) -> bool:
    """Whether :func:`warn_on_means` can say anything of these metrics' means."""
    rating = any(req.metric.name in RATING_METRICS for _, req in requests)
    return bool(_undefined_reasons(requests, weight)) or empty or rating
