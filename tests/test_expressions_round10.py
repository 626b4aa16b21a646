"""The metric expressions, round 10: ``ties='average'`` reads the scores' tie groups
and their positions from the scores, so ranks that do not order the scores from the
highest down leave no ranking to measure.

Before, ``irm.ndcg(k=3, ties='average')`` over rank 1, 2, 3 with scores 0.1, 5.0, 5.0
(the relevant document y at rank 2) gave 0.8155, the value of the ranking by score
(y and z tied at positions 1-2: ``0.5 (1 + 1/log2 3) / 1``), while the ranks put y and
z at positions 2-3 (0.5655): a silent mix of two orders. ``irm.evaluate`` refuses
``ties='average'`` on a table ordered by ranks; the expression's value is now null
there, as for any group that is not one ranking.
"""

from __future__ import annotations

import math

import polars as pl
import pytest

import polars_irmetrics as irm

FRAME = pl.DataFrame(
    {
        "query_id": ["a"] * 3,
        "doc_id": ["x", "y", "z"],
        "rank": [1, 2, 3],
        "score": [0.1, 5.0, 5.0],
        "relevance": [0, 1, 0],
    }
)


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
@pytest.mark.parametrize(
    "metric",
    [irm.ndcg(k=3, ties="average"), irm.dcg(k=3, ties="average")],
    ids=["ndcg", "dcg"],
)
def test_ranks_against_the_scores_are_no_ranking(metric: pl.Expr, lazy: bool) -> None:
    frame = FRAME.lazy() if lazy else FRAME
    out = frame.group_by("query_id").agg(metric)
    got = out.collect() if isinstance(out, pl.LazyFrame) else out
    assert got.row(0)[1] is None
    # a NaN score orders nothing either
    nan = FRAME.with_columns(score=pl.Series([float("nan"), 5.0, 5.0]))
    assert nan.group_by("query_id").agg(metric).row(0)[1] is None


def test_ranks_by_score_keep_the_tie_groups() -> None:
    """The ranks of rank_by_score (and ranks that agree with the scores) give
    scikit-learn's tie-averaged value: y and z tied at positions 1-2, y relevant."""
    tied = 0.5 * (1 / math.log2(2) + 1 / math.log2(3))
    by_score = FRAME.select(irm.ndcg(k=3, ties="average", rank=irm.rank_by_score())).item()
    assert by_score == pytest.approx(tied, rel=1e-15)
    agreeing = FRAME.with_columns(rank=pl.Series([3, 1, 2]))
    assert agreeing.select(irm.ndcg(k=3, ties="average")).item() == by_score
    # scores tied across the ranks' order, in either order of the tied documents
    swapped = FRAME.with_columns(rank=pl.Series([3, 2, 1]))
    assert swapped.select(irm.ndcg(k=3, ties="average")).item() == by_score
