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

from polars_irmetrics.ground.options import UnseenItems

__all__ = ["RecsysOptions", "Tables"]


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
    #: The function the user called, for error messages.
    caller: str = "irm.beyond_accuracy"
    #: One row per (``by`` group, user) with each user's value, not their summary
    #: (``irm.evaluate(..., per_query=True)``; RePlay's ``PerUser`` mode).
    per_user: bool = False

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
    """

    recommendations: pl.LazyFrame
    interactions: pl.LazyFrame | None = None
    item_features: pl.LazyFrame | None = None
