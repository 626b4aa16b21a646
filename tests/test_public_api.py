"""The public surface: ``irm.__all__`` is pinned, and every name in it resolves."""

from __future__ import annotations

import polars as pl
import pytest

import polars_irmetrics as irm

PUBLIC = [
    "DEFAULT_METRICS",
    "Debias",
    "ArgumentError",
    "ColumnNotFoundError",
    "ColumnTypeError",
    "DuplicateError",
    "EvalOptions",
    "FileFormatError",
    "InvalidValueError",
    "IrmError",
    "IrmWarning",
    "CoverageWarning",
    "MetricParameterError",
    "MissingFileError",
    "MetricRequest",
    "MissingDependencyError",
    "QuerySetError",
    "Report",
    "TrecFormatError",
    "UnknownMetricError",
    "ab_test",
    "arhr",
    "beyond_accuracy",
    "label_propensity",
    "bpref",
    "cg",
    "click_metric",
    "compare",
    "cosine_similarity",
    "dcg",
    "err",
    "evaluate",
    "evaluate_online",
    "evaluate_jg",
    "evaluate_prefs",
    "expand_metric_names",
    "f1",
    "f1_beta",
    "fcp",
    "fit_fusion",
    "fuse",
    "get_metric",
    "hit_rate",
    "idcg",
    "infap",
    "interleaving_test",
    "iprec",
    "judged",
    "knn",
    "list_metrics",
    "map",
    "mar",
    "mrr",
    "ndcg",
    "ncrr",
    "num_rel",
    "num_rel_ret",
    "num_ret",
    "pap",
    "partial_auc",
    "optimize_fusion",
    "parse_metric",
    "precision",
    "r_precision",
    "rank_by_score",
    "rbp",
    "rbp_residual",
    "read_beir",
    "read_trec_prefs",
    "read_trec_qrels",
    "read_trec_qrels_jg",
    "read_trec_run",
    "recall",
    "relative_precision",
    "rocauc",
    "report",
    "reproducibility",
    "rprec_mult",
    "scan_trec_qrels",
    "scan_trec_run",
    "set_progress",
    "system_agreement",
    "trec_ndcg",
    "tukey_hsd",
    "unjudged",
    "write_trec_run",
    # prediction quality (polars_irmetrics.prediction)
    "auc",
    "brier",
    "calibration",
    "ece",
    "explained_variance",
    "gauc",
    "logloss",
    "mae",
    "mse",
    "ne",
    "pr_auc",
    "r2",
    "rmse",
    # off-policy evaluation (polars_irmetrics.ope)
    "position_bias",
]


def test_all_is_pinned() -> None:
    assert sorted(irm.__all__) == sorted(PUBLIC)


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(irm, name) is not None


@pytest.mark.parametrize("frame", [pl.DataFrame({"a": [1]}), pl.LazyFrame({"a": [1]})])
def test_namespace_is_registered(frame: pl.DataFrame | pl.LazyFrame) -> None:
    assert hasattr(frame, "irm")
