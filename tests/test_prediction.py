"""Prediction quality: AUC, group AUC, log loss, NE, calibration, ECE, rating errors.

Against scikit-learn for every metric it has (random inputs with ties and weights),
hand arithmetic for gauc, ne, ece and calibration, Microsoft Recommenders'
python_evaluation rating/AUC/log-loss functions (their values on random inputs, written
by scripts/recommenders_prediction_reference.py into tests/data/: recommenders itself
pins packages of its own and is not a test dependency; and their recipe, an inner merge of
rating_true and rating_pred on user and item then scikit-learn), compare's paired tests
of per-user AUC against scipy, and the bad inputs with their exact messages.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import hypothesis.strategies as st
import numpy as np
import polars as pl
import pytest
from hypothesis import given
from scipy import stats
from sklearn import metrics as skm

import polars_irmetrics as irm
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.metrics.registry import parse_metric_list
from polars_irmetrics.prediction.parts import (
    merge_means,
    merge_scale,
    merge_statistics,
    part_means,
    part_scale,
    part_statistics,
)
from polars_irmetrics.prediction.statistics import needs_means, needs_scale

from .helpers import property_settings

SkFn = Callable[..., float]


def _log_loss(y: Any, p: Any, sample_weight: Any = None) -> float:
    return float(skm.log_loss(y, p, sample_weight=sample_weight, labels=[0, 1]))


#: metric, the expression function, scikit-learn's function, what the label is
CASES: list[tuple[str, Callable[..., pl.Expr], SkFn, str]] = [
    ("auc", irm.auc, skm.roc_auc_score, "binary"),
    ("pr_auc", irm.pr_auc, skm.average_precision_score, "binary"),
    ("logloss", irm.logloss, _log_loss, "binary"),
    ("brier", irm.brier, skm.brier_score_loss, "binary"),
    ("rmse", irm.rmse, skm.root_mean_squared_error, "rating"),
    ("mse", irm.mse, skm.mean_squared_error, "rating"),
    ("mae", irm.mae, skm.mean_absolute_error, "rating"),
    ("r2", irm.r2, skm.r2_score, "rating"),
    ("explained_variance", irm.explained_variance, skm.explained_variance_score, "rating"),
]

PROBS = [0.0, 0.1, 0.25, 0.5, 0.5, 0.75, 0.9, 1.0]  # few values: many ties
WEIGHTS = [0.5, 1.0, 2.0, 3.0]


@st.composite
def binary_tables(draw: st.DrawFn) -> pl.DataFrame:
    n = draw(st.integers(2, 30))
    labels = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    labels[0], labels[1] = 0, 1  # both classes
    return pl.DataFrame(
        {
            "label": labels,
            "prediction": draw(st.lists(st.sampled_from(PROBS), min_size=n, max_size=n)),
            "w": draw(st.lists(st.sampled_from(WEIGHTS), min_size=n, max_size=n)),
        }
    )


@st.composite
def rating_tables(draw: st.DrawFn, scales: tuple[float, ...] = (1.0,)) -> pl.DataFrame:
    """Ratings 1..5 and predictions (ties), times a scale drawn from ``scales``."""
    n = draw(st.integers(2, 30))
    labels = draw(st.lists(st.integers(1, 5), min_size=n, max_size=n))
    labels[0], labels[1] = 1, 5  # not constant
    preds = draw(st.lists(st.sampled_from([1.0, 2.5, 3.0, 4.25, 5.0]), min_size=n, max_size=n))
    weights = draw(st.lists(st.sampled_from(WEIGHTS), min_size=n, max_size=n))
    scale = draw(st.sampled_from(scales))
    return pl.DataFrame(
        {
            "label": [v * scale for v in labels],
            "prediction": [v * scale for v in preds],
            "w": weights,
        }
    )


#: Scales of the rating paths' tests: far below 2**-64 per squared error and beyond
#: 2**32 (the units of the sums before they were scaled), to the ends of float64.
SCALES = (1.0, 1e-10, 3e-300, 2.0**-1060, 1e12, 1e150, 1.5e300)


def _close(ours: float | None, theirs: float) -> None:
    assert ours is not None
    assert math.isclose(ours, theirs, rel_tol=1e-12, abs_tol=1e-12), (ours, theirs)


@pytest.mark.parametrize(("name", "fn", "peer", "kind"), CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@property_settings(max_examples=10)
@given(data=st.data())
def test_equal_to_scikit_learn(
    name: str, fn: Callable[..., pl.Expr], peer: SkFn, kind: str, weighted: bool, data: Any
) -> None:
    table = data.draw(binary_tables() if kind == "binary" else rating_tables())
    y, p, w = (table[c].to_numpy() for c in ("label", "prediction", "w"))
    expected = peer(y, p, sample_weight=w if weighted else None)
    weight = "w" if weighted else None
    # the expression, eagerly
    _close(table.select(fn(sample_weight=weight)).item(), expected)
    # the door, lazily: a LazyFrame comes back, nothing computed before collect
    plan = irm.evaluate(table.lazy(), [name], sample_weight=weight)
    assert isinstance(plan, pl.LazyFrame)
    _close(plan.collect()[name].item(), expected)
    # out of core (auc and pr_auc from score histograms), by a segment
    segmented = table.with_columns(segment=pl.lit("s"))
    out = irm.evaluate(segmented, [name], sample_weight=weight, buckets=2, by="segment")
    _close(out[name].item(), expected)


@property_settings(max_examples=13)
@given(table=binary_tables(), weighted=st.booleans())
def test_ne_is_logloss_over_the_base_rate_entropy(table: pl.DataFrame, weighted: bool) -> None:
    y, p, w = (table[c].to_numpy() for c in ("label", "prediction", "w"))
    weights = w if weighted else np.ones(len(y))
    rate = float((weights * y).sum() / weights.sum())
    entropy = -(rate * math.log(rate) + (1 - rate) * math.log(1 - rate))
    expected = _log_loss(y, p, sample_weight=weights) / entropy
    got = irm.evaluate(table, ["ne"], sample_weight="w" if weighted else None)["ne"].item()
    _close(got, expected)


def test_ne_calibration_and_ece_by_hand() -> None:
    # 4 rows, 1 click: base rate 1/4
    table = pl.DataFrame({"label": [1, 0, 0, 0], "prediction": [0.5, 0.5, 0.125, 0.875]})
    logloss = -(math.log(0.5) + math.log(0.5) + math.log(0.875) + math.log(0.125)) / 4
    entropy = -(0.25 * math.log(0.25) + 0.75 * math.log(0.75))
    out = irm.evaluate(table, ["ne", "calibration", "ece@2", "ece", "logloss"])
    _close(out["logloss"].item(), logloss)
    _close(out["ne"].item(), logloss / entropy)
    _close(out["calibration"].item(), (0.5 + 0.5 + 0.125 + 0.875) / 1)
    # 2 bins: [0, 0.5) holds 0.125 (no click); [0.5, 1] holds 0.5, 0.5, 0.875 (1 click)
    _close(out["ece@2"].item(), (abs(0.125 - 0) + abs(1.875 - 1)) / 4)
    # 10 bins: 0.125 in bin 1, 0.5 (x2, 1 click) in bin 5, 0.875 in bin 8
    _close(out["ece"].item(), (0.125 + abs(1.0 - 1) + 0.875) / 4)


def test_ece_edges_and_weights_by_hand() -> None:
    # 1.0 falls in the last bin; 0.0 in the first; weights scale each row
    table = pl.DataFrame(
        {"label": [1, 0, 1, 0], "prediction": [1.0, 0.0, 0.3, 0.7], "w": [2.0, 1.0, 1.0, 1.0]}
    )
    # 2 bins: [0, .5): 0.0 (w1, y0), 0.3 (w1, y1): |0 + 0.3 - 1| = 0.7
    #         [.5, 1]: 1.0 (w2, y1), 0.7 (w1, y0): |2 * 0 + 0.7| = 0.7
    got = table.select(irm.ece(bins=2, sample_weight="w")).item()
    _close(got, (0.7 + 0.7) / 5)
    assert table.select(irm.ece(bins=2, sample_weight="w")).columns == ["ece@2"]


# --------------------------------------------------------------------------- gauc
GAUC_LOG = pl.DataFrame(
    {
        "segment": ["a"] * 6 + ["b"] * 3,
        "user": ["u1", "u1", "u1", "u2", "u2", "u3", "u4", "u4", "u5"],
        "clicked": [1, 0, 0, 1, 0, 1, 1, 0, 0],
        "p_click": [0.8, 0.3, 0.8, 0.1, 0.6, 0.5, 0.4, 0.4, 0.2],
    }
)


def test_gauc_by_hand() -> None:
    # a: u1 AUC (1 + 0.5) / 2 = 0.75 over 3 rows; u2 AUC 0 over 2 rows; u3 one class
    # b: u4 AUC 0.5 (a tie) over 2 rows; u5 one class
    out = irm.evaluate(
        GAUC_LOG,
        ["gauc", "gauc(weighting='uniform')", "auc"],
        label="clicked",
        prediction="p_click",
        query_id="user",
        by="segment",
    )
    assert out.columns == [
        "segment",
        "num_rows",
        "gauc",
        "gauc_one_class",
        "gauc(weighting='uniform')",
        "gauc(weighting='uniform')_one_class",
        "auc",
    ]
    rows = {r["segment"]: r for r in out.iter_rows(named=True)}
    _close(rows["a"]["gauc"], (3 * 0.75 + 2 * 0.0) / 5)
    _close(rows["a"]["gauc(weighting='uniform')"], (0.75 + 0.0) / 2)
    assert rows["a"]["gauc_one_class"] == 1
    assert rows["b"]["gauc_one_class"] == 1
    _close(rows["b"]["gauc"], 0.5)
    assert rows["a"]["num_rows"] == 6
    # the expression agrees inside an ordinary group_by
    expr = (
        GAUC_LOG.group_by("segment")
        .agg(irm.gauc("clicked", "p_click", query_id="user"))
        .sort("segment")["gauc"]
        .to_list()
    )
    assert expr == pytest.approx([rows["a"]["gauc"], rows["b"]["gauc"]], abs=1e-15)


def test_gauc_of_one_class_queries_only_is_null_with_a_count() -> None:
    log = pl.DataFrame({"query_id": ["q1", "q2"], "label": [1, 0], "prediction": [0.3, 0.2]})
    out = irm.evaluate(log, ["gauc", "auc"])
    assert out["gauc"].item() is None
    assert out["gauc_one_class"].item() == 2
    _close(out["auc"].item(), 1.0)  # over both rows, two classes
    assert log.select(irm.gauc()).item() is None


@property_settings(max_examples=10)
@given(
    data=st.data(),
    weighting=st.sampled_from(["rows", "uniform"]),
    weighted=st.booleans(),
)
def test_gauc_equals_a_loop_of_scikit_learn(data: Any, weighting: str, weighted: bool) -> None:
    table = data.draw(binary_tables())
    users = data.draw(
        st.lists(st.sampled_from(["u1", "u2", "u3"]), min_size=table.height, max_size=table.height)
    )
    table = table.with_columns(query_id=pl.Series(users))
    num = den = 0.0
    one_class = 0
    for user in sorted(set(users)):
        part = table.filter(pl.col("query_id") == user)
        y, p, w = (part[c].to_numpy() for c in ("label", "prediction", "w"))
        if len(set(y.tolist())) < 2:
            one_class += 1
            continue
        share = (w.sum() if weighted else len(y)) if weighting == "rows" else 1.0
        num += share * skm.roc_auc_score(y, p, sample_weight=w if weighted else None)
        den += share
    name = f"gauc(weighting={weighting!r})"
    weight = "w" if weighted else None
    out = irm.evaluate(table.lazy(), [name], sample_weight=weight).collect()
    expr = table.select(irm.gauc(weighting=weighting, sample_weight=weight)).item()  # type: ignore[arg-type]
    assert out[f"{name}_one_class"].item() == one_class
    if den == 0:
        assert out[name].item() is None
        assert expr is None
    else:
        _close(out[name].item(), num / den)
        _close(expr, num / den)


def test_per_query_gives_each_users_auc() -> None:
    out = irm.evaluate(
        GAUC_LOG.lazy(),
        ["auc", "gauc", "logloss"],
        label="clicked",
        prediction="p_click",
        query_id="user",
        per_query=True,
    ).collect()
    assert out.columns == ["user", "num_rows", "auc", "gauc", "logloss"]
    assert out["user"].to_list() == ["u1", "u2", "u3", "u4", "u5"]
    assert out["auc"].to_list() == [0.75, 0.0, None, 0.5, None]
    assert out["gauc"].to_list() == out["auc"].to_list()
    _close(out["logloss"][1], -(math.log(0.1) + math.log(0.4)) / 2)


def test_by_segments_in_an_ordinary_group_by() -> None:
    out = (
        GAUC_LOG.group_by("segment")
        .agg(irm.auc(label="clicked", prediction="p_click"), irm.calibration("clicked", "p_click"))
        .sort("segment")
    )
    for row in out.iter_rows(named=True):
        part = GAUC_LOG.filter(pl.col("segment") == row["segment"])
        y, p = part["clicked"].to_numpy(), part["p_click"].to_numpy()
        _close(row["auc"], skm.roc_auc_score(y, p))
        _close(row["calibration"], p.sum() / y.sum())


def test_positive_label() -> None:
    log = pl.DataFrame({"label": ["click", "skip", "click", "skip"], "p": [0.9, 0.2, 0.4, 0.6]})
    y = (log["label"] == "click").to_numpy().astype(int)
    expected = skm.roc_auc_score(y, log["p"].to_numpy())
    out = irm.evaluate(log, ["auc", "logloss"], prediction="p", positive_label="click")
    _close(out["auc"].item(), expected)
    _close(out["logloss"].item(), _log_loss(y, log["p"].to_numpy()))
    _close(log.select(irm.auc(prediction="p", positive_label="click")).item(), expected)
    booleans = pl.DataFrame({"label": [True, False, True], "prediction": [0.9, 0.5, 0.1]})
    _close(booleans.select(irm.auc()).item(), 0.5)
    numbers = pl.DataFrame({"label": [2, 0, 2, 0], "prediction": [0.9, 0.2, 0.4, 0.6]})
    _close(irm.evaluate(numbers, ["auc"], positive_label=2)["auc"].item(), 0.75)


def test_a_segment_with_one_class_has_null_auc() -> None:
    out = irm.evaluate(
        GAUC_LOG.filter(pl.col("user") != "u4"),
        ["auc", "pr_auc", "ne"],
        label="clicked",
        prediction="p_click",
        by="segment",
    )
    b = out.filter(pl.col("segment") == "b").row(0, named=True)
    assert b == {"segment": "b", "num_rows": 1, "auc": None, "pr_auc": None, "ne": None}


# --------------------------------------------------------------------------- two tables
TRUTH = pl.DataFrame(
    {"user": [1, 1, 2, 2, 3], "item": [10, 11, 10, 12, 13], "rating": [5, 3, 4, 1, 2]}
)
PRED = pl.DataFrame(
    {"user": [1, 1, 2, 2, 3], "item": [11, 10, 12, 10, 13], "p": [3.5, 4.0, 2.0, 4.5, 2.5]}
)
RATING_METRICS = ["rmse", "mae", "rsquared", "exp_var"]
RECOMMENDERS = {  # Recommenders' python_evaluation: sklearn on the merged arrays
    "rmse": lambda y, p: math.sqrt(skm.mean_squared_error(y, p)),
    "mae": skm.mean_absolute_error,
    "rsquared": skm.r2_score,
    "exp_var": skm.explained_variance_score,
}


def _recommenders_merge(truth: pl.DataFrame, pred: pl.DataFrame) -> tuple[Any, Any]:
    """pd.merge(rating_true, rating_pred, on=[user, item]): the pairs on both sides."""
    predicted = {(u, i): p for u, i, p in pred.iter_rows()}
    pairs = [(r, predicted[(u, i)]) for u, i, r in truth.iter_rows() if (u, i) in predicted]
    return np.array([r for r, _ in pairs], float), np.array([p for _, p in pairs], float)


@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
def test_two_tables_match_recommenders(lazy: bool) -> None:
    pred = PRED.lazy() if lazy else PRED
    out = irm.evaluate(
        pred,
        RATING_METRICS,
        labels=TRUTH,
        label="rating",
        prediction="p",
        query_id="user",
        doc_id="item",
    )
    assert isinstance(out, pl.LazyFrame) is lazy
    row = (out.collect() if isinstance(out, pl.LazyFrame) else out).row(0, named=True)
    y, p = _recommenders_merge(TRUTH, PRED)
    assert row["num_rows"] == 5
    for name in RATING_METRICS:
        _close(row[name], RECOMMENDERS[name](y, p))


def test_two_tables_one_sided_pairs() -> None:
    truth = TRUTH.vstack(pl.DataFrame({"user": [4], "item": [14], "rating": [3]}))
    pred = PRED.vstack(pl.DataFrame({"user": [5, 5], "item": [15, 16], "p": [1.0, 2.0]}))
    kw: dict[str, Any] = {
        "label": "rating",
        "prediction": "p",
        "query_id": "user",
        "doc_id": "item",
    }
    with pytest.raises(
        irm.QuerySetError,
        match=re.escape(
            "2 (user, item) pair(s) have a prediction but no label (e.g. (5, 15)); pass "
            "unmatched='drop' to evaluate only the pairs on both sides (as Microsoft "
            "Recommenders' inner merge does)"
        ),
    ):
        irm.evaluate(pred, ["rmse"], labels=truth, **kw)
    with pytest.raises(
        irm.QuerySetError, match=re.escape("1 (user, item) pair(s) have a label but no prediction")
    ):
        irm.evaluate(PRED, ["rmse"], labels=truth, **kw)
    dropped = irm.evaluate(pred, RATING_METRICS, labels=truth, unmatched="drop", **kw)
    y, p = _recommenders_merge(truth, pred)
    assert dropped["num_rows"].item() == 5
    for name in RATING_METRICS:
        _close(dropped[name].item(), RECOMMENDERS[name](y, p))


#: Labels in other ids than the predictions' (items 100 apart): no pair matches.
SHIFTED = TRUTH.with_columns(pl.col("item") + 100)
#: Keywords of the two-table form under unmatched='drop'.
DROP_KW: dict[str, Any] = {
    "label": "rating",
    "prediction": "p",
    "query_id": "user",
    "doc_id": "item",
    "unmatched": "drop",
}
NO_PAIR = (
    "labels= and the predictions share none of their (user, item) pairs (5 predictions, 5 "
    "labels): unmatched='drop' leaves out every prediction without a label, so every value "
    "is null. Ids that do not line up are the likely cause: give labels= and the predictions "
    "the same 'user' and 'item' values (same spelling, same collection)."
)


def _warnings_of(call: Callable[[], object]) -> tuple[object, list[str]]:
    with pytest.warns() as caught:  # every warning, none lost to a filter
        out = call()
    return out, [str(w.message) for w in caught if issubclass(w.category, irm.IrmWarning)]


@pytest.mark.parametrize(
    "options",
    [{}, {"per_query": True}, {"buckets": 2}, {"by": "segment"}],
    ids=["means", "per-query", "buckets", "by"],
)
@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
def test_drop_warns_when_no_pair_matches(options: dict[str, Any], lazy: bool) -> None:
    """unmatched='drop' with labels in other ids: every value null, named in a warning
    (it was null in silence), on every path of one machine."""
    pred = PRED.with_columns(segment=pl.col("user") % 2) if "by" in options else PRED
    metrics = ["rmse", "auc"] if "per_query" not in options else ["rmse"]
    truth = SHIFTED.with_columns(pl.col("rating") > 2) if "auc" in metrics else SHIFTED

    def call() -> pl.DataFrame:
        out = irm.evaluate(
            pred.lazy() if lazy else pred,
            metrics,
            labels=truth.lazy() if lazy else truth,
            **DROP_KW,
            **options,
        )
        return out.collect() if isinstance(out, pl.LazyFrame) else out

    out, said = _warnings_of(call)
    assert said == [NO_PAIR]
    assert isinstance(out, pl.DataFrame)
    assert out["num_rows"].sum() == 0
    assert out.select(pl.col(metrics).is_not_null().any()).row(0) == (False,) * len(metrics)


@pytest.mark.parametrize(
    ("pred", "truth", "warned"),
    [
        # predictions of every pair, labels of a few: how rating tables are made
        (PRED.vstack(PRED.with_columns(pl.col("item") + 100)), TRUTH.head(2), False),
        # labels of every pair, predictions of a few
        (PRED.head(2), TRUTH.vstack(SHIFTED), False),
        # few of either side: ids that do not line up
        (
            PRED.vstack(PRED.with_columns(pl.col("item") + 100)),
            TRUTH.head(2).vstack(SHIFTED.with_columns(pl.col("item") + 100)),
            True,
        ),
    ],
    ids=["few-labels", "few-predictions", "few-of-both"],
)
def test_drop_warns_only_when_few_pairs_match_on_both_sides(
    pred: pl.DataFrame, truth: pl.DataFrame, warned: bool
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = irm.evaluate(pred, ["rmse"], labels=truth, **DROP_KW)
    said = [str(w.message) for w in caught if issubclass(w.category, irm.IrmWarning)]
    matched = int(out["num_rows"].item())
    assert matched == 2
    if not warned:
        assert said == []
    else:
        assert said == [
            f"labels= and the predictions share only 2 of their (user, item) pairs "
            f"({pred.height} predictions, {truth.height} labels): unmatched='drop' leaves "
            "out every prediction without a label, so the metrics read only 2 rows. Ids "
            "that do not line up are the likely cause: give labels= and the predictions the "
            "same 'user' and 'item' values (same spelling, same collection)."
        ]


def test_two_tables_duplicate_pair() -> None:
    truth = TRUTH.vstack(TRUTH.head(1))
    with pytest.raises(
        irm.DuplicateError,
        match=re.escape(
            "2 row(s) share a (user, item) pair with another row on the same side (e.g. "
            "(1, 10)); keep one prediction and one label per pair, e.g. "
            ".unique(['user', 'item'])"
        ),
    ):
        irm.evaluate(
            PRED,
            ["mae"],
            labels=TRUTH.vstack(TRUTH.head(1)),
            label="rating",
            prediction="p",
            query_id="user",
            doc_id="item",
        )
    assert truth.height == 6


def test_recommenders_auc_and_logloss_formulas() -> None:
    truth = TRUTH.with_columns(rating=(pl.col("rating") >= 3).cast(pl.Int64))
    pred = PRED.with_columns(p=pl.col("p") / 5)
    out = irm.evaluate(
        pred,
        ["auc", "logloss"],
        labels=truth,
        label="rating",
        prediction="p",
        query_id="user",
        doc_id="item",
    )
    y, p = _recommenders_merge(truth, pred)
    _close(out["auc"].item(), skm.roc_auc_score(y, p))
    _close(out["logloss"].item(), skm.log_loss(y, p))


# --------------------------------------------------------------------------- bad input
BAD = [
    (
        "nan prediction",
        {"label": [1, 0], "prediction": [float("nan"), 0.5]},
        ["auc"],
        irm.InvalidValueError,
        "column 'prediction' has 1 NaN value(s); a NaN prediction has no rank nor loss: fix "
        "the model's output or drop those rows, e.g. .filter(pl.col('prediction').is_not_nan())",
    ),
    (
        "null label",
        {"label": [1, None], "prediction": [0.1, 0.5]},
        ["rmse"],
        irm.InvalidValueError,
        "column 'label' has 1 null value(s); every prediction needs a label: drop those "
        "rows, e.g. .drop_nulls('label')",
    ),
    (
        "probability above 1",
        {"label": [1, 0], "prediction": [1.5, 0.5]},
        ["auc", "logloss", "brier"],
        irm.InvalidValueError,
        "column 'prediction' has 1 value(s) outside [0, 1] (e.g. 1.5); brier, logloss "
        "read(s) it as a probability, so it is refused for them (auc, pr_auc and gauc read "
        "any score, the rating metrics any number): pass probabilities (e.g. a sigmoid of "
        "the score)",
    ),
    (
        "label 2",
        {"label": [1, 2], "prediction": [0.5, 0.5]},
        ["logloss"],
        irm.InvalidValueError,
        "column 'label' has 1 label(s) that are neither 0 nor the positive label 1 (e.g. 2); "
        "logloss read(s) it as a binary label, so it is refused for them (the rating metrics "
        "read any number): map the labels to 0/1, or declare the positive one with "
        "positive_label=",
    ),
    (
        "negative weight",
        {"label": [1, 0], "prediction": [0.5, 0.5], "w": [1.0, -1.0]},
        ["auc"],
        irm.InvalidValueError,
        "column 'w' has 1 weight(s) that are null, NaN, negative, below 2**-30 (other than "
        "0) or 2**32 or more (infinite too) (e.g. -1.0); sample weights must be 0 or in "
        "[2**-30, 2**32) = [9.313225746154785e-10, 4294967296) (what the exact sums in "
        "units of 2**-64 hold): rescale them (every prediction metric is unchanged when "
        "all weights in that range are multiplied by one number)",
    ),
    (
        "huge weight",
        {"label": [1, 0], "prediction": [0.5, 0.5], "w": [1.0, 2.0**32]},
        ["logloss"],
        irm.InvalidValueError,
        "column 'w' has 1 weight(s) that are null, NaN, negative, below 2**-30 (other than "
        "0) or 2**32 or more (infinite too) (e.g. 4294967296.0); sample weights must be 0 "
        "or in [2**-30, 2**32)",
    ),
    (
        "three text labels",
        {"label": ["a", "b", "c"], "prediction": [0.5, 0.5, 0.1]},
        ["auc"],
        irm.InvalidValueError,
        "column 'label' holds more than two labels (a, b, c); auc read(s) it as a binary "
        "label: positive_label='a' is positive, and one other label negative",
    ),
    (
        "missing column",
        {"label": [1, 0], "score": [0.5, 0.5]},
        ["auc"],
        irm.ColumnNotFoundError,
        "column 'prediction' not found in the table (its columns: 'label', 'score'); name it "
        "with the keyword label=, prediction=, sample_weight=, query_id= or by=",
    ),
    (
        "text label, rating metric",
        {"label": ["a", "b"], "prediction": [0.5, 0.5]},
        ["rmse", "auc"],
        irm.ColumnTypeError,
        "column 'label' holds strings, and rmse read(s) the label as a number (a rating): "
        "cast it, e.g. pl.col('label').cast(pl.Float64), or evaluate the binary metrics "
        "(auc, logloss...) of a text label in a call of their own",
    ),
    (
        "text prediction",
        {"label": [1, 0], "prediction": ["a", "b"]},
        ["auc"],
        irm.ColumnTypeError,
        "column 'prediction' has dtype String; predictions and weights must be numbers: cast "
        "it, e.g. pl.col('prediction').cast(pl.Float64)",
    ),
]


@pytest.mark.parametrize(
    ("case", "data", "metrics", "error", "message"), BAD, ids=[b[0] for b in BAD]
)
@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
def test_bad_input(
    case: str,
    data: dict[str, Any],
    metrics: list[str],
    error: type[Exception],
    message: str,
    lazy: bool,
) -> None:
    table = pl.DataFrame(data)
    weight = "w" if "w" in data else None
    positive: int | str = "a" if case.startswith(("three text", "text label")) else 1
    out = (
        irm.evaluate(table.lazy(), metrics, sample_weight=weight, positive_label=positive)
        if lazy and error is irm.InvalidValueError
        else None
    )
    # lazy: the plan is built, the data checks run when it is collected
    run = (
        out.collect
        if out is not None
        else lambda: irm.evaluate(
            table.lazy() if lazy else table, metrics, sample_weight=weight, positive_label=positive
        )
    )
    with pytest.raises(error, match=re.escape(message)):
        run()


@pytest.mark.parametrize("positive", [0, 0.0])
def test_a_positive_label_of_0_is_refused_when_the_plan_is_built(positive: float) -> None:
    # 0 is every numeric label's negative: it once read "2 label(s) that are neither 0
    # nor the positive label 0 (e.g. 1)", which named no fix
    table = pl.DataFrame({"label": [0, 1, 1], "prediction": [0.2, 0.8, 0.4]})
    message = (
        f"positive_label={positive!r} names the negative label: a numeric label is positive "
        "where it equals positive_label and negative where it is 0; to score 0 as the "
        "positive class, flip the labels, e.g. (pl.col('label') == 0).cast(pl.Int8), and "
        "the predictions (1 - p)"
    )
    for frame in (table, table.lazy()):
        with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(message)}$"):
            irm.evaluate(frame, ["auc"], positive_label=positive)


def test_bad_input_names_the_group() -> None:
    log = GAUC_LOG.with_columns(
        p_click=pl.when(pl.col("user") == "u4").then(2.0).otherwise(pl.col("p_click"))
    )
    with pytest.raises(
        irm.InvalidValueError,
        match=re.escape(
            "column 'p_click' has 2 value(s) outside [0, 1] (first in the group segment='b') "
            "(e.g. 2.0); ne read(s) it as a probability"
        ),
    ):
        irm.evaluate(log, ["ne"], label="clicked", prediction="p_click", by="segment")
    # a rating metric reads any number: no error
    out = irm.evaluate(log, ["rmse"], label="clicked", prediction="p_click", by="segment")
    assert out.height == 2


@pytest.mark.parametrize("name", ["qrels", "queries", "interactions"])
def test_tables_prediction_metrics_do_not_read_are_refused(name: str) -> None:
    with pytest.raises(
        irm.InvalidValueError,
        match=re.escape(
            f"{name}= is not read by prediction metrics (auc, logloss, rmse...): the table "
            f"holds the label= and prediction= columns, or labels= the true labels; drop {name}="
        ),
    ):
        irm.evaluate(GAUC_LOG, ["auc"], label="clicked", prediction="p_click", **{name: GAUC_LOG})


def test_prediction_metrics_do_not_mix_with_ranking_metrics() -> None:
    with pytest.raises(
        irm.MetricParameterError,
        match=re.escape(
            "metrics 'auc' and 'ndcg@10' are computed from different tables (prediction: "
            "labels and predictions; offline: a run and judgments): evaluate them in two calls"
        ),
    ):
        irm.evaluate(GAUC_LOG, ["auc", "ndcg@10"])


def test_registry_entries() -> None:
    assert irm.parse_metric("nll").metric.name == "logloss"
    assert irm.parse_metric("average_precision").metric.name == "pr_auc"
    assert irm.parse_metric("ece@20").name == "ece@20"
    for name in ["auc", "gauc", "logloss", "ne", "rmse"]:
        assert irm.get_metric(name).reads == ("predictions",)
    with pytest.raises(
        irm.MetricParameterError,
        match=re.escape("metric 'auc@10': auc takes no cutoff; use 'auc' without '@10'"),
    ):
        irm.parse_metric("auc@10")


def test_two_tables_by_segment() -> None:
    pred = PRED.with_columns(segment=pl.col("user") % 2)
    out = irm.evaluate(
        pred,
        ["mae"],
        labels=TRUTH,
        label="rating",
        prediction="p",
        query_id="user",
        doc_id="item",
        by="segment",
    )
    for segment, users in ((0, {2}), (1, {1, 3})):
        y, p = _recommenders_merge(
            TRUTH.filter(pl.col("user").is_in(users)), PRED.filter(pl.col("user").is_in(users))
        )
        row = out.filter(pl.col("segment") == segment).row(0, named=True)
        assert row["num_rows"] == len(y)
        _close(row["mae"], skm.mean_absolute_error(y, p))


# --------------------------------------------------------------------------- compare
def _two_models() -> pl.DataFrame:
    """Two models' click probabilities on one log, in one long frame with a system column;
    user 'u0' has no click (no AUC)."""
    rng = np.random.default_rng(5)
    n = 400
    users = [f"u{i}" for i in rng.integers(0, 12, n)]
    clicked = rng.integers(0, 2, n)
    clicked[[u == "u0" for u in users]] = 0
    a = np.round(rng.random(n), 2)
    b = np.clip(np.round(0.6 * a + 0.4 * clicked * rng.random(n), 2), 0, 1)
    log = pl.DataFrame({"user": users, "clicked": clicked})
    return pl.concat(
        [log.with_columns(system=pl.lit(s), p=pl.Series(v)) for s, v in (("A", a), ("B", b))]
    )


def test_compare_per_user_auc_with_scipy_paired_tests() -> None:
    log = _two_models()
    kw: dict[str, Any] = {"label": "clicked", "prediction": "p", "query_id": "user"}
    users = sorted(set(log["user"].to_list()) - {"u0"})
    per_user = {
        s: np.array(
            [
                skm.roc_auc_score(part["clicked"].to_numpy(), part["p"].to_numpy())
                for u in users
                for part in [log.filter((pl.col("system") == s) & (pl.col("user") == u))]
            ]
        )
        for s in ("A", "B")
    }
    message = (
        "1 of 12 queries ('user', e.g. 'u0') have an undefined value (null: an AUC of a "
        "query with one class, ne with a base rate of 0 or 1, r2 with constant labels) in "
        "some system and are left out of every paired test"
    )
    for test, peer in (("t", stats.ttest_rel), ("wilcoxon", stats.wilcoxon)):
        with pytest.warns(UserWarning, match=re.escape(message)):
            out = irm.compare(log, ["auc"], baseline="A", test=test, **kw)
        row = out.row(0, named=True)
        assert row["n"] == len(users) == 11
        _close(row["mean"], float(per_user["B"].mean()))
        _close(row["delta"], float((per_user["B"] - per_user["A"]).mean()))
        _close(row["p_value"], float(peer(per_user["B"], per_user["A"]).pvalue))
    # a dict of frames, and the per-query deltas
    models = {s: log.filter(pl.col("system") == s).drop("system") for s in ("A", "B")}
    with pytest.warns(UserWarning, match=re.escape(message)):
        deltas = irm.compare(models, "auc", qrels=None, per_query=True, **kw)
    assert deltas["user"].to_list() == users
    assert deltas["delta"].to_list() == pytest.approx(list(per_user["B"] - per_user["A"]))


def test_compare_prediction_metrics_refusals() -> None:
    log = _two_models()
    kw: dict[str, Any] = {"label": "clicked", "prediction": "p", "query_id": "user"}
    with pytest.raises(
        irm.InvalidValueError,
        match=re.escape(
            "prediction metrics (auc, gauc, logloss, rmse...) read the label= and "
            "prediction= columns of each system's table, not judgments: drop qrels= "
            "(join the true labels onto each system's predictions first)"
        ),
    ):
        irm.compare(log, ["logloss"], qrels=log, **kw)
    with pytest.raises(
        irm.MetricParameterError,
        match=re.escape(
            "metrics 'auc' and 'ndcg@10' are computed from different tables (prediction: "
            "labels and predictions; offline: a run and judgments): compare them in two calls"
        ),
    ):
        irm.compare(log, ["auc", "ndcg@10"], qrels=None, **kw)


# --------------------------------------------------------------------------- Recommenders
#: Microsoft Recommenders' python_evaluation values on random inputs, written by
#: scripts/recommenders_prediction_reference.py (recommenders is not a test dependency)
RECOMMENDERS_REFERENCE = json.loads(
    (Path(__file__).parent / "data" / "recommenders_prediction.json").read_text()
)


@pytest.mark.parametrize(
    "case",
    RECOMMENDERS_REFERENCE["cases"],
    ids=[
        f"{'binary' if c['binary'] else 'rating'}-{len(c['rating_true']['userID'])}"
        for c in RECOMMENDERS_REFERENCE["cases"]
    ],
)
@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
def test_equal_to_recommenders_python_evaluation(case: dict[str, Any], lazy: bool) -> None:
    truth = pl.DataFrame(case["rating_true"])
    predicted = pl.DataFrame(case["rating_pred"])
    names = list(case["values"])  # Recommenders' names, which the registry takes as aliases
    out = irm.evaluate(
        predicted.lazy() if lazy else predicted,
        names,
        labels=truth.lazy() if lazy else truth,
        label="rating",
        query_id="userID",
        doc_id="itemID",
        unmatched="drop",  # Recommenders' inner merge
    )
    row = (out.collect() if isinstance(out, pl.LazyFrame) else out).row(0, named=True)
    pairs = set(zip(truth["userID"], truth["itemID"], strict=True))
    both = pairs & set(zip(predicted["userID"], predicted["itemID"], strict=True))
    assert row["num_rows"] == len(both) < len(pairs)
    for name, value in case["values"].items():
        _close(row[name], value)


# --------------------------------------------------------------------------- out of core
@st.composite
def scored_logs(draw: st.DrawFn) -> pl.DataFrame:
    """Any real scores (negative, infinite, tied), two segments (one may have one class
    or no row), weights."""
    n = draw(st.integers(0, 40))
    scores = [-math.inf, -2.5, -1.0, 0.0, 0.0, 0.3, 1.0, 7.0, 1e6, math.inf]
    return pl.DataFrame(
        {
            "segment": draw(st.lists(st.sampled_from(["a", "b"]), min_size=n, max_size=n)),
            "label": draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)),
            "prediction": draw(st.lists(st.sampled_from(scores), min_size=n, max_size=n)),
            "w": draw(st.lists(st.sampled_from(WEIGHTS), min_size=n, max_size=n)),
        },
        schema={
            "segment": pl.String,
            "label": pl.Int64,
            "prediction": pl.Float64,
            "w": pl.Float64,
        },
    )


@property_settings(max_examples=12)
@given(
    log=scored_logs(),
    buckets=st.sampled_from([1, 3, 7]),
    weighted=st.booleans(),
    by=st.sampled_from([None, "segment"]),
)
def test_out_of_core_auc_equals_the_ranked_auc(
    log: pl.DataFrame, buckets: int, weighted: bool, by: str | None
) -> None:
    """auc and pr_auc by score ranges on disk (buckets=) equal the in-memory histogram's
    to the last bit (nulls equal), weighted or not; the unweighted auc equals the count of
    ordered pairs by hand (to 1e-15: the area adds one rounded share per score)."""
    kw: dict[str, Any] = {"sample_weight": "w" if weighted else None, "by": by}
    ranked = irm.evaluate(log.lazy(), ["auc", "pr_auc"], buckets=None, **kw).collect()
    ranges = irm.evaluate(log.lazy(), ["auc", "pr_auc"], buckets=buckets, **kw).collect()
    assert ranges.to_dict(as_series=False) == ranked.to_dict(as_series=False)
    if not weighted and by is None and log.height:
        positives = log.filter(pl.col("label") == 1)["prediction"].to_list()
        negatives = log.filter(pl.col("label") == 0)["prediction"].to_list()
        if positives and negatives:  # every pair, by hand
            pairs = sum((p > q) + (p == q) / 2 for p in positives for q in negatives)
            want = pairs / (len(positives) * len(negatives))
            assert math.isclose(ranges["auc"].item(), want, rel_tol=1e-15, abs_tol=1e-15)


#: Scores at the ends of float64: the largest finite, subnormal, the smallest normal.
EXTREME_SCORES = [-1.7e308, 1.7e308, 5e-324, -5e-324, 1e-320, 2.2250738585072014e-308, 0.0]


@pytest.mark.parametrize("frame_kind", ["DataFrame", "LazyFrame"])
@property_settings(max_examples=10)
@given(
    data=st.data(),
    buckets=st.sampled_from([1, 2, 5]),
    weighted=st.booleans(),
    tiny=st.booleans(),
)
def test_out_of_core_auc_on_scores_of_any_magnitude(
    frame_kind: str, data: Any, buckets: int, weighted: bool, tiny: bool
) -> None:
    """Issue 38: buckets= raised polars' cast error on scores spanning +-1.7e308 (their
    width overflowed) and on subnormal scores (its reciprocal did): any finite scores
    give the in-memory auc and pr_auc to the last bit, and scikit-learn's to 1e-12."""
    finite = st.floats(allow_nan=False, allow_infinity=False)
    subnormal = st.floats(min_value=-1e-307, max_value=1e-307, allow_subnormal=True)
    score = st.one_of(subnormal if tiny else finite, st.sampled_from(EXTREME_SCORES))
    n = data.draw(st.integers(2, 30))
    scores = data.draw(st.lists(score, min_size=n, max_size=n))
    labels = data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    labels[0], labels[1] = 0, 1  # both classes
    weights = data.draw(st.lists(st.sampled_from(WEIGHTS), min_size=n, max_size=n))
    table = pl.DataFrame({"label": labels, "prediction": scores, "w": weights})
    weight = "w" if weighted else None
    frame: pl.DataFrame | pl.LazyFrame = table if frame_kind == "DataFrame" else table.lazy()
    metrics = ["auc", "pr_auc"]
    out = irm.evaluate(frame, metrics, sample_weight=weight, buckets=buckets)
    got = out.collect() if isinstance(out, pl.LazyFrame) else out
    assert got.rows() == irm.evaluate(table, metrics, sample_weight=weight).rows()
    y, p, w = labels, table["prediction"].to_numpy(), table["w"].to_numpy()
    sw = w if weighted else None
    with np.errstate(over="ignore", invalid="ignore"):  # its input check sums the scores
        _close(got["auc"].item(), skm.roc_auc_score(y, p, sample_weight=sw))
        _close(got["pr_auc"].item(), skm.average_precision_score(y, p, sample_weight=sw))


# --------------------------------------------------------------------------- parts
def _merged_parts(
    split: list[pl.LazyFrame],
    requests: list[tuple[str, Any]],
    options: EvalOptions,
) -> pl.DataFrame:
    """The engines' means from the parts ``split``: the scale first (the rating and the
    probability metrics), then the means of r2 and explained_variance, then the sums."""
    first = None
    if needs_scale(requests):
        maxima = pl.concat([part_scale(t, requests, options) for t in split])
        first = merge_scale(maxima, options).collect()
    if needs_means(requests):
        means = pl.concat([part_means(t, requests, options, first=first) for t in split])
        first = merge_means(means, options).collect()
    pieces = [part_statistics(t, requests, options, first=first) for t in split]
    return merge_statistics(pl.concat(pieces, how="diagonal"), requests, options).collect()


@property_settings(max_examples=10)
@given(
    data=st.data(),
    parts=st.integers(1, 4),
    weighted=st.booleans(),
    by=st.sampled_from([None, "segment"]),
    kind=st.sampled_from(["binary", "rating"]),
)
def test_part_statistics_merge_to_evaluate(
    data: Any, parts: int, weighted: bool, by: str | None, kind: str
) -> None:
    """The engines' means: statistics of parts of a log (split by user), merged, equal
    evaluate's over the whole log to the last bit (DataFrame, LazyFrame, buckets=)."""
    table = data.draw(binary_tables() if kind == "binary" else rating_tables(SCALES))
    n = table.height
    table = table.with_columns(
        query_id=pl.Series(data.draw(st.lists(st.integers(0, 5), min_size=n, max_size=n))),
        segment=pl.Series(data.draw(st.lists(st.sampled_from("ab"), min_size=n, max_size=n))),
    )
    binary = ["auc", "pr_auc", "gauc", "gauc(weighting='uniform')", "logloss", "ne"]
    binary += ["brier", "calibration", "ece@3"]
    metrics = binary if kind == "binary" else ["rmse", "mae", "mse", "r2", "explained_variance"]
    kw: dict[str, Any] = {"sample_weight": "w" if weighted else None, "by": by}
    want = irm.evaluate(table, metrics, **kw)
    options = EvalOptions.build(**kw)
    requests = parse_metric_list(metrics)
    split = [table.filter(pl.col("query_id") % parts == k).lazy() for k in range(parts)]
    got = _merged_parts(split, requests, options)
    # every value to the last bit, nulls equal: the same integers, the same float steps
    assert got.schema == want.schema
    assert got.to_dict(as_series=False) == want.to_dict(as_series=False)
    # and out of core, and from a LazyFrame
    for other in (
        irm.evaluate(table, metrics, buckets=3, **kw),
        irm.evaluate(table.lazy(), metrics, **kw).collect(),
    ):
        assert other.to_dict(as_series=False) == want.to_dict(as_series=False)


def test_large_rating_errors_are_scaled_into_the_units() -> None:
    """A rating error of 65,536 or more (a term of 2**32 or more unscaled) is kept in
    the fixed-point units once the group is scaled by a power of two (module doc of
    prediction/statistics.py): scikit-learn's value, and the parts' merge gives it to
    the last bit."""
    table = pl.DataFrame(
        {
            "label": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
            "prediction": [1.5, 2.0, 70_000.0, 4.5, 5.0, 6.5],
            "query_id": [0, 0, 1, 1, 2, 2],
        }
    )
    metrics = ["mse", "mae", "r2", "explained_variance"]
    got = irm.evaluate(table, metrics)
    y, p = table["label"].to_numpy(), table["prediction"].to_numpy()
    _close(got["mse"].item(), skm.mean_squared_error(y, p))
    _close(got["mae"].item(), skm.mean_absolute_error(y, p))
    _close(got["r2"].item(), skm.r2_score(y, p))
    _close(got["explained_variance"].item(), skm.explained_variance_score(y, p))
    options, requests = EvalOptions.build(), parse_metric_list(metrics)
    split = [table.filter(pl.col("query_id") == k).lazy() for k in range(3)]
    merged = _merged_parts(split, requests, options)
    assert merged.to_dict(as_series=False) == got.to_dict(as_series=False)


# --------------------------------------------------------------------------- same bits
def _expressions(kind: str, weight: str | None, *, per_query: bool) -> dict[str, pl.Expr]:
    """Each metric of the shuffle test as its expression function (``gauc`` per query is
    the query's AUC, as ``per_query=True`` gives it)."""
    kw: dict[str, Any] = {"sample_weight": weight}
    if kind == "rating":
        fns = [irm.rmse, irm.mae, irm.mse, irm.r2, irm.explained_variance]
        return {f.__name__: f(**kw) for f in fns}
    out = {f.__name__: f(**kw) for f in (irm.auc, irm.pr_auc, irm.logloss, irm.ne, irm.brier)}
    out["calibration"] = irm.calibration(**kw)
    out["ece@3"] = irm.ece(bins=3, **kw)
    out["gauc"] = irm.auc(**kw) if per_query else irm.gauc(query_id="query_id", **kw)
    return out


@property_settings(max_examples=10)
@given(data=st.data(), weighted=st.booleans(), kind=st.sampled_from(["binary", "rating"]))
def test_shuffled_rows_give_the_same_bits_on_every_path(
    data: Any, weighted: bool, kind: str
) -> None:
    """The same rows in another order give the same bits: per-query values of a
    DataFrame, a LazyFrame and buckets=, the expression functions in a group_by (per
    query and per segment) and over the whole table, all equal, weighted or not."""
    table = data.draw(binary_tables() if kind == "binary" else rating_tables(SCALES))
    n = table.height
    table = table.with_columns(
        query_id=pl.Series(data.draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))),
        segment=pl.Series(data.draw(st.lists(st.sampled_from("ab"), min_size=n, max_size=n))),
    )
    order = data.draw(st.permutations(range(n)))
    other = table[order]
    weight = "w" if weighted else None
    exprs = _expressions(kind, weight, per_query=True)
    metrics = list(exprs)
    kw: dict[str, Any] = {"sample_weight": weight, "by": "segment"}
    want = irm.evaluate(table, metrics, per_query=True, **kw).to_dict(as_series=False)
    for got in (
        irm.evaluate(other.lazy(), metrics, per_query=True, **kw).collect(),
        irm.evaluate(other, metrics, per_query=True, buckets=2, **kw),
    ):
        assert got.to_dict(as_series=False) == want
    keys = ["segment", "query_id"]
    grouped = other.group_by(keys).agg(e.alias(m) for m, e in exprs.items()).sort(keys)
    for metric in metrics:
        assert grouped[metric].to_list() == want[metric], metric
    # means: per segment and over the whole table
    exprs = _expressions(kind, weight, per_query=False)
    means = irm.evaluate(table, metrics, **kw)
    grouped = other.group_by("segment").agg(e.alias(m) for m, e in exprs.items()).sort("segment")
    whole = irm.evaluate(table, metrics, sample_weight=weight)
    selected = other.select(e.alias(m) for m, e in exprs.items())
    for metric in metrics:
        assert grouped[metric].to_list() == means[metric].to_list(), metric
        assert selected[metric].to_list() == whole[metric].to_list(), metric


# --------------------------------------------------------------------------- numeric scale
#: The rating metrics, scikit-learn's function of each, and how each scales with the data.
RATING_PEERS: list[tuple[str, SkFn, int]] = [
    ("rmse", skm.root_mean_squared_error, 1),
    ("mae", skm.mean_absolute_error, 1),
    ("mse", skm.mean_squared_error, 2),
    ("r2", skm.r2_score, 0),
    ("explained_variance", skm.explained_variance_score, 0),
]


@st.composite
def real_ratings(draw: st.DrawFn) -> pl.DataFrame:
    """Labels and predictions of three significant digits (not constant), a query id,
    a segment and weights of any scale."""
    n = draw(st.integers(2, 25))
    digits = st.integers(-999, 999)
    labels = draw(st.lists(digits, min_size=n, max_size=n))
    labels[0], labels[1] = -500, 700  # not constant
    preds = draw(st.lists(digits, min_size=n, max_size=n))
    weights = draw(st.lists(st.integers(1, 100), min_size=n, max_size=n))
    # in [2**-30, 2**32) (refused outside)
    weight_scale = draw(st.sampled_from([1.0, 2.0**-30, 1e7]))
    return pl.DataFrame(
        {
            "label": [v / 100 for v in labels],
            "prediction": [v / 100 for v in preds],
            "w": [v * weight_scale for v in weights],
            "query_id": draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)),
            "segment": draw(st.lists(st.sampled_from("ab"), min_size=n, max_size=n)),
        }
    )


def _rating_values(
    table: pl.DataFrame, frame_kind: str, weight: str | None, **kw: Any
) -> dict[str, list[Any]]:
    """evaluate's values of the rating metrics (DataFrame or LazyFrame), as lists."""
    metrics = [name for name, _, _ in RATING_PEERS]
    frame: pl.DataFrame | pl.LazyFrame = table if frame_kind == "DataFrame" else table.lazy()
    out = irm.evaluate(frame, metrics, sample_weight=weight, **kw)
    result = out.collect() if isinstance(out, pl.LazyFrame) else out
    return result.select(metrics).to_dict(as_series=False)


@pytest.mark.parametrize("frame_kind", ["DataFrame", "LazyFrame"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@property_settings(max_examples=4)
@given(table=real_ratings(), exponent=st.integers(-12, 12))
def test_rating_metrics_do_not_depend_on_the_scale_of_the_data(
    frame_kind: str, weighted: bool, table: pl.DataFrame, exponent: int
) -> None:
    """r2 and explained_variance are the same, rmse, mae (and mse) scale with the data
    (labels and predictions times 10**exponent), each scikit-learn's to 1e-12 relative:
    the mean, by segment, per query, out of core and as expressions (whole table and in
    a group_by)."""
    scale = 10.0**exponent
    scaled = table.with_columns(pl.col("label", "prediction") * scale)
    weight = "w" if weighted else None
    y, p, w = (scaled[c].to_numpy() for c in ("label", "prediction", "w"))
    means = _rating_values(scaled, frame_kind, weight)
    unscaled = _rating_values(table, frame_kind, weight)
    exprs = {f.__name__: f(sample_weight=weight) for f in _RATING_FNS}
    selected = scaled.select(e.alias(m) for m, e in exprs.items())
    for name, peer, power in RATING_PEERS:
        want = peer(y, p, sample_weight=w if weighted else None)
        _close(means[name][0], want)
        _close(means[name][0] / scale**power, unscaled[name][0])
        _close(selected[name].item(), want)
    # in groups: by segment (out of core too) and per query, evaluate and expressions
    for kw in ({"by": "segment"}, {"by": "segment", "buckets": 2}, {"per_query": True}):
        got = _rating_values(scaled, frame_kind, weight, **kw)
        keys = ["segment"] if "by" in kw else ["query_id"]
        grouped = scaled.group_by(keys).agg(e.alias(m) for m, e in exprs.items()).sort(keys)
        for (key,), part in scaled.group_by(keys, maintain_order=False):
            index = grouped[keys[0]].to_list().index(key)
            y, p, w = (part[c].to_numpy() for c in ("label", "prediction", "w"))
            for name, peer, _ in RATING_PEERS:
                if name in ("r2", "explained_variance") and len(set(y.tolist())) < 2:
                    assert got[name][index] is None  # constant labels: undefined
                    continue
                want = peer(y, p, sample_weight=w if weighted else None)
                _close(got[name][index], want)
                assert grouped[name][index] == got[name][index], name


_RATING_FNS = [irm.rmse, irm.mae, irm.mse, irm.r2, irm.explained_variance]


@pytest.mark.parametrize("scale", [1e-9, 1e-10, 1e-300, 1e200])
def test_the_issues_r2_at_tiny_and_huge_scales(frame_kind: str, scale: float) -> None:
    """Issue 38: targets about 1e-9 gave r2 -0.26 where scikit-learn gives -0.169, and
    0 (rmse) and null (r2) at 1e-10: the fixed-point units of 2**-64 held no squared
    error of that scale."""
    table = pl.DataFrame(
        {
            "label": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
            "prediction": [1.5, 2.75, 2.0, 4.5, 6.5, 4.25],
        }
    ).with_columns(pl.all() * scale)
    y, p = table["label"].to_numpy(), table["prediction"].to_numpy()
    got = _rating_values(table, frame_kind, None)
    _close(got["r2"][0], skm.r2_score(y / scale, p / scale))
    _close(got["rmse"][0] / scale, skm.root_mean_squared_error(y / scale, p / scale))
    _close(got["mae"][0] / scale, skm.mean_absolute_error(y / scale, p / scale))


# --------------------------------------------------------------------------- one answer
@pytest.mark.parametrize("bins", [3, 10])
@property_settings(max_examples=10)
@given(data=st.data(), weighted=st.booleans())
def test_ece_expression_equals_evaluate_bit_for_bit(data: Any, bins: int, weighted: bool) -> None:
    """Issue 38: the bins' gaps were added as floats by a horizontal sum, in one order
    eagerly and in another lazily, so irm.ece(...) differed from evaluate's mean in the
    last bit: they are added as integers now (every form equal with ==)."""
    n = data.draw(st.integers(2, 40))
    probability = st.floats(0.0, 1.0, allow_nan=False)
    table = pl.DataFrame(
        {
            "label": data.draw(st.lists(st.integers(0, 1), min_size=n, max_size=n)),
            "prediction": data.draw(st.lists(probability, min_size=n, max_size=n)),
            "w": data.draw(st.lists(st.sampled_from(WEIGHTS), min_size=n, max_size=n)),
            "segment": ["s"] * n,
        }
    )
    weight = "w" if weighted else None
    expr = irm.ece(bins=bins, sample_weight=weight).alias("ece")
    metric = [f"ece@{bins}"]
    want = irm.evaluate(table, metric, sample_weight=weight)[metric[0]].item()
    lazy = irm.evaluate(table.lazy(), metric, sample_weight=weight).collect()
    assert lazy[metric[0]].item() == want
    assert table.select(expr).item() == want
    assert table.lazy().select(expr).collect().item() == want
    assert table.group_by("segment").agg(expr)["ece"].item() == want
    assert table.lazy().group_by("segment").agg(expr).collect()["ece"].item() == want


NULL_USER_LOG = pl.DataFrame(
    {
        "user": [1, 1, None, None],
        "clicked": [1, 0, 1, 0],
        "p_click": [0.8, 0.3, 0.4, 0.6],
    }
)


@pytest.mark.parametrize(
    ("metrics", "per_query", "where"),
    [
        (["gauc"], False, ""),
        (["gauc(weighting='uniform')", "logloss"], False, ""),
        (["auc"], True, " (first in the group user=None)"),
        (["gauc", "rmse"], True, " (first in the group user=None)"),
    ],
)
def test_null_user_ids_are_refused(
    evaluate: Any, metrics: list[str], per_query: bool, where: str
) -> None:
    """Issue 38: a null user id became a user of its own in gauc and per_query=True,
    where every other route refuses null ids."""
    with pytest.raises(
        irm.InvalidValueError,
        match=re.escape(
            f"column 'user' has 2 null value(s){where}; every row of a table with a query "
            "(user) column needs its query, whatever the metrics (gauc and per_query=True "
            "group the rows by it), and a null id is none: drop those rows, e.g. "
            ".drop_nulls('user'), or fill them, e.g. pl.col('user').fill_null(...)"
        ),
    ):
        evaluate(
            NULL_USER_LOG,
            metrics,
            label="clicked",
            prediction="p_click",
            query_id="user",
            per_query=per_query,
        )
    # query_id= not given, the table has no 'query_id' column: no query column to check
    out = evaluate(NULL_USER_LOG, ["auc"], label="clicked", prediction="p_click")
    assert out["auc"].item() == 0.75


#: Every prediction metric, as a result column and its expression function.
EVERY_METRIC: dict[str, Callable[..., pl.Expr]] = {
    "auc": irm.auc,
    "pr_auc": irm.pr_auc,
    "logloss": irm.logloss,
    "ne": irm.ne,
    "brier": irm.brier,
    "calibration": irm.calibration,
    "ece": irm.ece,
    "rmse": irm.rmse,
    "mae": irm.mae,
    "mse": irm.mse,
    "r2": irm.r2,
    "explained_variance": irm.explained_variance,
}


def test_all_zero_weights_give_null_everywhere(evaluate: Any) -> None:
    """Issue 38: all-zero sample weights gave NaN (0 / 0) for logloss, brier, ece, rmse,
    mae, mse, r2 and explained_variance, where auc gave null: with no weight a mean is
    undefined, and undefined is null, for every metric: the mean, a by group, per
    query and the expressions."""
    log = pl.DataFrame(
        {
            "segment": ["zero"] * 4 + ["some"] * 4,
            "user": [1, 1, 2, 2, 3, 3, 4, 4],
            "clicked": [1, 0, 1, 0, 1, 0, 1, 0],
            "p_click": [0.8, 0.3, 0.4, 0.6, 0.9, 0.2, 0.7, 0.5],
            "w": [0.0, 0.0, 0.0, 0.0, 1.0, 2.0, 0.5, 1.0],
        }
    )
    kw: dict[str, Any] = {"label": "clicked", "prediction": "p_click", "sample_weight": "w"}
    metrics = [*EVERY_METRIC, "gauc"]
    zero = log.filter(pl.col("segment") == "zero")
    mean = evaluate(zero, metrics, query_id="user", **kw)
    by = evaluate(log, metrics, query_id="user", by="segment", **kw)
    per_user = evaluate(log, list(EVERY_METRIC), query_id="user", per_query=True, **kw)
    exprs = [f(label="clicked", prediction="p_click", sample_weight="w").alias(name)
             for name, f in EVERY_METRIC.items()]  # fmt: skip
    grouped = log.group_by("segment").agg(exprs).sort("segment")
    for name in metrics:
        assert mean[name].item() is None, name
        assert by.filter(pl.col("segment") == "zero")[name].item() is None, name
        assert by.filter(pl.col("segment") == "some")[name].item() is not None, name
    for name in EVERY_METRIC:
        assert per_user[name][:2].to_list() == [None, None], name
        assert zero.select(exprs)[name].item() is None, name
        assert grouped[name].to_list()[1] is None, name  # "zero" sorts after "some"


# --------------------------------------------------------------------------- two tables
_KEYS: dict[str, Any] = {
    "label": "rating",
    "prediction": "p",
    "query_id": "user",
    "doc_id": "item",
}


@pytest.mark.parametrize("unmatched", ["error", "drop"])
@pytest.mark.parametrize(
    ("side", "column"),
    [("predictions", "user"), ("predictions", "item"), ("labels", "user"), ("labels", "item")],
)
def test_two_tables_null_keys_are_refused_on_their_side(
    evaluate: Any, unmatched: str, side: str, column: str
) -> None:
    """Issue 38: a null key was called a duplicate "(e.g. None)" (or, dropped with
    unmatched='drop', lost silently): it is a null, named on the side where it is."""
    null_row = {"user": 1, "item": 99, "rating": 3, "p": 2.5, column: None}
    pred, truth = PRED, TRUTH
    if side == "predictions":
        pred = pred.vstack(pl.DataFrame([null_row], schema=PRED.schema).select(PRED.columns))
        pred = pred.vstack(pred.tail(1))  # twice: no duplicate reported for it
    else:
        truth = truth.vstack(pl.DataFrame([null_row], schema=TRUTH.schema).select(TRUTH.columns))
    with pytest.raises(
        irm.InvalidValueError,
        match=re.escape(
            f"column '{column}' of the {side} has {2 if side == 'predictions' else 1} null "
            "value(s); a null key pairs with no row of the other table (and the pairs are "
            f"the (user, item) keys): drop those rows, e.g. .drop_nulls('{column}'), or fill "
            f"them, e.g. pl.col('{column}').fill_null(...)"
        ),
    ):
        evaluate(pred, ["rmse"], labels=truth, unmatched=unmatched, **_KEYS)


#: (id, predictions, labels, metrics, options): bad inputs of the prediction route
_BAD_ROUTES: list[tuple[str, pl.DataFrame, pl.DataFrame | None, list[str], dict[str, Any]]] = [
    ("missing prediction", PRED, TRUTH, ["rmse"], {**_KEYS, "prediction": "px"}),
    ("missing by", PRED, TRUTH, ["rmse"], {**_KEYS, "by": "segment"}),
    ("missing weight", PRED, TRUTH, ["rmse"], {**_KEYS, "sample_weight": "w"}),
    ("missing label", PRED, TRUTH, ["rmse"], {**_KEYS, "label": "r"}),
    ("missing key", PRED.drop("item"), TRUTH, ["rmse"], _KEYS),
    ("null key", PRED.with_columns(item=pl.lit(None, pl.Int64)), TRUTH, ["mae"], _KEYS),
    ("duplicate", PRED.vstack(PRED.head(1)), TRUTH, ["mae"], _KEYS),
    ("one-sided", PRED.head(3), TRUTH, ["mae"], _KEYS),
    ("key types", PRED.with_columns(pl.col("item").cast(pl.String)), TRUTH, ["mae"], _KEYS),
    ("text rating", PRED, TRUTH.with_columns(pl.col("rating").cast(pl.String)), ["mae"], _KEYS),
    ("null rating", PRED, TRUTH.with_columns(rating=pl.lit(None, pl.Int64)), ["mae"], _KEYS),
    ("not a click", PRED, TRUTH, ["auc"], _KEYS),
    ("probability", PRED, TRUTH.with_columns(rating=pl.lit(1)), ["logloss"], _KEYS),
    ("null user", NULL_USER_LOG, None, ["gauc"], {"label": "clicked", "prediction": "p_click", "query_id": "user"}),  # noqa: E501
    ("missing user", GAUC_LOG, None, ["gauc"], {"label": "clicked", "prediction": "p_click", "query_id": "u"}),  # noqa: E501
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "pred", "truth", "metrics", "options"), _BAD_ROUTES, ids=[c[0] for c in _BAD_ROUTES]
)
def test_no_internal_column_reaches_an_error_message(
    evaluate: Any,
    case: str,
    pred: pl.DataFrame,
    truth: pl.DataFrame | None,
    metrics: list[str],
    options: dict[str, Any],
) -> None:
    """Issue 38: a missing column of the predictions listed the join's internal
    __irm_* columns (and the labels' columns) as its columns: no message of the
    prediction route names an internal column."""
    with pytest.raises(irm.IrmError) as raised:
        evaluate(pred, metrics, labels=truth, **options)
    assert "__irm" not in str(raised.value), str(raised.value)
    if case.startswith("missing ") and truth is not None and "label" not in case:
        assert "its columns: 'user', 'item', 'p')" in str(raised.value) or case == "missing key"


#: (metric, labels, predictions): a value undefined for these labels, and why (the
#: warning's reason; scikit-learn refuses one class for roc_auc_score and gives 1.0 or
#: 0.0 for r2_score of constant labels)
UNDEFINED = [
    ("auc", [1, 1, 1], "the labels hold one class only, and the AUC orders positive-"),
    ("pr_auc", [0, 0, 0], "the labels hold no positive, and the average precision reads"),
    ("ne", [1, 1, 1], "the labels' (weighted) mean is 0 or 1, so their entropy, the "),
    ("r2", [1, 1, 1], "the labels are constant, so their spread, the denominator, is 0 "),
    ("explained_variance", [1, 1, 1], "the labels are constant, so their variance, the "),
]


@pytest.mark.parametrize(("metric", "labels", "why"), UNDEFINED, ids=[c[0] for c in UNDEFINED])
@pytest.mark.parametrize("lazy", [False, True], ids=["DataFrame", "LazyFrame"])
def test_an_undefined_value_is_named_in_a_warning(
    metric: str, labels: list[int], why: str, lazy: bool
) -> None:
    # a null among the means was easy to miss (sklearn raises, or gives 1.0 or 0.0)
    table = pl.DataFrame(
        {
            "segment": ["a", "a", "a", "b", "b", "b"],
            "label": [*labels, 1, 0, 1],
            "prediction": [0.5, 0.5, 0.2, 0.9, 0.1, 0.4],
        }
    )

    def call(**options: Any) -> pl.DataFrame:
        out = irm.evaluate(table.lazy() if lazy else table, [metric], **options)
        return out.collect() if isinstance(out, pl.LazyFrame) else out

    out, said = _warnings_of(lambda: call(by="segment"))
    assert isinstance(out, pl.DataFrame)
    values = out[metric].to_list()
    assert values[0] is None
    assert values[1] is not None
    assert len(said) == 1
    assert said[0].startswith(f"{metric!r} is null in 1 of the 2 groups (first: segment='a'): ")
    assert why in said[0]
    # one group of the same labels: the same reason, no group named
    with pytest.warns(irm.IrmWarning, match=re.escape(f"{metric!r} is null: {why}")):
        one = irm.evaluate(table.head(3), [metric])
    assert one[metric].item() is None
    # a defined value: no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", irm.IrmWarning)
        irm.evaluate(table.tail(3), [metric])


def test_weights_of_zero_and_an_empty_table_are_named_in_a_warning() -> None:
    # before: null in silence (scikit-learn refuses weights that sum to 0), and auc's
    # warning said "one class only" of a table of both classes
    table = pl.DataFrame(
        {"label": [1, 0, 1, 0], "prediction": [0.3, 0.2, 0.6, 0.4], "w": [0.0] * 4}
    )
    out, said = _warnings_of(
        lambda: irm.evaluate(table, ["auc", "logloss", "rmse"], sample_weight="w")
    )
    assert isinstance(out, pl.DataFrame)
    assert out.row(0) == (4, None, None, None)
    zero = "the group's sample weights (column 'w'){} are all 0: no weight, no mean"
    assert said[0].startswith("'auc' is null: the labels hold one class only")
    assert said[0].endswith(
        ", or " + zero.format(", or those of one class,") + " (scikit-learn refuses weights "
        "that sum to 0)"
    )
    assert said[1:] == [
        f"'{name}' is null: {zero.format('')} (scikit-learn refuses weights that sum to 0)"
        for name in ("logloss", "rmse")
    ]
    empty = "the table holds no row, so every metric is null: nothing was scored (a filter "
    nothing = table.clear().with_columns(segment=pl.lit("a"))
    for options in ({}, {"by": "segment"}):
        out, said = _warnings_of(lambda o=options: irm.evaluate(nothing, ["auc", "rmse"], **o))
        assert said == [empty + "that kept nothing, or an empty file?)"]
