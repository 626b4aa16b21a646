"""Round 33: which checks run never depends on the metrics; a refusal names the
function the user called.

1. A null query id in a prediction table that has the query column was refused by
   ``gauc`` (which groups by query) and scored by ``logloss``, ``mse``, ``ece``,
   ``r2``, ``calibration``...: now refused with one message beside any metric list.
2. ``irm.compare`` and ``irm.tukey_hsd`` said "pass groups=... to irm.evaluate" (and
   "pass judged_only=True to irm.evaluate"), a function the user did not call: the fix
   now names the one called, which takes that keyword too.
"""

from __future__ import annotations

import re
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm

from .conftest import Evaluate

# --- 1. a null query id, whatever the prediction metrics ------------------------------

NULL_QUERY = pl.DataFrame(
    {
        "query_id": ["u1", None, "u2", "u2"],
        "label": [1, 0, 1, 0],
        "prediction": [0.9, 0.2, 0.7, 0.4],
    }
)
NULL_QUERY_MESSAGE = (
    "column 'query_id' has 1 null value(s); every row of a table with a query (user) "
    "column needs its query, whatever the metrics (gauc and per_query=True group the rows "
    "by it), and a null id is none: drop those rows, e.g. .drop_nulls('query_id'), or fill "
    "them, e.g. pl.col('query_id').fill_null(...)"
)


@pytest.mark.parametrize(
    "metrics",
    [["logloss"], ["mse"], ["ece"], ["r2"], ["calibration"], ["auc", "rmse"], ["gauc"]],
)
def test_a_null_query_id_is_refused_whatever_the_metrics(
    evaluate: Evaluate, metrics: list[str]
) -> None:
    # it was refused for gauc alone: logloss of the same table was 0.299001
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(NULL_QUERY_MESSAGE)}$"):
        evaluate(NULL_QUERY, metrics, label="label", prediction="prediction")


# --- 2. compare and tukey_hsd name themselves in the fix --------------------------------

RUNS = pl.DataFrame(
    {
        "system": ["a", "a", "b", "b"] * 2,
        "query_id": ["q1"] * 4 + ["q2"] * 4,
        "doc_id": ["d1", "d2"] * 4,
        "score": [2.0, 1.0, 1.0, 2.0] * 2,
    }
)
QRELS = pl.DataFrame(
    {"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d2", "d1"], "relevance": [1, 0, 1]}
)
GROUPS = (
    "metric 'awrf' reads document groups: pass groups=... (one row per (document, group)) "
    "to {calls}"
)
JUDGED = (
    "metric 'P(judged_only=True)@1' says judged_only=True and 'P@2' does not: it removes "
    "the unjudged documents from the run, for every metric of one evaluation; pass "
    "judged_only=True to {calls}, or evaluate the two lists apart"
)


def _compare(runs: Any, metrics: list[str]) -> object:
    if isinstance(runs, pl.LazyFrame):
        return runs.irm.compare(metrics, qrels=QRELS.lazy()).collect()
    return irm.compare(runs, metrics, qrels=QRELS)


def _tukey(runs: Any, metrics: list[str]) -> object:
    qrels = QRELS.lazy() if isinstance(runs, pl.LazyFrame) else QRELS
    return irm.tukey_hsd(runs, metrics, qrels=qrels)


@pytest.mark.parametrize(
    ("call", "calls"),
    [(_compare, "irm.compare"), (_tukey, "irm.tukey_hsd")],
    ids=["compare", "tukey"],
)
@pytest.mark.parametrize(
    ("metrics", "message"),
    [(["awrf"], GROUPS), (["P(judged_only=True)@1", "P@2"], JUDGED)],
    ids=["groups", "judged_only"],
)
def test_the_fix_names_the_function_called(
    call: Any, calls: str, metrics: list[str], message: str, frame_kind: str
) -> None:
    # it ended "... to irm.evaluate", whichever function was called
    runs = RUNS.lazy() if frame_kind == "LazyFrame" else RUNS
    expected = message.format(calls=calls)
    with pytest.raises(irm.MetricParameterError, match=f"^{re.escape(expected)}$"):
        call(runs, metrics)
