"""Int128 columns through Arrow, Spark and pandas, which have no Int128: as two Int64
halves, ``hi * 2**62 + lo`` with ``0 <= lo < 2**62``, made whole again on arrival (the
exact sums of the prediction metrics and of the off-policy estimators travel so)."""

from __future__ import annotations

import polars as pl

__all__ = ["int128_halves", "int128_whole"]

_HALF = 2**62
_HI, _LO = "_hi", "_lo"


def int128_halves(frame: pl.LazyFrame) -> pl.LazyFrame:
    """Each Int128 column as two Int64 columns (``<name>_hi``, ``<name>_lo``), in place.

    Examples
    --------
    >>> big = pl.LazyFrame({"s": [-(2**100) - 5, 7]}, schema={"s": pl.Int128})
    >>> list(int128_halves(big).collect_schema())
    ['s_hi', 's_lo']
    >>> int128_whole(int128_halves(big)).collect()["s"].to_list() == [-(2**100) - 5, 7]
    True
    """
    schema = frame.collect_schema()
    columns: list[pl.Expr] = []
    for name, dtype in schema.items():
        if dtype == pl.Int128:
            c = pl.col(name)
            columns.append((c // _HALF).cast(pl.Int64).alias(name + _HI))
            columns.append((c % _HALF).cast(pl.Int64).alias(name + _LO))
        else:
            columns.append(pl.col(name))
    return frame.select(columns)


def int128_whole(frame: pl.LazyFrame) -> pl.LazyFrame:
    """The Int128 columns again from their halves (:func:`int128_halves`)."""
    schema = frame.collect_schema()
    columns: list[pl.Expr] = []
    for name in schema.names():
        if name.endswith(_LO) and name[: -len(_LO)] + _HI in schema:
            continue
        if name.endswith(_HI) and name[: -len(_HI)] + _LO in schema:
            base = name[: -len(_HI)]
            hi = pl.col(name).cast(pl.Int128) * pl.lit(_HALF, dtype=pl.Int128)
            columns.append((hi + pl.col(base + _LO).cast(pl.Int128)).alias(base))
        else:
            columns.append(pl.col(name))
    return frame.select(columns)
