"""Spark's and Dask's errors that were not one machine's (round 13).

* A ``by`` key of no table beside the judgments was refused as a key of the run alone
  ("by key 'nope' is in the run but not in the judgments ... pass systems='nope'"),
  untrue, and a fix that does not work: one machine's ``ColumnNotFoundError`` now, from
  the plan each engine builds on empty tables before any job.
"""

from __future__ import annotations

import re
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from tests.helpers import engine_io

ENGINES = ["spark", "dask"]

RUN = pl.DataFrame(
    {"query_id": ["q1", "q2"], "doc_id": ["d", "e"], "score": [1.0, 2.0], "day": ["a", "b"]}
)
QRELS = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d", "e"], "relevance": [1, 0]})
GROUPS = pl.DataFrame({"doc_id": ["d", "e"], "group": ["x", "y"]})

_COLUMNS = "'query_id', 'doc_id', 'score', 'day'"
_MISSING = f"column 'nope' not found in the run (its columns: {_COLUMNS}); "
#: (id, metrics, by, tables, message): one machine's, whichever route raises it
MISSING_BY: list[tuple[str, list[str], Any, dict[str, pl.DataFrame], str]] = [
    ("map", ["map"], "nope", {},
     _MISSING + "pass the column names, e.g. query_id='qid', doc_id='docno'"),
    ("run-key-and-missing", ["map"], ["day", "nope"], {},
     _MISSING + "pass the column names, e.g. query_id='qid', doc_id='docno'"),
    ("beside-exposure", ["map", "ee_loss"], "nope", {"groups": GROUPS},
     _MISSING + "by= and systems= name columns of the run (or of queries=, by=)"),
]  # fmt: skip


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("partitions", [1, 3])
@pytest.mark.parametrize(
    ("name", "metrics", "by", "tables", "message"), MISSING_BY, ids=[c[0] for c in MISSING_BY]
)
def test_by_key_of_no_table_is_one_machines_missing_column(
    name: str,
    metrics: list[str],
    by: Any,
    tables: dict[str, pl.DataFrame],
    message: str,
    partitions: int,
    engine: str,
    request: pytest.FixtureRequest,
) -> None:
    with pytest.raises(irm.ColumnNotFoundError, match=f"^{re.escape(message)}$"):
        irm.evaluate(RUN, metrics, qrels=QRELS, by=by, **tables)
    evaluate, to_engine, back = engine_io(engine, request)
    engine_tables = {k: to_engine(v) for k, v in tables.items()}
    with pytest.raises(irm.ColumnNotFoundError, match=f"^{re.escape(message)}$"):
        back(
            evaluate(
                to_engine(RUN),
                metrics,
                qrels=to_engine(QRELS),
                by=by,
                partitions=partitions,
                **engine_tables,
            )
        )
