"""Passes of the run and of the cluster tables that Elliot's families share in one
call: Elliot's metrics and the MAD metrics read one filter of the run to its top k, and
a MAD cluster table is grouped once for its checks and its joins; the values and the
refusals are those of the calls before."""

from __future__ import annotations

import re
import warnings
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import DuplicateError

RUN = pl.DataFrame(
    {
        "query_id": [1, 1, 1, 2, 2, 3],
        "doc_id": [10, 11, 12, 10, 12, 11],
        "rank": [1, 2, 3, 1, 2, 1],
    }
)
QRELS = pl.DataFrame({"query_id": [1, 2, 3], "doc_id": [11, 12, 13], "relevance": [1, 1, 1]})
INTERACTIONS = pl.DataFrame({"query_id": [1, 2, 3, 3], "doc_id": [10, 11, 12, 10]})
GROUPS = pl.DataFrame({"doc_id": [10, 11, 12], "group": [0, 1, 1]})
USER_GROUPS = pl.DataFrame({"query_id": [1, 2, 3], "group": ["a", "b", "b"]})


def _evaluate(metrics: list[str], **tables: Any) -> pl.LazyFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return irm.evaluate(RUN.lazy(), metrics, qrels=QRELS.lazy(), **tables)


def _top_filters(plan: pl.LazyFrame, k: int) -> int:
    """The filters of the run to the rows at ranks ``<= k`` (the positions
    of a run with ranks; a filter of those rows to a smaller cutoff after reads them)."""
    pattern = re.compile(rf'FILTER col\("rank"\)\.cast\(Int64\) <= {k}$')
    return sum(bool(pattern.search(line)) for line in plan.explain().splitlines())


#: The side table each metric reads (Elliot's others: the interactions).
_READS = {"ndcg": None, "item_mad": "groups", "user_mad": "user_groups"}


@pytest.mark.parametrize(
    ("metrics", "tables", "filters"),
    [
        (["aclt@2", "item_mad@2"], {"interactions": INTERACTIONS, "groups": GROUPS}, 1),
        (
            ["ndcg@2", "epc@2", "user_mad@2", "item_mad@2"],
            {"interactions": INTERACTIONS, "groups": GROUPS, "user_groups": USER_GROUPS},
            1,
        ),
        # two cutoffs: each family filters to its own
        (["aclt@1", "item_mad@2"], {"interactions": INTERACTIONS, "groups": GROUPS}, 2),
    ],
)
def test_elliot_and_mad_filter_the_run_once(
    metrics: list[str], tables: dict[str, pl.DataFrame], filters: int
) -> None:
    lazy = {name: frame.lazy() for name, frame in tables.items()}
    plan = _evaluate(metrics, **lazy)
    assert sum(_top_filters(plan, k) for k in (1, 2)) == filters
    together = plan.collect()
    for metric in metrics:
        read = _READS.get(metric.split("@")[0], "interactions")
        reads = {name: frame for name, frame in lazy.items() if name == read}
        alone = _evaluate([metric], **reads).collect()
        assert together[metric].to_list() == alone[metric].to_list()


@pytest.mark.parametrize(
    "dtype", [pl.Int64(), pl.UInt8(), pl.String(), pl.Categorical(), pl.Enum(["1", "0"])]
)
def test_clusters_of_any_id_dtype_give_the_same_value(dtype: pl.DataType) -> None:
    # the clusters counted as the table holds them, the one of each id read as text
    source = GROUPS if dtype.is_integer() else GROUPS.with_columns(pl.col("group").cast(pl.String))
    groups = source.with_columns(pl.col("group").cast(dtype))
    got = _evaluate(["item_mad@2"], groups=groups.lazy()).collect()
    expected = _evaluate(["item_mad@2"], groups=GROUPS.lazy()).collect()
    assert got["item_mad@2"].to_list() == expected["item_mad@2"].to_list()


CLUSTER_ERRORS: list[tuple[str, dict[str, list[Any]], type[Exception], str]] = [
    (
        "two clusters of one id",
        {"doc_id": [10, 11, 11, 12], "group": ["a", "b", "a", "b"]},
        DuplicateError,
        "groups= gives doc_id '11' more than one group; Elliot's MAD metrics put each id in "
        "one cluster: keep one row per doc_id, e.g. .unique('doc_id')",
    ),
    (
        # a row of a null cluster is not there (round 28): 11 is in one, b
        "two clusters beside a null one",
        {"doc_id": [10, 11, 11, 11, 12], "group": ["a", "b", None, "a", "b"]},
        DuplicateError,
        "groups= gives doc_id '11' more than one group",
    ),
]

#: rows of a null cluster (round 28: refused before, while the exposure measures read
#: the same groups= row as no group; which checks run must not depend on the metrics)
NULL_CLUSTERS = {
    "a cluster and a null one": {"doc_id": [10, 11, 11, 12], "group": ["a", "b", None, "b"]},
    # one row per (item, cluster): 12 twice in b is refused (round 30), as the exposure
    # measures refuse it
    "a null cluster": {"doc_id": [10, 11, 12, 13], "group": ["a", None, "b", "b"]},
}


@pytest.mark.parametrize("case", list(NULL_CLUSTERS))
def test_a_null_cluster_puts_its_id_in_none(case: str) -> None:
    table = pl.DataFrame(NULL_CLUSTERS[case])
    got = _evaluate(["item_mad@2"], groups=table.lazy()).collect()
    dropped = _evaluate(["item_mad@2"], groups=table.drop_nulls("group").lazy()).collect()
    assert got.rows() == dropped.rows()


@pytest.mark.parametrize("dtype", [pl.String(), pl.Categorical()])
@pytest.mark.parametrize(
    ("case", "groups", "error", "message"), CLUSTER_ERRORS, ids=[c[0] for c in CLUSTER_ERRORS]
)
def test_bad_clusters_are_refused(
    dtype: pl.DataType,
    case: str,
    groups: dict[str, list[Any]],
    error: type[Exception],
    message: str,
) -> None:
    table = pl.DataFrame(groups).with_columns(pl.col("group").cast(dtype))
    with pytest.raises(error, match=re.escape(message)):
        _evaluate(["item_mad@2"], groups=table.lazy()).collect()
