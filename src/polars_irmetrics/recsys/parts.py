"""The metrics of a recommendation table out of core:
``irm.evaluate(recommendations, ["intra_list_diversity@10", "gini_index@10"],
item_features=..., interactions=..., buckets=N)``.

The recommendations are split into hash buckets of users
(:func:`~polars_irmetrics.ground.buckets.evaluate_in_buckets`); each bucket's plan reads
the item features (collected once) and the interaction history whole (lazily: each
bucket's plan reads it again, as it reads a Parquet scan). Two kinds of metric merge:

* the means of per-user values over the users of the recommendations
  (``sufficient_reco@k``, ``unrepeated_reco@k``, ``categorical_diversity@k``,
  ``intra_list_diversity@k``, ``serendipity@k``, ``surprisal@k``,
  ``average_popularity@k``, ``long_tail_share@k``...:
  :func:`~polars_irmetrics.metrics.registry.merges_from_users` with ``history=True``):
  each bucket gives its users' values by the one plan, and the mean over every user
  (:func:`~polars_irmetrics.metrics.registry.user_mean`, an exact fixed-point mean) is
  the one plan's, to the last bit;
* the metrics of every row that read only how often each item is recommended
  (``catalog_coverage@k``, ``distributional_coverage@k``, ``gini_index@k``,
  ``novelty@k``: :func:`~polars_irmetrics.metrics.registry.merges_from_counts`): each
  bucket gives its items' counts within each cutoff
  (:func:`~polars_irmetrics.recsys.plan.build_recsys_plan` with ``counts=True``), and
  :func:`~polars_irmetrics.recsys.plan.merge_counts` adds them up and computes each
  formula from the totals: the one plan's bits (whole numbers, exact sums).

The warning of a history that lacks most of the recommendations' items or users is the
whole table's, given once. A data error is raised by the first bucket that finds it;
its count of such rows is that bucket's. RePlay's ``novelty(kind='replay')``, a mean
over the history's users: each bucket gives its users' values, and
:func:`~polars_irmetrics.recsys.plan.merge_users` adds the history's users without
recommendations once.
"""

from __future__ import annotations

from dataclasses import replace

import polars as pl

from polars_irmetrics.errors import InvalidValueError
from polars_irmetrics.ground.buckets import evaluate_in_buckets, splits_in_buckets
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.metrics.registry import (
    MetricRequest,
    averages_over_history,
    merges_from_counts,
    merges_from_users,
    user_mean,
)
from polars_irmetrics.recsys.options import RecsysOptions, Tables
from polars_irmetrics.recsys.plan import (
    build_recsys_plan,
    merge_counts,
    merge_unseen_items,
    merge_users,
    raise_on_unseen_items,
    tallied,
    unseen_item_check,
    unseen_items,
)

__all__ = ["build_beyond", "users_in_buckets"]

Requests = list[tuple[str, MetricRequest]]

#: How these metrics are named in messages.
_MEASURES = "the metrics of a recommendation table"


def build_beyond(
    tables: Tables,
    requests: Requests,
    recsys: RecsysOptions,
    options: EvalOptions,
    *,
    tally: bool = True,
) -> pl.LazyFrame:
    """The one plan, or the buckets when ``buckets=`` is a number or ``"auto"``.
    ``tally``: the history's coverage warning and refusal of null ids (``False`` for an
    engine's part, which holds some of the users: the engine gives it once)."""
    if not splits_in_buckets(options.buckets, options.spill_dir, _MEASURES):
        return build_recsys_plan(tables, requests, recsys, tally=tally)
    return users_in_buckets(tables, requests, recsys, options)


def users_in_buckets(
    tables: Tables, requests: Requests, recsys: RecsysOptions, options: EvalOptions
) -> pl.LazyFrame:
    """The per-user values (``recsys.per_user``) or the metrics, over hash buckets of
    users (module doc): the means of per-user values from each bucket's users' values,
    the metrics of every row from each bucket's item counts (:func:`merge_counts`).

    Examples
    --------
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> recs = pl.LazyFrame({"user_id": ["a", "a", "b", "c", "c", "c"],
    ...                      "item_id": [1, 2, 1, 3, 2, 1], "rank": [1, 2, 1, 1, 2, 3]})
    >>> requests = parse_metric_list(["sufficient_reco(deep=True)@2",
    ...                               "distributional_coverage@1"])
    >>> one = build_recsys_plan(Tables(recs), requests, RecsysOptions()).collect()
    >>> split = users_in_buckets(Tables(recs), requests, RecsysOptions(),
    ...                          EvalOptions(buckets=2)).collect()
    >>> split.equals(one), split.row(0)  # (1 + 0.5 + 1) / 3; items 1, 1, 3 at the top
    (True, (0.8333333333333334, 0.9182958340544896))
    """
    users = [(label, r) for label, r in requests if merges_from_users(r, history=True)]
    counted = [(label, r) for label, r in requests if merges_from_counts(r)]
    absent = [(label, r) for label, r in requests if averages_over_history(r)]
    refused = [label for label, r in requests if (label, r) not in [*users, *counted, *absent]]
    if refused:  # pragma: no cover - every metric of a recommendation table merges
        raise InvalidValueError(
            f"buckets={options.buckets!r}: metric {refused[0]!r} does not merge from "
            "buckets of users: drop buckets=, or evaluate it in a call of its own"
        )
    per_user = replace(recsys, per_user=True)
    buckets = options.buckets
    if buckets is None or buckets == "auto-memory":  # pragma: no cover - build_beyond
        return build_recsys_plan(tables, requests, recsys)
    held: dict[str, pl.LazyFrame | None] = {}

    def features() -> pl.LazyFrame | None:
        """The item features, read once for every bucket."""
        if "features" not in held:
            given = tables.item_features
            held["features"] = None if given is None else given.collect().lazy()
        return held["features"]

    def in_buckets(asked: Requests, *, counts: bool = False, own: bool = False) -> pl.LazyFrame:
        """Each bucket's per-user values (or item counts; ``own``: its users' values only,
        without the history's other users) of ``asked``, stacked."""
        mode = recsys if counts else per_user
        reads = _read_by(tables, asked)

        def evaluate_part(
            part: pl.LazyFrame, _: pl.LazyFrame | None, __: pl.LazyFrame | None
        ) -> pl.LazyFrame:
            read = None if reads.item_features is None else features()
            whole = Tables(part, tables.interactions, read)
            return build_recsys_plan(whole, asked, mode, tally=False, counts=counts, users=own)

        schema = build_recsys_plan(reads, asked, mode, tally=False, counts=counts, users=own)
        # a recommended item the history lacks, refused over the whole table (a bucket
        # would name its own first item and count its own rows), as the one plan does
        check = unseen_item_check(asked, recsys)
        history = tables.interactions

        def whole_run() -> None:
            if check is None or history is None:
                return
            recommendations = tables.recommendations
            rows = merge_unseen_items(unseen_items(recommendations, history, recsys), recsys)
            raise_on_unseen_items(rows, recommendations, history, check, recsys)

        return evaluate_in_buckets(
            tables.recommendations,
            None,
            None,
            query_id=user,
            buckets=buckets,
            spill_dir=options.spill_dir,
            evaluate_part=evaluate_part,
            schema=schema.collect_schema(),
            progress=options.progress,
            before=whole_run,
        )

    by, user = list(recsys.by_keys), recsys.user_id
    keys = [*by, user] if recsys.per_user else by
    results: list[pl.LazyFrame] = []
    if users:
        # the users' order (the means' running sums with agg=)
        values = in_buckets(users).sort([*by, user])
        if recsys.per_user:
            results.append(values)
        elif by:
            means = [user_mean(label, request) for label, request in users]
            results.append(values.group_by(by, maintain_order=True).agg(means).sort(by))
        else:
            results.append(values.select(user_mean(label, r) for label, r in users))
    if counted:
        counts = in_buckets(counted, counts=True)
        results.append(merge_counts(counts, _read_by(tables, counted), counted, recsys))
    if absent:  # the history's users without recommendations added once, by the merge
        values = in_buckets(absent, own=True)
        results.append(merge_users(values, _read_by(tables, absent), absent, recsys))
    both = results[0]
    for other in results[1:]:  # a group (a user) in one has rows in the other too, or none
        if keys:
            both = both.join(other, on=keys, how="full", coalesce=True, nulls_equal=True)
        else:
            both = pl.concat([both, other], how="horizontal")
    both = both.select(*keys, *(label for label, _ in requests))
    # the whole table's warning, once
    return tallied(both.sort(keys) if keys else both, tables, recsys)


def _read_by(tables: Tables, requests: Requests) -> Tables:
    """``tables`` without the item features where no metric of ``requests`` reads them:
    a kind of metric evaluated apart (the item counts of ``novelty@k``, the history's
    users of ``novelty(kind='replay')@k``) beside ``categorical_diversity@k``, whose
    item features hold categories and no vectors, checks only what it reads, as the
    one plan checks it (the recommendations stay those the door kept: with
    ``unseen_items='drop'``, without the items the features lack).

    Examples
    --------
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> tables = Tables(pl.LazyFrame(), pl.LazyFrame(), pl.LazyFrame())
    >>> _read_by(tables, parse_metric_list(["novelty@5"])).item_features is None
    True
    >>> _read_by(tables, parse_metric_list(["categorical_diversity@5"])) is tables
    True
    """
    if any("item_features" in request.reads for _, request in requests):
        return tables
    return replace(tables, item_features=None)
