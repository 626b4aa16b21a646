"""The lazy plan of ``irm.evaluate(table, ["auc", "gauc"], label=..., prediction=...)``.

One lazy polars query over a table of predictions (one row per prediction, with its
label):

1. Two-table form (``labels=`` given): the predictions and the labels are joined on
   ``(query_id, doc_id)`` (Microsoft Recommenders' ``rating_pred`` and ``rating_true``
   on user and item). A pair on one side only is an error under ``unmatched="error"``
   (the default; the message counts them on each side and names one), or left out under
   ``unmatched="drop"`` (Recommenders' inner merge; a warning when the pairs on both
   sides are fewer than half of the predictions and of the labels, every value null
   when none is: :meth:`Prepared.warning`). A pair twice on one side is an error.
2. One ``group_by`` over the ``by`` keys (and ``query_id`` with ``per_query=True``) with
   every metric's statistics (:mod:`polars_irmetrics.prediction.statistics`) and the
   data checks as counts. ``gauc`` without ``per_query`` is a second ``group_by`` over
   ``(by, query_id)`` (each query's AUC and weight) and a weighted mean per ``by`` group,
   joined beside the others; with ``per_query=True`` it is each query's AUC.
3. A last step reads the check counts from the small result and raises the first
   problem (:func:`_raise_on_flags`), then drops them; a rating metric whose value is
   beyond float64's range (``mse`` of errors beyond ``1e154``: inf) is given with an
   :class:`~polars_irmetrics.errors.IrmWarning` that names it (:func:`_warn_on_overflow`).

Checks, whatever the metrics: null labels, predictions or weights, NaN predictions,
labels or weights, negative or infinite weights, a null query id wherever the table
has the ``query_id`` column (given or the default name; read by ``gauc`` and
``per_query=True``, refused alike beside ``logloss``), and (two tables) null keys,
duplicate and one-sided pairs. Three checks are of a value's *meaning*, and are raised only for the
metrics that give the column that meaning (the library's rule elsewhere is that which
checks run never depends on the metrics; here the same number is valid for one metric
and meaningless for another, so a check for every metric would refuse valid input):

* a prediction outside ``[0, 1]`` is refused for the metrics that read it as a
  probability (:data:`~polars_irmetrics.metrics.prediction.PROBABILITY_METRICS`:
  ``logloss``, ``ne``, ``brier``, ``calibration``, ``ece``); it is a valid score for
  ``auc``, ``pr_auc`` and ``gauc`` (they read only its order) and a valid rating for
  the rating metrics;
* a label that is neither 0 nor the positive label (for a text label: more than two
  distinct labels in the table, or two of which neither is the positive label, counted
  over the whole table whatever ``by=`` or ``per_query``; one label only, not the
  positive one, is a table of negatives) is refused for the
  metrics that read it as a click
  (:data:`~polars_irmetrics.metrics.prediction.BINARY_METRICS`); it is a valid rating
  for ``rmse``, ``mae``, ``mse``, ``r2`` and ``explained_variance``;
* an infinite label or prediction (of a float column) is refused for those rating
  metrics (:data:`~polars_irmetrics.prediction.statistics.RATING_METRICS`: it has no
  finite error; scikit-learn refuses it too); an infinite score is valid for ``auc``,
  ``pr_auc`` and ``gauc``.

All are counted whatever the metrics (one pass); the message names the metrics that
refuse the value and those that would read it. A text label is refused for the rating
metrics when the plan is built (a rating is a number).

Every value, mean or per query, comes from integer statistics
(:mod:`polars_irmetrics.prediction.statistics`), the same on one machine, out of core, on
the engines and in the expression functions (``irm.auc(...)`` in a ``group_by``), so the
values are equal to the last bit on every path, in any order of the rows. AUC in memory
and out of core: by default ``auc`` and ``pr_auc`` come from each group's (or, with
``per_query=True``, each query's) score histogram (one ``group_by`` of the distinct
scores); ``per_query=True`` reads it in memory whatever ``buckets=``. With
``buckets=`` a number or ``"auto"`` (out of core), they come instead from score ranges
written to disk and read one at a time (:mod:`polars_irmetrics.prediction.ranges`):
each range's *score histogram* (its distinct scores' positives and negatives), whose
integer counts, carried from range to range, give the in-memory histogram's value to
the last bit (tested). Peak memory is
that of one range, not of the table (measured in ``benchmarks/results_prediction.md``).
Every other metric is a sum over rows (``gauc`` a sum over queries), which polars
computes in one streaming pass, after a first pass for the rating and probability
metrics (each group's scale, :func:`with_first_passes`). On Spark and Dask, parts'
histograms and sums are merged instead (:mod:`polars_irmetrics.prediction.parts`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import polars as pl

from polars_irmetrics.errors import (
    ColumnTypeError,
    DuplicateError,
    InvalidValueError,
    MetricParameterError,
    QuerySetError,
)
from polars_irmetrics.ground.options import (
    EvalOptions,
    key_keyword,
    metrics_named,
    refuse_zero_positive,
    shared_column_error,
)
from polars_irmetrics.ground.validate import (
    FLOAT64_EXACT,
    INTERNAL,
    common_id_dtype,
    id_kind,
    key_dtype_error,
    kind_of,
    numeric_cast_fix,
    require_columns,
    system_name,
    warn_on_pairs,
    wide_numbers,
    with_tally_and_values,
)
from polars_irmetrics.ground.warning_order import warns_in_order
from polars_irmetrics.metrics.prediction import (
    BINARY_METRICS,
    PROBABILITY_METRICS,
    PredictionScope,
)
from polars_irmetrics.metrics.registry import MetricRequest
from polars_irmetrics.metrics.scope import FIXED_FLOOR, FIXED_LIMIT
from polars_irmetrics.prediction.notes import (
    has_means_warnings,
    warn_on_means,
    warn_on_overflow,
)
from polars_irmetrics.prediction.ranges import ranked_in_ranges
from polars_irmetrics.prediction.statistics import (
    AUC_Q,
    HISTOGRAM_METRICS,
    NUM_ROWS,
    RATING_METRICS,
    beside_every_row,
    finished,
    gauc_statistics,
    histogram_values,
    mean_terms,
    means_from,
    needs_means,
    needs_scale,
    per_query_auc,
    reads_query_id,
    scale_exponents,
    score_histogram,
    statistic_aggs,
    statistic_terms,
    with_scale,
)

__all__ = [
    "CHECKED_GROUPS",
    "NUM_ROWS",
    "TEXT_LABELS",
    "Prepared",
    "beside",
    "build_prediction_plan",
    "check_keys_read",
    "check_text_labels",
    "group",
    "prepare_rows",
    "scale_aggs",
    "with_first_passes",
    "with_means",
]

_SIDE = f"{INTERNAL}side"
_IN_PRED = f"{INTERNAL}in_pred"
_IN_LABELS = f"{INTERNAL}in_labels"
_DUP = f"{INTERNAL}dup"
#: With ``systems=``: a label whose pair ``labels=`` holds twice (:func:`_joined`; the
#: predictions' duplicates, :data:`_DUP`, are then counted per system and pair).
_DUP_LABELS = f"{INTERNAL}dup_labels"
#: A ``by``/``systems`` key of ``labels=`` beside the predictions' (by its index in
#: ``by_keys``), and whether a pair's two values differ (:func:`_joined`).
_LABEL_KEY = f"{INTERNAL}labels_key_"
_KEY_DIFFERS = f"{INTERNAL}key_differs_"
_PREDICTION_ROWS = f"{INTERNAL}prediction_rows"
_LABEL_ROWS = f"{INTERNAL}label_rows"
#: Each system's predictions (its keys and ``rows``), where ``systems=`` names them.
_SYSTEM_ROWS = f"{INTERNAL}system_rows"
#: Column of :func:`check_text_labels`: the number of distinct text labels of a table.
TEXT_LABELS = f"{INTERNAL}text_labels"
#: Column of :meth:`Prepared.raising_counts`: the number of groups checked.
CHECKED_GROUPS = f"{INTERNAL}checked_groups"


@dataclass(frozen=True)
class _Check:
    """One data check: a row condition, counted per group, with one example value."""

    name: str
    bad: pl.Expr
    example: pl.Expr
    error: type[Exception]
    template: str
    #: the example is the smallest offending value (rows of a join come in no set order)
    smallest: bool = False
    #: counted over the whole table, not per group (a text label's other value: one for
    #: the table, whatever the grouping, as a numeric label's is 0)
    whole: bool = False
    #: counted for the first system it finds (``{system}`` names it): as that system
    #: scored alone, whatever the other systems of the call
    per_system: bool = False
    #: one-sided labels: every label is counted once per system (labels= shared by the
    #: systems under unmatched='error', :func:`_per_system`)
    each_system: bool = False
    #: the ``systems=`` keys ``labels=`` holds, where it holds only some of them (a
    #: label per model, shared by its variants): ``{held}`` names the first system's
    #: values of them (the labels' own group), and a label of no system (its other keys
    #: null, :func:`_per_system`) is named by them alone
    held: tuple[str, ...] = ()

    @property
    def count(self) -> str:
        return f"{INTERNAL}n_{self.name}"

    @property
    def first(self) -> str:
        return f"{INTERNAL}e_{self.name}"

    def exprs(self) -> list[pl.Expr]:
        return [
            self.bad.sum().cast(pl.Int64).alias(self.count),
            (
                self.example.filter(self.bad).min()
                if self.smallest
                else self.example.filter(self.bad).first()
            )
            .cast(pl.String)
            .alias(self.first),
        ]


def build_prediction_plan(
    table: pl.LazyFrame,
    requests: Sequence[tuple[str, MetricRequest]],
    options: EvalOptions,
    labels: pl.LazyFrame | None = None,
    *,
    warn: bool = True,
) -> pl.LazyFrame:
    """The lazy evaluation of prediction metrics over ``table``.

    Parameters
    ----------
    table
        One row per prediction: ``options.prediction``, ``options.label`` (unless
        ``labels`` is given), ``options.sample_weight`` if set, the ``by`` keys, and
        ``options.query_id`` for ``per_query`` or ``gauc``.
    requests
        The parsed metrics (result column, request); every one reads ``"predictions"``.
    options
        The evaluation's options; see :func:`polars_irmetrics.evaluate`.
    labels
        The two-table form: the true labels, one row per ``(query_id, doc_id)`` with
        ``options.label``, joined to ``table`` on those keys.
    warn
        Under ``unmatched='drop'``, warn when the labels pair with few of the
        predictions (:meth:`Prepared.warning`); ``False`` for a part of the table (an
        engine's task: the engine warns from the whole table's counts).

    Returns
    -------
    pl.LazyFrame
        ``per_query=True``: one row per ``(by, query_id)``; else one row per ``by`` group
        (one row without ``by``). Columns: the keys, ``num_rows`` (i64), one Float64
        column per metric, and ``<gauc>_one_class`` (i64: the queries left out) after
        each ``gauc`` column of the means. Sorted by the keys.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> log = pl.LazyFrame({"label": [1, 0, 1], "prediction": [0.8, 0.3, 0.2]})
    >>> plan = build_prediction_plan(log, parse_metric_list(["auc"]), EvalOptions())
    >>> plan.collect().row(0)
    (3, 0.5)
    """
    prepared = prepare_rows(table, requests, options, labels)
    if not warn:
        prepared = replace(prepared, sizes=None)
    if not options.per_query:
        return _means_plan(prepared, requests, options, warn=warn)
    keys = [*options.by_keys, options.query_id]
    # each query's auc, pr_auc and gauc (its AUC) from the histogram of every query at
    # once (one group_by of the distinct scores: faster than a sort inside each query),
    # without weights its auc and gauc from ranks by a window (per_query_auc); the rest
    # from the query's statistics: the values of group_values to the last bit
    areas = (*HISTOGRAM_METRICS, "gauc")
    histogram = [(label, req) for label, req in requests if req.metric.name in areas]
    rest = [(label, req) for label, req in requests if req.metric.name not in areas]
    # the rest from each query's statistics, with its scale and means beside its rows
    # (windows, computed once per query): group_values' integers and float operations,
    # without its nested aggregations (a group context evaluates each reference again)
    scope = prepared.scope
    rest_rows = with_first_passes(prepared.rows, scope, keys, rest)
    aggs = [pl.len().cast(pl.Int64).alias(NUM_ROWS), *statistic_aggs(statistic_terms(scope, rest))]
    result = replace(prepared, rows=rest_rows).grouped(keys, [*aggs, *scale_aggs(rest)])
    result = result.with_columns(value.alias(label) for label, value in finished(rest))
    if histogram and prepared.scope.w is None:  # the same bits (exact_auc), faster
        ranked = [(label, req) for label, req in histogram if req.metric.name != "pr_auc"]
        histogram = [(label, req) for label, req in histogram if req.metric.name == "pr_auc"]
        if ranked:
            auc_q = per_query_auc(prepared.rows, prepared.scope, keys)
            aucs = auc_q.select(*keys, *(pl.col(AUC_Q).alias(label) for label, _ in ranked))
            result = beside(result, aucs, keys)
    if histogram:
        counts = score_histogram(prepared.rows, prepared.scope, keys)
        areas_q = histogram_values(counts, keys, histogram, gauc_of_query=True)
        result = beside(result, areas_q, keys)
    columns_out = [*keys, NUM_ROWS, *(label for label, _ in requests)]
    result = result.select(*columns_out, *prepared.flag_columns).sort(keys, nulls_last=True)
    checked = prepared.raising(result, keys)
    if any(req.metric.name in RATING_METRICS for _, req in requests):

        def say(frame: pl.DataFrame) -> pl.DataFrame:
            warn_on_overflow(frame, requests, keys)
            return frame

        checked = checked.map_batches(warns_in_order(say), schema=checked.collect_schema())
    return prepared.warning(checked)


def _means_plan(
    prepared: Prepared,
    requests: Sequence[tuple[str, MetricRequest]],
    options: EvalOptions,
    *,
    warn: bool = True,
) -> pl.LazyFrame:
    """The means of each ``by`` group from its statistics
    (:mod:`~polars_irmetrics.prediction.statistics`), computed as the engines compute
    them from their parts' statistics, with the same float operations. ``warn``: name
    the null (undefined) values and an empty table
    (:func:`~polars_irmetrics.prediction.notes.warn_on_means`); not
    for a part of a larger evaluation."""
    by = list(options.by_keys)
    scope = prepared.scope
    prepared = replace(prepared, rows=with_first_passes(prepared.rows, scope, by, requests))
    terms = statistic_terms(scope, requests)
    aggs = [pl.len().cast(pl.Int64).alias(NUM_ROWS), *statistic_aggs(terms), *scale_aggs(requests)]
    stats = prepared.grouped(by, aggs)
    names = {req.metric.name for _, req in requests}
    if "gauc" in names:
        per_query = per_query_auc(prepared.rows, scope, [*by, options.query_id])
        stats = beside(stats, gauc_statistics(per_query, by), by)
    result = stats.with_columns(value.alias(label) for label, value in finished(requests))
    if names & set(HISTOGRAM_METRICS):
        if _out_of_core(options):
            values = ranked_in_ranges(
                prepared.rows,
                scope,
                by,
                [(label, req) for label, req in requests if req.metric.name in HISTOGRAM_METRICS],
                options.buckets,
                options.spill_dir,
                options.progress,
            )
        else:
            values = histogram_values(score_histogram(prepared.rows, scope, by), by, requests)
        result = beside(result, values, by)
    columns_out = [*by, NUM_ROWS]
    for label, req in requests:
        columns_out.append(label)
        if req.metric.name == "gauc":
            columns_out.append(f"{label}_one_class")
    result = result.select(*columns_out, *prepared.flag_columns)
    if by:
        result = result.sort(by, nulls_last=True)
    checked = prepared.raising(result, by)
    if warn:
        checked = _warn_on_means(
            checked,
            requests,
            by,
            options.sample_weight,
            empty=prepared.sizes is None,  # labels= under unmatched='drop': its own warning
        )
    return prepared.warning(checked)


def _warn_on_means(
    result: pl.LazyFrame,
    requests: Sequence[tuple[str, MetricRequest]],
    keys: list[str],
    weight: str | None = None,
    *,
    empty: bool = True,
) -> pl.LazyFrame:
    """``result`` unchanged, with the warnings of
    :func:`~polars_irmetrics.prediction.notes.warn_on_means` when it is collected
    (one pass over the small means frame)."""
    if not has_means_warnings(requests, weight, empty=empty):
        return result

    def say(frame: pl.DataFrame) -> pl.DataFrame:
        warn_on_means(frame, requests, keys, weight, empty=empty)
        return frame

    return result.map_batches(warns_in_order(say), schema=result.collect_schema())


def with_first_passes(
    rows: pl.LazyFrame,
    scope: PredictionScope,
    by: list[str],
    requests: Sequence[tuple[str, MetricRequest]],
) -> pl.LazyFrame:
    """``rows`` with what the ``requests`` read of their group beside each row: the
    scale of the rating and probability metrics
    (:func:`~polars_irmetrics.prediction.statistics.scale_columns`) and the means of
    ``r2`` and ``explained_variance`` (:func:`with_means`)."""
    if needs_scale(requests):
        rows = with_scale(rows, scope, by, requests)
    if needs_means(requests):
        rows = with_means(rows, scope, by)
    return rows


def scale_aggs(requests: Sequence[tuple[str, MetricRequest]]) -> list[pl.Expr]:
    """Group context: the group's scale exponents beside its statistics (``finished``
    unscales the rating and probability metrics with them)."""
    return [pl.col(c).first() for c in scale_exponents(requests)]


def with_means(rows: pl.LazyFrame, scope: PredictionScope, by: list[str]) -> pl.LazyFrame:
    """``rows`` (with their scale, :func:`with_first_passes`) with their group's mean
    label and mean residual beside each row (the pass of ``r2`` and
    ``explained_variance`` before their spreads), computed from the same statistics as
    the engines' (:func:`~polars_irmetrics.prediction.statistics.means_from`)."""
    aggs = statistic_aggs(mean_terms(scope))
    if not by:
        return beside_every_row(rows, rows.select(aggs).select(means_from(pl.col)))
    # the groups' sums (one group_by) joined to their rows: cheaper than windows
    means = rows.group_by(by).agg(aggs).select(*by, *means_from(pl.col))
    return rows.join(means, on=by, how="left", nulls_equal=True)


@dataclass(frozen=True)
class Prepared:
    """A prediction table checked and ready: what every plan over it shares.

    ``table`` holds every row (with labels, every joined pair and its side); ``rows``
    the rows the metrics read (the pairs on both sides). The data checks are counted
    per group by :meth:`grouped` and raised by :meth:`raising`.
    """

    table: pl.LazyFrame
    rows: pl.LazyFrame
    scope: PredictionScope
    checks: list[_Check]
    names: frozenset[str]
    options: EvalOptions
    two_tables: bool
    #: ``unmatched='drop'``: one row, the rows of the predictions and of the labels
    #: (:meth:`warning` reads it); ``None`` otherwise (a one-sided pair is an error)
    sizes: pl.LazyFrame | None = None

    @property
    def flag_columns(self) -> list[str]:
        """The check columns :meth:`grouped` adds (counts and examples)."""
        return [c for check in self.checks for c in (check.count, check.first)]

    def grouped(self, keys: list[str], aggs: list[pl.Expr]) -> pl.LazyFrame:
        """``aggs`` over the rows of each group of ``keys``, with the check columns (a
        check of the whole table beside every group)."""
        each = [check for check in self.checks if not check.whole]
        check_exprs = [e for check in each for e in check.exprs()]
        if not self.two_tables:
            result = group(self.rows, keys, [*aggs, *check_exprs])
        else:
            # the checks count the one-sided pairs too: over every joined row
            counts = group(self.table, keys, check_exprs)
            result = beside(group(self.rows, keys, aggs), counts, keys, how="full")
            result = result.with_columns(pl.col(c.count).fill_null(0) for c in each)
        whole = [e for check in self.checks if check.whole for e in check.exprs()]
        if whole:  # one row over every row, beside each group's
            result = result.join(self.table.select(whole), how="cross")
        return result

    def raising(self, result: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
        """``result`` without its check columns, raising the first problem they count
        when it is collected (:func:`_raise_on_flags`)."""
        return _raising(result, self.checks, self.names, self.options, keys)

    @property
    def counted(self) -> list[_Check]:
        """The checks counted per group (every check but a text label's, which is of
        the whole table: :func:`check_text_labels` on the engines)."""
        return [check for check in self.checks if not check.whole]

    def check_counts(self, keys: list[str]) -> pl.LazyFrame:
        """The :attr:`counted` checks per group of ``keys`` (over every row, with
        labels every joined pair), not raised: what each part of an engine gives, and
        :meth:`raising_counts` adds up over the parts."""
        return group(self.table, keys, [e for check in self.counted for e in check.exprs()])

    def raising_counts(self, counts: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
        """Every part's :meth:`check_counts` added up per group of ``keys`` and raised
        when collected, as one machine raises the whole table's: the first check that
        counts a problem, its count over every group, the first such group in the
        keys' order. The example is the smallest of the parts' (one machine gives the
        first in the table's order, which the parts no longer have). Else one row:
        ``CHECKED_GROUPS`` (i64), the number of groups."""
        aggs = [
            agg
            for check in self.counted
            for agg in (pl.col(check.count).sum(), pl.col(check.first).min())
        ]
        merged = group(counts, keys, aggs)
        if keys:
            merged = merged.sort(keys, nulls_last=True)
        raised = _raising(merged, self.counted, self.names, self.options, keys)
        return raised.select(pl.len().cast(pl.Int64).alias(CHECKED_GROUPS))

    @property
    def text_label(self) -> bool:
        """Whether the label column is text (its labels are checked over the whole
        table: :func:`check_text_labels` on the engines)."""
        return self.rows.collect_schema()[self.scope.label] == pl.String

    def text_labels(self) -> pl.LazyFrame:
        """The distinct labels the text-label checks read (the rows the metrics read,
        nulls left out), in a column named as the label column: what each part of an
        engine gives for :func:`check_text_labels`."""
        label = pl.col(self.scope.label)
        return self.rows.select(label.drop_nulls().unique())

    def warning(self, result: pl.LazyFrame) -> pl.LazyFrame:
        """``result`` (one machine's values, with ``num_rows``) unchanged, and, under
        ``unmatched='drop'``, :func:`~polars_irmetrics.ground.validate.warn_on_pairs`
        when it is collected: the pairs the metrics read (the sum of ``num_rows``)
        against the rows of the predictions and of the labels. (The engines warn from
        their own counts: a part's pairs are not the table's.)"""
        if self.sizes is None:
            return result
        query_id, doc_id = self.options.query_id, self.options.doc_id

        systems = [k for k in self.options.system_keys if k in result.collect_schema()]

        def say(sizes: Mapping[str, Any], values: pl.DataFrame) -> None:
            # each system's pairs read (a system whose pairs were all left out has no row)
            read = (
                {
                    tuple(row[:-1]): row[-1]
                    for row in values.group_by(systems).agg(pl.col(NUM_ROWS).sum()).rows()
                }
                if systems
                else {}
            )
            by_system = [
                {
                    "name": system_name(entry, systems),
                    "predictions": entry["rows"],
                    "matched": int(read.get(tuple(entry[k] for k in systems)) or 0),
                }
                for entry in sizes.get(_SYSTEM_ROWS) or []
            ]
            warn_on_pairs(
                matched=int(values[NUM_ROWS].sum()),
                predictions=sizes[_PREDICTION_ROWS],
                labels=sizes[_LABEL_ROWS],
                query_id=query_id,
                doc_id=doc_id,
                by_system=by_system,
            )

        return with_tally_and_values(result, self.sizes, say)


def prepare_rows(
    table: pl.LazyFrame,
    requests: Sequence[tuple[str, MetricRequest]],
    options: EvalOptions,
    labels: pl.LazyFrame | None = None,
) -> Prepared:
    """Join the two tables (``labels`` given), check the columns and dtypes (raised
    now), and build the data checks (raised when the plan runs)."""
    for label, req in requests:
        if "predictions" not in req.metric.reads:  # pragma: no cover - routed by the door
            raise MetricParameterError(f"metric {label!r} does not read predictions")
    names = frozenset(req.metric.name for _, req in requests)
    _check_positive_read(options, requests, names)
    if options.prediction == options.label:  # every prediction scored against itself
        raise (
            shared_column_error("label", "prediction", options.label)
            if labels is None
            else _one_name_of_two_tables(options)
        )
    needs_query = options.per_query or "gauc" in names
    own = table.collect_schema()  # the table's own columns (the join adds internal ones)
    sizes = None
    if labels is not None:
        if options.unmatched == "drop":  # the rows of each side, for the warning
            parts = [
                table.select(pl.len().cast(pl.Int64).alias(_PREDICTION_ROWS)),
                labels.select(pl.len().cast(pl.Int64).alias(_LABEL_ROWS)),
            ]
            systems = [k for k in options.system_keys if k in table.collect_schema()]
            if systems:  # and each system's predictions, named if its pairs do not line up
                per_system = (
                    table.group_by(systems)
                    .agg(pl.len().cast(pl.Int64).alias("rows"))
                    .sort(systems)
                    .select(pl.struct(*systems, "rows").implode().alias(_SYSTEM_ROWS))
                )
                parts.append(per_system)
            sizes = pl.concat(parts, how="horizontal")
        table = _joined(table, labels, options)
    schema = table.collect_schema()
    frame = "predictions" if labels is not None else "table"
    hint = "name it with the keyword label=, prediction=, sample_weight=, query_id= or by="
    columns = [options.prediction, *options.by_keys]
    if labels is None:
        columns.insert(0, options.label)
    if options.sample_weight is not None:
        columns.append(options.sample_weight)
    if needs_query and labels is None:
        columns.append(options.query_id)
    require_columns(own, columns, frame, hint)
    _check_dtypes(schema, options, names)
    scope = PredictionScope(
        options.label,
        options.prediction,
        options.sample_weight,
        options.positive_label,
        options.query_id,
    )
    held = [] if labels is None else _held_systems(options, own, labels.collect_schema())
    # a null query id is refused wherever the table has the column, whatever the metrics
    # read (gauc was refused, logloss of the same table scored)
    query = needs_query or options.query_id in own
    checks = _checks(scope, schema, options, two_tables=labels is not None, query=query, held=held)
    rows = table.filter(pl.col(_SIDE) == "both") if labels is not None else table
    return Prepared(table, rows, scope, checks, names, options, labels is not None, sizes)


def group(rows: pl.LazyFrame, keys: list[str], aggs: list[pl.Expr]) -> pl.LazyFrame:
    """``aggs`` per group of ``keys`` (one row over every row without keys)."""
    if keys:
        return rows.group_by(keys).agg(aggs)
    return rows.select(aggs)


def _out_of_core(options: EvalOptions) -> bool:
    """``buckets`` asks for out of core (a number or ``"auto"``): ``auc`` and ``pr_auc``
    then come from score histograms, whose memory grows with the distinct scores, not the
    rows."""
    return options.buckets is not None and options.buckets != "auto-memory"


def beside(
    result: pl.LazyFrame, other: pl.LazyFrame, by: list[str], how: Literal["left", "full"] = "left"
) -> pl.LazyFrame:
    """``other``'s columns beside ``result``'s, on the ``by`` keys (one row each without)."""
    if by:
        return result.join(other, on=by, how=how, coalesce=True, nulls_equal=True)
    return pl.concat([result, other], how="horizontal")


def _one_name_of_two_tables(options: EvalOptions) -> InvalidValueError:
    """The two-table form's error where the predictions' and the labels' value columns
    have one name: in the joined table the labels' would stand in for the predictions'
    (every prediction scored against itself: rmse 0, auc 1)."""
    return InvalidValueError(
        f"prediction={options.prediction!r} and label={options.label!r} name the same "
        "column, and the predictions and the labels are joined into one table: rename "
        "one side's column and pass its name, e.g. labels=labels.rename("
        f"{{{options.label!r}: {options.label + '_true'!r}}}) with "
        f"label={options.label + '_true'!r}"
    )


def _joined(table: pl.LazyFrame, labels: pl.LazyFrame, options: EvalOptions) -> pl.LazyFrame:
    """Predictions and labels on ``(query_id, doc_id)``, every pair with its side."""
    keys = [options.query_id, options.doc_id]
    hint = "name the key columns with query_id= and doc_id= (user and item)"
    pred_schema = table.collect_schema()
    label_schema = labels.collect_schema()
    require_columns(pred_schema, keys, "predictions", hint)
    require_columns(
        label_schema,
        [*keys, options.label],
        "labels",
        "name the label column with label=, the keys with query_id= and doc_id=",
    )
    cast = {}
    for key in keys:
        mine, theirs = pred_schema[key], label_schema[key]
        if mine == theirs:
            continue
        # ids of one kind in two dtypes (Int32 and Int64, Categorical and String) line
        # up in the dtype that holds both; strings beside integers match nothing; a
        # dtype that holds no ids (a float's '1.0' is no integer's '1') is refused in
        # the words of every table's ids, with the cast that fits it (pl.Int64)
        id_kind(pred_schema, key, "predictions")
        id_kind(label_schema, key, "labels")
        if kind_of(mine) != kind_of(theirs):
            raise ColumnTypeError(
                f"column {key!r} is {mine} in the predictions but {theirs} in the labels; "
                "cast one side so that the pairs match, e.g. "
                f"pl.col({key!r}).cast(pl.String)"
            )
        cast[key] = common_id_dtype([mine, theirs])
    table = table.with_columns(pl.col(k).cast(t) for k, t in cast.items())
    labels = labels.with_columns(pl.col(k).cast(t) for k, t in cast.items())
    carried = _label_keys(options, pred_schema, label_schema)
    systems = _systems_of(options, pred_schema)
    # a systems= key labels= holds is joined on (each system's own labels); the others
    # share labels=: every labelled pair is each such system's, predicted or not
    own = [(k, t) for k, _, t in carried if k in systems]
    carried = [c for c in carried if c[0] not in systems]
    table = table.with_columns(pl.col(k).cast(t) for k, t in own if t is not None)
    labels = labels.with_columns(pl.col(k).cast(t) for k, t in own if t is not None)
    held = [k for k, _ in own]
    on = [*held, *keys]
    keep = [c for c in pred_schema.names() if c != options.label]
    left = table.select(keep).with_columns(pl.lit(True).alias(_IN_PRED))
    right = labels.select(
        *on, options.label, *(pl.col(k).alias(f"{_LABEL_KEY}{i}") for k, i, _ in carried)
    ).with_columns(pl.lit(True).alias(_IN_LABELS))
    if systems:  # each system's predictions scored against labels= (its own, if held)
        left = left.with_columns((pl.len().over([*systems, *keys]) > 1).alias(_DUP))
        right = right.with_columns((pl.len().over(on) > 1).alias(_DUP_LABELS))
        shared = [k for k in systems if k not in held]
        if shared and options.unmatched != "drop":  # every label once per system
            right = _per_system(right, _systems_frame(left, systems, options), held, keys)
            on = [*shared, *on]
    joined = left.join(right, on=on, how="full", coalesce=True, nulls_equal=False)
    side = (
        pl.when(pl.col(_IN_PRED) & pl.col(_IN_LABELS))
        .then(pl.lit("both"))
        .when(pl.col(_IN_PRED))
        .then(pl.lit("predictions"))
        .otherwise(pl.lit("labels"))
    )
    joined = joined.with_columns(side.alias(_SIDE))
    if carried:  # a pair whose key in labels= is not the predictions' (a null differs)
        joined = joined.with_columns(
            (
                (pl.col(_SIDE) == "both")
                & _as(pl.col(key), dtype).ne_missing(_as(pl.col(f"{_LABEL_KEY}{i}"), dtype))
            ).alias(f"{_KEY_DIFFERS}{i}")
            for key, i, dtype in carried
        )
    null_key = pl.any_horizontal(pl.col(k).is_null() for k in keys)
    if options.unmatched == "drop":  # a null key is refused, not dropped (_checks)
        joined = joined.filter((pl.col(_SIDE) == "both") | null_key)
    if systems:  # a pair of labels= twice, or of one system's predictions twice
        return joined.with_columns(
            (pl.col(c).fill_null(False) & ~null_key).alias(c) for c in (_DUP, _DUP_LABELS)
        )
    return joined.with_columns(((pl.len().over(keys) > 1) & ~null_key).alias(_DUP))


def _systems_frame(left: pl.LazyFrame, systems: list[str], options: EvalOptions) -> pl.LazyFrame:
    """The predictions' distinct ``systems`` keys: read from ``left`` (the predictions)
    on one machine, from :attr:`EvalOptions.prediction_systems` on an engine's part."""
    if options.prediction_systems is None:
        return left.select(systems).unique()
    schema = left.collect_schema()
    return pl.LazyFrame(
        list(options.prediction_systems),
        schema={k: schema[k] for k in systems},
        orient="row",
    )


def _per_system(
    labels: pl.LazyFrame, systems: pl.LazyFrame, held: list[str], keys: list[str]
) -> pl.LazyFrame:
    """Every row of ``labels`` once per system of ``systems`` (the predictions' distinct
    ``systems=`` keys) whose ``held`` keys (those ``labels=`` holds) are its: each
    system is scored against every label, as alone, so a labelled pair a system does not
    predict is one-sided for that system whatever the other systems predict. A label of
    no system (no predictions, or a held key no system has) is kept once, its other
    keys null (a one-sided pair), and so is a label of a null ``keys`` value (refused
    once, as alone)."""
    one = f"{INTERNAL}one"
    on = [*held, one]
    null_key = pl.any_horizontal(pl.col(k).is_null() for k in keys)
    mark = pl.when(null_key).then(pl.lit(None, pl.Int32)).otherwise(pl.lit(1, pl.Int32))
    return (
        labels.with_columns(mark.alias(one))
        .join(
            systems.with_columns(pl.lit(1, pl.Int32).alias(one)),
            on=on,
            how="left",
            nulls_equal=False,
        )
        .drop(one)
    )


def _held_systems(
    options: EvalOptions, pred_schema: pl.Schema, label_schema: pl.Schema
) -> list[str]:
    """The ``systems=`` keys ``labels=`` holds too: each system is scored against its own
    labels (the rows of ``labels=`` of its keys), joined on them (:func:`_joined`)."""
    return [k for k in _systems_of(options, pred_schema) if k in label_schema]


def _systems_of(options: EvalOptions, pred_schema: pl.Schema) -> list[str]:
    """The ``systems=`` keys of the predictions (other than the ids): with them each
    system's predictions are joined to the one labels table, and a pair is a duplicate
    where one system predicts it twice, or ``labels=`` holds it twice."""
    ids = (options.query_id, options.doc_id)
    return [k for k in options.system_keys if k in pred_schema and k not in ids]


def _label_keys(
    options: EvalOptions, pred_schema: pl.Schema, label_schema: pl.Schema
) -> list[tuple[str, int, pl.DataType | None]]:
    """The ``by``/``systems`` keys ``labels=`` holds beside the predictions: each key,
    its index in ``by_keys`` and the dtype both sides are compared in (``None``: one
    dtype). The groups are the predictions' column; a ``labels=`` column of that name
    is matched against it pair by pair (:func:`_key_checks`), never passed over: ids
    of one kind in two dtypes compare in the dtype that holds both, any other two
    dtypes are refused (:func:`~polars_irmetrics.ground.validate.key_dtype_error`)."""
    carried: list[tuple[str, int, pl.DataType | None]] = []
    ids = (options.query_id, options.doc_id, options.label)
    for index, key in enumerate(options.by_keys):
        if key in ids or key not in label_schema or key not in pred_schema:
            continue  # a key the predictions lack is refused as theirs (prepare_rows)
        mine, theirs = pred_schema[key], label_schema[key]
        if mine == theirs:
            carried.append((key, index, None))
            continue
        kinds = {kind_of(mine), kind_of(theirs)}
        if len(kinds) != 1 or None in kinds:
            raise key_dtype_error(key, mine, "the predictions", theirs, "labels=")
        carried.append((key, index, common_id_dtype([mine, theirs])))
    return carried


def _as(column: pl.Expr, dtype: pl.DataType | None) -> pl.Expr:
    """``column`` cast to ``dtype`` (``None``: as it is)."""
    return column if dtype is None else column.cast(dtype)


def check_keys_read(
    options: EvalOptions,
    requests: Sequence[tuple[str, MetricRequest]],
    *,
    labels: bool,
    takes_labels: bool = True,
) -> None:
    """Refuse ``query_id=`` and ``doc_id=`` given (not their defaults) where no
    prediction metric asked for reads them: ``query_id`` is read by ``gauc``, by
    ``per_query=True`` and by the two-table form (``labels=``, joined on both ids),
    ``doc_id`` by the two-table form alone. An option no metric reads is refused, never
    ignored (a column that does not exist was passed over in silence). Every door's
    check (:func:`~polars_irmetrics.door.evaluate.check_ids_read`): one machine's, the
    engines' (which split the table by ``query_id`` only where it is read,
    :func:`~polars_irmetrics.prediction.statistics.reads_query_id`) and
    :func:`~polars_irmetrics.compare`'s, which pairs the systems' queries
    (``takes_labels``: whether the caller takes ``labels=``, which the message offers as
    the fix; compare does not).

    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> check_keys_read(EvalOptions(query_id="user"), parse_metric_list(["gauc"]), labels=False)
    >>> check_keys_read(EvalOptions(doc_id="item"), parse_metric_list(["rmse"]), labels=False)
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: doc_id='item' is not read by metric 'rmse': ...
    """
    given = options.given()
    if labels:
        return
    metrics = metrics_named([label for label, _ in requests])
    read = reads_query_id(requests, per_query=options.per_query, labels=False)
    if "query_id" in given and not read:
        raise InvalidValueError(
            f"query_id={options.query_id!r} is not read by {metrics}: among the prediction "
            "metrics only gauc, per_query=True and labels= (the two-table form, joined on "
            "query_id and doc_id) read it; drop query_id= (an option no metric reads would "
            "change nothing), or evaluate a metric that reads it"
        )
    if "doc_id" in given:
        raise InvalidValueError(
            f"doc_id={options.doc_id!r} is not read by {metrics}: the prediction metrics "
            "read it only with labels= (the two-table form, joined on query_id and "
            "doc_id); drop doc_id= (an option no metric reads would change nothing)"
            + (", or pass labels=" if takes_labels else "")
        )


def _check_positive_read(
    options: EvalOptions, requests: Sequence[tuple[str, MetricRequest]], names: frozenset[str]
) -> None:
    """Refuse ``positive_label=`` given (not the default 1) where no metric asked for
    reads it: only the binary metrics (:data:`~polars_irmetrics.metrics.prediction.
    BINARY_METRICS`: auc, pr_auc, gauc, logloss, ne, brier, calibration, ece) read a
    positive label; the rating metrics (rmse, mae, mse, r2, explained_variance) read the
    label as a number. An option no metric reads is refused, never ignored.

    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> requests = parse_metric_list(["rmse"])
    >>> _check_positive_read(EvalOptions(positive_label=2), requests, frozenset({"rmse"}))
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: positive_label=2 is not read by metric 'rmse': ...
    """
    if "positive_label" not in options.given() or names & BINARY_METRICS:
        return
    metrics = metrics_named([label for label, _ in requests])
    raise InvalidValueError(
        f"positive_label={options.positive_label!r} is not read by {metrics}: a rating "
        "metric reads the label as a number, and only the binary metrics (auc, pr_auc, "
        "gauc, logloss, ne, brier, calibration, ece) read a positive label; drop "
        "positive_label= (an option no metric reads would change nothing), or evaluate a "
        "binary metric"
    )


def _check_dtypes(schema: pl.Schema, options: EvalOptions, names: frozenset[str]) -> None:
    numeric = [options.prediction]
    if options.sample_weight is not None:
        numeric.append(options.sample_weight)
    for column in numeric:
        dtype = schema[column]
        if not dtype.is_numeric():
            raise ColumnTypeError(
                f"column {column!r} has dtype {dtype}; predictions and weights must be "
                f"numbers: {numeric_cast_fix(column, dtype)}"
            )
    dtype = schema[options.label]
    if not (dtype.is_numeric() or dtype == pl.Boolean or dtype == pl.String):
        # a Categorical or Enum of 'yes'/'no' cannot become a number: text it is
        text = isinstance(dtype, pl.Categorical | pl.Enum)
        to = "pl.String" if text else "pl.Float64"
        raise ColumnTypeError(
            f"column {options.label!r} has dtype {dtype}; labels must be numbers, booleans "
            f"or strings: cast it, e.g. pl.col({options.label!r}).cast({to})"
        )
    rating = sorted(names - BINARY_METRICS)
    if dtype == pl.String and rating:
        raise ColumnTypeError(
            f"column {options.label!r} holds strings, and {', '.join(rating)} read(s) the "
            "label as a number (a rating): cast it, e.g. "
            f"pl.col({options.label!r}).cast(pl.Float64), or evaluate the binary metrics "
            "(auc, logloss...) of a text label in a call of their own"
        )
    positive = options.positive_label
    if dtype == pl.String and not isinstance(positive, str):
        raise ColumnTypeError(
            f"column {options.label!r} holds strings but positive_label={positive!r} is "
            f"not one: name the positive label, e.g. positive_label='click'"
        )
    if dtype != pl.String and isinstance(positive, str):
        raise ColumnTypeError(
            f"column {options.label!r} has dtype {dtype} but positive_label={positive!r} is "
            "a string: pass a number, e.g. positive_label=1, or cast the labels to strings"
        )
    if dtype != pl.String:
        refuse_zero_positive(positive, options.label)


def _key_checks(options: EvalOptions) -> list[_Check]:
    """Two tables: a null ``query_id`` or ``doc_id`` on either side (it pairs with
    nothing; a full join keeps it on its own side)."""
    checks = []
    for side in ("predictions", "labels"):
        for field, column in (("query_id", options.query_id), ("doc_id", options.doc_id)):
            checks.append(
                _Check(
                    f"null_{side}_{field}",
                    (pl.col(_SIDE) == side) & pl.col(column).is_null(),
                    pl.lit(None),
                    InvalidValueError,
                    f"column {{{field}!r}} of the {side} has {{n}} null value(s); a null "
                    "key pairs with no row of the other table (and the pairs are the "
                    f"({{query_id}}, {{doc_id}}) keys): drop those rows, e.g. "
                    f".drop_nulls({{{field}!r}}), or fill them, e.g. "
                    f"pl.col({{{field}!r}}).fill_null(...)",
                )
            )
    return checks


def _checks(
    scope: PredictionScope,
    schema: pl.Schema,
    options: EvalOptions,
    *,
    two_tables: bool,
    query: bool,
    held: list[str],
) -> list[_Check]:
    label, pred = pl.col(scope.label), pl.col(scope.prediction)
    float_label = schema[scope.label].is_float()
    both = pl.col(_SIDE) == "both" if two_tables else pl.lit(True)
    checks = _key_checks(options) if two_tables else []
    # the groups are the predictions' columns: a label without a prediction has none (a
    # one-sided pair, refused as such), not a null group
    predicted = pl.col(_SIDE) != "labels" if two_tables else pl.lit(True)
    for index, key in enumerate(options.by_keys):  # as the ranking metrics refuse one
        name = _literal(key)
        checks.append(
            _Check(
                f"group_null_{index}",
                predicted & pl.col(key).is_null(),
                pl.lit(None),
                InvalidValueError,
                f"column {name} has {{n}} null value(s); every row needs its group (by= and "
                f"systems= group the rows by it): drop them, e.g. .drop_nulls({name}), or "
                f"fill them, e.g. pl.col({name}).fill_null(...)",
            )
        )
    if query and not two_tables:  # the table's query column, whatever the metrics
        checks.append(
            _Check(
                "query_null",
                pl.col(scope.query_id).is_null(),
                pl.lit(None),
                InvalidValueError,
                "column {query_id!r} has {n} null value(s){where}; every row of a table "
                "with a query (user) column needs its query, whatever the metrics (gauc "
                "and per_query=True group the rows by it), and a null id is none: drop "
                "those rows, e.g. .drop_nulls({query_id!r}), or fill them, e.g. "
                "pl.col({query_id!r}).fill_null(...)",
            )
        )
    checks += [
        _Check(
            "label_null",
            both & label.is_null(),
            pl.lit(None),
            InvalidValueError,
            "column {label!r} has {n} null value(s){where}; every prediction needs a "
            "label: drop those rows, e.g. .drop_nulls({label!r})",
        ),
        _Check(
            "pred_null",
            both & pred.is_null(),
            pl.lit(None),
            InvalidValueError,
            "column {prediction!r} has {n} null value(s){where}; every row needs a "
            "prediction: drop those rows, e.g. .drop_nulls({prediction!r})",
        ),
        _Check(
            "pred_nan",
            both & pred.cast(pl.Float64).is_nan(),
            pred,
            InvalidValueError,
            "column {prediction!r} has {n} NaN value(s){where}; a NaN prediction has no "
            "rank nor loss: fix the model's output or drop those rows, e.g. "
            ".filter(pl.col({prediction!r}).is_not_nan())",
        ),
    ]
    infinite = (
        "column {%s!r} has {n} infinite value(s){where} (e.g. {example}); {metrics} "
        "read(s) it as a number, and an infinite one has no finite error (scikit-learn "
        "refuses it too): drop or fix those rows, e.g. .filter(pl.col({%s!r}).is_finite())"
    )
    for role, column in (("label", scope.label), ("prediction", scope.prediction)):
        if wide_numbers(schema[column]):
            # read as Float64 by the rating metrics, where integers beyond 2**53 lose
            # their last digits: 2**62 + 10 and 2**62 + 12 were one value, an error of 0
            checks.append(
                _Check(
                    f"{role}_wide",
                    both & (pl.col(column).cast(pl.Float64).abs() >= FLOAT64_EXACT),
                    pl.col(column),
                    InvalidValueError,
                    f"column {{{role}!r}} has {{n}} value(s) of magnitude 2**53 or more"
                    "{where} (e.g. {example}); {metrics} read(s) it as a Float64 number, "
                    "which holds such integers to a few units only (2**62 + 10 and 2**62 + "
                    "12 are one value, their error 0): subtract one offset from the labels "
                    "and the predictions first, e.g. pl.col({label!r}) - 2**62 and "
                    "pl.col({prediction!r}) - 2**62",
                )
            )
    if schema[scope.prediction].is_float():  # an integer or a decimal is finite
        checks.append(
            _Check(
                "pred_inf",
                both & pred.is_infinite(),
                pred,
                InvalidValueError,
                infinite % ("prediction", "prediction"),
            )
        )
    if float_label:
        checks.append(
            _Check(
                "label_nan",
                both & label.is_nan(),
                label,
                InvalidValueError,
                "column {label!r} has {n} NaN value(s){where}; every prediction needs a "
                "label: drop those rows, e.g. .filter(pl.col({label!r}).is_not_nan())",
            )
        )
        checks.append(
            _Check(
                "label_inf",
                both & label.is_infinite(),
                label,
                InvalidValueError,
                infinite % ("label", "label"),
            )
        )
    if scope.sample_weight is not None:
        w = pl.col(scope.sample_weight).cast(pl.Float64)
        checks.append(
            _Check(
                "weight",
                both
                & (
                    w.is_null()
                    | w.is_nan()
                    | (w < 0)
                    | (w >= FIXED_LIMIT)
                    | ((w > 0) & (w < FIXED_FLOOR))
                ),
                pl.col(scope.sample_weight),
                InvalidValueError,
                "column {weight!r} has {n} weight(s) that are null, NaN, negative, below "
                "2**-30 (other than 0) or 2**32 or more (infinite too){where} (e.g. "
                "{example}); sample weights must be 0 or in [2**-30, 2**32) = "
                "[9.313225746154785e-10, 4294967296) (what the exact sums in units of "
                "2**-64 hold): rescale them (every prediction metric is unchanged when all "
                "weights in that range are multiplied by one number)",
            )
        )
    checks.append(
        _Check(
            "range",
            both & ((pred < 0) | (pred > 1)),
            pred,
            InvalidValueError,
            "column {prediction!r} has {n} value(s) outside [0, 1]{where} (e.g. "
            "{example}); {metrics} read(s) it as a probability, so it is refused for "
            "them (auc, pr_auc and gauc read any score, the rating metrics any number): "
            "pass probabilities (e.g. a sigmoid of the score)",
        )
    )
    if schema[scope.label] == pl.String:
        checks += _text_label_checks(label.filter(both).drop_nulls(), both, scope.positive)
    else:
        positive = float(scope.positive) if isinstance(scope.positive, int | float) else 1.0
        value = label.cast(pl.Float64)
        checks.append(
            _Check(
                "binary",
                both & ~((value == 0.0) | (value == positive)),
                label,
                InvalidValueError,
                "column {label!r} has {n} label(s) that are neither 0 nor the positive "
                "label {positive!r}{where} (e.g. {example}); {metrics} read(s) it as a "
                "binary label, so it is refused for them (the rating metrics read any "
                "number): map the labels to 0/1, or declare the positive one with "
                "positive_label=",
            )
        )
    if two_tables:
        checks += [
            *_duplicate_checks(schema, options, held),
            *_key_agreement_checks(schema, options),
            _Check(
                "only_pred",
                pl.col(_SIDE) == "predictions",
                pl.format("({}, {})", pl.col(options.query_id), pl.col(options.doc_id)),
                QuerySetError,
                "{n} ({query_id}, {doc_id}) pair(s) have a prediction"
                + (" of {system}" if _systems_of(options, schema) else "")
                + " but no label (e.g. {example}); pass unmatched='drop' to evaluate "
                "only the pairs on both sides (as Microsoft Recommenders' inner merge "
                "does)",
                smallest=True,
                per_system=bool(_systems_of(options, schema)),
            ),
            _Check(
                "only_labels",
                pl.col(_SIDE) == "labels",
                pl.format("({}, {})", pl.col(options.query_id), pl.col(options.doc_id)),
                QuerySetError,
                "{n} ({query_id}, {doc_id}) pair(s) have a label but no prediction"
                + (" of {system}" if _systems_of(options, schema) else "")
                + " (e.g. {example}); pass unmatched='drop' to evaluate only the pairs on "
                "both sides (as Microsoft Recommenders' inner merge does)",
                smallest=True,
                per_system=bool(_systems_of(options, schema)),
                each_system=held != _systems_of(options, schema) and options.unmatched != "drop",
                held=tuple(held) if held != _systems_of(options, schema) else (),
            ),
            # the pairs on both sides: never raised, read where one-sided pairs are (none
            # at all: ids that do not line up, not pairs to drop; _none_matched)
            _Check(_MATCHED, pl.col(_SIDE) == "both", pl.lit(None), QuerySetError, ""),
        ]
    return checks


def _literal(value: object) -> str:
    """``repr(value)`` as literal text in a :class:`_Check` template (its braces
    doubled: the template is formatted when the check is raised)."""
    return repr(value).replace("{", "{{").replace("}", "}}")


def _duplicate_checks(schema: pl.Schema, options: EvalOptions, held: list[str]) -> list[_Check]:
    """Two tables: a pair held twice on one side. With ``systems=`` (:func:`_joined`)
    a pair one system predicts twice, named with its system (the group), and a pair
    ``labels=`` holds twice (every system's predictions are scored against the one
    label of a pair); else a pair twice on either side."""
    pair = pl.format("({}, {})", pl.col(options.query_id), pl.col(options.doc_id))
    if _DUP_LABELS not in schema:
        return [
            _Check(
                "dup",
                pl.col(_DUP),
                pair,
                DuplicateError,
                "{n} row(s) share a ({query_id}, {doc_id}) pair with another row on the "
                "same side (e.g. {example}); keep one prediction and one label per pair, "
                "e.g. .unique([{query_id!r}, {doc_id!r}])",
                smallest=True,
            )
        ]
    systems = _systems_of(options, schema)
    unique = _literal([*systems, options.query_id, options.doc_id])
    some = bool(held) and held != systems  # labels= holds some of the systems= keys
    if some:  # a label of the held keys' values, read by each system of them
        names = ", ".join(_literal(k) for k in held)
        per, counted = " for one system", " of {held}, the labels of the system {system}"
        against = (
            f"each system's predictions are scored against the labels of its {names} (the "
            "systems= key(s) labels= holds),"
        )
    elif held:  # labels= holds the systems: each system's own labels
        per, counted = " for one system", " of the same system{where}"
        against = "each system's predictions are scored against its own labels,"
    else:
        per, counted = "", ", counted once per system whose predictions it is scored against"
        against = "every system's predictions are scored against"
    unique_labels = _literal([*held, options.query_id, options.doc_id])
    return [
        _Check(
            "dup",
            pl.col(_DUP),
            pair,
            DuplicateError,
            "{n} prediction(s) share a ({query_id}, {doc_id}) pair with another "
            "prediction of the same system{where} (e.g. {example}); keep one prediction "
            f"per system and pair, e.g. .unique({unique})",
            smallest=True,
        ),
        _Check(
            "dup_labels",
            pl.col(_DUP_LABELS),
            pair,
            DuplicateError,
            f"labels= holds a ({{query_id}}, {{doc_id}}) pair more than once{per}: {{n}} "
            f"row(s) share one with another label{counted} (e.g. {{example}}); {against} "
            f"one label per pair: keep one, e.g. labels.unique({unique_labels})",
            smallest=True,
            # the first system's count, as that system alone: not once per system
            per_system=some,
            held=tuple(held) if some else (),
        ),
    ]


def _shown(column: str, dtype: pl.DataType) -> pl.Expr:
    """A key's value as a message shows it: text quoted, a null as ``null``."""
    text = pl.col(column).cast(pl.String)
    if dtype == pl.String or isinstance(dtype, pl.Categorical | pl.Enum):
        text = pl.concat_str(pl.lit("'"), text, pl.lit("'"))
    return text.fill_null(pl.lit("null"))


def _key_agreement_checks(schema: pl.Schema, options: EvalOptions) -> list[_Check]:
    """Two tables: a pair whose ``by``/``systems`` key in ``labels=`` (where it holds
    the column) is not the predictions' value (:func:`_label_keys`). The groups are the
    predictions' column, so such a column is refused where it disagrees, never passed
    over: a labels table keyed by another day than its predictions is a join gone
    wrong, not a choice between two values."""
    checks = []
    for index, key in enumerate(options.by_keys):
        differs, theirs = f"{_KEY_DIFFERS}{index}", f"{_LABEL_KEY}{index}"
        if differs not in schema:
            continue
        keyword, _ = key_keyword(options, key)
        name = _literal(key)
        example = pl.format(
            "({}, {}): {} in the predictions, {} in labels=",
            pl.col(options.query_id),
            pl.col(options.doc_id),
            _shown(key, schema[key]),
            _shown(theirs, schema[theirs]),
        )
        checks.append(
            _Check(
                f"key_differs_{index}",
                pl.col(differs),
                example,
                InvalidValueError,
                f"column {name} of labels= disagrees with the predictions' on {{n}} "
                f"({{query_id}}, {{doc_id}}) pair(s){{where}} (e.g. {{example}}); "
                f"{keyword}= groups the pairs by the predictions' column, and labels= "
                f"that holds it must agree pair by pair: fix its values, or drop it "
                f"from labels=, e.g. labels.drop({name})",
                smallest=True,
            )
        )
    return checks


#: The check that counts the pairs on both sides (:func:`_none_matched`).
_MATCHED = "matched"
_ONE_SIDED = ("only_pred", "only_labels")


def _none_matched(
    frame: pl.DataFrame, fields: Mapping[str, object], keys: list[str], each: bool
) -> QuerySetError | None:
    """The refusal of predictions and ``labels=`` that share no pair at all, from the
    check counts of every group (``frame``), or ``None`` where some pair matches:
    ``unmatched='drop'`` would leave every value null, so it names what is likely
    wrong instead of the drop. Both sides with rows: ids that do not line up (another
    spelling, another id space), with the key columns and a first pair of each side
    (the smallest); one side empty: that side (a filter that kept nothing)."""
    counts = {name: f"{INTERNAL}n_{name}" for name in (_MATCHED, *_ONE_SIDED)}
    if any(column not in frame.columns for column in counts.values()):
        return None
    total = {name: int(frame[column].sum()) for name, column in counts.items()}
    systems = [k for k in keys if k in fields["system_keys"]]  # type: ignore[operator]
    if each and systems:  # every label once per system: the labels of one system
        per = frame.group_by(systems).agg(pl.col(counts["only_labels"]).sum())
        total["only_labels"] = int(per[counts["only_labels"]].max() or 0)  # type: ignore[arg-type]
    if total[_MATCHED] or not (total["only_pred"] or total["only_labels"]):
        return None  # some pair matches, or both tables are empty (warned of as such)
    first = {name: str(frame[f"{INTERNAL}e_{name}"].drop_nulls().min()) for name in _ONE_SIDED}
    predictions, labels = total["only_pred"], total["only_labels"]
    pairs = f"({fields['query_id']}, {fields['doc_id']})"
    drop = "unmatched='drop' would leave no pair to evaluate, every value null"
    if not labels or not predictions:
        empty, other = (
            ("labels= holds", "predictions") if not labels else ("the predictions hold", "labels")
        )
        held = predictions or labels
        example = first["only_pred"] if labels == 0 else first["only_labels"]
        return QuerySetError(
            f"{empty} no row, so none of the {held} {other}' {pairs} pairs is matched "
            f"(e.g. {example}): {drop}; pass the table that holds them (an empty one is a "
            "filter that kept nothing, or an empty file)"
        )
    return QuerySetError(
        f"labels= and the predictions share none of their {pairs} pairs ({predictions} "
        f"predictions, {labels} labels; e.g. the predictions' {first['only_pred']}, the "
        f"labels' {first['only_labels']}): ids that do not line up are the likely cause: "
        f"give labels= and the predictions the same {fields['query_id']!r} and "
        f"{fields['doc_id']!r} values (same spelling, same collection); {drop}"
    )


def _text_label_checks(found: pl.Expr, both: pl.Expr, positive: object) -> list[_Check]:
    """The checks of a text label column: ``found``, its labels the metrics read (nulls
    left out). Counted over the whole table (whole=True): the one other value is the
    table's, so a misspelt positive label ('Click' for 'click') in a group of its own is
    no group of negatives; the engines check every part's labels together
    (:func:`check_text_labels`)."""
    binary = both & (found.n_unique() > 2)
    example = found.unique().sort().str.join(", ")
    # two labels and neither positive: a positive_label mistyped ('Yes' for 'yes')
    # would read every row as negative (one label only may be all negatives)
    labels = found.unique().sort()
    shown = (
        pl.when(labels.str.contains("'", literal=True))
        .then(pl.concat_str(pl.lit('"'), labels, pl.lit('"')))
        .otherwise(pl.concat_str(pl.lit("'"), labels, pl.lit("'")))
    )
    return [
        _Check(
            "binary",
            binary,
            example,
            InvalidValueError,
            "column {label!r} holds more than two labels{where} ({example}); {metrics} "
            "read(s) it as a binary label: positive_label={positive!r} is positive, "
            "and one other label negative",
            whole=True,
        ),
        _Check(
            "binary_positive",
            both & (found.n_unique() == 2) & ~(found == str(positive)).any(),
            shown.str.join(", "),
            InvalidValueError,
            "column {label!r} holds two labels ({example}){where}, and neither is "
            "positive_label={positive!r}; {metrics} read(s) it as a binary label, so "
            "it is refused for them: declare the positive one of them with "
            "positive_label= (a text label matches exactly: case and spaces count)",
            whole=True,
        ),
    ]


def check_text_labels(
    labels: pl.LazyFrame, names: frozenset[str], options: EvalOptions
) -> pl.LazyFrame:
    """The checks of a text label column over the distinct labels of every part of a
    table (:meth:`Prepared.text_labels`, stacked: column ``options.label``), raised
    when it is collected with one machine's message: the engines' parts check their
    labels together, as one machine checks the whole table.

    Returns
    -------
    pl.LazyFrame
        One row: ``TEXT_LABELS`` (i64), the number of distinct labels.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> options = EvalOptions(positive_label="click")
    >>> parts = pl.LazyFrame({"label": ["click", "no", "no"]})
    >>> check_text_labels(parts, frozenset({"auc"}), options).collect().item()
    2
    >>> parts = pl.LazyFrame({"label": ["click", "no", "Click"]})
    >>> check_text_labels(parts, frozenset({"auc"}), options).collect()
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: column 'label' holds more than two labels ...
    """
    label = pl.col(options.label)
    checks = _text_label_checks(label.drop_nulls(), pl.lit(True), options.positive_label)
    exprs = [e for check in checks for e in check.exprs()]
    result = labels.select(*exprs, label.drop_nulls().n_unique().cast(pl.Int64).alias(TEXT_LABELS))
    return _raising(result, checks, names, options, [])


def _raising(
    result: pl.LazyFrame,
    checks: list[_Check],
    names: frozenset[str],
    options: EvalOptions,
    keys: list[str],
) -> pl.LazyFrame:
    """``result`` without the check columns of ``checks``, raising the first problem
    they count when it is collected (:func:`_raise_on_flags`)."""
    flags = [c for check in checks for c in (check.count, check.first)]
    out_schema = result.drop(flags).collect_schema()
    raised = _raised_checks(checks, set(names))
    fields: dict[str, object] = {
        "label": options.label,
        "prediction": options.prediction,
        "weight": options.sample_weight,
        "positive": options.positive_label,
        "query_id": options.query_id,
        "doc_id": options.doc_id,
        "system_keys": options.system_keys,
    }
    return result.map_batches(
        lambda frame: _raise_on_flags(frame, raised, flags, keys, fields),
        schema=out_schema,
    )


def _raised_checks(checks: list[_Check], names: set[str]) -> list[tuple[_Check, str]]:
    """The checks whose problems are errors for these metrics, with their context."""
    probability = sorted(names & PROBABILITY_METRICS)
    binary = sorted(names & BINARY_METRICS)
    rating = sorted(names & RATING_METRICS)
    raised: list[tuple[_Check, str]] = []
    for check in checks:
        if check.name == _MATCHED:  # a count the one-sided pairs' refusal reads
            continue
        if check.name == "range":
            if probability:
                raised.append((check, ", ".join(probability)))
        elif check.name in ("pred_inf", "label_inf", "label_wide", "prediction_wide"):
            if rating:
                raised.append((check, ", ".join(rating)))
        elif check.name in ("binary", "binary_positive"):
            if binary:
                raised.append((check, ", ".join(binary)))
        else:
            raised.append((check, ""))
    return raised


def _raise_on_flags(
    frame: pl.DataFrame,
    checks: list[tuple[_Check, str]],
    flag_columns: list[str],
    keys: list[str],
    fields: dict[str, object],
) -> pl.DataFrame:
    for check, metrics in checks:
        bad = frame.filter(pl.col(check.count) > 0)
        if not bad.height:
            continue
        each = any(c.each_system for c, _ in checks if c.name == "only_labels")
        none = _none_matched(frame, fields, keys, each) if check.name in _ONE_SIDED else None
        if none is not None:
            raise none
        first = bad.row(0, named=True)
        total = int(bad[check.count].sum())
        if check.per_system:  # the first system's count, as that system alone
            names = [k for k in keys if k in fields["system_keys"]]  # type: ignore[operator]
            mine = bad.filter(*(pl.col(k).eq_missing(first[k]) for k in names))
            total = int(mine[check.count].sum())
            if check.held:  # a label of no system: its other keys null, named by the held
                names = [k for k in names if k in check.held or first[k] is not None]
            held = ", ".join(f"{k}={first[k]!r}" for k in check.held)
            fields = {
                **fields,
                "system": ", ".join(f"{k}={first[k]!r}" for k in names),
                "held": held,
            }
        place = ", ".join(f"{k}={first[k]!r}" for k in keys)
        where = f" (first in the group {place})" if keys and not check.whole else ""
        raise check.error(
            check.template.format(
                n=total, where=where, example=first[check.first], metrics=metrics, **fields
            )
        )
    return frame.drop(flag_columns)
