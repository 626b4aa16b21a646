"""A ``by=`` key of the run that a side table compared query by query lacks (the
reference of the rank-similarity metrics, neighbors= of neighbour recall): as the
judgments' (:func:`~polars_irmetrics.ground.validate.raise_unplaced`), a query of the
side table that some segment did not retrieve cannot be placed, and is refused, naming
the fixes; ``systems=`` scores each system on every query of the side table, and
``unretrieved='drop'`` each segment on the queries it retrieved."""

from __future__ import annotations

import re
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import QuerySetError

#: q1 ranked by segment x only, q2 by y only; the side table names both, with no segment
RUN = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2"],
        "doc_id": ["a", "b", "a"],
        "rank": [1, 2, 1],
        "score": [-1.0, -2.0, -1.0],
        "grp": ["x", "x", "y"],
    }
)
SIDE = RUN.drop("grp")


def _message(table: str, verb: str, one: str, many: str, how: str, scored: str) -> str:
    return (
        f"by key 'grp' is in the run but not in {table}: {table} {verb} not say which 'grp' "
        f"each {one} belongs to, so 2 {many} that some of the 2 groups did not retrieve "
        "cannot be placed (e.g. query 'q1': the run lists it under grp='x', and "
        f"{table} cannot tell whether it belongs to the other groups too). If 'grp' is an "
        f"attribute of the query (day, market, segment), give each {one} its 'grp': {how}; "
        f"if it names systems or runs ({scored}), pass systems='grp' instead of by=; or "
        "pass unretrieved='drop' to score each group on the queries it retrieved"
    )


#: (metric, its side table's keyword, the message, each segment's value under drop)
CASES: list[tuple[str, str, str, float]] = [
    (
        "rbo",
        "reference",
        _message(
            "the reference",
            "does",
            "query of the reference",
            "queries of the reference",
            "in a 'grp' column of the reference",
            "each compared with the reference on every query",
        ),
        1.0,
    ),
    (
        "neighbor_recall@1",
        "neighbors",
        _message(
            "neighbors=",
            "does",
            "query of neighbors=",
            "queries of neighbors=",
            "in a 'grp' column of neighbors=",
            "each compared with neighbors= on every query",
        ),
        1.0,
    ),
]


@pytest.mark.parametrize(
    ("metric", "keyword", "message", "value"), CASES, ids=[c[0] for c in CASES]
)
@pytest.mark.parametrize("lazy", [False, True])
def test_a_query_the_side_table_cannot_place_is_refused(
    metric: str, keyword: str, message: str, value: float, lazy: bool
) -> None:
    run, side = (RUN.lazy(), SIDE.lazy()) if lazy else (RUN, SIDE)
    given: dict[str, Any] = {keyword: side}

    def evaluate(**options: Any) -> pl.DataFrame:
        out = irm.evaluate(run, [metric], **given, **options)
        return out.collect() if isinstance(out, pl.LazyFrame) else out

    # each segment once scored 0 on the query it never retrieved, in silence: 0.5
    with pytest.raises(QuerySetError, match=re.escape(message)):
        evaluate(by="grp")
    assert evaluate(by="grp", unretrieved="drop").rows() == [("x", 1, value), ("y", 1, value)]
    # systems: each scored on every query of the side table (0 where it retrieved none)
    assert evaluate(systems="grp").rows() == [("x", 2, value / 2), ("y", 2, value / 2)]
