"""The engines' joints of round 10 (each fails before its fix).

- Spark: a ``TimestampType`` column anywhere in the run (the bundled click log's
  ``timestamp``) failed on a bare ``AssertionError`` of pyspark's ``to_arrow_schema``,
  which needs a time zone for it: the schemas are now read in the session's time zone,
  as Spark hands such a column to the Python tasks, and the log's click metrics
  (``time_to_first_click`` too) are one machine's to the last bit.
- ``queries=`` giving no ``by`` key to some query of the run or of the judgments: the
  engines' parts refused their own null key as a null in "the run" (which has no such
  column); they now raise one machine's ``QuerySetError``, its lowest id and count over
  every part.
- Elliot's ``item_mad@k`` was refused with a false reason (``groups=`` read by no metric,
  or missing): it is refused by name as a metric no part can compute.
- Out of core (``buckets=``), the rank-similarity metrics dropped the warning of a
  reference that holds none of the run's documents: given once, as by the one plan.
- Dask merged ``queries=`` onto judgments whose ids are of another integer width than the
  run's, and Dask's own dtype-mismatch ``UserWarning`` reached the user.
- Spark's off-policy route read its small results through pandas (``toPandas``), whose
  deprecation warnings reached the user: it reads Arrow as the other routes do.
"""

from __future__ import annotations

import re
import warnings
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import CoverageWarning, InvalidValueError, QuerySetError
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


# --- queries= without a key for some queries ----------------------------------------

#: (case, queries=, by=, expected message): one machine's words
_UNPLACED = [
    (
        "missing-row",
        pl.DataFrame({"query_id": ["q1"], "segment": ["mobile"]}),
        "segment",
        _unplaced("q2", "segment", 3),
    ),
    (
        "null-value",
        pl.DataFrame({"query_id": ["q1", "q2", "q3", "q4"], "segment": ["m", None, "d", "d"]}),
        "segment",
        _unplaced("q2", "segment", 1),
    ),
    (
        "first-key-in-by-order",
        pl.DataFrame(
            {
                "query_id": ["q1", "q2", "q3", "q4"],
                "segment": ["m", None, "d", "d"],
                "day": ["mon", "tue", None, None],
            }
        ),
        ["day", "segment"],
        _unplaced("q3", "day", 2),
    ),
]


@pytest.mark.parametrize(
    ("queries", "by", "message"), [c[1:] for c in _UNPLACED], ids=[c[0] for c in _UNPLACED]
)
@pytest.mark.parametrize("engine", ENGINES)
def test_queries_without_a_key_raise_one_machines_error(
    engine: str, queries: pl.DataFrame, by: Any, message: str, request: pytest.FixtureRequest
) -> None:
    pattern = f"^{re.escape(message)}$"
    with pytest.raises(QuerySetError, match=pattern):
        irm.evaluate(RUN, ["P@1"], qrels=QRELS, queries=queries, by=by)
    evaluate, frame, back = engine_io(engine, request)
    with pytest.raises(QuerySetError, match=pattern):
        back(evaluate(frame(RUN), ["P@1"], qrels=frame(QRELS), queries=frame(queries), by=by))


@pytest.mark.parametrize("engine", ENGINES)
def test_queries_with_every_key_still_evaluate(
    engine: str, request: pytest.FixtureRequest
) -> None:
    queries = pl.DataFrame({"query_id": ["q1", "q2", "q3", "q4"], "segment": ["m", "d", "d", "m"]})
    expected = irm.evaluate(RUN, ["P@1"], qrels=QRELS, queries=queries, by="segment")
    assert isinstance(expected, pl.DataFrame)
    evaluate, frame, back = engine_io(engine, request)
    got = back(
        evaluate(frame(RUN), ["P@1"], qrels=frame(QRELS), queries=frame(queries), by="segment")
    ).sort("segment")
    assert got.cast(expected.schema).equals(expected)


def test_dask_merges_queries_of_another_id_width_quietly(request: pytest.FixtureRequest) -> None:
    run = pl.DataFrame({"query_id": [1, 2], "doc_id": ["a", "a"], "score": [1.0, 1.0]})
    qrels = pl.DataFrame(
        {"query_id": pl.Series([1, 2], dtype=pl.Int32), "doc_id": ["a", "b"], "relevance": [1, 1]}
    )
    queries = pl.DataFrame({"query_id": pl.Series([1, 2], dtype=pl.Int32), "segment": ["m", "d"]})
    expected = irm.evaluate(run, ["P@1"], qrels=qrels, queries=queries, by="segment")
    assert isinstance(expected, pl.DataFrame)
    evaluate, frame, back = engine_io("dask", request)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = evaluate(
            frame(run), ["P@1"], qrels=frame(qrels), queries=frame(queries), by="segment"
        )
        got = back(out).sort("segment")
    assert [str(w.message) for w in caught if "Merging" in str(w.message)] == []
    assert got.cast(expected.schema).equals(expected)


# --- item_mad@k on the engines ------------------------------------------------------


def _item_mad(engine: str) -> str:
    name = "Spark" if engine == "spark" else "Dask"
    return (
        "metric 'item_mad@2' compares the clusters of items in groups= by each item's mean "
        f"gain over every user whose list holds it, which {name} does not compute from its "
        "parts: evaluate those metrics with polars_irmetrics.evaluate (a LazyFrame of the "
        "Parquet files runs out of core on one machine)"
    )


@pytest.mark.parametrize("with_groups", [True, False], ids=["groups", "no-groups"])
@pytest.mark.parametrize("engine", ENGINES)
def test_item_mad_is_refused_by_name(
    engine: str, with_groups: bool, request: pytest.FixtureRequest
) -> None:
    evaluate, frame, _ = engine_io(engine, request)
    groups = pl.DataFrame({"doc_id": ["a", "b"], "group": ["head", "tail"]})
    tables = {"groups": frame(groups)} if with_groups else {}
    with pytest.raises(InvalidValueError, match=f"^{re.escape(_item_mad(engine))}$"):
        evaluate(frame(RUN), ["ndcg@2", "item_mad@2"], qrels=frame(QRELS), **tables)


# --- out of core: the rank-similarity warnings ----------------------------------------

_AGREEMENT_RUN = pl.DataFrame(
    {
        "query_id": ["q1"] * 3 + ["q2"] * 3,
        "doc_id": ["a", "b", "c"] * 2,
        "score": [3.0, 2.0, 1.0] * 2,
    }
)


def _said(options: dict[str, Any]) -> tuple[pl.DataFrame, list[str]]:
    reference = _AGREEMENT_RUN.with_columns(doc_id=pl.col("doc_id") + "x")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = irm.evaluate(_AGREEMENT_RUN, ["rbo", "jaccard@3"], reference=reference, **options)
        if isinstance(out, pl.LazyFrame):
            out = out.collect()
    said = [str(w.message) for w in caught if issubclass(w.category, CoverageWarning)]
    return out, said


@pytest.mark.parametrize("per_query", [False, True])
@pytest.mark.parametrize("spill", [False, True], ids=["temp", "spill_dir"])
def test_buckets_warn_of_a_reference_without_the_runs_documents(
    per_query: bool, spill: bool, tmp_path: Path
) -> None:
    expected, warned = _said({"per_query": per_query})
    assert len(warned) == 1
    assert warned[0].startswith("reference= holds none of the 3 documents of the run")
    options: dict[str, Any] = {"per_query": per_query, "buckets": 2}
    if spill:
        options["spill_dir"] = str(tmp_path)
    out, said = _said(options)
    assert said == warned
    assert out.equals(expected)


# --- Spark's off-policy route reads Arrow ------------------------------------------


def test_spark_off_policy_reads_arrow(request: pytest.FixtureRequest) -> None:
    fixtures = Path(__file__).parent / "fixtures" / "ope"
    log = pl.read_parquet(fixtures / "bandit_binary_s0_log.parquet").head(60)
    policy = pl.read_parquet(fixtures / "bandit_binary_s0_policy.parquet")
    policy = policy.filter(pl.col("round_id").is_in(log["round_id"].implode()))
    expected = irm.evaluate(log, ["ips", "snips"], policy=policy, per_query=True)
    assert isinstance(expected, pl.DataFrame)
    evaluate, frame, back = engine_io("spark", request)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = evaluate(frame(log), ["ips", "snips"], policy=frame(policy), per_query=True)
    # pandas' own warnings (Pandas4Warning: a deprecation), not pyspark's note on the
    # pandas version, which every pyspark call to pandas' code gives
    pandas = [str(w.message) for w in caught if w.category.__module__.startswith("pandas")]
    assert pandas == []
    got = back(out).sort(expected.columns[0])
    assert got.cast(expected.schema).equals(expected.sort(expected.columns[0]))
