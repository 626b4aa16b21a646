"""The category column of ``categorical_diversity@k`` (RePlay's CategoricalDiversity:
one category per item): a multi-label (List, Array), nested (Struct) or Object column
is refused up front, a NaN category when the plan runs; Boolean labels are two
categories."""

from __future__ import annotations

import re

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnTypeError, InvalidValueError

RUN = pl.DataFrame({"query_id": [1, 1, 1], "doc_id": [10, 11, 12], "rank": [1, 2, 3]})
METRIC = "categorical_diversity(category='genre')@3"


def _features(values: pl.Series) -> pl.DataFrame:
    return pl.DataFrame({"doc_id": [10, 11, 12]}).with_columns(values.alias("genre"))


def _nested(dtype: str, fix: str) -> str:
    return (
        f"column 'genre' in the item_features has dtype {dtype}; categorical_diversity "
        "reads one category per item (RePlay's CategoricalDiversity), a single label, "
        "not a multi-label or nested value: pick one label per item, e.g. "
        f"{fix} (exploding the column gives an item more than one row, which is "
        "refused too)"
    )


@pytest.mark.parametrize(
    ("values", "error", "message"),
    [
        (
            pl.Series([["a", "b"], ["b"], ["a"]]),
            ColumnTypeError,
            _nested("List(String)", "pl.col('genre').list.first()"),
        ),
        (
            pl.Series([["a", "b"], ["b", "c"], ["a", "c"]], dtype=pl.Array(pl.String, 2)),
            ColumnTypeError,
            _nested("Array(String, shape=(2,))", "pl.col('genre').arr.first()"),
        ),
        (
            pl.Series([{"x": 1}, {"x": 2}, {"x": 1}]),
            ColumnTypeError,
            _nested("Struct({'x': Int64})", "pl.col('genre').struct.field('x')"),
        ),
        (
            pl.Series([object(), object(), object()], dtype=pl.Object),
            ColumnTypeError,
            _nested("Object", "labels built as strings"),
        ),
        (
            pl.Series([1.0, float("nan"), 2.0]),
            InvalidValueError,
            "item 11 has a NaN category in column 'genre' of item_features (1 item(s) "
            "have one): categorical_diversity counts the categories of each list, and NaN "
            "is none; give the item a category (e.g. .fill_nan(-1.0) for a category of "
            "its own), or drop it from item_features and the recommendations",
        ),
        (
            pl.Series([float("nan"), float("nan"), 2.0], dtype=pl.Float32),
            InvalidValueError,
            "item 10 has a NaN category in column 'genre' of item_features (2 item(s) "
            "have one): categorical_diversity counts the categories of each list, and NaN "
            "is none; give the item a category (e.g. .fill_nan(-1.0) for a category of "
            "its own), or drop it from item_features and the recommendations",
        ),
    ],
    ids=["list", "array", "struct", "object", "nan", "nan-float32"],
)
def test_category_column_refused(values: pl.Series, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        irm.evaluate(RUN, [METRIC], item_features=_features(values))


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (pl.Series([True, False, True]), 2 / 3),  # Boolean: two categories
        (pl.Series([1.0, 2.0, 1.0]), 2 / 3),
        (pl.Series(["a", "b", "c"]), 1.0),
        (pl.Series([float("inf"), 2.0, float("-inf")]), 1.0),  # infinities are labels
    ],
    ids=["bool", "float", "string", "inf"],
)
def test_category_column_accepted(values: pl.Series, expected: float) -> None:
    result = irm.evaluate(RUN, [METRIC], item_features=_features(values))
    assert result[METRIC][0] == pytest.approx(expected)


def test_nan_outside_the_recommendations_still_refused() -> None:
    # the check reads the item features, not only the recommended items: a NaN label
    # is a bad input wherever it is
    features = pl.DataFrame({"doc_id": [10, 11, 12, 13], "genre": [1.0, 2.0, 3.0, float("nan")]})
    message = (
        "item 13 has a NaN category in column 'genre' of item_features (1 item(s) "
        "have one): categorical_diversity counts the categories of each list, and NaN "
        "is none; give the item a category (e.g. .fill_nan(-1.0) for a category of "
        "its own), or drop it from item_features and the recommendations"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(RUN, [METRIC], item_features=features)
