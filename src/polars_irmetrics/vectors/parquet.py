"""A corpus of embeddings read from Parquet files with pyarrow, in blocks: the fast path
of :func:`~polars_irmetrics.vectors.knn.knn` for a corpus given as a path.

pyarrow's ``ParquetFile.iter_batches`` decodes an embedding column two to three times
faster than polars' slices of a LazyFrame, and its values buffer becomes the block's
matrix without a copy: a ``list<float>`` column (``List`` in polars) after checking that
its offsets step by one width, a ``fixed_size_list`` (``Array``) as it is. Blocks are
cut at the same rows as a DataFrame's ``iter_slices`` (every ``block_size`` rows across
the files), so every check raises the same error, naming the same ids, as the
in-memory and the LazyFrame paths.

The ids are read first, alone (their nulls and duplicates are checked before any
embedding is decoded, as for a LazyFrame), and kept: each block takes a slice of them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import chain
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from polars_irmetrics.errors import FileFormatError, InvalidValueError
from polars_irmetrics.io.files import parquet_files
from polars_irmetrics.vectors.embeddings import (
    Block,
    FloatType,
    check_dimensions,
    checked_in,
)

__all__ = ["CorpusFiles", "PathSource", "corpus_files", "is_path", "parquet_blocks"]

#: A corpus given by name: a Parquet file, a glob, a folder, or a list of them.
PathSource = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]

_WHAT = "a corpus of embeddings: Parquet files with an id and an embedding column"


def is_path(source: object) -> bool:
    """Whether ``source`` names files: a ``str`` or ``os.PathLike``, or a non-empty list
    or tuple of them.

    >>> is_path("corpus/*.parquet"), is_path(["a.parquet", Path("b.parquet")]), is_path([])
    (True, True, False)
    """
    if isinstance(source, str | os.PathLike):
        return True
    return (
        isinstance(source, list | tuple)
        and len(source) > 0
        and all(isinstance(item, str | os.PathLike) for item in source)
    )


def is_remote(source: PathSource) -> bool:
    """Whether any of the names is a URL (read by polars, not by this module)."""
    items = [source] if isinstance(source, str | os.PathLike) else list(source)
    return any("://" in os.fspath(item) for item in items)


class CorpusFiles:
    """The files of a corpus, with their columns checked. Each file is opened only
    while it is read (a folder of thousands of files holds one open at a time).

    ``schema`` is the columns' polars dtypes (the first file's; every file must have
    the same dtypes for the id and the embedding column).
    """

    def __init__(self, paths: list[Path], id_column: str, embedding: str) -> None:
        self.paths = paths
        schemas = []
        for path in paths:
            with _open(path) as file:
                schemas.append(_polars_schema(file, path))
        self.schema = schemas[0]
        for path, schema in zip(paths[1:], schemas[1:], strict=True):
            for column in (id_column, embedding):
                first = self.schema.get(column)
                if column in schema and first is not None and schema[column] != first:
                    raise FileFormatError(
                        f"{path}: column {column!r} has dtype {schema[column]}, where "
                        f"{paths[0]} has {first}; every file of the corpus needs the same "
                        "dtypes: write them again with one schema"
                    )

    def ids(self, column: str) -> pl.Series:
        """The id column of every file, one after the other."""
        parts = []
        for path in self.paths:
            try:
                with _open(path) as file:
                    table = file.read(columns=[column])
            except (pa.ArrowException, OSError):
                raise _damaged(path, column) from None
            parts.append(pl.Series(column, table.column(0)))
        whole: pl.Series = (pl.concat(parts) if len(parts) > 1 else parts[0]).rechunk()
        return whole


def corpus_files(source: PathSource, id_column: str, embedding: str) -> CorpusFiles:
    """The Parquet files ``source`` names, in order (a list's items in the list's order;
    a glob's or folder's files by name), opened."""
    return CorpusFiles(parquet_files(source, _WHAT), id_column, embedding)


def parquet_blocks(
    files: CorpusFiles,
    ids: pl.Series,
    embedding: str,
    block_size: int,
    dtype: FloatType,
) -> Iterator[Block]:
    """Blocks of ``block_size`` rows (the last one shorter) across the files: each
    ``ids``' slice and the checked matrix of its embeddings, as ``dtype``."""
    pending: list[pa.Array] = []
    count = 0
    offset = 0
    batches = chain.from_iterable(_batches(path, embedding, block_size) for path in files.paths)
    for batch in _ahead(batches):
        pending.append(batch)
        count += len(batch)
        while count >= block_size:
            chunks, pending = _split(pending, block_size)
            count -= block_size
            yield _released(_block(chunks, ids.slice(offset, block_size), embedding, dtype))
            del chunks  # not held while the next batch is decoded
            offset += block_size
        del batch  # (what is left of it is in pending)
    if count:
        yield _released(_block(pending, ids.slice(offset, count), embedding, dtype))


_END = object()


def _ahead(items: Iterator[pa.Array]) -> Iterator[pa.Array]:
    """``items``, the next one decoded in a thread while the caller scores the current
    one: pyarrow decodes a column on one core (and lets go of the GIL), so the decoding
    of the next batch overlaps the scoring of this one (measured in
    ``benchmarks/results_vectors.md``). One batch is decoded ahead, no more."""
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(next, items, _END)
        while True:
            item = future.result()
            if item is _END:
                return
            future = pool.submit(next, items, _END)
            yield item


def _released(block: Block) -> Block:
    """``block``, once pyarrow's allocator (mimalloc) has given back the memory it
    decoded with, which it would keep beside numpy's arrays while the block is scored
    (measured: 935 MiB beyond the queries without this, 775 with it, 400,000 × 384 and
    1,000 queries, at the same speed)."""
    pa.default_memory_pool().release_unused()
    return block


def _open(path: Path) -> pq.ParquetFile:
    try:
        # pre_buffer off: the pages are read as they are decoded (measured faster from a
        # local disk: no copy of a whole column chunk first). No memory map: it decodes
        # 10 to 15 % faster, but every page read stays mapped, and counted in the
        # process' resident memory, until the file is closed (3.5 GiB at 2M × 384)
        return pq.ParquetFile(path, memory_map=False, pre_buffer=False)
    except (pa.ArrowException, OSError):
        raise FileFormatError(
            f"{path}: a damaged Parquet file (its footer cannot be read); write it again; "
            f"expected {_WHAT}"
        ) from None


def _polars_schema(file: pq.ParquetFile, path: Path) -> pl.Schema:
    try:
        return pl.DataFrame(file.schema_arrow.empty_table()).schema
    except (pl.exceptions.PolarsError, pa.ArrowException):
        raise FileFormatError(
            f"{path}: its columns have Arrow types polars cannot read; expected {_WHAT}"
        ) from None


def _damaged(path: Path, column: str) -> FileFormatError:
    return FileFormatError(
        f"{path}: a damaged Parquet file (column {column!r} cannot be decoded); write it "
        f"again; expected {_WHAT}"
    )


def _batches(path: Path, column: str, size: int) -> Iterator[pa.Array]:
    """The ``column`` of the file in arrays of ``size`` rows (pyarrow's batches run
    across row groups; the last of the file is shorter)."""
    with _open(path) as file:
        reader = file.iter_batches(batch_size=size, columns=[column], use_threads=False)
        while True:
            try:
                batch = next(reader)
            except StopIteration:
                return
            except (pa.ArrowException, OSError):
                raise _damaged(path, column) from None
            if batch.num_rows:
                yield batch.column(0)


def _split(pending: list[pa.Array], size: int) -> tuple[list[pa.Array], list[pa.Array]]:
    """The first ``size`` rows of ``pending`` (slices, no copy), and the rest."""
    taken: list[pa.Array] = []
    need = size
    for at, chunk in enumerate(pending):
        if len(chunk) <= need:
            taken.append(chunk)
            need -= len(chunk)
            if need == 0:
                return taken, pending[at + 1 :]
        else:
            taken.append(chunk.slice(0, need))
            return taken, [chunk.slice(need), *pending[at + 1 :]]
    return taken, []  # pragma: no cover - the caller holds at least size rows


def _lengths(chunk: pa.Array) -> np.ndarray[Any, np.dtype[np.int64]]:
    if isinstance(chunk, pa.FixedSizeListArray):
        return np.full(len(chunk), chunk.type.list_size, dtype=np.int64)
    offsets = chunk.offsets.to_numpy()
    lengths: np.ndarray[Any, np.dtype[np.int64]] = np.diff(offsets).astype(np.int64, copy=False)
    return lengths


def _block(chunks: list[pa.Array], ids: pl.Series, column: str, dtype: FloatType) -> Block:
    """``ids`` and the matrix of the embeddings ``chunks``, checked as
    :func:`~polars_irmetrics.vectors.embeddings.block_of` checks a DataFrame's (the same
    errors, naming the same ids)."""
    if any(chunk.null_count for chunk in chunks):
        nulls = np.concatenate(
            [chunk.is_null().to_numpy(zero_copy_only=False) for chunk in chunks]
        )
        raise InvalidValueError(
            f"column {column!r} of the corpus has a null embedding (id "
            f"{ids[int(np.argmax(nulls))]!r}); every row needs a vector: drop those rows"
        )
    fixed = isinstance(chunks[0], pa.FixedSizeListArray)
    lengths = np.concatenate([_lengths(chunk) for chunk in chunks])
    width = int(lengths[0])
    if not fixed or len(chunks) > 1:
        bad = lengths != width
        if bad.any():
            at = int(np.argmax(bad))
            raise InvalidValueError(
                f"column {column!r} of the corpus mixes dimensions: id {ids[0]!r} has "
                f"{width} values, id {ids[at]!r} has {int(lengths[at])}; every "
                "embedding must have the same length"
            )
    check_dimensions(width, ids, column, "corpus")
    flats = [chunk.flatten() for chunk in chunks]  # the values of the rows, no copy
    if not fixed and any(flat.null_count for flat in flats):
        nulls = np.concatenate([flat.is_null().to_numpy(zero_copy_only=False) for flat in flats])
        row = int(np.argmax(nulls)) // width
        raise InvalidValueError(
            f"column {column!r} of the corpus has a null value in the embedding of id "
            f"{ids[row]!r}; fill or drop it"
        )
    # a null inside a fixed-size list becomes NaN, refused below as polars' Array is
    values = [flat.to_numpy(zero_copy_only=False) for flat in flats]
    flat_values = values[0] if len(values) == 1 else np.concatenate(values)
    vectors = checked_in(flat_values.reshape(len(ids), width), ids, column, "corpus", dtype)
    return Block(ids, vectors)
