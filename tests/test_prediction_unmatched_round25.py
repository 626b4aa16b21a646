"""Predictions and ``labels=`` that share no pair at all, round 25.

Under ``unmatched='error'`` a prediction without a label was refused with "pass
unmatched='drop' to evaluate only the pairs on both sides", which, where no pair
matches, leaves every value null (with a warning). Where nothing matches the refusal
now names the likely cause instead: ids that do not line up, with the key columns and
a first pair of each side; or an empty side. Some pairs matching keeps the advice to
drop the others. A label without a prediction under ``by=`` was refused as a null
group (the groups are the predictions' columns); it is the one-sided pair it is. The
same text on one machine, lazy or not, and on Spark and Dask.
"""

from __future__ import annotations

import re
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm

from .helpers import engine_io

PREDICTIONS = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q2"],
        "doc_id": ["a", "b", "c", "d"],
        "prediction": [0.9, 0.2, 0.4, 0.7],
    }
)
LABELS = PREDICTIONS.select("query_id", "doc_id", label=pl.Series([1, 0, 0, 1]))
NUMBERED = pl.DataFrame({"user": [1, 1, 2], "item": [10, 11, 12], "prediction": [0.9, 0.2, 0.4]})


def _none(predictions: int, labels: int, ours: str, theirs: str, keys: str = "query_id") -> str:
    docs = "doc_id" if keys == "query_id" else "item"
    return (
        f"labels= and the predictions share none of their ({keys}, {docs}) pairs "
        f"({predictions} predictions, {labels} labels; e.g. the predictions' {ours}, the "
        f"labels' {theirs}): ids that do not line up are the likely cause: give labels= and "
        f"the predictions the same {keys!r} and {docs!r} values (same spelling, same "
        "collection); unmatched='drop' would leave no pair to evaluate, every value null"
    )


def _empty(side: str, held: int, other: str, example: str) -> str:
    return (
        f"{side} no row, so none of the {held} {other}' (query_id, doc_id) pairs is matched "
        f"(e.g. {example}): unmatched='drop' would leave no pair to evaluate, every value "
        "null; pass the table that holds them (an empty one is a filter that kept nothing, "
        "or an empty file)"
    )


def _some(n: int, side: str, example: str) -> str:
    have = "a prediction but no label" if side == "predictions" else "a label but no prediction"
    return (
        f"{n} (query_id, doc_id) pair(s) have {have} (e.g. {example}); pass "
        "unmatched='drop' to evaluate only the pairs on both sides (as Microsoft "
        "Recommenders' inner merge does)"
    )


# (case, the predictions, the labels, options, the refusal)
CASES: list[tuple[str, pl.DataFrame, pl.DataFrame, dict[str, Any], str]] = [
    (
        "query ids of another case",
        PREDICTIONS,
        LABELS.with_columns(pl.col("query_id").str.to_uppercase()),
        {},
        _none(4, 4, "(q1, a)", "(Q1, a)"),
    ),
    (
        "document ids with a prefix",
        PREDICTIONS,
        LABELS.with_columns(pl.format("doc_{}", "doc_id").alias("doc_id")),
        {},
        _none(4, 4, "(q1, a)", "(q1, doc_a)"),
    ),
    (
        "integer ids of another id space, other key names",
        NUMBERED,
        NUMBERED.select("user", pl.col("item") + 100, label=pl.Series([1, 0, 1])),
        {"query_id": "user", "doc_id": "item"},
        _none(3, 3, "(1, 10)", "(1, 110)", keys="user"),
    ),
    (
        "under by=: a label's missing group is no null group",
        PREDICTIONS.with_columns(day=pl.lit(1)),
        LABELS.with_columns(pl.col("query_id").str.to_uppercase()),
        {"by": "day"},
        _none(4, 4, "(q1, a)", "(Q1, a)"),
    ),
    (
        "empty labels",
        PREDICTIONS,
        LABELS.clear(),
        {},
        _empty("labels= holds", 4, "predictions", "(q1, a)"),
    ),
    (
        "empty predictions",
        PREDICTIONS.clear(),
        LABELS,
        {},
        _empty("the predictions hold", 4, "labels", "(q1, a)"),
    ),
    # some pairs match: dropping the others is the advice, as before
    (
        "some predictions without a label",
        PREDICTIONS,
        LABELS.head(3),
        {},
        _some(1, "predictions", "(q2, d)"),
    ),
    (
        "some labels without a prediction, under by=",
        PREDICTIONS.head(3).with_columns(day=pl.lit(1)),
        LABELS,
        {"by": "day"},
        _some(1, "labels", "(q2, d)"),
    ),
]


def _collected(out: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return out.collect() if isinstance(out, pl.LazyFrame) else out


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
@pytest.mark.parametrize(
    ("case", "predictions", "labels", "options", "message"), CASES, ids=[c[0] for c in CASES]
)
def test_predictions_and_labels_that_share_no_pair_name_the_ids(
    case: str,
    predictions: pl.DataFrame,
    labels: pl.DataFrame,
    options: dict[str, Any],
    message: str,
    lazy: bool,
) -> None:
    tables = (predictions.lazy(), labels.lazy()) if lazy else (predictions, labels)
    with pytest.raises(irm.QuerySetError, match=f"^{re.escape(message)}$"):
        _collected(irm.evaluate(tables[0], ["auc", "logloss"], labels=tables[1], **options))


@pytest.mark.parametrize("engine", ["spark", "dask"])
@pytest.mark.parametrize(
    ("case", "predictions", "labels", "options", "message"),
    [c for c in CASES if "empty" not in c[0]],
    ids=[c[0] for c in CASES if "empty" not in c[0]],
)
def test_the_engines_refuse_as_one_machine(
    case: str,
    predictions: pl.DataFrame,
    labels: pl.DataFrame,
    options: dict[str, Any],
    message: str,
    engine: str,
    request: pytest.FixtureRequest,
) -> None:
    evaluate, to_engine, from_engine = engine_io(engine, request)
    with pytest.raises(irm.QuerySetError, match=f"^{re.escape(message)}$"):
        from_engine(evaluate(to_engine(predictions), ["auc"], labels=to_engine(labels), **options))
