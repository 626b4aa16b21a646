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
whole log and policy. The rewards' power-of-two scale (:mod:`polars_irmetrics.ope.scale`)
is the whole log's, found in a first pass over its rewards and given to every part.

``buckets=N`` or ``"auto"`` (one bucket per
:data:`~polars_irmetrics.ground.buckets.ROWS_PER_BUCKET`
rows of the largest table, usually the policy's: rounds x actions): when the result is
collected, one streaming pass writes each table to Parquet in N buckets by round, then
the buckets are evaluated one after the other; peak memory is about one bucket's.
``buckets="auto-memory"`` (the default) evaluates in one plan. ``ci=`` is made of exact
sums too: the normal interval (:mod:`polars_irmetrics.ope.normal`; over the rounds'
values for slates and ``cascade_dr``) and the bootstrap, whose buckets' exact sums each
part gives beside its sums (:mod:`polars_irmetrics.ope.intervals`,
:mod:`polars_irmetrics.ope.ratio_intervals`): the same bits. ``per_query=True`` takes
two passes over the buckets: the first merges each ``by`` group's mean weights (exact
sums, per position for the slate estimators normalised there, and the checks of the
whole log), the second gives each bucket's rows with them (:func:`part_rows`; a slate
or cascade round's value otherwise reads its own rows only).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import polars as pl

from polars_irmetrics.errors import InvalidValueError, SupportWarning
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
from polars_irmetrics.ground.validate import INTERNAL
from polars_irmetrics.metrics.ope import CASCADE_METRICS, SLATE_COLUMNS
from polars_irmetrics.metrics.registry import MetricRequest
from polars_irmetrics.ope.checks import slate_columns, warn_unshrunk, wide_id_dtype
from polars_irmetrics.ope.evaluate import (
    NUM_ROWS,
    WMAX,
    build_ope_parts,
    build_ope_plan,
    build_ope_rows,
    warn_unsupported,
    warn_unsupported_groups,
)
from polars_irmetrics.ope.rounds import NUM_ROUNDS, unweighted_warning
from polars_irmetrics.ope.scale import reward_peak, scale_from_peaks
from polars_irmetrics.ope.slates import slate_support_warning

__all__ = [
    "OpeTables",
    "from_transport",
    "in_buckets",
    "merge_sums",
    "ope_in_buckets",
    "part_key",
    "part_rows",
    "part_sums",
    "reads_support",
    "rescaled_peaks",
    "to_transport",
    "warn_unsupported_parts",
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


def part_key(schemas: Iterable[pl.Schema], round_id: str, count: int) -> pl.Expr:
    """The part (``0..count-1``) of each row: a hash of its round, read in the one dtype
    of every table's ``schemas`` (:func:`~polars_irmetrics.ope.checks.wide_id_dtype`:
    integers as Int64, or Int128 where one holds UInt64; text as String), so that a round
    has the same part in every table."""
    dtype = wide_id_dtype(schemas, round_id)
    if dtype is None:  # pragma: no cover - the log's schema check names the column
        raise InvalidValueError(f"no table holds the round column {round_id!r}")
    return pl.col(round_id).cast(dtype).hash(seed=_SEED) % count


def _key_dtype(key: pl.Expr, frame: pl.LazyFrame) -> pl.DataType:
    """The dtype of :func:`part_key`'s ``key`` over ``frame``."""
    return frame.select(key).collect_schema().dtypes()[0]


def part_sums(
    tables: OpeTables,
    requests: Requests,
    options: EvalOptions,
    scale: float | None = None,
    peaks: dict[str, float | None] | None = None,
) -> pl.LazyFrame:
    """One part's exact sums, one row per ``by`` group (every round of the part whole in
    its tables), its Int128 columns as halves (:func:`to_transport`). ``scale``: the
    rewards' scale of the whole log (:func:`~polars_irmetrics.ope.scale.scale_from_peaks`
    of every part's :func:`~polars_irmetrics.ope.scale.reward_peak`), the same for every
    part; ``None``: this part's own (a part that is the whole log). ``peaks``: the whole
    log's largest magnitude of each sum's terms (:func:`rescaled_peaks` of a first pass's
    parts, where they need other scales than 1); ``None``: every sum's scale 1."""
    options = _sums_options(options, requests)
    plan = build_ope_parts(
        tables.log, requests, tables.policy, tables.reward_model, options, scale, peaks
    )
    return to_transport(plan.frame)


def rescaled_peaks(
    sums: pl.DataFrame, tables: OpeTables, requests: Requests, options: EvalOptions
) -> dict[str, float | None] | None:
    """Whether the parts' sums (:func:`part_sums` of every part, stacked) are read
    again: the whole log's largest magnitude of each sum's terms, where the scales they
    give are not those the parts were read at (weights all tiny or all huge: a second
    pass, :func:`part_sums` with these ``peaks``); ``None``: the sums stand (the usual
    case, one pass). ``tables`` give the schemas (empty frames will do)."""
    options = _sums_options(options, requests)
    plan = build_ope_parts(tables.log, requests, tables.policy, tables.reward_model, options)
    return plan.summary.rescaled(sums)


def _sums_options(options: EvalOptions, requests: Requests) -> EvalOptions:
    """The options of the parts' sums: with ``per_query=True``, a slate or cascade
    estimate's rounds need no global sum, and the sums' pass is the means' (its checks
    are the whole log's), unless a self-normalised slate estimator needs the mean
    weights of the whole log (its first pass)."""
    own = not reads_support(requests) and not _ratios(requests)
    return options.replace(per_query=False) if own else options


def _ratios(requests: Requests) -> list[str]:
    """The self-normalised slate estimators' labels."""
    return [label for label, r in requests if SLATE_COLUMNS.get(r.metric.name, ("", None))[1]]


def part_rows(
    tables: OpeTables,
    requests: Requests,
    options: EvalOptions,
    weights: pl.LazyFrame,
    scale: float | None = None,
) -> pl.LazyFrame:
    """``per_query=True`` over one part (whole rounds): each row's contribution, the
    self-normalised estimators reading their ``by`` group's mean weight from
    ``weights`` (:func:`merge_sums` of the first pass's :func:`part_sums`), sorted as
    the one plan sorts them; ``scale`` as :func:`part_sums` reads it."""
    log, policy, model = tables.log, tables.policy, tables.reward_model
    if reads_support(requests) or _ratios(requests):
        rows = build_ope_rows(log, requests, policy, model, options, weights, scale)
        return rows if reads_support(requests) else _quiet(rows)
    # a slate or cascade round's value is its own (the checks were the first pass's);
    # the support warning is the whole log's, not a part's
    return _quiet(build_ope_plan(log, requests, policy, model, options, scale=scale))


def _quiet(plan: pl.LazyFrame) -> pl.LazyFrame:
    """``plan`` without its support warning (a part's: the whole log's is the caller's)."""
    schema = plan.collect_schema()

    def rows() -> pl.DataFrame:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SupportWarning)
            return plan.collect()

    return pl.defer(rows, schema=schema)


def _round_keys(schema: pl.Schema, options: EvalOptions) -> list[str]:
    """``round_id`` (and ``position`` where the log has it): how the one plan sorts the
    rows of ``per_query=True`` after the ``by`` keys."""
    return [options.round_id] + ([options.position] if options.position in schema else [])


def merge_sums(
    sums: pl.LazyFrame,
    tables: OpeTables,
    requests: Requests,
    options: EvalOptions,
    *,
    warn: bool = True,
    round_hint: str | None = None,
    model_round_hint: str | None = None,
) -> pl.LazyFrame:
    """The result of :func:`polars_irmetrics.evaluate` from the sums of every part
    (:func:`part_sums`); ``tables`` give the schemas (empty frames will do) and, with
    ``warn``, the distinct actions of the log and policy for the support warning
    (:func:`warned`), then of the ``by`` groups the policy supports none of
    (:func:`~polars_irmetrics.ope.evaluate.warn_unsupported_groups`; an engine's driver
    gives it from the parts' sums: ``warn=False`` in its task). ``round_hint``: the
    sentence of round ids spelt apart that follows the refusal of logged rounds the
    policy lacks, where an engine's driver found it (its tables here are empty);
    ``model_round_hint``: alike, after the refusal of logged rows without a ``q_hat``."""
    options = _sums_options(options, requests)
    plan = build_ope_parts(tables.log, requests, tables.policy, tables.reward_model, options)
    hints = {"policy_round": round_hint, "q_hat": model_round_hint}
    hints = {name: said for name, said in hints.items() if said is not None}
    if hints:
        checks = [
            replace(c, hint=functools.partial(hints.get, c.name)) if c.name in hints else c
            for c in plan.summary.checks
        ]
        plan = replace(plan, summary=replace(plan.summary, checks=checks))
    merged = plan.merge(from_transport(sums), options)
    if warn:
        merged = warned(merged, tables, requests, options)
        # a slate or cascade estimator's group whose every weight is 0
        merged = unweighted_warning(merged, plan.by, [label for label, _ in requests])
    # then the by groups the policy supports none of (the merge's: the whole log's)
    merged = warn_unsupported_groups(merged, plan.by, warn=warn)
    # then a dr_os(lambda=0) estimate NaN (Dask's merge task gives it; Spark's driver,
    # from the result: warn_unshrunk_result)
    return warn_unshrunk(merged, requests, plan.by)


def warn_unsupported_parts(sums: pl.LazyFrame, by: list[str], labels: Sequence[str] = ()) -> None:
    """The support warning of the ``by`` groups where the policy takes none of the
    logged actions, as :func:`merge_sums` gives it
    (:func:`~polars_irmetrics.ope.evaluate.warn_unsupported_groups`), now, from every
    part's :func:`part_sums` (stacked): each group's count and largest weight (an
    engine's driver, whose merge runs in a task); for the slate estimators and
    ``cascade_dr`` (``labels``: the metrics), the groups (the whole log without ``by``)
    where every weight of one is 0
    (:func:`~polars_irmetrics.ope.rounds.unweighted_warning`)."""
    schema = sums.collect_schema()
    maxima = [f"{INTERNAL}{label}:max" for label in labels]
    if NUM_ROUNDS in schema and all(m in schema for m in maxima) and maxima:
        aggs = [pl.col(NUM_ROUNDS).sum(), *(pl.col(m).max() for m in maxima)]
        groups = sums.group_by(by).agg(aggs).sort(by, nulls_last=True) if by else sums.select(aggs)
        unweighted_warning(groups, by, labels, parts=True).collect()
    if not by or WMAX not in schema:
        return
    groups = sums.group_by(by).agg(pl.col(NUM_ROWS).sum(), pl.col(WMAX).max())
    warn_unsupported_groups(groups.sort(by, nulls_last=True), by).collect()


def warned(
    result: pl.LazyFrame, tables: OpeTables, requests: Requests, options: EvalOptions
) -> pl.LazyFrame:
    """``result``, warning when it is collected as the one plan does if the policy of
    ``tables`` takes an action (at a position) its log never shows in a round the log
    has (:class:`~polars_irmetrics.errors.SupportWarning`). For the single-action
    estimators the tables may hold only the distinct actions (and positions), with
    ``prob`` for the policy's (an engine's, of the logged rounds already); for
    ``cascade_dr`` and the slate estimators (out of core: the whole tables) they are the
    tables themselves."""
    if slate_columns(requests):  # one call's estimators are all of one kind
        return slate_support_warning(result, tables.log, tables.policy, requests, options)
    return warn_unsupported(result, tables.log, tables.policy, options)


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
            key = part_key(schemas.values(), options.round_id, count)
            # a side table's row of a null round (or position) goes with the log's first
            # row: a bucket of log rows, whose checks refuse it (a bucket without one
            # has no row to carry the refusal); one row of the log read
            home = tables.log.select(key.first()).collect().item()
            for name, frame in named.items():  # one table after the other
                ids = [c for c in (options.round_id, options.position) if c in schemas[name]]
                null = pl.any_horizontal(pl.col(c).is_null() for c in ids)
                moved = name != "log" and home is not None
                at = pl.when(null).then(pl.lit(home, _key_dtype(key, frame))).otherwise(key)
                sink_buckets(frame, at if moved else key, Path(folder) / name)

            def side(name: str, bucket: int) -> pl.LazyFrame:
                return read_bucket(Path(folder) / name, bucket, schemas[name])

            parts = [
                OpeTables(
                    side("log", b),
                    side("policy", b),
                    side("reward_model", b) if "reward_model" in named else None,
                )
                for b in range(count)
            ]
            # the first pass: the rewards' scale of the whole log, from its buckets
            peaks = pl.concat([part.log.select(reward_peak(options.reward)) for part in parts])
            scale = scale_from_peaks(peaks.collect())
            sums = pl.concat(
                [
                    part_sums(part, requests, options, scale).collect()
                    for part in track(parts, "buckets", count, enabled=options.progress)
                ]
            )
            # the sums' scales: a second pass where the weights are all tiny or huge
            again = rescaled_peaks(sums, tables, requests, options)
            if again is not None:
                sums = pl.concat(
                    [
                        part_sums(part, requests, options, scale, again).collect()
                        for part in track(parts, "buckets", count, enabled=options.progress)
                    ]
                )
            per_query = options.per_query
            merged = merge_sums(sums.lazy(), tables, requests, options, warn=not per_query)
            if not per_query:
                return merged.collect()
            # per_query: a second pass, each bucket's rows with the whole groups' means
            weights = merged.collect().lazy()
            rows = [
                part_rows(part, requests, options, weights, scale).collect()
                for part in track(parts, "buckets", count, enabled=options.progress)
            ]
            result = pl.concat(rows)
            keys = [*options.attribute_keys, *_round_keys(schemas["log"], options)]
            keys = [k for k in keys if k in result.columns]  # a slate's rounds: no position
            result = result.sort(keys, nulls_last=True, maintain_order=True)
            return warned(result.lazy(), tables, requests, options).collect()

    return pl.defer(run, schema=schema)
