"""The options of a beyond-accuracy evaluation, and the tables it reads, as two objects.

:func:`~polars_irmetrics.beyond_accuracy` and :func:`~polars_irmetrics.evaluate` pack
their keyword arguments into one :class:`RecsysOptions` and their frames into one
:class:`Tables`, which :func:`~polars_irmetrics.recsys.plan.build_recsys_plan` reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import polars as pl

from polars_irmetrics.ground.facts import SharedIds, id_rows
from polars_irmetrics.ground.options import EvalOptions, UnseenItems
from polars_irmetrics.ground.validate import (
    INTERNAL,
    check_id_kinds,
    common_id_dtype,
    key_dtype_error,
)

__all__ = ["RecsysOptions", "Tables", "check_by_keys", "recsys_options", "recsys_tables"]


@dataclass(frozen=True)
class RecsysOptions:
    """Everything a beyond-accuracy evaluation takes besides its tables and metrics.

    Examples
    --------
    >>> from polars_irmetrics.recsys.options import RecsysOptions
    >>> RecsysOptions(by="system").by_keys
    ('system',)
    """

    by: str | Sequence[str] | None = None
    user_id: str = "user_id"
    item_id: str = "item_id"
    order: Literal["auto", "rank", "score"] = "auto"
    rank: str = "rank"
    score: str = "score"
    relevance: str | None = None
    features: str = "features"
    #: What to do with a recommended item the interactions or item features lack.
    unseen_items: UnseenItems = "error"
    #: Whether an item listed twice for one user is refused (``False``: kept, for
    #: RecTools' ``unrepeated_reco``, which measures them).
    check_duplicates: bool = True
    #: Whether the plan checks the recommendations as the ranking metrics check a run
    #: (null ids, the rank or score, duplicates); ``False`` where the accuracy metrics
    #: beside check the same rows (:func:`~polars_irmetrics.recsys.evaluate.with_beyond_accuracy`).
    check_run: bool = True
    #: The function the user called, for error messages.
    caller: str = "irm.beyond_accuracy"
    #: One row per (``by`` group, user) with each user's value, not their summary
    #: (``irm.evaluate(..., per_query=True)``; RePlay's ``PerUser`` mode).
    per_user: bool = False
    #: The labels of the accuracy metrics beside (RecTools' ``mcc@k``,
    #: ``reco_accuracy@k``) that read the catalogue's size from the same interactions:
    #: this plan's one tally of them warns for those too
    #: (:func:`~polars_irmetrics.ground.validate.warn_on_catalogue`).
    catalogue: tuple[str, ...] = ()
    #: The labels of the metrics of the call that read the interactions (these and the
    #: accuracy metrics beside), which the one warning of a history that lacks the
    #: recommendations' items names
    #: (:func:`~polars_irmetrics.ground.validate.warn_on_interactions`).
    readers: tuple[str, ...] = ()
    #: Those of :attr:`readers` that read each user's own history (the same warning's
    #: users: :attr:`MetricRequest.reads_histories
    #: <polars_irmetrics.metrics.requests.MetricRequest.reads_histories>`).
    history_readers: tuple[str, ...] = ()
    #: The column of a stochastic policy's sampled rankings (``sample_id=`` of
    #: :func:`~polars_irmetrics.evaluate`), where the recommendations have it: a user
    #: under more than one of its values is refused (the metrics here read one list per
    #: user; :func:`~polars_irmetrics.beyond_accuracy`, which has no ``sample_id=``,
    #: reads the default ``'sample'``); ``None``: not read.
    sample_id: str | None = None
    #: The keys of ``by`` that name systems (``systems=`` of
    #: :func:`~polars_irmetrics.evaluate`): a system whose items the interactions
    #: mostly lack is warned about by name
    #: (:func:`~polars_irmetrics.ground.validate.warn_on_interactions`).
    systems: tuple[str, ...] = ()

    @property
    def by_keys(self) -> tuple[str, ...]:
        """``by`` as a tuple of column names (empty without ``by``)."""
        by = self.by
        return (by,) if isinstance(by, str) else tuple(by or ())


@dataclass(frozen=True)
class Tables:
    """The tables a beyond-accuracy evaluation reads, lazily.

    Attributes
    ----------
    recommendations
        One row per recommended item: user, item, and ``rank`` or ``score`` where a
        metric has a cutoff.
    interactions
        The history (training interactions): user, item; popularity, the catalogue and
        each user's history come from it.
    item_features
        One row per item: the item id and a feature vector (list or array of numbers).
    given
        With ``unseen_items='drop'``, the recommendations as given, before the drop:
        what the warnings count (the history or the item features holding few of their
        items); ``None``: ``recommendations`` are as given.
    ids
        The distinct items and users of the recommendations as given, where the door
        has them for every route's tallies (:class:`~polars_irmetrics.ground.facts.SharedIds`);
        ``None``: the tallies read the recommendations.
    """

    recommendations: pl.LazyFrame
    interactions: pl.LazyFrame | None = None
    item_features: pl.LazyFrame | None = None
    given: pl.LazyFrame | None = None
    ids: SharedIds | None = None


def recsys_options(options: EvalOptions, caller: str = "irm.evaluate") -> RecsysOptions:
    """:func:`~polars_irmetrics.evaluate`'s options as a beyond-accuracy evaluation's:
    the run's queries are the users, its documents the items."""
    return RecsysOptions(
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
        # irm.beyond_accuracy has no sample_id=: its recommendations' column named as the
        # library's sample column ('sample') with several values per user is refused too
        sample_id=options.sample_id,
        systems=options.system_keys,
    )


def recsys_tables(
    run: pl.LazyFrame,
    interactions: pl.LazyFrame | pl.DataFrame | None,
    item_features: pl.LazyFrame | pl.DataFrame | None,
    options: RecsysOptions,
    ids: SharedIds | None = None,
) -> Tables:
    """The tables of a beyond-accuracy evaluation of ``run``. With
    ``unseen_items='drop'``, the recommendations of items the interactions (of the same
    ``by`` group, where the interactions carry its keys) or the item features lack are
    left out (the cold items left out of these metrics only). ``ids``: the door's
    distinct ids and shared frames (:attr:`Tables.ids`; the side tables' distinct items
    read once for every route: :func:`~polars_irmetrics.ground.facts.id_rows`)."""
    tables = Tables(
        run,
        None if interactions is None else interactions.lazy(),
        None if item_features is None else item_features.lazy(),
        ids=ids,
    )
    if options.unseen_items != "drop":
        return tables
    recommendations = tables.recommendations
    item = options.item_id
    schema = recommendations.collect_schema()
    sides: list[tuple[dict[str, pl.DataType], pl.LazyFrame]] = []
    for name, known in (
        ("interactions", tables.interactions),
        ("item_features", tables.item_features),
    ):
        if known is None:
            continue
        theirs = known.collect_schema()
        if item not in theirs or item not in schema:
            continue  # the plan's own check names the missing column
        keys = [k for k in options.by_keys if k in theirs]
        # the plan's own checks, made before the left-out rows are joined
        check_id_kinds(schema, "recommendations", theirs, name, [item])
        check_by_keys(schema, theirs, keys, name)
        # each side's ids in one dtype for the joint (Categorical beside String, Int32
        # beside Int64): the recommendations keep their own
        joint = {
            **{k: schema[k] for k in keys},
            item: common_id_dtype([schema[item], theirs[item]]),
        }
        cast = known.select(pl.col(c).cast(t) for c, t in joint.items())
        sides.append((joint, id_rows(ids, known, cast, keys, item).select(*joint)))
    for joint, seen in _seen_once(sides):
        marked = [pl.col(c).cast(t).alias(f"{INTERNAL}seen_{c}") for c, t in joint.items()]
        on = [f"{INTERNAL}seen_{c}" for c in joint]
        recommendations = (
            recommendations.with_columns(marked)
            .join(seen.rename(dict(zip(joint, on, strict=True))), on=on, how="semi")
            .drop(on)
        )
    # read by the plan and by its tally of the history's ids: the joins run once
    return Tables(recommendations.cache(), tables.interactions, tables.item_features, run, ids)


def _seen_once(
    sides: list[tuple[dict[str, pl.DataType], pl.LazyFrame]],
) -> list[tuple[dict[str, pl.DataType], pl.LazyFrame]]:
    """The side tables' known ids (each ``(joint dtypes, ids)``) that the recommendations
    are semi-joined with: the item features' ids joined first with the interactions'
    (a few hundred thousand ids, not the run's millions of rows) where each column the
    item features key on has the same dtype in both, so that the rows go through one
    semi-join, not two. A row is kept by the one exactly where both would keep it."""
    if len(sides) != 2:
        return sides
    (first, history), (second, features) = sides
    if any(first.get(c) != t for c, t in second.items()):
        return sides
    return [(first, history.join(features, on=list(second), how="semi"))]


def check_by_keys(schema: pl.Schema, theirs: pl.Schema, keys: list[str], name: str) -> None:
    """Refuse a ``by`` key of one dtype in the recommendations (``schema``) and another
    in the side table ``name`` (``theirs``)."""
    for key in keys:
        if theirs[key] != schema[key]:
            raise key_dtype_error(
                key, schema[key], "the recommendations", theirs[key], f"the {name}"
            )
