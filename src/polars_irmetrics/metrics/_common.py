"""Building blocks shared by the metric formulas (relevance tests, cutoffs, gains, DCG).

Conventions (trec_eval 9/10): a judged document is *relevant* when ``rel >= level``
and ``rel >= 0``; a negative relevance means "in the pool but not judged"; a ratio
whose denominator is zero is 0.
"""

from __future__ import annotations

import polars as pl

from polars_irmetrics.scope import Scope
from polars_irmetrics.spec import Param, Params

GAIN = Param(
    "gain",
    "linear",
    ("linear", "exponential"),
    "gain of a document with relevance g: g (linear, trec_eval) or 2**g - 1 (exponential)",
)
IDEAL = Param(
    "ideal",
    "judgments",
    ("judgments", "retrieved"),
    "ideal ranking from all judged documents (trec_eval) or from the retrieved ones only",
)


def relevant(s: Scope, p: Params) -> pl.Expr:
    return (s.rel >= p.level) & (s.rel >= 0)


def ranked(s: Scope, k: int | None) -> pl.Expr:
    """Retrieved at rank 1..k (any rank when ``k`` is None)."""
    return s.rank.is_not_null() if k is None else (s.rank <= k)


def num_rel(s: Scope, p: Params) -> pl.Expr:
    return relevant(s, p).sum().cast(pl.Float64)


def rel_ret(s: Scope, p: Params, k: int | None) -> pl.Expr:
    return (relevant(s, p) & ranked(s, k)).sum().cast(pl.Float64)


def ratio(num: pl.Expr, den: pl.Expr) -> pl.Expr:
    """``num / den``, and 0 where ``den`` is 0."""
    return pl.when(den > 0).then(num / den).otherwise(0.0)


def gain(s: Scope, p: Params) -> pl.Expr:
    rel = s.rel.cast(pl.Float64)
    gain = rel if p.choice("gain") == "linear" else (pl.lit(2.0).pow(rel) - 1.0)
    return pl.when(rel > 0).then(gain).otherwise(0.0)


def dcg(s: Scope, p: Params) -> pl.Expr:
    discount = (s.rank.cast(pl.Float64) + 1.0).log(2)
    return (gain(s, p) / discount).filter(ranked(s, p.k) & (s.rel > 0)).sum()


def idcg(s: Scope, p: Params) -> pl.Expr:
    position = s.ideal_position(retrieved_only=p.choice("ideal") == "retrieved")
    keep = position.is_not_null() if p.k is None else (position <= p.k)
    discount = (position.cast(pl.Float64) + 1.0).log(2)
    return (gain(s, p) / discount).filter(keep).sum()


def precision_at(s: Scope, p: Params) -> pl.Expr:
    if p.k is None:
        return ratio(rel_ret(s, p, None), s.num_ret.cast(pl.Float64))
    return rel_ret(s, p, p.k) / float(p.k)


def recall_at(s: Scope, p: Params) -> pl.Expr:
    den = num_rel(s, p)
    if p.options.get("denominator") == "capped" and p.k is not None:
        den = pl.min_horizontal(den, pl.lit(float(p.k)))
    return ratio(rel_ret(s, p, p.k), den)
