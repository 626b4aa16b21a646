"""The metric registry and its one parser: table-driven."""

from __future__ import annotations

import re

import pytest

import polars_irmetrics as irm
from polars_irmetrics import MetricParameterError, UnknownMetricError, parse_metric

PARSES = [
    # canonical
    ("ndcg@10", "ndcg@10"),
    ("map", "map"),
    ("map@5", "map@5"),
    ("recall(denominator='capped')@10", "recall(denominator='capped')@10"),
    ("ndcg(gain='exponential')@10", "ndcg(gain='exponential')@10"),
    ("map(denominator='retrieved')@5", "map(denominator='retrieved')@5"),
    ("ndcg(ideal='retrieved')", "ndcg(ideal='retrieved')"),
    ("precision@10", "precision@10"),
    ("r_precision", "r_precision"),
    ("hit_rate@10", "hit_rate@10"),
    ("mrr@10", "mrr@10"),
    ("bpref", "bpref"),
    ("num_ret", "num_ret"),
    ("num_rel", "num_rel"),
    ("num_rel_ret", "num_rel_ret"),
    ("f1@5", "f1@5"),
    ("dcg@3", "dcg@3"),
    ("idcg@3", "idcg@3"),
    ("cg@4", "cg@4"),
    # ir_measures
    ("nDCG@10", "ndcg@10"),
    ("nDCG(dcg='exp-log2')@10", "ndcg(gain='exponential')@10"),
    ("nDCG(dcg='log2')@10", "ndcg@10"),
    ("AP", "map"),
    ("AP(rel=2)", "map(rel=2)"),
    ("AP(rel=2)@10", "map(rel=2)@10"),
    ("P@10", "precision@10"),
    ("P(rel=2)@10", "precision(rel=2)@10"),
    ("R@100", "recall@100"),
    ("RR", "mrr"),
    ("RR@10", "mrr@10"),
    ("Success@10", "hit_rate@10"),
    ("Rprec", "r_precision"),
    ("NumRet", "num_ret(agg='sum')"),
    ("NumRel", "num_rel(agg='sum')"),
    ("NumRelRet", "num_rel_ret(agg='sum')"),
    # trec_eval
    ("ndcg_cut_10", "ndcg@10"),
    ("P_10", "precision@10"),
    ("recall_100", "recall@100"),
    ("recip_rank", "mrr"),
    ("map_cut_10", "map@10"),
    ("success_10", "hit_rate@10"),
    ("set_P", "precision"),
    ("set_recall", "recall"),
    ("set_F", "f1"),
    ("ideal_dcg", "idcg"),
    # ranx
    ("ndcg_burges@10", "ndcg(gain='exponential')@10"),
    ("r-precision", "r_precision"),
    ("hits@10", "num_rel_ret@10"),
    ("precision@5", "precision@5"),
    # spacing and case
    ("  NDCG @ 10 ", "ndcg@10"),
    ('recall(denominator="capped")@10', "recall(denominator='capped')@10"),
    ("map(rel=1.5)", "map(rel=1.5)"),
]


@pytest.mark.parametrize(("text", "canonical"), PARSES)
def test_parse_gives_canonical_name(text: str, canonical: str) -> None:
    assert parse_metric(text).name == canonical


@pytest.mark.parametrize("canonical", sorted({c for _, c in PARSES}))
def test_canonical_name_parses_back(canonical: str) -> None:
    request = parse_metric(canonical)
    assert request.name == canonical
    assert parse_metric(request.name) == request


ERRORS = [
    ("ndcgg@10", UnknownMetricError, "unknown metric 'ndcgg'. Did you mean: ndcg"),
    ("precison@5", UnknownMetricError, "Did you mean: precision"),
    ("zzz", UnknownMetricError, "unknown metric 'zzz'. See irm.list_metrics()"),
    (
        "ndcg@0",
        MetricParameterError,
        "metric 'ndcg@0': the cutoff must be a positive integer, got '0'",
    ),
    (
        "ndcg@-3",
        MetricParameterError,
        "metric 'ndcg@-3': the cutoff must be a positive integer, got '-3'",
    ),
    (
        "ndcg@ten",
        MetricParameterError,
        "metric 'ndcg@ten': the cutoff must be a positive integer, got 'ten'",
    ),
    (
        "P@2.5",
        MetricParameterError,
        "metric 'P@2.5': the cutoff must be a positive integer, got '2.5'",
    ),
    (
        "ndcg_cut",
        MetricParameterError,
        "metric 'ndcg_cut': ndcg_cut needs a cutoff, e.g. 'ndcg_cut@10'",
    ),
    (
        "Rprec@10",
        MetricParameterError,
        "metric 'Rprec@10': rprec takes no cutoff; use 'r_precision' without '@10'",
    ),
    (
        "recip_rank@10",
        MetricParameterError,
        "metric 'recip_rank@10': recip_rank takes no cutoff; use 'mrr' without '@10'",
    ),
    (
        "recall(denominator='all')@10",
        MetricParameterError,
        "metric \"recall(denominator='all')@10\": denominator='all' is not allowed; "
        "choose one of 'relevant', 'capped'",
    ),
    (
        "ndcg(foo=1)@10",
        MetricParameterError,
        "metric 'ndcg(foo=1)@10': unknown parameter 'foo'; ndcg takes gain, ideal",
    ),
    (
        "ndcg(rel=2)@10",
        MetricParameterError,
        "metric 'ndcg(rel=2)@10': ndcg uses graded relevance and takes no relevance level 'rel'",
    ),
    # a metric of no judgment: it once said "auc uses graded relevance"
    (
        "auc(rel=2)",
        MetricParameterError,
        "metric 'auc(rel=2)': auc reads no relevance judgments and takes no relevance level 'rel'",
    ),
    (
        "rbo(rel=2)",
        MetricParameterError,
        "metric 'rbo(rel=2)': rbo reads no relevance judgments and takes no relevance level 'rel'",
    ),
    (
        "map(rel='x')",
        MetricParameterError,
        "metric \"map(rel='x')\": rel must be a number (the relevance level), got 'x'",
    ),
    (
        "ndcg(gain)@10",
        MetricParameterError,
        "metric 'ndcg(gain)@10': cannot read parameter 'gain'; write key=value",
    ),
    ("@10", UnknownMetricError, "cannot read metric '@10': expected NAME, NAME@K"),
    # f1's beta was read as 1 when not a number, and a negative one gave 0 / NaN
    *(
        (
            f"f1(beta={text})@2",
            MetricParameterError,
            f"metric {f'f1(beta={text})@2'!r}: beta must be a number >= 0, the weight of recall "
            f"against precision, got {shown}, e.g. f1(beta=0.5)@10 (1: the harmonic mean)",
        )
        for text, shown in (("'x'", "'x'"), ("-1", "-1"), ("nan", "nan"))
    ),
]


@pytest.mark.parametrize(("text", "error", "message"), ERRORS)
def test_parse_errors(text: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=re.escape(message)):
        parse_metric(text)


def test_errors_are_value_errors() -> None:
    with pytest.raises(ValueError, match="unknown metric"):
        parse_metric("nope")


@pytest.mark.parametrize(
    ("k", "shown"), [(0, "0"), (-1, "-1"), (2.5, "2.5"), (True, "True"), ("10", "'10'")]
)
def test_expression_k_must_be_positive_integer(k: object, shown: str) -> None:
    with pytest.raises(
        MetricParameterError,
        match=re.escape(
            f"metric 'irm.ndcg(...)': k must be a positive integer or None, got {shown}"
        ),
    ):
        irm.ndcg(k=k)  # type: ignore[arg-type]


def test_every_metric_and_alias_is_reachable() -> None:
    for metric in irm.list_metrics():
        assert irm.get_metric(metric.name) is metric
        for alias in metric.aliases:
            assert irm.get_metric(alias.name) is metric
            assert irm.get_metric(alias.name.upper()) is metric


def test_default_metrics_parse() -> None:
    names = [parse_metric(n).name for n in irm.DEFAULT_METRICS]
    assert names == list(irm.DEFAULT_METRICS)


def test_metric_declarations() -> None:
    ndcg = irm.get_metric("ndcg")
    assert ndcg.higher_is_better
    assert [p.name for p in ndcg.params] == [
        "gain",
        "ideal",
        "ties",
        "relevancy_method",
        "threshold",
    ]
    assert ndcg.param("gain") is not None
    assert ndcg.param("nope") is None
    assert irm.get_metric("num_ret").integer
