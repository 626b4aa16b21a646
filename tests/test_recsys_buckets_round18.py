"""Round 18 out of core: a recommended item the history lacks is refused with the whole
table's example and count under ``buckets=``, as the one plan refuses it.

Each bucket's plan refused its own users' unseen items: ``buckets=2`` named the first
item of whichever bucket ran first and counted that bucket's rows only ("item '81'
(recommended to user '2') ... (1 recommendations name such items)" where one machine
says "item '80' (recommended to user '1') ... (3 recommendations ...)"). The whole
table's unseen items are now counted once before any bucket runs (the merge Spark and
Dask use: recsys.plan.unseen_items, merge_unseen_items, raise_on_unseen_items).
"""

from __future__ import annotations

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

#: users 1, 2, 3 recommended items 80, 81, 82 that the history never holds: 3 rows name
#: such items, the first (by item) '80', recommended to user '1'
RUN = pl.DataFrame(
    {
        "query_id": ["1", "1", "2", "3"],
        "doc_id": ["10", "80", "81", "82"],
        "score": [0.9, 0.8, 0.7, 0.6],
    }
)
SYSTEMS = pl.DataFrame(
    {
        "system": ["A"] * 3 + ["B"] * 3,
        "query_id": ["1", "1", "2"] * 2,
        "doc_id": ["10", "11", "12", "80", "81", "82"],
        "score": [0.9, 0.8, 0.7] * 2,
    }
)
HISTORY = pl.DataFrame({"query_id": ["1", "2", "1"], "doc_id": ["10", "12", "11"]})
_REFUSED = (
    "item '80' (recommended to user '1') never occurs in the interactions, so it has no "
    "popularity (3 recommendations name such items): add its interactions to "
    "interactions=..., or drop it from the recommendations"
)
_CASES = [("plain", RUN, {}), ("systems", SYSTEMS, {"systems": ["system"]})]


@pytest.mark.parametrize("metric", ["novelty@5", "catalog_coverage@5"])
@pytest.mark.parametrize("buckets", [None, 2, 3])
@pytest.mark.parametrize(("name", "run", "options"), _CASES, ids=[c[0] for c in _CASES])
def test_unseen_item_refused_as_one_plan(
    name: str, run: pl.DataFrame, options: dict[str, object], buckets: int | None, metric: str
) -> None:
    with pytest.raises(InvalidValueError) as refused:
        irm.evaluate(run, [metric], interactions=HISTORY, buckets=buckets, **options)  # type: ignore[arg-type]
    assert str(refused.value) == _REFUSED


def test_seen_items_evaluate_in_buckets() -> None:
    """Every item in the history: the buckets' values are the one plan's."""
    seen = RUN.filter(pl.col("doc_id") == "10")
    one = irm.evaluate(seen, ["novelty@5"], interactions=HISTORY)
    assert irm.evaluate(seen, ["novelty@5"], interactions=HISTORY, buckets=2).equals(one)
