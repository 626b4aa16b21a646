"""Round 36: Spark's rank-similarity warning counts from the result's own tasks.

``irm.spark.evaluate(run, metrics, reference=...)`` counted the warning's queries and
documents (the run's distinct query keys, those the reference holds, per system, the
reference's, the run's documents the reference lists) by one Spark action after the
result: 10 to 13 jobs, as many as the result's own. Run and reference are paired by
query hash, so each task holds every row of both sides for its queries: it counts them
there, and hands its counts to the driver with its ties' tally. Only the documents join
across queries; they are counted by one Spark action, and only where some system (or
the run) has no task whose reference lists one of its documents: the warning of
documents is given only where the reference lists none. The warnings are one machine's,
word for word.
"""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest
from pyspark.sql import SparkSession

import polars_irmetrics as irm
import polars_irmetrics.spark as irm_spark

_GROUP = "spark.jobGroup.id"

#: system A ranks q1 and q2 as the reference does; B ranks q1 (a document the
#: reference lists) and q3 to q5, which the reference lacks
RUN = pl.DataFrame(
    {
        "system": ["A", "A", "A", "B", "B", "B", "B"],
        "query_id": ["q1", "q1", "q2", "q1", "q3", "q4", "q5"],
        "doc_id": ["a", "b", "c", "a", "x", "y", "z"],
        "score": [0.9, 0.8, 0.7, 0.9, 0.8, 0.7, 0.6],
    }
)
REFERENCE = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"], "score": [0.9, 0.8, 0.7]}
)
#: B's documents are none of the reference's (its queries are): no task proves B's
UNLISTED = RUN.with_columns(
    pl.when(pl.col("system") == "B")
    .then(pl.col("query_id").replace({"q3": "q2", "q4": "q1", "q5": "q2"}))
    .otherwise(pl.col("query_id")),
    pl.when(pl.col("system") == "B")
    .then(pl.col("doc_id") + "9")
    .otherwise(pl.col("doc_id"))
    .alias("doc_id"),
).unique(["system", "query_id", "doc_id"])


def _coverage(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, irm.CoverageWarning)]


def _one_machine(run: pl.DataFrame, reference: pl.DataFrame, **kw: Any) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        irm.evaluate(run, ["rbo", "jaccard@2"], reference=reference, **kw)
    return _coverage(caught)


def _jobs(spark: SparkSession, work: Callable[[], Any]) -> tuple[Any, list[str], int]:
    """``work()``, its coverage warnings, and the Spark jobs it ran outside the result's
    own job group (the engine's: it computes the result in a group of its own)."""
    context = spark.sparkContext
    group = f"round36-{uuid.uuid4().hex}"
    previous = context.getLocalProperty(_GROUP)
    context.setLocalProperty(_GROUP, group)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = work()
    finally:
        context.setLocalProperty(_GROUP, previous)  # type: ignore[arg-type]
    return out, _coverage(caught), len(context.statusTracker().getJobIdsForGroup(group))


def _on_spark(
    spark: SparkSession, run: pl.DataFrame, reference: pl.DataFrame, **kw: Any
) -> tuple[pl.DataFrame, list[str], int]:
    frames = [spark.createDataFrame(f.to_arrow()) for f in (run, reference)]
    out, said, jobs = _jobs(
        spark,
        lambda: irm_spark.evaluate(
            frames[0], ["rbo", "jaccard@2"], reference=frames[1], partitions=3, **kw
        ),
    )
    return pl.from_arrow(out.toArrow()), said, jobs  # type: ignore[return-value]


def _groups_jobs(spark: SparkSession, run: pl.DataFrame, keys: list[str]) -> int:
    """The jobs of gathering the run's distinct groups of ``keys`` (the keys the
    reference lacks: each part scores the reference's queries for every group of the
    whole run, gathered before the result as the reference's groups are)."""
    frame = spark.createDataFrame(run.to_arrow())
    return _jobs(spark, lambda: frame.select(*keys).distinct().toArrow())[2]


def test_spark_warns_of_a_system_the_reference_lacks_from_the_results_tasks(
    spark: SparkSession,
) -> None:
    # every system's documents listed by its queries' reference: no Spark job but the
    # result's
    expected = _one_machine(RUN, REFERENCE, systems="system")
    assert len(expected) == 1
    assert expected[0].startswith(
        "reference= holds only 1 of the 4 queries of the run of system 'B' (column 'query_id')"
    )
    whole = irm.evaluate(RUN, ["rbo", "jaccard@2"], reference=REFERENCE, systems="system")
    got, said, jobs = _on_spark(spark, RUN, REFERENCE, systems="system")
    assert said == expected
    assert got.sort("system").equals(whole)
    # no job but the result's, and the run's systems gathered (the reference has none)
    assert jobs == _groups_jobs(spark, RUN, ["system"])
    # B's documents listed nowhere: the documents counted by one Spark action, and B
    # named as one machine names it
    expected = _one_machine(UNLISTED, REFERENCE, systems="system")
    assert len(expected) == 1
    assert expected[0].startswith(
        "reference= holds none of the 4 documents of the run of system 'B' (column 'doc_id')"
    )
    whole = irm.evaluate(UNLISTED, ["rbo", "jaccard@2"], reference=REFERENCE, systems="system")
    got, said, jobs = _on_spark(spark, UNLISTED, REFERENCE, systems="system")
    assert said == expected
    assert got.sort("system").equals(whole)
    assert jobs > 0


#: integer ids of two widths (the run's Int32, the reference's Int64) and a by= key the
#: reference lacks (it serves every day): the counts join them in one dtype
WIDE_RUN = pl.DataFrame(
    {
        "system": ["A"] * 6 + ["B"] * 6,
        "day": ["mon", "mon", "tue", "tue", "tue", "tue"] * 2,
        "query_id": [1, 1, 2, 3, 4, 5] * 2,
        "doc_id": [10, 11, 12, 13, 14, 15, 10, 11, 12, 13, 14, 15],
        "score": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4] * 2,
    },
    schema_overrides={"query_id": pl.Int32, "doc_id": pl.Int32},
)
WIDE_REFERENCE = pl.DataFrame(
    {
        "query_id": [1, 1, 2, 3, 4, 6, 7],
        "doc_id": [11, 10, 12, 13, 14, 20, 21],
        "score": [0.9, 0.8, 0.9, 0.9, 0.9, 0.9, 0.9],
    },
    schema_overrides={"query_id": pl.Int64, "doc_id": pl.Int64},
)
#: 'day' a system key, or a by= key, the reference's queries a group lacks left out
#: (unretrieved='drop': scored as empty rankings, a part's groups are its own rows':
#: see benchmarks/results_tests.md, round 36)
WIDE_OPTIONS = [
    {"systems": ["system", "day"], "unretrieved": "drop"},
    {"systems": ["system", "day"], "unretrieved": "drop", "per_query": True},
    {"systems": "system", "by": "day", "unretrieved": "drop"},
]


@pytest.mark.parametrize("kw", WIDE_OPTIONS, ids=["systems", "per query", "by"])
def test_spark_counts_ids_of_two_widths_and_groups_the_reference_lacks(
    spark: SparkSession, kw: dict[str, Any]
) -> None:
    expected = _one_machine(WIDE_RUN, WIDE_REFERENCE, **kw)
    names = ["system 'A'", "system 'B'"]
    if "by" not in kw:
        names = ["system (system='A', day='mon')", "system (system='B', day='mon')"]
    assert [text.split(" misses most queries of reference=")[0] for text in expected] == names
    whole = irm.evaluate(WIDE_RUN, ["rbo", "jaccard@2"], reference=WIDE_REFERENCE, **kw)
    got, said, jobs = _on_spark(spark, WIDE_RUN, WIDE_REFERENCE, **kw)
    assert said == expected
    keys = [c for c in whole.columns if c in ("system", "day", "query_id")]
    assert got.cast(whole.schema).sort(keys).equals(whole.sort(keys))
    lacked = [c for c in ("system", "day") if c not in WIDE_REFERENCE.columns]
    assert jobs == _groups_jobs(spark, WIDE_RUN, lacked)


#: list-shaped sides, the reference one per system (its groups gathered first): y's
#: lists of u3 and u4 are empty (no query of the long form)
LISTS_RUN = pl.DataFrame(
    {
        "system": ["x", "x", "x", "y", "y", "y", "y"],
        "user": ["u1", "u2", "u3", "u1", "u2", "u3", "u4"],
        "item": [["a", "b"], ["c"], ["d", "e"], ["b", "a"], ["c"], [], []],
    },
    schema_overrides={"item": pl.List(pl.String)},
)
LISTS_REFERENCE = pl.DataFrame(
    {
        "system": ["x", "x", "y", "y"],
        "user": ["u1", "u9", "u1", "u2"],
        "item": [["a"], ["q"], ["a", "b"], ["c"]],
    },
    schema_overrides={"item": pl.List(pl.String)},
)


def test_spark_counts_list_shaped_sides_by_system_in_the_tasks(spark: SparkSession) -> None:
    kw: dict[str, Any] = {"systems": "system", "query_id": "user", "doc_id": "item"}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        whole = irm.evaluate(LISTS_RUN, ["jaccard@2"], reference=LISTS_REFERENCE, **kw)
    expected = _coverage(caught)
    assert len(expected) == 1
    assert expected[0].startswith(
        "reference= holds only 1 of the 3 queries of the run of system 'x' (column 'user')"
    )
    frames = [spark.createDataFrame(f.to_arrow()) for f in (LISTS_RUN, LISTS_REFERENCE)]
    # the reference's groups, gathered before the result: the only jobs besides it
    _, _, groups = _jobs(spark, lambda: frames[1].select("system").distinct().toArrow())
    out, said, jobs = _jobs(
        spark,
        lambda: irm_spark.evaluate(
            frames[0], ["jaccard@2"], reference=frames[1], partitions=3, **kw
        ),
    )
    assert said == expected
    assert pl.from_arrow(out.toArrow()).equals(whole)
    assert jobs == groups
