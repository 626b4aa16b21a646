"""The column names of an impression log, carried as one object.

Every online entry point (:func:`~polars_irmetrics.evaluate_online`,
:func:`~polars_irmetrics.ab_test`, :func:`~polars_irmetrics.interleaving_test`) takes
the names as keyword arguments and packs them into one :class:`LogColumns`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

__all__ = ["LogColumns"]


@dataclass(frozen=True)
class LogColumns:
    """The names of an impression log's columns; the defaults are the library's.

    Attributes
    ----------
    session_id
        The session (or query) an impression was shown in: the unit a click metric is
        computed over.
    user_id
        The user (the usual randomization unit of an A/B test).
    position
        Where the item was shown, 1 = top (an integer).
    item_id
        The item shown (only read where a check names it).
    clicked
        Whether the impression was clicked (Boolean, or integers 0/1).
    dwell
        Seconds spent on the clicked item (numeric, >= 0; null for no click).
    converted
        Whether the impression led to a conversion (Boolean, or integers 0/1).
    timestamp
        When the impression was shown (Datetime, Date, or seconds as a number).
    team
        In an interleaving log, the system (team) that contributed the impression.

    Examples
    --------
    >>> from polars_irmetrics.online.columns import LogColumns
    >>> LogColumns(session_id="query_id").replace(clicked="click").clicked
    'click'
    """

    session_id: str = "session_id"
    user_id: str = "user_id"
    position: str = "position"
    item_id: str = "item_id"
    clicked: str = "clicked"
    dwell: str = "dwell"
    converted: str = "converted"
    timestamp: str = "timestamp"
    team: str = "team"

    def replace(self, **changes: Any) -> LogColumns:
        """A copy with some names changed."""
        return dataclasses.replace(self, **changes)
