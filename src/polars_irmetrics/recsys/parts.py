"""The means of per-user values of a recommendation table out of core:
``irm.evaluate(recommendations, ["intra_list_diversity@10"], item_features=...,
buckets=N)``.

The metrics that are the mean of per-user values over the users of the
recommendations (``sufficient_reco@k``, ``unrepeated_reco@k``,
``categorical_diversity@k``, ``intra_list_diversity@k``, ``serendipity@k``,
``surprisal@k``, ``average_popularity@k``, ``long_tail_share@k``...:
:func:`~polars_irmetrics.metrics.registry.merges_from_users` with ``history=True``) are
computed bucket by bucket: the recommendations are split into hash buckets of users
(:func:`~polars_irmetrics.ground.buckets.evaluate_in_buckets`), each bucket gives its
users' values by the one plan, which reads the item features (collected once) and the
interaction history whole (lazily: each bucket's plan reads it again, as it reads a
Parquet scan), and the mean over every user
(:func:`~polars_irmetrics.metrics.registry.user_mean`, an exact fixed-point mean) is
the one plan's, to the last bit. The warning of a history that lacks most of the
recommendations' items or users is the whole table's, given once. A data error is
raised by the first bucket that finds it; its count of such rows is that bucket's. The
metrics of every user's rows at once (coverage, Gini, ``novelty``) and those averaged
over the history's users (RePlay's ``novelty(kind='replay')``) are refused with
``buckets=``.
"""

from __future__ import annotations

from dataclasses import replace

import polars as pl

from polars_irmetrics.errors import InvalidValueError
from polars_irmetrics.ground.buckets import evaluate_in_buckets, splits_in_buckets
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.metrics.registry import MetricRequest, merges_from_users, user_mean
from polars_irmetrics.recsys.options import RecsysOptions, Tables
from polars_irmetrics.recsys.plan import build_recsys_plan, tallied

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
    """The per-user values (``recsys.per_user``) or their means, over hash buckets of
    users (module doc).

    Examples
    --------
    >>> from polars_irmetrics.metrics.registry import parse_metric_list
    >>> recs = pl.LazyFrame({"user_id": ["a", "a", "b", "c", "c", "c"],
    ...                      "item_id": [1, 2, 1, 3, 2, 1], "rank": [1, 2, 1, 1, 2, 3]})
    >>> requests = parse_metric_list(["sufficient_reco(deep=True)@2"])
    >>> one = build_recsys_plan(Tables(recs), requests, RecsysOptions()).collect()
    >>> split = users_in_buckets(Tables(recs), requests, RecsysOptions(),
    ...                          EvalOptions(buckets=2)).collect()
    >>> split.equals(one), split.item()  # (1 + 0.5 + 1) / 3
    (True, 0.8333333333333334)
    """
    refused = [label for label, r in requests if not merges_from_users(r, history=True)]
    if refused:
        raise InvalidValueError(
            f"buckets={options.buckets!r}: metric {refused[0]!r} reads every user's rows "
            "at once (or averages over the history's users), which are not split into "
            "buckets of users; out of core run the means of per-user values over the "
            "users of the recommendations (sufficient_reco@k, categorical_diversity@k, "
            "intra_list_diversity@k, serendipity@k, surprisal@k, average_popularity@k, "
            "long_tail_share@k...): drop buckets=, or evaluate those metrics in a call "
            "of their own"
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

    def evaluate_part(
        part: pl.LazyFrame, _: pl.LazyFrame | None, __: pl.LazyFrame | None
    ) -> pl.LazyFrame:
        whole = Tables(part, tables.interactions, features())
        return build_recsys_plan(whole, requests, per_user, tally=False)

    by, user = list(recsys.by_keys), recsys.user_id
    schema = build_recsys_plan(tables, requests, per_user, tally=False).collect_schema()
    values = evaluate_in_buckets(
        tables.recommendations,
        None,
        None,
        query_id=user,
        buckets=buckets,
        spill_dir=options.spill_dir,
        evaluate_part=evaluate_part,
        schema=schema,
        progress=options.progress,
    )
    # the whole table's warning, once; then the users' order (the means' running sums)
    values = tallied(values, tables, recsys).sort([*by, user])
    if recsys.per_user:
        return values
    means = [user_mean(label, request) for label, request in requests]
    if by:
        return values.group_by(by, maintain_order=True).agg(means).sort(by)
    return values.select(means)
