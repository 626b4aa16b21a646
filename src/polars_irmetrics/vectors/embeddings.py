"""Embedding columns as numpy matrices, checked: one dimension, finite, no null.

An embedding column is ``Array[Float32|Float64, d]`` (read without a copy where polars
allows) or ``List[Float32|Float64]`` whose lists all have the same length. A numpy
matrix (``n × d``, float32 or float64) is taken as it is, its rows numbered ``0..n-1``
as ids. Every problem raises the library's error naming the table, the column and the
first id at fault.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

from polars_irmetrics.errors import ColumnTypeError, InvalidValueError

__all__ = [
    "Block",
    "FloatType",
    "Matrix",
    "block_of",
    "cast_checked",
    "check_dimensions",
    "check_matrix",
    "checked_in",
    "embedding_dtype",
]

#: An ``n × d`` matrix of float32 or float64 embeddings.
Matrix = npt.NDArray[np.floating[Any]]
#: The float type a kNN computes in.
FloatType = type[np.float32] | type[np.float64]


@dataclass(frozen=True)
class Block:
    """Ids (a polars Series) and their embeddings (an ``n × d`` matrix)."""

    ids: pl.Series
    vectors: Matrix


def embedding_dtype(schema: pl.Schema, column: str, what: str) -> FloatType:
    """The float dtype of the embedding ``column``; a :class:`ColumnTypeError` otherwise."""
    dtype = schema[column]
    inner = dtype.inner if isinstance(dtype, pl.List | pl.Array) else None
    if inner is None or inner not in (pl.Float32, pl.Float64):
        raise ColumnTypeError(
            f"column {column!r} of the {what} has dtype {dtype}; embeddings must be "
            f"Array or List of Float32 or Float64: cast it, e.g. {_cast_hint(dtype, column)}"
        )
    return np.float32 if inner == pl.Float32 else np.float64


#: The dtypes whose every value Float32 holds exactly (integers below 2**24 in size).
_FLOAT32_EXACT = (pl.Int8, pl.Int16, pl.UInt8, pl.UInt16, pl.Float16)


def _cast_hint(dtype: pl.DataType, column: str) -> str:
    """The cast that makes ``column`` (of ``dtype``) an embedding without changing a
    value: Float32 where it holds every value (integers of 16 bits), else Float64 for
    numbers (Float32 is exact for integers only up to 2**24, Float64 up to 2**53).

    >>> print(_cast_hint(pl.List(pl.Int64), "emb"))  # doctest: +NORMALIZE_WHITESPACE
    pl.col('emb').cast(pl.Array(pl.Float64, d)) (d: the embeddings' length; Float64 keeps
    53 bits of each value; Float32 keeps 24, so it holds integers exactly only up to 2**24
    in magnitude)
    >>> print(_cast_hint(pl.Array(pl.Int16, 3), "emb"))
    pl.col('emb').cast(pl.Array(pl.Float32, 3)) (Float32 holds every Int16 exactly)
    """
    inner = dtype.inner if isinstance(dtype, pl.List | pl.Array) else None
    size = str(dtype.size) if isinstance(dtype, pl.Array) else "d"
    length = "" if isinstance(dtype, pl.Array) else "d: the embeddings' length; "
    if inner is not None and inner in _FLOAT32_EXACT:
        return (
            f"pl.col({column!r}).cast(pl.Array(pl.Float32, {size})) ({length}Float32 "
            f"holds every {inner} exactly)"
        )
    if inner is not None and inner.is_numeric():
        return (
            f"pl.col({column!r}).cast(pl.Array(pl.Float64, {size})) ({length}Float64 "
            "keeps 53 bits of each value; Float32 keeps 24, so it holds integers exactly "
            "only up to 2**24 in magnitude)"
        )
    return f"pl.col({column!r}).cast(pl.Array(pl.Float32, {size}))"


def block_of(
    frame: pl.DataFrame, id_column: str, column: str, what: str, dtype: FloatType
) -> Block:
    """The ids and the checked matrix of ``frame``'s embeddings, as ``dtype``."""
    ids = frame.get_column(id_column)
    series = frame.get_column(column)
    if series.null_count():
        at = ids.filter(series.is_null())[0]
        raise InvalidValueError(
            f"column {column!r} of the {what} has a null embedding (id {at!r}); every row "
            "needs a vector: drop those rows"
        )
    if isinstance(series.dtype, pl.Array):  # read without a copy; a null inside is NaN
        width = series.dtype.size
        check_dimensions(width, ids, column, what)
        raw = series.to_numpy() if len(series) else np.empty((0, width), dtype=dtype)
        array = raw.reshape(len(series), width)
        return Block(ids, checked_in(array, ids, column, what, dtype))
    lengths = series.list.len()
    width = int(lengths[0]) if len(series) else 0
    bad = lengths != width
    if bad.any():
        at = ids.filter(bad)[0]
        raise InvalidValueError(
            f"column {column!r} of the {what} mixes dimensions: id {ids[0]!r} has "
            f"{width} values, id {at!r} has {int(lengths.filter(bad)[0])}; every "
            "embedding must have the same length"
        )
    check_dimensions(width, ids, column, what)
    flat = series.explode()
    if flat.null_count():
        nulls = flat.is_null().to_numpy().reshape(len(series), width).any(axis=1)
        raise InvalidValueError(
            f"column {column!r} of the {what} has a null value in the embedding of id "
            f"{ids.filter(pl.Series(nulls))[0]!r}; fill or drop it"
        )
    vectors = flat.to_numpy().reshape(len(series), width)
    return Block(ids, checked_in(vectors, ids, column, what, dtype))


def checked_in(
    vectors: Matrix, ids: pl.Series, column: str, what: str, dtype: FloatType
) -> Matrix:
    """``vectors`` (the embeddings of ``ids`` in ``column`` of ``what``), checked finite
    (:func:`check_matrix`) and cast to ``dtype`` (:func:`cast_checked`)."""
    check_matrix(vectors, ids, column, what)
    return cast_checked(
        vectors, dtype, f"column {column!r} of the {what}", lambda row: f"id {ids[row]!r}"
    )


def cast_checked(
    vectors: Matrix, dtype: FloatType, name: str, row_name: Callable[[int], str]
) -> Matrix:
    """Finite ``vectors`` cast to ``dtype`` (the queries' embedding dtype, in which the
    corpus is scored). Float64 values cast to float32 must fit it: a value beyond
    float32's range would become infinite, and a nonzero vector whose values all round
    to 0 in float32 would become a zero vector (cosine: refused as having no direction;
    dot: its scores lost), each a change the caller's data does not hold: raise
    :class:`InvalidValueError` naming ``name`` (the table), the row (``row_name``), the
    value and the fix (the queries cast to Float64). Every other value is rounded to
    float32, within the stated precision."""
    if vectors.dtype == dtype or dtype != np.float32:
        return np.asarray(vectors, dtype=dtype)
    with np.errstate(over="ignore", under="ignore"):  # found below, and refused
        narrow: Matrix = vectors.astype(np.float32)
    fix = (
        "float32, the dtype of the queries' embeddings, in which the corpus is scored; "
        "cast the queries' embeddings to Float64 (the run's scores are then Float64)"
    )
    infinite = ~np.isfinite(narrow).all(axis=1)
    if infinite.any():
        row = int(np.argmax(infinite))
        value = float(vectors[row][~np.isfinite(narrow[row])][0])
        raise InvalidValueError(
            f"{name} holds {value!r} in the embedding of {row_name(row)}, beyond the "
            f"range ({np.finfo(np.float32).max:.3g}) of {fix}"
        )
    vanished = ~narrow.any(axis=1) & vectors.any(axis=1)
    if vanished.any():
        row = int(np.argmax(vanished))
        top = float(np.abs(vectors[row]).max())
        raise InvalidValueError(
            f"{name} holds a nonzero vector in the embedding of {row_name(row)} (largest "
            f"|value| {top!r}) whose values all round to 0, a zero vector, in {fix}"
        )
    return narrow


def check_dimensions(width: int, ids: pl.Series, column: str, what: str) -> None:
    """Raise :class:`InvalidValueError` for embeddings of 0 dimensions (``width``) in
    rows that exist: no score can be computed from them (under ``"cosine"`` a vector of
    no value is a zero vector; ``"dot"`` and ``"l2"`` would score every pair 0)."""
    if width == 0 and len(ids):
        raise InvalidValueError(
            f"column {column!r} of the {what} holds embeddings of 0 dimensions (id "
            f"{ids[0]!r}), from which no score can be computed; pass the model's vectors "
            "(at least one value each)"
        )


def check_matrix(vectors: Matrix, ids: pl.Series, column: str, what: str) -> None:
    """Raise :class:`InvalidValueError` for a NaN or infinite value in ``vectors``."""
    finite = np.isfinite(vectors).all(axis=1)
    if not finite.all():
        at = ids[int(np.argmin(finite))]
        raise InvalidValueError(
            f"column {column!r} of the {what} has a NaN, infinite or null value in the "
            f"embedding of id {at!r}; embeddings must be finite: fix or drop that row"
        )
