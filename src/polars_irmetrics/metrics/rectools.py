"""RecTools' classification metrics over recommendations: F-beta, accuracy, MCC.

RecTools (MTS) scores each test user's top ``k`` recommendations as a classification of
the catalogue: ``tp`` the user's test interactions (judged relevant rows here) among
the top ``k``, ``fp = k - tp`` (``k`` even when the list is shorter), ``fn = liked - tp``
with ``liked`` the user's test interactions, and, for the metrics that need the
catalogue, ``tn = n - k - fn`` with ``n`` its size. Values equal RecTools' ``F1Beta``,
``Accuracy`` and ``MCC`` (``tests/test_rectools_parity.py``, from fixtures RecTools
wrote in a side environment: ``tests/fixtures/rectools/``).

``f1_beta`` is a formula over one query's judged rows like any other. ``reco_accuracy``
(RecTools' ``Accuracy``; ``accuracy`` is ir_measures' name for another quantity) and
``mcc`` also read the catalogue, the distinct items of ``interactions=`` (the training
history, as elsewhere in this library): :func:`polars_irmetrics.evaluate` computes
each user's ``tp`` and ``liked`` with the run's other per-query metrics, then the
formula of :data:`CATALOGUE_FORMULAS` with ``n`` beside them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import polars as pl

from polars_irmetrics.errors import MetricParameterError
from polars_irmetrics.metrics._common import (
    check_number,
    divide,
    fsum,
    list_positions,
    num_rel,
    rel_ret,
    relevant,
)
from polars_irmetrics.metrics.collection import CollectionFormula, CollectionScope
from polars_irmetrics.metrics.scope import Scope
from polars_irmetrics.metrics.spec import Metric, Param, Params

__all__ = ["CATALOGUE_FORMULAS", "COVERED_USERS", "RECTOOLS_METRICS", "SERENDIPITY", "kotkov_gain"]

#: RecTools' ``CoveredUsers``: computed by :func:`polars_irmetrics.evaluate` from the
#: run's ranks (an unjudged document covers a user too; the judged rows do not show it).
COVERED_USERS = "covered_users"

_RECTOOLS = "rectools"

#: ``serendipity``: its ``kind='kotkov'`` (RecTools' Serendipity) is computed by
#: :func:`polars_irmetrics.evaluate` beside the per-query plan, from the run's ranks,
#: the judgments and the popularity ranks of the interactions (declared in
#: :mod:`polars_irmetrics.metrics.recsys` with the default kind).
SERENDIPITY = "serendipity"


def kotkov_gain(rank: pl.Expr, popularity_rank: pl.Expr, n: pl.Expr) -> pl.Expr:
    """RecTools' ``Serendipity`` of one relevant recommended row: ``max(p - pu, 0)``,
    ``p = (n + 1 - rank) / n`` the chance to recommend it at its rank to this user,
    ``pu = (n + 1 - popularity_rank) / n`` to any user (0 for an item the
    interactions lack, a null ``popularity_rank``), ``n`` the catalogue size.

    Examples
    --------
    RecTools' docstring: catalogue of 4, the item second most popular, ranked first:

    >>> import polars as pl
    >>> pl.select(kotkov_gain(pl.lit(1.0), pl.lit(2.0), pl.lit(4.0))).item()
    0.25

    A cold item (no popularity rank) keeps all of its rank's chance:

    >>> pl.select(kotkov_gain(pl.lit(1.0), pl.lit(None, pl.Float64), pl.lit(4.0))).item()
    1.0
    """
    # divide: n is one value for every row (a literal or the catalogue's size joined
    # on), which polars would divide by as a product with its reciprocal, a unit in
    # the last place off on some values and engines
    p = divide(n + 1.0 - rank, n)
    pu = divide(n + 1.0 - popularity_rank, n).fill_null(0.0)
    return (p - pu).clip(lower_bound=0.0)


def _k(p: Params, metric: str) -> float:
    if p.k is None:  # pragma: no cover - the parser requires the cutoff
        raise MetricParameterError(f"metric {metric!r} needs a cutoff, e.g. '{metric}@10'")
    return float(p.k)


def _beta(p: Params) -> float:
    value = p.options["beta"]
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    raise MetricParameterError(
        f"metric 'f1_beta': beta must be a number >= 0, the weight of recall (RecTools' "
        f"F1Beta(beta=...); squared in the formula), got {value!r}"
    )


def _f1_beta(s: Scope, p: Params) -> pl.Expr:
    b2 = _beta(p) ** 2
    tp = rel_ret(s, p, p.k)
    precision = divide(tp, _k(p, "f1_beta"))
    recall = pl.when(num_rel(s, p) > 0).then(tp / num_rel(s, p)).otherwise(0.0)
    den = b2 * precision + recall
    return pl.when(den > 0).then((1.0 + b2) * precision * recall / den).otherwise(0.0)


def _auc_at(s: Scope, p: Params, metric: str, *, pap: bool) -> pl.Expr:
    """RecTools' pAUC@k and pAp@k: over the retrieved relevant rows with fewer than k
    non-relevant documents ranked above them (and, for pAp, among the first k relevant),
    the sum of k - (those non-relevant above), over k times n_+ (pAp: min(n_+, k))."""
    k = _k(p, metric)
    is_rel = relevant(s, p)
    found = s.ranked_count(is_rel).cast(pl.Float64)
    negatives_above = s.rank.cast(pl.Float64) - found  # positions above, not relevant
    kept = is_rel & s.rank.is_not_null() & (negatives_above < k)
    if pap:
        kept = kept & (found <= k)
    # the sum of k - negatives_above, as count * k - the sum of negatives_above: equal
    # (integers, exact) where k is small, and no term of k itself, which evaluate's
    # exact sums could not hold from k = 2**32 on (refused as a label too large)
    total = kept.sum().cast(pl.Float64) * k - fsum(s, negatives_above, kept)
    positives = num_rel(s, p)
    den = (pl.min_horizontal(positives, pl.lit(k)) if pap else positives) * k
    value = pl.when(den > 0).then(total / den).otherwise(0.0)
    if p.choice("insufficient_handling") == "ignore":
        return value
    # RecTools' insufficient user: a relevant document the list lacks, and fewer than k
    # non-relevant (or unjudged) positions up to the list's last rank (a skipped rank
    # counts as one, as evaluate's plan reads it); 'exclude' leaves the user out
    retrieved_relevant = rel_ret(s, p, None)
    listed_negatives = list_positions(s) - retrieved_relevant
    insufficient = (positives > retrieved_relevant) & (listed_negatives < k)
    return pl.when(~insufficient).then(value)


#: RecTools' ``insufficient_handling`` of pAUC and pAp ('raise' is not offered).
INSUFFICIENT = Param(
    "insufficient_handling",
    "ignore",
    ("ignore", "exclude"),
    "a user with a relevant document the list lacks and fewer than k non-relevant "
    "listed: scored as the list is ('ignore', RecTools' default) or left out of the "
    "mean (null per user, 'exclude')",
)


def _partial_auc(s: Scope, p: Params) -> pl.Expr:
    return _auc_at(s, p, "partial_auc", pap=False)


def _pap(s: Scope, p: Params) -> pl.Expr:
    return _auc_at(s, p, "pap", pap=True)


def _needs_catalogue(name: str) -> Callable[[Scope, Params], pl.Expr]:
    def compute(scope: Scope, params: Params) -> pl.Expr:
        raise MetricParameterError(
            f"metric {name!r} reads the catalogue (the distinct items of the training "
            "interactions): compute it with irm.evaluate(recommendations, metrics, "
            "qrels=test_interactions, interactions=train)"
        )

    return compute


def _confusion(
    tp: pl.Expr, liked: pl.Expr, k: int, n: pl.Expr
) -> tuple[pl.Expr, pl.Expr, pl.Expr, pl.Expr]:
    """RecTools' ``calc_confusions``: tp, fp = k - tp, fn = liked - tp, tn = n - k - fn."""
    fn = liked - tp
    return tp, k - tp, fn, n - k - fn


def _accuracy(tp: pl.Expr, liked: pl.Expr, k: int, n: pl.Expr) -> pl.Expr:
    tp, _, _, tn = _confusion(tp, liked, k, n)
    return divide(tp + tn, n)  # n: the catalogue's size on every row (divide's note)


def _mcc(tp: pl.Expr, liked: pl.Expr, k: int, n: pl.Expr) -> pl.Expr:
    tp, fp, fn, tn = _confusion(tp, liked, k, n)
    den = ((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)).sqrt()
    # RecTools: 0 where the denominator is 0 (the numerator is then 0 too)
    return pl.when(den != 0.0).then((tp * tn - fp * fn) / den).otherwise(0.0)


#: The catalogue metrics' formulas: ``f(tp, liked, k, n)`` per user, ``tp`` and ``liked``
#: float columns of the per-query table and ``n`` the catalogue size.
CATALOGUE_FORMULAS: Mapping[str, Callable[[pl.Expr, pl.Expr, int, pl.Expr], pl.Expr]] = {
    "reco_accuracy": _accuracy,
    "mcc": _mcc,
}


_DEEP_MEANS = {
    "sufficient_reco": "the share of the k positions filled, instead of whether all are",
    "unrepeated_reco": "the share of distinct items among the top k, instead of whether "
    "all are distinct",
}


def _deep(p: Params, metric: str = "sufficient_reco") -> bool:
    text = str(p.options["deep"]).lower()
    if text not in ("true", "false", "1", "0"):
        raise MetricParameterError(
            f"metric {metric!r}: deep must be True or False (RecTools' deep: "
            f"{_DEEP_MEANS[metric]}), got {p.options['deep']!r}"
        )
    return text in ("true", "1")


def _sufficient_reco(s: CollectionScope, p: Params) -> CollectionFormula:
    k = _k(p, "sufficient_reco")
    filled = s.top(p.k).sum().cast(pl.Float64)
    value = divide(filled, k).clip(upper_bound=1.0) if _deep(p) else (filled >= k).cast(pl.Float64)
    return CollectionFormula("users", value)


def _unrepeated_reco(s: CollectionScope, p: Params) -> CollectionFormula:
    kept = s.top(p.k)
    listed = kept.sum().cast(pl.Float64)
    distinct = s.item.filter(kept).n_unique().cast(pl.Float64)
    share = distinct / listed if _deep(p, "unrepeated_reco") else (distinct == listed)
    # a user with no row within k: none (RecTools groups the rows within k only)
    return CollectionFormula("users", pl.when(listed > 0).then(share.cast(pl.Float64)))


def _needs_run(name: str) -> Callable[[Scope, Params], pl.Expr]:
    def compute(scope: Scope, params: Params) -> pl.Expr:
        raise MetricParameterError(
            f"metric {name!r} reads the run's ranks of unjudged documents too: compute it "
            "with irm.evaluate(recommendations, metrics, qrels=test_interactions)"
        )

    return compute


def _collection_only(name: str) -> Callable[[Scope, Params], pl.Expr]:
    def compute(scope: Scope, params: Params) -> pl.Expr:
        raise MetricParameterError(
            f"metric {name!r} describes a whole recommendation table, not one query: "
            "compute it with irm.beyond_accuracy(recommendations, ...) or irm.evaluate"
        )

    return compute


_CONFUSION = (
    "per test user (a query of the judgments): tp = relevant in the top k, "
    "fp = k - tp (k even for a shorter list), fn = liked - tp with liked the user's "
    "relevant judged rows, tn = n - k - fn with n the catalogue, the distinct items of "
    "interactions= (RecTools' calc_confusions with catalog = the training items). A "
    "user whose tn would be below 0 (a catalogue of fewer items than its k plus its "
    "unrecommended relevant items) is refused: RecTools computes it, giving an accuracy "
    "below 0 and an MCC below -1 (-3.16 on a catalogue of 6 items at k = 5)"
)

RECTOOLS_METRICS: tuple[Metric, ...] = (
    Metric(
        "f1_beta",
        "RecTools' F-beta of precision@k and recall@k, beta squared",
        _f1_beta,
        cutoff="required",
        params=(
            Param(
                "beta",
                1.0,
                None,
                "weight of recall, squared in the formula (RecTools)",
                # finite squared too: beta=inf gave NaN, 1e200 Python's OverflowError
                check=check_number(
                    "beta",
                    low=0.0,
                    high=1e150,
                    what="a number from 0 to 1e150, the weight of recall (RecTools' "
                    "F1Beta(beta=...); squared in the formula)",
                    hint="e.g. f1_beta(beta=2)@10 (1: the harmonic mean)",
                ),
            ),
        ),
        formula="(1 + beta^2) P R / (beta^2 P + R), P = tp / k, R = tp / liked; 0 when "
        "P = R = 0 (RecTools F1Beta). The same as f1(beta=beta**2)@k, which weighs "
        "recall by b unsquared as trec_eval does.",
        latex=r"F_\beta@k = \frac{(1 + \beta^2)\, P@k \cdot R@k}{\beta^2 P@k + R@k}",
        matches={_RECTOOLS: "F1Beta(k, beta), per user and mean, to 1e-9"},
    ),
    Metric(
        "reco_accuracy",
        "RecTools' accuracy: catalogue items the top k classifies correctly, per user",
        _needs_catalogue("reco_accuracy"),
        cutoff="required",
        reads=("run", "judgments", "interactions"),
        formula=f"(tp + tn) / n, {_CONFUSION}. Named reco_accuracy, not accuracy: "
        "'accuracy' is ir_measures' Accuracy (a pairwise ordering probability, refused "
        "by name, its nearest here fcp), and names are case-insensitive.",
        latex=r"\mathrm{Acc}@k = \frac{tp + tn}{n}",
        matches={_RECTOOLS: "Accuracy(k), per user and mean, to 1e-9 (where tn >= 0)"},
    ),
    Metric(
        "mcc",
        "RecTools' Matthews correlation of the top k with the user's test items",
        _needs_catalogue("mcc"),
        cutoff="required",
        reads=("run", "judgments", "interactions"),
        formula="(tp tn - fp fn) / sqrt((tp + fp)(tp + fn)(tn + fp)(tn + fn)), 0 where "
        f"the denominator is 0; {_CONFUSION}",
        latex=(
            r"\mathrm{MCC}@k = \frac{tp \cdot tn - fp \cdot fn}"
            r"{\sqrt{(tp + fp)(tp + fn)(tn + fp)(tn + fn)}}"
        ),
        matches={_RECTOOLS: "MCC(k), per user and mean, to 1e-9 (where tn >= 0)"},
    ),
    Metric(
        "partial_auc",
        "RecTools' pAUC@k: ROC AUC of all relevant against the top k non-relevant",
        _partial_auc,
        cutoff="required",
        params=(INSUFFICIENT,),
        formula="sum over retrieved relevant d with m_d < k of (k - m_d) / (k n_+), m_d "
        "the non-relevant (or unjudged) positions ranked above d, n_+ the relevant judged "
        "documents; 0 when n_+ = 0 (RecTools PartialAUC; insufficient_handling='ignore': "
        "a relevant document the list lacks ranks below every negative; 'exclude': a user "
        "with such a document and fewer than k non-relevant listed is left out)",
        latex=r"\mathrm{pAUC}@k = \frac{1}{k n_+}\sum_{d^+ : m_d < k} (k - m_d)",
        matches={_RECTOOLS: "PartialAUC(k), per user and mean, to 1e-9"},
    ),
    Metric(
        "pap",
        "RecTools' pAp@k: AUC of the top min(k, n_+) relevant against the top k non-relevant",
        _pap,
        cutoff="required",
        params=(INSUFFICIENT,),
        formula="sum over the first min(k, n_+) retrieved relevant d with m_d < k of "
        "(k - m_d) / (k min(n_+, k)); like precision@k when n_+ >= k and pAUC below "
        "(Hiranandani et al. 2020; RecTools PAP, insufficient_handling 'ignore' or "
        "'exclude' as partial_auc)",
        latex=r"\mathrm{pAp}@k = \frac{1}{k \min(n_+, k)}\sum_{d^+ \le k\text{-th}: m_d < k}"
        r" (k - m_d)",
        matches={_RECTOOLS: "PAP(k), per user and mean, to 1e-9"},
    ),
    Metric(
        COVERED_USERS,
        "RecTools' data quality: share of test users with a recommendation in the top k",
        _needs_run("covered_users"),
        cutoff="required",
        binary=False,
        # the whole run's ranks, unjudged documents too: its best one outlives any depth=
        ranking=False,
        formula="mean over the test users (the queries of the judgments) of 1 when the "
        "run ranks any document of the user at rank <= k (by score: any document), "
        "else 0 (RecTools CoveredUsers)",
        latex=r"\operatorname{mean}_{u \in \text{test}} \mathbb{1}[\min_d r_{u,d} \le k]",
        matches={_RECTOOLS: "CoveredUsers(k), per user and mean, to 1e-9"},
    ),
    Metric(
        "sufficient_reco",
        "RecTools' data quality: share of users whose list fills the k positions",
        _collection_only("sufficient_reco"),
        cutoff="required",
        binary=False,
        params=(
            Param(
                "deep",
                False,
                None,
                "True: each user's share of the k positions filled, min(n / k, 1) "
                "(RecTools' deep=True); False: 1 when all k are",
            ),
        ),
        reads=("run",),
        formula="mean over the users of the recommendations of [n_u >= k], n_u the "
        "user's rows ranked <= k; deep=True: mean of min(n_u / k, 1) (RecTools "
        "SufficientReco, deep=False and True)",
        latex=r"\operatorname{mean}_u \mathbb{1}[n_u \ge k]",
        matches={_RECTOOLS: "SufficientReco(k, deep), mean, to 1e-9"},
        collection=_sufficient_reco,
    ),
    Metric(
        "unrepeated_reco",
        "RecTools' data quality: share of users whose top k lists no item twice",
        _collection_only("unrepeated_reco"),
        cutoff="required",
        binary=False,
        params=(
            Param(
                "deep",
                False,
                None,
                "True: each user's share of distinct items among the rows ranked <= k "
                "(RecTools' deep=True); False: 1 when every item is distinct",
            ),
        ),
        reads=("run",),
        formula="mean over the users with a row ranked <= k of [d_u = n_u], n_u those "
        "rows and d_u their distinct items; deep=True: mean of d_u / n_u (RecTools "
        "UnrepeatedReco). The recommendations' duplicate check refuses an item listed "
        "twice for a user: pass check_duplicates=False to measure them",
        latex=r"\operatorname{mean}_u \mathbb{1}[d_u = n_u]",
        matches={_RECTOOLS: "UnrepeatedReco(k, deep), per user and mean, to 1e-9"},
        collection=_unrepeated_reco,
    ),
)
