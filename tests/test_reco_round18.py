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
