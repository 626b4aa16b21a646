"""A text label column on Spark and Dask is checked over the whole table, as on one
machine (since c1f30dc): the engines checked it within each part they evaluate, so a
part of misspelt ``"Click"`` rows (one label, not ``positive_label``) was read as a
part of negatives and scored in silence where one machine refuses the table. Each part
now gives its distinct labels and one task checks them together, with one machine's
message, whatever ``by=`` or ``per_query``."""

from __future__ import annotations

import re
from typing import Any

import dask.dataframe as dd
import pandas as pd
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_irmetrics as irm
import polars_irmetrics.dask as irm_dask
import polars_irmetrics.spark as irm_spark


def _log(labels: list[str]) -> pl.DataFrame:
    """Three queries of two rows: the third query's rows (its own part on both engines,
    partitions=4) labelled ``labels[4:]``."""
    return pl.DataFrame(
        {
            "query_id": [1, 1, 2, 2, 3, 3],
            "day": ["a", "a", "b", "b", "b", "b"],
            "prediction": [0.9, 0.2, 0.7, 0.4, 0.6, 0.3],
            "label": labels,
        }
    )


MISSPELT = _log(["click", "no", "click", "no", "Click", "Click"])
NEITHER = _log(["no", "no", "no", "no", "Click", "Click"])
#: a part of negatives under the table's own negative label: valid
VALID = _log(["click", "no", "click", "no", "no", "no"])

MORE_THAN_TWO = (
    "column 'label' holds more than two labels (Click, click, no); auc, logloss read(s) "
    "it as a binary label: positive_label='click' is positive, and one other label "
    "negative"
)
NEITHER_POSITIVE = (
    "column 'label' holds two labels ('Click', 'no'), and neither is "
    "positive_label='click'; auc, logloss read(s) it as a binary label, so it is refused "
    "for them: declare the positive one of them with positive_label= (a text label "
    "matches exactly: case and spaces count)"
)
METRICS = ["auc", "logloss"]

#: (name, table, options, message): refused on one machine and on both engines alike.
REFUSED: list[tuple[str, pl.DataFrame, dict[str, Any], str]] = [
    ("misspelt-means", MISSPELT, {}, MORE_THAN_TWO),
    ("misspelt-per-query", MISSPELT, {"per_query": True}, MORE_THAN_TWO),
    ("misspelt-by-day", MISSPELT, {"by": "day"}, MORE_THAN_TWO),
    ("neither-means", NEITHER, {}, NEITHER_POSITIVE),
    ("neither-per-query", NEITHER, {"per_query": True}, NEITHER_POSITIVE),
]
#: (name, options): the valid table, the engines' values equal one machine's.
ACCEPTED: list[tuple[str, dict[str, Any]]] = [
    ("means", {}),
    ("per-query", {"per_query": True}),
    ("by-day", {"by": "day"}),
]


def _dask(table: pl.DataFrame, **options: Any) -> pl.DataFrame:
    frame = dd.from_pandas(table.to_pandas(types_mapper=pd.ArrowDtype), npartitions=2)
    got = irm_dask.evaluate(frame, METRICS, positive_label="click", partitions=4, **options)
    result = pl.from_pandas(got.compute().reset_index(drop=True))
    # per query, the rows come in partition (task) order
    return result.sort("query_id") if options.get("per_query") else result


def _spark(spark: Any, table: pl.DataFrame, **options: Any) -> pl.DataFrame:
    frame = spark.createDataFrame(table.to_arrow())
    got = irm_spark.evaluate(frame, METRICS, positive_label="click", partitions=4, **options)
    return pl.from_arrow(got.toArrow())  # type: ignore[return-value]


def _one_machine(table: pl.DataFrame, **options: Any) -> pl.DataFrame:
    return irm.evaluate(table, METRICS, positive_label="click", **options)


def _same(got: pl.DataFrame, want: pl.DataFrame) -> None:
    assert_frame_equal(got, want, check_dtypes=False)


@pytest.mark.parametrize(
    ("name", "table", "options", "message"), REFUSED, ids=[c[0] for c in REFUSED]
)
def test_one_machine_refuses_the_text_labels(
    name: str, table: pl.DataFrame, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        _one_machine(table, **options)


@pytest.mark.parametrize(
    ("name", "table", "options", "message"), REFUSED, ids=[c[0] for c in REFUSED]
)
def test_dask_refuses_the_text_labels_of_the_whole_table(
    client: Any, name: str, table: pl.DataFrame, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        _dask(table, **options)


@pytest.mark.parametrize(
    ("name", "table", "options", "message"), REFUSED, ids=[c[0] for c in REFUSED]
)
def test_spark_refuses_the_text_labels_of_the_whole_table(
    spark: Any, name: str, table: pl.DataFrame, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        _spark(spark, table, **options)


@pytest.mark.parametrize(("name", "options"), ACCEPTED, ids=[c[0] for c in ACCEPTED])
def test_dask_accepts_a_part_of_the_tables_negatives(
    client: Any, name: str, options: dict[str, Any]
) -> None:
    _same(_dask(VALID, **options), _one_machine(VALID, **options))


@pytest.mark.parametrize(("name", "options"), ACCEPTED, ids=[c[0] for c in ACCEPTED])
def test_spark_accepts_a_part_of_the_tables_negatives(
    spark: Any, name: str, options: dict[str, Any]
) -> None:
    _same(_spark(spark, VALID, **options), _one_machine(VALID, **options))
