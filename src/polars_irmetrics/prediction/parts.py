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

What each metric keeps: the statistics of
:mod:`polars_irmetrics.prediction.statistics` (integer units of 2**-64 per sum, with a
float fallback beyond 2**32), the score histogram of ``auc`` and ``pr_auc`` (integer
units per distinct score), and for ``gauc`` each query's AUC, computed whole in its part
(a query never spans two parts), summed over queries as units. The rating and
probability metrics take a first pass: :func:`part_scale` on every part, merged by
:func:`merge_scale` into each group's scale (powers of two from the extents of its
labels and half residuals, and from the largest term of each probability statistic,
:mod:`polars_irmetrics.prediction.statistics`); every part reads the whole table's
scale, so that the parts' units are of one scale and add up exactly; ``r2`` and
``explained_variance`` a second: :func:`part_means` on every part (reading the scale),
merged by :func:`merge_means` into each group's exact means; every part then reads them
(``part_statistics(..., first=)``) to sum its terms and spreads.
A text label column takes a first pass of its own: :func:`part_labels` (each part's
distinct labels), checked together by :func:`merge_labels` over the whole table, as one
machine checks it. The other data checks raise in a part with that part's counts; the
engines count them in every part with :func:`part_checks` and raise them over the whole
table with :func:`merge_checks`, one machine's message.

Int128 has no Arrow, Spark or pandas type: each Int128 column travels as two Int64
halves (``hi * 2**62 + lo``) and is made whole again before the merge. The merge adds
integers, exactly, and computes every metric from them with the one-machine float
operations: the means equal :func:`polars_irmetrics.evaluate`'s to the last bit (in
memory, LazyFrame and ``buckets=``), except where a sum falls back to floats. The merged
histogram of one ``by`` group is held in one task: its size is the number of distinct
scores, not rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import polars as pl

from polars_irmetrics.errors import MetricParameterError
from polars_irmetrics.ground.halves import int128_halves, int128_whole
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import INTERNAL
from polars_irmetrics.metrics.registry import MetricRequest
from polars_irmetrics.prediction.evaluate import (
    NUM_ROWS,
    Prepared,
    beside,
    check_text_labels,
    group,
    prepare_rows,
    scale_aggs,
    with_first_passes,
)
from polars_irmetrics.prediction.statistics import (
    HISTOGRAM_METRICS,
    NEG,
    POS,
    SCALE_MINIMA,
    SCORE,
    finished,
    gauc_statistics,
    histogram_values,
    is_scale_column,
    mean_terms,
    means_from,
    needs_scale,
    per_query_auc,
    scale_columns,
    scale_from,
    scale_maxima,
    score_histogram,
    statistic_aggs,
    statistic_terms,
    with_probability_terms,
    with_scale,
)

__all__ = [
    "HISTOGRAM",
    "checked_keys",
    "merge_checks",
    "merge_labels",
    "merge_means",
    "merge_scale",
    "merge_statistics",
    "part_checks",
    "part_labels",
    "part_means",
    "part_scale",
    "part_statistics",
]

#: Boolean column of :func:`part_statistics`: a score-histogram row (else a sums row).
HISTOGRAM = f"{INTERNAL}histogram"
#: Int128 columns travel as two Int64 halves (Arrow, Spark and pandas have no Int128).
_halves, _whole = int128_halves, int128_whole


def _with_first_passes(
    prepared: Prepared,
    requests: Sequence[tuple[str, MetricRequest]],
    by: list[str],
    first: pl.DataFrame | None,
) -> Prepared:
    """The rows with what the first passes give their group beside them (the scale of
    the rating and probability metrics, the means of ``r2`` and ``explained_variance``):
    the whole table's (``first``, from :func:`merge_scale` or :func:`merge_means`), or
    this part's own when it is the whole table (``None``); and the terms of the
    probability statistics
    (:func:`~polars_irmetrics.prediction.statistics.with_probability_terms`)."""
    rows = prepared.rows
    if first is None:
        rows = with_first_passes(rows, prepared.scope, by, requests)
    else:
        if by:
            rows = rows.join(first.lazy(), on=by, how="left", nulls_equal=True)
        else:
            rows = rows.join(first.lazy(), how="cross")
        rows = with_probability_terms(rows, prepared.scope, requests)
    return replace(prepared, rows=rows)


def part_labels(
    table: pl.LazyFrame,
    requests: Sequence[tuple[str, MetricRequest]],
    options: EvalOptions,
    labels: pl.LazyFrame | None = None,
) -> pl.LazyFrame | None:
    """The first pass of a text label column, on one part (``None`` when the label
    column is not text): the part's distinct labels (those the metrics read, nulls left
    out; :meth:`~polars_irmetrics.prediction.evaluate.Prepared.text_labels`), which
    :func:`merge_labels` checks together, as one machine checks the whole table's: a
    part of ``'Click'`` rows beside parts of ``'click'`` and ``'no'`` is refused, not
    read as a part of negatives. The other data checks are those of
    :func:`part_statistics` (the last pass).

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> options, requests = EvalOptions(positive_label="click"), parse_metric_list(["auc"])
    >>> part = pl.LazyFrame({"label": ["no", "no", None], "prediction": [0.1, 0.2, 0.3]})
    >>> part_labels(part, requests, options).collect()["label"].to_list()
    ['no']
    """
    prepared = prepare_rows(table, requests, options, labels)
    return prepared.text_labels() if prepared.text_label else None


def merge_labels(
    statistics: pl.LazyFrame,
    requests: Sequence[tuple[str, MetricRequest]],
    options: EvalOptions,
) -> pl.LazyFrame:
    """Every part's :func:`part_labels`, checked together (whatever ``by=``), raised when
    collected with one machine's message
    (:func:`~polars_irmetrics.prediction.evaluate.check_text_labels`); else one row, the
    number of distinct labels.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> options, requests = EvalOptions(positive_label="click"), parse_metric_list(["auc"])
    >>> parts = pl.LazyFrame({"label": ["click", "no", "Click"]})  # three parts' labels
    >>> merge_labels(parts, requests, options).collect()
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: column 'label' holds more than two labels ...
    """
    names = frozenset(req.metric.name for _, req in requests)
    return check_text_labels(statistics, names, options)


def checked_keys(options: EvalOptions) -> list[str]:
    """The groups the data checks are counted in, as one machine counts them: each
    ``by`` group, with ``per_query=True`` each ``(by, query_id)``."""
    by = list(options.by_keys)
    return [*by, options.query_id] if options.per_query else by


def part_checks(
    table: pl.LazyFrame,
    requests: Sequence[tuple[str, MetricRequest]],
    options: EvalOptions,
    labels: pl.LazyFrame | None = None,
) -> pl.LazyFrame:
    """The data checks of one part, counted per group (:func:`checked_keys`) and not
    raised (:meth:`~polars_irmetrics.prediction.evaluate.Prepared.check_counts`), which
    :func:`merge_checks` adds up over the parts: a part's own counts are not the
    table's.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> part = pl.LazyFrame({"label": [1, 0], "prediction": [1.5, 0.2]})
    >>> part_checks(part, parse_metric_list(["logloss"]), EvalOptions()).collect()[
    ...     "__irm_n_range"].item()
    1
    """
    prepared = prepare_rows(table, requests, options, labels)
    return prepared.check_counts(checked_keys(options))


def merge_checks(
    counts: pl.LazyFrame,
    requests: Sequence[tuple[str, MetricRequest]],
    options: EvalOptions,
    table: pl.LazyFrame,
    labels: pl.LazyFrame | None = None,
) -> pl.LazyFrame:
    """Every part's :func:`part_checks`, added up and raised when collected with one
    machine's message over the whole table
    (:meth:`~polars_irmetrics.prediction.evaluate.Prepared.raising_counts`); ``table``
    and ``labels``: frames of the tables' schemas (empty will do), which give the
    checks. Else one row, the number of groups.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> requests, options = parse_metric_list(["logloss"]), EvalOptions()
    >>> a = pl.LazyFrame({"label": [1, 0], "prediction": [1.5, 0.2]})
    >>> b = pl.LazyFrame({"label": [1, 0], "prediction": [1.5, 1.5]})
    >>> parts = pl.concat([part_checks(t, requests, options) for t in (a, b)])
    >>> merge_checks(parts, requests, options, a.clear()).collect()
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: column 'prediction' has 3 value(s) outside ...
    """
    prepared = prepare_rows(table, requests, options, labels)
    return prepared.raising_counts(counts, checked_keys(options))


def part_scale(
    table: pl.LazyFrame,
    requests: Sequence[tuple[str, MetricRequest]],
    options: EvalOptions,
    labels: pl.LazyFrame | None = None,
) -> pl.LazyFrame:
    """The first pass of the rating and probability metrics on one part: per ``by``
    group its smallest and largest label and half residual and its largest weight, and
    the largest term of each probability statistic
    (:func:`~polars_irmetrics.prediction.statistics.scale_maxima`), which
    :func:`merge_scale` turns into the whole table's scale. The data checks are those of
    :func:`part_statistics` (the last pass)."""
    prepared = prepare_rows(table, requests, options, labels)
    return group(prepared.rows, list(options.by_keys), scale_maxima(prepared.scope, requests))


def merge_scale(statistics: pl.LazyFrame, options: EvalOptions) -> pl.LazyFrame:
    """Each ``by`` group's scale (:func:`~polars_irmetrics.prediction.statistics.scale_columns`)
    from every part's :func:`part_scale`: what :func:`part_means` and
    :func:`part_statistics` read (``first=``)."""
    by = list(options.by_keys)
    extents = [c for c in statistics.collect_schema().names() if c not in by]
    merged = group(
        statistics,
        by,
        [pl.col(c).min() if c in SCALE_MINIMA else pl.col(c).max() for c in extents],
    )
    return merged.select(*by, *scale_from(pl.col, extents))


def part_means(
    table: pl.LazyFrame,
    requests: Sequence[tuple[str, MetricRequest]],
    options: EvalOptions,
    labels: pl.LazyFrame | None = None,
    first: pl.DataFrame | None = None,
) -> pl.LazyFrame:
    """The pass of ``r2`` and ``explained_variance`` after the scale, on one part: per
    ``by`` group the statistics of its weight, label and residual (Int128 units as Int64
    halves) and its scale (``first``, from :func:`merge_scale`; ``None``: this part is
    the whole table), which :func:`merge_means` turns into the whole table's means. The
    data checks are those of :func:`part_statistics` (the last pass)."""
    prepared = prepare_rows(table, requests, options, labels)
    by = list(options.by_keys)
    if first is None:
        rows = with_scale(prepared.rows, prepared.scope, by, requests)
    else:
        rows = _with_first_passes(prepared, requests, by, first).rows
    scale = [pl.col(c).first() for c in scale_columns(requests)]
    return _halves(group(rows, by, [*statistic_aggs(mean_terms(prepared.scope)), *scale]))


def merge_means(statistics: pl.LazyFrame, options: EvalOptions) -> pl.LazyFrame:
    """Each ``by`` group's scale, mean label and mean residual from every part's
    :func:`part_means`: what :func:`part_statistics` reads (``first=``)."""
    by = list(options.by_keys)
    whole = _whole(statistics)
    stats = [c for c in whole.collect_schema().names() if c not in by]
    summed = group(whole, by, [_merged(c) for c in stats])
    scale = [c for c in stats if is_scale_column(c)]
    return summed.select(*by, *scale, *means_from(pl.col))


def _merged(column: str) -> pl.Expr:
    """A statistic of the parts, merged: the sum, the scale (the same in every part of
    a group) as it is."""
    return pl.col(column).max() if is_scale_column(column) else pl.col(column).sum()


def part_statistics(
    table: pl.LazyFrame,
    requests: Sequence[tuple[str, MetricRequest]],
    options: EvalOptions,
    labels: pl.LazyFrame | None = None,
    first: pl.DataFrame | None = None,
) -> pl.LazyFrame:
    """One part's statistics of ``requests`` (module doc), lazily; the data checks of
    :func:`~polars_irmetrics.prediction.evaluate.build_prediction_plan` are raised when
    it is collected. ``first``: for the rating and probability metrics, each ``by``
    group's scale over the whole table (:func:`merge_scale`), with ``r2`` and
    ``explained_variance`` its means too (:func:`merge_means`); ``None`` when the part is
    the whole table (parts that chose their own scales do not add up).

    Returns
    -------
    pl.LazyFrame
        Sums rows (``HISTOGRAM`` false; one per ``by`` group, one without ``by``) with
        the ``by`` keys, ``num_rows`` (i64) and each statistic's units (as two i64
        halves, ``<name>_hi`` and ``<name>_lo``), float sum (f64) and count of terms
        beyond the units (i64), then, when ``auc`` or ``pr_auc`` is asked for,
        histogram rows (``HISTOGRAM`` true) with the ``by`` keys, a score and its
        positives and negatives (units, as halves).

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> log = pl.LazyFrame({"label": [1, 0, 1], "prediction": [0.5, 0.5, 0.25]})
    >>> stats = part_statistics(log, parse_metric_list(["auc"]), EvalOptions()).collect()
    >>> stats.filter("__irm_histogram").sort("__irm_score").select(  # 1 = 4 * 2**62 units
    ...     "__irm_score", "__irm_pos_hi", "__irm_neg_hi").rows()
    [(0.25, 4, 0), (0.5, 4, 4)]
    """
    if options.per_query:  # pragma: no cover - the engines evaluate per query directly
        raise MetricParameterError("part statistics are for means; per query, evaluate each part")
    prepared = prepare_rows(table, requests, options, labels)
    by = list(options.by_keys)
    if needs_scale(requests):
        prepared = _with_first_passes(prepared, requests, by, first)
    s = prepared.scope
    aggs = [pl.len().cast(pl.Int64).alias(NUM_ROWS), *statistic_aggs(statistic_terms(s, requests))]
    aggs += scale_aggs(requests)
    result = prepared.grouped(by, aggs)
    if any(req.metric.name == "gauc" for _, req in requests):
        per_query = per_query_auc(prepared.rows, s, [*by, options.query_id])
        result = beside(result, gauc_statistics(per_query, by), by)
    result = prepared.raising(result, by)
    result = _halves(result).with_columns(pl.lit(False).alias(HISTOGRAM))
    if not any(req.metric.name in HISTOGRAM_METRICS for _, req in requests):
        return result
    histogram = _halves(score_histogram(prepared.rows, s, by))
    return pl.concat(
        [result, histogram.with_columns(pl.lit(True).alias(HISTOGRAM))], how="diagonal"
    )


def merge_statistics(
    statistics: pl.LazyFrame,
    requests: Sequence[tuple[str, MetricRequest]],
    options: EvalOptions,
) -> pl.LazyFrame:
    """The means of :func:`polars_irmetrics.evaluate` from the statistics of every part
    (of whole ``by`` groups): the columns and order of its result, to the last bit.

    Examples
    --------
    Two parts of one log, merged, give the log's values:

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> requests = parse_metric_list(["auc", "logloss"])
    >>> a = pl.LazyFrame({"label": [1, 0], "prediction": [0.5, 0.5]})
    >>> b = pl.LazyFrame({"label": [1], "prediction": [0.25]})
    >>> parts = [part_statistics(t, requests, EvalOptions()) for t in (a, b)]
    >>> merged = merge_statistics(pl.concat(parts, how="diagonal"), requests, EvalOptions())
    >>> merged.collect()
    shape: (1, 3)
    ┌──────────┬──────┬──────────┐
    │ num_rows ┆ auc  ┆ logloss  │
    │ ---      ┆ ---  ┆ ---      │
    │ i64      ┆ f64  ┆ f64      │
    ╞══════════╪══════╪══════════╡
    │ 3        ┆ 0.25 ┆ 0.924196 │
    └──────────┴──────┴──────────┘
    >>> merged.collect().equals(irm.evaluate(pl.concat([a, b]).collect(), ["auc", "logloss"]))
    True
    """
    by = list(options.by_keys)
    whole = _whole(statistics)
    schema = whole.collect_schema()
    sums = whole.filter(~pl.col(HISTOGRAM))
    skip = {*by, HISTOGRAM, SCORE, POS, NEG}
    stats = [c for c in schema.names() if c not in skip]
    result = group(sums, by, [_merged(c) for c in stats])
    result = result.with_columns(value.alias(label) for label, value in finished(requests))
    if any(req.metric.name in HISTOGRAM_METRICS for _, req in requests):
        merged = (
            whole.filter(pl.col(HISTOGRAM))
            .group_by([*by, SCORE])
            .agg(pl.col(POS).sum(), pl.col(NEG).sum())
        )
        result = beside(result, histogram_values(merged, by, requests), by)
    columns = [*by, NUM_ROWS]
    for label, req in requests:
        columns.append(label)
        if req.metric.name == "gauc":
            columns.append(f"{label}_one_class")
    result = result.select(columns)
    return result.sort(by, nulls_last=True) if by else result
