"""Prediction metrics, round 9: the predictions' and the labels' value columns under
one name were read as one column (every prediction scored against its own label: rmse 0,
auc 1, in silence); ``positive_label`` that is not one label value (None, a list, NaN)
was accepted or reached polars' cast error; a numpy number reached polars' compare
error."""

from __future__ import annotations

import math
import re

import numpy as np
import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

PRED = pl.DataFrame(
    {"user": [1, 1, 2, 2], "item": [10, 11, 10, 12], "rating": [3.5, 4.0, 2.0, 4.5]}
)
TRUE = pl.DataFrame({"user": [1, 1, 2, 2], "item": [10, 11, 10, 12], "rating": [5, 3, 4, 1]})
KEYS = {"query_id": "user", "doc_id": "item"}


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("metrics", [["rmse", "mae", "r2"], ["auc"]])
def test_two_tables_one_value_name_refused(lazy: bool, metrics: list[str]) -> None:
    pred, true = PRED, TRUE
    if metrics == ["auc"]:
        true = TRUE.with_columns(rating=pl.Series([1, 0, 1, 0]))
        pred = PRED.with_columns(rating=pl.Series([0.9, 0.2, 0.3, 0.8]))
    message = (
        "prediction='rating' and label='rating' name the same column, and the predictions "
        "and the labels are joined into one table: rename one side's column and pass its "
        "name, e.g. labels=labels.rename({'rating': 'rating_true'}) with label='rating_true'"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):  # at the call
        irm.evaluate(
            pred.lazy() if lazy else pred,
            metrics,
            labels=true.lazy() if lazy else true,
            label="rating",
            prediction="rating",
            **KEYS,
        )


def test_two_tables_renamed_as_told() -> None:
    out = irm.evaluate(
        PRED,
        ["rmse"],
        labels=TRUE.rename({"rating": "rating_true"}),
        label="rating_true",
        prediction="rating",
        **KEYS,
    )
    # errors 1.5, -1, 2, -3.5: squares 2.25 + 1 + 4 + 12.25 = 19.5 over 4
    assert out["rmse"].item() == pytest.approx(math.sqrt(19.5 / 4), rel=1e-15)


def test_one_table_label_and_prediction_one_column_refused() -> None:
    message = (
        "label='rating' and prediction='rating' name the same column; each needs its own "
        "column: pass prediction= with the name of the prediction column"
    )
    with pytest.raises(InvalidValueError, match=re.escape(message)):
        irm.evaluate(PRED, ["rmse"], label="rating", prediction="rating")


BINARY = pl.DataFrame({"y": [1, 0, 1], "p": [0.2, 0.3, 0.1]})
NOT_A_LABEL = (
    "positive_label must be one label value, a number or a string, got {}: name the label "
    "that counts as positive, e.g. positive_label=1 (the default) or positive_label='click'"
)


@pytest.mark.parametrize("value", [None, [1], float("nan"), float("inf"), {"a": 1}])
@pytest.mark.parametrize("metrics", [["logloss"], ["auc", "calibration"]])
def test_positive_label_not_a_label_refused(value: object, metrics: list[str]) -> None:
    with pytest.raises(InvalidValueError, match=re.escape(NOT_A_LABEL.format(repr(value)))):
        irm.evaluate(BINARY, metrics, label="y", prediction="p", positive_label=value)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [None, [1]])
def test_positive_label_of_an_expression_refused(value: object) -> None:
    with pytest.raises(InvalidValueError, match=re.escape(NOT_A_LABEL.format(repr(value)))):
        irm.auc("y", "p", positive_label=value)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", [np.int64(1), np.int8(1), np.float64(1.0), np.float32(1.0)])
def test_positive_label_numpy_number_as_python(value: object) -> None:
    want = irm.evaluate(BINARY, ["logloss", "auc"], label="y", prediction="p")
    got = irm.evaluate(BINARY, ["logloss", "auc"], label="y", prediction="p", positive_label=value)  # type: ignore[arg-type]
    assert got.equals(want)
    assert BINARY.select(irm.auc("y", "p", positive_label=value)).item() == want["auc"].item()  # type: ignore[arg-type]
