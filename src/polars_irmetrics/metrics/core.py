"""The core metrics: precision, recall, F1, R-precision, hit rate, MRR, MAP, nDCG, bpref, counts.

Each formula is one polars aggregation over the judged rows of one query (see
:class:`polars_irmetrics.metrics.scope.Scope`): ``rank`` is the document's position (null when
it was not retrieved), ``rel`` its judged relevance, ``num_ret`` the number of
documents retrieved for the query. Conventions follow trec_eval 9/10:

* a judged document is *relevant* when ``rel >= level`` (default level 1) and
  ``rel >= 0``; a negative relevance means "in the pool but not judged";
* ``R`` is the number of relevant documents in the judgments (retrieved or not);
* gains for nDCG are the relevance values themselves (``gain='linear'``), only
  positive values count, and the ideal ranking is built from all judged documents;
* a ratio whose denominator is zero (no relevant document, empty ideal) is 0.

Symbols in the formulas below: ``rel_ret@k`` = relevant documents at ranks 1..k,
``R`` = relevant documents in the judgments, ``N`` = judged non-relevant documents.
"""

from __future__ import annotations

from dataclasses import replace

import polars as pl

from polars_irmetrics.metrics._common import (
    GAIN,
    IDEAL,
    LOG_BASE,
    RELEVANCY,
    TIES,
    check_flag,
    check_number,
    check_relevancy,
    dcg,
    divide,
    exact_level,
    fsum_ranked,
    gain,
    idcg,
    list_cutoff,
    num_rel,
    precision_at,
    ranked,
    ratio,
    recall_at,
    rel_ret,
    relevant,
)
from polars_irmetrics.metrics.scope import Scope
from polars_irmetrics.metrics.spec import Alias, Metric, Param, Params

__all__ = ["CORE_METRICS"]


# --------------------------------------------------------------------------- formulas
def _precision(s: Scope, p: Params) -> pl.Expr:
    return precision_at(s, p)


def _recall(s: Scope, p: Params) -> pl.Expr:
    return recall_at(s, p)


def _f1(s: Scope, p: Params) -> pl.Expr:
    prec, rec = precision_at(s, p), recall_at(s, p)
    # trec_eval's set_F weight (m_set_F.c): (1 + b) P R / (b P + R), b not squared
    b = float(p.options.get("beta", 1.0))  # type: ignore[arg-type]  # checked: a number
    return ratio((1.0 + b) * prec * rec, b * prec + rec)


def _r_precision(s: Scope, p: Params) -> pl.Expr:
    r = num_rel(s, p)
    # R beside every row through Scope.window: a row compared with a per-query value
    # inside the aggregation would keep the plan's group-by from streaming
    within_r = s.rank <= s.window(r)
    cut = list_cutoff(p)  # by_threshold: the top `threshold` count
    found = (relevant(s, p) & within_r & ranked(s, cut)).sum().cast(pl.Float64)
    if p.k is not None and p.choice("denominator") == "capped":
        return ratio(found, pl.min_horizontal(r, pl.lit(float(p.k))))
    return ratio(found, r)


def _hit_rate(s: Scope, p: Params) -> pl.Expr:
    return (rel_ret(s, p, p.k) > 0).cast(pl.Float64)


def _mrr(s: Scope, p: Params) -> pl.Expr:
    first = pl.when(relevant(s, p) & ranked(s, p.k)).then(s.rank).min()
    return (1.0 / first.cast(pl.Float64)).fill_null(0.0)


def _map(s: Scope, p: Params) -> pl.Expr:
    cut = list_cutoff(p)
    is_rel = relevant(s, p)
    found = is_rel & ranked(s, cut)
    precision = s.ranked_count(is_rel).cast(pl.Float64) / s.rank.cast(pl.Float64)
    # trec_eval's sum (m_map.c, m_map_cut.c): the precisions added in rank order
    precision_sum = s.sum_in_order(precision, is_rel & s.rank.is_not_null(), cut)
    denominator = p.choice("denominator")
    if denominator == "retrieved":
        den = found.sum().cast(pl.Float64)
    elif denominator == "capped" and p.k is not None:
        den = pl.min_horizontal(num_rel(s, p), pl.lit(float(p.k)))
    else:
        den = num_rel(s, p)
    return ratio(precision_sum, den)


def _ndcg(s: Scope, p: Params) -> pl.Expr:
    # by_threshold: the DCG of the top `threshold`, over the ideal DCG of k
    return ratio(dcg(s, replace(p, k=list_cutoff(p))), idcg(s, p))


def _dcg_metric(s: Scope, p: Params) -> pl.Expr:
    return dcg(s, p)


def _idcg_metric(s: Scope, p: Params) -> pl.Expr:
    return idcg(s, p)


def _cg(s: Scope, p: Params) -> pl.Expr:
    return fsum_ranked(s, gain(s, p), s.rel > 0, p.k)


def _bpref(s: Scope, p: Params) -> pl.Expr:
    # sum over the retrieved relevant d of 1 - min(n_d, R) / cap, added in rank order
    # as trec_eval adds it (m_bpref.c)
    nonrel = (s.rel >= 0) & (s.rel < exact_level(p.level))
    r = relevant(s, p).sum().cast(pl.Int64)
    n = nonrel.sum().cast(pl.Int64)
    found = relevant(s, p) & s.rank.is_not_null()
    # R and the cap beside every row through Scope.window (see _r_precision)
    nonrel_above = pl.min_horizontal(s.ranked_count(nonrel).cast(pl.Int64), s.window(r))
    cap = s.window(pl.max_horizontal(pl.min_horizontal(n, r), pl.lit(1)))
    # divide(): a division by each row's cap, as the plan's window column gives it (a
    # user's group-by holds the cap as a scalar, by which polars multiplies by the
    # reciprocal: 3 / 5 would be 0.6000000000000001 there)
    term = 1.0 - divide(nonrel_above.cast(pl.Float64), cap.cast(pl.Float64))
    return ratio(s.sum_in_order(term, found), r.cast(pl.Float64))


def _num_q(s: Scope, p: Params) -> pl.Expr:
    return pl.len().clip(upper_bound=1).cast(pl.Int64)


def _num_ret(s: Scope, p: Params) -> pl.Expr:
    return s.num_ret.cast(pl.Int64)


def _num_rel_count(s: Scope, p: Params) -> pl.Expr:
    return relevant(s, p).sum().cast(pl.Int64)


def _num_rel_ret(s: Scope, p: Params) -> pl.Expr:
    return (relevant(s, p) & ranked(s, p.k)).sum().cast(pl.Int64)


# --------------------------------------------------------------------------- registry
CORE_METRICS: tuple[Metric, ...] = (
    Metric(
        "precision",
        "share of the top k that is relevant",
        _precision,
        matches={
            "trec_eval (through pytrec_eval)": "P_k, set_P: to 1e-9",
            "ranx": "precision@k: to 1e-9",
            "ir_measures": "P@k: to 1e-9",
            "recommenders": "precision_at_k (relevancy_method 'top_k' and "
            "'by_threshold'): to 1e-12",
            "torchmetrics (its formula, as arithmetic)": "RetrievalPrecision(top_k=k, "
            "adaptive_k=True): precision(adaptive_k=True)@k, to 1e-9",
        },
        latex=r"\mathrm{P@}k = \frac{1}{k}\sum_{r=1}^{k} \mathbb{1}[\ell_r \ge \lambda]",
        check_params=check_relevancy,
        params=(
            *RELEVANCY,
            Param(
                "adaptive_k",
                False,
                None,
                "True: divide by min(k, n), n the documents retrieved (torchmetrics' "
                "RetrievalPrecision(adaptive_k=True)); False: by k (trec_eval P_k)",
                check=check_flag,
                with_cutoff=(True,),
            ),
        ),
        aliases=(
            Alias("p"),
            Alias("prec"),
            Alias("set_p", cutoff="none"),
            Alias("setp", cutoff="dropped"),
        ),
        formula="rel_ret@k / k (trec_eval P_k: always divided by k, even when fewer than k "
        "documents were retrieved); without k, rel_ret / num_ret (trec_eval set_P). "
        "relevancy_method='by_threshold' (Microsoft Recommenders): rel_ret@threshold / k, "
        "which exceeds 1 when threshold > k, as theirs. adaptive_k=True: rel_ret@k / "
        "min(k, num_ret) (torchmetrics adaptive_k), 0 when nothing was retrieved. "
        "ir_measures' SetP(rel=2)@5 is set_P: its providers score the whole retrieved set, "
        "so the @5 has no effect (the canonical name, precision(rel=2), has no cutoff).",
    ),
    Metric(
        "recall",
        "share of the relevant documents found in the top k",
        _recall,
        matches={
            "trec_eval (through pytrec_eval)": "recall_k, set_recall: to 1e-9",
            "ranx": "recall@k: to 1e-9",
            "ir_measures": "R@k: to 1e-9",
        },
        latex=(
            r"\mathrm{R@}k = \frac{1}{R}\sum_{r=1}^{k} \mathbb{1}[\ell_r \ge \lambda]"
            r" \quad\text{or}\quad \frac{1}{\min(k, R)}\sum_{r=1}^{k} \mathbb{1}[\ell_r \ge"
            r" \lambda]"
        ),
        check_params=check_relevancy,
        params=(
            Param(
                "denominator",
                "relevant",
                ("relevant", "capped"),
                "divide by R (trec_eval) or by min(k, R) (BEIR's R_cap)",
                with_cutoff=("capped",),
            ),
            *RELEVANCY,
        ),
        aliases=(
            Alias("r"),
            Alias("set_recall", cutoff="none"),
            Alias("setr", cutoff="dropped"),
        ),
        formula="rel_ret@k / R (trec_eval recall_k); denominator='capped': "
        "rel_ret@k / min(k, R). 0 when R = 0. relevancy_method='by_threshold' (Microsoft "
        "Recommenders): rel_ret@threshold / R. ir_measures' SetR(rel=2)@5 is set_recall, "
        "the whole retrieved set: the @5 has no effect there nor here.",
        unjudged=False,  # judged_only= changes nothing without @k
    ),
    Metric(
        "f1",
        "harmonic mean of precision@k and recall@k",
        _f1,
        matches={
            "trec_eval (through pytrec_eval)": "set_F: to 1e-9",
            "ir_measures": "SetF, SetF(beta=b): to 1e-9",
            "ranx": "f1@k: to 1e-9",
        },
        latex=(
            r"F@k = \frac{(1 + b)\,\mathrm{P@}k \cdot \mathrm{R@}k}"
            r"{b\,\mathrm{P@}k + \mathrm{R@}k}"
        ),
        params=(
            Param(
                "beta",
                1.0,
                None,
                "weight b of recall against precision as trec_eval's set_F and ir_measures' "
                "SetF(beta=b) use it, not squared: van Rijsbergen's F_beta is b = beta**2",
                check=check_number(
                    "beta",
                    low=0.0,
                    what="a number >= 0, the weight of recall against precision",
                    hint="e.g. f1(beta=0.5)@10 (1: the harmonic mean)",
                ),
            ),
        ),
        aliases=(Alias("f"), Alias("set_f", cutoff="none"), Alias("setf", cutoff="dropped")),
        formula="(1 + b) P R / (b P + R) with P = precision@k, R = recall@k, b = beta "
        "(trec_eval m_set_F.c, not squared; 1: the harmonic mean 2 P R / (P + R)); 0 when "
        "both are 0. Without k: trec_eval set_F, ir_measures SetF(beta=b). scikit-learn's "
        "fbeta_score(beta=x) is beta=x**2 here.",
    ),
    Metric(
        "r_precision",
        "precision at rank R, the number of relevant documents",
        _r_precision,
        matches={
            "trec_eval (through pytrec_eval)": "Rprec: to 1e-9",
            "recommenders": "r_precision_at_k per user (r_precision@k; relevancy_method "
            "'top_k' and 'by_threshold'), to 1e-12; their mean leaves out users without "
            "a hit, this one does not",
        },
        latex=(
            r"\mathrm{Rprec@}k = \frac{1}{R}\sum_{r=1}^{\min(k, R)} \mathbb{1}[\ell_r \ge"
            r" \lambda]"
        ),
        params=(
            Param(
                "denominator",
                "relevant",
                ("relevant", "capped"),
                "with a cutoff k: divide by R (Microsoft Recommenders' r_precision_at_k "
                "code) or by min(k, R) (precision@k once R >= k, as their docstring says)",
                with_cutoff=("capped",),
            ),
            *RELEVANCY,
        ),
        check_params=check_relevancy,
        aliases=(
            Alias("rprec", cutoff="none"),
            Alias("r-precision", cutoff="none"),
            Alias("r-prec", cutoff="none"),
            Alias("rp", cutoff="none"),
        ),
        formula="rel_ret@R / R (trec_eval Rprec); 0 when R = 0. With a cutoff k "
        "(Microsoft Recommenders' r_precision_at_k): rel_ret@min(k, R) / R, the relevant "
        "among the top min(k, R) over R; denominator='capped' divides by min(k, R). "
        "Averaged over every query (user), a user without a hit counting 0; "
        "Recommenders averages over the users with a hit only. "
        "relevancy_method='by_threshold' (Recommenders): rel_ret@min(threshold, R) / R, "
        "their r_precision_at_k with the list cut at `threshold` (k then has no part "
        "in it; denominator='capped' still divides by min(k, R)).",
    ),
    Metric(
        "hit_rate",
        "1 when a relevant document is in the top k, else 0",
        _hit_rate,
        matches={"trec_eval (through pytrec_eval)": "success_k: to 1e-9"},
        latex=r"\mathrm{Hit@}k = \mathbb{1}\left[\exists\, r \le k : \ell_r \ge \lambda\right]",
        aliases=(Alias("success"),),
        formula="1 if rel_ret@k > 0 else 0 (trec_eval success_k, ir_measures Success@k).",
        unjudged=False,  # judged_only= changes nothing without @k
    ),
    Metric(
        "mrr",
        "reciprocal rank of the first relevant document",
        _mrr,
        matches={
            "trec_eval (through pytrec_eval)": "recip_rank: to 1e-9",
            "ranx": "mrr@k: to 1e-9",
            "ir_measures": "RR@k: to 1e-9",
        },
        latex=(
            r"\mathrm{RR@}k = \frac{1}{\min\{r \le k : \ell_r \ge \lambda\}} \quad (0 \text{"
            r" if none})"
        ),
        aliases=(Alias("rr"), Alias("recip_rank", cutoff="none")),
        formula="1 / (rank of the first relevant document within the top k); 0 when there "
        "is none (trec_eval recip_rank, ir_measures RR@k).",
    ),
    Metric(
        "map",
        "average precision over the relevant documents",
        _map,
        matches={
            "trec_eval (through pytrec_eval)": "map, map_cut_k: to 1e-9",
            "ranx": "map@k: to 1e-9",
            "ir_measures": "AP: to 1e-9",
        },
        latex=r"\mathrm{AP@}k = \frac{1}{R}\sum_{r \le k,\ \ell_r \ge \lambda} \mathrm{P@}r",
        check_params=check_relevancy,
        params=(
            Param(
                "denominator",
                "relevant",
                ("relevant", "capped", "retrieved"),
                "divide by R (trec_eval), min(k, R) (Spark, Microsoft Recommenders' map_at_k) "
                "or the relevant documents found in the top k (torchmetrics)",
                with_cutoff=("capped",),
            ),
            *RELEVANCY,
        ),
        aliases=(Alias("ap"), Alias("map_cut", cutoff="required")),
        formula="sum over relevant documents at rank r <= k of precision@r, divided by R "
        "(trec_eval map / map_cut_k; Microsoft Recommenders' map); 0 when the "
        "denominator is 0. denominator='capped' is Recommenders' map_at_k (min(k, R)). "
        "relevancy_method='by_threshold' (Recommenders): the sum over ranks r <= "
        "threshold, the denominator unchanged.",
    ),
    Metric(
        "ndcg",
        "normalised discounted cumulative gain",
        _ndcg,
        matches={
            "trec_eval (through pytrec_eval)": "ndcg, ndcg_cut_k: to 1e-9",
            "ranx": "ndcg@k, ndcg_burges@k (gain='exponential'): to 1e-9",
            "ir_measures": "nDCG@k: to 1e-9",
            "scikit-learn": "ndcg_score(k=k) (ignore_ties=False): ndcg(ties='average', "
            "ideal='retrieved')@k, alias ndcg_score@k, to 1e-9; ignore_ties=True: "
            "ideal='retrieved' on untied scores",
        },
        latex=(
            r"\mathrm{nDCG@}k = \frac{\mathrm{DCG@}k}{\mathrm{IDCG@}k}, \qquad \mathrm{DCG@}k"
            r" = \sum_{r=1}^{k} \frac{g(\ell_r)}{\log_2(r+1)}, \quad g(\ell) = \ell \text{ or"
            r" } 2^{\ell} - 1"
        ),
        check_params=check_relevancy,
        params=(GAIN, IDEAL, TIES, *RELEVANCY),
        aliases=(
            Alias("ndcg_cut", cutoff="required"),
            Alias("ndcg_burges", {"gain": "exponential"}),
            Alias("ndcg_jarvelin"),
            Alias("ndcg_score", {"ties": "average", "ideal": "retrieved"}),
        ),
        binary=False,
        formula="DCG@k / IDCG@k with DCG@k = sum over ranks r <= k of gain(rel_r) / "
        "log2(r + 1); IDCG@k is the DCG@k of the judged documents sorted by gain "
        "(trec_eval ndcg / ndcg_cut_k, Järvelin & Kekäläinen 2002; gain='exponential' is "
        "Burges et al. 2005). 0 when IDCG is 0. relevancy_method='by_threshold' "
        "(Microsoft Recommenders): DCG@threshold / IDCG@k. ties='average': tied scores "
        "share their group's mean gain over the group's positions (scikit-learn "
        "ndcg_score's default); scikit-learn's ideal ranks the candidates it was given, "
        "the retrieved documents (ideal='retrieved'); the alias ndcg_score sets both.",
    ),
    Metric(
        "dcg",
        "discounted cumulative gain",
        _dcg_metric,
        latex=(
            r"\mathrm{DCG@}k = \sum_{r=1}^{k} \frac{g(\ell_r)}{\log_b(r+1)}, \quad g(\ell) ="
            r" \ell \text{ or } 2^{\ell} - 1 \ (\ell > 0)"
        ),
        params=(GAIN, TIES, LOG_BASE),
        aliases=(
            Alias("dcg_burges", {"gain": "exponential"}),
            Alias("dcg_jarvelin"),
            Alias("dcg_score", {"ties": "average"}),
        ),
        matches={
            "ranx": "dcg@k, dcg_burges@k (gain='exponential'): to 1e-9",
            "scikit-learn": "dcg_score(k=k, log_base=b) (ignore_ties=False): "
            "dcg(ties='average', log_base=b)@k, alias dcg_score@k, to 1e-9 on labels >= 0",
        },
        binary=False,
        formula="sum over ranks r <= k of gain(rel_r) / log_b(r + 1), b = log_base, 2 by "
        "default (ranx dcg; dcg_burges is gain='exponential'). ties='average': the "
        "documents of a tie group at positions low..high share the group's mean gain, "
        "each position of the group within the top k discounting it (scikit-learn "
        "dcg_score's default, ignore_ties=False; McSherry & Najork 2008); the alias "
        "dcg_score sets it. Only positive labels gain (scikit-learn adds negative ones).",
    ),
    Metric(
        "idcg",
        "ideal discounted cumulative gain",
        _idcg_metric,
        latex=(
            r"\mathrm{IDCG@}k = \sum_{r=1}^{k} \frac{g(\ell^{*}_r)}{\log_2(r+1)}, \quad"
            r" \ell^{*} = \text{the judged labels, largest first}"
        ),
        params=(GAIN, IDEAL, LOG_BASE),
        aliases=(Alias("ideal_dcg"),),
        binary=False,
        higher_is_better=None,  # of the judgments alone: no system is better at it
        ranking=False,  # neither depth= nor judged_only= changes it
        formula="DCG@k of the ideal ranking: judged documents sorted by gain, descending.",
    ),
    Metric(
        "cg",
        "cumulative gain",
        _cg,
        latex=r"\mathrm{CG@}k = \sum_{r=1}^{k} g(\ell_r)",
        params=(GAIN,),
        binary=False,
        formula="sum of gain(rel) over ranks 1..k.",
        unjudged=False,  # judged_only= changes nothing without @k
    ),
    Metric(
        "bpref",
        "binary preference: relevant documents ranked above judged non-relevant ones",
        _bpref,
        matches={"trec_eval (through pytrec_eval)": "bpref: to 1e-9"},
        latex=(
            r"\mathrm{bpref} = \frac{1}{R}\sum_{d \text{ relevant, retrieved}} \left(1 -"
            r" \frac{\min(n_d, R)}{\min(N, R)}\right)"
        ),
        cutoff="none",
        formula="(1/R) * sum over retrieved relevant d of (1 - min(n_d, R) / min(N, R)), "
        "n_d = judged non-relevant documents ranked above d; unjudged documents are "
        "ignored (Buckley & Voorhees 2004, trec_eval bpref).",
        unjudged=False,  # judged_only= changes nothing without @k
    ),
    Metric(
        "num_q",
        "number of queries evaluated (1 per query, summed)",
        _num_q,
        matches={"ir_measures": "NumQ: exactly"},
        latex=r"\mathrm{num\_q} = |\{\text{queries}\}|",
        cutoff="none",
        aliases=(Alias("numq"),),
        binary=False,
        higher_is_better=None,  # a count of the input, not a quality
        ranking=False,  # neither depth= nor judged_only= changes it
        integer=True,
        aggregate="sum",
        formula="1 for every query evaluated, summed over queries (ir_measures NumQ, "
        "trec_eval num_q).",
    ),
    Metric(
        "num_ret",
        "number of documents retrieved",
        _num_ret,
        matches={"trec_eval (through pytrec_eval)": "num_ret: exactly"},
        latex=r"\mathrm{num\_ret} = |\{\text{retrieved documents}\}|",
        cutoff="none",
        aliases=(Alias("numret", aggregate="sum"),),
        binary=False,
        higher_is_better=None,  # more documents retrieved is neither better nor worse
        integer=True,
        formula="count of retrieved documents (after depth truncation). ir_measures' "
        "NumRet is its sum over queries, num_ret(agg='sum').",
    ),
    Metric(
        "num_rel",
        "number of relevant documents in the judgments",
        _num_rel_count,
        matches={"trec_eval (through pytrec_eval)": "num_rel: exactly"},
        latex=r"R = |\{d : \ell_d \ge \lambda\}|",
        cutoff="none",
        aliases=(Alias("numrel", aggregate="sum"),),
        higher_is_better=None,  # of the judgments alone: no system is better at it
        ranking=False,  # neither depth= nor judged_only= changes it
        integer=True,
        formula="R: judged documents with relevance >= level, retrieved or not.",
    ),
    Metric(
        "num_rel_ret",
        "number of relevant documents retrieved (in the top k)",
        _num_rel_ret,
        matches={"trec_eval (through pytrec_eval)": "num_rel_ret: exactly"},
        latex=r"\mathrm{rel\_ret@}k = \sum_{r=1}^{k} \mathbb{1}[\ell_r \ge \lambda]",
        aliases=(Alias("numrelret", aggregate="sum"), Alias("hits"), Alias("relret")),
        integer=True,
        formula="rel_ret@k (trec_eval num_rel_ret; ranx hits@k).",
        unjudged=False,  # judged_only= changes nothing without @k
    ),
)
