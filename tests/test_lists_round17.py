"""List-shaped runs, round 17: a query in two rows of a run whose ``doc_id`` holds one
list per query is refused by its name, saying why and how to join the rows. Each row's
positions start at 1, so the two rows' documents shared ranks, and the refusal read
"query 'q1' has 1 duplicate rank(s) ... break the ties, or rank by score", which named
neither the rows nor the fix."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import DuplicateError

QRELS = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["a", "a"], "relevance": [1, 1]})
RUN = pl.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": [["a", "b"], ["c"], ["a"]]})
FIX = (
    "rows of the run, whose 'doc_id' holds one list per query, its ranking in order (rank "
    "= position in the list): each row's positions start at 1, so the rows' documents would "
    "share ranks; keep one row per query, e.g. join the lists: .group_by('query_id', "
    "maintain_order=True).agg(pl.col('doc_id').explode())"
)
CASES = [
    ("eager", RUN, {}),
    ("lazy", RUN.lazy(), {}),
    ("per_query", RUN, {"per_query": True}),
    ("buckets", RUN.lazy(), {"buckets": 2}),
    # the same list twice: its documents were named as listed twice
    ("same_list", RUN.with_columns(doc_id=pl.Series([["a", "b"], ["a", "b"], ["a"]])), {}),
]


def _collected(out: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return out.collect() if isinstance(out, pl.LazyFrame) else out


@pytest.mark.parametrize(("name", "run", "options"), CASES, ids=[c[0] for c in CASES])
def test_a_query_in_two_rows_of_a_list_shaped_run_is_named(
    name: str, run: pl.DataFrame | pl.LazyFrame, options: dict[str, Any]
) -> None:
    with pytest.raises(DuplicateError) as caught:
        _collected(irm.evaluate(run, ["ndcg@2"], qrels=QRELS, **options))
    assert str(caught.value) == f"query 'q1' is in 2 {FIX}"


def test_the_fix_given_evaluates_the_joined_ranking() -> None:
    joined = RUN.group_by("query_id", maintain_order=True).agg(pl.col("doc_id").explode())
    # q1 ranks a, b, c with a relevant at rank 1; q2 ranks a: ndcg@2 1 for both
    assert irm.evaluate(joined, ["ndcg@2"], qrels=QRELS)["ndcg@2"].item() == 1.0


def test_one_row_per_system_is_not_a_query_twice() -> None:
    run = pl.DataFrame(
        {"system": ["A", "B", "B"], "query_id": ["q1"] * 3, "doc_id": [["a", "b"], ["b"], ["a"]]}
    )
    # A ranks a first in q1: 1; B ranks b alone: 0; q2 unretrieved: 0; means 0.5 and 0
    out = irm.evaluate(run.head(2), ["ndcg@2"], qrels=QRELS, systems="system")
    assert out["ndcg@2"].to_list() == [0.5, 0.0]
    with pytest.raises(DuplicateError) as caught:
        irm.evaluate(run, ["ndcg@2"], qrels=QRELS, systems="system")
    assert str(caught.value) == f"query 'q1' (system='B') is in 2 {FIX}"
