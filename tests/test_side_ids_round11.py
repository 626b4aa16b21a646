"""Side tables whose ids match nothing, round 11.

1. ``labels=`` or the predictions empty under ``unmatched='drop'``: every value is null,
   and the :class:`~polars_irmetrics.errors.CoverageWarning` of ids that share no pair
   now says so (``0 < 0`` held it back: it was given only when the pairs were fewer
   than half of each side), on one machine, on Spark and on Dask alike.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import dask.dataframe as dd
import pandas as pd
import polars as pl
import pytest

import polars_irmetrics as irm
import polars_irmetrics.dask as irm_dask
import polars_irmetrics.spark as irm_spark


def _said(call: Callable[[], Any]) -> list[str]:
    """The library's warnings ``call`` gives (its result collected)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = call()
        if isinstance(got, pl.LazyFrame):
            got.collect()
    return [str(w.message) for w in caught if issubclass(w.category, irm.IrmWarning)]


# --- 1. an empty side under unmatched='drop' ------------------------------------------

TRUTH = pl.DataFrame({"user": [1, 1, 2], "item": [10, 11, 10], "rating": [5.0, 3.0, 4.0]})
PRED = TRUTH.rename({"rating": "rating_hat"})
CLICKS = pl.DataFrame({"user": [1, 1, 2], "item": [10, 11, 10], "rating": [1, 0, 1]})
SCORES = CLICKS.rename({"rating": "rating_hat"}).with_columns(
    pl.Series("rating_hat", [0.9, 0.2, 0.7])
)
PAIR_KW: dict[str, Any] = {
    "label": "rating",
    "prediction": "rating_hat",
    "query_id": "user",
    "doc_id": "item",
    "unmatched": "drop",
}


def _no_pair(predictions: int, labels: int) -> str:
    return (
        f"labels= and the predictions share none of their (user, item) pairs ({predictions} "
        f"predictions, {labels} labels): unmatched='drop' leaves out every prediction "
        "without a label, so every value is null. Ids that do not line up are the likely "
        "cause: give labels= and the predictions the same 'user' and 'item' values (same "
        "spelling, same collection)."
    )


#: (name, predictions, labels, metrics, message)
EMPTY_SIDES: list[tuple[str, pl.DataFrame, pl.DataFrame, list[str], str]] = [
    ("empty-labels", PRED, TRUTH.clear(), ["rmse", "mae"], _no_pair(3, 0)),
    ("empty-predictions", PRED.clear(), TRUTH, ["rmse", "mae"], _no_pair(0, 3)),
    ("both-empty", PRED.clear(), TRUTH.clear(), ["rmse", "mae"], _no_pair(0, 0)),
    ("empty-labels-auc", SCORES, CLICKS.clear(), ["auc", "logloss"], _no_pair(3, 0)),
    ("empty-predictions-auc", SCORES.clear(), CLICKS, ["auc", "logloss"], _no_pair(0, 3)),
]


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
@pytest.mark.parametrize(
    ("name", "pred", "truth", "metrics", "message"),
    EMPTY_SIDES,
    ids=[c[0] for c in EMPTY_SIDES],
)
def test_an_empty_side_warns_that_every_value_is_null(
    name: str,
    pred: pl.DataFrame,
    truth: pl.DataFrame,
    metrics: list[str],
    message: str,
    lazy: bool,
) -> None:
    def call() -> Any:
        if lazy:
            return irm.evaluate(pred.lazy(), metrics, labels=truth.lazy(), **PAIR_KW)
        return irm.evaluate(pred, metrics, labels=truth, **PAIR_KW)

    assert _said(call) == [message]


def test_a_matched_table_still_does_not_warn() -> None:
    assert _said(lambda: irm.evaluate(PRED, ["rmse"], labels=TRUTH, **PAIR_KW)) == []


def test_dask_warns_of_empty_labels_as_one_machine(client: Any) -> None:
    def frame(table: pl.DataFrame) -> Any:
        return dd.from_pandas(table.to_pandas(types_mapper=pd.ArrowDtype), npartitions=1)

    said = _said(
        lambda: irm_dask.evaluate(
            frame(PRED), ["rmse"], labels=frame(TRUTH.clear()), partitions=2, **PAIR_KW
        ).compute()
    )
    assert said == [_no_pair(3, 0)]


def test_spark_warns_of_empty_labels_as_one_machine(spark: Any) -> None:
    labels = spark.createDataFrame(TRUTH.clear().to_arrow())
    said = _said(
        lambda: irm_spark.evaluate(
            spark.createDataFrame(PRED.to_arrow()), ["rmse"], labels=labels, **PAIR_KW
        )
    )
    assert said == [_no_pair(3, 0)]
