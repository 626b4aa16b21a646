"""RePlay's beyond-accuracy metrics: surprisal, categorical diversity, and its novelty.

RePlay (Sber AI Lab) scores each user's top ``k`` recommendations against the training
log (``interactions=`` here) or the items' categories (a column of ``item_features=``).
They describe a recommendation table, as the beyond-accuracy metrics of
:mod:`.recsys` do, and go through the same plan
(:mod:`polars_irmetrics.recsys.plan`); each divides by ``k``, not by the length of a
shorter list, as RePlay does. Values equal RePlay 0.22's ``Surprisal``,
``CategoricalDiversity`` and ``Novelty`` (``novelty(kind='replay')``, declared with
:mod:`.recsys`'s ``novelty``) to 1e-9 (``tests/test_replay_parity.py``, from fixtures
RePlay wrote in a side environment: ``tests/fixtures/replay/``).

Examples
--------
Two of RePlay's conventions: a shorter list still divides by ``k`` (user 2's one item
in ``surprisal@2``), an item the history never saw (``'z'``) weighs 1, and the
novelty's users are the history's, one without recommendations (user 3) counting 1:

>>> import polars as pl
>>> import polars_irmetrics as irm
>>> run = pl.DataFrame({"query_id": [1, 1, 2], "doc_id": ["a", "z", "a"], "rank": [1, 2, 1]})
>>> history = pl.DataFrame({"query_id": [1, 2, 3], "doc_id": ["a", "b", "b"]})
>>> out = irm.evaluate(run, ["surprisal@2", "novelty(kind='replay')@2"], interactions=history)
>>> out.row(0)  # ((1 + 1) / 2 + 1 / 2) / 2, ((1 - 1/2) + 1 + 1) / 3
(0.75, 0.8333333333333334)
"""

from __future__ import annotations

import polars as pl

from polars_irmetrics.errors import MetricParameterError
from polars_irmetrics.metrics._common import divide
from polars_irmetrics.metrics.collection import CollectionFormula, CollectionScope
from polars_irmetrics.metrics.recsys import collection_only
from polars_irmetrics.metrics.scope import fixed_sum
from polars_irmetrics.metrics.spec import Metric, Param, Params, ParamValue

__all__ = ["REPLAY_METRICS"]

_REPLAY = "replay"

#: RePlay's default name of the category column (``CategoricalDiversity``).
CATEGORY = "category_id"


def _k(p: Params) -> float:
    if p.k is None:  # pragma: no cover - the parser requires the cutoff
        raise MetricParameterError("RePlay's metrics need a cutoff, e.g. 'surprisal@10'")
    return float(p.k)


def _surprisal(s: CollectionScope, p: Params) -> CollectionFormula:
    n, each = s.history_users, s.history_users_per_row
    # an item the interactions never saw is as surprising as can be (RePlay: weight 1)
    # divided value by value (a division by the scalar log2(N) would multiply by its
    # reciprocal in a list of several rows, and divide in a list of one); N from each
    # row (the same on all), not the user's scalar broadcast over the rows
    weight = divide((each / s.item_users).log(2), each.log(2))
    weights = s.within(p.k, weight.fill_null(1.0))
    # each weight in [0, 1] once the interactions have two users: a fixed-point sum, the
    # same bits in any row order. With one, log2(N) = 0: a seen item's weight is NaN (the
    # user's value too, as theirs) and an unseen item's 1, a float sum of those.
    total = pl.when(n > 1.0).then(fixed_sum(weights)).otherwise(weights.sum())
    return CollectionFormula("users", divide(total, _k(p)))


def _check_column(value: ParamValue) -> ParamValue:
    if isinstance(value, str) and value:
        return value
    raise ValueError(
        f"category must name the column of item_features that holds each item's "
        f"category, e.g. categorical_diversity(category='genre')@10; got {value!r}"
    )


def _categorical_diversity(s: CollectionScope, p: Params) -> CollectionFormula:
    column = p.choice("category")
    distinct = s.category(column).filter(s.top(p.k)).n_unique().cast(pl.Float64)
    return CollectionFormula("users", divide(distinct, _k(p)))


REPLAY_METRICS: tuple[Metric, ...] = (
    Metric(
        "surprisal",
        "RePlay's surprisal: mean normalised self-information of the top k, per user",
        collection_only("surprisal"),
        cutoff="required",
        binary=False,
        reads=("run", "interactions"),
        formula="mean over the users of the recommendations of (sum over the top k of "
        "w_i) / k (k even for a shorter list), w_i = log2(N / u_i) / log2(N) with u_i "
        "the distinct users of the interactions who interacted with item i and N the "
        "distinct users of the interactions; w_i = 1 for an item the interactions never "
        "saw (RePlay Surprisal; NaN when the interactions have one user, as theirs)",
        latex=r"\operatorname{mean}_u \frac{1}{k}\sum_{i \in L_u^k} \frac{\log_2 (N / u_i)}"
        r"{\log_2 N}",
        matches={_REPLAY: "Surprisal(k), mean, to 1e-9"},
        collection=_surprisal,
    ),
    Metric(
        "categorical_diversity",
        "RePlay's categorical diversity: distinct categories in the top k over k, per user",
        collection_only("categorical_diversity"),
        cutoff="required",
        binary=False,
        params=(
            Param(
                "category",
                CATEGORY,
                None,
                "the column of item_features=... holding each item's category (one row "
                "per item; RePlay's category_column)",
                check=_check_column,
            ),
        ),
        reads=("run", "item_features"),
        formula="mean over the users of the recommendations of |distinct categories of "
        "the top k| / k (k even for a shorter list), each item's category from the "
        "category column of item_features (RePlay CategoricalDiversity, Mean; its "
        "input, recommendations of categories, is the recommendations joined with "
        "the categories)",
        latex=r"\operatorname{mean}_u \frac{|\{c(i) : i \in L_u^k\}|}{k}",
        matches={_REPLAY: "CategoricalDiversity(k), mean, to 1e-9"},
        collection=_categorical_diversity,
    ),
)
