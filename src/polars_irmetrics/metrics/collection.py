"""How a beyond-accuracy formula sees a recommendation table (one ``by`` group of it).

Accuracy metrics are one value per query, a formula over the judged rows of that query
(:mod:`polars_irmetrics.metrics.scope`). Beyond-accuracy metrics (catalogue coverage,
novelty, diversity, serendipity, popularity bias; :mod:`polars_irmetrics.metrics.recsys`)
describe a whole recommendation table: some are one aggregation over every
recommendation of the group (coverage counts distinct items), others a value per user
averaged over users (intra-list diversity). A formula says which, in a
:class:`CollectionFormula`, and reads the per-row quantities it needs from a
:class:`CollectionScope`: the item's popularity in the interactions, its similarity
to the user's history, the pairwise similarity of the user's list. Asking for one
registers it, and the plan (:mod:`polars_irmetrics.recsys.plan`) computes only what the
requested formulas asked for, as columns beside the recommendation rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import polars as pl

from polars_irmetrics.ground.validate import INTERNAL

__all__ = ["COOCCURRENCE", "FEATURES", "CollectionFormula", "CollectionScope", "SimMeasure"]

#: Columns the plan adds to each recommendation row (internal names).
POSITION = f"{INTERNAL}position"
POPULARITY = f"{INTERNAL}popularity"
TOTAL = f"{INTERNAL}interactions"
CATALOG = f"{INTERNAL}catalog"
HISTORY_SIM = f"{INTERNAL}history_sim"
RELEVANCE = f"{INTERNAL}relevance"
ITEM_USERS = f"{INTERNAL}item_users"
USERS = f"{INTERNAL}history_users"
SEEN = f"{INTERNAL}seen"
HAS_HISTORY = f"{INTERNAL}has_history"

#: How two items' similarity is measured (Microsoft Recommenders' ``item_sim_measure``):
#: the cosine of their feature vectors, or the cosine of their columns in the binary
#: user-item matrix of the interactions (co-occurrence counts, normalised).
SimMeasure = Literal["item_feature_vector", "item_cooccurrence_count"]
FEATURES: SimMeasure = "item_feature_vector"
COOCCURRENCE: SimMeasure = "item_cooccurrence_count"


def _cut(k: int | None) -> str:
    return "all" if k is None else str(k)


@dataclass(frozen=True)
class CollectionFormula:
    """A beyond-accuracy formula: what it aggregates and how.

    Attributes
    ----------
    over
        ``"rows"``: ``expr`` is one aggregation over every recommendation row of the
        group (all users together), e.g. the distinct items recommended. ``"users"``:
        ``expr`` is an aggregation over the rows of *one user*, and the metric is the
        mean of the users' values (a null value, such as the diversity of a one-item
        list, is left out of the mean).
    expr
        The aggregation expression.
    absent
        ``None``: the mean is over the users of the recommendations. A number (with
        ``over="users"``, RePlay's ``Novelty``): the mean is over the users of the
        interactions instead; one without recommendations counts ``absent``, and
        ``expr`` is null for a recommended user the interactions lack (left out).
    """

    over: Literal["rows", "users"]
    expr: pl.Expr
    absent: float | None = None
    #: ``over="rows"``: the same aggregation over the item counts of the group (one row
    #: per recommended item, its count within the cutoff in :meth:`CollectionScope.count`
    #: and the item's columns, such as its popularity), which the parts' counts of a
    #: split table add up to (:func:`polars_irmetrics.recsys.plan.merge_counts`): the
    #: same bits as ``expr``. ``None``: the formula reads more than the items' counts.
    counted: pl.Expr | None = None


@dataclass
class CollectionScope:
    """The recommendation rows of one ``by`` group, as a formula sees them.

    Attributes
    ----------
    item
        The recommended item's id.
    needs
        What the formulas asked for, read by the plan: ``"position"``,
        ``"popularity"`` (with the interactions total and catalogue size),
        ``"item_users"`` (the distinct users of each item, and of the interactions),
        ``"seen"`` (whether the user interacted with the item, and has any history),
        ``"history"`` (feature similarity to the user's history), ``"history_cooc"``
        (co-occurrence similarity to it), ``"cooccurrence"`` (some co-occurrence
        similarity: which items the interactions know), ``"relevance"``.
    pair_cutoffs
        The (cutoff, similarity measure) pairs at which the pairwise similarity of each
        user's list is needed.
    head_shares
        Shares of interactions that define a popularity head (long-tail metrics).
    categories
        Columns of the item features joined to each row as the item's category.
    count_cutoffs
        The cutoffs at which the merge of item counts needs each item's count.
    cutoffs
        Every cutoff a formula read the rows within (:meth:`top`; ``None``: every row).
        A formula reads the rows only through :meth:`top` (and the scalars), so where
        every cutoff is a number the plan computes the formulas from the rows within
        the largest one (:func:`~polars_irmetrics.recsys.plan.build_recsys_plan`).
    """

    item: pl.Expr
    needs: set[str] = field(default_factory=set)
    pair_cutoffs: set[tuple[int | None, SimMeasure]] = field(default_factory=set)
    head_shares: set[float] = field(default_factory=set)
    categories: set[str] = field(default_factory=set)
    count_cutoffs: set[int | None] = field(default_factory=set)
    cutoffs: set[int | None] = field(default_factory=set)

    def top(self, k: int | None) -> pl.Expr:
        """Per row: whether it is within the cutoff ``k`` of its user's list."""
        self.cutoffs.add(k)
        if k is None:  # one value per row (a literal would be one value per group)
            return pl.int_range(pl.len()) >= 0
        self.needs.add("position")
        return pl.col(POSITION) <= k

    def within(self, k: int | None, value: pl.Expr) -> pl.Expr:
        """Per row: ``value`` within the cutoff ``k`` (:meth:`top`), null beyond it; for
        an aggregation that skips nulls (a sum, a mean, a count), in place of
        ``value.filter(top(k))``. polars' streaming group-by computes an aggregation of a
        filter, but not arithmetic on one (a fixed-point sum scales, floors and casts
        its terms): ``fixed_sum(value.filter(...))`` sends the whole group-by of every
        formula to the in-memory engine."""
        if k is None:
            self.cutoffs.add(k)
            return value
        return pl.when(self.top(k)).then(value)

    @property
    def popularity(self) -> pl.Expr:
        """Per row: the number of interactions with the row's item (``Float64``)."""
        self.needs.add("popularity")
        return pl.col(POPULARITY)

    @property
    def interactions(self) -> pl.Expr:
        """The number of interactions (rows of the interactions table); a scalar."""
        self.needs.add("popularity")
        return pl.col(TOTAL).first()

    @property
    def catalog_size(self) -> pl.Expr:
        """The number of distinct items in the interactions table; a scalar."""
        self.needs.add("popularity")
        return pl.col(CATALOG).first()

    @property
    def item_users(self) -> pl.Expr:
        """Per row: the distinct users of the interactions who interacted with the row's
        item (``Float64``; null for an item the interactions never saw)."""
        self.needs.add("item_users")
        return pl.col(ITEM_USERS)

    @property
    def history_users(self) -> pl.Expr:
        """The number of distinct users in the interactions (``Float64``); a scalar."""
        return self.history_users_per_row.first()

    @property
    def history_users_per_row(self) -> pl.Expr:
        """Per row: :attr:`history_users`, the same on every row; for a formula over the
        rows (a user's scalar in a per-row formula is broadcast group by group, which
        takes polars' streaming engine off its group-by)."""
        self.needs.add("item_users")
        return pl.col(USERS)

    @property
    def seen(self) -> pl.Expr:
        """Per row: whether the user interacted with the row's item in the interactions."""
        self.needs.add("seen")
        return pl.col(SEEN)

    @property
    def has_history(self) -> pl.Expr:
        """Per row: whether the row's user has any row in the interactions."""
        self.needs.add("seen")
        return pl.col(HAS_HISTORY)

    def category(self, column: str) -> pl.Expr:
        """Per row: the item's value in the ``column`` of the item features (a category,
        one per item)."""
        self.categories.add(column)
        return pl.col(self.category_column(column))

    def history_similarity_by(self, measure: SimMeasure) -> pl.Expr:
        """Per row: the mean similarity (``measure``) of the item to the items of the
        user's history (every interaction of the user, duplicates counted)."""
        self.needs.add("history" if measure == FEATURES else "history_cooc")
        if measure == COOCCURRENCE:
            self.needs.add("cooccurrence")
        return pl.col(HISTORY_SIM if measure == FEATURES else f"{HISTORY_SIM}_cooc")

    @property
    def relevance(self) -> pl.Expr:
        """Per row: the relevance weight of the recommendation (1.0 without a column)."""
        self.needs.add("relevance")
        return pl.col(RELEVANCE)

    def pair_similarity_sum(self, k: int | None, measure: SimMeasure = FEATURES) -> pl.Expr:
        """Per user (repeated on each row): the sum over ordered pairs ``i != j`` of the
        user's top-``k`` items of their similarity (``measure``)."""
        self.pair_cutoffs.add((k, measure))
        if k is not None:
            self.needs.add("position")
        if measure == COOCCURRENCE:
            self.needs.add("cooccurrence")
        return pl.col(self.pair_column(k, measure))

    def in_head(self, share: float) -> pl.Expr:
        """Per row: whether the item is in the popularity head of ``share``."""
        self.head_shares.add(share)
        self.needs.add("popularity")
        return pl.col(self.head_column(share))

    def count(self, k: int | None) -> pl.Expr:
        """Per item, in the merge of item counts (:attr:`CollectionFormula.counted`): how
        many recommendations of the group name the item within the cutoff ``k``
        (``Int64``; 0 where it is recommended only below ``k``)."""
        self.count_cutoffs.add(k)
        return pl.col(self.count_column(k))

    @staticmethod
    def count_column(k: int | None) -> str:
        """The internal column holding :meth:`count` at cutoff ``k``."""
        return f"{INTERNAL}count_{_cut(k)}"

    @staticmethod
    def pair_column(k: int | None, measure: SimMeasure = FEATURES) -> str:
        """The internal column holding :meth:`pair_similarity_sum` at cutoff ``k``."""
        suffix = "" if measure == FEATURES else "_cooc"
        return f"{INTERNAL}pairs_{_cut(k)}{suffix}"

    @staticmethod
    def category_column(column: str) -> str:
        """The internal column holding :meth:`category` of ``column``."""
        return f"{INTERNAL}category_{column}"

    @staticmethod
    def head_column(share: float) -> str:
        """The internal column holding :meth:`in_head` for ``share``."""
        return f"{INTERNAL}head_{share!r}"
