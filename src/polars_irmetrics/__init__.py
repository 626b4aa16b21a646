"""polars_irmetrics: ranking metrics as polars expressions, exact to trec_eval.

>>> import polars as pl
>>> import polars_irmetrics as irm
>>> judged = pl.DataFrame({
...     "query_id": ["q1", "q1", "q1", "q2", "q2"],
...     "doc_id": ["a", "b", "c", "a", "d"],
...     "rank": [1, 2, 3, 1, 2],
...     "relevance": [0, 2, 1, 1, 0],
... })
>>> judged.group_by("query_id").agg(irm.ndcg(k=10), irm.mrr()).sort("query_id")
shape: (2, 3)
┌──────────┬──────────┬─────┐
│ query_id ┆ ndcg@10  ┆ mrr │
│ ---      ┆ ---      ┆ --- │
│ str      ┆ f64      ┆ f64 │
╞══════════╪══════════╪═════╡
│ q1       ┆ 0.669672 ┆ 0.5 │
│ q2       ┆ 1.0      ┆ 1.0 │
└──────────┴──────────┴─────┘
"""

from __future__ import annotations

import inspect as _inspect
import sys as _sys

from polars_irmetrics import namespace as _namespace  # registers df.irm and lf.irm
from polars_irmetrics.comparison import compare, reproducibility, system_agreement, tukey_hsd
from polars_irmetrics.comparison.publish import Report, report
from polars_irmetrics.door.evaluate import evaluate
from polars_irmetrics.door.jg import evaluate_jg
from polars_irmetrics.door.online import evaluate_online
from polars_irmetrics.door.prefs import evaluate_prefs
from polars_irmetrics.door.recsys import beyond_accuracy
from polars_irmetrics.errors import (
    ArgumentError,
    ColumnNotFoundError,
    ColumnTypeError,
    CoverageWarning,
    DuplicateError,
    FileFormatError,
    InvalidValueError,
    IrmError,
    IrmWarning,
    MetricParameterError,
    MissingDependencyError,
    MissingFileError,
    QuerySetError,
    TrecFormatError,
    UnknownMetricError,
)
from polars_irmetrics.expressions import (
    arhr,
    bpref,
    cg,
    dcg,
    err,
    f1,
    f1_beta,
    fcp,
    hit_rate,
    idcg,
    infap,
    iprec,
    judged,
    map,
    mar,
    mrr,
    ncrr,
    ndcg,
    num_rel,
    num_rel_ret,
    num_ret,
    pap,
    partial_auc,
    precision,
    r_precision,
    rank_by_score,
    rbp,
    rbp_residual,
    recall,
    relative_precision,
    rocauc,
    rprec_mult,
    trec_ndcg,
    unjudged,
)
from polars_irmetrics.fusion.fuse import fuse
from polars_irmetrics.fusion.optimize import optimize_fusion
from polars_irmetrics.fusion.train import fit_fusion
from polars_irmetrics.ground.calls import checked_call as _checked_call
from polars_irmetrics.ground.debias import Debias
from polars_irmetrics.ground.options import EvalOptions
from polars_irmetrics.ground.progress import set_progress
from polars_irmetrics.io.beir import read_beir
from polars_irmetrics.io.prefs import read_trec_prefs, read_trec_qrels_jg
from polars_irmetrics.io.trec import (
    read_trec_qrels,
    read_trec_run,
    scan_trec_qrels,
    scan_trec_run,
    write_trec_run,
)
from polars_irmetrics.metrics.registry import (
    DEFAULT_METRICS,
    MetricRequest,
    expand_metric_names,
    get_metric,
    list_metrics,
    parse_metric,
)
from polars_irmetrics.metrics.similarity import cosine_similarity
from polars_irmetrics.offline.propensity import label_propensity
from polars_irmetrics.online.ab import ab_test
from polars_irmetrics.online.expressions import click_metric
from polars_irmetrics.online.interleaving import interleaving_test
from polars_irmetrics.ope.position_bias import position_bias
from polars_irmetrics.prediction.expressions import (
    auc,
    brier,
    calibration,
    ece,
    explained_variance,
    gauc,
    logloss,
    mae,
    mse,
    ne,
    pr_auc,
    r2,
    rmse,
)
from polars_irmetrics.vectors.knn import knn

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_METRICS",
    "ArgumentError",
    "ColumnNotFoundError",
    "ColumnTypeError",
    "CoverageWarning",
    "Debias",
    "DuplicateError",
    "EvalOptions",
    "FileFormatError",
    "InvalidValueError",
    "IrmError",
    "IrmWarning",
    "MetricParameterError",
    "MetricRequest",
    "MissingDependencyError",
    "MissingFileError",
    "QuerySetError",
    "Report",
    "TrecFormatError",
    "UnknownMetricError",
    "ab_test",
    "arhr",
    "auc",
    "beyond_accuracy",
    "bpref",
    "brier",
    "calibration",
    "cg",
    "click_metric",
    "compare",
    "cosine_similarity",
    "dcg",
    "ece",
    "err",
    "evaluate",
    "evaluate_jg",
    "evaluate_online",
    "evaluate_prefs",
    "expand_metric_names",
    "explained_variance",
    "f1",
    "f1_beta",
    "fcp",
    "fit_fusion",
    "fuse",
    "gauc",
    "get_metric",
    "hit_rate",
    "idcg",
    "infap",
    "interleaving_test",
    "iprec",
    "judged",
    "knn",
    "label_propensity",
    "list_metrics",
    "logloss",
    "mae",
    "map",
    "mar",
    "mrr",
    "mse",
    "ncrr",
    "ndcg",
    "ne",
    "num_rel",
    "num_rel_ret",
    "num_ret",
    "optimize_fusion",
    "pap",
    "parse_metric",
    "partial_auc",
    "position_bias",
    "pr_auc",
    "precision",
    "r2",
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
    "report",
    "reproducibility",
    "rmse",
    "rocauc",
    "rprec_mult",
    "scan_trec_qrels",
    "scan_trec_run",
    "set_progress",
    "system_agreement",
    "trec_ndcg",
    "tukey_hsd",
    "unjudged",
    "write_trec_run",
]

# every exported function, its arguments checked against its declaration: an unknown
# keyword, an argument too many or missing, or a value of another kind than declared
# is an ArgumentError naming it (ground.calls), never Python's or polars' own words. The
# defining module holds the checked function too: pickle finds it by its name there, a
# doctest runs once (in that module), and an import from there is checked alike. An
# exported class (Debias, EvalOptions, MetricRequest, Report) has its __init__ and its
# public methods checked in place
for _name in __all__:
    _original = globals()[_name]
    if _inspect.isfunction(_original):
        globals()[_name] = _checked_call(_original, f"irm.{_name}")
        _home, _where = _sys.modules[_original.__module__], _original.__qualname__
        if getattr(_home, _where, None) is _original:
            setattr(_home, _where, globals()[_name])
    elif isinstance(_original, type) and not issubclass(_original, BaseException | Warning):
        for _method, _function in vars(_original).copy().items():
            if _inspect.isfunction(_function) and (_method == "__init__" or _method[0] != "_"):
                _shown = f"irm.{_name}" if _method == "__init__" else f"{_name}.{_method}"
                setattr(_original, _method, _checked_call(_function, _shown))

del _namespace, _name, _original, _home, _where, _method, _function, _shown
