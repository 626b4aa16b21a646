"""Prediction metrics, round 11: the expressions took ``positive_label=0`` (the flipped
AUC, which :func:`polars_irmetrics.evaluate` refuses); ``irm.ece`` gave a number for a
group with a NaN prediction (the row fell in no bin but counted in the denominator); a
text label was checked group by group (``by=``, ``per_query=True``, compare), so a
misspelt positive label in a group of its own was scored as negative; ``query_id=`` and
``doc_id=`` were ignored where no metric read them; ``irm.optimize_fusion`` with a metric
of no ranking (``logloss``) named an ``order='rank'`` the caller never gave."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import InvalidValueError, MetricParameterError

from .conftest import Evaluate

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


#: 'Click' is no 'click': three labels in the table, two in each user's rows
MISSPELT = pl.DataFrame(
    {"user": [1, 1, 2, 2], "y": ["click", "no", "Click", "Click"], "p": [0.9, 0.2, 0.8, 0.7]}
)
THREE = (
    "column 'y' holds more than two labels (Click, click, no); {metrics} read(s) it as a "
    "binary label: positive_label='click' is positive, and one other label negative"
)
TEXT_CASES = [
    pytest.param(["logloss"], {}, "logloss", id="whole"),
    pytest.param(["logloss"], {"by": "user"}, "logloss", id="by"),
    pytest.param(["auc", "brier"], {"by": "user"}, "auc, brier", id="by-two"),
    pytest.param(["logloss"], {"per_query": True, "query_id": "user"}, "logloss", id="per-query"),
    pytest.param(["auc"], {"per_query": True, "query_id": "user"}, "auc", id="per-query-auc"),
    pytest.param(["gauc"], {"query_id": "user"}, "gauc", id="gauc"),
    pytest.param(["auc"], {"by": "user", "buckets": 2}, "auc", id="buckets"),
]


@pytest.mark.parametrize(("metrics", "options", "named"), TEXT_CASES)
def test_text_labels_checked_over_the_whole_table(
    evaluate: Evaluate, metrics: list[str], options: dict[str, object], named: str
) -> None:
    message = THREE.format(metrics=named)
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        evaluate(MISSPELT, metrics, label="y", prediction="p", positive_label="click", **options)


def test_text_labels_two_of_neither_positive_over_the_whole_table() -> None:
    table = MISSPELT.with_columns(y=pl.Series(["no", "no", "Click", "Click"]))
    message = (
        "column 'y' holds two labels ('Click', 'no'), and neither is positive_label='click'; "
        "auc read(s) it as a binary label, so it is refused for them: declare the positive "
        "one of them with positive_label= (a text label matches exactly: case and spaces "
        "count)"
    )
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(table, ["auc"], label="y", prediction="p", positive_label="click", by="user")


def test_text_labels_checked_over_the_whole_table_in_compare() -> None:
    run = MISSPELT.rename({"user": "query_id"})
    message = THREE.format(metrics="logloss")
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.compare(
            {"a": run, "b": run}, ["logloss"], label="y", prediction="p", positive_label="click"
        )


def test_text_labels_a_group_of_negatives_still_read() -> None:
    table = MISSPELT.with_columns(y=pl.Series(["click", "no", "no", "no"]))
    out = irm.evaluate(
        table, ["logloss"], label="y", prediction="p", positive_label="click", by="user"
    )
    # user 1: -(ln 0.9 + ln 0.8) / 2; user 2: -(ln 0.2 + ln 0.3) / 2
    expected = [-(math.log(0.9) + math.log(0.8)) / 2, -(math.log(0.2) + math.log(0.3)) / 2]
    assert out["logloss"].to_list() == pytest.approx(expected, rel=1e-14)


TWO = pl.DataFrame({"y": [1, 0], "p": [0.3, 0.1]})
UNREAD_IDS = [
    pytest.param(
        ["auc", "logloss"],
        {"query_id": "user"},
        "query_id='user' is not read by metrics 'auc', 'logloss': among the prediction "
        "metrics only gauc, per_query=True and labels= (the two-table form, joined on "
        "query_id and doc_id) read it; drop query_id= (an option no metric reads would "
        "change nothing), or evaluate a metric that reads it",
        id="query_id",
    ),
    pytest.param(
        ["rmse"],
        {"doc_id": "item"},
        "doc_id='item' is not read by metric 'rmse': the prediction metrics read it only "
        "with labels= (the two-table form, joined on query_id and doc_id); drop doc_id= (an "
        "option no metric reads would change nothing), or pass labels=",
        id="doc_id",
    ),
    pytest.param(
        ["gauc"],
        {"query_id": "user", "doc_id": "item"},
        "doc_id='item' is not read by metric 'gauc': the prediction metrics read it only "
        "with labels= (the two-table form, joined on query_id and doc_id); drop doc_id= (an "
        "option no metric reads would change nothing), or pass labels=",
        id="doc_id-with-gauc",
    ),
]


@pytest.mark.parametrize(("metrics", "options", "message"), UNREAD_IDS)
def test_ids_no_metric_reads_are_refused(
    frame_kind: str, metrics: list[str], options: dict[str, object], message: str
) -> None:
    table = TWO.lazy() if frame_kind == "LazyFrame" else TWO
    with pytest.raises(InvalidValueError, match=f"^{re.escape(message)}$"):
        irm.evaluate(table, metrics, label="y", prediction="p", **options)  # type: ignore[arg-type]


def test_ids_read_are_taken() -> None:
    users = TWO.with_columns(user=pl.Series([1, 1]), item=pl.Series([5, 6]))
    # the defaults passed explicitly change nothing
    out = irm.evaluate(TWO, ["auc"], label="y", prediction="p", query_id="query_id")
    assert out["auc"].item() == 1.0
    out = irm.evaluate(users, ["gauc"], label="y", prediction="p", query_id="user")
    assert out["gauc"].item() == 1.0
    out = irm.evaluate(users, ["auc"], label="y", prediction="p", query_id="user", per_query=True)
    assert out.rows() == [(1, 2, 1.0)]
    labels = users.select("user", "item", "y")
    out = irm.evaluate(
        users.drop("y"), ["auc"], labels=labels, label="y", prediction="p",
        query_id="user", doc_id="item",
    )  # fmt: skip
    assert out["auc"].item() == 1.0


RUN_A = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
RUN_B = RUN_A.with_columns(doc_id=pl.Series(["c", "b", "a"]))
JUDGED = pl.DataFrame({"query_id": ["q"], "doc_id": ["c"], "relevance": [1]})
NOT_RANKING = [
    ("logloss", "the prediction metrics (auc, logloss, rmse...)"),
    ("auc", "the prediction metrics (auc, logloss, rmse...)"),
    ("calibration", "the prediction metrics (auc, logloss, rmse...)"),
    ("ctr@10", "the click metrics of an impression log (ctr, session_ctr...)"),
    ("ips", "the off-policy estimators (ips, snips, dr...)"),
    ("rbo", "the rank-similarity metrics (rbo, jaccard, kendall_tau...)"),
    ("ps_ndcg@10", "the propensity-scored metrics (ps_precision@k, ps_ndcg@k)"),
    (
        "catalog_coverage",
        "the beyond-accuracy metrics (novelty, catalog_coverage, serendipity...)",
    ),
]


@pytest.mark.parametrize(("metric", "kind"), NOT_RANKING)
def test_optimize_fusion_refuses_a_metric_of_no_ranking_by_name(metric: str, kind: str) -> None:
    message = (
        f"metric={metric!r} is one of {kind}, not a ranking metric of a run and judgments: "
        "optimize_fusion scores each fused ranking against qrels= alone, with one such "
        "metric (e.g. metric='ndcg@10', 'map')"
    )
    with pytest.raises(MetricParameterError, match=f"^{re.escape(message)}$"):
        irm.optimize_fusion({"a": RUN_A, "b": RUN_B}, metric, qrels=JUDGED)


def test_optimize_fusion_ranking_metric_still_optimised() -> None:
    best = irm.optimize_fusion({"a": RUN_A, "b": RUN_B}, "P@1", qrels=JUDGED)
    assert isinstance(best, dict)
    assert sorted(best) == ["weights"]
