"""The doors of impression logs refuse a metric that is not a click metric by what it
reads (round 10). Before: ``evaluate_online(log, ['ips'])`` said "pass policy=... to
irm.evaluate_online", a keyword it has not (the suggested call raised Python's
``TypeError``); ``ab_test(log, ['ips'])`` and ``evaluate_online(log, ['rmse'])`` said
the metric "needs relevance judgments" and suggested ``qrels=``, which the off-policy
estimators refuse."""

from __future__ import annotations

import re

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import MetricParameterError
from polars_irmetrics.io.files import sample_interactions_path

LOG = pl.read_parquet(sample_interactions_path())

CASES = [
    ("ips", "an evaluation policy", "irm.evaluate(log, ['ips'], policy=...)"),
    (
        "coverage@10",
        "the interaction history",
        "irm.evaluate(run, ['coverage@10'], interactions=...)",
    ),
    (
        "rmse",
        "labels and predictions",
        "irm.evaluate(predictions, ['rmse'], label=..., prediction=...)",
    ),
    ("ndcg@10", "relevance judgments", "irm.evaluate(run, ['ndcg@10'], qrels=...)"),
    ("rbo", "a reference run", "irm.evaluate(run, ['rbo'], reference=...)"),
]


@pytest.mark.parametrize(("metric", "reads", "fix"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("door", ["evaluate_online", "ab_test"])
def test_a_metric_that_reads_no_clicks(metric: str, reads: str, fix: str, door: str) -> None:
    message = (
        f"metric {metric!r} is not a click metric: it reads {reads}, which an impression log "
        f"does not hold; evaluate it with {fix}, or choose a click metric such as 'ctr@10' "
        "(irm.list_metrics())"
    )
    with pytest.raises(MetricParameterError, match=f"^{re.escape(message)}$"):
        getattr(irm, door)(LOG, [metric])


def test_a_split_keyed_by_numbers_is_told_the_arms_are_text() -> None:
    """An integer arm column with split={0: 0.5, 1: 0.5}: "arm '0' of column 'arm' is
    not in the split {0: 0.5, 1: 0.5}", which read as a contradiction, with no fix."""
    log = LOG.with_columns(pl.col("arm").rank("dense").cast(pl.Int64) - 1)
    message = (
        "split names arm 0, and the arms are named as text whatever the column's dtype: "
        "key the split by text, e.g. split={'0': 0.5, '1': 0.5}"
    )
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.ab_test(log, ["ctr@10"], control="0", split={0: 0.5, 1: 0.5})  # type: ignore[dict-item]
    text = irm.ab_test(log, ["ctr@10"], control="0", split={"0": 0.5, "1": 0.5})
    assert text.height == 1
