"""The same column checks whichever metric reads the run (round 10).

- neighbour recall read a float or text rank column without a check: ranks 1.5 and 2.5
  gave ``neighbor_recall@1`` 1.0 (cast to 1 and 2 in silence), text ranks polars'
  ``ComputeError: cannot compare string with numeric type``, where the ranking and
  rank-similarity metrics refuse them by name;
- a Boolean score (a ranking of two tie groups) is read by the ranking metrics and the
  exposure measures, and was refused by the rank-similarity ones (rbo, jaccard): read
  there too (neighbour recall, which reads distances from scores, refuses it).
"""

from __future__ import annotations

import re

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnTypeError

EXACT = pl.DataFrame(
    {"query_id": ["a", "a"], "doc_id": ["x", "y"], "rank": [1, 2], "score": [2.0, 1.0]}
)
QRELS = pl.DataFrame({"query_id": ["a"], "doc_id": ["x"], "relevance": [1]})


@pytest.mark.parametrize(
    ("ranks", "dtype", "fix"),
    [
        (  # the cast alone would move 1.5 to rank 1
            [1.5, 2.5],
            "Float64",
            "where every value is a whole number, cast it, e.g. pl.col('rank').cast(pl.Int64) "
            "(a cast drops a fraction: 1.5 becomes 1; check (pl.col('rank') % 1 == 0).all() "
            "first)",
        ),
        (["1", "2"], "String", "cast it, e.g. pl.col('rank').cast(pl.Int64)"),
    ],
    ids=["float", "text"],
)
@pytest.mark.parametrize(
    ("metric", "tables"),
    [
        ("neighbor_recall@1", {"neighbors": EXACT}),
        ("rbo", {"reference": EXACT}),
        ("ndcg@2", {"qrels": QRELS}),
    ],
    ids=["neighbors", "rbo", "ndcg"],
)
def test_a_rank_that_is_no_integer_is_refused_alike(
    ranks: list[object], dtype: str, fix: str, metric: str, tables: dict[str, pl.DataFrame]
) -> None:
    run = EXACT.with_columns(rank=pl.Series(ranks))
    message = f"column 'rank' in the run has dtype {dtype}; it must be an integer: {fix}"
    with pytest.raises(ColumnTypeError, match=f"^{re.escape(message)}$"):
        irm.evaluate(run, [metric], **tables)


def test_a_boolean_score_ranks_for_rank_similarity() -> None:
    run = pl.DataFrame(
        {"query_id": ["a"] * 3, "doc_id": ["x", "y", "z"], "score": [True, False, True]}
    )
    floats = run.with_columns(pl.col("score").cast(pl.Float64))
    out = irm.evaluate(run, ["rbo", "jaccard@2"], reference=floats)
    assert isinstance(out, pl.DataFrame)
    assert out.equals(irm.evaluate(floats, ["rbo", "jaccard@2"], reference=floats))
    message = (
        "column 'score' in the run has dtype Boolean; neighbour recall reads distances from "
        "scores: cast it, e.g. pl.col('score').cast(pl.Float64)"
    )
    with pytest.raises(ColumnTypeError, match=f"^{re.escape(message)}$"):
        irm.evaluate(run, ["neighbor_recall@1"], neighbors=floats)
