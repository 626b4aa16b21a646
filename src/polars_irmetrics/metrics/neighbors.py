"""Recall of approximate nearest neighbours: metrics that read an exact run.

A vector index (HNSW, IVF, PQ) returns approximate neighbours; how many of the true
ones it finds is measured against an exact search (:func:`polars_irmetrics.knn`), the
*neighbors* table (``reads=("run", "neighbors")``). The definitions are
ann-benchmarks' (``ann_benchmarks/plotting/metrics.py``): with distances
``dist = -score`` (a run's score is higher-is-better; :func:`polars_irmetrics.knn`'s
``"l2"`` score is the negative distance), the first ``k`` documents of the approximate
run count when their distance is at most a threshold made from the ``k``-th smallest
true distance ``t_k``:

* ``neighbor_recall@k`` (ann-benchmarks' ``knn`` recall): ``dist <= t_k + epsilon``,
  ``epsilon = 1e-3`` by default. With ``epsilon=0`` and distinct scores it equals the
  plain overlap ``|approx@k ∩ exact@k| / k`` (faiss' ``eval_intersection / k``) only
  where the two tables' document ids line up and the run's scores are the true
  distances: it reads distances, never document ids (a run in another id space, row
  positions against external ids, scores the same; a run none of whose ids
  ``neighbors=`` holds is named in a :class:`~polars_irmetrics.errors.CoverageWarning`).
* ``neighbor_recall_rel@k`` (ann-benchmarks' ``epsilon`` recall): ``dist <= t_k (1 +
  epsilon)``, ``epsilon = 0.01``; a relative threshold needs distances that are 0 for the
  query itself: ``distance="neg_score"`` (``-score``: an l2 run) or
  ``"one_minus_score"`` (``1 - score``: cosine similarity, ann-benchmarks' angular
  distance); a distance below 0 (a score rounded past 1) counts as 0.

The approximate run's scores must be true scores of the documents it returns (as
ann-benchmarks recomputes them): exact for flat and IVF-flat indexes, to be recomputed
for product-quantised ones. They are computed by ``irm.evaluate(approx_run, metrics,
neighbors=exact_run)`` (:mod:`polars_irmetrics.vectors.neighbors`); ``compute`` only
raises an error naming that entry point.
"""

from __future__ import annotations

import polars as pl

from polars_irmetrics.errors import MetricParameterError
from polars_irmetrics.metrics._common import check_number
from polars_irmetrics.metrics.scope import Scope
from polars_irmetrics.metrics.spec import Input, Metric, Param, Params

__all__ = ["NEIGHBOR_METRICS", "neighbor_distance", "neighbor_epsilon"]

_READS: tuple[Input, ...] = ("run", "neighbors")
#: The parser's check of ``epsilon``.
_EPSILON = check_number("epsilon", low=0.0, what="a number >= 0")


def _needs_neighbors(s: Scope, p: Params) -> pl.Expr:
    raise MetricParameterError(
        "neighbour recall compares an approximate run with the exact neighbours, not with "
        "judgments; compute it with irm.evaluate(approx_run, ['neighbor_recall@10'], "
        "neighbors=exact_run)"
    )


def neighbor_epsilon(p: Params) -> float:
    """The ``epsilon`` of a neighbour-recall request (a number >= 0: its ``Param.check``)."""
    return p.number("epsilon")


def neighbor_distance(p: Params, negative: pl.Expr | None = None) -> pl.Expr:
    """The distance of a row from its ``score``, as the request's ``distance`` says;
    ``"auto"``: ``-score`` where ``negative`` (every score of the exact run is at most 0,
    as knn's ``l2`` runs), ``1 - score`` otherwise (knn's cosine runs)."""
    score = pl.col("score")
    choice = p.options.get("distance", "neg_score")
    if choice == "one_minus_score":
        return 1.0 - score
    if choice == "auto" and negative is not None:
        return pl.when(negative).then(-score).otherwise(1.0 - score)
    return -score


_ANN = "ann-benchmarks (ann_benchmarks/plotting/metrics.py)"

NEIGHBOR_METRICS: tuple[Metric, ...] = (
    Metric(
        "neighbor_recall",
        "share of the k returned neighbours within the k-th true distance (plus epsilon)",
        _needs_neighbors,
        cutoff="required",
        params=(
            Param(
                "epsilon",
                1e-3,
                doc="added to the k-th true distance (ann-benchmarks' default 1e-3; 0: "
                "the plain overlap of the two top k when scores are distinct, the ids "
                "line up and the run's scores are the true distances)",
                check=_EPSILON,
            ),
        ),
        binary=False,
        reads=_READS,
        matches={
            "ann-benchmarks": "knn recall (get_recall_values with knn_threshold): equal "
            "(tests/test_neighbors.py)",
            "faiss": "eval_intersection / k with epsilon=0 and distinct scores, where the "
            "ids line up and the run's scores are the true distances: equal",
        },
        latex=(
            r"\frac{1}{\min(k, n)} \left|\{ r \le k : -s_r \le t_k + \epsilon \}\right|,"
            r" \quad t_k = k\text{-th smallest true distance}"
        ),
        formula="Of the approximate run's first k documents, those whose distance (-score) "
        "is at most the k-th smallest distance of the exact run plus epsilon, divided by k "
        "(ann-benchmarks' knn recall). When the exact run has n < k neighbours of a query "
        "(a small corpus), its largest distance and n take their place (ann-benchmarks "
        "needs k); a query whose first k documents then hold more than n within that distance "
        "is refused (a recall above 1: the exact run lacks documents within it, or the "
        "two runs' scores are not the same distances). A query of the exact run that the "
        "approximate run lacks scores 0; a "
        "query only in the approximate run has no truth and is left out.",
    ),
    Metric(
        "neighbor_recall_rel",
        "share of the k returned neighbours within (1 + epsilon) times the k-th true distance",
        _needs_neighbors,
        cutoff="required",
        params=(
            Param(
                "epsilon",
                0.01,
                doc="relative tolerance (ann-benchmarks' 'epsilon' recall: 0.01; "
                "'largeepsilon': 0.1)",
                check=_EPSILON,
            ),
            Param(
                "distance",
                "auto",
                ("auto", "neg_score", "one_minus_score"),
                "distance from the score: -score (l2 runs, knn's negative distance), "
                "1 - score (cosine similarity: the angular distance), or auto (default): "
                "-score when every score of the exact run is at most 0 (knn's l2 runs), "
                "else 1 - score (knn's cosine runs); scores all within [-1, 0] can be "
                "either: an IrmWarning where the value would differ read as cosine "
                "similarities",
            ),
        ),
        binary=False,
        reads=_READS,
        matches={
            "ann-benchmarks": "epsilon recall (get_recall_values with epsilon_threshold): "
            "equal (tests/test_neighbors.py)",
        },
        latex=(r"\frac{1}{\min(k, n)} \left|\{ r \le k : d_r \le (1 + \epsilon)\, t_k \}\right|"),
        formula="Of the approximate run's first k documents, those whose distance is at "
        "most (1 + epsilon) times the k-th smallest distance of the exact run, divided by "
        "k (ann-benchmarks' epsilon recall), with the distance -score or 1 - score "
        "(parameter distance); a distance below 0 (a cosine score rounded past 1 in a "
        "self-search) counts as 0. Queries and small corpora as neighbor_recall.",
    ),
)
