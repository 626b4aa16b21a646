"""The few lines :func:`~polars_irmetrics.evaluate` calls to put beyond-accuracy metrics
(:mod:`polars_irmetrics.recsys.plan`) next to accuracy metrics."""

from __future__ import annotations

import polars as pl

from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.metrics.registry import MetricRequest
from polars_irmetrics.recsys.options import RecsysOptions, Tables
from polars_irmetrics.recsys.parts import build_beyond

__all__ = ["with_beyond_accuracy", "without_unseen"]

Frame = pl.DataFrame | pl.LazyFrame


def without_unseen(tables: Tables, options: RecsysOptions) -> Tables:
    """The recommendations less the items the interactions (of the same ``by`` group,
    where the interactions carry its keys) or the item features do not have."""
    recommendations = tables.recommendations
    item = options.item_id
    for known in (tables.interactions, tables.item_features):
        if known is None:
            continue
        names = known.collect_schema().names()
        if item not in names:
            continue  # the plan's own check names the missing column
        keys = [k for k in options.by_keys if k in names]
        seen = known.select(*keys, item).unique()
        recommendations = recommendations.join(seen, on=[*keys, item], how="semi")
    return Tables(recommendations, tables.interactions, tables.item_features)


def with_beyond_accuracy(
    accuracy: pl.LazyFrame | None,
    run: pl.LazyFrame,
    requests: list[tuple[str, MetricRequest]],
    interactions: Frame | None,
    item_features: Frame | None,
    options: EvalOptions,
    *,
    caller: str = "irm.evaluate",
    tally: bool = True,
) -> pl.LazyFrame:
    """:func:`~polars_irmetrics.evaluate`'s means (``accuracy``, or ``None`` when every
    metric is beyond accuracy) joined with the beyond-accuracy metrics of ``run``, its
    queries as users and its documents as items. With ``unseen_items='drop'``, the
    recommendations of items the interactions or the item features lack are left out
    of the beyond-accuracy metrics (:func:`without_unseen`), not of the accuracy ones.
    ``tally``: whether the plan warns of a history that lacks the recommendations' items
    or users (and refuses its null ids); an engine's part does not (it holds some of the
    users), the engine does, once."""
    recsys = RecsysOptions(
        by=options.by_keys,
        user_id=options.query_id,
        item_id=options.doc_id,
        order=options.order,
        rank=options.rank,
        score=options.score,
        relevance=options.serendipity_relevance,
        features=options.features,
        unseen_items=options.unseen_items,
        check_duplicates=options.check_duplicates,
        caller=caller,
        per_user=options.per_query,
    )
    tables = Tables(
        run,
        None if interactions is None else interactions.lazy(),
        None if item_features is None else item_features.lazy(),
    )
    if options.unseen_items == "drop":  # the cold items left out of these metrics only
        tables = without_unseen(tables, recsys)
    beyond = build_beyond(tables, requests, recsys, options, tally=tally)
    if accuracy is None:
        return beyond
    by = list(options.by_keys)
    if options.per_query:  # each user's values beside the query's
        return accuracy.join(
            beyond,
            on=[*by, options.query_id],
            how="full",
            coalesce=True,
            nulls_equal=True,
            maintain_order="left_right",
        )
    if not by:
        return pl.concat([accuracy, beyond], how="horizontal")
    # a full join: a group with no judged query still shows its beyond-accuracy values
    return accuracy.join(
        beyond, on=by, how="full", coalesce=True, nulls_equal=True, maintain_order="left_right"
    )
