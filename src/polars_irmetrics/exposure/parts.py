"""The exposure measures out of core: ``irm.evaluate(..., buckets=N)``.

Every exposure measure (``ee_*``, ``awrf``, ``awrf_ndcg``, ``rnd``, ``rkl``, ``rrd``) is a
value per query, computed from that query's rankings (all its samples) and judgments and
from the small side tables ``groups=`` and ``target=``, which every part reads whole
(they are collected once: the broadcast). So the run and the judgments are split into
hash buckets of queries (:func:`~polars_irmetrics.ground.buckets.evaluate_in_buckets`),
each bucket gives its queries' values by the one plan
(:func:`~polars_irmetrics.exposure.plan.build_exposure_plan`), and the means are taken
over every query's values sorted by query, as the one plan takes them
(:func:`~polars_irmetrics.exposure.plan.exposure_means`): the same bits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import polars as pl

from polars_irmetrics.errors import InvalidValueError
from polars_irmetrics.exposure.coverage import groups_tally, warn_on_groups
from polars_irmetrics.exposure.plan import build_exposure_plan, exposure_means, warned_undefined
from polars_irmetrics.ground.buckets import evaluate_in_buckets, splits_in_buckets
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.validate import with_tally
from polars_irmetrics.metrics.registry import MetricRequest

__all__ = ["exposure_in_buckets", "split_exposure"]

Requests = Sequence[tuple[str, MetricRequest]]


def split_exposure(options: EvalOptions) -> bool:
    """Whether ``buckets=`` asks the exposure measures to go out of core: a number or
    ``"auto"`` (``"auto-memory"``, the default, keeps the one plan, as for the
    off-policy estimators).

    Examples
    --------
    >>> split_exposure(EvalOptions()), split_exposure(EvalOptions(buckets=4))
    (False, True)

    A ``spill_dir`` is read by the buckets only:

    >>> split_exposure(EvalOptions(spill_dir="/tmp"))
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: spill_dir='/tmp' is the folder of the ...
    """
    return splits_in_buckets(options.buckets, options.spill_dir, "the exposure measures")


def exposure_in_buckets(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame | None,
    groups: pl.LazyFrame | None,
    requests: Requests,
    options: EvalOptions,
    target: pl.LazyFrame | None = None,
    *,
    warn: bool = True,
    clustered: Sequence[str] = (),
    placed: Sequence[str] = (),
    refuse: Callable[[pl.LazyFrame], pl.LazyFrame] | None = None,
) -> pl.LazyFrame:
    """The exposure measures' plan over hash buckets of queries (module doc): the
    per-query values (``options.per_query``) or their means, lazy. ``warn``,
    ``clustered``, ``placed`` and ``refuse`` (on every bucket's values at once): as
    :func:`~polars_irmetrics.exposure.plan.build_exposure_plan`'s,
    from the whole run's documents (a bucket's plan does not warn: it holds some of
    them).

    Examples
    --------
    Three queries in two buckets give the one plan's numbers:

    >>> import polars as pl
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> run = pl.LazyFrame({"query_id": ["q1", "q1", "q2", "q2", "q3"],
    ...                     "doc_id": ["a", "b", "a", "c", "b"], "rank": [1, 2, 1, 2, 1]})
    >>> groups = pl.LazyFrame({"doc_id": ["a", "b", "c"], "group": ["x", "y", "x"]})
    >>> requests = parse_metric_list(["rnd", "rkl"])
    >>> options = EvalOptions(buckets=2)
    >>> split = exposure_in_buckets(run, None, groups, requests, options).collect()
    >>> split.equals(build_exposure_plan(run, None, groups, requests, options).collect())
    True
    """
    per_query = options.replace(per_query=True)
    held: dict[str, pl.LazyFrame | None] = {}

    def broadcast(name: str, table: pl.LazyFrame | None) -> pl.LazyFrame | None:
        """A side table, read once for every bucket."""
        if name not in held:
            held[name] = None if table is None else table.collect().lazy()
        return held[name]

    def evaluate_part(
        part: pl.LazyFrame, judged: pl.LazyFrame | None, _: pl.LazyFrame | None
    ) -> pl.LazyFrame:
        return build_exposure_plan(
            part,
            judged,
            broadcast("groups", groups),
            list(requests),
            per_query,
            target=broadcast("target", target),
            warn=False,
            placed=placed,
        )

    schema = build_exposure_plan(
        run, qrels, groups, list(requests), per_query, target=target, placed=placed
    ).collect_schema()
    buckets = options.buckets
    if buckets is None or buckets == "auto-memory":  # the one plan (split_exposure)
        return build_exposure_plan(
            run,
            qrels,
            groups,
            list(requests),
            options,
            target=target,
            warn=warn,
            clustered=clustered,
            placed=placed,
            refuse=refuse,
        )
    if options.system_keys:
        # a bucket holds some systems' rows only, and a system is scored on every judged
        # query, those of the buckets it has no row in too
        raise InvalidValueError(
            "systems= with the exposure measures runs in one plan, not in buckets: drop "
            "buckets=, or evaluate each system's rows in a call of its own with buckets="
        )
    keys = list(options.by_keys)  # by=: each part keys its rankings alike
    values = evaluate_in_buckets(
        run,
        qrels,
        None,
        query_id=options.query_id,
        buckets=buckets,
        spill_dir=options.spill_dir,
        evaluate_part=evaluate_part,
        schema=schema,
        progress=options.progress,
    ).sort([*keys, options.query_id])
    if refuse is not None:  # the door's refusals, before the warnings below
        values = refuse(values)
    # how groups= lines up with the whole run's documents: said before the values'
    # warnings, as the one plan says it
    if groups is not None and warn:
        relevant = (
            None
            if qrels is None
            else qrels.filter(pl.col(options.relevance) > 0).select(
                options.query_id, options.doc_id
            )
        )
        tally = groups_tally(
            run,
            groups,
            target,
            list(requests),
            options,
            relevant,
            queries=run.select(options.query_id),
        )
        values = with_tally(
            values, tally, lambda row: warn_on_groups(row, options, clustered, list(requests))
        )
    if warn:  # rnd, rkl, rrd undefined on a query: the whole run's count, as one plan's
        values = warned_undefined(
            values, list(requests), keys, options.query_id, summary=not options.per_query
        )
    if options.per_query:
        return values
    segments = run.select(keys).unique() if keys else None
    return exposure_means(values, list(requests), keys, segments, warn=warn)
