"""Side tables whose ids match nothing, round 11.

1. ``labels=`` or the predictions empty under ``unmatched='drop'``: every value is null,
   and the :class:`~polars_irmetrics.errors.CoverageWarning` of ids that share no pair
   now says so (``0 < 0`` held it back: it was given only when the pairs were fewer
   than half of each side), on one machine, on Spark and on Dask alike.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from typing import Any

import dask.dataframe as dd
import pandas as pd
import polars as pl
import pytest

import polars_irmetrics as irm
import polars_irmetrics.dask as irm_dask
import polars_irmetrics.spark as irm_spark


def _said(call: Callable[[], Any]) -> list[str]:
    """The library's warnings ``call`` gives (its result collected)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = call()
        if isinstance(got, pl.LazyFrame):
            got.collect()
    # the side tables' warnings (rnd of a ranking of 10 documents or fewer is NaN, and
    # says so in a warning of its own: tests/test_stat_round17.py; an expected-exposure
    # measure beside rnd leaving queries out: tests/test_recsys_fair_round19.py; one
    # that scores no query: tests/test_exposure_round20.py)
    return [
        str(w.message)
        for w in caught
        if issubclass(w.category, irm.IrmWarning)
        and "NaN on" not in str(w.message)
        and "no query (" not in str(w.message)
        and "the expected-exposure measures score only" not in str(w.message)
    ]


def _collected(got: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return got.collect() if isinstance(got, pl.LazyFrame) else got


# --- 1. an empty side under unmatched='drop' ------------------------------------------

TRUTH = pl.DataFrame({"user": [1, 1, 2], "item": [10, 11, 10], "rating": [5.0, 3.0, 4.0]})
PRED = TRUTH.rename({"rating": "rating_hat"})
CLICKS = pl.DataFrame({"user": [1, 1, 2], "item": [10, 11, 10], "rating": [1, 0, 1]})
SCORES = CLICKS.rename({"rating": "rating_hat"}).with_columns(
    pl.Series("rating_hat", [0.9, 0.2, 0.7])
)
PAIR_KW: dict[str, Any] = {
    "label": "rating",
    "prediction": "rating_hat",
    "query_id": "user",
    "doc_id": "item",
    "unmatched": "drop",
}


def _no_pair(predictions: int, labels: int) -> str:
    return (
        f"labels= and the predictions share none of their (user, item) pairs ({predictions} "
        f"predictions, {labels} labels): unmatched='drop' leaves out every prediction "
        "without a label, so every value is null. Ids that do not line up are the likely "
        "cause: give labels= and the predictions the same 'user' and 'item' values (same "
        "spelling, same collection)."
    )


#: (name, predictions, labels, metrics, message)
EMPTY_SIDES: list[tuple[str, pl.DataFrame, pl.DataFrame, list[str], str]] = [
    ("empty-labels", PRED, TRUTH.clear(), ["rmse", "mae"], _no_pair(3, 0)),
    ("empty-predictions", PRED.clear(), TRUTH, ["rmse", "mae"], _no_pair(0, 3)),
    ("both-empty", PRED.clear(), TRUTH.clear(), ["rmse", "mae"], _no_pair(0, 0)),
    ("empty-labels-auc", SCORES, CLICKS.clear(), ["auc", "logloss"], _no_pair(3, 0)),
    ("empty-predictions-auc", SCORES.clear(), CLICKS, ["auc", "logloss"], _no_pair(0, 3)),
]


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
@pytest.mark.parametrize(
    ("name", "pred", "truth", "metrics", "message"),
    EMPTY_SIDES,
    ids=[c[0] for c in EMPTY_SIDES],
)
def test_an_empty_side_warns_that_every_value_is_null(
    name: str,
    pred: pl.DataFrame,
    truth: pl.DataFrame,
    metrics: list[str],
    message: str,
    lazy: bool,
) -> None:
    def call() -> Any:
        if lazy:
            return irm.evaluate(pred.lazy(), metrics, labels=truth.lazy(), **PAIR_KW)
        return irm.evaluate(pred, metrics, labels=truth, **PAIR_KW)

    assert _said(call) == [message]


def test_a_matched_table_still_does_not_warn() -> None:
    assert _said(lambda: irm.evaluate(PRED, ["rmse"], labels=TRUTH, **PAIR_KW)) == []


def test_dask_warns_of_empty_labels_as_one_machine(client: Any) -> None:
    def frame(table: pl.DataFrame) -> Any:
        return dd.from_pandas(table.to_pandas(types_mapper=pd.ArrowDtype), npartitions=1)

    said = _said(
        lambda: irm_dask.evaluate(
            frame(PRED), ["rmse"], labels=frame(TRUTH.clear()), partitions=2, **PAIR_KW
        ).compute()
    )
    assert said == [_no_pair(3, 0)]


def test_spark_warns_of_empty_labels_as_one_machine(spark: Any) -> None:
    labels = spark.createDataFrame(TRUTH.clear().to_arrow())
    said = _said(
        lambda: irm_spark.evaluate(
            spark.createDataFrame(PRED.to_arrow()), ["rmse"], labels=labels, **PAIR_KW
        )
    )
    assert said == [_no_pair(3, 0)]


# --- 2. one coverage warning per side table per call -----------------------------------

RUN = pl.DataFrame({"query_id": ["q1"] * 3, "doc_id": ["d0", "d1", "d2"], "rank": [1, 2, 3]})
QRELS = pl.DataFrame({"query_id": ["q1"], "doc_id": ["d1"], "relevance": [1]})
HISTORY = pl.DataFrame({"query_id": ["u1"], "doc_id": ["D0"]})
GROUPS = pl.DataFrame({"doc_id": ["D0", "D1", "D2"], "group": ["a", "b", "a"]})
SYSTEMS = pl.concat([RUN.with_columns(system=pl.lit(s)) for s in "AB"])
ITEMS_DROPPED = (
    "interactions= holds none of the 3 items of the recommendations (column 'doc_id'): the "
    "recommendations of an item the interactions lack are left out (unseen_items='drop'), "
    "so the metrics read few of the lists' items. Ids that do not line up are the likely "
    "cause: give interactions= and the recommendations the same 'doc_id' values (same "
    "spelling, same collection)."
)
# novelty@3 reads the items' popularity alone, not a user's history (round 19: the
# warning named novelty(kind='replay') and serendipity, which were not asked)
USERS = (
    "interactions= holds none of the 1 users of the recommendations (column 'query_id'): no "
    "metric asked reads a user's own history (novelty@3 reads the items' popularity or the "
    "catalogue alone), so the values do not change, but users that do not line up are a "
    "likely sign that the items do not either. Ids that do not line up are the likely "
    "cause: give interactions= and the recommendations the same 'query_id' values (same "
    "spelling, same collection)."
)
CLUSTERS = (
    "groups= holds none of the 3 items of the run (column 'doc_id'): an item without a "
    "cluster counts in no cluster's mean (with none clustered, MAD is null). Ids that do "
    "not line up are the likely cause: give groups= and the run the same 'doc_id' values "
    "(same spelling, same collection)."
)
_DOCUMENTS = (
    "groups= holds none of the 3 documents of the run (column 'doc_id'): a document "
    "without a group counts in no group, so its exposure and relevance are left out of "
    "every group's (with none grouped, the values are null or NaN){mad}. Ids that do not "
    "line up are the likely cause: give groups= and the run the same 'doc_id' values (same "
    "spelling, same collection)."
)
DOCUMENTS = _DOCUMENTS.format(mad="")
_MAD = ", and item_mad@3 reads it in no cluster's mean (with none clustered, MAD is null)"
DOCUMENTS_MAD = _DOCUMENTS.format(mad=_MAD)
# rnd's documents without a group are its unprotected ones (round 19: they were said to
# count in no group)
_UNPROTECTED = (
    "is unprotected in rnd (counted in the ranking's N, not in its protected P; with none "
    "grouped no document is protected and the values are NaN)"
)
_RND_DOCUMENTS = (
    "groups= holds none of the 3 documents of the run (column 'doc_id'): {effect}{mad}. "
    "Ids that do not line up are the likely cause: give groups= and the run the same "
    "'doc_id' values (same spelling, same collection)."
)
RND_DOCUMENTS = _RND_DOCUMENTS.format(effect=f"a document without a group {_UNPROTECTED}", mad="")
RND_DOCUMENTS_MAD = _RND_DOCUMENTS.format(
    effect=f"a document without a group {_UNPROTECTED}", mad=_MAD
)
RND_EE_DOCUMENTS_MAD = _RND_DOCUMENTS.format(
    effect="in ee_disparity a document without a group counts in no group, so its exposure "
    "and relevance are left out of every group's (with none grouped, the values are null "
    f"or NaN); and it {_UNPROTECTED}",
    mad=_MAD,
)
RELEVANT = (
    "groups= holds none of the 1 relevant documents of the judgments (column 'doc_id'): a "
    "relevant document without a group counts in no group: the expected-exposure measures "
    "leave its exposure out (a query none of whose relevant documents has a group is left "
    "out of them), and awrf's target (the relevant documents' groups, where target= is not "
    "given) does not count it. Ids that do not line up are the likely cause: give groups= "
    "and the judgments the same 'doc_id' values (same spelling, same collection)."
)
HISTORY_KW: dict[str, Any] = {"interactions": HISTORY, "unseen_items": "drop"}

#: (name, table, metrics, keywords, warnings)
ONCE: list[tuple[str, pl.DataFrame, list[str], dict[str, Any], list[str]]] = [
    ("novelty", RUN, ["novelty@3"], HISTORY_KW, [ITEMS_DROPPED, USERS]),
    (
        "novelty-P",
        RUN,
        ["novelty@3", "P@3"],
        {**HISTORY_KW, "qrels": QRELS},
        [ITEMS_DROPPED, USERS],
    ),
    (
        "novelty-P-systems",
        SYSTEMS,
        ["novelty@3", "P@3"],
        {**HISTORY_KW, "qrels": QRELS, "systems": "system"},
        [ITEMS_DROPPED, USERS],
    ),
    (
        "novelty-P-by",
        SYSTEMS,
        ["novelty@3", "P@3"],
        {**HISTORY_KW, "qrels": QRELS, "by": "system"},
        [ITEMS_DROPPED, USERS],
    ),
    (
        "novelty-P-buckets",
        RUN,
        ["novelty@3", "P@3"],
        {**HISTORY_KW, "qrels": QRELS, "buckets": 2},
        [ITEMS_DROPPED, USERS],
    ),
    ("item-mad", RUN, ["item_mad@3"], {"qrels": QRELS, "groups": GROUPS}, [CLUSTERS]),
    ("rnd", RUN, ["rnd"], {"groups": GROUPS}, [RND_DOCUMENTS]),
    (
        "item-mad-rnd",
        RUN,
        ["item_mad@3", "rnd"],
        {"qrels": QRELS, "groups": GROUPS},
        [RND_DOCUMENTS_MAD],
    ),
    (
        "item-mad-rnd-systems",
        SYSTEMS,
        ["item_mad@3", "rnd"],
        {"qrels": QRELS, "groups": GROUPS, "systems": "system"},
        [RND_DOCUMENTS_MAD],
    ),
    (
        "item-mad-rnd-by",
        SYSTEMS,
        ["item_mad@3", "rnd"],
        {"qrels": QRELS, "groups": GROUPS, "by": "system"},
        [RND_DOCUMENTS_MAD],
    ),
    # the judgments' relevant documents are another pair of ids, warned of apart
    (
        "item-mad-rnd-ee",
        RUN,
        ["item_mad@3", "rnd", "ee_disparity"],
        {"qrels": QRELS, "groups": GROUPS},
        [RND_EE_DOCUMENTS_MAD, RELEVANT],
    ),
]


def _lazy(keywords: dict[str, Any]) -> dict[str, Any]:
    return {k: v.lazy() if isinstance(v, pl.DataFrame) else v for k, v in keywords.items()}


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
@pytest.mark.parametrize(
    ("name", "table", "metrics", "keywords", "messages"), ONCE, ids=[c[0] for c in ONCE]
)
def test_a_side_table_is_warned_of_once_per_call(
    name: str,
    table: pl.DataFrame,
    metrics: list[str],
    keywords: dict[str, Any],
    messages: list[str],
    lazy: bool,
) -> None:
    if lazy:
        said = _said(lambda: irm.evaluate(table.lazy(), metrics, **_lazy(keywords)))
    else:
        said = _said(lambda: irm.evaluate(table, metrics, **keywords))
    assert said == messages


def test_the_catalogue_warning_of_an_accuracy_metric_beside_is_given_once() -> None:
    """reco_accuracy@k beside novelty: the one tally of interactions= (the
    recommendations') warns for the catalogue's size too."""
    run = pl.DataFrame({"query_id": ["q1"] * 4, "doc_id": ["d0", "d1", "d2", "d3"]})
    run = run.with_columns(rank=pl.int_range(1, 5))
    history = pl.DataFrame(
        {
            "query_id": ["q1"] * 3 + ["u"] * 20,
            "doc_id": ["d0", "d1", "d2", *(f"x{i}" for i in range(20))],
        }
    )
    catalogue = (
        "interactions= (the catalogue whose size reco_accuracy@2 read) lacks 1 of the 4 items "
        "of the run (column 'doc_id'): RecTools' tn = n - k - fn takes its n items to hold "
        "every list's items, so the true negatives and the values come out too small; give "
        "interactions= every item a user may be recommended or find relevant"
    )
    for metrics, options in (
        (["reco_accuracy@2"], {}),
        (["reco_accuracy@2", "novelty@2"], {"unseen_items": "recommenders"}),
    ):
        said = _said(
            lambda m=metrics, o=options: irm.evaluate(
                run, m, qrels=QRELS, interactions=history, **o
            )
        )
        assert said == [catalogue]


# --- 3. compare: a side table that matches nothing is named, not the systems' count ----

GROUPS_OK = GROUPS.with_columns(pl.col("doc_id").str.to_lowercase())


def _nothing(labels: str, tables: str, held: str) -> str:
    return (
        f"no query has a value of {labels} for any system, so irm.compare has nothing to "
        f"pair: {tables} {held} (where the ids do not line up, the CoverageWarning above "
        f"names the table and its counts); give {tables} the runs' 'query_id' and 'doc_id' "
        "values (same spelling, same collection)"
    )


BOTH = _nothing("'ee_disparity'", "qrels= and groups=", "are empty or hold none of the runs' ids")
#: (name, runs, metrics, keywords, message)
NOTHING: list[tuple[str, Any, list[str], dict[str, Any], str]] = [
    ("ee", SYSTEMS, ["ee_disparity"], {"qrels": QRELS, "groups": GROUPS}, BOTH),
    ("P-ee", SYSTEMS, ["P@3", "ee_disparity"], {"qrels": QRELS, "groups": GROUPS}, BOTH),
    (
        "ee-no-qrels",
        SYSTEMS,
        ["ee_disparity"],
        {"qrels": QRELS.clear(), "groups": GROUPS_OK},
        BOTH,
    ),
    (
        "P-no-qrels",
        SYSTEMS,
        ["P@3"],
        {"qrels": QRELS.clear()},
        _nothing("'P@3'", "qrels=", "is empty or holds none of the runs' ids"),
    ),
    ("dict-ee", {"A": RUN, "B": RUN}, ["ee_disparity"], {"qrels": QRELS, "groups": GROUPS}, BOTH),
]


@pytest.mark.parametrize(
    ("name", "runs", "metrics", "keywords", "message"), NOTHING, ids=[c[0] for c in NOTHING]
)
def test_compare_names_the_metric_a_side_table_leaves_without_values(
    name: str, runs: Any, metrics: list[str], keywords: dict[str, Any], message: str
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(irm.QuerySetError, match=f"^{re.escape(message)}$"):
            irm.compare(runs, metrics, baseline="A", **keywords)
    # no false word of an empty run (the runs hold rows)
    assert not any("has an empty run" in str(w.message) for w in caught)


# --- 4. item_features= rows with a null item id are refused, as the interactions' -------

FEATURES = pl.DataFrame(
    {
        "doc_id": ["d0", "d1", "d2", None],
        "features": [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.5, 0.5]],
        "genre": ["a", "b", "a", "c"],
    }
)
NULL_FEATURE_IDS = (
    "the item features have 1 row(s) with a null 'doc_id': each row is one item's "
    "features; fill or drop them, e.g. item_features.drop_nulls(['doc_id'])"
)
#: (name, metrics, unseen_items)
FEATURE_READERS: list[tuple[str, list[str], str]] = [
    ("ild-error", ["intra_list_diversity@3"], "error"),
    ("ild-drop", ["intra_list_diversity@3"], "drop"),
    ("ild-recommenders", ["intra_list_diversity@3"], "recommenders"),
    ("categorical-drop", ["categorical_diversity(category='genre')@3"], "drop"),
    ("categorical-error", ["categorical_diversity(category='genre')@3"], "error"),
]


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
@pytest.mark.parametrize(
    ("name", "metrics", "unseen"), FEATURE_READERS, ids=[c[0] for c in FEATURE_READERS]
)
def test_item_features_with_a_null_id_are_refused(
    name: str, metrics: list[str], unseen: str, lazy: bool
) -> None:
    run, features = (RUN.lazy(), FEATURES.lazy()) if lazy else (RUN, FEATURES)
    with pytest.raises(irm.InvalidValueError, match=f"^{re.escape(NULL_FEATURE_IDS)}$"):
        _collected(irm.evaluate(run, metrics, item_features=features, unseen_items=unseen))


def test_item_features_without_a_null_id_are_read() -> None:
    got = irm.evaluate(
        RUN, ["intra_list_diversity@3"], item_features=FEATURES.drop_nulls("doc_id")
    )
    assert got.height == 1
