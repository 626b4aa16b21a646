"""Spark's and Dask's errors that were not one machine's (round 13).

* A ``by`` key of no table beside the judgments was refused as a key of the run alone
  ("by key 'nope' is in the run but not in the judgments ... pass systems='nope'"),
  untrue, and a fix that does not work: one machine's ``ColumnNotFoundError`` now, from
  the plan each engine builds on empty tables before any job.
* A run of sampled rankings (a ``sample`` column) with the exposure measures beside a
  ranking metric: the ranking metrics' half of the engines' two calls refused it as a
  query listing documents more than once (DuplicateError, the query named changing
  with the partition count); one machine's refusal now, decided on the whole call's
  metrics and the run's columns before the call is split.
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


SAMPLED = pl.DataFrame(
    {
        "query_id": ["q"] * 6,
        "sample": [0, 0, 0, 1, 1, 1],
        "doc_id": ["a", "b", "c", "b", "c", "a"],
        "rank": [1, 2, 3] * 2,
    }
)
SAMPLED_QRELS = pl.DataFrame(
    {"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "relevance": [1, 1, 0]}
)
SAMPLED_GROUPS = pl.DataFrame({"doc_id": ["a", "b", "c"], "group": ["x", "x", "y"]})
#: (id, metrics, tables, message): one machine's, alone and beside an exposure measure
SAMPLES: list[tuple[str, list[str], dict[str, pl.DataFrame], str]] = [
    ("ndcg", ["ndcg@2"], {},
     "the run's column 'sample' (sample_id=) holds sampled rankings: query 'q' has rows "
     "under 2 of its values, and the metrics asked for read one ranking per query, so they "
     "would read every sample's documents as one ranking: evaluate them on one sample, "
     "e.g. .filter(pl.col('sample') == 0), ask for the exposure measures that read sampled "
     "rankings (ee_loss, ee_disparity, ee_relevance, awrf, awrf_ndcg, rnd, rkl, rrd) in a "
     "call of their own, or drop or rename the column if it holds no samples"),
    ("ndcg-beside-ee_loss", ["ndcg@2", "ee_loss"], {"groups": SAMPLED_GROUPS},
     "the run's column 'sample' (sample_id=) holds sampled rankings, each a ranking of "
     "its own for the exposure measures ('ee_loss'); the other metrics of the call "
     "('ndcg@2') read one ranking per query, and would read every sample's documents as "
     "one ranking: evaluate 'ndcg@2' in a separate call, on one ranking per query "
     "(e.g. run.filter(pl.col('sample') == 0).drop('sample'))"),
]  # fmt: skip


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("partitions", [1, 2, 3])
@pytest.mark.parametrize(
    ("name", "metrics", "tables", "message"), SAMPLES, ids=[c[0] for c in SAMPLES]
)
def test_sampled_run_is_refused_as_one_machine_refuses_it(
    name: str,
    metrics: list[str],
    tables: dict[str, pl.DataFrame],
    message: str,
    partitions: int,
    engine: str,
    request: pytest.FixtureRequest,
) -> None:
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(SAMPLED, metrics, qrels=SAMPLED_QRELS, **tables)
    evaluate, to_engine, back = engine_io(engine, request)
    engine_tables = {k: to_engine(v) for k, v in tables.items()}
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        back(
            evaluate(
                to_engine(SAMPLED),
                metrics,
                qrels=to_engine(SAMPLED_QRELS),
                partitions=partitions,
                **engine_tables,
            )
        )
