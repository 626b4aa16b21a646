"""Trust at every joint, round 26.

1. ``labels=`` that holds a ``by=``/``systems=`` key column: the groups are the
   predictions' column, and the labels' was read in silence (a labels table keyed by
   another day than its predictions gave the predictions' groups, no word). It is now
   matched pair by pair: where it agrees (in any dtype of the same kind) the values are
   those of the same call without it, bit for bit; a pair whose key differs (a null
   included) is refused naming the column, the count and the smallest pair, whatever
   ``unmatched=``; two kinds of dtype are refused naming the cast. On one machine
   (DataFrame, LazyFrame, out of core with ``buckets=``), Spark and Dask alike.
"""

from __future__ import annotations

import re
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnTypeError, InvalidValueError

from .helpers import engine_io

# --- 1. labels= holding a by=/systems= key -------------------------------------------

PREDICTIONS = pl.DataFrame(
    {
        "user": [1, 1, 1, 2, 2, 3, 3, 3],
        "item": [10, 11, 12, 10, 13, 11, 12, 14],
        "prediction": [0.9, 0.2, 0.6, 0.4, 0.7, 0.3, 0.8, 0.1],
        "day": ["mon", "mon", "mon", "tue", "tue", "mon", "mon", "mon"],
    }
)
LABELS = pl.DataFrame(
    {
        "user": [3, 3, 3, 2, 2, 1, 1, 1],
        "item": [14, 12, 11, 13, 10, 12, 11, 10],
        "label": [0, 1, 0, 1, 0, 1, 0, 1],
    }
)
#: the labels' days, pair by pair as the predictions' (rows in another order)
DAYS = ["mon", "mon", "mon", "tue", "tue", "mon", "mon", "mon"]
PAIRS = {"query_id": "user", "doc_id": "item"}
KEYS = {"by": {"by": "day"}, "systems": {"systems": "day"}}
METRICS = ["auc", "logloss", "rmse"]


def _with_days(days: list[str | None], dtype: Any = pl.String) -> pl.DataFrame:
    return LABELS.with_columns(pl.Series("day", days, dtype=pl.String).cast(dtype))


def _one_machine(route: str, predictions: pl.DataFrame, labels: pl.DataFrame, **kw: Any) -> Any:
    if route == "lazy":
        return irm.evaluate(predictions.lazy(), METRICS, labels=labels.lazy(), **kw).collect()
    extra = {"buckets": 4} if route == "buckets" else {}
    return irm.evaluate(predictions, METRICS, labels=labels, **extra, **kw)


def _engine(name: str, request: Any, predictions: pl.DataFrame, labels: pl.DataFrame, **kw: Any):
    evaluate, to_engine, back = engine_io(name, request)
    out = evaluate(to_engine(predictions), METRICS, labels=to_engine(labels), **kw)
    return back(out).sort("day")


def _on(route: str, request: Any, predictions: pl.DataFrame, labels: pl.DataFrame, **kw: Any):
    if route in ENGINES:
        return _engine(route, request, predictions, labels, **kw)
    return _one_machine(route, predictions, labels, **kw)


LOCAL = ["frame", "lazy", "buckets"]
ENGINES = ["spark", "dask"]

AGREEING = {
    "same dtype": _with_days(DAYS),
    "Categorical beside String": _with_days(DAYS, pl.Categorical),
    "Enum beside String": _with_days(DAYS, pl.Enum(["mon", "tue"])),
}


#: Dask's shuffle of a Categorical or Enum column: item 3 below
AGREEING_ROUTES = [
    (route, case)
    for route in LOCAL + ENGINES
    for case in AGREEING
    if route != "dask" or case == "same dtype"
]


@pytest.mark.parametrize("key", list(KEYS))
@pytest.mark.parametrize(("route", "case"), AGREEING_ROUTES)
def test_agreeing_key_of_labels_changes_no_bit(
    route: str, case: str, key: str, request: pytest.FixtureRequest
) -> None:
    kw = {**PAIRS, **KEYS[key]}
    want = _on(route, request, PREDICTIONS, LABELS, **kw)
    got = _on(route, request, PREDICTIONS, AGREEING[case], **kw)
    assert got.rows() == want.rows()
    assert got.schema == want.schema


def test_integer_key_of_two_widths_agrees() -> None:
    predictions = PREDICTIONS.with_columns(pl.col("user").cast(pl.Int32).alias("week"))
    labels = LABELS.with_columns(pl.col("user").cast(pl.Int64).alias("week"))
    want = irm.evaluate(predictions, METRICS, labels=LABELS, by="week", **PAIRS)
    got = irm.evaluate(predictions, METRICS, labels=labels, by="week", **PAIRS)
    assert got.rows() == want.rows()
    assert got.schema["week"] == pl.Int32  # the groups are the predictions' own column


def _differs(keyword: str, n: int, group: str, example: str) -> str:
    return (
        f"column 'day' of labels= disagrees with the predictions' on {n} (user, item) "
        f"pair(s) (first in the group day={group!r}) (e.g. {example}); {keyword}= groups "
        "the pairs by the predictions' column, and labels= that holds it must agree pair "
        "by pair: fix its values, or drop it from labels=, e.g. labels.drop('day')"
    )


#: labels (in LABELS' order: (3, 14), (3, 12), (3, 11), (2, 13), (2, 10), (1, 12)...)
DISAGREEING = {
    # (3, 12) and (3, 11) say 'tue' where the predictions say 'mon'
    "two pairs": (
        ["mon", "tue", "tue", "tue", "tue", "mon", "mon", "mon"],
        2,
        "mon",
        "(3, 11): 'mon' in the predictions, 'tue' in labels=",
    ),
    # the first group in the keys' order with a disagreement: 'mon' (none in 'tue')
    "a null": (
        ["mon", "mon", "mon", "tue", "tue", None, "mon", "mon"],
        1,
        "mon",
        "(1, 12): 'mon' in the predictions, null in labels=",
    ),
    "only in tue": (
        ["mon", "mon", "mon", "tue", "mon", "mon", "mon", "mon"],
        1,
        "tue",
        "(2, 10): 'tue' in the predictions, 'mon' in labels=",
    ),
}


@pytest.mark.parametrize("unmatched", ["error", "drop"])
@pytest.mark.parametrize("key", list(KEYS))
@pytest.mark.parametrize("case", list(DISAGREEING))
@pytest.mark.parametrize("route", LOCAL + ENGINES)
def test_disagreeing_key_of_labels_is_refused(
    route: str, case: str, key: str, unmatched: str, request: pytest.FixtureRequest
) -> None:
    days, n, group, example = DISAGREEING[case]
    kw = {**PAIRS, **KEYS[key], "unmatched": unmatched}
    message = re.escape(_differs(key, n, group, example))
    with pytest.raises(InvalidValueError, match=f"^{message}$"):
        _on(route, request, PREDICTIONS, _with_days(days), **kw)


def test_categorical_key_of_labels_is_shown_as_text() -> None:
    labels = _with_days(DISAGREEING["two pairs"][0], pl.Categorical)
    message = re.escape(_differs("by", *DISAGREEING["two pairs"][1:]))
    with pytest.raises(InvalidValueError, match=f"^{message}$"):
        irm.evaluate(PREDICTIONS, METRICS, labels=labels, by="day", **PAIRS)


@pytest.mark.parametrize(
    ("dtype", "fix"),
    [(pl.Int64, "pl.String"), (pl.Float64, "pl.String")],
    ids=["integers", "floats"],
)
@pytest.mark.parametrize("route", ["frame", "lazy"])
def test_key_of_labels_in_another_kind_is_refused(route: str, dtype: Any, fix: str) -> None:
    labels = LABELS.with_columns(pl.lit(1, dtype=dtype).alias("day"))
    message = (
        f"column 'day' has dtype String in the predictions but {dtype()} in labels=; cast one "
        f"side to match, e.g. pl.col('day').cast({fix}) on both"
    )
    with pytest.raises(ColumnTypeError, match=f"^{re.escape(message)}$"):
        _one_machine(route, PREDICTIONS, labels, by="day", **PAIRS)


def test_key_of_labels_that_the_call_does_not_group_by_is_not_read() -> None:
    # a column of labels= that no by=/systems= names is no key: not read, as before
    labels = _with_days(["x"] * 8)
    want = irm.evaluate(PREDICTIONS, METRICS, labels=LABELS, **PAIRS)
    assert irm.evaluate(PREDICTIONS, METRICS, labels=labels, **PAIRS).rows() == want.rows()
