"""Round 13: an empty feature vector of a recommended item is refused by serendipity as
by intra_list_diversity (no polars error), on one machine and on Dask."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError
from tests.helpers import engine_io

RECS = pl.DataFrame({"user_id": [1, 1], "item_id": [1, 2], "rank": [1, 2]})
HISTORY = pl.DataFrame({"user_id": [1, 1], "item_id": [1, 3]})
#: item 1, recommended and in the history, has an empty vector
FEATURES = pl.DataFrame(
    {"item_id": [1, 2, 3], "features": [[], [0.0, 1.0], [1.0, 1.0]]},
    schema={"item_id": pl.Int64, "features": pl.List(pl.Float64)},
)
#: the same tables in the ranking metrics' column names (irm.evaluate, the engines)
RUN = RECS.rename({"user_id": "query_id", "item_id": "doc_id"})
RUN_HISTORY = HISTORY.rename({"user_id": "query_id", "item_id": "doc_id"})
RUN_FEATURES = FEATURES.rename({"item_id": "doc_id"})
EMPTY = (
    "item 1 has an empty (zero-length) feature vector in item_features (1 items): give "
    "every item a vector of the same length"
)

EMPTY_VECTOR_CASES: list[tuple[str, Callable[[], Any]]] = [
    (
        "diversity",
        lambda: irm.beyond_accuracy(RECS, ["intra_list_diversity"], item_features=FEATURES),
    ),
    (
        "serendipity",
        lambda: irm.beyond_accuracy(
            RECS, ["serendipity"], interactions=HISTORY, item_features=FEATURES
        ),
    ),
    (
        "serendipity-cut",
        lambda: irm.beyond_accuracy(
            RECS, ["serendipity@1"], interactions=HISTORY, item_features=FEATURES
        ),
    ),
    (
        "serendipity-and-diversity",
        lambda: irm.beyond_accuracy(
            RECS,
            ["serendipity", "intra_list_diversity"],
            interactions=HISTORY,
            item_features=FEATURES,
        ),
    ),
    (
        "serendipity-lazy",
        lambda: irm.beyond_accuracy(
            RECS.lazy(), ["serendipity"], interactions=HISTORY, item_features=FEATURES
        ).collect(),
    ),
    (
        "evaluate",
        lambda: irm.evaluate(
            RUN, ["serendipity@2"], interactions=RUN_HISTORY, item_features=RUN_FEATURES
        ),
    ),
]


@pytest.mark.parametrize(
    "call", [pytest.param(call, id=name) for name, call in EMPTY_VECTOR_CASES]
)
def test_an_empty_vector_of_a_recommended_item_is_refused(call: Callable[[], Any]) -> None:
    with pytest.raises(InvalidValueError, match=f"^{re.escape(EMPTY)}$"):
        call()


def test_an_empty_vector_of_a_recommended_item_is_refused_on_dask(
    request: pytest.FixtureRequest,
) -> None:
    evaluate, frame, back = engine_io("dask", request)
    with pytest.raises(InvalidValueError, match=f"^{re.escape(EMPTY)}$"):
        back(
            evaluate(
                frame(RUN),
                ["serendipity@2"],
                interactions=frame(RUN_HISTORY),
                item_features=frame(RUN_FEATURES),
                partitions=2,
            )
        )
