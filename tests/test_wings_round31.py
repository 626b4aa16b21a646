"""Round 31: trust at every joint in the prediction, online and vectors wings.

Each test is a tiny adversarial input that gave a number reading as valid (or a
library-foreign error) before this round."""

from __future__ import annotations

import math

import polars as pl
import pytest
from sklearn.metrics import log_loss, roc_auc_score

import polars_irmetrics as irm

FRAMES = [pl.DataFrame, pl.LazyFrame]


def _collected(out: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return out.collect() if isinstance(out, pl.LazyFrame) else out


def _one(frame: pl.DataFrame | pl.LazyFrame, expr: pl.Expr) -> float:
    return _collected(frame.select(expr)).item()


# a value irm.evaluate refuses, given to the bare expression: NaN, never a number read
# as valid (the labels and probabilities of the good rows are the same in each case)
BAD_VALUES = [
    # probability 1.5: logloss read it as a clipped probability (0.138)
    ("probability above 1", {"prediction": [1.5, 0.2, 0.8, 0.1]}, irm.logloss, None),
    ("probability below 0", {"prediction": [0.9, -0.2, 0.8, 0.1]}, irm.brier, None),
    # label 2: a negative for auc (0.667 instead of NaN)
    ("label 2", {"label": [2, 0, 1, 0]}, irm.auc, (roc_auc_score, "multi_class")),
    ("label -1", {"label": [1, -1, 1, -1]}, irm.ece, None),
    # a null prediction made auc 0.0 where the other three rows order right
    ("null prediction", {"prediction": [None, 0.2, 0.8, 0.1]}, irm.auc, None),
    ("null label", {"label": [None, 0, 1, 0]}, irm.logloss, (log_loss, "Unknown label type")),
    ("NaN label", {"label": [float("nan"), 0.0, 1.0, 0.0]}, irm.pr_auc, None),
    ("infinite rating", {"prediction": [float("inf"), 0.2, 0.8, 0.1]}, irm.rmse, None),
]


@pytest.mark.parametrize("frame", FRAMES)
@pytest.mark.parametrize(("case", "columns", "metric", "peer"), BAD_VALUES)
def test_prediction_expression_gives_nan_where_evaluate_refuses(
    frame: type, case: str, columns: dict, metric: object, peer: object
) -> None:
    data = {"label": [1, 0, 1, 0], "prediction": [0.9, 0.2, 0.8, 0.1], **columns}
    value = _one(frame(data), metric())  # type: ignore[operator]
    assert math.isnan(value), (case, value)
    name = metric.__name__  # type: ignore[attr-defined]
    with pytest.raises(irm.InvalidValueError, match=r"column '(label|prediction)' has [12] "):
        _collected(irm.evaluate(frame(data), [name], label="label", prediction="prediction"))
    if peer is not None:  # scikit-learn refuses the same rows
        function, said = peer  # type: ignore[misc]
        with pytest.raises(ValueError, match=said):
            function(data["label"], data["prediction"])


def test_prediction_expression_valid_groups_keep_their_values() -> None:
    # one bad group gives NaN, the other its scikit-learn value; a score outside
    # [0, 1] is valid for auc (it reads the order only)
    log = pl.DataFrame(
        {
            "g": ["a"] * 4 + ["b"] * 4,
            "label": [1, 0, 1, 0, 2, 0, 1, 0],
            "prediction": [3.0, 0.5, 0.5, -1.0, 0.9, 0.2, 0.8, 0.1],
        }
    )
    out = log.group_by("g").agg(irm.auc(), irm.brier()).sort("g")
    assert out["auc"][0] == roc_auc_score([1, 0, 1, 0], [3.0, 0.5, 0.5, -1.0])
    assert math.isnan(out["brier"][0])
    assert math.isnan(out["auc"][1])
