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
