"""Inputs, round 10: a 256-bit decimal column (pyarrow's ``decimal256``) made polars
panic while converting the table (``pyo3_runtime.PanicException``, a ``BaseException``
that ``except Exception`` misses, with a Rust backtrace on stderr): refused by name."""

from __future__ import annotations

import re

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import polars_irmetrics as irm
from polars_irmetrics.errors import ColumnTypeError

TABLE = pa.table(
    {
        "query_id": ["q1", "q1"],
        "doc_id": ["a", "b"],
        "score": pa.array([2, 1]).cast(pa.decimal256(40, 2)),
    }
)
QRELS = pl.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "relevance": [1]})
MESSAGE = (
    "column 'score' of the run holds 256-bit decimals (decimal256(40, 2)), which polars "
    "does not read: cast it before, e.g. to pa.decimal128(38, 2) or pa.float64() with "
    "table.cast(...)"
)


@pytest.mark.parametrize(
    "given",
    [TABLE, TABLE.to_batches()[0], TABLE.to_pandas(types_mapper=pd.ArrowDtype)],
    ids=["table", "batch", "pandas"],
)
def test_a_256_bit_decimal_is_refused_by_name(given: object) -> None:
    with pytest.raises(ColumnTypeError, match=f"^{re.escape(MESSAGE)}$"):
        irm.evaluate(given, ["map"], qrels=QRELS)  # type: ignore[arg-type]


def test_the_cast_the_message_gives_is_read() -> None:
    narrow = TABLE.cast(
        pa.schema(
            [("query_id", pa.string()), ("doc_id", pa.string()), ("score", pa.decimal128(38, 2))]
        )
    )
    out = irm.evaluate(narrow, ["map"], qrels=QRELS)
    assert isinstance(out, pl.DataFrame)
    assert out.row(0) == (1, 1.0)
