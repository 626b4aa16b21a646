"""RecTools' metrics computed beside the ranking plan (covered_users@k, pAUC and pAp
with insufficient_handling='exclude', Kotkov's serendipity) read that plan's counts per
ranking: one group-by of the run for its checks and theirs, the values those of each
metric alone."""

from __future__ import annotations

import warnings

import polars as pl
import pytest

import polars_irmetrics as irm

RUN = pl.DataFrame(
    {
        "query_id": [1, 1, 1, 2, 2, 3],
        "doc_id": [10, 11, 12, 10, 12, 11],
        "rank": [1, 2, 3, 1, 2, 1],
    }
)
QRELS = pl.DataFrame({"query_id": [1, 2, 3], "doc_id": [11, 12, 13], "relevance": [1, 1, 1]})


def _evaluate(metrics: list[str]) -> pl.LazyFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return irm.evaluate(RUN.lazy(), metrics, qrels=QRELS.lazy())


def _ranking_group_bys(plan: pl.LazyFrame) -> int:
    """The group-bys of the run per query into counts per ranking (a cached one is
    printed once)."""
    lines = plan.explain().splitlines()
    return sum("__irm_facts_" in line and "] BY [" in line for line in lines)


@pytest.mark.parametrize(
    "metrics",
    [
        ["ndcg@2", "covered_users@2"],
        ["ndcg@2", "partial_auc(insufficient_handling='exclude')@2"],
        ["P@1", "pap(insufficient_handling='exclude')@2", "covered_users@1"],
    ],
)
def test_rectools_metrics_read_the_ranking_plans_counts(metrics: list[str]) -> None:
    plan = _evaluate(metrics)
    assert _ranking_group_bys(plan) == 1
    # the values of each metric alone
    together = plan.collect()
    for metric in metrics:
        alone = _evaluate([metric]).collect()
        assert together[metric].to_list() == alone[metric].to_list()
