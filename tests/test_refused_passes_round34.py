"""A refused prediction call on Spark costs no more jobs than a valid one (round 34).

The scale pass's tasks count the data checks of their rows too (an accumulator by
partition), merged and raised on the driver with one machine's words before any later
pass: a refused call no longer runs the last pass to fail, then a checks pass of its
own (three passes where a valid call runs two).
"""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest
from pyspark.sql import SparkSession

import polars_irmetrics as irm
import polars_irmetrics.spark as irm_spark

LABELS = pl.DataFrame(
    {"user": [1, 1, 2, 2, 3], "item": [10, 11, 10, 12, 11], "label": [1, 0, 0, 1, 1]}
)
GOOD = LABELS.with_columns(pl.Series("prediction", [0.9, 0.2, 0.4, 0.7, 0.6]))
#: case: the predictions refused, the call's options (the valid call: GOOD, the same)
CASES: dict[str, tuple[pl.DataFrame, dict[str, Any]]] = {
    # system b predicts user 1's pairs only: 3 labelled pairs without its prediction
    "a system skips labels": (
        pl.concat(
            [GOOD.with_columns(system=pl.lit("a")), GOOD.head(2).with_columns(system=pl.lit("b"))]
        ),
        {"labels": LABELS, "systems": "system", "query_id": "user", "doc_id": "item"},
    ),
    # probabilities out of [0, 1] in two users' rows (two parts): the table's count
    "predictions out of range": (
        GOOD.with_columns(prediction=pl.Series([1.5, 0.2, 0.4, -0.5, 0.6])),
        {},
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_refused_call_runs_no_more_jobs_than_a_valid_one(spark: SparkSession, case: str) -> None:
    refused, kw = CASES[case]
    valid = GOOD.with_columns(system=pl.lit("a")) if "systems" in kw else GOOD

    tracker = spark.sparkContext.statusTracker()
    ran: list[int] = []

    def spark_call(frame: pl.DataFrame) -> None:
        given = {k: spark.createDataFrame(v.to_arrow()) for k, v in kw.items() if k == "labels"}
        table = spark.createDataFrame(frame.to_arrow())
        before = len(tracker.getJobIdsForGroup())
        try:
            irm_spark.evaluate(table, ["auc", "logloss", "rmse"], **{**kw, **given})
        finally:
            ran.append(len(tracker.getJobIdsForGroup()) - before)

    spark_call(valid)
    with pytest.raises(irm.errors.IrmError) as one:
        irm.evaluate(refused, ["auc", "logloss", "rmse"], **kw)
    with pytest.raises(type(one.value)) as raised:
        spark_call(refused)
    assert str(raised.value) == str(one.value)  # one machine's words
    valid_jobs, refused_jobs = ran
    assert refused_jobs <= valid_jobs
