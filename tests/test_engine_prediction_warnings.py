"""The warnings of the prediction means on Spark and Dask: the same texts as
``irm.evaluate`` gives on the same data (an empty table, a metric undefined in a group,
an infinite rating metric), once each. The engines gave none: their merged means
never passed the checks one machine's plan runs when collected."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import dask.dataframe as dd
import pandas as pd
import polars as pl
import pytest
from distributed import Client
from pyspark.sql import SparkSession

import polars_irmetrics as irm
import polars_irmetrics.dask as irm_dask
import polars_irmetrics.spark as irm_spark
from polars_irmetrics.errors import IrmWarning

TABLE = pl.DataFrame(
    {
        "query_id": [1, 2, 3, 4],
        "day": ["a", "a", "b", "b"],
        "prediction": [0.9, 0.2, 0.7, 0.4],
        "label": [1, 1, 1, 0],
    }
)

#: (name, table, metrics, options): each warned about as one machine warns.
CASES: list[tuple[str, pl.DataFrame, list[str], dict[str, Any]]] = [
    ("one class", TABLE.filter(pl.col("day") == "a"), ["auc", "logloss"], {}),
    ("one class in a group", TABLE, ["auc"], {"by": "day"}),
    ("empty", TABLE.clear(), ["auc"], {}),
    # errors beyond float64's range: rmse inf
    ("infinite", TABLE.with_columns(
        pl.lit(1.7e308).alias("prediction"), pl.lit(-1.7e308).alias("label")
    ), ["rmse"], {}),
    ("clean", TABLE, ["auc", "rmse"], {}),
]  # fmt: skip
IDS = [c[0] for c in CASES]


def _caught(call: Callable[[], object]) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    ours = [w for w in caught if issubclass(w.category, IrmWarning)]
    assert all(w.category is IrmWarning for w in ours)
    return sorted(str(w.message) for w in ours)


def _expected(table: pl.DataFrame, metrics: list[str], options: dict[str, Any]) -> list[str]:
    found = _caught(lambda: irm.evaluate(table, metrics, **options))
    assert bool(found) is (metrics != ["auc", "rmse"])
    return found


@pytest.mark.parametrize(("name", "table", "metrics", "options"), CASES, ids=IDS)
def test_dask_warns_of_its_means_as_one_machine(
    client: Client, name: str, table: pl.DataFrame, metrics: list[str], options: dict[str, Any]
) -> None:
    frame = dd.from_pandas(table.to_pandas(types_mapper=pd.ArrowDtype), npartitions=2)
    got = _caught(lambda: irm_dask.evaluate(frame, metrics, partitions=2, **options).compute())
    assert got == _expected(table, metrics, options)


@pytest.mark.parametrize(("name", "table", "metrics", "options"), CASES, ids=IDS)
def test_spark_warns_of_its_means_as_one_machine(
    spark: SparkSession,
    name: str,
    table: pl.DataFrame,
    metrics: list[str],
    options: dict[str, Any],
) -> None:
    frame = spark.createDataFrame(table.to_arrow())
    got = _caught(lambda: irm_spark.evaluate(frame, metrics, partitions=2, **options))
    assert got == _expected(table, metrics, options)
