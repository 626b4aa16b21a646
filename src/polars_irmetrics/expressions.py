"""Metric expressions: ``df.group_by("query_id").agg(irm.ndcg(k=10))``.

Each function returns a ``pl.Expr`` that aggregates the rows of one query of a
*judged table*: one row per document with its ``relevance`` and its ``rank``
(1 = top; a null rank means judged but not retrieved). The judgments are the table's
own rows, so ``R`` (the number of relevant documents) and the ideal DCG come from
the table; documents not in it are unknown. To evaluate a run against separate
judgments, use :func:`polars_irmetrics.evaluate`, which builds the judged rows for you.

To rank by score instead of a rank column, pass ``rank=irm.rank_by_score()``
(score descending, ties broken by doc_id descending as text, as trec_eval does).

The formulas live in :mod:`polars_irmetrics.metrics`; these functions only bind
arguments. The result column is named by the metric's canonical name
(``ndcg@10``); rename it with ``.alias(...)``.
"""

from __future__ import annotations

from typing import Literal

import polars as pl

from .registry import request
from .scope import TableScope
from .spec import ParamValue

__all__ = [
    "bpref",
    "cg",
    "dcg",
    "f1",
    "hit_rate",
    "idcg",
    "map",
    "mrr",
    "ndcg",
    "num_rel",
    "num_rel_ret",
    "num_ret",
    "precision",
    "r_precision",
    "rank_by_score",
    "recall",
]

RankSpec = str | pl.Expr
Gain = Literal["linear", "exponential"]
Ideal = Literal["judgments", "retrieved"]


def rank_by_score(score: str = "score", doc_id: str = "doc_id") -> pl.Expr:
    """Rank within the group by ``score`` descending, ties by ``doc_id`` descending.

    This is trec_eval's ordering (document ids compared as text). Use it as the
    ``rank=`` argument of any metric expression.

    Examples
    --------
    Documents ``b`` and ``c`` tie on score; ``c`` sorts above ``b`` (descending id):

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"doc_id": ["a", "b", "c"], "score": [1.0, 2.0, 2.0]})
    >>> df.select(irm.rank_by_score())["rank"].to_list()
    [3, 2, 1]
    """
    tie = pl.col(doc_id).cast(pl.String)
    return (
        pl.arg_sort_by([pl.col(score), tie], descending=[True, True]).arg_sort().cast(pl.Int64) + 1
    ).alias("rank")


def _expr(
    metric: str,
    *,
    k: int | None,
    relevance: str,
    rank: RankSpec,
    level: float,
    **options: ParamValue,
) -> pl.Expr:
    req = request(metric, k=k, options=options)
    return req.expr(TableScope(relevance, rank), float(level)).alias(req.name)


def precision(
    k: int | None = None,
    *,
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
) -> pl.Expr:
    """Precision@k: the share of the top k that is relevant.

    ``rel_ret@k / k`` (trec_eval ``P_k``): always divided by ``k``, even when fewer
    than ``k`` documents were retrieved. Without ``k``: relevant retrieved / retrieved
    (trec_eval ``set_P``).

    Parameters
    ----------
    k
        Cutoff; ``None`` for the whole list.
    relevance_level
        Relevance at or above which a document is relevant.
    relevance, rank
        Column names (``rank`` may be an expression, e.g. :func:`rank_by_score`).

    Examples
    --------
    The cutoff past the end of the list still divides by k:

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3], "relevance": [1, 0, 1]})
    >>> df.select(irm.precision(k=2), irm.precision(k=10), irm.precision())
    shape: (1, 3)
    ┌─────────────┬──────────────┬───────────┐
    │ precision@2 ┆ precision@10 ┆ precision │
    │ ---         ┆ ---          ┆ ---       │
    │ f64         ┆ f64          ┆ f64       │
    ╞═════════════╪══════════════╪═══════════╡
    │ 0.5         ┆ 0.2          ┆ 0.666667  │
    └─────────────┴──────────────┴───────────┘
    """
    return _expr("precision", k=k, relevance=relevance, rank=rank, level=relevance_level)


def recall(
    k: int | None = None,
    *,
    denominator: Literal["relevant", "capped"] = "relevant",
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
) -> pl.Expr:
    """Recall@k: the share of the relevant documents found in the top k.

    ``rel_ret@k / R`` (trec_eval ``recall_k``), or ``rel_ret@k / min(k, R)`` with
    ``denominator="capped"`` (BEIR's R_cap). 0 for a query with no relevant document.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3, 4], "relevance": [1, 1, 0, 1]})
    >>> df.select(irm.recall(k=2), irm.recall(k=2, denominator="capped"))
    shape: (1, 2)
    ┌──────────┬────────────────────────────────┐
    │ recall@2 ┆ recall(denominator='capped')@2 │
    │ ---      ┆ ---                            │
    │ f64      ┆ f64                            │
    ╞══════════╪════════════════════════════════╡
    │ 0.666667 ┆ 1.0                            │
    └──────────┴────────────────────────────────┘
    """
    return _expr(
        "recall",
        k=k,
        relevance=relevance,
        rank=rank,
        level=relevance_level,
        denominator=denominator,
    )


def f1(
    k: int | None = None,
    *,
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
) -> pl.Expr:
    """F1@k: harmonic mean of precision@k and recall@k (0 when both are 0).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3, 4], "relevance": [1, 0, 0, 1]})
    >>> df.select(irm.f1(k=2)).item()  # P = 1/2, R = 1/2
    0.5
    """
    return _expr("f1", k=k, relevance=relevance, rank=rank, level=relevance_level)


def r_precision(
    *,
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
) -> pl.Expr:
    """R-precision: precision at rank R, R the number of relevant documents.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3, 4], "relevance": [0, 1, 1, 0]})
    >>> df.select(irm.r_precision()).item()  # R = 2, one relevant in the top 2
    0.5
    """
    return _expr("r_precision", k=None, relevance=relevance, rank=rank, level=relevance_level)


def hit_rate(
    k: int | None = None,
    *,
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
) -> pl.Expr:
    """Hit rate@k (success@k): 1 when a relevant document is in the top k, else 0.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3], "relevance": [0, 0, 1]})
    >>> df.select(irm.hit_rate(k=2), irm.hit_rate(k=3)).row(0)
    (0.0, 1.0)
    """
    return _expr("hit_rate", k=k, relevance=relevance, rank=rank, level=relevance_level)


def mrr(
    k: int | None = None,
    *,
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
) -> pl.Expr:
    """Reciprocal rank of the first relevant document (within the top k); 0 if none.

    Averaged over queries (as :func:`polars_irmetrics.evaluate` does) this is MRR.

    Examples
    --------
    A query with no relevant document scores 0:

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({
    ...     "query_id": [1, 1, 1, 2, 2],
    ...     "rank": [1, 2, 3, 1, 2],
    ...     "relevance": [0, 0, 1, 0, 0],
    ... })
    >>> df.group_by("query_id").agg(irm.mrr(), irm.mrr(k=2)).sort("query_id")
    shape: (2, 3)
    ┌──────────┬──────────┬───────┐
    │ query_id ┆ mrr      ┆ mrr@2 │
    │ ---      ┆ ---      ┆ ---   │
    │ i64      ┆ f64      ┆ f64   │
    ╞══════════╪══════════╪═══════╡
    │ 1        ┆ 0.333333 ┆ 0.0   │
    │ 2        ┆ 0.0      ┆ 0.0   │
    └──────────┴──────────┴───────┘
    """
    return _expr("mrr", k=k, relevance=relevance, rank=rank, level=relevance_level)


def map(
    k: int | None = None,
    *,
    denominator: Literal["relevant", "capped", "retrieved"] = "relevant",
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
) -> pl.Expr:
    """Average precision (AP@k); averaged over queries it is MAP.

    Sum of precision@r over the relevant documents at ranks r <= k, divided by R
    (trec_eval ``map`` / ``map_cut_k``, the default), by ``min(k, R)``
    (``denominator="capped"``: Spark, Microsoft Recommenders), or by the number of
    relevant documents found in the top k (``denominator="retrieved"``: torchmetrics).

    Examples
    --------
    Relevant at ranks 2 and 4, R = 3 (one relevant document was not retrieved):

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3, 4, None], "relevance": [0, 1, 0, 1, 1]})
    >>> df.select(irm.map()).item() == (1/2 + 2/4) / 3
    True
    >>> df.select(irm.map(denominator="retrieved")).item() == (1/2 + 2/4) / 2
    True
    """
    return _expr(
        "map",
        k=k,
        relevance=relevance,
        rank=rank,
        level=relevance_level,
        denominator=denominator,
    )


def ndcg(
    k: int | None = None,
    *,
    gain: Gain = "linear",
    ideal: Ideal = "judgments",
    relevance: str = "relevance",
    rank: RankSpec = "rank",
) -> pl.Expr:
    """Normalised discounted cumulative gain (nDCG@k).

    ``DCG@k / IDCG@k`` with ``DCG@k = sum_{r <= k} gain(rel_r) / log2(r + 1)``.
    ``gain="linear"`` uses the relevance value (trec_eval), ``"exponential"`` uses
    ``2**rel - 1`` (Burges et al.; ranx ``ndcg_burges``). Only positive relevance
    gains. ``ideal="judgments"`` builds the ideal ranking from every judged document
    (trec_eval); ``"retrieved"`` from the retrieved documents only (scikit-learn).
    0 when the ideal DCG is 0 (no relevant document).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3], "relevance": [0, 2, 1]})
    >>> import math
    >>> dcg = 2 / math.log2(3) + 1 / math.log2(4)
    >>> idcg = 2 / math.log2(2) + 1 / math.log2(3)
    >>> math.isclose(df.select(irm.ndcg(k=3)).item(), dcg / idcg, rel_tol=1e-12)
    True
    """
    return _expr("ndcg", k=k, relevance=relevance, rank=rank, level=1, gain=gain, ideal=ideal)


def dcg(
    k: int | None = None,
    *,
    gain: Gain = "linear",
    relevance: str = "relevance",
    rank: RankSpec = "rank",
) -> pl.Expr:
    """Discounted cumulative gain: ``sum_{r <= k} gain(rel_r) / log2(r + 1)``.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3], "relevance": [0, 4, 1]})
    >>> import math
    >>> math.isclose(df.select(irm.dcg(k=2)).item(), 4 / math.log2(3), rel_tol=1e-12)
    True
    """
    return _expr("dcg", k=k, relevance=relevance, rank=rank, level=1, gain=gain)


def idcg(
    k: int | None = None,
    *,
    gain: Gain = "linear",
    ideal: Ideal = "judgments",
    relevance: str = "relevance",
    rank: RankSpec = "rank",
) -> pl.Expr:
    """Ideal DCG@k: the DCG@k of the judged documents sorted by gain, descending.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3], "relevance": [0, 2, 1]})
    >>> import math
    >>> math.isclose(df.select(irm.idcg(k=2)).item(), 2 + 1 / math.log2(3), rel_tol=1e-12)
    True
    """
    return _expr("idcg", k=k, relevance=relevance, rank=rank, level=1, gain=gain, ideal=ideal)


def cg(
    k: int | None = None,
    *,
    gain: Gain = "linear",
    relevance: str = "relevance",
    rank: RankSpec = "rank",
) -> pl.Expr:
    """Cumulative gain: the sum of the gains of the top k.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3], "relevance": [0, 4, 1]})
    >>> df.select(irm.cg(k=2)).item()
    4.0
    """
    return _expr("cg", k=k, relevance=relevance, rank=rank, level=1, gain=gain)


def bpref(
    *,
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
) -> pl.Expr:
    """Binary preference (Buckley & Voorhees 2004), as trec_eval computes it.

    ``(1/R) * sum over retrieved relevant d of (1 - min(n_d, R) / min(N, R))``, where
    ``n_d`` counts judged non-relevant documents ranked above ``d`` and ``N`` all
    judged non-relevant documents. Unjudged documents (negative relevance, or not in
    the judgments) do not count.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, 3, 4], "relevance": [0, 1, -1, 1]})
    >>> df.select(irm.bpref()).item()  # R = 2, N = 1: (1 - 1/1) + (1 - 1/1)
    0.0
    """
    return _expr("bpref", k=None, relevance=relevance, rank=rank, level=relevance_level)


def num_ret(*, relevance: str = "relevance", rank: RankSpec = "rank") -> pl.Expr:
    """Number of retrieved documents (rows with a rank).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> pl.DataFrame({"rank": [1, 2, None], "relevance": [1, 0, 1]}).select(irm.num_ret()).item()
    2
    """
    return _expr("num_ret", k=None, relevance=relevance, rank=rank, level=1)


def num_rel(
    *, relevance_level: float = 1, relevance: str = "relevance", rank: RankSpec = "rank"
) -> pl.Expr:
    """Number of relevant documents among the judged rows (R).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> pl.DataFrame({"rank": [1, 2, None], "relevance": [1, 0, 2]}).select(irm.num_rel()).item()
    2
    """
    return _expr("num_rel", k=None, relevance=relevance, rank=rank, level=relevance_level)


def num_rel_ret(
    k: int | None = None,
    *,
    relevance_level: float = 1,
    relevance: str = "relevance",
    rank: RankSpec = "rank",
) -> pl.Expr:
    """Number of relevant documents retrieved (in the top k): ranx's ``hits@k``.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({"rank": [1, 2, None], "relevance": [1, 1, 2]})
    >>> df.select(irm.num_rel_ret(), irm.num_rel_ret(k=1)).row(0)
    (2, 1)
    """
    return _expr("num_rel_ret", k=k, relevance=relevance, rank=rank, level=relevance_level)
