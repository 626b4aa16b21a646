"""Off-policy estimators on Dask (:mod:`polars_irmetrics.engines._ope`).

The log, the policy and the reward model get each row's part number (the engine's
polars hash of its ``round_id``) and are shuffled on it into ``partitions`` partitions;
each partition (with the same partitions of the other tables) gives its exact sums per
``by`` group (``map_partitions``, computed at the call, and once more where the sums need
other scales than 1: weights all tiny or all huge,
:func:`~polars_irmetrics.engines._ope.rescaled_job`), which are gathered in one
partition and merged
(``per_query=True``: each group's mean weight, computed at the call and broadcast to a
second ``map_partitions`` that gives each partition's rows). The rewards' scale
(:mod:`polars_irmetrics.ope.scale`) is found first, at the call: each partition's
largest reward magnitude, from the log's reward column. The
distinct actions (and positions) of the log and the policy are computed at the call
for the support warning, which the merge's task gives once it has its values (a log
refused by a part or by the merge warns of nothing, as on one machine).
:mod:`polars_irmetrics.engines.dask` passes its own part numbering (this module does
not import it: it imports this one).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Iterable

import dask.dataframe as dd
import pandas as pd
import polars as pl
import pyarrow as pa

from polars_irmetrics.engines._dask_coverage import emitter
from polars_irmetrics.engines._dask_frames import arrow_of, meta, to_pandas, to_table
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
)
from polars_irmetrics.engines._partition import PART, Withheld, as_polars_frame, give_warnings
from polars_irmetrics.errors import IrmWarning, SupportWarning
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ope.checks import slate_columns

__all__ = ["ope_frame"]

#: ``(partition, round_id, count) -> partition with its part column`` (the engine's).
Tag = Callable[[pd.DataFrame, str, int], pd.DataFrame]


def ope_frame(
    log: dd.DataFrame,
    metrics: Iterable[str],
    *,
    policy: dd.DataFrame,
    reward_model: dd.DataFrame | None,
    count: int,
    options: EvalOptions,
    tag: Tag,
) -> dd.DataFrame:
    """:func:`polars_irmetrics.dask.evaluate`'s result for the off-policy estimators
    (module doc): the parts' sums are computed now (the driver reads their scales, and
    the support warning of ``by`` groups), the merge is lazy; the support warnings are
    counted now and given by the merge's task once it has its values."""
    job = prepare_ope(
        arrow_of(log),
        arrow_of(policy),
        None if reward_model is None else arrow_of(reward_model),
        metrics,
        options,
    )
    job = _scaled(job, log)
    # the support warnings, counted now and given by the merge's task once it has its
    # values (a log the parts or the merge refuse warns of nothing, as on one machine)
    said = Withheld(SupportWarning)

    def support() -> None:
        _warn(job, log, policy)
        _warn_slates(job, log, policy)

    said.count(support)
    round_id = job.options.round_id
    # a side table's row of a null round (or position) goes to the part of the log's
    # first row, whose checks refuse it (a part without a log row has none to carry it)
    side = _side_tag(tag, _home(log, round_id, count, tag), job.options)
    frames = [_shuffled(log, round_id, count, tag), _shuffled(policy, round_id, count, side)]
    if reward_model is not None:
        frames.append(_shuffled(reward_model, round_id, count, side))
    sums = _sums(frames, job)
    # the parts' sums, now: read again where the whole log's sums need other scales
    # than 1 (weights all tiny or all huge)
    first = sums.compute()
    if lacks_rounds(job, to_table(first)):  # refused: the hint of round ids spelt apart
        job = _spelt(job, log, policy)
    if reward_model is not None and lacks_rounds(job, to_table(first), "reward_model="):
        job = _spelt(job, log, reward_model, "reward_model=")  # alike: no q_hat
    said.count(lambda: warn_groups(job, to_table(first)))  # by groups none supported
    again = rescaled_job(job, to_table(first))
    if again is None:
        sums = dd.from_pandas(first, npartitions=1)
    else:
        job = again
        sums = _sums(frames, job)
    merged = sums.repartition(npartitions=1).map_partitions(
        _summarize, job, tuple(said.texts), meta=meta(job.merged_schema), enforce_metadata=False
    )
    if not job.options.per_query:
        return merged
    # per_query: the first pass (each by group's mean weight, the whole log's checks)
    # runs now; its few rows are broadcast to the second, each part's rows
    weights = to_table(merged.compute())
    return dd.map_partitions(
        _rows,
        *frames,
        job=job,
        weights=weights,
        meta=meta(job.result_schema),
        enforce_metadata=False,
        align_dataframes=False,
    )


def _sums(frames: list[dd.DataFrame], job: OpeJob) -> dd.DataFrame:
    """Each part's exact sums (:func:`_part`), not yet computed."""
    return dd.map_partitions(
        _part,
        *frames,
        job=job,
        meta=meta(job.part_schema),
        enforce_metadata=False,
        align_dataframes=False,
    )


def _shuffled(frame: dd.DataFrame, round_id: str, count: int, tag: Tag) -> dd.DataFrame:
    """``frame`` with its part column, shuffled on it into ``count`` partitions."""
    tagged_meta = frame._meta.assign(**{PART: pd.Series([], dtype="int64")})
    tagged = frame.map_partitions(tag, round_id, count, meta=tagged_meta)
    # distributed's P2P shuffle does not take Arrow list columns (obp's shape): the
    # task-based shuffle does
    method = "tasks" if _has_lists(frame) else None
    return tagged.shuffle(on=PART, npartitions=count, ignore_index=True, shuffle_method=method)


def _home(log: dd.DataFrame, round_id: str, count: int, tag: Tag) -> int | None:
    """The part of the log's first row (``None``: an empty log); one row read."""
    first = log[[round_id]].head(1, npartitions=-1, compute=True)
    if not len(first):
        return None
    return int(tag(first, round_id, count)[PART].iloc[0])


def _side_tag(tag: Tag, home: int | None, options: EvalOptions) -> Tag:
    """``tag`` for the policy and the reward model: a row whose round (or position) is
    null tagged ``home`` (:func:`_home`)."""

    def side(frame: pd.DataFrame, round_id: str, count: int) -> pd.DataFrame:
        tagged = tag(frame, round_id, count)
        ids = [c for c in (round_id, options.position) if c in frame.columns]
        if home is None:
            return tagged
        null = frame[ids].isna().any(axis=1).to_numpy()
        return tagged.assign(**{PART: tagged[PART].where(~null, home).astype("int64")})

    return side


def _has_lists(frame: dd.DataFrame) -> bool:
    """Whether ``frame`` has an Arrow list column (``pd.ArrowDtype`` of a list type)."""
    schema = arrow_of(frame)
    kinds = (pa.types.is_list, pa.types.is_large_list, pa.types.is_fixed_size_list)
    return any(kind(t) for t in schema.types for kind in kinds)


def _part(
    log: pd.DataFrame,
    policy: pd.DataFrame,
    reward_model: pd.DataFrame | None = None,
    *,
    job: OpeJob,
) -> pd.DataFrame:
    model = None if reward_model is None else to_table(reward_model)
    return to_pandas(ope_part(job, to_table(log), to_table(policy), model))


def _rows(
    log: pd.DataFrame,
    policy: pd.DataFrame,
    reward_model: pd.DataFrame | None = None,
    *,
    job: OpeJob,
    weights: pa.Table,
) -> pd.DataFrame:
    model = None if reward_model is None else to_table(reward_model)
    return to_pandas(ope_rows(job, weights, to_table(log), to_table(policy), model))


def _summarize(
    sums: pd.DataFrame, job: OpeJob, said: tuple[tuple[str, type[Warning]], ...]
) -> pd.DataFrame:
    """The merged values of every part's sums; then the support warnings counted at the
    call (``said``), and the merge's own after them, from this task (a merge that
    refuses the log gives none)."""
    merged: list[pa.Table] = []
    own = Withheld(IrmWarning)
    own.count(lambda: merged.append(ope_summary(job, to_table(sums))))
    give_warnings((*said, *own.texts), emitter())
    return to_pandas(merged[0])


def _spelt(job: OpeJob, log: dd.DataFrame, policy: dd.DataFrame, table: str = "policy=") -> OpeJob:
    """``job`` with the hint of round ids spelt apart (:func:`spelt_rounds`), where the
    first pass counts logged rounds the policy lacks: the log's distinct rounds the
    policy lacks and the policy's distinct rounds, each partition keyed
    (:func:`keyed_rounds`), and only those of a key the other side has computed now
    (``table="reward_model="``: the reward model's, where logged rows lack a q_hat)."""
    round_id = job.options.round_id
    theirs = policy[[round_id]].drop_duplicates()
    both = log[[round_id]].drop_duplicates().merge(theirs, on=round_id, how="left", indicator=True)
    missing = both[both["_merge"] == "left_only"][[round_id]]
    found = meta(round_schema(round_id))
    left, right = (
        frame.map_partitions(_keyed, job, meta=found, enforce_metadata=False)
        for frame in (missing, theirs)
    )
    ours = left.merge(right[[ROUND_KEY]].drop_duplicates(), on=ROUND_KEY)[[round_id]]
    other = right.merge(left[[ROUND_KEY]].drop_duplicates(), on=ROUND_KEY)[[round_id]]
    ours_frame, other_frame = dd.compute(ours, other)
    return spelt_rounds(job, to_table(ours_frame), to_table(other_frame), table)


def _keyed(rounds: pd.DataFrame, job: OpeJob) -> pd.DataFrame:
    return to_pandas(keyed_rounds(job, to_table(rounds)))


def _scaled(job: OpeJob, log: dd.DataFrame) -> OpeJob:
    """``job`` with the rewards' scale of the whole log (:func:`scaled_job`): each
    partition's largest reward magnitude (:func:`ope_peak`), computed now."""
    rewards = log[[job.options.reward]]
    peaks = rewards.map_partitions(_peak, job, meta=meta(PEAK_SCHEMA), enforce_metadata=False)
    return scaled_job(job, to_table(peaks.compute()))


def _peak(rewards: pd.DataFrame, job: OpeJob) -> pd.DataFrame:
    return to_pandas(ope_peak(job, to_table(rewards)))


def _taken(policy: pd.DataFrame, job: OpeJob) -> pd.DataFrame:
    return to_pandas(taken_slots(job, to_table(policy)))


def _warn_slates(job: OpeJob, log: dd.DataFrame, policy: dd.DataFrame) -> None:
    """The slate estimators' support warning: the slots of logged rounds' slates the
    policy puts mass on and the log never shows, counted at the call (the distinct
    slots of both tables; only the count and the least of them come back)."""
    columns = slate_columns(job.requests)
    if not columns:
        return
    round_id, position = job.options.round_id, job.options.position
    keys = [round_id, position]
    mass = functools.reduce(operator.or_, [policy[c].astype("float64") > 0 for c in columns])
    taken = policy[mass][keys].drop_duplicates()
    both = taken.merge(log[keys].drop_duplicates(), on=keys, how="left", indicator=True)
    unsupported = both[both["_merge"] == "left_only"][keys]
    unsupported = unsupported.merge(log[[round_id]].drop_duplicates(), on=round_id)
    text = (
        f"{round_id}="
        + unsupported[round_id].astype(str)
        + f", {position}="
        + unsupported[position].astype(str)
    )
    count, least = dd.compute(unsupported.shape[0], text.min())
    warn_slates(int(count), None if pd.isna(least) else str(least))


def _taken_in_rounds(policy: pd.DataFrame, job: OpeJob) -> pd.DataFrame:
    return to_pandas(taken_slots(job, to_table(policy), rounds=True))


def _warn(job: OpeJob, log: dd.DataFrame, policy: dd.DataFrame) -> None:
    """The support warning, from the distinct actions of the whole log and policy."""
    log_slots = slots(job)[0]
    if not log_slots:
        return
    shown = log[log_slots].drop_duplicates()
    if job.listed:  # each partition's positive items of the lists
        found = meta(taken_schema(job))
        taken = policy.map_partitions(_taken, job, meta=found, enforce_metadata=False)
        taken = taken[log_slots].drop_duplicates()
    else:
        taken = policy[policy[PROB] > 0][log_slots].drop_duplicates()
    shown_frame, taken_frame = dd.compute(shown, taken)
    round_id = job.options.round_id

    def in_logged_rounds(candidates: pl.DataFrame) -> pl.DataFrame:
        """The candidates the policy takes in a round the log has: their rows, the
        log's rounds among theirs."""
        if job.listed:
            found = meta(taken_schema(job, rounds=True))
            rows = policy.map_partitions(_taken_in_rounds, job, meta=found, enforce_metadata=False)
        else:
            rows = policy[policy[PROB] > 0][[round_id, *log_slots]]
        wanted = to_pandas(candidates.to_arrow())
        rows = rows.merge(wanted.astype(rows._meta[log_slots].dtypes.to_dict()), on=log_slots)
        rounds = rows[[round_id]].drop_duplicates()
        logged = log[[round_id]].merge(rounds, on=round_id).drop_duplicates()
        taken = rows.merge(logged, on=round_id)[log_slots].drop_duplicates()
        return as_polars_frame(to_table(taken.compute()))

    warn_support(
        job,
        as_polars_frame(to_table(shown_frame)),
        as_polars_frame(to_table(taken_frame)).with_columns(pl.lit(1.0).alias(PROB)),
        in_logged_rounds,
    )
