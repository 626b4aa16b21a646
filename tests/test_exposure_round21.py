"""Round 21: the exposure measures say what they leave out (tests/test_exposure_round20.py
has the rounds before)."""

from __future__ import annotations

import warnings
from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm

# q1 ranks a (relevant, group x), b (relevant, no group), c (group y); q2 ranks a, d
# (relevant, group y): groups= gives 3 of the run's 4 documents a group and 2 of the 3
# relevant documents one, too many for the warning of groups= lacking most of them
RUN = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q1", "q2", "q2"],
        "doc_id": ["a", "b", "c", "a", "d"],
        "score": [3.0, 2.0, 1.0, 2.0, 1.0],
    }
)
QRELS = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q9"],
        "doc_id": ["a", "b", "d", "zz"],
        "relevance": [1, 1, 1, 1],
    }
)
GROUPS = pl.DataFrame({"doc_id": ["a", "c", "d"], "group": ["x", "y", "y"]})
TARGET = pl.DataFrame({"group": ["x", "y"], "target": [0.5, 0.5]})


def _lost(named: str) -> str:
    # b of q1: the one relevant document of the run's queries without a group (zz of q9,
    # a query the run does not rank, is not counted)
    return (
        "groups= gives no group to 1 relevant judged document(s) in 1 query of the run "
        f"(first: 'b' of query 'q1'): {named} leave them out (a relevant document without "
        "a group counts in no group: the expected-exposure targets leave its exposure "
        "out, and awrf's target, the relevant documents' groups, does not count it). Give "
        "each relevant document its group in groups= (same 'doc_id' spelling), or drop it "
        "from the judgments where it is meant to count in no group"
    )


LOST_CASES: list[tuple[str, list[str], dict[str, Any], list[str]]] = [
    ("ee_loss and awrf", ["ee_loss", "awrf"], {}, [_lost("ee_loss, awrf")]),
    ("buckets", ["ee_loss", "awrf"], {"buckets": 2}, [_lost("ee_loss, awrf")]),
    (
        "per query",
        ["ee_disparity", "ee_relevance"],
        {"per_query": True},
        [_lost("ee_disparity, ee_relevance")],
    ),
    ("awrf_ndcg alone", ["awrf_ndcg"], {}, [_lost("awrf_ndcg")]),
    # awrf with target= reads no relevant document's group: nothing to say
    ("awrf with target=", ["awrf"], {"target": TARGET}, []),
    # rnd reads no relevant document's group: not named beside ee_loss
    ("ee_loss and rnd", ["ee_loss", "rnd"], {}, [_lost("ee_loss")]),
    # every relevant document grouped: silent
    (
        "all grouped",
        ["ee_loss"],
        {"groups": pl.DataFrame({"doc_id": ["a", "b", "c", "d"], "group": ["x", "x", "y", "y"]})},
        [],
    ),
]


@pytest.mark.parametrize(
    ("metrics", "extra", "expected"),
    [case[1:] for case in LOST_CASES],
    ids=[case[0] for case in LOST_CASES],
)
def test_relevant_documents_without_a_group_are_named(
    metrics: list[str], extra: dict[str, Any], expected: list[str]
) -> None:
    kwargs: dict[str, Any] = {"qrels": QRELS, "groups": GROUPS, **extra}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        irm.evaluate(RUN, metrics=metrics, **kwargs)
    said = [str(w.message) for w in caught if issubclass(w.category, irm.CoverageWarning)]
    assert said == expected


def test_relevant_documents_without_a_group_are_named_per_segment_query() -> None:
    # by=: the query named as the run gives it (not the plan's struct of keys)
    run = RUN.with_columns(pl.Series("seg", ["s", "s", "s", "t", "t"]))
    queries = pl.DataFrame({"query_id": ["q1", "q2", "q9"], "seg": ["s", "t", "t"]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        irm.evaluate(
            run, metrics=["ee_loss"], qrels=QRELS, groups=GROUPS, by="seg", queries=queries
        )
    said = [str(w.message) for w in caught if issubclass(w.category, irm.CoverageWarning)]
    assert said == [_lost("ee_loss")]
