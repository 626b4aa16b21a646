"""Sums of unit vectors per group, and the pairwise similarity of a group's vectors
from them (the identity behind intra-list diversity), with the self-join it replaces.

For unit vectors ``u_i = v_i / |v_i|``, expanding the square gives
``sum_{i != j} cos(v_i, v_j) = |sum_i u_i|^2 - sum_i |u_i|^2``: a sum of vectors per
group instead of every pair of the group's rows. Exact up to float rounding
(``tests/test_recsys.py`` compares it with every pair). Every sum is a fixed-point sum
(:func:`~polars_irmetrics.metrics.scope.fixed_sum`; a unit vector's entries lie in
[-1, 1]): the same bits in any row order, so a user's value does not depend on how
the plan's joins ordered the rows.
"""

from __future__ import annotations

import polars as pl

from polars_irmetrics.ground.validate import INTERNAL
from polars_irmetrics.metrics.scope import fixed_sum

__all__ = ["pair_similarity_by_self_join", "pair_similarity_by_sums", "vector_sums"]

_DIM = f"{INTERNAL}dim"
_SUM = f"{INTERNAL}vector_sum"
_SQUARES = f"{INTERNAL}squares"
_OTHER = f"{INTERNAL}other"


def vector_sums(
    frame: pl.LazyFrame, keys: list[str], vector: str, width: int | None = None
) -> pl.LazyFrame:
    """Per ``keys`` group, the element-wise sum of the ``vector`` lists (a list column
    named ``vector``, of unit vectors: each sum a fixed-point sum, whose terms must be
    finite and below :data:`~polars_irmetrics.metrics.scope.FIXED_LIMIT`).

    With the vectors' length ``width`` known from the schema (an ``Array`` column), one
    group-by sums entry ``j`` of every vector for each ``j``; otherwise (a ``List``
    column, whose length the schema does not tell) the entries are exploded into rows and
    summed by (group, position): about 8 times slower (``benchmarks/results_recsys.md``).
    """
    if width is not None:
        entries = [fixed_sum(pl.col(vector).list.get(j)) for j in range(width)]
        return frame.group_by(keys).agg(pl.concat_list(entries).alias(vector))
    entries_frame = frame.select(
        *keys, vector, pl.int_ranges(pl.col(vector).list.len()).alias(_DIM)
    )
    by_dim = (
        entries_frame.explode([vector, _DIM])
        .group_by([*keys, _DIM])
        .agg(fixed_sum(pl.col(vector)))
    )
    return by_dim.group_by(keys).agg(pl.col(vector).sort_by(_DIM))


def pair_similarity_by_sums(
    frame: pl.LazyFrame, keys: list[str], unit: str, width: int | None = None
) -> pl.LazyFrame:
    """Per ``keys`` group, ``sum_{i != j} cos(i, j)`` over the group's unit vectors, as
    ``|sum_i u_i|^2 - sum_i |u_i|^2`` (column ``pair_similarity_sum``); ``width``: the
    vectors' length, when the schema tells it (:func:`vector_sums`)."""
    square = (pl.col(unit) * pl.col(unit)).list.sum()
    sums = vector_sums(frame, keys, unit, width).select(*keys, square.alias(_SUM))
    own = frame.group_by(keys).agg(fixed_sum(square).alias(_SQUARES))
    return sums.join(own, on=keys, how="inner", nulls_equal=True).select(
        *keys, (pl.col(_SUM) - pl.col(_SQUARES)).alias("pair_similarity_sum")
    )


def pair_similarity_by_self_join(
    frame: pl.LazyFrame, keys: list[str], item: str, unit: str
) -> pl.LazyFrame:
    """The same sum as :func:`pair_similarity_by_sums`, from every pair of each group's
    rows (a self-join: ``m^2`` pairs for a list of ``m`` items); for the benchmark."""
    left = frame.select(*keys, item, unit)
    right = left.rename({item: _OTHER, unit: f"{unit}_other"})
    dot = (pl.col(unit) * pl.col(f"{unit}_other")).list.sum()
    return (
        left.join(right, on=keys, how="inner", nulls_equal=True)
        .filter(pl.col(item) != pl.col(_OTHER))
        .group_by(keys)
        .agg(dot.sum().alias("pair_similarity_sum"))
    )
