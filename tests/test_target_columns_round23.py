"""target= read whole or refused: a column of it no measure reads (a weight, a label,
a query column named otherwise than the run's) is refused naming it, on one machine
(DataFrame and LazyFrame), on Spark and on Dask; the columns it may hold (the groups,
``target``, the run's query column for a per-query target) are read as before."""

from __future__ import annotations

import re
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

from .helpers import engine_io

RUN = pl.DataFrame({"query_id": ["q1"] * 4, "doc_id": ["a", "b", "c", "d"], "rank": [1, 2, 3, 4]})
QRELS = pl.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["a", "c"], "relevance": [1, 1]})
GROUPS = pl.DataFrame({"doc_id": ["a", "b", "c", "d"], "group": ["x", "y", "x", "y"]})
TARGET = pl.DataFrame({"group": ["x", "y"], "target": [0.5, 0.5]})


def _refusal(column: str) -> str:
    return re.escape(
        f"column {column!r} of the target (target=) is not read: a target holds 'group', "
        "'target' (and 'query_id', the run's query column, for a target per query); drop "
        "the column, or name a query column as the run names it"
    )


UNREAD = [
    ("weight", TARGET.with_columns(weight=pl.lit(3))),
    ("qid", TARGET.with_columns(qid=pl.lit("q1"))),
    ("label", TARGET.with_columns(label=pl.lit("women"))),
]


@pytest.mark.parametrize(("column", "target"), UNREAD)
@pytest.mark.parametrize("lazy", [False, True])
def test_an_unread_target_column_is_refused(column: str, target: pl.DataFrame, lazy: bool) -> None:
    tables: dict[str, Any] = {"qrels": QRELS, "groups": GROUPS, "target": target}
    run: Any = RUN
    if lazy:
        run, tables = RUN.lazy(), {k: v.lazy() for k, v in tables.items()}
    with pytest.raises(InvalidValueError, match=_refusal(column)):
        irm.evaluate(run, ["awrf"], **tables)


@pytest.mark.parametrize("engine", ["spark", "dask"])
def test_engines_refuse_an_unread_target_column(
    engine: str, request: pytest.FixtureRequest
) -> None:
    evaluate, to_engine, _ = engine_io(engine, request)
    tables = {"qrels": QRELS, "groups": GROUPS, "target": UNREAD[0][1]}
    with pytest.raises(InvalidValueError, match=_refusal("weight")):
        evaluate(to_engine(RUN), ["awrf"], **{k: to_engine(v) for k, v in tables.items()})


def test_the_columns_a_target_holds_are_read_as_before() -> None:
    per_query = TARGET.with_columns(query_id=pl.lit("q1")).select("query_id", "group", "target")
    skewed = TARGET.with_columns(target=pl.Series([0.9, 0.1]))
    values = [
        irm.evaluate(RUN, ["awrf"], qrels=QRELS, groups=GROUPS, target=t)["awrf"].item()
        for t in (TARGET, per_query, skewed)
    ]
    assert values[0] == values[1]  # one query: its own target is the one target
    assert values[2] != values[0]  # the target is read
