"""The exposure measures' positions from a rank column: where every ranking is ranked
1 to its length, each rank once, the positions are the ranks, unsorted; where any is
not (a gap), every ranking is sorted
(:func:`~polars_irmetrics.exposure.plan.build_exposure_plan`). Both must give the
positions, and so the bits, of the sort of every ranking, whatever order the rows come
in, and a run mixing both kinds of rankings likewise."""

from __future__ import annotations

from typing import Any
from unittest.mock import patch

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_irmetrics as irm
from polars_irmetrics.exposure import plan as exposure_plan
from tests.test_exposure_by import EXPOSURE

from .conftest import Evaluate

#: Every exposure measure, with each user model.
METRICS = EXPOSURE


def _sorted_only(
    rows: pl.LazyFrame, per_ranking: pl.LazyFrame, query_id: str, doc_id: str, rank: str
) -> pl.LazyFrame:
    return exposure_plan._sorted_positions(rows, query_id, doc_id, rank, True)


@st.composite
def _tables(draw: st.DrawFn) -> dict[str, Any]:
    """Rankings of up to 24 of 30 documents, ranked 1..n (rows shuffled) or with a gap
    (ties and fractions are refused, as the accuracy metrics refuse them); one to two
    samples; judgments and two groups."""
    rows = []
    for q in range(draw(st.integers(1, 4))):
        for sample in range(draw(st.integers(1, 2))):
            docs = draw(st.lists(st.integers(0, 29), min_size=1, max_size=24, unique=True))
            ranks = list(range(1, len(docs) + 1))
            if draw(st.booleans()):  # a gap after rank 2
                ranks = [r + (r > 2) for r in ranks]
            rows += [(f"q{q}", sample, f"d{d}", r) for d, r in zip(docs, ranks, strict=True)]
    run = pl.DataFrame(rows, schema=["query_id", "sample", "doc_id", "rank"], orient="row")
    order = draw(st.permutations(range(run.height)))
    run = run[list(order)]
    judged = [
        (f"q{q}", f"d{d}", 1 + d % 3)
        for q in range(4)
        for d in draw(st.lists(st.integers(0, 29), min_size=1, max_size=8, unique=True))
    ]
    qrels = pl.DataFrame(judged, schema=["query_id", "doc_id", "relevance"], orient="row")
    groups = pl.DataFrame({"doc_id": [f"d{d}" for d in range(30)], "group": ["a", "b", "b"] * 10})
    return {"run": run, "qrels": qrels, "groups": groups}


@settings(max_examples=8, deadline=None)
@given(_tables(), st.booleans())
def test_positions_from_the_ranks_give_the_sorts_bits(
    tables: dict[str, Any], sampled: bool
) -> None:
    run = tables["run"] if sampled else tables["run"].filter(pl.col("sample") == 0)
    run = run if sampled else run.drop("sample")
    given_ = {"qrels": tables["qrels"], "groups": tables["groups"]}
    for per_query in (False, True):
        fast = irm.evaluate(run, METRICS, **given_, per_query=per_query)
        with patch.object(exposure_plan, "_ranked_positions", _sorted_only):
            sorted_ = irm.evaluate(run, METRICS, **given_, per_query=per_query)
        assert_frame_equal(fast, sorted_, check_exact=True)


def test_the_geometric_model_counts_the_relevant_above_in_rank_order(
    evaluate: Evaluate,
) -> None:
    # a (rank 1), c (3) and e (5) relevant, the rows in another order: exposure a 1,
    # c 0.5^2 * 0.5, e 0.5^4 * 0.5^2; the target: three relevant documents share the
    # geometric model's first three positions, decay 0.25: (1 + 0.25 + 0.0625) / 3
    run = pl.DataFrame(
        {"query_id": ["q"] * 5, "doc_id": ["e", "c", "a", "d", "b"], "rank": [5, 3, 1, 4, 2]}
    )
    qrels = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["c", "a", "e"], "relevance": [1] * 3})
    groups = pl.DataFrame({"doc_id": list("abcde"), "group": ["x", "y", "y", "x", "y"]})
    got = evaluate(run, ["ee_disparity"], qrels=qrels, groups=groups)
    x, y = 1.0, 0.5**3 + 0.5**6  # group x holds a; y holds c and e
    assert got.item(0, 1) == x * x + y * y


def test_a_ranking_ranked_one_to_n_is_read_unsorted(evaluate: Evaluate) -> None:
    # b ranked 1, a 2, x 3, rows given in another order: rbp exposure 1, 0.5, 0.25
    run = pl.DataFrame({"query_id": ["q"] * 3, "doc_id": ["x", "b", "a"], "rank": [3, 1, 2]})
    qrels = pl.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "relevance": [1, 1]})
    got = evaluate(run, ["ee_disparity(browsing='rbp')"], qrels=qrels)
    assert got.item(0, 1) == 1 + 0.5**2 + 0.25**2


def test_a_run_mixing_whole_and_gapped_rankings_is_sorted_whole() -> None:
    # q1 ranked 1..3, q2 with a gap (1, 3, 4): the run is sorted, q1's positions as
    # its ranks say, q2's 0, 1, 2
    run = pl.DataFrame(
        {
            "query_id": ["q1"] * 3 + ["q2"] * 3,
            "doc_id": ["c", "a", "b", "a", "c", "b"],
            "rank": [3, 1, 2, 4, 1, 3],
        }
    )
    qrels = pl.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["b", "b"], "relevance": [1, 1]})
    got = irm.evaluate(run, ["ee_relevance(browsing='rbp')"], qrels=qrels, per_query=True)
    # one relevant document: target 1; exposure of b at position 1 in both: 0.5
    assert got.rows() == [("q1", 0.5), ("q2", 0.5)]
    lazy = irm.evaluate(
        run.lazy(), ["ee_relevance(browsing='rbp')"], qrels=qrels.lazy(), per_query=True
    )
    assert lazy.collect().rows() == [("q1", 0.5), ("q2", 0.5)]
