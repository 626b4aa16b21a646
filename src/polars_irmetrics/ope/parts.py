"""Off-policy estimates over a log split into parts: out of core (``buckets=``), and the
hook the Spark and Dask engines call (:mod:`polars_irmetrics.engines._ope`).

Every row of a round (in the log, the policy and the reward model) goes to one part, by
a hash of ``round_id`` (integers hashed as Int64, text as String, so that the tables
agree whatever their integer widths). Each part gives one row per ``by`` group of exact
sums (:func:`part_sums`; :mod:`polars_irmetrics.ope.sums`), the sums of every part are
added and the estimates computed from them (:func:`merge_sums`): the same numbers, to
the last bit, as :func:`polars_irmetrics.evaluate` in one plan, whatever the number of
parts. The data checks run in each part and are raised by the merge, with the counts
of the whole log and the least failing round; the support warning
(:class:`~polars_irmetrics.errors.SupportWarning`) reads the distinct actions of the
whole log and policy.

``buckets=N`` or ``"auto"`` (one bucket per
:data:`~polars_irmetrics.ground.buckets.ROWS_PER_BUCKET`
rows of the largest table, usually the policy's: rounds x actions): when the result is
collected, one streaming pass writes each table to Parquet in N buckets by round, then
the buckets are evaluated one after the other; peak memory is about one bucket's.
``buckets="auto-memory"`` (the default) evaluates in one plan. Not with
``per_query=True`` (as large as the log) nor ``ci=`` (the bootstrap ranks the rounds
of a whole group): both are refused, naming the fix.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from polars_irmetrics.errors import InvalidValueError
from polars_irmetrics.ground.buckets import (
    bucket_count,
    check_spill_dir,
    keep_spill_cleanup,
    read_bucket,
    sink_buckets,
    spilling,
)
from polars_irmetrics.ground.halves import int128_halves, int128_whole
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.progress import track
from polars_irmetrics.metrics.ope import CASCADE_METRICS, SLATE_COLUMNS
from polars_irmetrics.metrics.registry import MetricRequest
from polars_irmetrics.ope.evaluate import (
    build_ope_parts,
    build_ope_plan,
    warn_unsupported,
)

__all__ = [
    "OpeTables",
    "check_split",
    "from_transport",
    "in_buckets",
    "merge_sums",
    "ope_in_buckets",
    "part_key",
    "part_sums",
    "reads_support",
    "to_transport",
    "warned",
]

Requests = Sequence[tuple[str, MetricRequest]]

_SEED = 0x0BE5
#: Int128 columns travel as two Int64 halves (Arrow, Spark and pandas have no Int128).
to_transport, from_transport = int128_halves, int128_whole


@dataclass(frozen=True)
class OpeTables:
    """The three tables of an off-policy evaluation (one part of each, or the whole)."""

    log: pl.LazyFrame
    policy: pl.LazyFrame
    reward_model: pl.LazyFrame | None


def check_split(options: EvalOptions, where: str) -> None:
    """Refuse the options a split log cannot give as one plan does, naming the fix:
    ``per_query=True`` and ``ci=``.

    Examples
    --------
    >>> check_split(EvalOptions(ci=0.95), "buckets=4")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: ci= is not available for the off-policy ...
    """
    if options.per_query:
        raise InvalidValueError(
            f"per_query=True is not available for the off-policy estimators with {where}: "
            "it gives one row per log row, as large as the log; evaluate it in one plan "
            "(irm.evaluate with buckets=None, which a LazyFrame streams to a sink), or ask "
            "for the means"
        )
    if options.ci is not None:
        raise InvalidValueError(
            f"ci= is not available for the off-policy estimators with {where}: the "
            "bootstrap and the normal interval read every round of a by group at once; "
            "compute the intervals in one plan (irm.evaluate with buckets=None), or drop ci="
        )


def in_buckets(options: EvalOptions) -> bool:
    """Whether ``buckets=`` asks for out of core (a number or ``"auto"``); a
    ``spill_dir`` without is refused (the one plan writes no bucket).

    Examples
    --------
    >>> in_buckets(EvalOptions(buckets="auto-memory")), in_buckets(EvalOptions(buckets=4))
    (False, True)
    """
    split = options.buckets is not None and options.buckets != "auto-memory"
    if options.spill_dir is not None and not split:
        raise InvalidValueError(
            f"spill_dir={str(options.spill_dir)!r} is the folder of the out-of-core buckets, "
            "and the off-policy estimators evaluate in one plan unless buckets= is a number "
            "or 'auto': pass buckets=, or drop spill_dir="
        )
    return split


def part_key(schema: pl.Schema, round_id: str, count: int) -> pl.Expr:
    """The part (``0..count-1``) of each row: a hash of its round, integers as Int64 and
    text as String (the same part in every table)."""
    dtype = pl.Int64 if schema[round_id].is_integer() else pl.String
    return pl.col(round_id).cast(dtype).hash(seed=_SEED) % count


def part_sums(tables: OpeTables, requests: Requests, options: EvalOptions) -> pl.LazyFrame:
    """One part's exact sums, one row per ``by`` group (every round of the part whole in
    its tables), its Int128 columns as halves (:func:`to_transport`)."""
    plan = build_ope_parts(tables.log, requests, tables.policy, tables.reward_model, options)
    return to_transport(plan.frame)


def merge_sums(
    sums: pl.LazyFrame,
    tables: OpeTables,
    requests: Requests,
    options: EvalOptions,
    *,
    warn: bool = True,
) -> pl.LazyFrame:
    """The result of :func:`polars_irmetrics.evaluate` from the sums of every part
    (:func:`part_sums`); ``tables`` give the schemas (empty frames will do) and, with
    ``warn``, the distinct actions of the log and policy for the support warning
    (:func:`warned`)."""
    plan = build_ope_parts(tables.log, requests, tables.policy, tables.reward_model, options)
    merged = plan.merge(from_transport(sums), options)
    return warned(merged, tables, requests, options) if warn else merged


def warned(
    result: pl.LazyFrame, tables: OpeTables, requests: Requests, options: EvalOptions
) -> pl.LazyFrame:
    """``result``, warning when it is collected as the one plan does if the policy of
    ``tables`` takes an action (at a position) its log never shows (single-action
    estimators; :class:`~polars_irmetrics.errors.SupportWarning`). The tables may hold
    only the distinct actions (and positions), with ``prob`` for the policy's."""
    single = reads_support(requests)
    return warn_unsupported(result, tables.log, tables.policy, options) if single else result


def reads_support(requests: Requests) -> bool:
    """Whether the support warning applies: single-action estimators (the slate and
    cascade ones read the logged slates' propensities, not a choice among actions).

    Examples
    --------
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> reads_support(parse_metric_list(["ips"])), reads_support(parse_metric_list(["slate_ips"]))
    (True, False)
    """
    return not any(
        r.metric.name in SLATE_COLUMNS or r.metric.name in CASCADE_METRICS for _, r in requests
    )


def ope_in_buckets(tables: OpeTables, requests: Requests, options: EvalOptions) -> pl.LazyFrame:
    """:func:`polars_irmetrics.evaluate`'s result, out of core (module doc); nothing runs
    until it is collected. ``spill_dir`` is checked now."""
    check_split(options, f"buckets={options.buckets!r}")
    check_spill_dir(options.spill_dir)
    # the one plan, built for its checks of the schemas and its result's schema
    schema = build_ope_plan(
        tables.log, requests, tables.policy, tables.reward_model, options
    ).collect_schema()
    keep_spill_cleanup()
    named = {"log": tables.log, "policy": tables.policy}
    if tables.reward_model is not None:
        named["reward_model"] = tables.reward_model
    schemas = {name: frame.collect_schema() for name, frame in named.items()}
    buckets = options.buckets

    def run() -> pl.DataFrame:
        if isinstance(buckets, int):
            count = buckets
        else:
            count = max(bucket_count(frame, "auto") for frame in named.values())
        with spilling(options.spill_dir) as folder:
            for name, frame in named.items():  # one table after the other
                key = part_key(schemas[name], options.round_id, count)
                sink_buckets(frame, key, Path(folder) / name)

            def side(name: str, bucket: int) -> pl.LazyFrame:
                return read_bucket(Path(folder) / name, bucket, schemas[name])

            sums = [
                part_sums(
                    OpeTables(
                        side("log", b),
                        side("policy", b),
                        side("reward_model", b) if "reward_model" in named else None,
                    ),
                    requests,
                    options,
                ).collect()
                for b in track(range(count), "buckets", count, enabled=options.progress)
            ]
            return merge_sums(pl.concat(sums).lazy(), tables, requests, options).collect()

    return pl.defer(run, schema=schema)
