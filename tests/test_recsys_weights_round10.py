"""serendipity's relevance weights are checked (round 10): a null weight left the item
out as if it had not been recommended (0.1464, item a alone, where a weight of 0 gives
0.0732), an all-null column gave null and a NaN weight NaN, in silence."""

from __future__ import annotations

import re

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

HISTORY = pl.DataFrame({"user_id": [1, 1], "item_id": ["c", "a"]})
FEATURES = pl.DataFrame({"item_id": list("abc"), "features": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]})


def _recs(weights: list[float | None]) -> pl.DataFrame:
    return pl.DataFrame({"user_id": [1, 1], "item_id": ["a", "b"], "rank": [1, 2], "rel": weights})


@pytest.mark.parametrize("bad", [None, float("nan"), float("inf")], ids=["null", "nan", "inf"])
@pytest.mark.parametrize("door", ["beyond_accuracy", "evaluate"])
def test_a_weight_that_is_no_number_is_refused(bad: float | None, door: str) -> None:
    keyword = "relevance" if door == "beyond_accuracy" else "serendipity_relevance"
    message = (
        "column 'rel' has a null, NaN or infinite weight (user 1, item 'b') (1 "
        "recommendation(s) have one): serendipity weighs each recommended item by it "
        f"({keyword}=); give every row a finite weight, e.g. .fill_null(0.0) for an item "
        "of no relevance, or drop those rows"
    )
    recs = _recs([1.0, bad])

    def call() -> object:
        if door == "beyond_accuracy":
            return irm.beyond_accuracy(
                recs,
                ["serendipity"],
                interactions=HISTORY,
                item_features=FEATURES,
                relevance="rel",
            )
        return irm.evaluate(
            recs,
            ["serendipity@2"],
            interactions=HISTORY,
            item_features=FEATURES,
            query_id="user_id",
            doc_id="item_id",
            serendipity_relevance="rel",
        )

    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        call()


def test_a_weight_of_zero_counts_the_item() -> None:
    out = irm.beyond_accuracy(
        _recs([1.0, 0.0]),
        ["serendipity"],
        interactions=HISTORY,
        item_features=FEATURES,
        relevance="rel",
    )
    assert isinstance(out, pl.DataFrame)
    assert out.item() == pytest.approx(0.0732, abs=1e-4)
