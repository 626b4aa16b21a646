"""Off-policy estimators on Spark (:mod:`polars_irmetrics.engines._ope`).

The log, the policy and the reward model (in one frame: each table's columns renamed,
a side flag) are ``repartition``-ed on the part number of each row's round (the
engine's ``pmod(xxhash64(round_id), partitions)``), and ``mapInArrow`` hands each
partition to one Python task, which gives its exact sums per ``by`` group, computed at
the call (and once more where the sums need other scales than 1: weights all tiny or
all huge, :func:`~polars_irmetrics.engines._ope.rescaled_job`); the sums go to
one partition, where one task merges them into the result (``per_query=True``: each
``by`` group's mean weight, computed at the call and broadcast to a second
``mapInArrow`` over the same partitions, which gives each partition's rows). The rewards' scale
(:mod:`polars_irmetrics.ope.scale`) is found first, at the call: one ``mapInArrow`` over
the log's reward column gives each partition's largest magnitude. The
distinct actions (and positions) of the log and the policy are gathered on the driver
for the support warning, given once the result is computed (a log the tasks refuse
warns of nothing, as on one machine). :mod:`polars_irmetrics.engines.spark` computes the result at
the call, as for the other metrics, and passes its own part number and schema functions
(this module does not import it: it imports this one).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Iterable, Iterator

import polars as pl
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F  # noqa: N812 (Spark's own spelling)
from pyspark.sql.types import StructType

from polars_irmetrics.engines._ope import (
    PEAK_SCHEMA,
    PROB,
    ROUND_KEY,
    OpeJob,
    keyed_rounds,
    lacks_rounds,
    ope_part,
    ope_peak,
    ope_rows,
    ope_summary,
    prepare_ope,
    rescaled_job,
    round_schema,
    scaled_job,
    slots,
    spelt_rounds,
    taken_schema,
    taken_slots,
    warn_groups,
    warn_slates,
    warn_support,
    warn_unshrunk_result,
)
from polars_irmetrics.engines._partition import (
    PART,
    Withheld,
    arrow_schema,
    as_polars_frame,
)
from polars_irmetrics.engines._spark_arrow import arrow_of
from polars_irmetrics.engines._spark_pairs import PartOf, carrying
from polars_irmetrics.errors import InvalidValueError, SupportWarning
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import INTERNAL
from polars_irmetrics.ope.checks import slate_columns

__all__ = ["ope_frame"]

#: ``(schema, keys) -> Spark schema`` with the non-key columns renamed (the engine's).
SparkSchema = Callable[[pl.Schema, tuple[str, ...]], StructType]

_SIDE = f"{INTERNAL}side"
_NAMES = ("log", "policy", "reward_model")


def ope_frame(
    log: DataFrame,
    metrics: Iterable[str],
    *,
    policy: DataFrame,
    reward_model: DataFrame | None,
    count: int,
    options: EvalOptions,
    part: PartOf,
    spark_schema: SparkSchema,
    gather: Callable[[DataFrame], DataFrame],
) -> tuple[DataFrame, Callable[[], None], Callable[[DataFrame], None]]:
    """:func:`polars_irmetrics.spark.evaluate`'s result for the off-policy estimators,
    not yet computed (module doc), and the function that gives the support warnings,
    counted now, once it is (a log the parts or the merge refuse warns of nothing, as
    on one machine). ``gather`` computes a frame now (the engine's, raising a task's
    library error as ours): the first pass of ``per_query=True``; and the function that
    gives the warning of a ``dr_os(lambda=0)`` estimate that is NaN, from the computed
    means (:func:`warn_unshrunk_result`)."""
    job = prepare_ope(
        arrow_of(log),
        arrow_of(policy),
        None if reward_model is None else arrow_of(reward_model),
        metrics,
        options,
    )
    job = _scaled(job, log, spark_schema, gather)
    said = Withheld(SupportWarning)

    def support() -> None:
        _warn(job, log, policy, spark_schema)
        _warn_slates(job, log, policy)

    said.count(support)
    frames = [log, policy, reward_model]
    round_id = job.options.round_id
    renamed = [
        {c: f"{INTERNAL}t{side}_{c}" for c in frame.columns} if frame is not None else {}
        for side, frame in enumerate(frames)
    ]
    # a side table's row of a null round (or position) goes to the part of the log's
    # first row, whose checks refuse it (a part without a log row has none to carry it)
    first = log.select(part(log, round_id, count).alias(PART)).limit(1).collect()
    home = int(first[0][PART]) if first else None
    both: DataFrame | None = None
    for side, frame in enumerate(frames):
        if frame is None:
            continue
        number = part(frame, round_id, count)
        if side and home is not None:
            ids = [c for c in (round_id, job.options.position) if c in frame.columns]
            null = functools.reduce(operator.or_, [F.col(c).isNull() for c in ids])
            number = F.when(null, F.lit(home).cast("long")).otherwise(number)
        tagged = frame.select(
            *(F.col(c).alias(n) for c, n in renamed[side].items()),
            number.alias(PART),
            F.lit(side).alias(_SIDE),
        )
        both = tagged if both is None else both.unionByName(tagged, allowMissingColumns=True)
    if both is None:  # the log is always there: evaluate() takes it first
        raise InvalidValueError("the off-policy estimators read a log: pass it as the table")
    parts_schema = spark_schema(job.part_schema, job.by)
    inner = parts_schema.names

    def sides(batches: list[pa.RecordBatch]) -> list[pa.Table | None]:
        """The partition's rows of each of the three tables."""
        frame = as_polars_frame(pa.Table.from_batches(batches))
        tables: list[pa.Table | None] = []
        for side, names in enumerate(renamed):
            kept = frame.filter(pl.col(_SIDE) == side)
            tables.append(
                kept.select(pl.col(n).alias(c) for c, n in names.items()).to_arrow()
                if names
                else None
            )
        return tables

    def sums_of(job: OpeJob) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
        def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            found = list(batches)
            if not found:  # no round in this partition
                return
            sums = carrying(ope_part, job, *sides(found))
            yield from sums.rename_columns(inner).to_batches()

        return task

    shuffled = both.repartition(count, PART)
    names = list(job.part_schema)
    # the parts' sums, now: read again where the whole log's sums need other scales
    # than 1 (weights all tiny or all huge), the shuffle's files read again
    parts = gather(shuffled.mapInArrow(sums_of(job), parts_schema))
    first = parts.toArrow().rename_columns(names)
    if lacks_rounds(job, first):  # refused: the hint of round ids spelt apart, if any
        job = _spelt(job, log, policy, spark_schema, gather)
    if reward_model is not None and lacks_rounds(job, first, "reward_model="):
        job = _spelt(job, log, reward_model, spark_schema, gather, "reward_model=")
    said.count(lambda: warn_groups(job, first))  # by groups the policy supports none of
    again = rescaled_job(job, first)
    if again is not None:
        job = again
        parts = gather(shuffled.mapInArrow(sums_of(job), parts_schema))
    merged_schema = spark_schema(job.merged_schema, job.by)
    statistics = pa.schema(
        field.with_name(name)
        for field, name in zip(arrow_schema(job.part_schema), inner, strict=True)
    )

    def everything(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        table = pa.Table.from_batches(list(batches), schema=statistics).rename_columns(names)
        merged = carrying(ope_summary, job, table)
        yield from merged.rename_columns(merged_schema.names).to_batches()

    # one partition holds every part's sums: one row per by group, even for none
    merged = parts.repartition(1).mapInArrow(everything, merged_schema).toDF(*job.merged_schema)

    def unshrunk(computed: DataFrame) -> None:
        warn_unshrunk_result(job, computed.toArrow())

    if not job.options.per_query:
        return merged, said.give, unshrunk
    # per_query: the first pass (each by group's mean weight, the whole log's checks)
    # runs now; its few rows are broadcast to the second, each partition's rows
    weights = gather(merged).toArrow()  # Arrow as every route reads (no pandas' warnings)
    result_schema = spark_schema(job.result_schema, job.by)

    def rows(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        found = list(batches)
        if not found:  # no round in this partition
            return
        table = carrying(ope_rows, job, weights, *sides(found))
        yield from table.rename_columns(result_schema.names).to_batches()

    return shuffled.mapInArrow(rows, result_schema).toDF(*job.result_schema), said.give, unshrunk


def _scaled(
    job: OpeJob,
    log: DataFrame,
    spark_schema: SparkSchema,
    gather: Callable[[DataFrame], DataFrame],
) -> OpeJob:
    """``job`` with the rewards' scale of the whole log (:func:`scaled_job`): each
    partition's largest reward magnitude (:func:`ope_peak`, one Python task per
    partition of the log's reward column), computed now."""
    rewards = log.select(job.options.reward)
    schema = arrow_of(rewards)
    found = spark_schema(PEAK_SCHEMA, ())

    def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        table = pa.Table.from_batches(list(batches), schema=schema)
        yield from carrying(ope_peak, job, table).rename_columns(found.names).to_batches()

    table = gather(rewards.mapInArrow(task, found)).toArrow()
    return scaled_job(job, table.rename_columns(list(PEAK_SCHEMA)))


def _spelt(
    job: OpeJob,
    log: DataFrame,
    policy: DataFrame,
    spark_schema: SparkSchema,
    gather: Callable[[DataFrame], DataFrame],
    table: str = "policy=",
) -> OpeJob:
    """``job`` with the hint of round ids spelt apart (:func:`spelt_rounds`), where the
    first pass counts logged rounds the policy lacks: the log's distinct rounds the
    policy lacks and the policy's distinct rounds, each keyed by one Python task per
    partition (:func:`keyed_rounds`), and only those of a key the other side has
    gathered on the driver (``table="reward_model="``: the reward model's, where logged
    rows lack a q_hat)."""
    round_id = job.options.round_id
    theirs = policy.select(round_id).distinct()
    missing = log.select(round_id).distinct().join(theirs, on=round_id, how="left_anti")
    found = spark_schema(round_schema(round_id), ())

    def keyed(frame: DataFrame) -> DataFrame:
        schema = arrow_of(frame)

        def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            table = pa.Table.from_batches(list(batches), schema=schema)
            yield from carrying(keyed_rounds, job, table).rename_columns(found.names).to_batches()

        return frame.mapInArrow(task, found).toDF(round_id, ROUND_KEY)

    left, right = keyed(missing), keyed(theirs)
    ours = left.join(right.select(ROUND_KEY).distinct(), on=ROUND_KEY, how="left_semi")
    other = right.join(left.select(ROUND_KEY).distinct(), on=ROUND_KEY, how="left_semi")
    lacked, taken = (gather(frame.select(round_id)).toArrow() for frame in (ours, other))
    return spelt_rounds(job, lacked, taken, table)


def _warn(job: OpeJob, log: DataFrame, policy: DataFrame, spark_schema: SparkSchema) -> None:
    """The support warning, from the distinct actions of the whole log and policy (the
    few the log never shows looked up in the logged rounds: :func:`warn_support`)."""
    log_slots, policy_slots = slots(job)
    if not log_slots:
        return
    if job.listed:  # each partition's positive items of the lists, by one Python task
        schema = arrow_of(policy)

        def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            table = pa.Table.from_batches(list(batches), schema=schema)
            yield from carrying(taken_slots, job, table).rename_columns(found.names).to_batches()

        found = spark_schema(taken_schema(job), ())
        taken = policy.mapInArrow(task, found).toDF(*policy_slots).distinct()
    else:
        taken = policy.filter(F.col(PROB) > 0).select(*log_slots, F.lit(1.0)).distinct()
    shown = log.select(*log_slots).distinct()
    round_id = job.options.round_id

    def with_rounds() -> DataFrame:
        """The policy's round and slot wherever it puts mass."""
        if not job.listed:
            return policy.filter(F.col(PROB) > 0).select(round_id, *log_slots)
        schema = arrow_of(policy)
        found = spark_schema(taken_schema(job, rounds=True), ())

        def task(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            table = pa.Table.from_batches(list(batches), schema=schema)
            taken = carrying(_taken_in_rounds, job, table)
            yield from taken.rename_columns(found.names).to_batches()

        return policy.mapInArrow(task, found).toDF(round_id, *policy_slots)

    def in_logged_rounds(candidates: pl.DataFrame) -> pl.DataFrame:
        """The candidates the policy takes in a round the log has: their rows, the
        log's rounds among theirs (both sides small but the log's scan)."""
        wanted = F.broadcast(log.sparkSession.createDataFrame(candidates.to_arrow()))
        rows = with_rounds().join(wanted, on=log_slots, how="left_semi")
        rounds = F.broadcast(rows.select(round_id).distinct())
        logged = log.select(round_id).join(rounds, on=round_id, how="left_semi").distinct()
        found = rows.join(F.broadcast(logged), on=round_id, how="left_semi")
        taken = found.select(*log_slots).distinct().collect()
        return pl.DataFrame([tuple(r) for r in taken], schema=log_slots, orient="row")

    warn_support(
        job,
        pl.DataFrame([tuple(r) for r in shown.collect()], schema=log_slots, orient="row"),
        pl.DataFrame([tuple(r) for r in taken.collect()], schema=policy_slots, orient="row"),
        in_logged_rounds,
    )


def _warn_slates(job: OpeJob, log: DataFrame, policy: DataFrame) -> None:
    """The slate estimators' support warning: the slots of logged rounds' slates the
    policy puts mass on and the log never shows, counted by one job (the distinct slots
    of both tables; nothing but the count and the least of them comes back)."""
    columns = slate_columns(job.requests)
    if not columns:
        return
    round_id, position = job.options.round_id, job.options.position
    keys = [round_id, position]
    mass = functools.reduce(operator.or_, [F.col(c).cast("double") > 0 for c in columns])
    taken = policy.filter(mass).select(*keys).distinct()
    unsupported = taken.join(log.select(*keys).distinct(), on=keys, how="left_anti").join(
        log.select(round_id).distinct(), on=round_id, how="left_semi"
    )
    example = F.format_string(f"{round_id}=%s, {position}=%s", *(F.col(k) for k in keys))
    found = unsupported.agg(F.count(F.lit(1)), F.min(example)).first()
    if found is not None:
        warn_slates(int(found[0]), found[1])


def _taken_in_rounds(job: OpeJob, policy: pa.Table) -> pa.Table:
    return taken_slots(job, policy, rounds=True)
