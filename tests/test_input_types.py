"""Runs and judgments from pandas, pyarrow and any Arrow PyCapsule table evaluate as polars."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import polars_irmetrics as irm
from polars_irmetrics import ColumnTypeError

from .bad_inputs import qrels_frame, run_frame

METRICS = ["ndcg@10", "map", "P@2", "num_ret"]


class CapsuleOnly:
    """A table that offers nothing but the Arrow PyCapsule stream interface."""

    def __init__(self, frame: pl.DataFrame) -> None:
        self._table = frame.to_arrow()

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object:
        return self._table.__arrow_c_stream__(requested_schema)


CONVERTERS: dict[str, Callable[[pl.DataFrame], Any]] = {
    "pandas.DataFrame": lambda frame: frame.to_pandas(),
    "pyarrow.Table": lambda frame: frame.to_arrow(),
    "pyarrow.RecordBatch": lambda frame: frame.to_arrow().to_batches()[0],
    "PyCapsule object": CapsuleOnly,
}


@pytest.mark.parametrize("kind", CONVERTERS)
@pytest.mark.parametrize("per_query", [False, True])
def test_other_tables_give_the_polars_result(kind: str, per_query: bool) -> None:
    convert = CONVERTERS[kind]
    expected = irm.evaluate(run_frame(), METRICS, qrels=qrels_frame(), per_query=per_query)
    got = irm.evaluate(
        convert(run_frame()), METRICS, qrels=convert(qrels_frame()), per_query=per_query
    )
    assert isinstance(got, pl.DataFrame)
    assert got.equals(expected)


@pytest.mark.parametrize("kind", CONVERTERS)
def test_judgments_of_another_kind_in_the_namespace(kind: str) -> None:
    qrels = CONVERTERS[kind](qrels_frame())
    assert run_frame().irm.map(qrels=qrels) == run_frame().irm.map(qrels=qrels_frame())
    lazy = run_frame().lazy().irm.evaluate(["map"], qrels=qrels)
    assert lazy.collect().equals(run_frame().irm.evaluate(["map"], qrels=qrels_frame()))


NOT_A_TABLE = ", whose Arrow stream is not a table"
#: a placeholder for a type whose name and interfaces depend on an unpinned library
PANDAS_SERIES = "<pandas Series>"


def _expected(name: str, what: str) -> str:
    return (
        f"{name} must be a polars DataFrame or LazyFrame, a pandas DataFrame, a pyarrow "
        "Table or RecordBatch, or a table with the Arrow PyCapsule interface "
        f"(__arrow_c_stream__), got {what}; convert it to a table, e.g. pl.DataFrame(...) "
        "or pl.from_pandas(...)"
    )


@pytest.mark.parametrize(
    ("value", "what"),
    [
        (np.zeros((2, 3)), "numpy.ndarray"),
        ([("q1", "a", 1.0)], "list"),
        # pandas 3 gives a Series the Arrow stream (named pandas.Series), pandas 2.x not
        # (pandas.core.series.Series): the library's own words, whichever is installed
        (pd.Series(["q1"]), PANDAS_SERIES),
        (pa.chunked_array([["q1"]]), f"pyarrow.lib.ChunkedArray{NOT_A_TABLE}"),
        (pl.Series(["q1"]), "polars.series.series.Series"),
        # a str or Path is a file's name: told how to read it (test_inputs_round17.py)
        (b"run.txt", "bytes"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
@pytest.mark.parametrize("name", ["run", "qrels"])
def test_anything_else_is_named_in_full(value: object, what: str, name: str) -> None:
    args: dict[str, Any] = {"run": run_frame(), "qrels": qrels_frame()}
    args[name] = value
    pattern = re.escape(_expected(name, what)).replace(
        re.escape(PANDAS_SERIES),
        rf"pandas\.(core\.series\.)?Series({re.escape(NOT_A_TABLE)})?",
    )
    with pytest.raises(ColumnTypeError, match=pattern) as info:
        irm.evaluate(args["run"], ["map"], qrels=args["qrels"])
    assert isinstance(info.value, TypeError)
