"""Round 35, trust at the joints (2): ids spelt apart get the hint wherever they are
refused; a column no metric reads is refused, never ignored; integers a Float64 would
round are refused, never read rounded."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError


def _frame(frame: pl.DataFrame, lazy: bool) -> Any:
    return frame.lazy() if lazy else frame


def _collected(got: Any) -> Any:
    """A result, a LazyFrame collected (where its checks raise)."""
    return got.collect() if isinstance(got, pl.LazyFrame) else got


_PS_RUN = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d1", "d1"], "rank": [1, 1]})
_PS_QRELS = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d1", "d1"], "relevance": [1, 1]})
_PS_QUERY = (
    "propensities= has a 'query_id' column, which the propensity-scored metrics do not "
    "read: they weigh {}, the same in every query, not one per ('query_id', '{}'); drop "
    "the column, with one row per '{}', e.g. propensities.drop('query_id').unique()"
)


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize(
    ("table", "message"),
    [
        # before: a document under two queries refused as listed twice, no word of why
        (
            {"query_id": ["q1", "q2"], "doc_id": ["d1", "d1"], "propensity": [0.5, 0.25]},
            _PS_QUERY.format(
                "a relevant document by its one propensity (pyxclib's per-label one)",
                "doc_id",
                "doc_id",
            ),
        ),
        # before: read as d1's propensity in every query (q2's 0.5 too), the column ignored
        (
            {"query_id": ["q1"], "position": [1], "propensity": [0.5]},
            _PS_QUERY.format(
                "a click at a rank by that rank's one examination propensity",
                "position",
                "position",
            ),
        ),
    ],
)
def test_propensities_with_a_query_column_refused(
    table: dict[str, list[Any]], message: str, lazy: bool
) -> None:
    with pytest.raises(InvalidValueError) as caught:
        irm.evaluate(
            _frame(_PS_RUN, lazy),
            ["ps_precision@1"],
            qrels=_frame(_PS_QRELS, lazy),
            propensities=_frame(pl.DataFrame(table), lazy),
        )
    assert str(caught.value) == message
