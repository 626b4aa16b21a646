"""Preference and judgment-group measures: metrics that read another judgment table.

trec_eval's ``-R prefs`` measures (``prefs_simp``, ``prefs_pair``, ``prefs_avgjg``, ...)
read preference judgments (``reads=("run", "prefs")``: rows ``query_id jg jsg doc_id
rel_level``, :func:`polars_irmetrics.io.prefs.read_trec_prefs`), and its ``-R qrels_jg``
measures (``map_avgjg``, ``P_avgjg_k``, ``Rprec_mult_avgjg_x``) read qrels with a
judgment-group column (``reads=("run", "judgment_groups")``,
:func:`polars_irmetrics.io.prefs.read_trec_qrels_jg`). They are declared here once, with
their formulas, so the registry parses them and the catalogue documents them; they are
computed by :func:`polars_irmetrics.evaluate_prefs` (:mod:`.prefs`, every preference
measure of every query at once) and :func:`polars_irmetrics.evaluate_jg` (:mod:`.jg`,
any metric averaged over judgment groups). ``compute`` only raises an error naming that
entry point: :func:`polars_irmetrics.evaluate` and the expression API have neither
table.

In the formulas, ``F_x``/``P_x`` are the fulfilled/possible preferences of case ``x``
(*ret*: both documents retrieved; *imp*: exactly one; *notoccur*: neither), summed over
a query's judgment groups, ``G`` the number of groups (see :mod:`.prefs`).
"""

from __future__ import annotations

import polars as pl

from polars_irmetrics.errors import MetricParameterError
from polars_irmetrics.metrics._common import check_real
from polars_irmetrics.metrics.scope import Scope
from polars_irmetrics.metrics.spec import Alias, Input, Metric, Param, Params

__all__ = ["PREFERENCE_METRICS"]

_PREFS: tuple[Input, ...] = ("run", "prefs")
_JG: tuple[Input, ...] = ("run", "judgment_groups")


def _prefs(s: Scope, p: Params) -> pl.Expr:
    raise MetricParameterError(
        "preference measures read preference judgments (query_id, jg, jsg, doc_id, "
        "rel_level), not a judged table; compute them with "
        "irm.evaluate(run, metrics, prefs=irm.read_trec_prefs(path))"
    )


def _jg(s: Scope, p: Params) -> pl.Expr:
    raise MetricParameterError(
        "judgment-group measures average over the judgment groups of qrels with a jg "
        "column, not one judged table; compute them with "
        "irm.evaluate(run, metrics, qrels_jg=irm.read_trec_qrels_jg(path))"
    )


def _matches(name: str) -> dict[str, str]:
    return {"trec_eval": f"{name}: byte-identical output (tests/test_trec_eval_versions.py)"}


_FUL = r"F_{\mathrm{ret}} + F_{\mathrm{imp}}"
_POSS = r"P_{\mathrm{ret}} + P_{\mathrm{imp}} + P_{\mathrm{notoccur}}"


def _avg(inner: str) -> str:
    return r"\frac{1}{G}\sum_{g=1}^{G} " + inner


def _pref(
    name: str,
    summary: str,
    formula: str,
    latex: str,
    *,
    integer: bool = False,
    higher_is_better: bool | None = True,
    ranking: bool = True,
) -> Metric:
    return Metric(
        name.lower(),
        summary,
        _prefs,
        cutoff="none",
        binary=False,
        integer=integer,
        higher_is_better=higher_is_better,
        ranking=ranking,
        reads=_PREFS,
        matches=_matches(name),
        formula=formula,
        latex=latex,
    )


_PAIR = (
    r"\frac{1}{|D|}\sum_{\{x, y\} \in D} \frac{|\{g : g \text{ prefers the one ranked"
    r" higher}\}|}{|\{g : g \text{ orders } x, y\}|}"
)
_RNONREL = (
    r"\frac{F^g_{\mathrm{ret}} + F^g_{\mathrm{imp}} + R^g_{\mathrm{ret}}(R^g - N^g)}"
    r"{P^g + R^g (R^g - N^g)}"
)

PREFERENCE_METRICS: tuple[Metric, ...] = (
    _pref(
        "prefs_num_prefs_poss",
        "number of preferences of the query's judgment groups",
        "poss_ret + poss_imp + poss_notoccur: every preference a > b of the query's "
        "groups (trec_eval's summary sums it over queries).",
        _POSS,
        integer=True,
        higher_is_better=None,  # of the judgments alone: no system is better at it
        ranking=False,  # depth= changes none of the groups' preferences
    ),
    _pref(
        "prefs_num_prefs_ful",
        "number of preferences the ranking fulfils",
        "ful_ret + ful_imp: preferences a > b with a ranked above b, or a retrieved and b "
        "not (trec_eval's summary sums it over queries).",
        _FUL,
        integer=True,
    ),
    _pref(
        "prefs_num_prefs_ful_ret",
        "number of preferences between retrieved documents the ranking fulfils",
        "ful_ret: preferences a > b between two retrieved documents with a ranked above b "
        "(trec_eval's summary sums it over queries).",
        r"F_{\mathrm{ret}}",
        integer=True,
    ),
    _pref(
        "prefs_simp",
        "share of the query's preferences the ranking fulfils",
        "(ful_ret + ful_imp) / (poss_ret + poss_imp + poss_notoccur), 0 when no "
        "preference is possible (trec_eval m_prefs_simp.c).",
        rf"\frac{{{_FUL}}}{{{_POSS}}}",
    ),
    _pref(
        "prefs_pair",
        "per pair of ordered documents, the share of groups the ranking agrees with",
        "for each pair {x, y} that some group orders, with x ranked above y (or retrieved "
        "while y is not), the fraction of the groups ordering them that prefer x; averaged "
        "over the pairs, a pair neither retrieved counting 0 (trec_eval m_prefs_pair.c).",
        _PAIR,
    ),
    _pref(
        "prefs_avgjg",
        "prefs_simp per judgment group, averaged over the groups",
        "(ful_ret + ful_imp) / (poss_ret + poss_imp + poss_notoccur) per group (0 for a "
        "group with no possible preference), averaged over the query's G groups "
        "(trec_eval m_prefs_avgjg.c).",
        _avg(
            r"\frac{F^g_{\mathrm{ret}} + F^g_{\mathrm{imp}}}{P^g_{\mathrm{ret}} +"
            r" P^g_{\mathrm{imp}} + P^g_{\mathrm{notoccur}}}"
        ),
    ),
    _pref(
        "prefs_avgjg_Rnonrel",
        "prefs_avgjg with as many non-relevant documents as relevant ones",
        "per group with R relevant and N non-relevant documents: if R >= N, (ful_ret + "
        "ful_imp + R_ret * (R - N)) / (poss + R * (R - N)); if R < N, the preferences "
        "recounted with only the first R non-relevant documents; averaged over the groups "
        "(trec_eval m_prefs_avgjg_Rnonrel.c).",
        _avg(_RNONREL),
    ),
    _pref(
        "prefs_simp_ret",
        "share of the preferences between retrieved documents the ranking fulfils",
        "ful_ret / poss_ret, 0 when poss_ret = 0 (trec_eval m_prefs_simp_ret.c).",
        r"\frac{F_{\mathrm{ret}}}{P_{\mathrm{ret}}}",
    ),
    _pref(
        "prefs_pair_ret",
        "prefs_pair over pairs of retrieved documents only",
        "prefs_pair with only the pairs of two retrieved documents (trec_eval "
        "m_prefs_pair_ret.c).",
        _PAIR + r"\quad (x, y \text{ retrieved})",
    ),
    _pref(
        "prefs_avgjg_ret",
        "prefs_simp_ret per judgment group, averaged over the groups",
        "ful_ret / poss_ret per group (0 when poss_ret = 0), averaged over the query's G "
        "groups (trec_eval m_prefs_avgjg_ret.c).",
        _avg(r"\frac{F^g_{\mathrm{ret}}}{P^g_{\mathrm{ret}}}"),
    ),
    _pref(
        "prefs_avgjg_Rnonrel_ret",
        "prefs_avgjg_Rnonrel over retrieved documents only",
        "prefs_avgjg_Rnonrel with R and N the retrieved relevant and non-relevant "
        "documents of each group (trec_eval m_prefs_avgjg_Rnonrel_ret.c).",
        _avg(_RNONREL) + r"\quad (R, N \text{ retrieved})",
    ),
    _pref(
        "prefs_simp_imp",
        "share of the preferences with a retrieved document the ranking fulfils",
        "(ful_ret + ful_imp) / (poss_ret + poss_imp), 0 when the denominator is 0 "
        "(trec_eval m_prefs_simp_imp.c).",
        rf"\frac{{{_FUL}}}{{P_{{\mathrm{{ret}}}} + P_{{\mathrm{{imp}}}}}}",
    ),
    _pref(
        "prefs_pair_imp",
        "prefs_pair over pairs with at least one retrieved document",
        "prefs_pair with only the pairs where at least one document is retrieved "
        "(trec_eval m_prefs_pair_imp.c).",
        _PAIR + r"\quad (x \text{ or } y \text{ retrieved})",
    ),
    _pref(
        "prefs_avgjg_imp",
        "prefs_simp_imp per judgment group, averaged over the groups",
        "(ful_ret + ful_imp) / (poss_ret + poss_imp) per group (0 when the denominator is "
        "0), averaged over the query's G groups (trec_eval m_prefs_avgjg_imp.c).",
        _avg(
            r"\frac{F^g_{\mathrm{ret}} + F^g_{\mathrm{imp}}}{P^g_{\mathrm{ret}} +"
            r" P^g_{\mathrm{imp}}}"
        ),
    ),
    Metric(
        "map_avgjg",
        "average precision against each judgment group, averaged over the groups",
        _jg,
        cutoff="none",
        reads=_JG,
        matches=_matches("map_avgjg"),
        formula="(1/G) * sum over the query's G judgment groups of AP against that group's "
        "judgments alone (trec_eval -R qrels_jg, m_map_avgjg.c).",
        latex=_avg(r"\mathrm{AP}_g"),
    ),
    Metric(
        "precision_avgjg",
        "precision at k against each judgment group, averaged over the groups",
        _jg,
        aliases=(Alias("p_avgjg"),),
        reads=_JG,
        matches=_matches("P_avgjg_k"),
        formula="(1/G) * sum over the query's G judgment groups of P@k against that "
        "group's judgments (a document the group did not judge is not relevant to it; "
        "trec_eval -R qrels_jg, m_P_avgjg.c).",
        latex=_avg(r"\mathrm{P@}k_g"),
    ),
    Metric(
        "rprec_mult_avgjg",
        "precision at a multiple of R against each judgment group, averaged over the groups",
        _jg,
        cutoff="none",
        params=(
            Param(
                "multiple",
                None,
                doc="the multiple m of R, e.g. 0.2",
                check=check_real(
                    "rprec_mult_avgjg", "multiple", "Rprec_mult_avgjg", multiple=True
                ),
            ),
        ),
        reads=_JG,
        matches=_matches("Rprec_mult_avgjg_m"),
        formula="(1/G) * sum over the query's G judgment groups of rprec_mult(multiple=m) "
        "against that group, R the group's number of relevant documents (trec_eval -R "
        "qrels_jg, m_Rprec_mult_avgjg.c). Spelled rprec_mult_avgjg(multiple=0.2), "
        "rprec_mult_avgjg@0.2 or Rprec_mult_avgjg_0.20.",
        latex=_avg(
            r"\frac{\mathrm{rel\_ret}_g\mathrm{@}c_g}{c_g}, \quad c_g = \lfloor m R_g + 0.9"
            r" \rfloor"
        ),
    ),
)
