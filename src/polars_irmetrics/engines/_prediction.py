"""Prediction metrics (``auc``, ``gauc``, ``logloss``, ``rmse``...) on the engines.

Both engines split the prediction table (and, in the two-table form, the ``labels``)
by a hash of ``query_id``, as they split a run, so that each query (user) is whole in
one part. The metrics that read ``query_id`` (``gauc``, ``per_query=True``, the two-table
form: :func:`~polars_irmetrics.prediction.statistics.reads_query_id`) need it; for the
others it is no more than a way to divide the rows, and a table without the column is
dealt to the parts round robin (their statistics merge exactly in any order). A
``query_id=`` or ``doc_id=`` given that no metric reads is refused with one machine's
message (:func:`~polars_irmetrics.engines._partition.check_options_read`). Then:

* ``per_query=True``: each part is evaluated by the one-machine plan
  (the door's :func:`~polars_irmetrics.door.evaluate.evaluate_plan`, ``warn=False``); a query's
  values are computed from its own rows, in one part, as on one machine, from integer
  statistics: to the last bit, whatever order its rows arrive in.
* means: a global metric (the AUC of all rows, the log loss of all rows) does not
  divide into per-query values, so each part gives instead its *statistics*
  (:func:`~polars_irmetrics.prediction.parts.part_statistics`: sums, the spreads of
  ``r2``, each query's AUC for ``gauc``, and the score histogram of ``auc`` and
  ``pr_auc``), and the statistics of each ``by`` group are merged in one task
  (:func:`~polars_irmetrics.prediction.parts.merge_statistics`). Every sum is kept
  as integer units of 2**-64, so the means equal one machine's (and its out-of-core
  path's, ``buckets=``) to the last bit (:mod:`polars_irmetrics.prediction.statistics`).
  The rating and probability metrics evaluate the parts twice (``r2`` and
  ``explained_variance`` three times): first each group's scales (powers of two: of the
  half residuals from their largest size, of the labels from their range around its
  middle, rows of weight 0 left out; of each probability statistic from its largest
  term), then (``r2``...) each group's exact means (:func:`means_job`, each computed at
  the call), then the sums and the spreads around the means. The
  task that merges a group holds one row per distinct score of the group (for ``auc``
  and ``pr_auc``).

* a text label column (``"click"``/``"no"``): before either, a first pass gives each
  part's distinct labels (:func:`~polars_irmetrics.prediction.parts.part_labels`), and
  one task checks them together (:func:`~polars_irmetrics.prediction.parts.merge_labels`,
  computed at the call), whatever ``by=`` or ``per_query``: more than two labels, or two
  and neither ``positive_label``, are refused over the whole table with one machine's
  message (a part of misspelt ``"Click"`` rows is no part of negatives). That task holds
  the table's distinct labels.

* the data checks (predictions out of [0, 1], NaN, labels neither 0 nor the positive
  one, weights, one-sided pairs...): each part counts its own rows per group
  (:func:`~polars_irmetrics.prediction.parts.part_checks`), and one task adds them up
  and raises with one machine's message, the whole table's counts
  (:func:`~polars_irmetrics.prediction.parts.merge_checks`, :func:`checks_job`).
  Where a scale pass runs (the rating and probability metrics), its parts count them
  too (:func:`counts_checks`): Spark's tasks hand their counts to an accumulator,
  raised on the driver once that pass is collected, Dask's merge in one task of the
  pass's graph, so a refused call runs no pass a valid call does not. Else on Dask
  before any part of the last pass reads its rows (in the same graph), on Spark once
  a part has refused its rows (a part's own count is not the table's).

Before any task runs, :func:`prepare_prediction` builds both plans on empty frames of
the schemas: a missing column, a wrong dtype or an unknown metric is raised there.
Under ``unmatched='drop'`` the parts do not warn of pairs the labels lack (a part's
pairs are not the table's): the engine counts both tables' rows and the pairs the
metrics read, and warns as one machine does (:func:`warn_on_unmatched`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import polars as pl
import pyarrow as pa

from polars_irmetrics.door.evaluate import evaluate_plan
from polars_irmetrics.engines._partition import ParsedJob, _empty, _frame, _to_arrow, warned_to
from polars_irmetrics.errors import InvalidValueError, MetricParameterError
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import warn_on_pairs
from polars_irmetrics.metrics.registry import parse_metric_list, split_routes
from polars_irmetrics.prediction.notes import warn_on_means
from polars_irmetrics.prediction.parts import (
    merge_checks,
    merge_labels,
    merge_means,
    merge_scale,
    merge_statistics,
    part_checks,
    part_labels,
    part_means,
    part_scale,
    part_statistics,
)
from polars_irmetrics.prediction.statistics import needs_means, needs_scale, reads_query_id

if TYPE_CHECKING:
    pass

__all__ = [
    "PredictionJob",
    "check_prediction_inputs",
    "checks_job",
    "counts_checks",
    "means_job",
    "prediction_part",
    "prediction_route",
    "prediction_summary",
    "prepare_prediction",
    "reads_predictions",
    "shared_systems",
    "warn_on_summary",
    "warn_on_unmatched",
]


@dataclass(frozen=True)
class PredictionJob(ParsedJob):
    """One evaluation of prediction metrics, resolved on the driver (it pickles).

    ``part_schema`` is what a part gives: per-query values (``per_query``) or
    statistics; ``result_schema`` is :func:`polars_irmetrics.evaluate`'s result.
    """

    metrics: tuple[str, ...]
    options: EvalOptions
    by: tuple[str, ...]
    keys: tuple[str, ...]
    part_schema: pl.Schema
    result_schema: pl.Schema
    two_tables: bool
    #: whether the parts are split by ``query_id``: where the metrics read it (each query
    #: whole in one part: :func:`~polars_irmetrics.prediction.statistics.reads_query_id`)
    #: or the table has the column; else any row goes to any part (round robin)
    by_query: bool = True
    #: ``"labels"``: the first pass of a text label column (each part's distinct
    #: labels, :func:`~polars_irmetrics.prediction.parts.part_labels`, checked together
    #: whatever ``by=``); ``"scale"``: the first pass of the rating and probability
    #: metrics (each part's
    #: :func:`~polars_irmetrics.prediction.parts.part_scale`, merged into each group's
    #: scale); ``"means"``: the next of ``r2`` and ``explained_variance`` (each part's
    #: :func:`~polars_irmetrics.prediction.parts.part_means`, merged into the means)
    stage: str = "values"
    #: the result of the last first pass (the scale, then with the means), read by
    #: every part of the next pass
    means: pl.DataFrame | None = None
    #: the first passes still to run: each stage with the schemas of its parts and result
    first_pass: tuple[tuple[str, pl.Schema, pl.Schema], ...] = ()
    #: the schemas of the table and of the labels, from which the checks' merge builds
    #: the checks (:func:`checks_job`)
    table_schema: pl.Schema | None = None
    labels_schema: pl.Schema | None = None
    #: the schemas of a part's check counts and of their merge (:func:`checks_job`)
    check_schemas: tuple[pl.Schema, pl.Schema] | None = None
    #: whether the data checks were counted in the scale pass and passed (the engine
    #: then runs no checks pass of its own: :func:`counts_checks`)
    checked: bool = False

    def with_means(self, means: pl.DataFrame) -> PredictionJob:
        """This job after its next first pass: its parts reading ``means`` (that pass's
        result; the labels pass gives nothing to read: its merge raised or passed)."""
        if self.first_pass[0][0] == "labels":
            return replace(self, first_pass=self.first_pass[1:])
        return replace(self, means=means, first_pass=self.first_pass[1:])


def reads_predictions(metrics: str | Iterable[str]) -> bool:
    """Whether the metrics are prediction metrics (a mix with others is refused).

    Examples
    --------
    >>> reads_predictions(["auc", "logloss"]), reads_predictions("ndcg@10")
    (True, False)
    >>> reads_predictions(["auc", "ndcg@10"])
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.MetricParameterError: metrics 'auc' and 'ndcg@10' are computed ...
    """
    return "prediction" in split_routes(parse_metric_list(metrics))


def check_prediction_inputs(
    engine: str,
    options: EvalOptions,
    predictions: bool,
    *,
    qrels: object,
    queries: object,
    labels: object,
) -> None:
    """Refuse by name a table the metrics do not read (nothing is ignored silently):
    ``labels`` without prediction metrics; ``qrels``, ``queries`` or ``partitioned_by``
    with them.

    Examples
    --------
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> check_prediction_inputs("Spark", EvalOptions(), True, qrels=None, queries=None,
    ...                         labels=object())
    >>> check_prediction_inputs("Spark", EvalOptions(), True, qrels=object(), queries=None,
    ...                         labels=None)
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: qrels= is not read by prediction metrics ...
    """
    if not predictions:
        if labels is not None:
            raise MetricParameterError(
                "labels= holds the true labels of prediction metrics (auc, logloss, "
                "rmse...), and no metric asked for reads them: drop labels=, or use qrels= "
                "for judgments"
            )
        return
    for name, given in (("qrels", qrels), ("queries", queries)):
        if given is not None:
            raise InvalidValueError(
                f"{name}= is not read by prediction metrics (auc, logloss, rmse...): the "
                "table holds the label= and prediction= columns, or labels= the true "
                f"labels; drop {name}="
            )
    if options.partitioned_by is not None:
        raise InvalidValueError(
            f"partitioned_by= is not available for prediction metrics on {engine}: the "
            "table is shuffled by query hash; drop partitioned_by="
        )


def prediction_route(
    engine: str,
    metrics: str | Iterable[str],
    options: EvalOptions,
    *,
    qrels: object,
    queries: object,
    labels: object,
) -> tuple[tuple[str, ...], bool]:
    """The engines' first step: the metric names as a tuple (they are read twice) and
    whether they are prediction metrics (:func:`reads_predictions`), with the tables
    checked against them (:func:`check_prediction_inputs`).

    Examples
    --------
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> prediction_route("Dask", "auc", EvalOptions(), qrels=None, queries=None, labels=None)
    (('auc',), True)
    """
    names = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    predictions = reads_predictions(names)
    check_prediction_inputs(
        engine, options, predictions, qrels=qrels, queries=queries, labels=labels
    )
    return names, predictions


def prepare_prediction(
    table_schema: pa.Schema,
    labels_schema: pa.Schema | None,
    metrics: str | Iterable[str],
    options: EvalOptions,
) -> PredictionJob:
    """Check everything that can be checked without the data, on the driver: both plans
    are built on empty frames of the schemas (raising the library's errors for columns,
    dtypes and metric names), which gives the schemas of a part and of the result.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> log = pa.schema([("user", pa.int64()), ("clicked", pa.int8()), ("p", pa.float64())])
    >>> options = EvalOptions(label="clicked", prediction="p", query_id="user")
    >>> job = prepare_prediction(log, None, ["auc", "gauc"], options)
    >>> list(job.result_schema)
    ['num_rows', 'auc', 'gauc', 'gauc_one_class']
    >>> prepare_prediction(log, None, ["auc"], options.replace(prediction="score"))
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.ColumnNotFoundError: column 'score' not found in the table ...
    """
    given = (metrics,) if isinstance(metrics, str) else tuple(metrics)
    requests = parse_metric_list(given)
    options = options.replace(buckets=None, partitioned_by=None)
    table = _empty(table_schema).lazy()
    labels = None if labels_schema is None else _empty(labels_schema).lazy()
    result = evaluate_plan(table, requests, {"labels": labels}, options).collect_schema()
    first_pass: list[tuple[str, pl.Schema, pl.Schema]] = []
    counts = part_checks(table, requests, options, labels)
    checked = merge_checks(counts, requests, options, table, labels)
    text = part_labels(table, requests, options, labels)
    if text is not None:  # checked over the whole table, as on one machine
        merged = merge_labels(text, requests, options)
        first_pass.append(("labels", text.collect_schema(), merged.collect_schema()))
    if options.per_query:
        part = result
        keys = (*options.by_keys, options.query_id)
    else:
        part = part_statistics(table, requests, options, labels).collect_schema()
        keys = options.by_keys
        if needs_scale(requests):
            maxima = part_scale(table, requests, options, labels)
            scale = merge_scale(maxima, options)
            first_pass.append(("scale", maxima.collect_schema(), scale.collect_schema()))
        if needs_means(requests):
            means = part_means(table, requests, options, labels, scale.collect())
            first_pass.append(
                ("means", means.collect_schema(), merge_means(means, options).collect_schema())
            )
    return PredictionJob(
        metrics=given,
        options=options,
        by=options.by_keys,
        keys=keys,
        part_schema=part,
        result_schema=result,
        two_tables=labels_schema is not None,
        # unread, query_id is still the split where the table has it (a part then holds
        # whole queries, as before); round robin only where it has none
        by_query=options.query_id in table_schema.names
        or reads_query_id(requests, per_query=options.per_query, labels=labels_schema is not None),
        first_pass=tuple(first_pass),
        table_schema=table.collect_schema(),
        labels_schema=None if labels is None else labels.collect_schema(),
        check_schemas=(counts.collect_schema(), checked.collect_schema()),
    )


def means_job(job: PredictionJob) -> PredictionJob | None:
    """The next first pass of ``job`` (the scale of the rating and probability metrics,
    then the means of ``r2`` and ``explained_variance``, which their spreads are summed
    around), or ``None`` when none is left: run it, then ``job.with_means(its result)``.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> log = pa.schema([("label", pa.float64()), ("prediction", pa.float64())])
    >>> job = prepare_prediction(log, None, ["rmse", "r2"], EvalOptions())
    >>> [stage for stage, _, _ in job.first_pass]
    ['scale', 'means']
    >>> list(means_job(job).result_schema)[:1]
    ['__irm_scale_k']
    >>> means_job(prepare_prediction(log, None, ["auc"], EvalOptions())) is None
    True
    """
    if not job.first_pass:
        return None
    stage, part, result = job.first_pass[0]
    first = replace(job, stage=stage, part_schema=part, result_schema=result, first_pass=())
    # the labels of every part are checked together, whatever by= or per_query
    return replace(first, by=(), keys=()) if stage == "labels" else first


def counts_checks(first: PredictionJob) -> bool:
    """Whether the first pass ``first`` (:func:`means_job`'s) also counts the data
    checks of each part (:func:`checks_job`'s parts, merged and raised on the driver or
    in one task before any later pass): the scale pass, which reads every row as the
    last pass does, so a refused call costs no pass a valid call does not (the last
    pass is not run to fail, then the checks' own). Not the labels pass: its refusal
    comes first, as on one machine.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> log = pa.schema([("label", pa.int64()), ("prediction", pa.float64())])
    >>> counts_checks(means_job(prepare_prediction(log, None, ["logloss"], EvalOptions())))
    True
    """
    return first.stage == "scale" and not first.checked


def checks_job(job: PredictionJob) -> PredictionJob:
    """The pass that counts the data checks of every part and raises them over the
    whole table, as one machine does (a part counts only its own rows: 6 predictions
    out of [0, 1] where the table has 10): each part's
    :func:`~polars_irmetrics.prediction.parts.part_checks`, merged in one task by
    :func:`~polars_irmetrics.prediction.parts.merge_checks` (one row of the number of
    groups when nothing is refused). Where a scale pass runs, with it
    (:func:`counts_checks`); else Dask runs it before the last pass's parts, Spark
    when a part has refused its rows.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> log = pa.schema([("label", pa.int64()), ("prediction", pa.float64())])
    >>> job = checks_job(prepare_prediction(log, None, ["logloss"], EvalOptions()))
    >>> job.stage, list(job.result_schema)
    ('checks', ['__irm_checked_groups'])
    """
    if job.check_schemas is None:  # pragma: no cover - prepare_prediction sets them
        raise MetricParameterError("a prediction job without its checks' schemas")
    part, result = job.check_schemas
    # every group's counts in one task: the table's total, its first group
    return replace(
        job, stage="checks", part_schema=part, result_schema=result, by=(), keys=(), first_pass=()
    )


def prediction_part(job: PredictionJob, table: pa.Table, labels: pa.Table | None) -> pa.Table:
    """One part's per-query values (``per_query``) or statistics: every row of its
    queries, from both tables. A data error is the library's own exception, raised as
    the one-machine plan raises it."""
    frame = _frame(table).lazy()
    truth = None if labels is None else _frame(labels).lazy()
    if job.stage == "labels":  # a text label column (else no such pass): its labels
        text = part_labels(frame, job.requests, job.options, truth)
        plan = pl.LazyFrame(schema=job.part_schema) if text is None else text
    elif job.stage == "checks":  # the part's counts, raised over the whole table
        plan = part_checks(frame, job.requests, job.options, truth)
    elif job.options.per_query:  # the engine warns of unmatched pairs, not each part
        plan = evaluate_plan(frame, job.requests, {"labels": truth}, job.options, warn=False)
    elif job.stage == "scale":
        plan = part_scale(frame, job.requests, job.options, truth)
    elif job.stage == "means":
        plan = part_means(frame, job.requests, job.options, truth, job.means)
    else:
        plan = part_statistics(frame, job.requests, job.options, truth, job.means)
    return _to_arrow(plan.collect(), job.part_schema)


def prediction_summary(job: PredictionJob, statistics: pa.Table) -> pa.Table:
    """The means of whole ``by`` groups (every group without ``by``) from the
    statistics of every part, as :func:`polars_irmetrics.evaluate` gives them (a first
    pass: its merged result, the labels pass's over the whole table)."""
    frame = _frame(statistics).lazy()
    if job.stage == "labels":  # raises as one machine does, whatever by=
        merged = merge_labels(frame, job.requests, job.options)
    elif job.stage == "checks":  # the counts of every part: one machine's message
        table = pl.LazyFrame(schema=job.table_schema)
        truth = None if job.labels_schema is None else pl.LazyFrame(schema=job.labels_schema)
        merged = merge_checks(frame, job.requests, job.options, table, truth)
    elif job.stage == "scale":
        merged = merge_scale(frame, job.options)
    elif job.stage == "means":
        merged = merge_means(frame, job.options)
    else:
        merged = merge_statistics(frame, job.requests, job.options)
    return _to_arrow(merged.collect(), job.result_schema)


def warn_on_summary(job: PredictionJob, means: pa.Table) -> None:
    """The warnings one machine gives of its means (an empty table, undefined values,
    infinite rating metrics: :func:`~polars_irmetrics.prediction.notes.warn_on_means`),
    on the engine's merged means; nothing for a first pass or per-query values."""
    if job.options.per_query or job.stage != "values":
        return
    options = job.options
    warn_on_means(
        _frame(means),
        parse_metric_list(list(job.metrics)),
        list(job.by),
        options.sample_weight,
        # labels= under unmatched='drop': the pairs' own warning says why
        empty=not (job.two_tables and options.unmatched == "drop"),
    )


def warn_on_unmatched(
    options: EvalOptions,
    *,
    matched: int,
    predictions: int,
    labels: int,
    emit: Callable[[str], None] | None = None,
) -> bool:
    """An engine's warning of labels that pair with few predictions, as one machine
    gives it (:func:`~polars_irmetrics.ground.validate.warn_on_pairs`): ``matched``, the
    sum of the result's ``num_rows``; ``predictions`` and ``labels``, the two tables'
    rows. Nothing under ``unmatched='error'`` (a one-sided pair is refused).
    ``emit``: where the text goes from a Dask worker. True: a task's output.

    >>> import warnings
    >>> from polars_irmetrics.ground.options import EvalOptions
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_on_unmatched(EvalOptions(unmatched="drop"), matched=0, predictions=2, labels=2)
    True
    >>> str(caught[0].message)[:58]
    'labels= and the predictions share none of their (query_id,'
    """
    if options.unmatched != "drop":
        return True
    return warned_to(
        lambda: warn_on_pairs(
            matched=matched,
            predictions=predictions,
            labels=labels,
            query_id=options.query_id,
            doc_id=options.doc_id,
        ),
        emit,
    )


def shared_systems(
    options: EvalOptions, predictions: Sequence[str], labels: Sequence[str]
) -> list[str]:
    """The ``systems=`` keys of the predictions (named ``predictions``) that ``labels=``
    (named ``labels``) lacks, where each system is scored against every label under
    ``unmatched='error'``: the engines read the predictions' distinct values of them
    first (:attr:`EvalOptions.prediction_systems`), for every part of the table."""
    if options.unmatched == "drop":
        return []
    ids = (options.query_id, options.doc_id)
    systems = [k for k in options.system_keys if k in predictions and k not in ids]
    return systems if any(k not in labels for k in systems) else []
