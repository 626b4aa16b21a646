"""Round 15 of the prediction wing: a query id column named ``num_rows``.

``irm.evaluate(table, ["auc"], label=..., prediction=..., query_id="num_rows",
per_query=True)`` returns one row per query with its ``num_rows``: the query id column
of that name was polars' DuplicateError. It is refused, naming the option and the fix,
as a query id named as a metric's column (``query_id='auc'``) is.
"""

from __future__ import annotations

import re

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

_TABLE = pl.DataFrame({"num_rows": [1, 1, 2, 2], "y": [0, 1, 1, 0], "p": [0.1, 0.9, 0.8, 0.3]})


@pytest.mark.parametrize("lazy", [False, True])
def test_per_query_refuses_a_query_id_named_num_rows(lazy: bool) -> None:
    message = (
        "query_id='num_rows' names the column 'num_rows', which is also a column of the "
        "result per query (its rows); rename the key first, e.g. predictions.rename("
        "{'num_rows': 'num_rows_id'}) (and labels= alike), and pass query_id='num_rows_id'"
    )
    table = _TABLE.lazy() if lazy else _TABLE
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(
            table, ["auc", "logloss"], label="y", prediction="p", query_id="num_rows",
            per_query=True,
        )  # fmt: skip


def test_the_means_read_a_query_id_named_num_rows() -> None:
    """Without per_query the result has no query column: gauc reads the ids as any."""
    out = irm.evaluate(_TABLE, ["gauc"], label="y", prediction="p", query_id="num_rows")
    assert out.rows() == [(4, 1.0, 0)]
