"""A plan's schema read once: the schema a step of the library declares for the frame it
returns is kept beside that frame, so a later step reads it instead of resolving the
whole plan again (``collect_schema`` converts every node built so far: an off-policy
call's plans resolved the same result six times and more).

Only the schemas the library declares itself are kept (:func:`mapped`: the schema given
to ``map_batches``, which is the frame's schema by polars' contract; :func:`dropped`: a
known schema less the dropped columns); a frame is known by its object (a weak
reference: nothing is kept once the frame is gone), so any other frame, a user's
included, is resolved as before.

Examples
--------
>>> import polars as pl
>>> frame = pl.LazyFrame({"a": [1, 2]})
>>> doubled = {"a": pl.Int64, "b": pl.Int64}
>>> out = mapped(frame, lambda f: f.with_columns(b=pl.col("a") * 2), doubled)
>>> list(schema_of(out).items()) == [("a", pl.Int64), ("b", pl.Int64)]
True
>>> list(without(schema_of(out), ["a"]))
['b']
>>> list(schema_of(dropped(out, ["b"])))
['a']
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import polars as pl

#: id of a frame -> (a weak reference to it, its schema)
_KNOWN: dict[int, tuple[weakref.ref[pl.LazyFrame], pl.Schema]] = {}


def _forget(key: int) -> Callable[[Any], None]:
    def forget(_: Any) -> None:
        _KNOWN.pop(key, None)

    return forget


def _remember(frame: pl.LazyFrame, schema: pl.Schema) -> None:
    key = id(frame)
    _KNOWN[key] = (weakref.ref(frame, _forget(key)), schema)


def schema_of(frame: pl.LazyFrame) -> pl.Schema:
    """``frame.collect_schema()``: the schema declared for ``frame`` where it was made
    by :func:`mapped` or :func:`dropped`, else resolved (and not kept: a user's frame,
    a scan of a file that may change, is read afresh each time)."""
    held = _KNOWN.get(id(frame))
    if held is not None and held[0]() is frame:
        return held[1]
    return frame.collect_schema()


def without(schema: Mapping[str, pl.DataType], names: Iterable[str]) -> pl.Schema:
    """``schema`` less the columns ``names`` (the schema of ``frame.drop(names)``)."""
    dropped = set(names)
    return pl.Schema([(k, v) for k, v in schema.items() if k not in dropped])


def dropped(frame: pl.LazyFrame, names: Sequence[str]) -> pl.LazyFrame:
    """``frame.drop(names)`` (each of ``names`` a column of ``frame``), its schema kept
    for :func:`schema_of`."""
    schema = schema_of(frame)
    missing = [name for name in names if name not in schema]
    if missing:  # pragma: no cover - the library drops its own columns
        raise KeyError(missing)
    out = frame.drop(names)
    _remember(out, without(schema, names))
    return out


def mapped(
    frame: pl.LazyFrame,
    function: Callable[[pl.DataFrame], pl.DataFrame],
    schema: Mapping[str, pl.DataType],
) -> pl.LazyFrame:
    """``frame.map_batches(function, schema=schema)``, its schema kept for
    :func:`schema_of`."""
    out = frame.map_batches(function, schema=schema)
    _remember(out, pl.Schema(schema))
    return out
