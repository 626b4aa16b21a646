"""The few lines :func:`~polars_irmetrics.evaluate` calls to put beyond-accuracy metrics
(:mod:`polars_irmetrics.recsys.plan`) next to accuracy metrics."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import polars as pl

from polars_irmetrics.ground.facts import SharedIds
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.metrics.registry import MetricRequest
from polars_irmetrics.recsys.options import recsys_options, recsys_tables
from polars_irmetrics.recsys.parts import build_beyond

__all__ = ["with_beyond_accuracy"]

Frame = pl.DataFrame | pl.LazyFrame


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
    ids: SharedIds | None = None,
    catalogue: Sequence[str] = (),
    readers: Sequence[str] = (),
    history_readers: Sequence[str] = (),
) -> pl.LazyFrame:
    """:func:`~polars_irmetrics.evaluate`'s means (``accuracy``, or ``None`` when every
    metric is beyond accuracy) joined with the beyond-accuracy metrics of ``run``, its
    queries as users and its documents as items. With ``unseen_items='drop'``, the
    recommendations of items the interactions or the item features lack are left out
    of the beyond-accuracy metrics (:func:`~polars_irmetrics.recsys.options.recsys_tables`),
    not of the accuracy ones.
    ``tally``: whether the plan warns of a history that lacks the recommendations' items
    or users (and refuses its null ids); an engine's part does not (it holds some of the
    users), the engine does, once. ``ids``: the door's distinct ids of ``run``
    (:class:`~polars_irmetrics.ground.facts.SharedIds`), which the tallies count.
    ``catalogue``: the labels of the accuracy metrics beside that read the catalogue's
    size from ``interactions``, which this plan's tally warns for too (the one tally of
    the table in the call: the accuracy metrics' plan does not count it again);
    ``readers``: the labels of every metric of the call that reads ``interactions``
    (these beyond-accuracy metrics and the accuracy ones beside), in the order asked,
    which the same warning names in that order (``history_readers``: those that read
    each user's own history); without them, those of ``requests``."""
    recsys = recsys_options(options, caller)
    if accuracy is not None:
        # the accuracy metrics beside check the same run as the recommendations here
        # (every row of it: these are those rows, or fewer with unseen_items='drop'),
        # with the same checks and messages: one check of it, theirs
        recsys = replace(recsys, check_run=False)
    if catalogue:
        recsys = replace(recsys, catalogue=tuple(catalogue))
    mine = tuple(label for label, r in requests if "interactions" in r.reads)
    histories = tuple(label for label, r in requests if r.reads_histories)
    recsys = replace(
        recsys,
        readers=tuple(readers) or mine,
        history_readers=tuple(history_readers) or histories,
    )
    tables = recsys_tables(run, interactions, item_features, recsys, ids)
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
    # a full join: a group with no judged query still shows its beyond-accuracy values,
    # over 0 judged queries (num_q 0, the accuracy means null), as the exposure measures
    joined = accuracy.join(
        beyond, on=by, how="full", coalesce=True, nulls_equal=True, maintain_order="left_right"
    )
    if "num_q" not in joined.collect_schema().names():
        return joined
    return joined.with_columns(pl.col("num_q").fill_null(0))
