"""``systems=`` with ``labels=``: each system scored as alone (round 26).

1. A labelled pair that only some systems predict: under ``unmatched='error'`` each
   system's predictions must cover every label (a system that skips one is refused,
   named, with its own count and smallest pair, whatever the other systems predict);
   under ``'drop'`` each system's values are those of the system scored alone.
2. ``labels=`` that holds the ``systems=`` column (a label per system and pair): each
   system's predictions are scored against its own labels (joined on the column); a
   duplicate is a pair twice for one system; a label of a system without predictions
   is one-sided.

On one machine (DataFrame, LazyFrame, out of core with ``buckets=``), Spark and Dask.
"""

from __future__ import annotations

import re
import warnings
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm

from .helpers import engine_io, predicted

LABELS = pl.DataFrame(
    {
        "user": [1, 1, 1, 2, 2, 3, 3, 3],
        "item": [10, 11, 12, 10, 13, 11, 12, 14],
        "label": [1, 0, 1, 0, 1, 0, 1, 0],
    }
)
SCORES = {
    "a": [0.9, 0.2, 0.6, 0.4, 0.7, 0.3, 0.8, 0.1],
    "b": [0.1, 0.5, 0.5, 0.3, 0.2, 0.9, 0.6, 0.7],
    "c": [0.6, 0.6, 0.6, 0.25, 0.75, 0.05, 0.95, 0.5],
}


def _system(name: str) -> pl.DataFrame:
    return LABELS.select("user", "item").with_columns(
        pl.lit(name).alias("system"), pl.Series("prediction", SCORES[name])
    )


#: a predicts every labelled pair; b only user 1's (a part of the engines may hold no
#: prediction of b at all); c every pair but (2, 13) and (3, 14)
SKIPPING = pl.concat(
    [
        _system("a"),
        _system("b").filter(pl.col("user") == 1),
        _system("c").filter(~pl.col("item").is_in([13, 14])),
    ]
).sample(fraction=1.0, shuffle=True, seed=3)
PAIRS = {"query_id": "user", "doc_id": "item"}
METRICS = ["auc", "logloss", "rmse"]
LOCAL = ["frame", "lazy", "buckets"]
ENGINES = ["spark", "dask"]
#: the result's sort keys (those it holds)
ORDER = ("system", "day")


def _alone(system: str, kept: int, pair: str) -> str:
    return (
        f"{kept} (user, item) pair(s) have a label but no prediction{system} (e.g. {pair}); "
        "pass unmatched='drop' to evaluate only the pairs on both sides (as Microsoft "
        "Recommenders' inner merge does)"
    )


# --- 1. a labelled pair only some systems predict ------------------------------------

#: case: the systems in the call, the message's system, its count and smallest pair
SKIPPED = {
    "a, b and c": (["a", "b", "c"], "b", 5, "(2, 10)"),
    "a and c": (["a", "c"], "c", 2, "(2, 13)"),
    "c alone": (["c"], "c", 2, "(2, 13)"),
    "b and c": (["b", "c"], "b", 5, "(2, 10)"),
}
#: the first case of each system named: the cases of one system score the same rows of
#: it alone (one call each on the engines, whose raising calls take seconds)
_FIRST_OF = {system: case for case, (_, system, _, _) in reversed(SKIPPED.items())}


@pytest.mark.parametrize("by", [{}, {"by": "day"}], ids=["", "by"])
@pytest.mark.parametrize("case", list(SKIPPED))
@pytest.mark.parametrize("route", LOCAL + ENGINES)
def test_each_system_must_predict_every_label(
    route: str, case: str, by: dict[str, str], request: pytest.FixtureRequest
) -> None:
    names, system, n, pair = SKIPPED[case]
    predictions = SKIPPING.filter(pl.col("system").is_in(names))
    if by:
        predictions = predictions.with_columns(
            pl.when(pl.col("user") == 1).then(pl.lit("mon")).otherwise(pl.lit("tue")).alias("day")
        )
    message = _alone(f" of system={system!r}", n, pair)
    with pytest.raises(irm.QuerySetError, match=f"^{re.escape(message)}$"):
        predicted(
            route, request, predictions, LABELS, METRICS, ORDER, systems="system", **PAIRS, **by
        )
    if case != _FIRST_OF[system]:  # the same system's rows alone: that case's call
        return
    # the words of the system scored alone, without the system
    own = predictions.filter(pl.col("system") == system).drop("system")
    with pytest.raises(irm.QuerySetError, match=f"^{re.escape(_alone('', n, pair))}$"):
        predicted(route, request, own, LABELS, METRICS, ORDER, **PAIRS, **by)


@pytest.mark.filterwarnings("ignore::polars_irmetrics.IrmWarning")
@pytest.mark.parametrize("route", LOCAL + ENGINES)
def test_dropped_labels_are_each_systems_alone(route: str, request: pytest.FixtureRequest) -> None:
    kw = {**PAIRS, "unmatched": "drop"}
    got = predicted(route, request, SKIPPING, LABELS, METRICS, ORDER, systems="system", **kw)
    alone = []
    single = "frame" if route in ENGINES else route  # one machine's bits (_each_alone)
    for system in ("a", "b", "c"):
        own = SKIPPING.filter(pl.col("system") == system).drop("system")
        out = predicted(single, request, own, LABELS, METRICS, ORDER, **kw)
        alone.append(out.select(pl.lit(system).alias("system"), pl.all()))
    assert got.rows() == pl.concat(alone).rows()


# --- 2. labels= holding the systems= column ---------------------------------------------

#: every system's predictions of every pair, and labels of its own per system
EVERY = pl.concat([_system(name) for name in SCORES]).sample(fraction=1.0, shuffle=True, seed=5)
OWN = pl.concat(
    [
        LABELS.with_columns(
            pl.lit(name).alias("system"), ((pl.col("label") + k) % 2).alias("label")
        )
        for k, name in enumerate(SCORES)
    ]
).sample(fraction=1.0, shuffle=True, seed=9)


def _each_alone(route: str, request: Any, predictions: pl.DataFrame, **kw: Any) -> list[Any]:
    # On an engine, each system alone is scored on one machine: an engine's bits are one
    # machine's (tests/test_same_bits_every_engine.py), and three engine jobs more per
    # call would hold seconds of the suite's time each.
    route = "frame" if route in ENGINES else route
    alone = []
    for system in SCORES:
        own = predictions.filter(pl.col("system") == system).drop("system")
        labels = OWN.filter(pl.col("system") == system).drop("system")
        out = predicted(route, request, own, labels, METRICS, ORDER, **PAIRS, **kw)
        alone.append(out.select(pl.lit(system).alias("system"), pl.all()))
    return pl.concat(alone).rows()


@pytest.mark.parametrize("kw", [{}, {"per_query": True}], ids=["means", "per_query"])
@pytest.mark.parametrize("route", LOCAL + ENGINES)
def test_each_system_against_its_own_labels(
    route: str, kw: dict[str, Any], request: pytest.FixtureRequest
) -> None:
    got = predicted(route, request, EVERY, OWN, METRICS, ORDER, systems="system", **PAIRS, **kw)
    if kw:
        got = got.sort("system", "user")
    assert got.rows() == _each_alone(route, request, EVERY, **kw)


@pytest.mark.filterwarnings("ignore::polars_irmetrics.IrmWarning")
@pytest.mark.parametrize("route", LOCAL + ENGINES)
def test_own_labels_dropped_as_each_alone(route: str, request: pytest.FixtureRequest) -> None:
    predictions = EVERY.filter(~((pl.col("system") == "b") & (pl.col("user") == 3)))
    got = predicted(
        route,
        request,
        predictions,
        OWN,
        METRICS,
        ORDER,
        systems="system",
        unmatched="drop",
        **PAIRS,
    )
    assert got.rows() == _each_alone(route, request, predictions, unmatched="drop")


def test_own_labels_in_two_dtypes_of_one_kind() -> None:
    labels = OWN.with_columns(pl.col("system").cast(pl.Categorical))
    want = irm.evaluate(EVERY, METRICS, labels=OWN, systems="system", **PAIRS)
    got = irm.evaluate(EVERY, METRICS, labels=labels, systems="system", **PAIRS)
    assert got.rows() == want.rows()


#: case: predictions, labels, error, message
OWN_REFUSED = {
    "a pair twice for one system": (
        EVERY,
        pl.concat([OWN, OWN.filter((pl.col("system") == "c") & (pl.col("item") == 14))]),
        irm.DuplicateError,
        "labels= holds a (user, item) pair more than once for one system: 2 row(s) share "
        "one with another label of the same system (first in the group system='c') (e.g. "
        "(3, 14)); each system's predictions are scored against its own labels, one label "
        "per pair: keep one, e.g. labels.unique(['system', 'user', 'item'])",
    ),
    "labels of a system without predictions": (
        EVERY.filter(pl.col("system") != "b"),
        OWN,
        irm.QuerySetError,
        _alone(" of system='b'", 8, "(1, 10)"),
    ),
    "a system without its labels": (
        EVERY,
        OWN.filter(pl.col("system") != "a"),
        irm.QuerySetError,
        "8 (user, item) pair(s) have a prediction of system='a' but no label (e.g. (1, "
        "10)); pass "
        "unmatched='drop' to evaluate only the pairs on both sides (as Microsoft "
        "Recommenders' inner merge does)",
    ),
}


@pytest.mark.parametrize("case", list(OWN_REFUSED))
@pytest.mark.parametrize("route", LOCAL + ENGINES)
def test_own_labels_refused(route: str, case: str, request: pytest.FixtureRequest) -> None:
    predictions, labels, error, message = OWN_REFUSED[case]
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        predicted(route, request, predictions, labels, METRICS, ORDER, systems="system", **PAIRS)


def test_own_labels_of_another_kind_are_refused() -> None:
    labels = OWN.with_columns(pl.lit(1).alias("system"))
    message = (
        "column 'system' has dtype String in the predictions but Int32 in labels=; cast one "
        "side to match, e.g. pl.col('system').cast(pl.String) on both"
    )
    with pytest.raises(irm.ColumnTypeError, match=f"^{re.escape(message)}$"):
        irm.evaluate(EVERY, METRICS, labels=labels, systems="system", **PAIRS)


def test_without_systems_labels_column_is_not_read() -> None:
    # no systems=: a column of labels= no keyword names is no key (unchanged)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = irm.evaluate(_system("a").drop("system"), METRICS, labels=LABELS, **PAIRS)
        labelled = LABELS.with_columns(pl.lit("x").alias("system"))
        same = irm.evaluate(_system("a").drop("system"), METRICS, labels=labelled, **PAIRS)
    assert got.rows() == same.rows()


@pytest.mark.parametrize("route", ENGINES)
def test_a_part_without_a_systems_predictions_still_reads_its_labels(
    route: str, request: pytest.FixtureRequest
) -> None:
    # b predicts user 0's pair only: most parts hold no prediction of b at all, and
    # still every label there is b's to predict (the engine reads the systems first)
    n = 60
    labels = pl.DataFrame({"user": range(n), "item": [1] * n, "label": [i % 2 for i in range(n)]})
    pairs = labels.select("user", "item")
    predictions = pl.concat(
        [
            pairs.with_columns(pl.lit("a").alias("system"), pl.lit(0.5).alias("prediction")),
            pairs.head(1).with_columns(
                pl.lit("b").alias("system"), pl.lit(0.5).alias("prediction")
            ),
        ]
    )
    evaluate, to_engine, back = engine_io(route, request)
    message = _alone(" of system='b'", n - 1, "(1, 1)")
    kw = {"labels": to_engine(labels), "systems": "system", "partitions": 8, **PAIRS}
    with pytest.raises(irm.QuerySetError, match=f"^{re.escape(message)}$"):
        back(evaluate(to_engine(predictions), ["rmse"], **kw))


@pytest.mark.parametrize("route", LOCAL + ENGINES)
def test_no_pair_matched_counts_each_label_once(
    route: str, request: pytest.FixtureRequest
) -> None:
    # every system against every label: the labels are still the table's rows
    predictions = EVERY.with_columns(pl.col("user") + 100)
    message = (
        "labels= and the predictions share none of their (user, item) pairs (24 "
        "predictions, 8 labels; e.g. the predictions' (101, 10), the labels' (1, 10)): ids "
        "that do not line up are the likely cause: give labels= and the predictions the "
        "same 'user' and 'item' values (same spelling, same collection); unmatched='drop' "
        "would leave no pair to evaluate, every value null"
    )
    with pytest.raises(irm.QuerySetError, match=f"^{re.escape(message)}$"):
        predicted(route, request, predictions, LABELS, METRICS, ORDER, systems="system", **PAIRS)


@pytest.mark.parametrize("route", LOCAL + ENGINES)
def test_a_prediction_without_a_label_is_counted_per_system_as_alone(
    route: str, request: pytest.FixtureRequest
) -> None:
    # a predicts (4, 15) and (4, 16), b only (4, 15): refused naming a with its own two,
    # as a alone is, not the three of the call
    extra = pl.DataFrame(
        {
            "user": [4, 4, 4],
            "item": [15, 16, 15],
            "system": ["a", "a", "b"],
            "prediction": [0.5, 0.4, 0.3],
        }
    )
    predictions = pl.concat([_system("a"), _system("b"), extra])
    alone = predictions.filter(pl.col("system") == "a").drop("system")
    tail = (
        " but no label (e.g. (4, 15)); pass unmatched='drop' to evaluate only the pairs on "
        "both sides (as Microsoft Recommenders' inner merge does)"
    )
    own = "2 (user, item) pair(s) have a prediction" + tail
    with pytest.raises(irm.QuerySetError, match=f"^{re.escape(own)}$"):
        irm.evaluate(alone, METRICS, labels=LABELS, **PAIRS)
    message = "2 (user, item) pair(s) have a prediction of system='a'" + tail
    with pytest.raises(irm.QuerySetError, match=f"^{re.escape(message)}$"):
        predicted(route, request, predictions, LABELS, METRICS, ORDER, systems="system", **PAIRS)
