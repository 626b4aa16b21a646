"""Two recommender libraries' list metrics: cornac's NCRR and RePlay's RocAuc@K.

* ``ncrr`` is cornac's ``NCRR`` (normalized cumulative reciprocal rank): the sum of
  ``1 / rank`` over the relevant documents of the top ``k``, over the same sum for the
  ideal list, which puts ``min(R, L)`` relevant documents first (``R`` the relevant
  judged documents, ``L = min(k, n)`` the length of the top ``k`` of a list of ``n``).
  cornac ranks the whole catalogue for each test user, so there ``L = k``; here the
  run's list is the ranking, and a shorter list shortens the ideal one as it shortens
  cornac's ``pd_rank[:k]``.
* ``rocauc`` is RePlay's ``RocAuc``: the ROC AUC of the top ``k`` as a classifier of
  the user's test items, counting only the listed documents: with ``tp`` relevant and
  ``fp`` other documents among the first ``L = min(k, n)``, one minus the share of
  (relevant, other) pairs of the list the other one leads. It is named ``rocauc`` as
  RePlay spells it (``RocAuc@10``; names are case-insensitive): ``roc_auc`` is
  scikit-learn's name for ``auc``, the AUC of a model's predictions.

Both read the run and the judgments like ``ndcg``: a test user without
recommendations scores 0, as in both libraries (the evaluation's
``unretrieved='zero'``). Values equal cornac's and RePlay's, on their own test inputs
and on random ones (``tests/test_cornac_ncrr.py``, ``tests/test_replay_auc_ci.py``,
from fixtures written in side environments: ``tests/fixtures/cornac/``,
``tests/fixtures/replay/``).
"""

from __future__ import annotations

import polars as pl

from polars_irmetrics.metrics._common import (
    fsum,
    fsum_ranked,
    list_positions,
    num_rel,
    rel_ret,
    relevant,
)
from polars_irmetrics.metrics.scope import Scope
from polars_irmetrics.metrics.spec import Metric, Params

__all__ = ["LISTWISE_METRICS"]


def _listed(s: Scope, p: Params) -> pl.Expr:
    """``L``: the positions of the query's top ``k`` (its whole list without ``k``),
    :func:`list_positions`: counting rows (the documents given) with the ranks as
    positions gave RocAuc below 0 (-inf for one relevant document at rank 2)."""
    n = list_positions(s)
    return n if p.k is None else pl.min_horizontal(n, pl.lit(float(p.k)))


def _ncrr(s: Scope, p: Params) -> pl.Expr:
    crr = fsum_ranked(s, 1.0 / s.rank.cast(pl.Float64), relevant(s, p), p.k)
    # the ideal list's first min(R, L) positions: the query has at least R rows (its
    # relevant judged documents), so row indexes 0..min(R, L)-1 exist; the count is
    # beside every row through Scope.window (the plan's group-by then streams)
    ideal = s.window(pl.min_horizontal(num_rel(s, p), _listed(s, p)))
    position = s.row_index().cast(pl.Float64)
    icrr = fsum(s, 1.0 / (position + 1.0), position < ideal)
    return pl.when(crr > 0).then(crr / icrr).otherwise(0.0)


def _rocauc(s: Scope, p: Params) -> pl.Expr:
    is_rel = relevant(s, p)
    tp = rel_ret(s, p, p.k)
    fp = _listed(s, p) - tp
    # per relevant document: the other (non-relevant or unjudged) documents above it
    others_above = s.rank.cast(pl.Float64) - s.ranked_count(is_rel).cast(pl.Float64)
    misordered = fsum_ranked(s, others_above, is_rel, p.k)
    return (
        pl.when(tp == 0)
        .then(0.0)
        .when(misordered == 0)
        .then(1.0)
        .otherwise(1.0 - misordered / (fp * tp))
    )


LISTWISE_METRICS: tuple[Metric, ...] = (
    Metric(
        "ncrr",
        "cornac's normalized cumulative reciprocal rank of the relevant documents",
        _ncrr,
        formula="CRR / ICRR, CRR = sum of 1 / rank over the relevant documents ranked "
        "<= k, ICRR = sum_{i=1}^{min(R, L)} 1 / i with R the relevant judged documents "
        "and L = min(k, n) the listed documents of the top k; 0 when none is found "
        "(cornac NCRR(k); without @k the whole list, cornac's k=-1)",
        latex=r"\mathrm{NCRR}@k = \frac{\sum_{d \in \mathrm{rel},\, r_d \le k} 1 / r_d}"
        r"{\sum_{i=1}^{\min(R,\, L)} 1 / i}",
        matches={"cornac": "NCRR(k).compute, per user and mean, to 1e-9"},
    ),
    Metric(
        "rocauc",
        "RePlay's RocAuc@K: the ROC AUC of the top k against the user's test items",
        _rocauc,
        formula="with tp relevant and fp = L - tp other documents among the first "
        "L = min(k, n) listed, and m = the (relevant, other) pairs of the top k where "
        "the other document ranks above: 0 when tp = 0, 1 when m = 0, else "
        "1 - m / (tp fp) (RePlay RocAuc(k); named as RePlay spells it, roc_auc being "
        "scikit-learn's name for auc)",
        latex=r"\mathrm{RocAuc}@k = 1 - \frac{\sum_{d \in \mathrm{rel},\, r_d \le L}"
        r"(r_d - \mathrm{found}_d)}{tp \cdot fp}",
        matches={"replay": "RocAuc(k), per user and mean, to 1e-9"},
    ),
)
