"""The engines' joints of round 10 (each fails before its fix).

- Spark: a ``TimestampType`` column anywhere in the run (the bundled click log's
  ``timestamp``) failed on a bare ``AssertionError`` of pyspark's ``to_arrow_schema``,
  which needs a time zone for it: the schemas are now read in the session's time zone,
  as Spark hands such a column to the Python tasks, and the log's click metrics
  (``time_to_first_click`` too) are one machine's to the last bit.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.io.files import sample_interactions_path

from .helpers import engine_io

ENGINES = ["spark", "dask"]

RUN = pl.DataFrame(
    {"query_id": ["q1", "q2", "q3"], "doc_id": ["a", "a", "b"], "score": [1.0, 1.0, 1.0]}
)
QRELS = pl.DataFrame(
    {"query_id": ["q1", "q2", "q4"], "doc_id": ["a", "a", "b"], "relevance": [1, 1, 1]}
)


def _unplaced(first: str, key: str, count: int) -> str:
    return (
        f"query {first!r} has no {key!r} in queries=: give every query of the run and the "
        f"judgments a row there ({count} have none)"
    )


# --- Spark: a TimestampType column --------------------------------------------------


def test_spark_reads_a_timestamp_column_of_the_run(request: pytest.FixtureRequest) -> None:
    evaluate, frame, back = engine_io("spark", request)
    run = RUN.with_columns(ts=pl.lit(datetime(2024, 1, 1)))
    expected = irm.evaluate(run, ["P@1"], qrels=QRELS, per_query=True)
    assert isinstance(expected, pl.DataFrame)
    got = back(evaluate(frame(run), ["P@1"], qrels=frame(QRELS), per_query=True))
    assert got.cast(expected.schema).equals(expected)


def test_spark_evaluates_the_bundled_click_log(request: pytest.FixtureRequest) -> None:
    evaluate, frame, back = engine_io("spark", request)
    log = pl.read_parquet(sample_interactions_path())
    assert log.schema["timestamp"] == pl.Datetime("us")
    metrics = ["click_mrr", "time_to_first_click", "ctr@10", "abandonment"]
    options: dict[str, Any] = {"per_query": True, "query_id": "session_id", "rank": "position"}
    expected = irm.evaluate(log, metrics, by="arm", **options)
    assert isinstance(expected, pl.DataFrame)
    expected = expected.sort("arm", "session_id")
    got = back(evaluate(frame(log), metrics, by="arm", **options)).sort("arm", "session_id")
    assert got.columns == expected.columns
    assert got.cast(expected.schema).equals(expected)  # the same bits
