"""irm.compare refuses a prediction metric's doc_id= as irm.evaluate does.

Since c663447 ``irm.evaluate`` refuses ``doc_id=`` where no prediction metric reads it
(only the two-table form, ``labels=``, does); compare, which takes no ``labels=``, let
it pass, a column that does not exist included. ``query_id=`` stays: compare pairs the
systems' queries by it.
"""

from __future__ import annotations

import re

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

PREDICTIONS = pl.DataFrame(
    {"user": ["a", "a", "b", "b"], "label": [1, 0, 0, 1], "prediction": [0.9, 0.2, 0.3, 0.8]}
)
MESSAGE = (
    "doc_id='no_such_column' is not read by metric 'auc': the prediction metrics read it "
    "only with labels= (the two-table form, joined on query_id and doc_id); drop doc_id= "
    "(an option no metric reads would change nothing)"
)


@pytest.mark.parametrize("lazy", [False, True])
def test_compare_refuses_a_doc_id_no_metric_reads(lazy: bool) -> None:
    runs = {"a": PREDICTIONS, "b": PREDICTIONS}
    with pytest.raises(InvalidValueError, match=f"^{re.escape(MESSAGE)}$"):
        irm.compare(runs, ["auc"], query_id="user", doc_id="no_such_column")
    frame = pl.concat([PREDICTIONS.with_columns(system=pl.lit(s)) for s in "ab"])
    with pytest.raises(InvalidValueError, match=f"^{re.escape(MESSAGE)}$"):
        (frame.lazy() if lazy else frame).irm.compare(
            ["auc"], query_id="user", doc_id="no_such_column"
        )


def test_compare_reads_query_id_to_pair_the_queries() -> None:
    out = irm.compare({"a": PREDICTIONS, "b": PREDICTIONS}, ["auc"], query_id="user")
    assert out.select("metric", "delta", "n").row(0) == ("auc", 0.0, 2)
