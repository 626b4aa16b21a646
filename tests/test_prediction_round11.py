"""Prediction metrics, round 11: the expressions took ``positive_label=0`` (the flipped
AUC, which :func:`polars_irmetrics.evaluate` refuses); ``irm.ece`` gave a number for a
group with a NaN prediction (the row fell in no bin but counted in the denominator)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError

CLICKS = pl.DataFrame({"y": [1, 0, 1, 0], "p": [0.9, 0.2, 0.3, 0.5]})


def _zero_positive(positive: object) -> str:
    return (
        f"positive_label={positive!r} names the negative label: a numeric label is positive "
        "where it equals positive_label and negative where it is 0; to score 0 as the "
        "positive class, flip the labels, e.g. (pl.col('y') == 0).cast(pl.Int8), and the "
        "predictions (1 - p)"
    )


EXPRESSIONS: list[Callable[..., pl.Expr]] = [
    irm.auc,
    irm.pr_auc,
    irm.logloss,
    irm.ne,
    irm.brier,
    irm.calibration,
    irm.ece,
]


@pytest.mark.parametrize("positive", [0, 0.0, -0.0])
@pytest.mark.parametrize("function", EXPRESSIONS, ids=lambda f: f.__name__)
def test_expression_refuses_positive_label_zero(
    function: Callable[..., pl.Expr], positive: object
) -> None:
    message = _zero_positive(positive)
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        function("y", "p", positive_label=positive)  # when the expression is built
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(
            CLICKS, [function.__name__], label="y", prediction="p", positive_label=positive
        )


def test_expression_refuses_positive_label_zero_for_gauc() -> None:
    with pytest.raises(InvalidValueError, match=f"^{re.escape(_zero_positive(0))}$"):
        irm.gauc("y", "p", query_id="user", positive_label=0)


def test_expression_positive_label_one_and_true_still_read() -> None:
    assert CLICKS.select(irm.auc("y", "p", positive_label=1)).item() == 0.75
    booleans = CLICKS.with_columns(pl.col("y").cast(pl.Boolean))
    assert booleans.select(irm.auc("y", "p", positive_label=True)).item() == 0.75


NAN = pl.DataFrame({"g": [1, 1, 2], "y": [1, 0, 1], "p": [float("nan"), 0.2, 0.4]})


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("bins", [10, 2])
def test_ece_of_a_nan_prediction_is_nan(lazy: bool, bins: int) -> None:
    frame = NAN.lazy() if lazy else NAN
    whole = frame.select(irm.ece("y", "p", bins=bins))
    value = (whole.collect() if isinstance(whole, pl.LazyFrame) else whole).item()
    assert math.isnan(value)
    grouped = frame.group_by("g").agg(irm.ece("y", "p", bins=bins)).sort("g")
    out = grouped.collect() if isinstance(grouped, pl.LazyFrame) else grouped
    first, second = out[f"ece@{bins}"].to_list()
    assert math.isnan(first)  # the group with the NaN
    assert second == pytest.approx(0.6, rel=1e-15)  # one click predicted 0.4


def test_ece_of_a_nan_prediction_is_refused_by_evaluate() -> None:
    message = (
        "column 'p' has 1 NaN value(s); a NaN prediction has no rank nor loss: fix the "
        "model's output or drop those rows, e.g. .filter(pl.col('p').is_not_nan())"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(NAN, ["ece"], label="y", prediction="p")
