"""Dask, ``partitioned_by=``: the Parquet files behind a plain ``dd.read_parquet``, read
with polars inside a task instead of through Dask's pandas partitions.

A task that is handed a pandas partition holds it while converting it to Arrow and
polars, and a worker holds several: Dask reads a partition ahead of its task, or fetches
it from the worker that read it (measured: three 2,000,000-row partitions, 270 MiB of
pandas, held by one worker as its task started). A task that is handed the names of its
files reads them itself, lazily, into the one plan that evaluates them
(:func:`read_files`), collected by polars' streaming engine. Measured at 10M run rows
in five 2,000,000-row buckets, two workers of one thread (benchmarks/results_scale.md):
the largest worker went from 1,095 MiB to 448 MiB.

:func:`read_layout` takes the files from Dask's own expression of the read (its
``ReadParquetFSSpec``: the pieces each partition reads, the hive partition columns);
that expression is not a public API, so anything unexpected (another Dask, a filter, a
remote or custom filesystem, a custom partitioning, a frame that is not a plain read)
gives ``None``, and the caller goes on with Dask's partitions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import dask.dataframe as dd
import polars as pl
import pyarrow as pa

from polars_irmetrics.engines._dask_frames import arrow_of
from polars_irmetrics.engines._partition import as_polars_frame
from polars_irmetrics.ground.partitions import hive_values, scan_hive_files

_ReadParquet: type[Any] | None
try:  # Dask's (not public) expression of a Parquet read through fsspec
    from dask.dataframe.dask_expr.io.parquet import ReadParquetFSSpec as _ReadParquet
except ImportError:  # pragma: no cover - another Dask: its partitions are read as before
    _ReadParquet = None

__all__ = ["Files", "Layout", "Piece", "read_files", "read_layout"]


@dataclass(frozen=True)
class Piece:
    """A file (a local path), the row groups Dask reads of it (``None``: all), and its
    hive partition values as text (``None`` for the default partition)."""

    path: str
    row_groups: tuple[int, ...] | None
    hive: tuple[tuple[str, str | None], ...]


@dataclass(frozen=True)
class Files:
    """The pieces one task reads, and how their rows look in the Dask frame: its
    columns in order, which of them come from the paths, and its Arrow schema."""

    pieces: tuple[Piece, ...]
    columns: tuple[str, ...]
    hive: tuple[str, ...]
    schema: pa.Schema


@dataclass(frozen=True)
class Layout:
    """A plain ``dd.read_parquet`` of local files: the pieces of each partition."""

    parts: tuple[tuple[Piece, ...], ...]
    columns: tuple[str, ...]
    hive: tuple[str, ...]
    schema: pa.Schema

    def files(self, pieces: Sequence[Piece]) -> Files:
        """These pieces, to be read as rows of this frame."""
        return Files(tuple(pieces), self.columns, self.hive, self.schema)

    def texts(self, pieces: Sequence[Piece], column: str) -> list[str | None]:
        """The value of the hive column ``column`` in each piece, in the frame's type,
        written as text (as :meth:`polars.Expr.cast` to ``String`` writes it: ``07`` of
        an integer column is ``"7"``), one cast for all of them."""
        dtype = as_polars_frame(self.schema.empty_table()).schema[column]
        texts = [dict(piece.hive).get(column) for piece in pieces]
        found: list[str | None] = (
            pl.Series(texts, dtype=pl.String).cast(dtype).cast(pl.String).to_list()
        )
        return found


def read_layout(frame: dd.DataFrame) -> Layout | None:
    """The pieces behind ``frame`` when it is a plain read of local Parquet files (its
    columns selected or not, some of its partitions taken or not), else ``None``."""
    if _ReadParquet is None:  # pragma: no cover - another Dask
        return None
    try:
        return _layout(frame)
    except (AttributeError, KeyError, TypeError, ValueError, IndexError):
        return None  # a Dask whose expression holds its plan otherwise


def _layout(frame: dd.DataFrame) -> Layout | None:
    expr: Any = frame.expr.simplify()  # a projection is pushed into the read
    if _ReadParquet is None or not isinstance(expr, _ReadParquet):
        return None
    if expr.operand("filters") is not None:
        return None
    if list(expr.columns) != list(frame.columns):
        return None
    info: dict[str, Any] = expr._dataset_info
    protocol = info["fs"].protocol  # fsspec's: "file" (and "local") for local files
    if "file" not in ((protocol,) if isinstance(protocol, str) else tuple(protocol)):
        return None
    plan: dict[str, Any] = expr._plan
    common = plan["common_kwargs"]
    if common.get("filters") is not None:
        return None
    partitioning = common.get("dataset", {}).get("partitioning", "hive")
    if partitioning not in ("hive", None):
        return None
    hive = tuple(p.name for p in common.get("partitions") or ())
    if plan["empty"]:
        return None
    parts = list(plan["parts"])
    taken = expr.operand("_partitions")
    if taken is not None:
        parts = [parts[i] for i in taken]
    if len(parts) != frame.npartitions:
        return None
    pieces = [_pieces(part, hive) for part in parts]
    if any(p is None for p in pieces):
        return None
    return Layout(
        parts=tuple(p for p in pieces if p is not None),
        columns=tuple(frame.columns),
        hive=hive,
        schema=arrow_of(frame),
    )


def _pieces(part: Any, hive: Sequence[str]) -> tuple[Piece, ...] | None:
    """A partition's pieces (a dict with a ``piece``, or a list of them), else ``None``."""
    found = []
    for item in part if isinstance(part, list) else [part]:
        path, row_groups, _ = item["piece"]
        if not isinstance(path, str):
            return None
        groups = None if row_groups is None else tuple(int(g) for g in row_groups)
        found.append(Piece(path, groups, hive_values(path, hive)))
    return tuple(found)


def read_files(files: Files) -> pl.LazyFrame:
    """The rows of these pieces as the Dask frame holds them: its columns, the hive
    ones from the paths, in its types (no piece: an empty frame of the schema), not
    read yet (:func:`~polars_irmetrics.ground.partitions.scan_hive_files`)."""
    schema = as_polars_frame(files.schema.empty_table()).schema
    pieces = [(piece.path, piece.row_groups, piece.hive) for piece in files.pieces]
    return scan_hive_files(pieces, files.columns, files.hive, schema)
