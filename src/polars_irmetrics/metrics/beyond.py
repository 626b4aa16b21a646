"""Metrics beyond trec_eval: ERR, RBP and its residual, ARHR, MAR, FCP, Judged.

Each formula is one polars aggregation over the judged rows of one query (see
:class:`polars_irmetrics.metrics.scope.Scope`), with the library's conventions (see
:mod:`polars_irmetrics.metrics.core`): ``rank`` is a position (null: judged, not
retrieved), a judged document is *relevant* when ``level <= rel`` and ``rel >= 0``,
a negative label means "in the pool but not judged", ``R`` is the number of relevant
judged documents, and a ratio over zero is 0. Unjudged retrieved documents are not
rows: they count only in ``num_ret`` and are never relevant.

Where ir_measures has the metric, the value is the same (``tests/test_beyond_metrics.py``
compares them); where this module chooses differently, the ``formula`` text says so.
"""

from __future__ import annotations

import polars as pl

from polars_irmetrics.errors import MetricParameterError
from polars_irmetrics.metrics._common import (
    check_number,
    divide,
    fsum_ranked,
    num_rel,
    power,
    ranked,
    ratio,
    relevant,
)
from polars_irmetrics.metrics.scope import Scope
from polars_irmetrics.metrics.spec import Alias, Metric, Param, Params

__all__ = ["BEYOND_METRICS"]

#: gdeval's (and so ir_measures') highest relevance grade for ERR.
ERR_MAX_GRADE = 4
#: Moffat & Zobel's persistence in their examples, and ir_measures' default.
RBP_P = 0.8


#: The parser's check of rbp's persistence ``p``.
_PERSISTENCE = check_number(
    "p", low=0.0, high=1.0, exclusive=True, what="a number between 0 and 1 (exclusive)"
)


# --------------------------------------------------------------------------- formulas
def _err(s: Scope, p: Params) -> pl.Expr:
    max_grade = p.number("max_grade")
    grade = s.rel.cast(pl.Float64).clip(upper_bound=max_grade)
    # non-relevant, negative and null labels: the user goes on
    chance = divide(pl.lit(2.0).pow(grade) - 1.0, 2.0**max_grade)
    stop = pl.when(grade > 0).then(chance).otherwise(0.0)
    reach = s.product_above(1.0 - stop)
    term = stop * reach / s.rank.cast(pl.Float64)
    return fsum_ranked(s, term, stop > 0, p.k)


def _rbp_weight(s: Scope, persistence: float) -> pl.Expr:
    return (1.0 - persistence) * power(persistence, s.rank.cast(pl.Float64) - 1.0)


def _rbp(s: Scope, p: Params) -> pl.Expr:
    persistence = p.number("p")
    gain = pl.lit(1.0) if p.choice("gain") == "binary" else s.rel.cast(pl.Float64)
    term = gain * _rbp_weight(s, persistence)
    return fsum_ranked(s, term, relevant(s, p), p.k)


def _rbp_residual(s: Scope, p: Params) -> pl.Expr:
    persistence = p.number("p")
    known = fsum_ranked(s, _rbp_weight(s, persistence), s.rel >= 0, p.k)
    return 1.0 - known


def _arhr(s: Scope, p: Params) -> pl.Expr:
    return fsum_ranked(s, 1.0 / s.rank.cast(pl.Float64), relevant(s, p), p.k)


def _mar(s: Scope, p: Params) -> pl.Expr:
    if p.k is None:  # pragma: no cover - the cutoff is required by the declaration
        raise MetricParameterError("metric 'mar' needs a cutoff, e.g. 'mar@10'")
    k = float(p.k)
    # integers below 2**53: a plain sum is exact in any order
    cutoffs_found = (k - s.rank.cast(pl.Float64) + 1.0).filter(relevant(s, p) & ranked(s, p.k))
    return ratio(cutoffs_found.sum(), k * num_rel(s, p))


def _fcp(s: Scope, p: Params) -> pl.Expr:
    graded = s.rel >= 0
    top = ranked(s, p.k)
    out = ~top.fill_null(False)
    label = s.rel.cast(pl.Float64)
    above = s.greater_above(pl.when(graded).then(label)).cast(pl.Float64)
    greater_all = s.count_greater(pl.when(graded).then(label)).cast(pl.Float64)
    greater_out = s.count_greater(pl.when(graded & out).then(label)).cast(pl.Float64)
    # counts of pairs, integers below 2**53: plain sums are exact in any order
    pairs = greater_all.filter(graded).sum()
    concordant = (
        above.filter(graded & top).sum() + (greater_all - greater_out).filter(graded & out).sum()
    )
    tied = greater_out.filter(graded & out).sum()
    return ratio(concordant + 0.5 * tied, pairs)


def _judged(s: Scope, p: Params) -> pl.Expr:
    found = ((s.rel >= 0) & ranked(s, p.k)).sum().cast(pl.Float64)
    listed = s.num_ret.cast(pl.Float64)
    if p.k is not None:
        listed = pl.min_horizontal(listed, pl.lit(float(p.k)))
    return ratio(found, listed)


# --------------------------------------------------------------------------- registry
BEYOND_METRICS: tuple[Metric, ...] = (
    Metric(
        "err",
        "expected reciprocal rank: a cascade user who stops at a relevant document",
        _err,
        matches={"ir_measures": "ERR@k (gdeval): to 1e-9"},
        latex=(
            r"\mathrm{ERR@}k = \sum_{r=1}^{k} \frac{R_r}{r}\prod_{i<r}(1 - R_i), \quad R_i ="
            r" \frac{2^{\min(\ell_i, g_{\max})} - 1}{2^{g_{\max}}}"
        ),
        params=(
            Param(
                "max_grade",
                ERR_MAX_GRADE,
                doc="highest relevance grade g_max: a document of grade g stops the user "
                "with probability (2**g - 1) / 2**g_max (gdeval and ir_measures: 4)",
                check=check_number("max_grade", low=0.0, exclusive=True, what="a number > 0"),
            ),
        ),
        binary=False,
        formula="sum over ranks r <= k of R_r / r * prod_{i < r} (1 - R_i), with "
        "R = (2^g - 1) / 2^g_max for a document of grade g > 0 and R = 0 otherwise "
        "(non-relevant, negative label, unjudged) (Chapelle, Metzler, Zhang & Grinspan "
        "2009). g_max is the parameter max_grade, a fixed 4 by default as in gdeval, "
        "which ir_measures' ERR@k runs; grades above max_grade count as max_grade "
        "(gdeval refuses them). Not normalised: a query with no relevant document, an "
        "empty list or one whose relevant documents all lie past k scores 0; k past "
        "the end of the list changes nothing.",
    ),
    Metric(
        "rbp",
        "rank-biased precision: the rate of gain of a user with persistence p",
        _rbp,
        matches={"ir_measures": "RBP(rel=1) (cwl-eval): to 1e-9"},
        latex=(
            r"\mathrm{RBP@}k = (1-p)\sum_{r \le k,\ \ell_r \ge \lambda} w_r\, p^{r-1}, \quad"
            r" w_r = 1 \text{ or } \ell_r"
        ),
        params=(
            Param(
                "p",
                RBP_P,
                doc="persistence: the probability of going on to the next rank (0 < p < 1)",
                check=_PERSISTENCE,
            ),
            Param(
                "gain",
                "binary",
                ("binary", "linear"),
                "gain of a relevant document: 1 (binary, Moffat & Zobel) or its label "
                "(linear, as trectools, which ir_measures' RBP without rel runs)",
            ),
        ),
        formula="(1 - p) * sum over relevant documents at ranks r <= k of gain * p^(r-1) "
        "(Moffat & Zobel 2008), gain 1 by default (ir_measures RBP(rel=1), which runs "
        "cwl_eval); without k the whole list. Positions past the end of the list (or "
        "past k) add nothing; how much they and unjudged documents could add is "
        "rbp_residual. 0 for an empty list or a query with no relevant document. "
        "gain='linear' is ir_measures' RBP without rel (trectools) on runs without tied "
        "scores (trectools averages the weights of tied documents); trec_eval's rbp "
        "scales its gains and fixes p = 0.9: that is trec_rbp.",
    ),
    Metric(
        "rbp_residual",
        "the most that unjudged and unseen positions could add to rbp",
        _rbp_residual,
        latex=r"\mathrm{RBP_{res}@}k = 1 - (1-p)\sum_{r \le k,\ d_r \text{ judged}} p^{r-1}",
        params=(
            Param(
                "p",
                RBP_P,
                doc="persistence: the probability of going on to the next rank (0 < p < 1)",
                check=_PERSISTENCE,
            ),
        ),
        binary=False,
        # how much of the ranking the judgments leave unknown (the uncertainty of rbp),
        # not how good the ranking is: a system is no better for more judged documents
        higher_is_better=None,
        formula="1 - (1 - p) * sum over judged documents (label >= 0) at ranks r <= k of "
        "p^(r-1): the weight of every position whose gain is unknown, i.e. unjudged "
        "retrieved documents, empty positions, and everything past the end of the list "
        "or past k (p^k) (Moffat & Zobel 2008). rbp + rbp_residual bounds binary RBP "
        "from above. With ranks 1..n and no k this is trec_eval's rbp_resid "
        "p^n + (1 - p) * sum over unjudged r of p^(r-1), except that trec_eval defaults "
        "to p = 0.9 and reports 0 when no retrieved document is unjudged (that is "
        "trec_rbp_resid). 1 for an empty list.",
    ),
    Metric(
        "arhr",
        "average reciprocal hit rank: the sum of 1/rank over relevant documents",
        _arhr,
        latex=r"\mathrm{ARHR@}k = \sum_{r \le k,\ \ell_r \ge \lambda} \frac{1}{r}",
        aliases=(Alias("average_reciprocal_hit_rank"),),
        formula="sum over relevant documents at ranks r <= k of 1 / r (Deshpande & Karypis "
        "2004); unlike mrr every hit counts, so it can exceed 1. 0 for an empty list or a "
        "query with no relevant document; k past the end of the list changes nothing.",
    ),
    Metric(
        "mar",
        "mean average recall: recall@j averaged over the cutoffs j = 1..k",
        _mar,
        latex=r"\mathrm{MAR@}k = \frac{1}{k}\sum_{j=1}^{k} \mathrm{R@}j",
        cutoff="required",
        aliases=(Alias("mean_average_recall"),),
        formula="(1/k) * sum_{j=1..k} recall@j = sum over relevant documents at ranks "
        "r <= k of (k - r + 1) / (k * R): a relevant document at rank r counts in "
        "recall@r..recall@k. 0 when R = 0 or nothing relevant is in the top k; k past "
        "the end of the list keeps dividing by k (the recall@j there stays flat).",
    ),
    Metric(
        "fcp",
        "fraction of concordant pairs: judged pairs the ranking orders by their labels",
        _fcp,
        latex=r"\mathrm{FCP} = \frac{C + T/2}{|\{(d, d') : \ell_d \ne \ell_{d'}\}|}",
        binary=False,
        formula="over pairs of judged documents (labels >= 0) with different labels: "
        "(concordant + tied / 2) / pairs (Koren & Sill 2011, with ties counted as half, "
        "as in AUC). A pair is concordant when the document with the higher label is "
        "ranked higher; documents outside the top k (or not retrieved) rank below every "
        "retrieved one and tie with each other, so a pair of them is tied. Graded: labels "
        "are compared as they are, not binarised. 0 when there is no such pair (every "
        "judged document has the same label, or none is judged); an empty list scores "
        "1/2 when there are pairs (every pair is tied). k past the end of the list "
        "changes nothing. Quadratic in the judged documents of a query.",
        unjudged=False,  # judged_only= changes nothing without @k
    ),
    Metric(
        "judged",
        "share of the top k that has a judgment",
        _judged,
        matches={"ir_measures": "Judged@k: to 1e-9"},
        latex=(
            r"\mathrm{Judged@}k = \frac{|\{r \le k : d_r \text{ judged}\}|}{\min(k,"
            r" \mathrm{num\_ret})}"
        ),
        binary=False,
        # of the judgments' completeness, not a system's quality (ir_measures reports it
        # as a diagnostic beside the measures): no system is better at it
        higher_is_better=None,
        formula="judged documents (labels >= 0) at ranks r <= k / min(k, num_ret) "
        "(ir_measures Judged@k: when fewer than k documents are retrieved the "
        "denominator is the number retrieved); without k, judged / num_ret. 0 for an "
        "empty list. A negative label means 'not judged' here as everywhere in this "
        "library (ir_measures counts every qrels entry as judged, negative ones too). "
        "With rank gaps the denominator counts documents, not positions. Not "
        "1 - unjudged@k when fewer than k are retrieved: trec_eval's unj_k divides by k.",
    ),
)
