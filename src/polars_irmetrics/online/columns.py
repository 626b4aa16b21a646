"""The column names of an impression log, carried as one object.

Every online entry point (:func:`~polars_irmetrics.evaluate_online`,
:func:`~polars_irmetrics.ab_test`, :func:`~polars_irmetrics.interleaving_test`) takes
the names as keyword arguments and packs them into one :class:`LogColumns`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from polars_irmetrics.errors import ColumnTypeError
from polars_irmetrics.ground.options import (
    EvalOptions,
    check_column_name,
    check_key_roles,
    shared_column_error,
)

__all__ = ["LogColumns", "article", "refuse_data_keys", "refuse_nested"]


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


def article(word: str) -> str:
    """``word`` after its indefinite article (by its first letter: ``an arm``, ``a
    session_id``, ``a user_id``, which is said "you").

    >>> article("arm"), article("session_id"), article("user_id")
    ('an arm', 'a session_id', 'a user_id')
    """
    return f"{'an' if word[:1].lower() in 'aeio' else 'a'} {word}"


def refuse_nested(schema: pl.Schema, roles: dict[str, str]) -> None:
    """Refuse a key column (``roles``: its name, then what it is, e.g. ``"the arm"``)
    of nested dtype (List, Array, Struct): a key is one value per row. Columns not in
    ``schema`` are left to the missing-column check.

    >>> refuse_nested(pl.Schema({"arm": pl.List(pl.String)}), {"arm": "the arm"})
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.ColumnTypeError: column 'arm' of the log has dtype List(String); ...
    """
    for name, role in roles.items():
        dtype = schema.get(name)
        if dtype is None or not dtype.is_nested():
            continue
        if isinstance(dtype, pl.Struct):
            fields = [field.name for field in dtype.fields]
            fix = f"pl.col({name!r}).struct.field({(fields or ['...'])[0]!r})"
        else:
            fix = f"pl.col({name!r}).{'arr' if isinstance(dtype, pl.Array) else 'list'}.first()"
        raise ColumnTypeError(
            f"column {name!r} of the log has dtype {dtype}; {role} must be one value per row "
            f"(a string or an integer), not a nested value: take one, e.g. {fix}"
        )


def refuse_data_keys(
    by: Sequence[str],
    columns: LogColumns,
    metrics: str = "the metrics",
    reads: Mapping[str, Sequence[str]] | None = None,
    *,
    segments: bool = False,
) -> None:
    """Refuse a segment key of ``by`` that names a column the click metrics read as
    their data, which varies within a session: the positions and the clicks, and the
    dwell times, conversions or timestamps that an asked metric reads (``reads``: each
    such column's role with the labels of its readers,
    :func:`~polars_irmetrics.online.sessions.column_readers`), by
    :func:`~polars_irmetrics.ground.options.check_key_roles`, the check of every
    evaluating door. ``metrics``: the asked metrics as a message names them;
    ``segments``: word the refusal as a test's segment key.

    >>> refuse_data_keys(["day", "converted"], LogColumns(),
    ...                  reads={"converted": ["conversion_rate"]}, segments=True)
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: by=['day', 'converted'] names 'converted', ...
    """
    options = EvalOptions(
        by=tuple(by),
        rank=columns.position,
        clicked=columns.clicked,
        dwell=columns.dwell,
        converted=columns.converted,
        timestamp=columns.timestamp,
    )
    check_key_roles(options, ["online"], metrics, reads=reads, segments=segments)


def check_log_names(roles: Mapping[str, object]) -> None:
    """Refuse a column role (``session_id``, ``position``, ``clicked``, ...) given
    anything but one name, and two roles naming one column: ``session_id='position'``
    grouped the impressions by their position, a wrong mean given in silence (or a
    duplicate-position error that names neither option).

    >>> check_log_names({"session_id": "position", "position": "position"})
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: session_id='position' and position='position' ...
    """
    for role, value in roles.items():
        check_column_name(role, value)
    seen: dict[object, str] = {}
    for role, value in roles.items():
        if value in seen:
            raise shared_column_error(seen[value], role, value)
        seen[value] = role
