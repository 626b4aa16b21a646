"""Metric@k curves: ``recall@1..100`` expands to one column per cutoff, in one pass."""

from __future__ import annotations

import re

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics import MetricParameterError, UnknownMetricError, expand_metric_names

from .conftest import Evaluate
from .helpers import judged_list

TABLE = pl.concat(
    [
        judged_list("a", [0, 1, 0, 1, 1, 0, 1, 0]),
        judged_list("b", [2, 0, 0, 0, 1]),
    ]
)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("recall@1..3", ["recall@1", "recall@2", "recall@3"]),
        ("P@10..35:10", ["P@10", "P@20", "P@30"]),
        ("P@10..30:10", ["P@10", "P@20", "P@30"]),
        ("ndcg@5..5", ["ndcg@5"]),
        ("  nDCG @ 2 .. 3 ", ["nDCG@2", "nDCG@3"]),
        ("nDCG(dcg='exp-log2')@1..2", ["nDCG(dcg='exp-log2')@1", "nDCG(dcg='exp-log2')@2"]),
        ("rbp(p=0.5)@1..2", ["rbp(p=0.5)@1", "rbp(p=0.5)@2"]),
        ("map", ["map"]),
        ("ndcg@10", ["ndcg@10"]),
        ("P_10", ["P_10"]),
    ],
)
def test_expand(text: str, names: list[str]) -> None:
    assert expand_metric_names(text) == names


def test_long_range() -> None:
    names = expand_metric_names("recall@1..100")
    assert names == [f"recall@{k}" for k in range(1, 101)]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("recall@5..1", "metric 'recall@5..1': the range 5..1 is empty; write the smaller"),
        ("recall@0..3", "cutoffs and the step of a range must be positive integers"),
        ("P@1..10:0", "cutoffs and the step of a range must be positive integers"),
        ("recall@1..20000", "the range has 20000 cutoffs, more than 10,000; use a step"),
    ],
)
def test_expand_errors(text: str, message: str) -> None:
    with pytest.raises(MetricParameterError, match=re.escape(message)):
        expand_metric_names(text)


def test_expand_needs_a_string() -> None:
    with pytest.raises(MetricParameterError, match="a metric must be given as a string"):
        expand_metric_names(10)  # type: ignore[arg-type]


def test_evaluate_expands_ranges(evaluate: Evaluate) -> None:
    out = evaluate(TABLE, ["recall@1..8", "P@2..8:3", "ndcg@3..4", "map"], per_query=True)
    assert out.columns == [
        "query_id",
        *(f"recall@{k}" for k in range(1, 9)),
        "P@2",
        "P@5",
        "P@8",
        "ndcg@3",
        "ndcg@4",
        "map",
    ]
    row = out.row(0, named=True)  # query a: relevant at 2, 4, 5, 7 of 8 (R = 4)
    assert [row[f"recall@{k}"] for k in range(1, 9)] == pytest.approx(
        [0, 1 / 4, 1 / 4, 2 / 4, 3 / 4, 3 / 4, 4 / 4, 4 / 4], abs=1e-15
    )
    assert [row["P@2"], row["P@5"], row["P@8"]] == pytest.approx([1 / 2, 3 / 5, 4 / 8], abs=1e-15)
    listed = evaluate(
        TABLE, [*(f"recall@{k}" for k in range(1, 9)), "P@2", "P@5", "P@8", "ndcg@3", "ndcg@4"]
    )
    means = evaluate(TABLE, ["recall@1..8", "P@2..8:3", "ndcg@3..4"])
    assert means.columns == listed.columns
    assert means.row(0) == listed.row(0)


def test_a_range_is_one_pass() -> None:
    """The cutoffs of a range share the plan's one group-by (and its window columns)."""
    one = irm.evaluate(TABLE.lazy(), ["ndcg@3"], per_query=True).explain()
    many = irm.evaluate(TABLE.lazy(), ["ndcg@1..50", "recall@1..50"], per_query=True).explain()
    assert many.count("AGGREGATE") == one.count("AGGREGATE")
    assert many.count(".over(") == one.count(".over(")  # one ideal-position column


def test_mar_is_the_mean_of_the_recall_curve(evaluate: Evaluate) -> None:
    out = evaluate(TABLE, ["recall@1..6", "mar@6"], per_query=True)
    for row in out.iter_rows(named=True):
        curve = [row[f"recall@{k}"] for k in range(1, 7)]
        assert row["mar@6"] == pytest.approx(sum(curve) / 6, abs=1e-15)


def test_range_overlapping_a_listed_metric() -> None:
    with pytest.raises(MetricParameterError, match=re.escape("metric 'recall@2' is listed twice")):
        irm.evaluate(TABLE, ["recall@1..3", "recall@2"])


def test_range_on_a_metric_without_cutoff() -> None:
    with pytest.raises(MetricParameterError, match="rprec takes no cutoff"):
        irm.evaluate(TABLE, ["Rprec@1..3"])


def test_range_on_an_unknown_metric() -> None:
    with pytest.raises(UnknownMetricError, match="unknown metric 'ndcgg'"):
        irm.evaluate(TABLE, ["ndcgg@1..3"])


def test_namespace_evaluate_expands_ranges() -> None:
    out = TABLE.irm.evaluate(["hit_rate@1..2"])
    assert out.columns == ["num_q", "hit_rate@1", "hit_rate@2"]
    assert out.row(0) == (2, 1 / 2, 1.0)
