"""Round 6 of the prediction fixes: weights below 2**-30 are refused (they were silently
wrong in the sums of units of 2**-64), and a NaN prediction gives NaN in the ordering
expressions (``irm.auc``, ``irm.pr_auc``, ``irm.gauc``), as their module says."""

from __future__ import annotations

import math
import re
from typing import Any

import polars as pl
import pytest
from sklearn.metrics import average_precision_score, log_loss, roc_auc_score

import polars_irmetrics as irm

LABELS = [1, 0, 1, 0, 1]
PREDS = [0.9, 0.2, 0.4, 0.6, 0.7]
WEIGHTS = [1.0, 2.0, 3.0, 1.0, 2.0]
METRICS = ["auc", "logloss", "pr_auc", "brier"]


def _table(scale: float) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "label": LABELS,
            "prediction": PREDS,
            "w": [w * scale for w in WEIGHTS],
            "query_id": [1, 1, 2, 2, 2],
            "segment": ["a", "a", "a", "b", "b"],
        }
    )


def _message(example: str, where: str = "", n: int = 5) -> str:
    return (
        f"column 'w' has {n} weight(s) that are null, NaN, negative, below 2**-30 (other "
        f"than 0) or 2**32 or more (infinite too){where} (e.g. {example}); sample weights "
        "must be "
        "0 or in [2**-30, 2**32) = [9.313225746154785e-10, 4294967296) (what the exact sums "
        "in units of 2**-64 hold): rescale them (every prediction metric is unchanged when "
        "all weights in that range are multiplied by one number)"
    )


PATHS: list[tuple[str, bool, dict[str, Any]]] = [
    ("DataFrame", False, {}),
    ("LazyFrame", True, {}),
    ("buckets", False, {"buckets": 2}),
    ("per_query", False, {"per_query": True}),
    ("by", True, {"by": "segment"}),
]


@pytest.mark.parametrize(
    ("scale", "example", "n"),
    [
        (1e-12, "1e-12", 5),
        (1e-17, "1e-17", 5),
        (2.0**-64, "5.421010862427522e-20", 5),
        (1e-20, "1e-20", 5),
        (2.0**-31, "4.656612873077393e-10", 2),  # 2 x 2**-31 = 2**-30 is kept
    ],
    ids=["1e-12", "1e-17", "2**-64", "1e-20", "2**-31"],
)
@pytest.mark.parametrize(("path", "lazy", "kw"), PATHS, ids=[p[0] for p in PATHS])
def test_small_weights_are_refused(
    scale: float, example: str, n: int, path: str, lazy: bool, kw: dict[str, Any]
) -> None:
    """Were a wrong logloss (0.58% off at 1e-17, 0.7778 at 2**-64) or null metrics."""
    table = _table(scale)
    frame: pl.DataFrame | pl.LazyFrame = table.lazy() if lazy else table
    where = {
        "per_query": " (first in the group query_id=1)",
        "by": " (first in the group segment='a')",
    }.get(path, "")

    def run() -> None:
        out = irm.evaluate(frame, METRICS, sample_weight="w", **kw)
        if isinstance(out, pl.LazyFrame):
            out.collect()

    with pytest.raises(irm.InvalidValueError, match=re.escape(_message(example, where, n))):
        run()


@pytest.mark.parametrize(
    ("scale", "rel"),
    [(1.0, 1e-12), (2.0**30, 1e-12), (1e-9, 2.0**-33), (2.0**-30, 2.0**-33)],
    ids=["1", "2**30", "1e-9", "2**-30"],
)
def test_pin_weights_in_the_range_match_sklearn(scale: float, rel: float) -> None:
    """Pin (right before too): weights in [2**-30, 2**32) give scikit-learn's values, to
    1e-12 for ordinary weights and to about 34 bits at the smallest accepted ones (each
    weight is held to 2**-34 of itself or better by the units of 2**-64)."""
    table = _table(scale)
    row = irm.evaluate(table, METRICS, sample_weight="w").row(0, named=True)
    w = [x * scale for x in WEIGHTS]
    expected = {
        "auc": roc_auc_score(LABELS, PREDS, sample_weight=w),
        "logloss": log_loss(LABELS, PREDS, sample_weight=w),
        "pr_auc": average_precision_score(LABELS, PREDS, sample_weight=w),
        "brier": sum(wi * (p - y) ** 2 for wi, p, y in zip(w, PREDS, LABELS, strict=True))
        / sum(w),
    }
    for name, value in expected.items():
        assert math.isclose(row[name], value, rel_tol=rel), (name, row[name], value)


def test_pin_zero_weight_is_kept() -> None:
    """Pin: a weight of 0 is not refused (it drops its row)."""
    table = _table(1.0).with_columns(pl.Series("w", [1.0, 2.0, 3.0, 1.0, 0.0]))
    out = irm.evaluate(table, ["logloss"], sample_weight="w")
    w = [1.0, 2.0, 3.0, 1.0, 0.0]
    assert math.isclose(out["logloss"][0], log_loss(LABELS, PREDS, sample_weight=w))


NAN = float("nan")

#: (case, labels, predictions, query ids, expected auc, pr_auc, gauc)
NAN_CASES: list[tuple[str, list[int], list[float], list[int], float, float, float]] = [
    ("nan at a negative", [1, 0, 1], [0.3, NAN, 0.5], [1, 1, 1], NAN, NAN, NAN),
    ("nan at a positive", [1, 0, 0], [NAN, 0.2, 0.5], [1, 1, 1], NAN, NAN, NAN),
    ("all nan", [1, 0], [NAN, NAN], [1, 1], NAN, NAN, NAN),
    ("nan in another query", [1, 0, 1, 0], [0.9, 0.1, NAN, 0.2], [1, 1, 2, 2], NAN, NAN, NAN),
]


@pytest.mark.parametrize(
    ("case", "labels", "preds", "queries", "auc", "pr_auc", "gauc"),
    NAN_CASES,
    ids=[c[0] for c in NAN_CASES],
)
def test_nan_prediction_gives_nan_in_ordering_expressions(
    case: str,
    labels: list[int],
    preds: list[float],
    queries: list[int],
    auc: float,
    pr_auc: float,
    gauc: float,
) -> None:
    """Were 1.0 (or 0.0): NaN ordered above every score."""
    table = pl.DataFrame({"label": labels, "prediction": preds, "query_id": queries})
    row = table.select(irm.auc(), irm.pr_auc(), irm.gauc()).row(0, named=True)
    for name, value in {"auc": auc, "pr_auc": pr_auc, "gauc": gauc}.items():
        assert math.isnan(row[name]) == math.isnan(value), (case, name, row[name])
    grouped = (
        table.with_columns(g=pl.lit("a"))
        .group_by("g")
        .agg(irm.auc(), irm.pr_auc(), irm.gauc())
        .row(0, named=True)
    )
    assert all(math.isnan(grouped[name]) for name in ("auc", "pr_auc", "gauc")), grouped


def test_pin_groups_without_nan_keep_their_value() -> None:
    """Pin: a group with no NaN is untouched (scikit-learn's values); another group's
    NaN does not reach it; a one-class group stays null."""
    table = pl.DataFrame(
        {
            "g": ["a", "a", "a", "a", "b", "b", "c"],
            "label": [1, 0, 1, 0, 1, 0, 1],
            "prediction": [0.9, 0.4, 0.4, 0.1, NAN, 0.3, 0.5],
            "query_id": [1, 1, 1, 1, 1, 1, 1],
        }
    )
    out = table.group_by("g").agg(irm.auc(), irm.pr_auc(), irm.gauc()).sort("g")
    a = out.row(0, named=True)
    assert a["auc"] == roc_auc_score([1, 0, 1, 0], [0.9, 0.4, 0.4, 0.1]) == 0.875
    assert math.isclose(a["pr_auc"], average_precision_score([1, 0, 1, 0], [0.9, 0.4, 0.4, 0.1]))
    assert a["gauc"] == 0.875
    assert all(math.isnan(v) for v in out.row(1)[1:])
    assert out.row(2)[1:] == (None, 1.0, None)  # positives only: sklearn's AP is 1


@pytest.mark.parametrize("dtype", [pl.Int64, pl.UInt64, pl.Float32], ids=str)
def test_pin_integer_and_float32_scores_still_work(dtype: pl.DataType) -> None:
    """Pin: the NaN test casts the scores; integer scores keep their exact order."""
    table = pl.DataFrame(
        {"label": [1, 0, 0], "prediction": [1, 0, 1]}, schema_overrides={"prediction": dtype}
    )
    assert table.select(irm.auc(), irm.pr_auc()).row(0) == (0.75, 0.5)
