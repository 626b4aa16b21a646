"""Elliot's MAD metrics: how far apart clusters of items or of users are served.

Elliot (sisinflab/elliot, ``evaluation/metrics/fairness/MAD/``) scores a recommender's
top ``k`` per cluster and reports the mean absolute difference (MAD) of the clusters'
means over every pair of clusters (Deldjoo et al. 2021, Zhu et al. 2018):

* ``item_mad@k``: each item's mean gain over the users whose top ``k`` lists it,
  averaged per item cluster (``groups=``: one row per item, ``doc_id`` and ``group``).
  ``kind='ranking'`` (Elliot's ItemMADranking) gains Elliot's discounted relevance
  ``2 ** (rel - level + 1) - 1`` of a relevant test item (0 otherwise);
  ``kind='rating'`` (ItemMADrating) the recommendation's score where the item is
  relevant (0 otherwise);
* ``user_mad@k``: each user's value averaged per user cluster (``user_groups=``: one
  row per user, the query id column and ``group``). ``kind='ranking'``
  (UserMADranking) is the user's nDCG@k over those gains; ``kind='rating'``
  (UserMADrating) the mean score of the user's top ``k``.

The users are those of the recommendations with a relevant test item (``qrels=``,
relevance >= ``relevance_level``, Elliot's ``rel_threshold``). An item or a user the
cluster table lacks is left out of the cluster means, as Elliot does; every cluster
of the table counts, and where one has nothing to average (or the table has a single
cluster) the value is null (Elliot's nan). :func:`polars_irmetrics.evaluate` computes
them (:mod:`polars_irmetrics.offline.mad`); values equal Elliot's code to 1e-9
(``tests/test_fairness_mad.py``, fixtures from Elliot's code in ``tests/fixtures/elliot/``).
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from polars_irmetrics.errors import MetricParameterError
from polars_irmetrics.metrics.scope import Scope
from polars_irmetrics.metrics.spec import Metric, Param, Params

__all__ = ["MAD", "MAD_KIND", "MAD_METRICS"]

_ELLIOT = "elliot"

#: Elliot's two MAD variants: the gain of a ranking, or the recommendation's score.
MAD_KIND = Param(
    "kind",
    "ranking",
    ("ranking", "rating"),
    "'ranking': Elliot's discounted relevance gains (ItemMADranking, UserMADranking: "
    "nDCG); 'rating': the run's scores (ItemMADrating, UserMADrating)",
)


def _needs_door(name: str, table: str) -> Callable[[Scope, Params], pl.Expr]:
    def compute(scope: Scope, params: Params) -> pl.Expr:
        raise MetricParameterError(
            f"metric {name!r} reads the recommendations, the test interactions and the "
            f"clusters: compute it with irm.evaluate(recommendations, metrics, "
            f"qrels=test_interactions, {table}=clusters)"
        )

    return compute


_PAIRS = "MAD = mean over the pairs of clusters a < b of |avg_a - avg_b|"
_GAIN = "gain(u, i) = 2^(rel - level + 1) - 1 for a relevant test item, else 0"
_USERS = "over the users of the run with a relevant test item"
#: Why the MAD metrics take no agg=: no per-user values (Metric.whole).
_WHOLE = "it is one value of the whole table: the mean absolute difference of the clusters' means"

MAD_METRICS: tuple[Metric, ...] = (
    Metric(
        "item_mad",
        "Elliot's ItemMAD: mean absolute difference of the item clusters' mean gains",
        _needs_door("item_mad", "groups"),
        cutoff="required",
        params=(MAD_KIND,),
        higher_is_better=False,
        binary=False,
        threshold=True,
        reads=("run", "judgments", "groups"),
        whole=_WHOLE,
        wing="offline",
        formula=f"v_i = sum_u g(u, i) / |{{u: i in top_k(u)}}| {_USERS}; avg_c = mean of v_i "
        f"over the recommended items of cluster c (groups=); {_PAIRS}; kind='ranking': "
        f"g = {_GAIN}; kind='rating': g = the run's score of a relevant item, else 0 "
        "(Deldjoo et al. 2021; Elliot ItemMADranking, ItemMADrating)",
        latex=r"\frac{1}{\binom{n}{2}} \sum_{a < b} \left| \bar v_a - \bar v_b \right|, \quad"
        r" v_i = \frac{\sum_{u:\, i \in L_u} g(u, i)}{|\{u : i \in L_u\}|}",
        matches={_ELLIOT: "ItemMADranking, ItemMADrating (fairness/MAD), to 1e-9"},
    ),
    Metric(
        "user_mad",
        "Elliot's UserMAD: mean absolute difference of the user clusters' mean nDCG",
        _needs_door("user_mad", "user_groups"),
        cutoff="required",
        params=(MAD_KIND,),
        higher_is_better=False,
        binary=False,
        threshold=True,
        reads=("run", "judgments", "user_groups"),
        whole=_WHOLE,
        formula=f"avg_c = mean over the users of cluster c (user_groups=) {_USERS} of "
        f"v_u; {_PAIRS}; kind='ranking': v_u = nDCG@k with {_GAIN} and the discount "
        "1 / log2(r + 1); kind='rating': v_u = the mean score of the user's top k "
        "(Deldjoo et al. 2021; Elliot UserMADranking, UserMADrating)",
        latex=r"\frac{1}{\binom{n}{2}} \sum_{a < b} \left| \bar v_a - \bar v_b \right|, \quad"
        r" \bar v_c = \operatorname{mean}_{u \in c} \mathrm{nDCG}_u@k",
        matches={_ELLIOT: "UserMADranking, UserMADrating (fairness/MAD), to 1e-9"},
    ),
)

#: The names :func:`polars_irmetrics.evaluate` computes with the MAD plan.
MAD: frozenset[str] = frozenset(m.name for m in MAD_METRICS)
