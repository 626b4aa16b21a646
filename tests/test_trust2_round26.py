"""Trust at every joint, round 26 (second part).

1. ``systems=`` with ``labels=``: the predictions of several systems over the same
   (query, doc) pairs were refused as duplicates, so several systems could not share one
   labels table. Each system's predictions are now scored against the one labels table:
   a pair is a duplicate where one system predicts it twice (refused naming the system)
   or where ``labels=`` holds it twice; the values are those of each system scored
   alone, bit for bit, on one machine (DataFrame, LazyFrame, out of core with
   ``buckets=``), Spark and Dask alike.
"""

from __future__ import annotations

import re
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm

from .helpers import engine_io

# --- 1. systems= sharing one labels table ----------------------------------------------

LABELS = pl.DataFrame(
    {
        "user": [1, 1, 1, 2, 2, 3, 3, 3],
        "item": [10, 11, 12, 10, 13, 11, 12, 14],
        "label": [1, 0, 1, 0, 1, 0, 1, 0],
    }
)
#: three systems' predictions of every labelled pair (rows in no set order)
SYSTEMS = pl.DataFrame(
    {
        "system": ["a"] * 8 + ["b"] * 8 + ["c"] * 8,
        "user": [1, 1, 1, 2, 2, 3, 3, 3] * 3,
        "item": [10, 11, 12, 10, 13, 11, 12, 14] * 3,
        "prediction": [
            *[0.9, 0.2, 0.6, 0.4, 0.7, 0.3, 0.8, 0.1],
            *[0.1, 0.5, 0.5, 0.3, 0.2, 0.9, 0.6, 0.7],
            *[0.6, 0.6, 0.6, 0.25, 0.75, 0.05, 0.95, 0.5],
        ],
        "day": (["mon"] * 4 + ["tue"] * 4) * 3,
    }
).sample(fraction=1.0, shuffle=True, seed=7)
PAIRS = {"query_id": "user", "doc_id": "item"}
METRICS = ["auc", "gauc", "logloss", "rmse"]
LOCAL = ["frame", "lazy", "buckets"]
ENGINES = ["spark", "dask"]

#: case: predictions, labels, options beside PAIRS
CASES: dict[str, tuple[pl.DataFrame, pl.DataFrame, dict[str, Any]]] = {
    "every pair": (SYSTEMS, LABELS, {}),
    "with by=": (SYSTEMS, LABELS, {"by": "day"}),
    "per_query": (SYSTEMS, LABELS, {"per_query": True}),
    "unmatched='drop'": (
        SYSTEMS.filter(~((pl.col("system") == "b") & (pl.col("user") == 3))),
        LABELS.filter(pl.col("item") != 14),
        {"unmatched": "drop"},
    ),
}


def _evaluate(
    route: str, request: Any, predictions: pl.DataFrame, labels: pl.DataFrame, **kw: Any
) -> pl.DataFrame:
    if route in ENGINES:
        evaluate, to_engine, back = engine_io(route, request)
        return back(evaluate(to_engine(predictions), METRICS, labels=to_engine(labels), **kw))
    if route == "lazy":
        return irm.evaluate(predictions.lazy(), METRICS, labels=labels.lazy(), **kw).collect()
    extra = {"buckets": 4} if route == "buckets" else {}
    return irm.evaluate(predictions, METRICS, labels=labels, **extra, **kw)


def _sorted(frame: pl.DataFrame) -> pl.DataFrame:
    keys = [c for c in ("system", "day", "user") if c in frame.columns]
    return frame.sort(keys)


@pytest.mark.filterwarnings("ignore::polars_irmetrics.IrmWarning")
@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("route", LOCAL + ENGINES)
def test_systems_share_one_labels_table_as_each_alone(
    route: str, case: str, request: pytest.FixtureRequest
) -> None:
    predictions, labels, kw = CASES[case]
    got = _sorted(_evaluate(route, request, predictions, labels, systems="system", **PAIRS, **kw))
    alone = []
    for system in ("a", "b", "c"):
        own = predictions.filter(pl.col("system") == system).drop("system")
        out = _evaluate(route, request, own, labels, **PAIRS, **kw)
        alone.append(out.select(pl.lit(system).alias("system"), pl.all()))
    want = _sorted(pl.concat(alone))
    assert got.columns == want.columns
    assert got.rows() == want.rows()
    assert got["system"].unique().sort().to_list() == ["a", "b", "c"]


#: case: predictions, labels, the message
DUPLICATES = {
    "one system's pair twice": (
        pl.concat([SYSTEMS, SYSTEMS.filter((pl.col("system") == "b") & (pl.col("item") == 13))]),
        LABELS,
        "2 prediction(s) share a (user, item) pair with another prediction of the same "
        "system (first in the group system='b') (e.g. (2, 13)); keep one prediction per "
        "system and pair, e.g. .unique(['system', 'user', 'item'])",
    ),
    "a pair twice in labels=": (
        SYSTEMS,
        pl.concat([LABELS, LABELS.filter(pl.col("item") == 14)]),
        "labels= holds a (user, item) pair more than once: 6 row(s) share one with "
        "another label, counted once per system that predicts the pair (e.g. (3, 14)); "
        "every system's predictions are scored against one label per pair: keep one, "
        "e.g. labels.unique(['user', 'item'])",
    ),
}


@pytest.mark.parametrize("case", list(DUPLICATES))
@pytest.mark.parametrize("route", LOCAL + ENGINES)
def test_a_duplicate_within_one_system_or_the_labels_is_refused(
    route: str, case: str, request: pytest.FixtureRequest
) -> None:
    predictions, labels, message = DUPLICATES[case]
    with pytest.raises(irm.DuplicateError, match=f"^{re.escape(message)}$"):
        _evaluate(route, request, predictions, labels, systems="system", **PAIRS)


def test_without_systems_two_predictions_of_a_pair_are_still_refused() -> None:
    with pytest.raises(
        irm.DuplicateError,
        match=re.escape(
            "9 row(s) share a (user, item) pair with another row on the same side (e.g. "
            "(1, 10)); keep one prediction and one label per pair, e.g. "
            ".unique(['user', 'item'])"
        ),
    ):
        irm.evaluate(SYSTEMS.filter(pl.col("user") == 1), METRICS, labels=LABELS, **PAIRS)
