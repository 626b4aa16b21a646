"""Round 18 of the recommender and fairness metrics: defects found by probing."""

from __future__ import annotations

import warnings

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import IrmWarning

RUN = pl.DataFrame(
    {
        "query_id": [1, 1, 1, 2, 2, 2],
        "doc_id": ["a", "b", "c", "a", "d", "e"],
        "rank": [1, 2, 3, 1, 2, 3],
    }
)
TEST = pl.DataFrame(
    {"query_id": [1, 1, 2, 2], "doc_id": ["a", "c", "e", "d"], "relevance": [1, 1, 1, 2]}
)
ONE_ITEM_CLUSTER = pl.DataFrame({"doc_id": ["a", "b", "c", "d", "e"], "group": ["p"] * 5})
ONE_USER_CLUSTER = pl.DataFrame({"query_id": [1, 2], "group": ["x", "x"]})


@pytest.mark.parametrize(
    ("metric", "tables", "keyword"),
    [
        ("item_mad@3", {"groups": ONE_ITEM_CLUSTER}, "groups"),
        ("user_mad@3", {"user_groups": ONE_USER_CLUSTER}, "user_groups"),
        ("item_mad(kind='rating')@3", {"groups": ONE_ITEM_CLUSTER}, "groups"),
    ],
)
def test_mad_of_one_cluster_warns(
    metric: str, tables: dict[str, pl.DataFrame], keyword: str
) -> None:
    # one cluster: no pair of clusters to compare, so MAD is null (Elliot's nan of an
    # empty mean); that null used to come back without a word
    run = RUN.with_columns(score=pl.Series([0.9, 0.5, 0.1, 0.8, 0.4, 0.2]))
    with pytest.warns(IrmWarning, match=rf"{keyword}= holds one cluster only") as caught:
        got = irm.evaluate(run, [metric], qrels=TEST, **tables)
    assert got[metric].to_list() == [None]
    name = metric.split("@")[0].split("(")[0]
    assert any(
        f"{name} is the mean absolute difference over the pairs of clusters" in str(w.message)
        for w in caught
    )


def test_mad_of_two_clusters_does_not_warn() -> None:
    # gain 2^(rel - 1 + 1) - 1 of a relevant item, 0 else; v_i its mean over the users
    # listing it. a (p): relevant to user 1 (1), not to user 2 (0): v_a = 0.5; c (p):
    # v_c = 1; e (p): v_e = 1; b (q): v_b = 0; d (q): relevance 2, 2^2 - 1 = 3: v_d = 3.
    # avg_p = (0.5 + 1 + 1) / 3 = 5/6, avg_q = (0 + 3) / 2 = 3/2: MAD |5/6 - 3/2| = 2/3
    two = ONE_ITEM_CLUSTER.with_columns(group=pl.Series(["p", "q", "p", "q", "p"]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = irm.evaluate(RUN, ["item_mad@3"], qrels=TEST, groups=two)
    assert got["item_mad@3"].to_list() == [pytest.approx(2 / 3, abs=1e-15)]


# pop_rsp / pop_reo: the run u1 [a, b, c], u2 [a, d], u3 [e]; training pairs (u1, a),
# (u2, a), (u3, b), (u5, d), (u5, a): T = 5, a 3 users, b 1, d 1. Short head (pop_ratio
# 0.8, 0.8 x 5 = 4): a (0 before), b (3 before < 4); d has 4 before: long tail {d}.
ELLIOT_RUN = pl.DataFrame(
    {
        "query_id": ["u1", "u1", "u1", "u2", "u2", "u3"],
        "doc_id": ["a", "b", "c", "a", "d", "e"],
        "rank": [1, 2, 3, 1, 2, 1],
    }
)
ELLIOT_TRAIN = pl.DataFrame(
    {"query_id": ["u1", "u2", "u3", "u5", "u5"], "doc_id": ["a", "a", "b", "d", "a"]}
)
# test items c, e (no training item) and a (u1's own training item): no relevant test
# item outside a user's training pairs is in the head or the tail
ELLIOT_TEST = pl.DataFrame(
    {"query_id": ["u1", "u1", "u2"], "doc_id": ["a", "c", "e"], "relevance": [1, 1, 1]}
)


@pytest.mark.parametrize(
    ("metric", "train", "message"),
    [
        (
            "pop_reo@3",
            ELLIOT_TRAIN,
            "'pop_reo@3' is NaN: Elliot's std / mean of the short head's and the long tail's "
            "rates, and the short head and the long tail of pop_ratio=0.8 hold no relevant "
            "test item of a user outside the user's training items, so their rates are 0 / 0",
        ),
        (
            # every training item in the head: (a 2, b 1, c 1; T = 4, 0.8 x 4 = 3.2: a
            # (0 before), b (2), c (3 < 3.2)): the tail is empty
            "pop_rsp@3",
            pl.DataFrame({"query_id": ["u1", "u2", "u2", "u3"], "doc_id": ["c", "a", "b", "a"]}),
            "'pop_rsp@3' is NaN: Elliot's std / mean of the short head's and the long tail's "
            "rates, and the long tail of pop_ratio=0.8 holds no training item a user of the "
            "run has not interacted with, so its rate is 0 / 0",
        ),
    ],
)
def test_elliot_disparity_nan_warns(metric: str, train: pl.DataFrame, message: str) -> None:
    # a 0 / 0 rate makes PopRSP / PopREO NaN (Elliot's nan): it used to come back silently
    with pytest.warns(IrmWarning) as caught:
        got = irm.evaluate(ELLIOT_RUN, [metric], qrels=ELLIOT_TEST, interactions=train)
    value = got[metric].item()
    assert value != value  # NaN
    assert any(str(w.message).startswith(message) for w in caught), [
        str(w.message) for w in caught
    ]


def test_elliot_disparity_of_a_value_does_not_warn() -> None:
    # p_SH = (|{a, b}| + |{a}| + 0) / (|{b}| + |{b}| + |{a}|) = 3 / 3 = 1; p_LT = (0 + |{d}|
    # + 0) / (1 + 1 + 1) = 1/3; mean 2/3, population std |1 - 1/3| / 2 = 1/3: 0.5
    test = ELLIOT_TEST.vstack(
        pl.DataFrame({"query_id": ["u2"], "doc_id": ["d"], "relevance": [1]})
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = irm.evaluate(ELLIOT_RUN, ["pop_rsp@3"], qrels=test, interactions=ELLIOT_TRAIN)
    assert got["pop_rsp@3"].item() == pytest.approx(0.5, abs=1e-15)


def test_elliot_disparity_nan_names_the_first_group() -> None:
    both = pl.concat([ELLIOT_RUN.with_columns(day=pl.lit(d)) for d in (1, 2)], how="vertical")
    with pytest.warns(
        IrmWarning, match=r"'pop_reo@3' is NaN in 2 of the 2 groups \(first: day=1\)"
    ):
        irm.evaluate(both, ["pop_reo@3"], qrels=ELLIOT_TEST, interactions=ELLIOT_TRAIN, by="day")


# interactions= whose user column no metric asked for reads (catalog_coverage,
# average_popularity): the tally of the run's users with a history reads it all the same
LIST_USERS = pl.DataFrame({"query_id": [[1], [2], [3]], "doc_id": ["a", "b", "c"]})
TEXT_USERS = pl.DataFrame({"query_id": ["1", "2", "3"], "doc_id": ["a", "b", "c"]})
RECS = pl.DataFrame({"query_id": [1, 1, 2], "doc_id": ["a", "b", "c"], "rank": [1, 2, 1]})


@pytest.mark.parametrize("metric", ["catalog_coverage", "average_popularity@2", "gini_index"])
@pytest.mark.parametrize(
    ("history", "message"),
    [
        (
            LIST_USERS,
            "column 'query_id' in the interactions has dtype List(Int64); ids must be "
            "strings or integers: cast it, e.g. pl.col('query_id').cast(pl.String)",
        ),
        (
            TEXT_USERS,
            "column 'query_id' holds integers in the run (Int64) but strings in the "
            "interactions (String); cast one side, e.g. pl.col('query_id').cast(pl.String) "
            "on both",
        ),
    ],
)
def test_interactions_user_column_checked_whatever_the_metric(
    metric: str, history: pl.DataFrame, message: str
) -> None:
    # a list of users used to reach the user as polars' "cannot cast List type"; users
    # of another kind were compared as text in silence (the metrics that read them refuse)
    with pytest.raises(irm.ColumnTypeError) as caught:
        irm.evaluate(RECS, [metric], interactions=history)
    assert str(caught.value) == message


def test_interactions_without_user_column_still_serve_the_item_metrics() -> None:
    # catalogue a, b, c, d: the run's a, b, c -> coverage 3/4
    items = pl.DataFrame({"doc_id": ["a", "b", "c", "d"]})
    got = irm.evaluate(RECS, ["catalog_coverage"], interactions=items)
    assert got["catalog_coverage"].to_list() == [0.75]
