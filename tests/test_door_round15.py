"""Round 15 of the door's joints: what a prober found, pinned."""

from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_irmetrics as irm

# --- a query without a judgment: null in the expressions, as evaluate leaves it out ----

#: A run full-joined with judgments that lack q2 (every label of q2 null) and judge q3's
#: only document -1 (a judgment: the query stays).
UNJUDGED_QUERY = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q1", "q2", "q2", "q3"],
        "doc_id": ["a", "b", "z", "a", "c", "a"],
        "rank": [1, 2, None, 1, 2, 1],
        "relevance": [1, None, 1, None, None, -1],
    }
)

EXPRESSIONS = [
    ("P@2", irm.precision(k=2)),
    ("ndcg@2", irm.ndcg(k=2)),
    ("map", irm.map()),
    ("num_ret", irm.num_ret()),
    ("unjudged@2", irm.unjudged(k=2)),
    ("rbp_residual", irm.rbp_residual()),
]


@pytest.mark.parametrize(("name", "expr"), EXPRESSIONS, ids=[n for n, _ in EXPRESSIONS])
def test_a_group_without_a_judgment_is_null_as_evaluate_leaves_it_out(
    name: str, expr: pl.Expr
) -> None:
    by_expression = UNJUDGED_QUERY.group_by("query_id").agg(expr.alias(name)).sort("query_id")
    # q2 was 0 (1.0 for unjudged@2 and rbp_residual): a query nobody judged scored
    assert by_expression.filter(pl.col("query_id") == "q2")[name].to_list() == [None]
    by_evaluate = irm.evaluate(UNJUDGED_QUERY, [name], per_query=True).sort("query_id")
    assert_frame_equal(
        by_expression.drop_nulls(name), by_evaluate, check_dtypes=False, check_exact=True
    )
