"""Beyond-accuracy metrics of recommendations: coverage, novelty, diversity, serendipity,
popularity bias.

They describe a whole recommendation table (or one ``by`` group of it), not one query,
so each is declared with a ``collection`` formula (:mod:`.collection`) and computed by
:func:`polars_irmetrics.beyond_accuracy` (or by :func:`polars_irmetrics.evaluate` given
the tables they read). ``@k`` keeps each user's top ``k`` recommendations (by ``rank``,
or ``score`` descending); without it, every row counts.

Definitions follow Microsoft Recommenders' ``python_evaluation`` (values equal theirs
to 1e-12, ``tests/test_recsys.py`` and ``tests/test_recommenders_parity.py``), with item
similarity from item feature vectors (their ``item_sim_measure='item_feature_vector'``,
the default here) or from co-occurrence in the interactions (their default,
``item_sim_measure='item_cooccurrence_count'``, a parameter of diversity and
serendipity): the interactions table is their ``train_df``, the catalogue is the
distinct items of the interactions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import polars as pl

from polars_irmetrics.errors import MetricParameterError
from polars_irmetrics.metrics._common import check_number, divide
from polars_irmetrics.metrics.collection import (
    COOCCURRENCE,
    FEATURES,
    CollectionFormula,
    CollectionScope,
    SimMeasure,
)
from polars_irmetrics.metrics.scope import Scope, exact_mean, fixed_sum, fixed_weighted_mean
from polars_irmetrics.metrics.spec import Alias, Input, Metric, Param, Params, ParamValue, Route

__all__ = ["RECSYS_METRICS", "collection_only"]

#: Share of interactions held by the popularity head (Abdollahpouri et al.'s 20 %).
HEAD_SHARE = 0.2


def collection_only(name: str) -> Callable[[Scope, Params], pl.Expr]:
    def compute(scope: Scope, params: Params) -> pl.Expr:
        if params.options.get("kind") == "kotkov":  # serendipity: RecTools' Serendipity
            raise MetricParameterError(
                f"metric {name!r} (kind='kotkov') reads the run's ranks, the judgments and "
                "the interactions' popularity: compute it with irm.evaluate(recommendations, "
                "metrics, qrels=test_interactions, interactions=train)"
            )
        raise MetricParameterError(
            f"metric {name!r} describes a whole recommendation table, not one query: "
            "compute it with irm.beyond_accuracy(recommendations, ...) or "
            "irm.evaluate(..., interactions=..., item_features=...)"
        )

    return compute


# --------------------------------------------------------------------------- formulas
def _catalog_coverage(s: CollectionScope, p: Params) -> CollectionFormula:
    distinct = s.item.filter(s.top(p.k)).n_unique().cast(pl.Float64)
    catalog = s.catalog_size.cast(pl.Float64)
    counted = (s.count(p.k) > 0).sum().cast(pl.Float64)  # the items recommended
    # divide: the catalogue's size is one value for every group (metrics._common)
    return CollectionFormula("rows", divide(distinct, catalog), counted=divide(counted, catalog))


def _counts(s: CollectionScope, p: Params) -> pl.Expr:
    """How many times each distinct item is recommended (within the cutoff)."""
    return s.item.filter(s.top(p.k)).unique_counts().cast(pl.Float64)


def _counted(s: CollectionScope, p: Params) -> pl.Expr:
    """:func:`_counts` from the merged item counts (one row per item)."""
    count = s.count(p.k)
    return count.filter(count > 0).cast(pl.Float64)


def _entropy(counts: pl.Expr) -> pl.Expr:
    share = divide(counts, counts.sum())  # a sum of whole numbers: exact in any order
    # each term in [-0.531, 0]: a fixed-point sum, the same bits in any row order
    return 0.0 - fixed_sum(share * share.log(2))  # 0.0, not -0.0


def _distributional_coverage(s: CollectionScope, p: Params) -> CollectionFormula:
    return CollectionFormula("rows", _entropy(_counts(s, p)), counted=_entropy(_counted(s, p)))


def _gini(counts: pl.Expr, n: pl.Expr) -> pl.Expr:
    # The m recommended items, by count ascending, hold places n - m + 1 .. n of the
    # n catalogue items; the n - m items never recommended (share 0) add nothing. The
    # terms are whole numbers: their sums are exact in any order.
    counts = counts.sort()
    place = counts.cum_count().cast(pl.Float64) + n - counts.len().cast(pl.Float64)
    weighted = ((2.0 * place - n - 1.0) * counts).sum() / counts.sum()
    return pl.when(n > 1).then(divide(weighted, n - 1.0)).otherwise(0.0)


def _gini_index(s: CollectionScope, p: Params) -> CollectionFormula:
    n = s.catalog_size.cast(pl.Float64)
    return CollectionFormula("rows", _gini(_counts(s, p), n), counted=_gini(_counted(s, p), n))


def _replay_novelty(s: CollectionScope, p: Params) -> CollectionFormula:
    """RePlay's ``Novelty``: per user of the interactions, the share of the top ``k``
    the user has not interacted with (1 for a user without recommendations)."""
    listed = s.top(p.k).sum().cast(pl.Float64)
    known = (s.seen & s.top(p.k)).sum().cast(pl.Float64)
    value = pl.when(listed > 0).then(1.0 - known / listed).otherwise(1.0)
    return CollectionFormula("users", pl.when(s.has_history.first()).then(value), absent=1.0)


def _novelty(s: CollectionScope, p: Params) -> CollectionFormula:
    if p.choice("kind") == "replay":
        return _replay_novelty(s, p)
    # divided value by value: a division by the scalar would multiply by its
    # reciprocal in a group of several rows, and divide in a group of one
    self_information = -divide(s.popularity, s.interactions.cast(pl.Float64)).log(2)
    # A null popularity (an item the interactions never saw) reaches the mean only
    # under unseen_items='recommenders' (the plan refuses it otherwise): Microsoft
    # Recommenders counts such a row 0 and still divides by every row.
    counted = self_information.fill_null(0.0)
    # -log2 of a share of at least one interaction: finite, below 64
    return CollectionFormula(
        "rows",
        exact_mean(s.within(p.k, counted), bounded=True),
        counted=fixed_weighted_mean(counted, s.count(p.k)),
    )


def _sim_measure(p: Params, metric: str) -> SimMeasure:
    value = p.choice("item_sim_measure")
    if value == COOCCURRENCE:
        return COOCCURRENCE
    if value == FEATURES:
        return FEATURES
    raise MetricParameterError(  # pragma: no cover - the parser checks the choices
        f"metric {metric!r}: item_sim_measure={value!r} is not a similarity"
    )


def _intra_list_diversity(s: CollectionScope, p: Params) -> CollectionFormula:
    listed = s.top(p.k).sum().cast(pl.Float64)
    pairs = s.pair_similarity_sum(p.k, _sim_measure(p, "intra_list_diversity")).first()
    mean_similarity = pairs / (listed * (listed - 1.0))
    return CollectionFormula("users", pl.when(listed >= 2).then(1.0 - mean_similarity))


def _serendipity(s: CollectionScope, p: Params) -> CollectionFormula:
    similarity = s.history_similarity_by(_sim_measure(p, "serendipity"))
    surprise = (1.0 - similarity) * s.relevance
    return CollectionFormula("users", exact_mean(s.within(p.k, surprise)))


def _average_popularity(s: CollectionScope, p: Params) -> CollectionFormula:
    # whole numbers: a float sum is exact in any order (below 2**53)
    return CollectionFormula("users", s.popularity.filter(s.top(p.k)).mean())


def _long_tail_share(s: CollectionScope, p: Params) -> CollectionFormula:
    tail = (~s.in_head(p.number("head"))).cast(pl.Float64)
    # zeros and ones: a float sum is exact in any order
    return CollectionFormula("users", tail.filter(s.top(p.k)).mean())


# --------------------------------------------------------------------------- registry
_RECOMMENDERS = "Microsoft Recommenders python_evaluation"

#: Microsoft Recommenders' ``item_sim_measure``, as a parameter of the metrics that
#: compare items (their default is the co-occurrence; here the feature cosine, as
#: before the parameter existed).
ITEM_SIM_MEASURE = Param(
    "item_sim_measure",
    FEATURES,
    (FEATURES, COOCCURRENCE),
    "item similarity: the cosine of the items' feature vectors (item_features=...), or "
    "'item_cooccurrence_count', users who interacted with both items over the square "
    "root of the product of each item's users (the cosine of their columns in the "
    "binary user-item matrix of interactions=...; Recommenders' default)",
)


#: Which serendipity: Microsoft Recommenders' (Zhang et al.), or RecTools' (Kotkov).
SERENDIPITY_KIND = Param(
    "kind",
    "recommenders",
    ("recommenders", "kotkov"),
    "'recommenders': 1 - similarity to the user's history, per recommended item "
    "(Microsoft Recommenders); 'kotkov': relevant items ranked above their popularity "
    "rank (RecTools' Serendipity; reads qrels= and interactions=)",
)
_CATALOGUE_SIZE = check_number(
    "n_items", low=1.0, what="a number >= 1, the catalogue size (RecTools' len(catalog))"
)
#: RecTools' catalogue size for ``serendipity(kind='kotkov')``.
N_ITEMS = Param(
    "n_items",
    None,
    doc="kind='kotkov': the catalogue size n (RecTools' len(catalog)); by default the "
    "distinct items of interactions=, and at least those (a smaller n is refused when "
    "the plan runs, naming both numbers)",
    check=lambda value: None if value is None else _CATALOGUE_SIZE(value),
)


def _check_serendipity(name: str, k: int | None, options: Mapping[str, ParamValue]) -> None:
    if options["kind"] == "kotkov":
        if options["item_sim_measure"] != ITEM_SIM_MEASURE.default:
            raise ValueError(
                "item_sim_measure is the similarity of kind='recommenders'; "
                "kind='kotkov' compares ranks with popularity ranks: drop item_sim_measure"
            )
        return
    if options["n_items"] is not None:
        raise ValueError(
            "n_items is the catalogue size of kind='kotkov' (RecTools' Serendipity); "
            "kind='recommenders' reads none: drop n_items or pass kind='kotkov'"
        )


def _metric(
    name: str,
    summary: str,
    formula_fn: Callable[[CollectionScope, Params], CollectionFormula],
    *,
    reads: tuple[Input, ...],
    formula: str,
    matches: dict[str, str],
    aliases: tuple[Alias, ...] = (),
    params: tuple[Param, ...] = (),
    higher_is_better: bool = True,
    latex: str = "",
    kinds: Mapping[str, tuple[Route, tuple[Input, ...]]] | None = None,
    check_params: Callable[[str, int | None, Mapping[str, ParamValue]], None] | None = None,
    histories: bool = False,
) -> Metric:
    return Metric(
        name,
        summary,
        collection_only(name),
        binary=False,
        # a kind another route computes from judgments reads their level (kotkov)
        threshold=any("judgments" in reads for _, reads in (kinds or {}).values()),
        aliases=aliases,
        params=params,
        higher_is_better=higher_is_better,
        formula=formula,
        reads=reads,
        matches=matches,
        collection=formula_fn,
        latex=latex,
        kinds=kinds or {},
        check_params=check_params,
        histories=histories,
    )


RECSYS_METRICS: tuple[Metric, ...] = (
    _metric(
        "catalog_coverage",
        "share of the catalogue (the items of the interactions) that is recommended",
        _catalog_coverage,
        aliases=(Alias("coverage"),),
        reads=("run", "interactions"),
        formula="|distinct recommended items| / |distinct items in the interactions| "
        "(Shani & Gunawardana 2010); a recommended item the interactions lack is an error",
        matches={"recommenders": "catalog_coverage, to 1e-12"},
        latex=(
            r"\frac{|\{\text{distinct recommended items}\}|}{|\{\text{distinct items in the"
            r" interactions}\}|}"
        ),
    ),
    _metric(
        "distributional_coverage",
        "Shannon entropy (bits) of how often each item is recommended",
        _distributional_coverage,
        aliases=(Alias("entropy"),),
        reads=("run",),
        formula="-sum_i p(i) log2 p(i), p(i) = recommendations of item i / all "
        "recommendations (Shani & Gunawardana 2010, eq. 21)",
        matches={"recommenders": "distributional_coverage, to 1e-12"},
        latex=(
            r"-\sum_{i} p(i) \log_2 p(i), \quad p(i) = \frac{\text{recommendations of }"
            r" i}{\text{recommendations}}"
        ),
    ),
    _metric(
        "gini_index",
        "Gini index of how often each catalogue item is recommended (0: even, 1: one item)",
        _gini_index,
        aliases=(Alias("gini"),),
        reads=("run", "interactions"),
        higher_is_better=False,
        formula="1/(n-1) sum_j (2j - n - 1) p(i_j) over the n catalogue items sorted by "
        "their share p of recommendations, ascending; 0 for a one-item catalogue "
        "(Shani & Gunawardana 2010, eq. 20)",
        matches={"numpy": "the formula as explicit arithmetic, to 1e-12"},
        latex=(
            r"\frac{1}{n-1}\sum_{j=1}^{n} (2j - n - 1)\, p(i_j), \quad p(i_1) \le \dots \le"
            r" p(i_n)"
        ),
    ),
    _metric(
        "novelty",
        "mean self-information -log2(popularity) of the recommended items",
        _novelty,
        params=(
            Param(
                "kind",
                "recommenders",
                ("recommenders", "replay"),
                "'recommenders': the mean self-information of the recommended items "
                "(Microsoft Recommenders); 'replay': the share of each user's top k the "
                "user never interacted with (RePlay's Novelty)",
                histories=("replay",),
            ),
        ),
        reads=("run", "interactions"),
        formula="mean over recommendations of -log2(n_i / N), n_i the interactions with "
        "item i and N all interactions (Castells, Vargas & Wang 2011); a recommended "
        "item the interactions lack is an error. kind='replay' (RePlay Novelty): mean "
        "over the users of the interactions of 1 - |top k & H_u| / |top k|, H_u the "
        "user's interactions, |top k| the items listed up to k; 1 for a user without "
        "recommendations; a recommended user the interactions lack is left out",
        matches={
            "recommenders": "novelty, to 1e-12",
            "replay": "Novelty(k), mean (kind='replay'), to 1e-9",
        },
        latex=r"\frac{1}{|L|}\sum_{i \in L} -\log_2 \frac{n_i}{N}",
    ),
    _metric(
        "intra_list_diversity",
        "1 - mean pairwise cosine similarity of the items of a user's list, mean over users",
        _intra_list_diversity,
        aliases=(Alias("diversity"), Alias("ild")),
        params=(ITEM_SIM_MEASURE,),
        reads=("run", "item_features"),
        formula="mean over users with 2+ items of 1 - mean_{i<j} sim(i, j) (Ziegler et al. "
        "2005). sim is cos(v_i, v_j) of the feature vectors, computed as "
        "1 - (|sum_i u_i|^2 - sum_i |u_i|^2) / (m (m - 1)) with u = v / |v|; or, with "
        "item_sim_measure='item_cooccurrence_count' (which reads the interactions "
        "instead of item_features), |U_i & U_j| / sqrt(|U_i| |U_j|), U_i the users who "
        "interacted with item i (0 for a pair no user shares), from a self-join of the "
        "distinct (user, item) pairs of the interactions on the user",
        matches={
            "recommenders": "diversity(item_sim_measure='item_feature_vector' or "
            "'item_cooccurrence_count'), to 1e-12"
        },
        latex=r"\operatorname{mean}_{u} \Big(1 - \frac{2}{m(m-1)}\sum_{i<j} \cos(v_i, v_j)\Big)",
    ),
    _metric(
        "serendipity",
        "mean over users of the mean (1 - similarity to the user's history) of their items",
        _serendipity,
        params=(ITEM_SIM_MEASURE, SERENDIPITY_KIND, N_ITEMS),
        reads=("run", "interactions", "item_features"),
        formula="kind='recommenders' (the default): mean over users of mean over "
        "recommended items i of (1 - mean over the "
        "user's interactions h of sim(i, h)) * relevance_i (Zhang et al. 2012); sim is "
        "cos(v_i, v_h) of the feature vectors, or with "
        "item_sim_measure='item_cooccurrence_count' (no item_features needed) "
        "|U_i & U_h| / sqrt(|U_i| |U_h|) over the users U of each item in the "
        "interactions (1 for h = i, 0 for items no user shares). kind='kotkov' "
        "(RecTools' Serendipity; reads the run, qrels= and interactions=, per query like "
        "an accuracy metric): per user, the mean over the rows ranked r <= k of "
        "max((n + 1 - r) / n - (n + 1 - q_i) / n, 0) * rel_i, q_i the item's popularity "
        "rank in the interactions (dense, most interacted 1; an item they lack counts "
        "0 for the second term), n the catalogue (n_items, or the distinct items of "
        "the interactions); a user with no row ranked <= k has none",
        matches={
            "recommenders": "serendipity(item_sim_measure='item_feature_vector' or "
            "'item_cooccurrence_count'), to 1e-12",
            "rectools": "Serendipity(k) (kind='kotkov', n_items=len(catalog)), per user "
            "and mean, to 1e-9, with unretrieved='drop' (tests/test_rectools_more.py)",
        },
        kinds={"kotkov": ("offline", ("run", "judgments", "interactions"))},
        check_params=_check_serendipity,
        histories=True,
        latex=(
            r"\operatorname{mean}_{u} \operatorname{mean}_{i \in L_u} \Big(1 -"
            r" \operatorname{mean}_{h \in H_u} \cos(v_i, v_h)\Big)\, \mathrm{rel}_i"
        ),
    ),
    _metric(
        "average_popularity",
        "mean over users of the mean interaction count of their recommended items",
        _average_popularity,
        aliases=(Alias("arp"),),
        reads=("run", "interactions"),
        higher_is_better=False,
        formula="ARP = mean over users of mean over the user's items of n_i, the "
        "interactions with item i (Abdollahpouri, Burke & Mobasher 2019)",
        matches={"numpy": "the formula as explicit arithmetic, to 1e-12"},
        latex=r"\mathrm{ARP} = \operatorname{mean}_{u} \frac{1}{|L_u|}\sum_{i \in L_u} n_i",
    ),
    _metric(
        "long_tail_share",
        "mean over users of the share of their recommended items outside the popular head",
        _long_tail_share,
        aliases=(Alias("aplt"),),
        params=(
            Param(
                "head",
                HEAD_SHARE,
                doc="share of all interactions held by the head: an item is in the head "
                "when the items more popular than it hold less than this share",
                check=check_number(
                    "head",
                    low=0.0,
                    high=1.0,
                    exclusive=True,
                    what="a number between 0 and 1 (exclusive), the share of interactions "
                    "held by the popular head",
                ),
            ),
        ),
        reads=("run", "interactions"),
        formula="APLT = mean over users of |items of the list in the long tail| / |list|; "
        "the head: items whose strictly more popular items hold < head x N interactions "
        "(Abdollahpouri, Burke & Mobasher 2019)",
        matches={"numpy": "the formula as explicit arithmetic, to 1e-12"},
        latex=r"\mathrm{APLT} = \operatorname{mean}_{u} \frac{|L_u \cap \text{tail}|}{|L_u|}",
    ),
)
