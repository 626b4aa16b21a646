"""What :func:`~polars_irmetrics.evaluate` accepts as a run or judgments, as polars frames.

polars DataFrames and LazyFrames are used as they are. A pandas DataFrame, a pyarrow
Table or RecordBatch, and any object with the Arrow PyCapsule stream interface
(``__arrow_c_stream__``: DuckDB and Ibis results, nanoarrow, ...) are converted to a
polars DataFrame first (``pl.from_pandas``, or ``pl.DataFrame``, which reads the Arrow
stream, without a copy where the buffers allow it); a pandas table's named index levels
are columns there, as ``pa.Table.from_pandas`` keeps them. pandas is not a dependency: it is
only looked for when it was already imported.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any, Protocol, TypeAlias, runtime_checkable

import polars as pl
import pyarrow as pa

from polars_irmetrics.errors import ColumnTypeError

__all__ = ["ArrowStreamExportable", "FrameInput", "as_polars", "type_name"]


@runtime_checkable
class ArrowStreamExportable(Protocol):
    """An object with the Arrow PyCapsule stream interface (pyarrow, pandas 2.2+, DuckDB)."""

    def __arrow_c_stream__(self, requested_schema: object | None = None) -> object: ...


#: A run or judgments as :func:`~polars_irmetrics.evaluate` takes them.
FrameInput: TypeAlias = "pl.DataFrame | pl.LazyFrame | ArrowStreamExportable"


def type_name(value: object) -> str:
    """The full name of ``value``'s type: ``pandas.core.series.Series``, ``dict``."""
    kind = type(value)
    module = kind.__module__
    return kind.__qualname__ if module == "builtins" else f"{module}.{kind.__qualname__}"


def as_polars(frame: object, name: str) -> pl.DataFrame | pl.LazyFrame:
    """``frame`` as a polars DataFrame or LazyFrame, converted if it is a table of
    another library; a :class:`~polars_irmetrics.errors.ColumnTypeError` otherwise.

    Examples
    --------
    >>> import pyarrow as pa
    >>> as_polars(pa.table({"query_id": ["q1"]}), "run")
    shape: (1, 1)
    ┌──────────┐
    │ query_id │
    │ ---      │
    │ str      │
    ╞══════════╡
    │ q1       │
    └──────────┘
    >>> as_polars([("q1", "d1")], "run")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.ColumnTypeError: run must be a polars DataFrame or LazyFrame, ...
    """
    if isinstance(frame, pl.DataFrame | pl.LazyFrame):
        return frame
    pandas = sys.modules.get("pandas")
    if pandas is not None and isinstance(frame, pandas.DataFrame):
        # a named index level is a column (df.set_index('query_id')), as
        # pa.Table.from_pandas keeps it; an unnamed one (a filter's row labels) is not
        named = [n for n in frame.index.names if n is not None and n not in frame.columns]
        if named:
            frame = frame.reset_index(level=named)
        typed: pa.Schema | None = None
        # columns Arrow cannot type: refused by their conversion below, by name
        with contextlib.suppress(pa.lib.ArrowException, TypeError, ValueError):
            typed = pa.Schema.from_pandas(frame, preserve_index=False)
        if typed is not None:
            _refuse_wide_decimals(typed, name)
        try:
            return pl.from_pandas(frame)
        # polars raises TypeError for an object column whose first value is text and a
        # later one a number (ValueError for a name held twice)
        except (pa.lib.ArrowException, pl.exceptions.PolarsError, TypeError, ValueError) as error:
            raise _unconverted(name, frame, error) from error
    if isinstance(frame, str | os.PathLike):  # a file's name, not its table
        path = os.fspath(frame)
        trec = {"run": ("read_trec_run", "run"), "qrels": ("read_trec_qrels", "qrels")}
        reader, kind = trec.get(name, ("", ""))
        ours = f"irm.{reader}({path!r}) for a TREC {kind}, " if reader else ""
        raise ColumnTypeError(
            f"{name} is a path ({path!r}), not a table: read it first, e.g. {ours}"
            f"pl.scan_parquet({path!r}) or pl.scan_csv({path!r}) for a table (the command "
            "line reads files: irm evaluate PATH ...)"
        )
    what = type_name(frame)
    if isinstance(frame, ArrowStreamExportable) and not isinstance(frame, pl.Series):
        _refuse_wide_decimals(frame, name)
        try:
            return pl.DataFrame(frame)
        except pl.exceptions.PolarsError:  # a stream of a column (pandas Series), not a table
            what += ", whose Arrow stream is not a table"
    raise ColumnTypeError(
        f"{name} must be a polars DataFrame or LazyFrame, a pandas DataFrame, a pyarrow "
        "Table or RecordBatch, or a table with the Arrow PyCapsule interface "
        f"(__arrow_c_stream__), got {what}; convert it to a table, e.g. "
        "pl.DataFrame(...) or pl.from_pandas(...)"
    )


def _refuse_wide_decimals(frame: object, name: str) -> None:
    """Refuse an Arrow table with a 256-bit decimal column, which polars cannot read (its
    conversion panics, a ``BaseException`` no ``except Exception`` catches), where the
    table tells its schema (a pyarrow Table or RecordBatch, or ``__arrow_c_schema__``;
    or ``frame`` is the schema, a pandas table's).

    Examples
    --------
    >>> import pyarrow as pa
    >>> wide = pa.table({"score": pa.array([2, 1]).cast(pa.decimal256(40, 2))})
    >>> as_polars(wide, "run")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.ColumnTypeError: column 'score' of the run holds 256-bit ...
    """
    schema = frame if isinstance(frame, pa.Schema) else getattr(frame, "schema", None)
    if not isinstance(schema, pa.Schema):
        if not hasattr(frame, "__arrow_c_schema__"):
            return
        schema = pa.schema(frame)
    for field in schema:
        if pa.types.is_decimal256(field.type):
            raise ColumnTypeError(
                f"column {field.name!r} of the {name} holds 256-bit decimals ({field.type}), "
                "which polars does not read: cast it before, e.g. to pa.decimal128(38, "
                f"{field.type.scale}) or pa.float64() with table.cast(...)"
            )


def _unconverted(name: str, frame: Any, error: Exception) -> ColumnTypeError:
    """The error of a pandas table whose columns Arrow cannot convert (an object column
    mixing numbers and strings, complex numbers): the table, the first such column (each
    converted alone, on this error path only), the reason in one line, and the fix.

    Examples
    --------
    >>> import pandas as pd
    >>> _ = as_polars(pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": [1, "a"]}), "run")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.ColumnTypeError: column 'doc_id' of the run (a pandas ...
    """
    twice = [str(c) for c in frame.columns[frame.columns.duplicated()].unique()]
    if twice:
        shown = ", ".join(repr(c) for c in twice)
        return ColumnTypeError(
            f"the {name} (a pandas DataFrame) has more than one column named {shown}: a "
            "polars table names each column once; keep one of them, e.g. "
            "df.loc[:, ~df.columns.duplicated()], or rename the others"
        )
    column, reason = None, " ".join(str(error).split())
    for label in frame.columns:
        try:
            pl.from_pandas(frame[[label]])
        except (pa.lib.ArrowException, pl.exceptions.PolarsError, TypeError) as alone:
            column, reason = label, " ".join(str(alone).split())
            break
    where = f"column {column!r} of the {name}" if column is not None else f"the {name}"
    col = repr(column) if column is not None else "column"
    return ColumnTypeError(
        f"{where} (a pandas DataFrame) holds values Arrow cannot convert to one type "
        f"({reason}); give the column one type first: ids as text, e.g. "
        f"df[{col}].astype(str), scores and labels as numbers, e.g. df[{col}].astype(float)"
    )
