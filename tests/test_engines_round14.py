"""Spark's and Dask's errors that were not one machine's (round 14).

* A recommended item the interactions never hold, under a metric that reads the items'
  popularity (``novelty@k``, merged from the items' counts; ``arp@k``, from each user's
  value): each part refused its own users' recommendations, so the count and the
  example were that part's and changed with the partition count. The engines count the
  whole run's such items now and refuse them with one machine's message.
"""

from __future__ import annotations

import re

import polars as pl
import pytest

import polars_irmetrics as irm
from tests.helpers import engine_io
from tests.test_engines_round13 import ENGINES

USERS = [f"u{i}" for i in range(12)]
RUN = pl.DataFrame(
    {
        "query_id": [u for u in USERS for _ in range(2)],
        # every user's second item ('z1', 'z3', ...) is in no interaction
        "doc_id": [f"i{(3 * k) % 7}" if k % 2 == 0 else f"z{k}" for k in range(24)],
        "rank": [1, 2] * 12,
    }
)
HISTORY = pl.DataFrame({"query_id": USERS * 2, "doc_id": [f"i{k % 7}" for k in range(24)]})
UNSEEN = (
    "item 'z1' (recommended to user 'u0') never occurs in the interactions, so it has no "
    "popularity (12 recommendations name such items): add its interactions to "
    "interactions=..., or drop it from the recommendations"
)
#: (metric, message): one machine's, whichever route the engines merge the metric by
CASES = [("novelty@2", UNSEEN), ("arp@2", UNSEEN)]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("partitions", [1, 2, 3])
@pytest.mark.parametrize(("metric", "message"), CASES, ids=[c[0] for c in CASES])
def test_unseen_items_are_counted_over_the_whole_run(
    metric: str, message: str, partitions: int, engine: str, request: pytest.FixtureRequest
) -> None:
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(RUN, [metric], interactions=HISTORY)
    evaluate, to_engine, back = engine_io(engine, request)
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        back(
            evaluate(
                to_engine(RUN),
                [metric],
                interactions=to_engine(HISTORY),
                partitions=partitions,
            )
        )
