"""Elliot's popularity-bias and novelty metrics over recommendations.

Elliot (sisinflab/elliot) scores a recommender's top ``k`` against the items' popularity
in the training data: ``pop_rsp`` and ``pop_reo`` (Zhu et al. 2021's ranking-based
statistical parity and equal opportunity between the popular short head and the long
tail), ``aclt`` (Abdollahpouri et al.'s average coverage of long-tail items), ``epc``
and ``efd`` (Vargas & Castells' expected popularity complement and expected free
discovery). Here the recommendations are the run (users as queries, items as
documents), the test interactions the judgments (``qrels=``: a judged row with
relevance >= ``relevance_level`` is a relevant test item, Elliot's ``rel_threshold``),
and the training history ``interactions=``, the table Elliot's ``Popularity`` reads.

Elliot's conventions, kept here:

* an item's popularity is the number of distinct users who interacted with it in the
  training data, ``T`` the number of distinct (user, item) training pairs;
* the **short head** is the most popular items, by popularity descending (ties by
  the item id ascending compared as text whatever the id dtype, ``"10"`` before
  ``"9"``, as the library's other tie-breaks compare ids; Elliot's set of small integer
  ids orders them as integers, the same order for ids of as many digits), taken while
  the items before hold less than ``pop_ratio x T`` (Elliot's ``pop_ratio``, 0.8); the
  **long tail** is every other training item; an item the training data lacks is in
  neither;
* the top ``k`` is each user's first ``k`` recommendations (by rank, or score
  descending), as a set; the users are those of the recommendations (for ``pop_reo``,
  ``epc``, ``efd``: those of them with a relevant test item);
* the discount of position ``r`` (1 = top) is ``1 / log2(r + 1)``.

:func:`polars_irmetrics.evaluate` computes them beside the run's other metrics
(:mod:`polars_irmetrics.offline.elliot`); values equal Elliot's formulas to 1e-9
(``tests/test_elliot.py``, fixtures from Elliot's code in
``tests/fixtures/elliot/``).
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from polars_irmetrics.errors import MetricParameterError
from polars_irmetrics.metrics._common import check_number
from polars_irmetrics.metrics.scope import Scope
from polars_irmetrics.metrics.spec import Metric, Param, Params

__all__ = ["ELLIOT", "ELLIOT_METRICS", "POP_RATIO"]

_ELLIOT = "elliot"

#: Elliot's ``pop_ratio``: the share of training interactions the short head holds.
POP_RATIO = Param(
    "pop_ratio",
    0.8,
    doc="share of the training interactions held by the short head (Elliot's "
    "Popularity(pop_ratio=0.8)): the most popular items (ties by the item id ascending "
    "compared as text, whatever the id dtype), taken while those before hold less than "
    "pop_ratio x the distinct (user, item) training pairs",
    check=check_number(
        "pop_ratio",
        low=0.0,
        high=1.0,
        exclusive=True,
        what="a number between 0 and 1 (exclusive), the share of training interactions "
        "held by the short head",
        hint="e.g. pop_ratio=0.8 (Elliot's default)",
    ),
)


def _needs_tables(name: str) -> Callable[[Scope, Params], pl.Expr]:
    def compute(scope: Scope, params: Params) -> pl.Expr:
        raise MetricParameterError(
            f"metric {name!r} reads the recommendations, the test interactions and the "
            "training history: compute it with irm.evaluate(recommendations, metrics, "
            "qrels=test_interactions, interactions=train)"
        )

    return compute


def _metric(
    name: str,
    summary: str,
    *,
    formula: str,
    latex: str,
    matches: str,
    params: tuple[Param, ...] = (),
    higher_is_better: bool = True,
    whole: str | None = None,
    histories: bool = False,
) -> Metric:
    return Metric(
        name,
        summary,
        _needs_tables(name),
        cutoff="required",
        binary=False,
        threshold=True,
        params=params,
        higher_is_better=higher_is_better,
        reads=("run", "judgments", "interactions"),
        formula=formula,
        latex=latex,
        matches={_ELLIOT: matches},
        whole=whole,
        histories=histories,
    )


#: Why PopRSP and PopREO take no agg=: no per-user values (Metric.whole).
_DISPARITY = (
    "it is one value of the whole table: the disparity of the short head's and the long "
    "tail's rates, each a ratio of sums over the users"
)
_HEAD = (
    "SH the short head of pop_ratio (the most popular training items while those before "
    "hold < pop_ratio x T, T the distinct training pairs), LT the other training items"
)

ELLIOT_METRICS: tuple[Metric, ...] = (
    _metric(
        "pop_rsp",
        "Elliot's PopRSP: disparity of the short head's and long tail's recommendation rates",
        params=(POP_RATIO,),
        higher_is_better=False,
        whole=_DISPARITY,
        histories=True,  # each user's training items left out of the denominator
        formula="std(p_SH, p_LT) / mean(p_SH, p_LT) (population std), p_G = sum_u "
        "|top_k(u) & G| / sum_u |G - train(u)| over the users of the recommendations; "
        f"{_HEAD} (Zhu, Wang & Caverlee 2021; Elliot PopRSP)",
        latex=r"\frac{\mathrm{std}(p_{SH}, p_{LT})}{\mathrm{mean}(p_{SH}, p_{LT})}, \quad"
        r" p_G = \frac{\sum_u |L_u \cap G|}{\sum_u |G \setminus I_u^+|}",
        matches="PopRSP (bias/pop_rsp), to 1e-9",
    ),
    _metric(
        "pop_reo",
        "Elliot's PopREO: disparity of the short head's and long tail's true-positive rates",
        params=(POP_RATIO,),
        higher_is_better=False,
        whole=_DISPARITY,
        histories=True,  # each user's training items left out of the denominator
        formula="std(p_SH, p_LT) / mean(p_SH, p_LT), p_G = sum_u |top_k(u) & rel(u) & G| / "
        "sum_u |(G & rel(u)) - train(u)| over the users of the recommendations with a "
        f"relevant test item; {_HEAD} (Zhu, Wang & Caverlee 2021; Elliot PopREO)",
        latex=r"\frac{\mathrm{std}(p_{SH}, p_{LT})}{\mathrm{mean}(p_{SH}, p_{LT})}, \quad"
        r" p_G = \frac{\sum_u |L_u \cap R_u \cap G|}{\sum_u |(G \cap R_u) \setminus I_u^+|}",
        matches="PopREO (bias/pop_reo), to 1e-9",
    ),
    _metric(
        "aclt",
        "Elliot's ACLT: long-tail items among a user's top k, mean over users",
        params=(POP_RATIO,),
        formula=f"mean over the users of the recommendations of |top_k(u) & LT|; {_HEAD} "
        "(Abdollahpouri, Burke & Mobasher 2019; Elliot ACLT)",
        latex=r"\mathrm{ACLT} = \frac{1}{|U|}\sum_u \sum_{i \in L_u} \mathbb{1}(i \in LT)",
        matches="ACLT (bias/aclt), to 1e-9",
    ),
    _metric(
        "epc",
        "Elliot's EPC: expected popularity complement of the relevant items of the top k",
        formula="mean over users with a relevant test item of sum_{r<=k} disc(r) rel(i_r) "
        "(1 - n_i / |U_train|) / sum_{r<=k} disc(r), disc(r) = 1 / log2(r + 1), n_i the "
        "training users of item i, |U_train| the training users; 1 - n_i / |U_train| is "
        "1 for an item the training data lacks (Vargas & Castells 2011; Elliot EPC)",
        latex=r"\mathrm{EPC} = \operatorname{mean}_u \frac{\sum_{r \le k} \mathrm{disc}(r)\,"
        r" \mathrm{rel}(i_r) (1 - n_{i_r} / |U|)}{\sum_{r \le k} \mathrm{disc}(r)}",
        matches="EPC (novelty/EPC), to 1e-9",
    ),
    _metric(
        "efd",
        "Elliot's EFD: expected free discovery (self-information) of the relevant top k",
        formula="mean over users with a relevant test item of sum_{r<=k} disc(r) rel(i_r) "
        "(-log2(n_i / T)) / sum_{r<=k} disc(r), disc(r) = 1 / log2(r + 1), n_i the "
        "training users of item i, T the distinct training pairs; an item the training "
        "data lacks counts -log2(min_i n_i / T) (Vargas & Castells 2011; Elliot EFD)",
        latex=r"\mathrm{EFD} = \operatorname{mean}_u \frac{\sum_{r \le k} \mathrm{disc}(r)\,"
        r" \mathrm{rel}(i_r) (-\log_2 (n_{i_r} / T))}{\sum_{r \le k} \mathrm{disc}(r)}",
        matches="EFD (novelty/EFD), to 1e-9",
    ),
)

#: The names :func:`polars_irmetrics.evaluate` computes with Elliot's plan.
ELLIOT: frozenset[str] = frozenset(m.name for m in ELLIOT_METRICS)
