"""The columns a metric expression reads, checked when its plan knows the frame.

An expression (``irm.ndcg(...)``, ``irm.auc(...)``, ``irm.click_metric(...)``) is built
before any frame: a missing column or one of the wrong dtype would reach the user as
polars' own error at ``collect()`` (``ColumnNotFoundError``, ``cannot compare string
with numeric type``), or pass in silence (a String column cast to numbers). The check
is deferred to the planning of the query (:func:`polars.pipe_with_dtype`, at no cost
to the plan): a struct of a placeholder and the columns the frame has tells which it
holds and of what dtype; a missing or wrong one raises the library's
:class:`~polars_irmetrics.errors.ColumnNotFoundError` or
:class:`~polars_irmetrics.errors.ColumnTypeError`, naming the column, what the metric
reads from it and the fix.

Examples
--------
>>> import polars as pl
>>> from polars_irmetrics.ground.deferred import Need, checked_column
>>> score = checked_column("score", "scores", "name yours with score=...", numeric=True)
>>> pl.DataFrame({"score": [1.0, 2.0]}).select(score.sum()).item()
3.0
>>> pl.DataFrame({"score": ["1"]}).select(score.sum())  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
polars_irmetrics.errors.ColumnTypeError: column 'score' has dtype String; ...
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import polars as pl
import polars.selectors as cs

from polars_irmetrics.errors import ColumnNotFoundError, ColumnTypeError
from polars_irmetrics.ground.validate import integer_cast_fix, numeric_cast_fix

__all__ = ["PROBE", "Need", "checked", "checked_column", "checked_columns", "integer_rows"]

#: The placeholder field of the probe struct (so that it has a field where the frame
#: holds none of the columns).
PROBE = "__irm_probe"


@dataclass(frozen=True)
class Need:
    """A column an expression reads: its name, what it holds, and how to name yours."""

    name: str
    role: str
    fix: str
    numeric: bool
    integer: bool = False  # ranks: whole numbers of an integer dtype, as evaluate reads them
    #: times in seconds: a Datetime's cast gives its own unit (microseconds), not seconds
    seconds: bool = False
    #: ids compared as text: one value per row (a list or a struct casts to no text)
    flat: bool = False

    def resolve(self, fields: Mapping[str, pl.DataType]) -> pl.Expr:
        """``pl.col(name)``, or a library error when the frame lacks it or its dtype is
        wrong (``numeric``: neither a number nor a boolean)."""
        found, name = fields.get(self.name), self.name
        if found is None:
            raise ColumnNotFoundError(
                f"column {name!r} not found in the frame: the metric reads its {self.role} "
                f"from it; {self.fix}"
            )
        if self.seconds and found.is_temporal():
            raise ColumnTypeError(
                f"column {name!r} has dtype {found}; the metric reads its {self.role} from "
                "it as numbers: pass seconds from the session's start, e.g. "
                f"(pl.col({name!r}) - pl.col({name!r}).min().over('session_id'))"
                ".dt.total_microseconds() / 1e6, or evaluate the log with "
                "irm.evaluate_online, which reads a Datetime"
            )
        if self.flat and found.is_nested():
            held = "a struct" if isinstance(found, pl.Struct) else "a list"
            take = ".struct.field(...)" if isinstance(found, pl.Struct) else ".list.first()"
            raise ColumnTypeError(
                f"column {name!r} has dtype {found}; the metric reads its {self.role} from "
                f"it, one per row, where it holds {held} per row: take one, e.g. "
                f"pl.col({name!r}){take}"
            )
        if self.numeric and not (found.is_numeric() or found == pl.Boolean):
            raise ColumnTypeError(
                f"column {name!r} has dtype {found}; the metric reads its {self.role} from "
                f"it, which must be numeric: {numeric_cast_fix(name, found)}"
            )
        if self.integer and not found.is_integer():
            # a float rank (1.5, NaN) has no position: evaluate refuses the dtype too
            raise ColumnTypeError(
                f"column {name!r} has dtype {found}; the metric reads its {self.role} from "
                f"it, which must be an integer: {integer_cast_fix(name, found)}"
            )
        return pl.col(name)


def _same(column: pl.Expr) -> pl.Expr:
    return column


def checked_column(
    name: str, role: str, fix: str, *, numeric: bool, integer: bool = False
) -> pl.Expr:
    """``pl.col(name)``, or a library error when the frame has no such column (or, with
    ``numeric``/``integer``, one of another dtype)."""
    return checked_columns((Need(name, role, fix, numeric, integer),), _same)


def checked_columns(needs: tuple[Need, ...], build: Callable[..., pl.Expr]) -> pl.Expr:
    """``build(pl.col(...) for each need)``, once the frame is known to hold them. One
    deferred node for all the columns keeps the expression small where it is read many
    times (a rank, inside every metric)."""
    names = list(dict.fromkeys(need.name for need in needs))
    probe = pl.struct(pl.lit(0).alias(PROBE), cs.by_name(*names, require_all=False))
    return pl.pipe_with_dtype([probe], _Resolve(needs, build))


@dataclass(frozen=True, eq=False)
class _Given:
    """A built expression, returned whatever the columns (hashed by identity: a polars
    expression has no hash)."""

    expr: pl.Expr

    def __call__(self, *_columns: pl.Expr) -> pl.Expr:
        return self.expr


def checked(expr: pl.Expr, needs: tuple[Need, ...]) -> pl.Expr:
    """``expr`` itself, once the frame is known to hold the columns of ``needs`` (of
    their dtypes): an expression built from the names keeps its plan, and its columns
    are refused by the library's errors."""
    return checked_columns(needs, _Given(expr))


@dataclass(frozen=True)
class _Resolve:
    """The deferred check of :func:`checked_columns` (a picklable callable: plans may
    be sent)."""

    needs: tuple[Need, ...]
    build: Callable[..., pl.Expr]

    def __call__(self, inputs: list[tuple[pl.Expr, pl.DataType]]) -> pl.Expr:
        ((_, dtype),) = inputs
        fields = tuple((field.name, field.dtype) for field in getattr(dtype, "fields", []))
        return _resolved(self, fields)


@functools.lru_cache(maxsize=256)
def _resolved(resolve: _Resolve, fields: tuple[tuple[str, pl.DataType], ...]) -> pl.Expr:
    """What ``resolve`` gives a frame with these columns, built once: a rank expression
    is read dozens of times by each metric, and each read is resolved on its own."""
    found = dict(fields)
    return resolve.build(*(need.resolve(found) for need in resolve.needs))


@dataclass(frozen=True)
class _IntegerRows:
    """The deferred check of :func:`integer_rows` (a picklable callable)."""

    option: str
    role: str
    fix: str

    def __call__(self, inputs: list[tuple[pl.Expr, pl.DataType]]) -> pl.Expr:
        ((expr, dtype),) = inputs
        if not dtype.is_integer():
            # a cast drops a float's fraction: a rank of 1.5 (or a score) silently moved
            whole = "where every value is a whole number, " if dtype.is_float() else ""
            dropped = " (a cast drops a fraction: 1.5 becomes 1)" if whole else ""
            raise ColumnTypeError(
                f"the {self.option}= expression has dtype {dtype}; the metric reads its "
                f"{self.role} from it, which must be an integer: {whole}end it with "
                f".cast(pl.Int64){dropped}{self.fix}"
            )
        # one value per row: a literal (pl.lit(1)) is the value of every row, as the
        # same column would be, so the checks that count the rows see them all
        return pl.when(pl.repeat(True, pl.len())).then(expr)


def integer_rows(expr: pl.Expr, option: str, role: str, fix: str = "") -> pl.Expr:
    """``expr``, one value per row of the frame (or group), once the plan knows its
    dtype to be an integer: an expression's dtype is known only then, so one of another
    dtype raises :class:`~polars_irmetrics.errors.ColumnTypeError` at ``collect()`` (the
    eager ``select``), as a column named by ``option=`` would. ``fix``: the rest of the
    message (``", or ..."``).

    >>> frame = pl.DataFrame({"x": [1.5, 2.5]})
    >>> frame.select(integer_rows(pl.lit(1), "rank", "ranks")).to_series().to_list()
    [1, 1]
    >>> frame.select(integer_rows(pl.col("x"), "rank", "ranks"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.ColumnTypeError: the rank= expression has dtype Float64; ...

    A column the expression reads that the frame lacks is refused by name, as a column
    named by ``option=`` would be (it was polars' ``unable to find column``):

    >>> frame.select(integer_rows(pl.col("y").cast(pl.Int64), "rank", "ranks"))
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.ColumnNotFoundError: column 'y' not found in the frame: the metric reads its ranks from it; the rank= expression reads it: name a column of the frame in it
    """  # noqa: E501
    roots = tuple(dict.fromkeys(expr.meta.root_names()))
    if roots:
        named = f"the {option}= expression reads it: name a column of the frame in it{fix}"
        expr = checked(expr, tuple(Need(root, role, named, numeric=False) for root in roots))
    return pl.pipe_with_dtype([expr], _IntegerRows(option, role, fix))
