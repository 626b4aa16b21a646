"""The coverage warning on Spark and Dask: the same warnings, with the same text, as
``irm.evaluate`` gives on the same data (per run or system, the same counts), added up
from each part's coverage on the driver (the client for Dask)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import dask.dataframe as dd
import polars as pl
import pytest
from distributed import Client
from pyspark.sql import DataFrame, SparkSession

import polars_irmetrics as irm
import polars_irmetrics.dask as irm_dask
import polars_irmetrics.spark as irm_spark
from polars_irmetrics.errors import CoverageWarning, IrmWarning
from tests.test_coverage_warning import QRELS, RUN

SYSTEMS = pl.concat(
    [
        RUN.with_columns(pl.lit("good").alias("system")),
        RUN.with_columns(pl.col("doc_id").str.to_uppercase(), pl.lit("bad").alias("system")),
    ]
)

#: (name, run, qrels, options): each warned about (or not) as one machine warns.
CASES: list[tuple[str, pl.DataFrame, pl.DataFrame, dict[str, Any]]] = [
    ("clean", RUN, QRELS, {}),
    ("case", RUN.with_columns(pl.col("doc_id").str.to_uppercase()), QRELS, {}),
    ("prefix", RUN.with_columns(pl.col("query_id").str.strip_prefix("q")), QRELS, {}),
    ("most missed", RUN.filter(pl.col("query_id") == "q001"), QRELS, {}),
    ("dropped", RUN.filter(pl.col("query_id") == "q001"), QRELS, {"unretrieved": "drop"}),
    ("one system", SYSTEMS, QRELS, {"systems": "system"}),
    ("no judgments", RUN, QRELS.clear(), {}),
    # every query listed, three of four spelt apart: judged documents in one
    ("few found", RUN.with_columns(
        pl.when(pl.col("query_id") == "q001")
        .then(pl.col("doc_id"))
        .otherwise(pl.col("doc_id").str.to_uppercase())
    ), QRELS, {}),
]  # fmt: skip


def _caught(call: Callable[[], object]) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    ours = [w for w in caught if issubclass(w.category, IrmWarning)]
    assert all(w.category is CoverageWarning for w in ours)
    return sorted({str(w.message) for w in ours})


def _expected(run: pl.DataFrame, qrels: pl.DataFrame, options: dict[str, Any]) -> list[str]:
    return _caught(lambda: irm.evaluate(run, ["mrr"], qrels=qrels, **options))


#: (name, run, qrels, options, per_query): every case with the means; the per-query
#: route, which adds up the same part counts, with one of the warnings on each engine
#: (the hints' data, "case", on Spark; systems, "one system", on Dask)
SHAPES = [
    *((*case, False) for case in CASES),
    *((*case, True) for case in CASES if case[0] in ("case", "one system")),
]
SHAPE_IDS = [f"{c[0]}-{'per_query' if c[4] else 'means'}" for c in SHAPES]
DASK_SHAPES = [(s, i) for s, i in zip(SHAPES, SHAPE_IDS, strict=True) if i != "case-per_query"]

#: On Spark, the shapes whose parts differ for the engine: no warning, the hints' data
#: (case), systems, empty judgments, judged queries the run lacks (dropped). The texts
#: are added up from the parts by the code Dask runs too (warn_coverage), checked there
#: on every shape; "prefix" is checked on Spark by the cogroup and partitioned_by test.
SPARK_SHAPES = [
    (s, i)
    for s, i in zip(SHAPES, SHAPE_IDS, strict=True)
    if s[0] not in ("prefix", "most missed") and i != "one system-per_query"
]


@pytest.mark.parametrize(
    ("name", "run", "qrels", "options", "per_query"),
    [s for s, _ in SPARK_SHAPES],
    ids=[i for _, i in SPARK_SHAPES],
)
def test_spark_warns_as_one_machine(
    spark: SparkSession,
    name: str,
    run: pl.DataFrame,
    qrels: pl.DataFrame,
    options: dict[str, Any],
    per_query: bool,
) -> None:
    expected = _expected(run, qrels, {**options, "per_query": per_query})
    assert bool(expected) is (name != "clean")
    sides = [spark.createDataFrame(f.to_arrow()) for f in (run, qrels)]
    frames: list[DataFrame] = []
    got = _caught(
        lambda: frames.append(
            irm_spark.evaluate(
                sides[0], ["mrr"], qrels=sides[1], partitions=3, per_query=per_query, **options
            )
        )
    )
    assert got == expected
    # said by the call, after the values are computed: they are the one machine's
    values = pl.from_arrow(frames[0].toArrow())
    assert isinstance(values, pl.DataFrame)
    one = irm.evaluate(run, ["mrr"], qrels=qrels, per_query=per_query, **options)
    assert values.rows() == one.rows()
    if name == "case":  # the warning names the run at fault, which retrieves nothing judged
        assert values["mrr"].to_list() == [0.0] * values.height
        assert any("the run retrieves no judged document" in m for m in got)


@pytest.mark.parametrize(
    ("name", "run", "qrels", "options", "per_query"),
    [s for s, _ in DASK_SHAPES],
    ids=[i for _, i in DASK_SHAPES],
)
def test_dask_warns_as_one_machine_at_compute(
    client: Client,
    name: str,
    run: pl.DataFrame,
    qrels: pl.DataFrame,
    options: dict[str, Any],
    per_query: bool,
) -> None:
    expected = _expected(run, qrels, {**options, "per_query": per_query})
    sides = [dd.from_pandas(f.to_pandas(), npartitions=2) for f in (run, qrels)]
    frames: list[dd.DataFrame] = []
    lazy = _caught(
        lambda: frames.append(
            irm_dask.evaluate(
                sides[0], ["mrr"], qrels=sides[1], partitions=3, per_query=per_query, **options
            )
        )
    )
    assert lazy == []  # nothing computed, nothing said, before compute()
    assert _caught(frames[0].compute) == expected


def test_the_engines_cover_every_shape() -> None:
    # each shape runs on Dask, and on Spark where its parts differ for the engine; the
    # per-query route on each engine at least once, on the two together twice
    assert {i for _, i in DASK_SHAPES} | {i for _, i in SPARK_SHAPES} == set(SHAPE_IDS)
    for shapes in (DASK_SHAPES, SPARK_SHAPES):
        assert any(s[4] for s, _ in shapes)
        assert any(not s[4] for s, _ in shapes)
    assert {s[0] for s, _ in DASK_SHAPES} == {c[0] for c in CASES}


def _hive(frame: pl.DataFrame, folder: Path) -> str:
    """``frame`` as ``folder/bucket=N/part-0.parquet``, a query's rows in one bucket (the
    last digit of its id, modulo 2)."""
    bucket = pl.col("query_id").cast(pl.String).str.slice(-1).cast(pl.Int64) % 2
    for (value,), rows in frame.with_columns(bucket.alias("bucket")).group_by("bucket"):
        (folder / f"bucket={value}").mkdir(parents=True)
        rows.drop("bucket").write_parquet(folder / f"bucket={value}" / "part-0.parquet")
    return str(folder)


#: The other ways to the parts: Spark's cogroup, and runs read where they lie
#: (partitioned_by=; the judged queries no task retrieves evaluated apart).
OTHER_WAYS = [c for c in CASES if c[0] in ("case", "prefix", "one system")]
OTHER_IDS = [c[0] for c in OTHER_WAYS]
#: Spark's cogroup: the systems' counts and the hints' data ("prefix", which the default
#: way meets with "case") from each cogroup task's part
COGROUP = ("prefix", "one system")


@pytest.mark.parametrize(
    ("name", "run", "qrels", "options", "cogroup"),
    [(*c, c[0] in COGROUP) for c in OTHER_WAYS],
    ids=[c[0] for c in OTHER_WAYS],
)
def test_spark_cogroup_and_partitioned_by_warn_as_one_machine(
    spark: SparkSession,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    name: str,
    run: pl.DataFrame,
    qrels: pl.DataFrame,
    options: dict[str, Any],
    cogroup: bool,
) -> None:
    from polars_irmetrics.engines import spark as engine

    expected = _expected(run, qrels, options)
    judged = spark.createDataFrame(qrels.to_arrow())
    stored = spark.read.parquet(_hive(run, tmp_path / "run"))
    got = _caught(
        lambda: irm_spark.evaluate(
            stored, ["mrr"], qrels=judged, partitioned_by="bucket", **options
        )
    )
    assert got == expected
    if cogroup:
        monkeypatch.setattr(engine, "STRATEGY", "cogroup")
        shuffled = spark.createDataFrame(run.to_arrow())
        got = _caught(lambda: irm_spark.evaluate(shuffled, ["mrr"], qrels=judged, **options))
        assert got == expected


@pytest.mark.parametrize(
    ("name", "run", "qrels", "options"), OTHER_WAYS, ids=[c[0] for c in OTHER_WAYS]
)
def test_dask_partitioned_by_warns_as_one_machine(
    client: Client,
    tmp_path: Path,
    name: str,
    run: pl.DataFrame,
    qrels: pl.DataFrame,
    options: dict[str, Any],
) -> None:
    expected = _expected(run, qrels, options)
    stored = dd.read_parquet(_hive(run, tmp_path / "run"), dtype_backend="pyarrow")
    judged = dd.from_pandas(qrels.to_pandas(), npartitions=1)
    frame = irm_dask.evaluate(stored, ["mrr"], qrels=judged, partitioned_by="bucket", **options)
    assert _caught(frame.compute) == expected
