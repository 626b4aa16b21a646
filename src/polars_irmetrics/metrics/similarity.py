"""Similarity of embeddings stored as list or array columns.

:func:`cosine_similarity` compares two vectors per row. It is one polars expression,
so it works in ``select``/``with_columns`` (one value per row) and inside
``group_by(...).agg(...)`` (one value per row of the group, or an aggregate of them
such as ``.mean()``), on DataFrames and LazyFrames.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_irmetrics.errors import ColumnTypeError, InvalidValueError
from polars_irmetrics.ground.deferred import checked_column
from polars_irmetrics.ground.options import check_column_name

__all__ = ["cosine_similarity"]

_NAME = "cosine_similarity"


def cosine_similarity(a: str | pl.Expr, b: str | pl.Expr) -> pl.Expr:
    """Cosine similarity of two embedding columns, row by row.

    ``a . b / (|a| |b|)`` for the vectors ``a`` and ``b`` of each row, clipped to
    ``[-1, 1]`` (rounding can otherwise leave 1.0000000000000002).

    Parameters
    ----------
    a, b
        Column names or expressions holding ``pl.List`` or ``pl.Array`` values of
        numbers, equal in length row by row (the lengths may differ between rows).

    Returns
    -------
    pl.Expr
        A ``Float64`` expression named ``cosine_similarity`` (rename it with
        ``.alias(...)``).

    Notes
    -----
    * A zero vector (every entry 0, or an empty vector) has no direction: its
      similarity with anything is **0.0**, as in scikit-learn's ``cosine_similarity``
      (and as every ratio over zero in this library).
    * A null vector, or a vector with a null entry, gives null; a NaN entry gives NaN.
    * Computed per batch with vectorised polars operations (no per-row Python).

    Raises
    ------
    InvalidValueError
        When the two vectors of a row differ in length (raised when the query runs);
        the message names both columns and the two lengths. When ``a`` or ``b`` is
        neither a column name nor an expression (raised at the call).
    ColumnNotFoundError
        When the frame has no column of the name ``a`` or ``b`` gives (raised when the
        query is planned).
    ColumnTypeError
        When a column does not hold lists or arrays of numbers.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> df = pl.DataFrame({
    ...     "query_id": ["q1", "q1", "q2"],
    ...     "q": [[1.0, 0.0], [1.0, 0.0], [0.0, 0.0]],
    ...     "d": [[2.0, 0.0], [1.0, 1.0], [3.0, 4.0]],
    ... })
    >>> df.with_columns(irm.cosine_similarity("q", "d").round(6))
    shape: (3, 4)
    ┌──────────┬────────────┬────────────┬───────────────────┐
    │ query_id ┆ q          ┆ d          ┆ cosine_similarity │
    │ ---      ┆ ---        ┆ ---        ┆ ---               │
    │ str      ┆ list[f64]  ┆ list[f64]  ┆ f64               │
    ╞══════════╪════════════╪════════════╪═══════════════════╡
    │ q1       ┆ [1.0, 0.0] ┆ [2.0, 0.0] ┆ 1.0               │
    │ q1       ┆ [1.0, 0.0] ┆ [1.0, 1.0] ┆ 0.707107          │
    │ q2       ┆ [0.0, 0.0] ┆ [3.0, 4.0] ┆ 0.0               │
    └──────────┴────────────┴────────────┴───────────────────┘
    >>> df.group_by("query_id").agg(irm.cosine_similarity("q", "d").max()).sort("query_id")
    shape: (2, 2)
    ┌──────────┬───────────────────┐
    │ query_id ┆ cosine_similarity │
    │ ---      ┆ ---               │
    │ str      ┆ f64               │
    ╞══════════╪═══════════════════╡
    │ q1       ┆ 1.0               │
    │ q2       ┆ 0.0               │
    └──────────┴───────────────────┘
    """
    return pl.map_batches(
        [_vectors("a", a), _vectors("b", b)],
        _cosine_batch,
        return_dtype=pl.Float64,
        is_elementwise=True,
    ).alias(_NAME)


def _vectors(option: str, column: object) -> pl.Expr:
    """The column of embeddings that argument ``option`` names (an expression as it is):
    a missing one is the library's :class:`ColumnNotFoundError` when the plan knows the
    frame (it was polars' own), a name that is no text an :class:`InvalidValueError`."""
    check_column_name(option, column, expression="pl.col('embedding')")
    if isinstance(column, pl.Expr):
        return column
    fix = f"name yours with irm.cosine_similarity({option}=...)"
    return checked_column(str(column), "embeddings", fix, numeric=False)


def _as_vectors(series: pl.Series) -> pl.Series:
    """``series`` as ``List(Float64)``, or a :class:`ColumnTypeError` naming it."""
    dtype = series.dtype
    inner = dtype.inner if isinstance(dtype, pl.List | pl.Array) else None
    if inner is None or not (inner.is_numeric() or inner == pl.Null):
        raise ColumnTypeError(
            f"{_NAME}: column {series.name!r} has dtype {dtype}; expected embeddings, a "
            "list or array of numbers, e.g. pl.List(pl.Float32) or pl.Array(pl.Float32, 768)"
        )
    if isinstance(dtype, pl.Array):
        series = series.arr.to_list()
    vectors: pl.Series = series.cast(pl.List(pl.Float64))
    return vectors


def _scaled(column: str) -> pl.Expr:
    """Each row's vector times ``2**-e``, ``e`` the binary exponent of its largest
    magnitude (clipped to float64's normal range); a zero, null or non-finite largest
    magnitude leaves the vector as it is (0.0, null or NaN, as documented)."""
    top = pl.col(column).list.eval(pl.element().abs().max()).list.first()
    exponent = top.log(2).floor().clip(-1022, 1022)
    factor = pl.when((top > 0) & top.is_finite()).then(pl.lit(2.0).pow(-exponent))
    return (pl.col(column) * factor.otherwise(1.0)).alias(column)


def _cosine_batch(columns: Sequence[pl.Series]) -> pl.Series:
    a_raw, b_raw = columns
    a, b = _as_vectors(a_raw), _as_vectors(b_raw)
    len_a, len_b = a.list.len(), b.list.len()
    mismatch = (len_a != len_b).fill_null(False)
    if mismatch.any():
        row = int(mismatch.arg_true()[0])
        raise InvalidValueError(
            f"{_NAME}: columns {a_raw.name!r} and {b_raw.name!r} hold vectors of different "
            f"lengths in the same row ({len_a[row]} and {len_b[row]}); embeddings must "
            "have equal lengths"
        )
    frame = pl.DataFrame({"a": a, "b": b})
    computed = frame.with_columns(_SQUARES).select(_COSINE, *_SQUARED)
    values = computed.to_series(0)
    # a row whose squares could overflow (1e155: NaN) or lose digits below float64's
    # normal range (1e-200 read as a zero vector, 0.0) again from its vectors scaled by
    # a power of two near their largest magnitude (exact: any other row would keep its
    # bits), only those rows: the scaling doubled the time of every batch
    squares = [pl.col(c).is_between(_SAFE_LOW, _SAFE_HIGH) for c in computed.columns[1:]]
    risky = computed.select(~pl.all_horizontal(squares).fill_null(True)).to_series()
    if risky.any():
        rows = risky.arg_true()
        scaled = frame[rows].with_columns(_scaled("a"), _scaled("b"))
        scaled = scaled.with_columns(_SQUARES).select(_COSINE)
        values = values.scatter(rows, scaled.to_series())
    return values.alias(_NAME)


def _cosine_expr() -> pl.Expr:
    """Each row's cosine of columns ``a`` and ``b`` (``List(Float64)``) beside their
    sums of squares (:data:`_SQUARES`): null for a null vector or entry, 0.0 for a zero
    vector, clipped to ``[-1, 1]``."""
    product = pl.col("a") * pl.col("b")
    has_null = (pl.col("a").list.drop_nulls().list.len() != pl.col("a").list.len()) | (
        pl.col("b").list.drop_nulls().list.len() != pl.col("b").list.len()
    )
    dot = product.list.sum()
    norms = pl.col(_SQUARED[0]).sqrt() * pl.col(_SQUARED[1]).sqrt()
    cosine = (
        pl.when(pl.col("a").is_null() | pl.col("b").is_null() | has_null)
        .then(None)
        .when(norms == 0.0)
        .then(0.0)
        .otherwise((dot / norms).clip(-1.0, 1.0))
    )
    return cosine.cast(pl.Float64).alias(_NAME)


#: Each row's sums of squares (the norms' squares), read by the cosine and, by their
#: range, telling the rows the plain formula serves.
_SQUARED = ("__a_squares", "__b_squares")
_SQUARES = [
    (pl.col(c) * pl.col(c)).list.sum().alias(name)
    for c, name in zip(("a", "b"), _SQUARED, strict=True)
]
_COSINE = _cosine_expr()
#: Sums of squares within which no square of an entry overflowed or fell below float64's
#: normal range in a way that moves the cosine (an entry below 2**-480 squares to 2**-960).
_SAFE_LOW, _SAFE_HIGH = 2.0**-960, 2.0**1000
