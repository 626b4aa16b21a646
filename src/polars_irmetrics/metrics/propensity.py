"""Propensity-scored ranking metrics, as extreme-classification benchmarks report them.

``ps_precision@k`` and ``ps_ndcg@k`` read a run, relevance judgments and a table of
propensities (``propensities=``, ``reads=("run", "judgments", "propensities")``), and
equal pyxclib's ``xclib.evaluation.xc_metrics.psprecision`` and ``psndcg`` (Jain,
Prabhu & Varma 2016, "Extreme multi-label loss functions for recommendation, tagging,
ranking and other missing label applications"): each relevant document counts with the
weight ``w = 1 / propensity``, and the value is a ratio of *sums over the queries*:

* ``ps_precision@k = sum_q sum_{r <= k} w_{d_r} rel_{d_r} / sum_q sum_{i <= k} w*_{q,i}``,
  with ``w*_{q,1} >= w*_{q,2} >= ...`` the weights of query ``q``'s relevant documents
  sorted (pyxclib's "ideal" propensity-scored ranking, ``_get_topk`` of the weighted
  labels); the ``1/k`` of both cancels;
* ``ps_ndcg@k = sum_q DCG_w(run)_q / Z_q / sum_q DCG_w(ideal)_q / Z_q``, with
  ``DCG_w = sum_{r <= k} w rel / log2(r + 1)`` and ``Z_q = sum_{i <= min(n_q, k)}
  1 / log2(i + 1)`` over the query's ``n_q`` relevant documents (the binary IDCG).

The queries are those of the judgments (a query the run misses adds to the ideal sums
only, as pyxclib's row without a prediction does); a query without a relevant document
adds 0 to both sums. :func:`polars_irmetrics.evaluate` computes them
(:mod:`polars_irmetrics.offline.propensity`); ``per_query=True`` gives each query's
share, ``N_q / mean_q(I_q)``, whose mean is the value.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from polars_irmetrics.errors import MetricParameterError
from polars_irmetrics.metrics.scope import Scope
from polars_irmetrics.metrics.spec import Input, Metric, Params

__all__ = ["PROPENSITY_METRICS"]

_READS: tuple[Input, ...] = ("run", "judgments", "propensities")
_MATCH = (
    "{}: on random runs, judgments and Jain et al.'s propensities (tests/fixtures/pyxclib/), to {}"
)


def _plan_only(name: str) -> Callable[[Scope, Params], pl.Expr]:
    def compute(scope: Scope, params: Params) -> pl.Expr:
        raise MetricParameterError(
            f"metric {name!r} is a ratio of sums over the queries, normalised by the ideal "
            "propensity-scored ranking: compute it with irm.evaluate(run, [...], qrels=..., "
            "propensities=...)"
        )

    return compute


PROPENSITY_METRICS: tuple[Metric, ...] = (
    Metric(
        "ps_precision",
        "Propensity-scored precision at k (pyxclib's psprecision), normalised by the "
        "ideal propensity-scored ranking",
        _plan_only("ps_precision"),
        cutoff="required",
        formula="sum over queries of sum_{r<=k} rel_r / p_r, divided by the same sum over "
        "each query's relevant documents sorted by 1/p (the ideal ranking), p the "
        "propensity of the document (or of its position in the run)",
        latex=r"\frac{\sum_q \sum_{r \le k} \mathrm{rel}_{q,r} / p_{q,r}}"
        r"{\sum_q \sum_{i \le k} w^*_{q,i}}",
        reads=_READS,
        matches={"pyxclib": _MATCH.format("xc_metrics.psprecision", "1e-12")},
    ),
    Metric(
        "ps_ndcg",
        "Propensity-scored nDCG at k (pyxclib's psndcg), normalised by the ideal "
        "propensity-scored ranking",
        _plan_only("ps_ndcg"),
        cutoff="required",
        formula="sum over queries of DCG_w@k / Z_q, divided by the same sum for the ideal "
        "propensity-scored ranking; DCG_w = sum_{r<=k} (rel_r / p_r) / log2(r + 1), Z_q "
        "the binary IDCG@k of the query's relevant documents",
        latex=r"\frac{\sum_q Z_q^{-1} \sum_{r \le k} \frac{\mathrm{rel}_{q,r} / p_{q,r}}"
        r"{\log_2(r+1)}}{\sum_q Z_q^{-1} \sum_{i \le k} \frac{w^*_{q,i}}{\log_2(i+1)}}",
        reads=_READS,
        matches={
            "pyxclib": _MATCH.format(
                "xc_metrics.psndcg", "1e-6 (pyxclib keeps its nDCG means in float32)"
            )
        },
    ),
)
