"""Recommendation metrics, round 10: ``agg=`` on Elliot's metrics and the MAD metrics
(accepted, then ignored: ``epc(agg='std')@2`` was the mean); ``epc``, ``efd`` and
``aclt`` now summarize their per-user values with it, and ``pop_rsp``, ``pop_reo``,
``item_mad`` and ``user_mad``, one value of the whole table, refuse it by name."""

from __future__ import annotations

import math
import re
import statistics

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnTypeError, MetricParameterError
from tests.test_engines_recsys42 import _engine
from tests.test_engines_recsys_history import one_and_engine

# Elliot's tables: a (users 1, 2) and b (user 3) in the training data, |U| = 3, T = 3
TRAIN = pl.DataFrame({"query_id": [1, 2, 3], "doc_id": ["a", "a", "b"]})
RECS = pl.DataFrame({"query_id": [1, 1, 2], "doc_id": ["b", "a", "a"], "rank": [1, 2, 1]})
TEST = pl.DataFrame({"query_id": [1, 2], "doc_id": ["b", "a"], "relevance": [1, 1]})
# EPC per user at k = 2: user 1 b (1 - 1/3) at rank 1 over 1 + 1/log2(3); user 2 a (1 - 2/3)
_EPC = [(2 / 3) / (1 + 1 / math.log2(3)), 1 / 3]
# ACLT(pop_ratio=0.5): a is the head (0 before < 1.5), b the tail; user 1 lists b, user 2 not
_ACLT = [1.0, 0.0]


def _summary(values: list[float], how: str) -> float:
    return {
        "median": statistics.median(values),
        "max": max(values),
        "min": min(values),
        "sum": math.fsum(values),
        "std": statistics.pstdev(values),
    }[how]


@pytest.mark.parametrize("how", ["median", "max", "min", "sum", "std"])
@pytest.mark.parametrize(
    ("name", "values"),
    [("epc", _EPC), ("aclt(pop_ratio=0.5", _ACLT)],
    ids=["epc", "aclt"],
)
def test_elliot_means_over_users_summarize_with_agg(
    name: str, values: list[float], how: str
) -> None:
    # before: every agg= gave the mean
    base = f"{name})@2" if "(" in name else f"{name}@2"
    named = f"{name}, agg='{how}')@2" if "(" in name else f"{name}(agg='{how}')@2"
    out = irm.evaluate(RECS, [base, named], qrels=TEST, interactions=TRAIN)
    assert out[base].item() == pytest.approx(statistics.fmean(values), abs=1e-12)
    assert out[named].item() == pytest.approx(_summary(values, how), abs=1e-12)


def test_efd_summarizes_with_agg_too() -> None:
    out = irm.evaluate(
        RECS, ["efd@2", "efd(agg='max')@2", "efd(agg='min')@2"], qrels=TEST, interactions=TRAIN
    )
    mean, high, low = out.row(0)[1:]
    assert low < mean < high


USERS = pl.DataFrame({"query_id": [1, 2], "group": ["p", "q"]})
ITEMS = pl.DataFrame({"doc_id": ["a", "b"], "group": ["x", "y"]})


def _refused(name: str, metric: str, why: str) -> str:
    return (
        f"metric {name!r}: agg='std' summarizes per-query values; {metric} has none to "
        f"summarize ({why}), so agg= would be ignored: drop agg='std'"
    )


_DISPARITY = (
    "it is one value of the whole table: the disparity of the short head's and the long "
    "tail's rates, each a ratio of sums over the users"
)
_MAD = "it is one value of the whole table: the mean absolute difference of the clusters' means"


@pytest.mark.parametrize(
    ("name", "tables", "message"),
    [
        (
            "pop_rsp(agg='std')@2",
            {"interactions": TRAIN},
            _refused("pop_rsp(agg='std')@2", "pop_rsp", _DISPARITY),
        ),
        (
            "pop_reo(agg='std')@2",
            {"interactions": TRAIN},
            _refused("pop_reo(agg='std')@2", "pop_reo", _DISPARITY),
        ),
        (
            "item_mad(agg='std')@2",
            {"groups": ITEMS},
            _refused("item_mad(agg='std')@2", "item_mad", _MAD),
        ),
        (
            "user_mad(agg='std')@2",
            {"user_groups": USERS},
            _refused("user_mad(agg='std')@2", "user_mad", _MAD),
        ),
        (
            "pop_rsp(p=1)@2",
            {"interactions": TRAIN},
            "metric 'pop_rsp(p=1)@2': unknown parameter 'p'; pop_rsp takes pop_ratio",
        ),
        (
            "item_mad(p=1)@2",
            {"groups": ITEMS},
            "metric 'item_mad(p=1)@2': unknown parameter 'p'; item_mad takes kind",
        ),
        (
            "epc(p=1)@2",
            {"interactions": TRAIN},
            "metric 'epc(p=1)@2': unknown parameter 'p'; epc takes agg",
        ),
    ],
    ids=["pop_rsp", "pop_reo", "item_mad", "user_mad", "pop_rsp-takes", "item_mad-takes", "epc"],
)
def test_whole_table_metrics_refuse_agg_by_name(
    name: str, tables: dict[str, pl.DataFrame], message: str
) -> None:
    with pytest.raises(MetricParameterError, match=f"^{re.escape(message)}$"):
        irm.evaluate(RECS, [name], qrels=TEST, **tables)


# One interactions= table with a by key: every family reads each group's own rows
# (before: arp did, Elliot's, mcc, reco_accuracy and Kotkov's serendipity read the
# whole table, so a group's values were not those of the group alone)
HIST = pl.DataFrame(
    {
        "query_id": [1, 2, 2, 3, 1, 1, 4, 5],
        "doc_id": ["c", "a", "b", "a", "a", "b", "d", "b"],
        "s": ["A"] * 4 + ["B"] * 4,
    }
)
RUN = pl.DataFrame(
    {
        "query_id": [1, 1, 2, 2, 1, 1, 2],
        "doc_id": ["a", "b", "a", "c", "a", "d", "b"],
        "s": ["A", "A", "A", "A", "B", "B", "B"],
        "rank": [1, 2, 1, 2, 1, 2, 1],
    }
)
QRELS = pl.DataFrame(
    {"query_id": [1, 2, 1, 2], "doc_id": ["a", "b", "d", "b"], "relevance": 1, "s": list("AABB")}
)
BY_METRICS = [
    "arp@2",
    "epc@2",
    "efd@2",
    "aclt(pop_ratio=0.5)@2",
    "pop_rsp(pop_ratio=0.5)@2",
    "pop_reo(pop_ratio=0.5)@2",
    "mcc@1",
    "reco_accuracy@1",
    "serendipity(kind='kotkov')@2",
]


@pytest.mark.parametrize(
    "metrics", [[m] for m in BY_METRICS[1:]] + [BY_METRICS], ids=[*BY_METRICS[1:], "all"]
)
@pytest.mark.parametrize("judged_by", [True, False], ids=["judged-by", "judgments-whole"])
def test_each_by_group_reads_its_own_interactions(metrics: list[str], judged_by: bool) -> None:
    qrels = QRELS if judged_by else QRELS.filter(pl.col("s") == "A").drop("s")
    out = irm.evaluate(RUN, metrics, qrels=qrels, interactions=HIST, by="s")
    for group in "AB":

        def alone(table: pl.DataFrame, g: str = group) -> pl.DataFrame:
            return table.filter(pl.col("s") == g).drop("s") if "s" in table.columns else table

        one = irm.evaluate(alone(RUN), metrics, qrels=alone(qrels), interactions=alone(HIST))
        assert_frame_equal(out.filter(pl.col("s") == group).drop("s"), one)


def test_by_key_of_another_dtype_in_the_interactions_is_refused() -> None:
    message = (
        "column 's' has dtype String in the run but Int64 in the interactions; cast one "
        "side to match, e.g. pl.col('s').cast(pl.String) on both"
    )
    history = HIST.with_columns(pl.col("s").replace_strict({"A": 0, "B": 1}))
    for metric in ("epc@2", "mcc@1", "serendipity(kind='kotkov')@2"):
        with pytest.raises(ColumnTypeError, match=f"^{re.escape(message)}$"):
            irm.evaluate(RUN, [metric], qrels=QRELS, interactions=history, by="s")


# A by group of the run with no judged query (every judgment in s='A'): the metrics of
# the group's recommendations (beyond accuracy, Elliot's, MAD, exposure) keep its row,
# over 0 judged queries (num_q 0, null where they read the relevant test items), as
# ee_loss does; the per-query accuracy metrics alone have no row for it, as ndcg@3.
# Before: arp@3 beside ndcg@3 gave num_q null; Elliot's and MAD dropped the row.
RECO = pl.DataFrame(
    {
        "query_id": [1, 1, 1, 2, 2, 3],
        "doc_id": [10, 11, 12, 11, 13, 10],
        "score": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4],
    }
)
BOTH = pl.concat(
    [
        RECO.with_columns(s=pl.lit("A")),
        RECO.with_columns(s=pl.lit("B")).filter(pl.col("query_id") != 2),
    ]
)
TEST_A = pl.DataFrame(
    {"query_id": [1, 1, 2, 2], "doc_id": [10, 12, 13, 14], "relevance": [2, 1, 1, 1], "s": "A"}
)
TRAIN_B = pl.DataFrame({"query_id": [1, 6, 7, 8], "doc_id": [10, 11, 12, 13]})
ITEM_GROUPS = pl.DataFrame({"doc_id": [10, 11, 12, 13], "group": ["head", "head", "tail", "tail"]})
USER_GROUPS = pl.DataFrame({"query_id": [1, 2, 3], "group": ["new", "old", "old"]})


@pytest.mark.parametrize(
    ("metrics", "tables", "row_b"),
    [
        (["epc@3", "aclt@3"], {"interactions": TRAIN_B}, ("B", 0, None, 0.0)),
        (["item_mad@3"], {"groups": ITEM_GROUPS}, ("B", 0, None)),
        (["user_mad@3"], {"user_groups": USER_GROUPS}, ("B", 0, None)),
        (["arp@3", "ndcg@3"], {"interactions": TRAIN_B}, ("B", 0, None, 1.0)),
        (["epc@3", "ndcg@3"], {"interactions": TRAIN_B}, ("B", 0, None, None)),
        (["item_mad@3", "ndcg@3"], {"groups": ITEM_GROUPS}, ("B", 0, None, None)),
        (["ee_loss"], {"groups": ITEM_GROUPS}, ("B", 0, None)),
        (["ndcg@3"], {}, None),
        (["mcc@3"], {"interactions": TRAIN_B}, None),
    ],
    ids=[
        "epc-aclt",
        "item_mad",
        "user_mad",
        "arp-ndcg",
        "epc-ndcg",
        "mad-ndcg",
        "ee",
        "ndcg",
        "mcc",
    ],
)
def test_a_group_without_judged_queries(
    metrics: list[str], tables: dict[str, pl.DataFrame], row_b: tuple[object, ...] | None
) -> None:
    out = irm.evaluate(BOTH, metrics, qrels=TEST_A, by="s", **tables)
    assert out["s"].to_list() == (["A", "B"] if row_b else ["A"])
    assert out["num_q"].dtype == pl.Int64
    if row_b is not None:
        assert out.row(1) == row_b


@pytest.mark.parametrize("engine", ["dask"])
@pytest.mark.parametrize(
    ("metrics", "tables"),
    [
        (["epc@3", "aclt@3"], {"qrels": TEST_A, "interactions": TRAIN_B}),
        (["mcc@1", "reco_accuracy@1"], {"qrels": QRELS, "interactions": HIST}),
        (["epc@2", "pop_reo(pop_ratio=0.5)@2"], {"qrels": QRELS, "interactions": HIST}),
    ],
    ids=["no-judged-group", "catalogue-by", "elliot-by"],
)
def test_engine_gives_one_machines_groups(
    engine: str,
    metrics: list[str],
    tables: dict[str, pl.DataFrame],
    request: pytest.FixtureRequest,
) -> None:
    run = BOTH if "aclt@3" in metrics else RUN
    one, got = one_and_engine(_engine(engine, request), run, metrics, tables, {"by": "s"})
    assert_frame_equal(got, one)
