"""Round 36: a part of a split run knows every group of the run.

One reference serves every group of the run whose ``systems=``/``by`` keys it lacks: a
query of the reference that a system did not rank is scored for that system as an empty
ranking (``unretrieved='zero'``), or refused where the key is a ``by`` attribute of the
query. Spark and Dask split the run by query: a part that held none of a system's
queries scored the reference's queries only for the systems it held (system 'x' ranks
q1, system 'y' q2, in two parts: num_q 1 each, rbo 0.45 and 1.0, for one machine's 2
each, 0.225 and 0.5), and a refusal was not given. Each part is now given the whole
run's groups of the keys the reference lacks. The query ids are chosen to land in two
parts of each engine's own split (found on first use, cached).
"""

from __future__ import annotations

import functools
from typing import Any

import dask
import dask.dataframe as dd
import pandas as pd
import polars as pl
import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F  # noqa: N812 (Spark's own spelling)

import polars_irmetrics as irm
import polars_irmetrics.dask as irm_dask
import polars_irmetrics.spark as irm_spark
from polars_irmetrics.engines._ope_dask import _shuffled
from polars_irmetrics.engines.dask import _tag
from polars_irmetrics.engines.spark import _part
from polars_irmetrics.errors import QuerySetError

_COUNT = 4


@functools.cache
def _dask_parted() -> tuple[str, str]:
    """Two query ids that the Dask engine's shuffle puts in two of its partitions."""
    ids = pd.DataFrame({"query_id": [f"q{i}" for i in range(40)]}).astype("string[pyarrow]")
    with dask.config.set({"dataframe.shuffle.method": "tasks"}):
        parts = _shuffled(dd.from_pandas(ids, npartitions=1), "query_id", _COUNT, _tag)
        held = [list(p["query_id"]) for p in dask.compute(*parts.to_delayed(), scheduler="sync")]
    first, other = [ids for ids in held if ids][:2]
    return first[0], other[0]


def _spark_parted(spark: SparkSession) -> tuple[str, str]:
    """Two query ids that the Spark engine's split (its part number, then
    ``repartition``) puts in two of its partitions."""
    ids = spark.createDataFrame([(f"q{i}",) for i in range(40)], ["query_id"])
    placed = (
        ids.withColumn("part", _part(ids, "query_id", _COUNT))
        .repartition(_COUNT, "part")
        .select("query_id", F.spark_partition_id().alias("where"))
        .collect()
    )
    held: dict[int, str] = {}
    for row in placed:
        held.setdefault(row["where"], row["query_id"])
    first, other = list(held.values())[:2]
    return first, other


def _sides(q1: str, q2: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """System 'x' ranks q1, system 'y' q2; the reference (no system column) both."""
    run = pl.DataFrame(
        {"system": ["x", "x", "y"], "query_id": [q1, q1, q2], "doc_id": ["a", "b", "d"]}
    ).with_columns(rank=pl.Series([1, 2, 1]))
    reference = pl.DataFrame(
        {"query_id": [q1, q1, q2], "doc_id": ["c", "a", "d"], "rank": [1, 2, 1]}
    )
    return run, reference


def _placed_sides(q1: str, q2: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``by='system'`` (an attribute of the query): 'x' and 'y' rank q1, only 'y' q2,
    which the reference (no system column) holds: q2 cannot be placed for 'x'."""
    run = pl.DataFrame(
        {"system": ["x", "y", "y"], "query_id": [q1, q1, q2], "doc_id": ["a", "a", "d"]}
    ).with_columns(rank=pl.Series([1, 1, 1]))
    return run, _sides(q1, q2)[1]


def _one_machine(frame_kind: str, run: pl.DataFrame, reference: pl.DataFrame, **kw: Any) -> Any:
    if frame_kind == "LazyFrame":
        out = irm.evaluate(run.lazy(), ["rbo", "jaccard@2"], reference=reference.lazy(), **kw)
        assert isinstance(out, pl.LazyFrame)
        return out.collect()
    return irm.evaluate(run, ["rbo", "jaccard@2"], reference=reference, **kw)


def _to_dask(frame: pl.DataFrame) -> Any:
    return dd.from_pandas(frame.to_pandas(types_mapper=pd.ArrowDtype), npartitions=2)


@functools.cache
def _dask_scored(per_query: bool) -> pl.DataFrame:
    """The Dask result of :func:`_sides` with ``systems=`` (computed once for both
    frame kinds of the one machine it is compared with)."""
    run, reference = _sides(*_dask_parted())
    return _dask(run, reference, systems="system", per_query=per_query)


def _dask(run: pl.DataFrame, reference: pl.DataFrame, **kw: Any) -> pl.DataFrame:
    result = irm_dask.evaluate(
        _to_dask(run), ["rbo", "jaccard@2"], reference=_to_dask(reference), partitions=_COUNT, **kw
    )
    computed = result.compute(scheduler="sync")
    return pl.from_pandas(computed)


_PLACED = (
    "by key 'system' is in the run but not in the reference: the reference does not say "
    "which 'system' each query of the reference belongs to, so 1 query of the reference "
    "that some of the 2 groups did not retrieve cannot be placed (e.g. query {q2!r}: the "
    "run lists it under system='y', and the reference cannot tell whether it belongs to "
    "the other groups too). If 'system' is an attribute of the query (day, market, "
    "segment), give each query of the reference its 'system': in a 'system' column of the "
    "reference; if it names systems or runs (each compared with the reference on every "
    "query), pass systems='system' instead of by=; or pass unretrieved='drop' to score "
    "each group on the queries it retrieved"
)


@pytest.mark.parametrize("per_query", [False, True])
def test_dask_scores_the_references_queries_for_every_system(
    frame_kind: str, per_query: bool
) -> None:
    run, reference = _sides(*_dask_parted())
    expected = _one_machine(frame_kind, run, reference, systems="system", per_query=per_query)
    got = _dask_scored(per_query)
    assert expected["num_q" if not per_query else "system"].to_list() == (
        [2, 2] if not per_query else ["x", "x", "y", "y"]
    )
    assert got.sort(got.columns[:2]).rows() == expected.rows()
    if not per_query:
        assert expected["rbo"].to_list() == [0.225, 0.5]


def test_dask_refuses_a_reference_query_a_by_group_lacks(frame_kind: str) -> None:
    q1, q2 = _dask_parted()
    run, reference = _placed_sides(q1, q2)
    message = _PLACED.format(q2=q2)
    with pytest.raises(QuerySetError) as one:
        _one_machine(frame_kind, run, reference, by="system")
    assert str(one.value) == message
    with pytest.raises(QuerySetError) as split:
        _dask(run, reference, by="system")
    assert str(split.value) == message


def test_spark_scores_the_references_queries_for_every_system(spark: SparkSession) -> None:
    q1, q2 = _spark_parted(spark)
    run, reference = _sides(q1, q2)
    expected = _one_machine("DataFrame", run, reference, systems="system")
    assert _one_machine("LazyFrame", run, reference, systems="system").equals(expected)
    assert expected.rows() == [("x", 2, 0.225, 1 / 6), ("y", 2, 0.5, 0.5)]
    result = irm_spark.evaluate(
        spark.createDataFrame(run.to_arrow()),
        ["rbo", "jaccard@2"],
        reference=spark.createDataFrame(reference.to_arrow()),
        systems="system",
        partitions=_COUNT,
    )
    got = pl.from_arrow(result.toArrow())
    assert isinstance(got, pl.DataFrame)
    assert got.sort("system").rows() == expected.rows()
    # a by attribute the reference lacks: q2, which 'x' did not rank, is refused
    run, reference = _placed_sides(q1, q2)
    with pytest.raises(QuerySetError) as one:
        _one_machine("LazyFrame", run, reference, by="system")
    with pytest.raises(QuerySetError) as split:
        irm_spark.evaluate(
            spark.createDataFrame(run.to_arrow()),
            ["rbo", "jaccard@2"],
            reference=spark.createDataFrame(reference.to_arrow()),
            by="system",
            partitions=_COUNT,
        )
    assert str(split.value) == str(one.value) == _PLACED.format(q2=q2)
