"""``beyond_accuracy()``: coverage, novelty, diversity, serendipity and popularity bias of
recommendations: :func:`~polars_irmetrics.evaluate` with ``interactions=`` and
``item_features=``, under the names Microsoft Recommenders gives the columns."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Literal, overload

import polars as pl

from polars_irmetrics.door.evaluate import evaluate_tables
from polars_irmetrics.errors import IrmError
from polars_irmetrics.ground.options import UnseenItems

Frame = pl.DataFrame | pl.LazyFrame

__all__ = ["beyond_accuracy", "in_recsys_words"]


@overload
def beyond_accuracy(
    recommendations: pl.DataFrame,
    metrics: str | Iterable[str],
    *,
    interactions: Frame | None = ...,
    item_features: Frame | None = ...,
    by: str | Sequence[str] | None = ...,
    user_id: str = ...,
    item_id: str = ...,
    order: Literal["auto", "rank", "score"] = ...,
    rank: str = ...,
    score: str = ...,
    relevance: str | None = ...,
    features: str = ...,
    unseen_items: UnseenItems = ...,
) -> pl.DataFrame: ...


@overload
def beyond_accuracy(
    recommendations: pl.LazyFrame,
    metrics: str | Iterable[str],
    *,
    interactions: Frame | None = ...,
    item_features: Frame | None = ...,
    by: str | Sequence[str] | None = ...,
    user_id: str = ...,
    item_id: str = ...,
    order: Literal["auto", "rank", "score"] = ...,
    rank: str = ...,
    score: str = ...,
    relevance: str | None = ...,
    features: str = ...,
    unseen_items: UnseenItems = ...,
) -> pl.LazyFrame: ...


def beyond_accuracy(
    recommendations: Frame,
    metrics: str | Iterable[str],
    *,
    interactions: Frame | None = None,
    item_features: Frame | None = None,
    by: str | Sequence[str] | None = None,
    user_id: str = "user_id",
    item_id: str = "item_id",
    order: Literal["auto", "rank", "score"] = "auto",
    rank: str = "rank",
    score: str = "score",
    relevance: str | None = None,
    features: str = "features",
    unseen_items: UnseenItems = "error",
) -> Frame:
    """Beyond-accuracy metrics of a recommendation table, one row per ``by`` group.

    :func:`~polars_irmetrics.evaluate` with ``interactions=`` and ``item_features=``,
    its keywords translated (``user_id`` is ``query_id``, ``item_id`` is ``doc_id``,
    ``relevance`` is ``serendipity_relevance``): the same tables give the same numbers,
    or the same refusal, through either door.

    Parameters
    ----------
    recommendations
        One row per recommended item: ``user_id``, ``item_id``, and ``rank`` (1 = top)
        or ``score`` where a metric has a cutoff (``novelty@10``).
    metrics
        Names such as ``["catalog_coverage", "distributional_coverage", "novelty@10",
        "intra_list_diversity", "serendipity"]`` (aliases: ``coverage``, ``entropy``,
        ``gini``, ``diversity``, ``ild``, ``arp``, ``aplt``). Result columns are named
        by the strings as given.
    interactions
        The history the recommender learned from (Microsoft Recommenders'
        ``train_df``): ``user_id``, ``item_id``, one row per interaction. Item
        popularity (the number of its rows), the catalogue (its distinct items) and each
        user's history come from it. A ``by`` key present in it is matched too;
        otherwise it serves every ``by`` group.
    item_features
        One row per item: ``item_id`` and ``features``, a list or array of numbers (an
        embedding, or a multi-hot category vector). Similarity is the cosine of two
        items' vectors, unless a metric asks for
        ``item_sim_measure='item_cooccurrence_count'`` (the interactions' users shared
        by two items; no item features needed).
    by
        Keys (system, segment, day) evaluated separately.
    user_id, item_id, rank, score, features
        Column names.
    order
        How a cutoff ranks each user's list: ``"rank"`` (the ``rank`` column),
        ``"score"`` (descending, ties broken by the item id descending compared as text,
        as :func:`~polars_irmetrics.evaluate` does) or ``"auto"`` (``rank`` if present;
        a list whose ranks and scores order it differently is refused, as
        :func:`~polars_irmetrics.evaluate` refuses it: choose one).
    unseen_items
        A recommended item the interactions never saw (no popularity: novelty; no
        co-occurrence: ``item_sim_measure='item_cooccurrence_count'``), or that has no
        row in ``item_features`` (feature similarity: diversity, serendipity):

        * ``"error"`` (the default) refuses the call naming the item;
        * ``"drop"`` leaves such recommendations out of every metric, as if they had
          not been made (a cold item then counts neither in coverage nor in a list's
          novelty or diversity);
        * ``"recommenders"``: Microsoft Recommenders' own convention (their
          ``python_evaluation`` code, 1.2.1): such a recommendation stays a row of
          every metric. ``novelty``: it adds 0 to the sum, and the mean still divides
          by every recommendation (their inner merge of item counts and novelties).
          ``catalog_coverage``: it counts among the distinct recommended items, while
          the catalogue is still the items of the interactions, so coverage can exceed
          1. ``intra_list_diversity`` and ``serendipity``: every pair with no
          similarity (a cold item, an item without a vector, a history item without
          a vector) counts similarity 0 (their ``fillna(0)``), and the means still
          count those pairs. A user without history is left out of ``serendipity``
          (their inner merge with ``train_df``). Metrics Recommenders lacks
          (``gini_index``, ``average_popularity``, ``long_tail_share``) are refused
          under this policy.
    relevance
        A column of the recommendations weighting each item's serendipity (Microsoft
        Recommenders' ``col_relevance``; they store it as float16, so give 0/1 or other
        values float16 holds to get their numbers); ``None``: 1 for every item.

    Returns
    -------
    pl.DataFrame or pl.LazyFrame
        The ``by`` keys and one ``Float64`` column per metric; the same kind as
        ``recommendations``, nothing computed before ``collect()`` for a LazyFrame.

    Raises
    ------
    MetricParameterError
        A metric reads a table that was not passed (the message names the argument), or
        is an accuracy metric (use :func:`~polars_irmetrics.evaluate`).
    ColumnNotFoundError, ColumnTypeError
        A missing column, ids of different kinds in two tables, or a feature column that
        is not a list or array of numbers.
    InvalidValueError, DuplicateError
        When the plan runs: a recommended item the interactions or the item features
        lack, a user without history (serendipity), an empty interactions table, a
        null, empty, zero, NaN or ragged feature vector, an item twice in one list, a
        bad rank or score, a column ``sample`` (the library's column of a stochastic
        policy's sampled rankings) with more than one value for a user (its samples
        would be read as one list: pass one sample, or drop or rename the column).

    Notes
    -----
    The definitions are Microsoft Recommenders' ``python_evaluation`` functions (same
    values, tested to 1e-12), with similarity from item feature vectors
    (``item_sim_measure='item_feature_vector'``); see ``irm.get_metric(name).formula``.
    The diversity of a one-item list is undefined and left out of the mean over users,
    as theirs. Where they drop rows (a recommended item without interactions counts 0
    novelty there, a user without history is left out of serendipity), this function
    raises instead, unless ``unseen_items='recommenders'`` asks for their convention.
    Their default similarity, ``item_sim_measure='item_cooccurrence_count'``, is a
    parameter of ``intra_list_diversity`` and ``serendipity``:
    ``"diversity(item_sim_measure='item_cooccurrence_count')"`` reads the interactions
    (users who interacted with both items, normalised) instead of item features.

    Examples
    --------
    Two users, three catalogue items (``a`` has 2 of the 4 interactions):

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> recs = pl.DataFrame({"user_id": [1, 1, 2], "item_id": ["a", "b", "a"]})
    >>> history = pl.DataFrame({"user_id": [1, 2, 2, 3], "item_id": ["c", "a", "b", "a"]})
    >>> irm.beyond_accuracy(recs, ["coverage", "novelty"], interactions=history)
    shape: (1, 2)
    ┌──────────┬──────────┐
    │ coverage ┆ novelty  │
    │ ---      ┆ ---      │
    │ f64      ┆ f64      │
    ╞══════════╪══════════╡
    │ 0.666667 ┆ 1.333333 │
    └──────────┴──────────┘

    Coverage is 2 of 3 items; novelty is the mean of ``-log2(2/4)``, ``-log2(1/4)`` and
    ``-log2(2/4)``, (1 + 2 + 1) / 3. An item the interactions never saw has no
    popularity, and is an error rather than a row left out:

    >>> recs = pl.DataFrame({"user_id": [1], "item_id": ["z"]})
    >>> irm.beyond_accuracy(recs, ["novelty"], interactions=history)
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: item 'z' (recommended to user 1) never \
occurs in the interactions, so it has no popularity (1 recommendations name such \
items): add its interactions to interactions=..., or drop it from the recommendations

    Microsoft Recommenders' convention instead: the cold item adds 0 novelty (the mean
    still counts its row) and counts among the covered items (of a catalogue of 3):

    >>> irm.beyond_accuracy(
    ...     recs, ["novelty", "coverage"], interactions=history, unseen_items="recommenders"
    ... )
    shape: (1, 2)
    ┌─────────┬──────────┐
    │ novelty ┆ coverage │
    │ ---     ┆ ---      │
    │ f64     ┆ f64      │
    ╞═════════╪══════════╡
    │ 0.0     ┆ 0.333333 │
    └─────────┴──────────┘
    """
    tables = {"interactions": interactions, "item_features": item_features}
    options = {
        "by": by,
        "query_id": user_id,
        "doc_id": item_id,
        "order": order,
        "rank": rank,
        "score": score,
        "serendipity_relevance": relevance,
        "features": features,
        "unseen_items": unseen_items,
    }
    try:
        return evaluate_tables(
            recommendations,
            metrics,
            tables,
            options,
            route="recsys",
            caller="irm.beyond_accuracy",
            table_name="recommendations",
        )
    except IrmError as error:  # the refusal in this door's keywords
        text = str(error)
        said = in_recsys_words(text)
        if said == text:
            raise
        raise type(error)(said) from None


#: :func:`~polars_irmetrics.evaluate`'s keywords as :func:`beyond_accuracy` names them.
_WORDS = (("serendipity_relevance", "relevance"), ("query_id", "user_id"), ("doc_id", "item_id"))


def in_recsys_words(text: str) -> str:
    """``text`` with the keywords of :func:`~polars_irmetrics.evaluate` (``query_id=``,
    ``doc_id=``, ``serendipity_relevance=``) as :func:`beyond_accuracy` takes them.

    >>> in_recsys_words("query_id='a' and doc_id='a' name the same column; pass doc_id=")
    "user_id='a' and item_id='a' name the same column; pass item_id="
    """
    for theirs, ours in _WORDS:
        text = re.sub(rf"\b{theirs}=", f"{ours}=", text)
    return text
