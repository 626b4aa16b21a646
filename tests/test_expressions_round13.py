"""The metric expressions, round 13.

* A frame of no rows is no ranking: every ranking expression is null over it. With a
  ``doc_id`` column the row count was replaced by the documents' check (all present and
  distinct, which no rows pass), so the value was 0.0 (1.0 for ``rbp_residual``) as if
  the frame were a ranking that found nothing.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics import expressions

#: The required arguments of the ranking expressions that have some.
REQUIRED: dict[str, dict[str, float]] = {
    "f1_beta": {"k": 3},
    "iprec": {"recall": 0.5},
    "mar": {"k": 3},
    "pap": {"k": 3},
    "partial_auc": {"k": 3},
    "rprec_mult": {"multiple": 2.0},
}

#: Every public ranking expression (rank_by_score is a rank, not a metric).
RANKING: list[str] = [name for name in expressions.__all__ if name != "rank_by_score"]


def _metric(name: str) -> pl.Expr:
    function: Callable[..., pl.Expr] = getattr(irm, name)
    return function(**REQUIRED.get(name, {}))


def test_every_ranking_expression_is_covered() -> None:
    # a new expression with a required argument must be added to REQUIRED
    for name in RANKING:
        parameters = inspect.signature(getattr(irm, name)).parameters.values()
        required = {p.name for p in parameters if p.default is inspect.Parameter.empty}
        assert required == set(REQUIRED.get(name, {})), name
    assert len(RANKING) == 33


# ----------------------------------------------------- 1. a frame of no rows is null

EMPTY_SCHEMAS = {
    "ids": {"query_id": pl.String, "doc_id": pl.String, "rank": pl.Int64, "relevance": pl.Int64},
    "doc_id": {"doc_id": pl.String, "rank": pl.Int64, "relevance": pl.Int64},
    "no ids": {"rank": pl.Int64, "relevance": pl.Int64},
}


@pytest.mark.parametrize("lazy", [False, True], ids=["frame", "lazy"])
@pytest.mark.parametrize("schema", list(EMPTY_SCHEMAS), ids=list(EMPTY_SCHEMAS))
@pytest.mark.parametrize("name", RANKING)
def test_a_frame_of_no_rows_is_null(name: str, schema: str, lazy: bool) -> None:
    # fails on the old code where the frame has a doc_id column: 0.0 (rbp_residual 1.0)
    empty = pl.DataFrame(schema=EMPTY_SCHEMAS[schema])
    frame = empty.lazy() if lazy else empty
    out = frame.select(_metric(name))
    got = out.collect() if isinstance(out, pl.LazyFrame) else out
    assert got.rows() == [(None,)]


@pytest.mark.parametrize("name", RANKING)
def test_a_ranking_still_has_its_value(name: str) -> None:
    # the fix keeps the documents' check: a one-query ranking has a value, a document
    # listed twice none
    frame = pl.DataFrame(
        {
            "query_id": ["q"] * 3,
            "doc_id": ["a", "b", "c"],
            "rank": [1, 2, 3],
            "relevance": [1, 0, 1],
        }
    )
    assert frame.select(_metric(name)).item() is not None
    twice = frame.with_columns(doc_id=pl.lit("a"))
    assert twice.select(_metric(name)).item() is None
