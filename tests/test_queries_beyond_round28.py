"""``queries=`` beside the beyond-accuracy metrics alone, on every path (round 28).

One machine refuses it (the beyond-accuracy metrics take their ``by=`` keys from the
recommendation table's own columns); Spark and Dask accepted it and placed the keys,
giving values by a grouping one machine refuses. They refuse it with one machine's
words now, checked before anything is computed.
"""

from __future__ import annotations

import re
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from tests.helpers import engine_io
from tests.test_engines_round13 import ENGINES

RUN = pl.DataFrame(
    {"query_id": ["a", "a", "b", "b"], "doc_id": ["x", "y", "x", "y"], "rank": [1, 2, 1, 2]}
)
HISTORY = pl.DataFrame({"query_id": ["a", "b", "c"], "doc_id": ["x", "y", "x"]})
QUERIES = pl.DataFrame({"query_id": ["a", "b"], "day": [1, 2]})
REFUSED = (
    "queries= is not read by the beyond-accuracy metrics (novelty@k, catalog_coverage@k, "
    "intra_list_diversity@k...): they read the recommendation table, interactions= and "
    "item_features=, and the by= keys from its own columns; drop queries="
)
CASES = [["surprisal@2"], ["novelty@2"], ["catalog_coverage@2"], ["novelty@2", "surprisal@2"]]
OPTIONS: list[dict[str, Any]] = [{}, {"by": ["day"]}]


@pytest.mark.parametrize("options", OPTIONS, ids=["no by", "by a key of queries="])
@pytest.mark.parametrize("metrics", CASES, ids=[", ".join(c) for c in CASES])
@pytest.mark.parametrize("route", ["one machine", *ENGINES])
def test_queries_beside_beyond_accuracy_alone_is_refused(
    route: str, metrics: list[str], options: dict[str, Any], request: pytest.FixtureRequest
) -> None:
    if route == "one machine":
        evaluate, to_engine, back = irm.evaluate, lambda f: f, lambda f: f
    else:
        evaluate, to_engine, back = engine_io(route, request)
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(REFUSED)}$"):
        back(
            evaluate(
                to_engine(RUN),
                metrics,
                interactions=to_engine(HISTORY),
                queries=to_engine(QUERIES),
                **options,
            )
        )
