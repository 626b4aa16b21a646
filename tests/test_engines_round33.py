"""Round 33 engines: where several parts refuse their rows, Spark and Dask raise the
error one machine raises.

One machine checks the whole input in a fixed order (a null id before a document
listed twice, and within a check the first query in key order) and raises the first
problem found. Each part of an engine checks its own queries in that order, and the
engines raised the error of the part whose task failed first: a run with a null
document in q0 and a document listed twice in every other query gave Spark's and
Dask's ``DuplicateError`` of q1, q10, q13 or q14 (by the tasks' timing) where one
machine names the null document of q0. The parts now hand such an error on
(``held_part``) and the engine raises the least of them: one machine's, whichever
part holds it.
"""

from __future__ import annotations

import warnings

import polars as pl
import pytest

import polars_irmetrics as irm
from tests.helpers import engine_io

#: 16 queries of two listings of 'a': q0's second has no document, every other query
#: lists 'a' twice (the 16 queries fall in every part of 8)
RUN = pl.DataFrame(
    {
        "query_id": [f"q{i}" for i in range(16) for _ in range(2)],
        "doc_id": [None if i == 0 and j == 1 else "a" for i in range(16) for j in range(2)],
        "rank": [1, 2] * 16,
    }
)
QRELS = pl.DataFrame({"query_id": [f"q{i}" for i in range(16)], "doc_id": "a", "relevance": 1})

#: one machine's error: the null checked before the duplicates, q0 the first query
NULL_Q0 = (
    "column 'doc_id' of the run has 1 null value(s) in query 'q0'; every row needs a "
    "document id: drop them, e.g. .drop_nulls('doc_id')"
)


@pytest.mark.parametrize(
    ("engine", "per_query"),
    [("spark", False), ("dask", False), ("dask", True)],
    ids=["spark", "dask", "dask per query"],
)
def test_the_least_of_the_parts_refusals_is_raised(
    engine: str, per_query: bool, request: pytest.FixtureRequest
) -> None:
    with pytest.raises(irm.InvalidValueError) as one:
        irm.evaluate(RUN, ["P@2"], qrels=QRELS, per_query=per_query)
    assert str(one.value) == NULL_Q0
    evaluate, to_engine, back = engine_io(engine, request)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(irm.IrmError) as raised:
            back(
                evaluate(
                    to_engine(RUN),
                    ["P@2"],
                    qrels=to_engine(QRELS),
                    partitions=8,
                    per_query=per_query,
                )
            )
    assert (type(raised.value), str(raised.value)) == (irm.InvalidValueError, NULL_Q0)
    # a refused run warns of nothing, as on one machine
    assert [str(w.message) for w in caught if issubclass(w.category, irm.IrmWarning)] == []
