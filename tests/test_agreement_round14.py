"""Round 14 of the agreement fixes.

1. ``system_agreement`` (and ``plot_swaps``, the same reading): ``metric=`` or
   ``metric_b=`` naming the system or query-id column, or ``query_id=`` naming the value
   column, raised polars' ``DuplicateError`` (one column selected twice); and
   ``system=`` and ``query_id=`` naming one column read the real query ids as a second
   value column and asked for ``metric=``. Each is refused with an
   ``InvalidValueError`` naming the arguments.
2. A system column of a nested dtype (a list of names) raised polars'
   ``InvalidOperationError`` from a cast to text; it is refused with a
   ``ColumnTypeError`` naming the column, its dtype and the fix.
"""

from __future__ import annotations

import re
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.comparison import plot
from polars_irmetrics.errors import ColumnTypeError, InvalidValueError


def _results() -> pl.DataFrame:
    """Three systems on three integer queries, x best, then y, then z."""
    return pl.DataFrame(
        {
            "system": ["x"] * 3 + ["y"] * 3 + ["z"] * 3,
            "query_id": [1, 2, 3] * 3,
            "ndcg": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.1, 0.2, 0.1],
        }
    )


# ------------------------------------------- 1. a value column that is a key column

# (keyword arguments, message)
KEY_COLUMNS: list[tuple[dict[str, Any], str]] = [
    (
        {"metric": "query_id", "higher_is_better": True},
        "metric='query_id' of a is its query-id column (query_id='query_id'), not a "
        "value column; name the value column with metric= (and metric_b= for b)",
    ),
    (
        {"metric": "ndcg", "metric_b": "query_id", "higher_is_better_b": True},
        "metric='query_id' of b is its query-id column (query_id='query_id'), not a "
        "value column; name the value column with metric= (and metric_b= for b)",
    ),
    (
        {"metric": "ndcg", "query_id": "ndcg"},
        "metric='ndcg' of a is its query-id column (query_id='ndcg'), not a value "
        "column; name the value column with metric= (and metric_b= for b)",
    ),
    (
        {"metric": "system", "higher_is_better": True},
        "metric='system' of a is its system column (system='system'), not a value "
        "column; name the value column with metric= (and metric_b= for b)",
    ),
    (
        {"system": "query_id"},
        "system='query_id' and query_id='query_id' name one column of a; each row needs "
        "a system name and a query id in columns of their own: name them with system= "
        "and query_id=",
    ),
]


@pytest.mark.parametrize(("kwargs", "message"), KEY_COLUMNS)
def test_system_agreement_refuses_a_key_column_as_the_value(
    kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.system_agreement(_results(), _results(), **kwargs)


@pytest.mark.parametrize(("kwargs", "message"), KEY_COLUMNS[:1])
def test_plot_swaps_refuses_a_key_column_as_the_value(
    kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        plot.plot_swaps(_results(), _results(), **kwargs)


def test_a_value_column_beside_the_keys_is_still_read() -> None:
    out = irm.system_agreement(_results(), _results(), metric="ndcg")
    assert out.select("systems", "correlation", "swaps").row(0) == (3, 1.0, 0)


# ------------------------------------------------------- 2. a nested system column

NESTED: list[tuple[pl.DataType, Any]] = [
    (pl.List(pl.String), lambda s: [s]),
    (pl.Struct({"name": pl.String}), lambda s: {"name": s}),
]


@pytest.mark.parametrize(("dtype", "wrap"), NESTED)
@pytest.mark.parametrize("side", ["a", "b"])
def test_system_agreement_refuses_a_nested_system_column(
    dtype: pl.DataType, wrap: Any, side: str
) -> None:
    nested = _results().with_columns(
        pl.Series("system", [wrap(s) for s in _results()["system"]], dtype=dtype)
    )
    a, b = (nested, _results()) if side == "a" else (_results(), nested)
    message = (
        f"column 'system' of {side} has dtype {dtype}; each row needs one system name (a "
        "string or an integer): give each row its system's name, e.g. "
        "pl.col('system').list.first() for a list of one name"
    )
    with pytest.raises(ColumnTypeError, match=f"^{re.escape(message)}$"):
        irm.system_agreement(a, b)
