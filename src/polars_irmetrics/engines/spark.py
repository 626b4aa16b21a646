"""``polars_irmetrics.spark.evaluate``: the evaluation plan on Apache Spark.

How the work divides (see also :mod:`polars_irmetrics.engines`):

1. **On the driver**, before any Spark job: the one-machine plan is built on empty
   frames of the two schemas (:func:`~polars_irmetrics.engines._partition.prepare`),
   so that a missing column, a wrong dtype, an unknown metric or a bad option raises
   the library's own error.
2. **Partitioned by query hash**: each row of the run and of the judgments gets a
   part number, ``pmod(xxhash64(query_id), partitions)``; both sides, in one frame
   (the judgments' columns renamed, a side flag), are ``repartition``-ed on it and
   ``mapInArrow`` hands each partition's rows, from both sides, to one Python task as
   Arrow batches, where the ordinary polars plan computes the per-query values (no
   pandas in between). ``STRATEGY = "cogroup"`` uses ``groupBy(part).cogroup(...)
   .applyInArrow`` instead (same values; benchmarks/results_scale.md: similar times,
   more memory). Only the rows of the run and judgments cross the network once
   (the shuffle), and one row per query comes back. With ``by`` keys the judgments
   lack, the judgments are crossed with the run's ``by`` groups first (a broadcast of
   the distinct groups), as the one-machine plan does.
3. **Means**: the per-query values of each ``by`` group go to one task
   (``groupBy(by).applyInArrow``; without ``by`` one partition), sorted by the keys
   and averaged by the same polars expression as on one machine (the values added
   from the least): equal to :func:`polars_irmetrics.evaluate`'s to the last bit, which
   Spark's own ``avg`` (summing in task order) is not.

The result is computed when :func:`evaluate` is called (one Spark job, kept with
``localCheckpoint``), so that a data error found in a task (a duplicate document, a
null id) is raised by the call as the library's own exception with its message, not
as a Java stack trace.
"""

from __future__ import annotations

import functools
import operator
import uuid
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from polars_irmetrics.engines._agreement import agreement_route
from polars_irmetrics.engines._agreement_spark import agreement_frame
from polars_irmetrics.engines._ope import ope_route
from polars_irmetrics.engines._partition import (
    PART,
    Job,
    Refusal,
    arrow_schema,
    as_polars_frame,
    attribute_columns,
    check_options_read,
    evaluate_part,
    held_part,
    prepare,
    raise_carried,
    raise_least,
    summarize_part,
    summarized_segments,
    tells_segments,
)
from polars_irmetrics.engines._prediction import (
    prediction_route,
    shared_systems,
    warn_on_summary,
    warn_on_unmatched,
)
from polars_irmetrics.engines._ps import ps_route
from polars_irmetrics.engines._recsys import counts_route, elliot_route, unseen_job
from polars_irmetrics.engines._sides import (
    EXPOSURE_COUNT,
    Beside,
    check_sides,
    reads_history,
    reads_relevant_group_ids,
    refuse_click_means,
    refuse_history_nulls,
    side_tables,
    split_front,
    warn_on_group_ids,
    warn_on_history,
    warns_on_features,
)
from polars_irmetrics.engines.params import engine_doc
from polars_irmetrics.errors import (
    ColumnTypeError,
    InvalidValueError,
    IrmError,
    MissingDependencyError,
)
from polars_irmetrics.ground.options import EvalKwargs, EvalOptions
from polars_irmetrics.ground.progress import Progress, poll
from polars_irmetrics.ground.validate import INTERNAL, unplaced_query_error
from polars_irmetrics.prediction.statistics import NUM_ROWS

try:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql import functions as F  # noqa: N812 (Spark's own spelling)
    from pyspark.sql.pandas.types import from_arrow_schema
    from pyspark.sql.types import IntegralType, StructType
except ImportError as exc:  # pragma: no cover - the test environment has pyspark
    raise MissingDependencyError(
        "polars_irmetrics.spark needs Apache Spark's Python package: "
        "pip install 'polars_irmetrics[spark]'"
    ) from exc

# after pyspark's own import, which names the extra when it is missing
from polars_irmetrics.engines._ope_spark import ope_frame
from polars_irmetrics.engines._prediction_spark import prediction_frame, raise_checks
from polars_irmetrics.engines._ps_spark import ps_frame
from polars_irmetrics.engines._recsys_spark import counts_frame, elliot_frame, unseen_frame
from polars_irmetrics.engines._spark_arrow import arrow_of
from polars_irmetrics.engines._spark_coverage import (
    Parts,
    coverage_parts,
    into,
    refusals_into,
    task_key,
    undefined_into,
    warn_parts,
    warn_values,
)
from polars_irmetrics.engines._spark_lists import spark_long_form
from polars_irmetrics.engines._spark_pairs import carrying, paired_map
from polars_irmetrics.engines._spark_partitions import per_query_in_partitions

if TYPE_CHECKING:
    from pyspark.sql import Column
    from typing_extensions import Unpack

__all__ = ["STRATEGY", "evaluate"]

_GROUP = "spark.jobGroup.id"  # the local property that names a thread's job group

#: How the parts reach the Python tasks: ``"map"`` (default),
#: ``repartition(part).mapInArrow`` over both sides in one frame (no sort; a task takes
#: its whole partition at once), or ``"cogroup"``, ``groupBy(part).cogroup(...)
#: .applyInArrow`` (Spark sorts each side by part, then hands one part at a time).
#: Measured (benchmarks/results_scale.md, local[2], 1M-4M rows): times within the
#: noise of a loaded machine either way (map 35 s against 40 s at 4M rows), the
#: largest process half the size with ``"map"`` (759 against 1,530 MiB at 4M rows).
STRATEGY = "map"


@engine_doc("Spark")
def evaluate(
    run: DataFrame,
    metrics: str | Iterable[str],
    *,
    qrels: DataFrame | None = None,
    queries: DataFrame | None = None,
    labels: DataFrame | None = None,
    policy: DataFrame | None = None,
    reward_model: DataFrame | None = None,
    propensities: DataFrame | None = None,
    groups: DataFrame | None = None,
    target: DataFrame | None = None,
    interactions: DataFrame | None = None,
    item_features: DataFrame | None = None,
    reference: DataFrame | None = None,
    partitions: int | None = None,
    **options: Unpack[EvalKwargs],
) -> DataFrame:
    """Evaluate a run held in Spark against judgments: per-query values or means.

    The arguments, defaults, metric names, policies, errors and results are those of
    :func:`polars_irmetrics.evaluate` (see there); only the frames are Spark's.

    Parameters
    ----------
    run, qrels
        Spark DataFrames with the columns :func:`polars_irmetrics.evaluate` reads. A
        list-shaped side (``doc_id`` an ``ArrayType``: one row per query) is put in the long
        form first by :func:`polars_irmetrics.evaluate`'s own conversion, per partition
        (not with ``partitioned_by``, whose files must hold the long form).
    metrics
        As in :func:`polars_irmetrics.evaluate`.
    queries
        Attributes of the queries (``query_id`` and ``by`` keys), a Spark DataFrame, as
        in :func:`polars_irmetrics.evaluate`: broadcast and joined onto the judgments
        (and onto the run where it lacks a key), so that each judged query counts in
        the group its own value names. With ``partitioned_by`` the run must carry the
        keys itself.
    labels
        Prediction metrics (``auc``, ``gauc``, ``logloss``, ``rmse``...), two-table form:
        the true labels, joined to ``run`` (the predictions) on ``query_id`` and
        ``doc_id``, as in :func:`polars_irmetrics.evaluate`. With prediction metrics,
        ``run`` is the table of predictions (with its ``label`` column in the one-table
        form); each part's rows go to one task, which gives its per-query values or,
        for the means, sums and score histograms merged exactly per ``by`` group
        (:mod:`polars_irmetrics.engines._prediction`).
    policy, reward_model
        Off-policy estimators (``ips``, ``snips``, ``dr``, ``slate_ips``, ``cascade_dr``...):
        ``run`` is the log of logged feedback and these are the evaluation policy and the
        reward model, Spark DataFrames, as in :func:`polars_irmetrics.evaluate`. The three
        are split by a hash of ``round_id``; each part gives exact sums per ``by`` group,
        merged in one task into the estimates, equal to one machine's to the last bit
        (:mod:`polars_irmetrics.engines._ope`). ``ci=`` (bootstrap and normal) and
        ``per_query=True`` give the same bits too, as does obp's list shape (``prob``
        and ``q_hat`` a list per round: an ``array<double>`` column).
    propensities
        Propensity-scored metrics (``ps_precision@k``, ``ps_ndcg@k``): one row per
        document or per ``position`` with its ``propensity``, a small Spark DataFrame,
        gathered at the call and shipped to every task; the run and ``qrels`` are split
        by query hash and the parts' sums finished in one task, equal to one machine's
        to the last bit (:mod:`polars_irmetrics.engines._ps`).
    groups, target
        %(groups)s
    interactions
        %(interactions)s
    item_features
        %(item_features)s
    reference
        %(reference)s
    partitions
        How many parts the queries are hashed into (each part is one task's work):
        default ``spark.sql.shuffle.partitions``. A part's rows are held in one Python
        worker's memory, so raise it for larger logs (aim at a few million run rows
        per part). Not with ``partitioned_by``.
    **options
        The keyword arguments of :func:`polars_irmetrics.evaluate` (``by``,
        ``systems``, ``per_query``, ``order``, ``relevance_level``, ``depth``,
        ``unjudged``, ``unretrieved``, ``check_duplicates`` and the column names), with
        their defaults and meaning, and ``partitioned_by`` and ``progress`` as below.
        Those of the one-machine out-of-core plan (``buckets``, ``spill_dir``,
        ``memory_limit``, ``explain``) are refused: the work divides by ``partitions``.

        ``partitioned_by``
            A hive partition column of the run's Parquet files (``qhash`` of
            ``run/qhash=07/part-0.parquet``) that keeps each query whole: no query has rows
            under two of its values, in the run or, when they carry it, in the judgments.
            Then the run is **not shuffled**: the run must be a plain read of those files
            (``spark.read.parquet(...)``, columns selected or not), one task per value
            reads its files with polars on the executor, and only the per-query values
            travel. Judgments stored the same way are read by the task of their value;
            other judgments are collected on the driver and broadcast (keep them small, or
            store them in the same partitions). A query found under two values raises
            :class:`~polars_irmetrics.errors.InvalidValueError` naming it. As in
            :func:`polars_irmetrics.evaluate`. Default ``None``: shuffle by query hash.

        ``progress``
            Draw the running stages' tasks on standard error: ``None`` (default) in a
            terminal or a notebook (a Jupyter kernel) only, ``True`` on any stream,
            ``False`` never (:mod:`polars_irmetrics.ground.progress`).

    Returns
    -------
    pyspark.sql.DataFrame
        Computed (kept with ``localCheckpoint``) and sorted by the keys, with the
        columns and values of :func:`polars_irmetrics.evaluate`'s result.

    Raises
    ------
    ColumnNotFoundError, ColumnTypeError, UnknownMetricError, MetricParameterError
        Raised on the driver before any Spark job starts (``partitioned_by`` not a
        column of the run included; not a hive partition column of a plain read of
        Parquet files: :class:`~polars_irmetrics.errors.InvalidValueError`).
    InvalidValueError, DuplicateError, QuerySetError
        Found in the data by a task and raised by this call, with the message
        :func:`polars_irmetrics.evaluate` gives.

    Warns
    -----
    CoverageWarning
        As :func:`polars_irmetrics.evaluate` warns on the same data (the same text and
        counts, once per run or system), by this call: each part's tally, gathered by
        an accumulator and added up on the driver
        (:mod:`polars_irmetrics.engines._spark_coverage`); as
        :func:`polars_irmetrics.evaluate_online` warns of an impression log of no click
        (each part's count of clicks, added up there).

    Examples
    --------
    On a cluster's logs (a sketch, not run by the tests, which use ``local[2]``)::

        import polars_irmetrics.spark as irm_spark
        run = spark.read.parquet("s3://logs/run/")
        qrels = spark.read.parquet("s3://logs/qrels/")
        means = irm_spark.evaluate(run, ["ndcg@10"], qrels=qrels, by="day")
        means.write.parquet("s3://reports/means/")

    Logs hive-partitioned by a hash of the query, evaluated where they lie::

        run = spark.read.parquet("s3://logs/run/")  # run/qhash=00/ ... run/qhash=63/
        means = irm_spark.evaluate(run, ["ndcg@10"], qrels=qrels, partitioned_by="qhash")
    """
    tables = {"qrels": qrels, "groups": groups, "target": target, "queries": queries}
    tables |= {"labels": labels, "policy": policy, "reward_model": reward_model}
    tables |= {"propensities": propensities, "interactions": interactions}
    tables |= {"item_features": item_features, "reference": reference}
    built, halves = split_front(
        "Spark",
        evaluate,
        run,
        metrics,
        tables,
        partitions,
        options,
        ensure_frame=_ensure_frame,
        schema=arrow_of,
    )
    if halves is not None:  # two calls, side by side as one machine puts them
        beside, rest, exposure = halves
        return _compute(_beside(rest, exposure, beside, built), run.sparkSession, built.progress)
    given = {"groups": groups, "target": target, "interactions": interactions}
    given |= {"item_features": item_features}
    for name, table in given.items():
        if table is not None:
            _ensure_frame(table, name)
    every = {"qrels": qrels, "queries": queries, "labels": labels, "policy": policy}
    every |= {"reward_model": reward_model, "propensities": propensities, **given}
    # the run's columns, which rank=, score= and sample_id= must name, as evaluate checks
    columns = arrow_of(run)
    names, agreement = agreement_route(
        "Spark", metrics, built, {**every, "reference": reference}, run=columns
    )
    if agreement and reference is not None:
        _ensure_frame(reference, "reference")
        spark = run.sparkSession
        result, warn_tied = agreement_frame(
            run,
            names,
            reference=reference,
            count=_partitions(spark, partitions),
            options=built,
            part=_part,
            spark_schema=_spark_schema,
        )
        computed = _compute(result, spark, built.progress)
        # as one machine warns, once computed: the reference's queries, then the ties
        # (from the tasks' tallies)
        warn_tied()
        return computed
    if any(table is not None for table in given.values()):  # before the other routes
        check_sides("Spark", metrics, given)
    others = {"queries": queries, "labels": labels, "policy": policy, "reward_model": reward_model}
    names, ps = ps_route(
        "Spark", metrics, built, {**others, "propensities": propensities}, run=columns
    )
    if ps and propensities is not None:
        _ensure_frame(propensities, "propensities")
        spark = run.sparkSession
        result, warn = ps_frame(
            run,
            names,
            qrels=qrels,
            propensities=propensities,
            count=_partitions(spark, partitions),
            options=built,
            part=_part,
            spark_schema=_spark_schema,
        )
        computed = _compute(result, spark, built.progress)
        warn()  # the coverage warning, once the run is not refused (one machine's order)
        return computed
    tables = {"policy": policy, "reward_model": reward_model, "qrels": qrels}
    names, ope = ope_route(
        "Spark", metrics, built, {**tables, "queries": queries, "labels": labels}
    )
    if ope and policy is not None:
        _ensure_frame(policy, "policy")
        if reward_model is not None:
            _ensure_frame(reward_model, "reward_model")
        spark = run.sparkSession
        result, warn, unshrunk = ope_frame(
            run,
            names,
            policy=policy,
            reward_model=reward_model,
            count=_partitions(spark, partitions),
            options=built,
            part=_part,
            spark_schema=_spark_schema,
            gather=lambda frame: _compute(frame, spark, built.progress),
        )
        computed = _compute(result, spark, built.progress)
        warn()  # the support warnings, once the log is not refused (one machine's order)
        unshrunk(computed)  # then a dr_os(lambda=0) estimate NaN, from the means
        return computed
    metrics = names
    metrics, predictions = prediction_route(
        "Spark", metrics, built, qrels=qrels, queries=queries, labels=labels
    )
    # an option none of the metrics reads, or a column named that the run lacks, is
    # refused, as irm.evaluate refuses it
    given_tables = {
        k for k, t in {**given, "qrels": qrels, "queries": queries}.items() if t is not None
    }
    check_options_read(built, metrics, labels=labels is not None, tables=given_tables, run=columns)
    refuse_click_means("Spark", metrics, built)  # their means are not the summary's
    sides = side_tables("Spark", metrics, given, _collect, built)
    if predictions:
        if labels is not None:
            _ensure_frame(labels, "labels")
        spark = run.sparkSession
        count = _partitions(spark, partitions)
        shared = [] if labels is None else shared_systems(built, run.columns, labels.columns)
        if shared:  # every system against every label: each part reads every system
            systems = [k for k in built.system_keys if k in run.columns]
            systems = [k for k in systems if k not in (built.query_id, built.doc_id)]
            distinct = pl.from_arrow(run.select(*systems).distinct().toArrow())
            built = built.replace(prediction_systems=tuple(distinct.rows()))  # type: ignore[union-attr]
        result, predicted, sizes = prediction_frame(
            run,
            metrics,
            labels=labels,
            count=count,
            options=built,
            part=_part,
            spark_schema=_spark_schema,
        )
        try:
            computed = _compute(result, spark, built.progress)
        except IrmError:  # a part's refusal counts its rows: the whole table's instead
            raise_checks(
                run, labels, predicted, count=count, part=_part, spark_schema=_spark_schema
            )
            raise
        means = None
        if not built.per_query:  # the means' warnings, as one machine gives them
            means = computed.toArrow()
            warn_on_summary(predicted, means)
        if labels is not None and built.unmatched == "drop":  # as one machine warns
            # the tables' rows as the last pass's tasks counted them (no job of their
            # own); the pairs read: the result's num_rows, collected once
            predictions_rows, labels_rows = sizes()
            if means is None:
                means = computed.select(NUM_ROWS).toArrow()
            warn_on_unmatched(
                built,
                matched=int(pc.sum(means[NUM_ROWS]).as_py() or 0),
                predictions=predictions_rows,
                labels=labels_rows,
            )
        return computed
    partitioned_by = built.partitioned_by
    if partitioned_by is None:  # list-shaped sides (one row per query) in the long form
        run, qrels, built = spark_long_form(run, qrels, built)
    placed = None
    if queries is not None:
        _ensure_frame(queries, "queries")
        run, qrels, placed = _with_attributes(run, qrels, queries, built)
    progress = built.progress
    names, kind = counts_route("Spark", metrics, built)
    if kind is not None:  # coverage, Gini, novelty: the items' counts; RePlay's novelty
        spark = run.sparkSession
        result = counts_frame(
            run,
            names,
            kind=kind,
            sides=sides,
            count=_partitions(spark, partitions),
            options=built,
            part=_part,
            spark_schema=_spark_schema,
        )
        computed = _computed_whole(result, run, sides, metrics, built, progress, placed)
        _warn_on_history(run, interactions, sides, metrics, built)
        return computed
    names, elliot = elliot_route("Spark", metrics)
    if elliot:  # Elliot's: each user's counts against the whole history, merged
        spark = run.sparkSession
        covered = coverage_parts(spark.sparkContext)
        result, elliot_job = elliot_frame(
            run,
            qrels,
            names,
            sides=sides,
            count=_partitions(spark, partitions),
            options=built,
            part=_part,
            spark_schema=_spark_schema,
            parts=covered,
        )
        computed = _compute(result, spark, progress, placed)
        warn_parts(elliot_job, covered)  # as one machine warns, from the parts' coverage
        _warn_on_history(run, interactions, sides, metrics, built)
        return computed
    job = prepare(
        arrow_of(run),
        None if qrels is None else arrow_of(qrels),
        metrics,
        built,
        sides,
    )
    spark = run.sparkSession
    parts = coverage_parts(spark.sparkContext)  # each part's coverage, for the warning
    if partitioned_by is not None:
        if partitions is not None:
            raise InvalidValueError(
                f"partitions={partitions!r} and partitioned_by={partitioned_by!r} exclude "
                "each other: with partitioned_by each value of the column makes one task; "
                "drop partitions="
            )
        values = per_query_in_partitions(
            run,
            qrels,
            job,
            partitioned_by,
            _spark_schema(job.per_query_schema, job.keys),
            lambda frame: _compute(frame, spark, progress, placed, parts),
            parts,
        )
    else:
        count = _partitions(spark, partitions)
        split = _per_query_map if STRATEGY == "map" else _per_query
        values = split(run, qrels, job, count, parts)
    if built.per_query:
        result = values.orderBy(*job.keys).toDF(*job.per_query_schema)
    else:
        result = _means(values, job).toDF(*job.means_schema)
    computed = _computed_whole(result, run, sides, metrics, built, progress, placed, parts)
    # the history's null ids refused before the parts' warnings, as one machine refuses
    nulls = _history_nulls(interactions, sides, metrics, built)
    held = () if interactions is None else interactions.columns
    refuse_history_nulls(sides, metrics, built, null_rows=nulls, held=held)
    warn_parts(job, parts)  # as one machine warns, from the parts' coverage
    if any(name == "groups" for name, _ in sides):  # groups= against the whole run's ids
        relevant = queried = None
        if qrels is not None and reads_relevant_group_ids(sides, metrics):  # ee_*, awrf
            # the relevant (query, document) pairs and the run's queries: those
            # without a group in the run's queries are named, as one machine names them
            judged = qrels.filter(qrels[built.relevance] > 0)
            relevant = _collect("qrels", judged, (built.query_id, built.doc_id), True)
            queried = _collect("run", run, (built.query_id,), True)
        warn_on_group_ids(
            _collect("run", run, (built.doc_id,), True),
            sides,
            metrics,
            built,
            relevant=relevant,
            queries=queried,
        )
    # and what their values tell (rnd undefined, no session, ee_* leaving queries out)
    warn_values(job, parts, summary=not built.per_query)
    if not built.per_query and tells_segments(job):  # by= groups scored on no query
        computed = _with_segments(computed, run, job)
    _warn_on_history(run, interactions, sides, metrics, built, null_rows=nulls)
    return computed


def _with_segments(computed: DataFrame, run: DataFrame, job: Job) -> DataFrame:
    """The exposure measures' means ``computed`` (one row per ``by`` group they score a
    query of, already computed), with a row for each group of the run they score none
    of and that said, as one machine gives them
    (:func:`~polars_irmetrics.engines._partition.summarized_segments`): the means and
    the run's distinct keys are one row per group, read on the driver."""
    means = as_polars_frame(computed.toArrow())
    segments = as_polars_frame(run.select(*job.by).distinct().toArrow())
    whole = summarized_segments(job, means, segments)
    if whole.height == means.height:
        return computed
    table = whole.to_arrow(compat_level=pl.CompatLevel.oldest())
    return computed.sparkSession.createDataFrame(table, schema=computed.schema)


def _computed_whole(
    result: DataFrame,
    run: DataFrame,
    sides: tuple[tuple[str, pa.Table], ...],
    metrics: str | Iterable[str],
    options: EvalOptions,
    progress: bool | None,
    placed: Callable[[], None] | None,
    parts: Parts | None = None,
) -> DataFrame:
    """:func:`_compute` (``parts``: the parts' refusals, the least raised); where a part
    refused the recommended items the interactions lack (its count and example that
    part's users'), the whole run's refusal instead, one machine's
    (:func:`~polars_irmetrics.engines._recsys_spark.unseen_frame`, one more Spark job)."""
    spark = run.sparkSession
    try:
        return _compute(result, spark, progress, placed, parts)
    except IrmError as exc:
        job = unseen_job(arrow_of(run), sides, metrics, options)
        if job is None or not job.matches(exc):
            raise
        count = _partitions(spark, None)
        whole = unseen_frame(run, job, count=count, part=_part, spark_schema=_spark_schema)
        _compute(whole, spark, progress)
        raise


def _warn_on_history(
    run: DataFrame,
    interactions: DataFrame | None,
    sides: tuple[tuple[str, pa.Table], ...],
    metrics: str | Iterable[str],
    options: EvalOptions,
    *,
    null_rows: int | None = None,
) -> None:
    """Where a metric reads the history, its warning and refusal of null ids, against
    the whole run's users and items (with ``unseen_items='drop'`` too, the ids as given,
    before the drop); the item features' warning where their items' recommendations
    are scored or left out (:func:`warns_on_features`). Where only the catalogue
    travelled, the history's distinct users are gathered here too, and its rows with a
    null id (``null_rows``, where :func:`_history_nulls` counted them already)."""
    history = interactions is not None and any(name == "interactions" for name, _ in sides)
    if not (history or warns_on_features(sides, options)):
        return
    users, items = (_collect("run", run, (k,), True) for k in (options.query_id, options.doc_id))
    held_users = None
    if history and interactions is not None and not reads_history(metrics):  # catalogue only
        ids = [c for c in (options.doc_id, options.query_id) if c in interactions.columns]
        if null_rows is None:
            null_rows = _history_nulls(interactions, sides, metrics, options)
        if options.query_id in ids:
            held_users = _collect("interactions", interactions, (options.query_id,), True)
    # with systems=, each system's distinct ids too: a system the history lacks is named
    systems = tuple(options.system_keys)
    system_ids = (
        {k: _collect("run", run, (*systems, k), True) for k in (options.query_id, options.doc_id)}
        if systems
        else None
    )
    warn_on_history(
        users,
        items,
        sides,
        metrics,
        options,
        held_users=held_users,
        null_rows=null_rows,
        system_ids=system_ids,
    )


def _history_nulls(
    interactions: DataFrame | None,
    sides: tuple[tuple[str, pa.Table], ...],
    metrics: str | Iterable[str],
    options: EvalOptions,
) -> int | None:
    """The history's rows with a null id (one Spark job), where only its catalogue
    travelled (``mcc@k``, ``reco_accuracy@k``: :func:`reads_history` false), for
    :func:`~polars_irmetrics.engines._sides.refuse_history_nulls` and
    :func:`_warn_on_history`; ``None`` elsewhere."""
    if interactions is None or reads_history(metrics):
        return None
    if not any(name == "interactions" for name, _ in sides):
        return None
    ids = [c for c in (options.doc_id, options.query_id) if c in interactions.columns]
    null = functools.reduce(operator.or_, (F.col(c).isNull() for c in ids))
    return interactions.filter(null).count()


def _beside(
    rest: DataFrame, exposure: DataFrame, beside: Beside, options: EvalOptions
) -> DataFrame:
    """The exposure measures' values beside the other metrics', as
    :func:`polars_irmetrics.evaluate` puts them: per query a full join on the query keys
    (sorted by them), the metrics in the order given; or the means side by side, with
    the exposure measures' ``num_q_exposure`` after the accuracy metrics' ``num_q`` (a
    ``by`` group one call lacks counts 0 queries there; beside the beyond-accuracy
    metrics, which count none, theirs is ``num_q``). Columns are renamed to plain names
    for the join: a label may hold a dot, which Spark reads as a field of a struct."""
    keys = [*options.by_keys, options.query_id] if options.per_query else list(options.by_keys)
    counted = not options.per_query and "num_q" in rest.columns  # the accuracy metrics'
    named = {"r": ["num_q"] if counted else [], "e": [] if options.per_query else ["num_q"]}
    if counted:
        named["e"] = [EXPOSURE_COUNT]
    sides = []
    for side, labels in (("r", beside.rest), ("e", beside.exposure)):
        frame = rest if side == "r" else exposure
        counts = named[side]
        # by the call's own column order (the exposure measures come grouped by kind,
        # not in the order asked), each label to a plain name
        given = frame.columns[len(keys) + len(counts) :]
        inner = [f"{INTERNAL}{side}{i}" for i in range(len(given))]
        if sorted(given) != sorted(labels):  # pragma: no cover - each call gives its labels
            raise RuntimeError(f"expected the columns {labels}, got {given}")
        sides.append((frame.toDF(*keys, *counts, *inner), dict(zip(given, inner, strict=True))))
    (left, left_names), (right, right_names) = sides
    joined = left.join(right, on=keys, how="full") if keys else left.crossJoin(right)
    counts = [*named["r"], *named["e"]]
    if counts and keys:
        joined = joined.fillna(0, subset=counts)
    names = {**left_names, **right_names}
    columns = [*keys, *counts, *(names[label] for label in beside.labels)]
    joined = joined.select(*columns)
    if keys:
        joined = joined.orderBy(*keys)
    return joined.toDF(*keys, *counts, *beside.labels)


def _with_attributes(
    run: DataFrame, qrels: DataFrame | None, queries: DataFrame, options: EvalOptions
) -> tuple[DataFrame, DataFrame | None, Callable[[], None]]:
    """``run`` and ``qrels`` with the ``by`` keys that ``queries`` holds (broadcast), and
    the check of the queries it gives no key (a Spark job, run by :func:`_compute` when
    the evaluation fails: a part that finds a null key knows its own queries only)."""
    query_id = options.query_id
    keys, missing = attribute_columns(
        arrow_of(run),
        None if qrels is None else arrow_of(qrels),
        arrow_of(queries),
        options,
    )
    if missing and options.partitioned_by is not None:
        raise InvalidValueError(
            f"queries= gives the by key {missing[0]!r}, which the run lacks; with "
            "partitioned_by= the run is read where it lies and cannot be joined first: "
            f"add a {missing[0]!r} column to the run's files, or drop partitioned_by="
        )
    attributes = queries.select(query_id, *keys).distinct()
    if qrels is not None:
        qrels = _joined_on_query(qrels, attributes, query_id)
    if missing:
        run = _joined_on_query(run, attributes.select(query_id, *missing), query_id)
    return run, qrels, functools.partial(_placed, run, qrels, keys, query_id)


def _joined_on_query(frame: DataFrame, attributes: DataFrame, query_id: str) -> DataFrame:
    """``frame`` left-joined with ``attributes`` (broadcast) on the query id; ids of two
    dtypes (of one kind: the driver refused two kinds) compared as their text, which is
    one integer's in every width, never cast to ``frame``'s (a wider id overflowed the
    cast); ``frame``'s id column as it was."""
    if frame.schema[query_id].dataType == attributes.schema[query_id].dataType:
        return frame.join(F.broadcast(attributes), on=query_id, how="left")
    key = f"{INTERNAL}query_key"
    text = attributes.select(F.col(query_id).cast("string").alias(key), *attributes.columns[1:])
    return (
        frame.withColumn(key, F.col(query_id).cast("string"))
        .join(F.broadcast(text), on=key, how="left")
        .drop(key)
    )


def _placed(run: DataFrame, qrels: DataFrame | None, keys: Sequence[str], query_id: str) -> None:
    """Raise one machine's error where a query of the run or of the judgments has a
    null ``by`` key (``keys``, from ``queries=``, in their order): the lowest such id
    and their number, over every part."""
    dtype = run.schema[query_id].dataType
    for key in keys:
        ids = [
            side.filter(F.col(key).isNull()).select(F.col(query_id).cast(dtype).alias(query_id))
            for side in (run, qrels)
            if side is not None and key in side.columns
        ]
        found = functools.reduce(DataFrame.unionByName, ids)
        row = found.agg(F.min(query_id), F.countDistinct(query_id)).first()
        if row is not None and row[1]:
            raise unplaced_query_error(key, row[0], row[1])


def _per_query(
    run: DataFrame, qrels: DataFrame | None, job: Job, count: int, parts: Parts
) -> DataFrame:
    """One row per query and ``by`` group: the plan run on each part's rows."""
    schema = _spark_schema(job.per_query_schema, job.keys)
    inner = schema.names
    query_id = job.options.query_id
    runs = run.withColumn(PART, _part(run, query_id, count)).groupBy(PART)
    if qrels is None:

        def one_side(table: pa.Table) -> pa.Table:
            key = ("cogroup", _part_of(table))
            evaluated = _evaluated(job, parts, key, table, None)
            return undefined_into(parts, key, job, evaluated).rename_columns(inner)

        return runs.applyInArrow(one_side, schema)
    if job.run_only_by:
        # aliased: new column ids, so that Spark does not see a self-join of the run
        groups = run.select(*(F.col(k).alias(k) for k in job.run_only_by)).distinct()
        qrels = qrels.crossJoin(F.broadcast(groups))
    judged = qrels.withColumn(PART, _part(qrels, query_id, count)).groupBy(PART)

    def both_sides(run_part: pa.Table, qrels_part: pa.Table) -> pa.Table:
        key = ("cogroup", _part_of(run_part, qrels_part))
        evaluated = _evaluated(job, parts, key, run_part, qrels_part)
        return undefined_into(parts, key, job, evaluated).rename_columns(inner)

    return runs.cogroup(judged).applyInArrow(both_sides, schema)


def _per_query_map(
    run: DataFrame, qrels: DataFrame | None, job: Job, count: int, parts: Parts
) -> DataFrame:
    """As :func:`_per_query`, by ``repartition(count, part).mapInArrow``: both sides in one
    frame (the judgments' columns renamed, a side flag), hash-partitioned on the part
    number without sorting, and each partition's rows evaluated at once
    (:func:`~polars_irmetrics.engines._spark_pairs.paired_map`)."""
    if qrels is not None and job.run_only_by:
        groups = run.select(*(F.col(k).alias(k) for k in job.run_only_by)).distinct()
        qrels = qrels.crossJoin(F.broadcast(groups))

    def evaluate(runs: pa.Table, judged: pa.Table | None) -> pa.Table:
        key = task_key("map")
        evaluated = _evaluated(job, parts, key, runs, judged)
        return undefined_into(parts, key, job, evaluated)

    return paired_map(
        run,
        qrels,
        evaluate,
        query_id=job.options.query_id,
        count=count,
        part=_part,
        schema=_spark_schema(job.per_query_schema, job.keys),
        prefix="q",
    )


def _evaluated(
    job: Job, parts: Parts, key: Hashable, run: pa.Table, qrels: pa.Table | None
) -> pa.Table:
    """A part's per-query values in a task (:func:`evaluate_part`), its coverage handed
    to ``parts`` under ``key``; a data error one plan orders, handed there too, the part
    giving no values (:func:`~polars_irmetrics.engines._partition.held_part`: the driver
    raises the least of the parts'); another library error carried back."""
    refused = refusals_into(parts, key)
    sink = into(parts, key)
    return carrying(held_part, job.per_query_schema, refused, evaluate_part, job, run, qrels, sink)


def _part_of(*tables: pa.Table) -> object:
    """The part number of a cogroup's tables (one of them has a row)."""
    table = next(t for t in tables if t.num_rows)
    return table.column(PART)[0].as_py()


def _means(values: DataFrame, job: Job) -> DataFrame:
    """One row of means per ``by`` group, each computed in one task (module doc)."""
    schema = _spark_schema(job.means_schema, job.by)
    inner, labels = schema.names, list(job.per_query_schema)

    def summarize(table: pa.Table) -> pa.Table:
        per_query = table.rename_columns(labels)
        return carrying(summarize_part, job, per_query).rename_columns(inner)

    if job.by:

        def group(table: pa.Table) -> pa.Table:
            return summarize(table)

        return values.groupBy(*job.by).applyInArrow(group, schema).orderBy(*job.by)

    def everything(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        table = pa.Table.from_batches(list(batches), schema=_arrow_values(job))
        yield from summarize(table).to_batches()

    # one partition holds every query, so the one row of means is there, even for none
    return values.repartition(1).mapInArrow(everything, schema)


def _compute(
    result: DataFrame,
    spark: SparkSession,
    progress: bool | None,
    placed: Callable[[], None] | None = None,
    parts: Parts | None = None,
) -> DataFrame:
    """Run the job now, drawing its stages, and raise a task's library error as ours.

    ``placed``, where the run and the judgments took their ``by`` keys from
    ``queries=``, is run when the job fails: it raises one machine's error of the
    queries ``queries=`` gives no key, which one machine checks before the data's other
    problems (a part sees a null key alone).

    ``parts``, where the parts hand the data errors one plan orders (a null id, a
    document twice...) to it rather than failing their task
    (:func:`~polars_irmetrics.engines._partition.held_part`): the least of them is raised
    once the job has run (every part's, whichever task came first), as one machine
    raises it; after ``placed``'s, as one machine checks those first.

    The job's stages are found through a job group of its own (the caller's group is
    restored after): the bar counts the tasks done over every stage of this
    computation, finished ones included, and says how many stages are done
    (``spark stage 2/3``, tqdm's bar)."""
    context = spark.sparkContext
    tracker = context.statusTracker()
    group = f"polars_irmetrics-{uuid.uuid4().hex}"
    previous = context.getLocalProperty(_GROUP)

    def stages(final: bool = False) -> tuple[int, int, str] | None:
        jobs = [tracker.getJobInfo(j) for j in tracker.getJobIdsForGroup(group)]
        ids = sorted({s for job in jobs if job is not None for s in job.stageIds})
        infos = [i for i in (tracker.getStageInfo(s) for s in ids) if i is not None]
        if final:  # a stage with no task done was skipped (its output reused)
            infos = [i for i in infos if i.numCompletedTasks > 0]
        if not infos:
            return None
        done = sum(i.numCompletedTasks for i in infos)
        total = sum(i.numTasks for i in infos)
        finished = sum(i.numCompletedTasks >= i.numTasks for i in infos)
        return done, total, f"spark stage {finished}/{len(infos)}"

    with Progress("spark", 0, enabled=progress) as bar:
        stop = poll(bar, stages)
        context.setLocalProperty(_GROUP, group)
        try:
            computed = result.localCheckpoint(eager=True)
        except Exception as exc:  # a Spark error, which may carry one of ours
            if placed is not None:
                placed()
            if parts is not None:  # a part's refusal, before a task's other error
                raise_least(parts.value.values())
            raise_carried(exc)
        finally:
            context.setLocalProperty(_GROUP, previous)  # type: ignore[arg-type]
            stop()
        if parts is not None and any(isinstance(v, Refusal) for v in parts.value.values()):
            if placed is not None:
                placed()
            raise_least(parts.value.values())
        if bar.shown:  # the last state, all stages done
            last = stages(final=True)
            if last is not None:
                bar.update(*last)
        return computed


def _part(frame: DataFrame, query_id: str, count: int) -> Column:
    """A row's part: a hash of its query id (integers hashed as 64-bit, whatever their
    width, so that the two sides agree), modulo the number of parts."""
    column = F.col(query_id)
    if isinstance(frame.schema[query_id].dataType, IntegralType):
        column = column.cast("long")
    return F.pmod(F.xxhash64(column), F.lit(count))


def _partitions(spark: SparkSession, partitions: int | None) -> int:
    if partitions is None:
        return int(spark.conf.get("spark.sql.shuffle.partitions") or 200)
    if isinstance(partitions, bool) or not isinstance(partitions, int) or partitions < 1:
        raise InvalidValueError(
            f"partitions must be a positive integer or None, got {partitions!r}"
        )
    return partitions


def _collect(
    name: str, frame: DataFrame, columns: tuple[str, ...], distinct: bool = False
) -> pa.Table:
    """A side table (``groups=``, ``target=``, the history) on the driver, as Arrow:
    ``columns`` only (every one when empty), their distinct rows with ``distinct`` (the
    catalogue)."""
    if columns:
        frame = frame.select(*columns)
    if distinct:
        frame = frame.distinct()
    return frame.toArrow()


def _arrow_values(job: Job) -> pa.Schema:
    names = _spark_schema(job.per_query_schema, job.keys).names
    return _renamed(arrow_schema(job.per_query_schema), names)


def _spark_schema(schema: pl.Schema, keys: tuple[str, ...]) -> StructType:
    """``schema`` in Spark, its columns other than ``keys`` renamed ``__irm_c0``, ...:
    pyspark resolves a column by name inside its Arrow functions, where a metric label
    such as ``iprec@0.2`` would read as a nested field. The labels come back at the end.
    """
    arrow = arrow_schema(schema)
    names = [n if n in keys else f"{INTERNAL}c{i}" for i, n in enumerate(arrow.names)]
    return from_arrow_schema(_renamed(arrow, names))


def _renamed(schema: pa.Schema, names: list[str]) -> pa.Schema:
    return pa.schema(field.with_name(name) for field, name in zip(schema, names, strict=True))


def _ensure_frame(frame: object, name: str) -> None:
    if not isinstance(frame, DataFrame):
        raise ColumnTypeError(
            f"{name} must be a Spark DataFrame, got {type(frame).__name__}; for polars "
            "frames use polars_irmetrics.evaluate, or convert, e.g. "
            f"spark.createDataFrame(...){_unsigned_fix(frame)}"
        )


def _unsigned_fix(frame: object) -> str:
    """The cast a polars frame's UInt64 column needs before it becomes a Spark frame
    (empty for other frames): Spark has no unsigned 64-bit integer, so Arrow's
    conversion refuses the column and pandas' turns an id above 2**63 into a null, where
    one machine matches UInt64 ids beside Int64 ones as Int128.

    >>> _unsigned_fix(pl.DataFrame({"doc_id": [2**63]}, schema={"doc_id": pl.UInt64}))
    "; column 'doc_id' is UInt64, which Spark has no type for ..."
    """
    if not isinstance(frame, pl.DataFrame | pl.LazyFrame):
        return ""
    schema = frame.collect_schema()
    wide = [c for c, dtype in schema.items() if dtype == pl.UInt64()]
    if not wide:
        return ""
    return (
        f"; column {wide[0]!r} is UInt64, which Spark has no type for (Arrow's conversion "
        "refuses it, pandas' turns an id above 2**63 into a null): cast it first in "
        "every table, to Int64 where every id is below 2**63 "
        f"(pl.col({wide[0]!r}).cast(pl.Int64)), else to strings "
        f"(pl.col({wide[0]!r}).cast(pl.String))"
    )
