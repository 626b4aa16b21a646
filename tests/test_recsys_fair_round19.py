"""Round 19 of the recommender and fairness metrics: defects found by probing."""

from __future__ import annotations

import warnings

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

RUN = pl.DataFrame(
    {"query_id": ["u1", "u1", "u2"], "doc_id": ["a", "b", "a"], "score": [2.0, 1.0, 1.0]}
)
TEST = pl.DataFrame({"query_id": ["u1", "u2"], "doc_id": ["a", "b"], "relevance": [1, 1]})
NULL_USER = pl.DataFrame({"query_id": ["u1", None, "u3"], "doc_id": ["a", "b", "c"]})
NO_HISTORY = pl.DataFrame(schema={"query_id": pl.String, "doc_id": pl.String})


@pytest.mark.parametrize(
    ("metrics", "interactions", "message"),
    [
        # Elliot's PopRSP / PopREO of bad interactions are NaN (0 / 0), and their NaN
        # warning used to come before the refusal of the input it came from
        (
            ["pop_rsp@2"],
            NULL_USER,
            "the interactions have 1 row(s) with a null 'query_id' or 'doc_id'",
        ),
        (
            ["pop_reo@2", "ndcg@2"],
            NULL_USER,
            "the interactions have 1 row(s) with a null 'query_id' or 'doc_id'",
        ),
        (["pop_rsp@2"], NO_HISTORY, "the interactions table has no rows"),
        (["pop_reo@2", "aclt@2"], NO_HISTORY, "the interactions table has no rows"),
    ],
)
def test_bad_history_is_refused_before_any_nan_warning(
    metrics: list[str], interactions: pl.DataFrame, message: str
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(InvalidValueError) as raised:
            irm.evaluate(RUN, metrics, qrels=TEST, interactions=interactions)
    assert str(raised.value).startswith(message)
    assert [str(w.message) for w in caught] == []
