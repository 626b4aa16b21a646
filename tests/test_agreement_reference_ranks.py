"""reference= (intersection@k, unexpectedness@k): its ranks checked as a run's are."""

from __future__ import annotations

import re

import polars as pl
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnTypeError, InvalidValueError

RECS = pl.DataFrame(
    {"query_id": [1, 1, 1, 2, 2, 2], "doc_id": [10, 11, 12, 10, 13, 14], "rank": [1, 2, 3] * 2}
)
REF = pl.DataFrame({"query_id": [1, 1, 2, 2], "doc_id": [10, 12, 14, 99], "rank": [1, 2, 1, 2]})


def _below_one(frame: str, n: int) -> str:
    return (
        f"column 'rank' of the {frame} has {n} rank(s) below 1 in query 1; ranks start at "
        "1 for the top document: add 1 to 0-based ranks, e.g. pl.col('rank') + 1"
    )


def _not_integer(frame: str) -> str:
    return (
        f"column 'rank' in the {frame} has dtype Float64; it must be an integer: where every "
        "value is a whole number, cast it, e.g. pl.col('rank').cast(pl.Int64) (a cast drops a "
        "fraction: 1.5 becomes 1; check (pl.col('rank') % 1 == 0).all() first)"
    )


@pytest.mark.parametrize("metric", ["intersection(ref_k=1)@3", "unexpectedness@3"])
@pytest.mark.parametrize(
    ("run", "reference", "error", "message"),
    [
        (
            RECS,
            REF.with_columns(pl.col("rank") - 1),
            InvalidValueError,
            _below_one("reference (reference=)", 1),
        ),
        (
            RECS,
            REF.with_columns(pl.col("rank") - 3),
            InvalidValueError,
            _below_one("reference (reference=)", 2),
        ),
        (
            RECS,
            REF.with_columns(pl.col("rank").cast(pl.Float64)),
            ColumnTypeError,
            _not_integer("reference (reference=)"),
        ),
        (RECS.with_columns(pl.col("rank") - 1), REF, InvalidValueError, _below_one("run", 1)),
        (
            RECS.with_columns(pl.col("rank").cast(pl.Float64)),
            REF,
            ColumnTypeError,
            _not_integer("run"),
        ),
    ],
    ids=["ref-0-based", "ref-negative", "ref-float", "run-0-based", "run-float"],
)
def test_reference_ranks_checked(
    metric: str, run: pl.DataFrame, reference: pl.DataFrame, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        irm.evaluate(run, [metric], reference=reference)


def test_valid_reference_unchanged() -> None:
    out = irm.evaluate(RECS, ["intersection(ref_k=1)@3", "unexpectedness@3"], reference=REF)
    assert out.row(0) == (2, pytest.approx(1 / 3), 0.5)
