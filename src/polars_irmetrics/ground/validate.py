"""Input checks: column presence and dtypes up front, data checks inside the plan.

Schema checks run when the plan is built (they only read the schema). Data checks
(nulls, duplicates, bad ranks, NaN scores) are computed *inside* the evaluation plan
as per-query counts: the run's bad values through a filter into a small group-by, its
duplicates in a group-by per query, the judgments' problems beside the metrics.
:func:`raise_on_bad_rows` reads those counts from the small per-query result and raises
the first problem with a message that names the column, the query and the fix.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import polars as pl
from polars.datatypes import DataTypeClass

from polars_irmetrics.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    CoverageWarning,
    DuplicateError,
    InvalidValueError,
    IrmWarning,
    QuerySetError,
)
from polars_irmetrics.ground.facts import SharedIds, id_rows, shared_frame
from polars_irmetrics.ground.warning_order import hold, warn_now, warns_in_order

__all__ = [
    "FLOAT64_EXACT",
    "KEYED_TABLES",
    "LIST_TWO_ORDERS",
    "ODD_DOCS",
    "SYSTEM_TALLIES",
    "TALLY_ROW",
    "CheckSpec",
    "DocsHint",
    "IdKind",
    "ListOrder",
    "QueryHint",
    "UnplacedParts",
    "UnplacedRows",
    "absent_groups_row",
    "blind_queries",
    "check_id_kinds",
    "common_id_dtype",
    "coverage_counts",
    "coverage_unsaid",
    "describe_query",
    "doubled_group_error",
    "empty_table_text",
    "features_tally",
    "flag_error",
    "flag_template",
    "held_tally",
    "id_kind",
    "id_kinds_error",
    "integer_cast_fix",
    "interactions_by_keys",
    "interactions_tally",
    "is_text",
    "judged_tally",
    "key_dtype_error",
    "kind_of",
    "lacks_most",
    "merge_counts",
    "null_ids_count",
    "null_ids_error",
    "null_key_error",
    "numeric_cast_fix",
    "order_of",
    "ordered",
    "partly_queries",
    "raise_on_bad_rows",
    "raise_unplaced",
    "rank_against",
    "refuse_null_ids",
    "require_columns",
    "sampled_error",
    "suspect",
    "system_name",
    "system_tallies",
    "systems_column",
    "systems_named",
    "systems_row",
    "systems_tally",
    "tally_counts",
    "unplaced_query_error",
    "unplaced_rows",
    "warn_empty_table",
    "warn_from_plan",
    "warn_on_absent_groups",
    "warn_on_counts",
    "warn_on_coverage",
    "warn_on_features",
    "warn_on_interactions",
    "warn_on_joint",
    "warn_on_judged",
    "warn_on_pairs",
    "warns_of_features",
    "wide_numbers",
    "with_common_ids",
    "with_common_key_frames",
    "with_common_keys",
    "with_group_check",
    "with_history_check",
    "with_interactions_tally",
    "with_null_id_check",
    "with_tally",
    "with_tally_and_values",
]

IdKind = Literal["string", "integer"]
Policy = Literal["zero", "drop", "error"]
POLICIES: tuple[str, ...] = ("zero", "drop", "error")

#: Prefix of every internal column the plan adds; none reaches the user.
INTERNAL = "__irm_"
#: Per-query counts the coverage warning reads (:func:`warn_on_coverage`): judged
#: documents, judged documents retrieved, and whether the run lists the query (a
#: Boolean on the run's own check rows, :func:`raise_on_bad_rows` turns it into one per
#: query; absent where the plan does not read the run's query list).
JUDGED_DOCS = f"{INTERNAL}judged_docs"
FOUND_DOCS = f"{INTERNAL}found_docs"
LISTED = f"{INTERNAL}listed"
#: Per query of the run, how many of its rows hold a document id that is not its own
#: fold once the spaces around it, case and separators are ignored (an Int64 on the
#: run's own check rows, one per query after :func:`raise_on_bad_rows`, null where none
#: does; absent where the plan does not count them): the queries where a document of
#: the run may be spelt apart from a judged one (:func:`partly_queries`).
ODD_DOCS = f"{INTERNAL}odd_docs"


#: Float64's largest exact integer: every integer of smaller magnitude has an exact
#: Float64, and 2**53 + 1 reads as 2**53 there. A value a plan reads as Float64 (an
#: order column, a metric's mean, a rank written as a float) is refused beyond it,
#: never read as its neighbour.
FLOAT64_EXACT = 2**53


def wide_numbers(dtype: pl.DataType | DataTypeClass) -> bool:
    """Whether ``dtype`` holds integers beyond 2**53 (Float64's exact integers): Int64,
    UInt64, the 128-bit integers, and decimals of more than 15 digits. A plan that reads
    such a column as Float64 checks it against :data:`FLOAT64_EXACT`; any other dtype
    is read exactly (a float as the numbers it holds, a narrower integer as its Float64).

    >>> [wide_numbers(d) for d in (pl.Int64(), pl.Int32(), pl.Float64(), pl.Decimal(18, 2))]
    [True, False, False, True]
    >>> wide_numbers(pl.List(pl.UInt64).inner)  # a class where given as one
    True
    """
    if dtype is pl.Decimal:  # a class (a list's inner dtype may be one): any precision
        return True
    if isinstance(dtype, pl.Decimal):
        return dtype.precision is None or dtype.precision > 15
    return dtype in (pl.Int64, pl.UInt64, pl.Int128, pl.UInt128)


#: The fix a missing id column of the run names, and one of the judgments: one wording
#: whatever metric reads them.
RUN_COLUMNS_HINT = "pass the column names, e.g. query_id='qid', doc_id='docno'"
JUDGMENT_COLUMNS_HINT = "pass the column names, e.g. relevance='label'"


def require_columns(schema: pl.Schema, columns: Sequence[str], frame: str, hint: str) -> None:
    """Raise :class:`ColumnNotFoundError` for the first of ``columns`` not in ``schema``."""
    for name in columns:
        if name not in schema:
            have = ", ".join(repr(c) for c in schema.names()) or "none"
            raise ColumnNotFoundError(
                f"column {name!r} not found in the {frame} (its columns: {have}); {hint}"
            )


def side_ids_hint(owner: str, columns: Sequence[str]) -> str:
    """The fix of a table beside the ``owner`` (interactions, item features) that lacks
    the owner's id ``columns``: every table names the ids alike."""
    named = ", ".join(repr(c) for c in columns)
    return f"rename its id columns as in the {owner}: {named}"


def neither_order(schema: pl.Schema, rank: str, score: str, frame: str) -> ColumnNotFoundError:
    """The error of a table ranked by ``order='auto'`` with neither a ``rank`` nor a
    ``score`` column (one wording whatever metric orders it)."""
    have = ", ".join(repr(c) for c in schema.names())
    return ColumnNotFoundError(
        f"the {frame} has neither a {rank!r} nor a {score!r} column to order its "
        f"documents (its columns: {have}); name yours with rank=... or score=..."
    )


def rank_against(schema: pl.Schema, order: str, rank: str, score: str) -> str | None:
    """The score column ``order='auto'``'s ranks are checked against: where the run has
    both a ``rank`` column (which ``'auto'`` reads) and a numeric ``score`` column, the
    two may order a query differently, and which order is meant the data cannot say
    (refused: ``RUN_FLAGS``' ``two_orders``); ``None`` where the order is chosen
    (``'rank'``, ``'score'``) or the run has one of them.

    >>> schema = pl.Schema({"rank": pl.Int64, "score": pl.Float64})
    >>> rank_against(schema, "auto", "rank", "score")
    'score'
    >>> rank_against(schema, "rank", "rank", "score") is None  # the order is chosen
    True
    """
    if order != "auto" or rank == score or rank not in schema or score not in schema:
        return None
    dtype = schema[score]
    return score if dtype.is_numeric() or dtype == pl.Boolean else None


def is_text(dtype: pl.DataType) -> bool:
    """Whether ids of ``dtype`` are strings: String, Categorical or Enum (compared as
    text wherever two tables meet).

    >>> is_text(pl.Categorical()), is_text(pl.Enum(["a"])), is_text(pl.Int64())
    (True, True, False)
    """
    return dtype == pl.String or isinstance(dtype, pl.Categorical | pl.Enum)


def kind_of(dtype: pl.DataType) -> IdKind | None:
    """``"string"`` or ``"integer"``: the kind of ids ``dtype`` holds; ``None`` for a
    dtype that holds no ids (floats, dates...)."""
    if is_text(dtype):
        return "string"
    return "integer" if dtype.is_integer() else None


def id_kind(schema: pl.Schema, column: str, frame: str) -> IdKind:
    """Whether an id column holds strings or integers; any other dtype is an error, and
    so is a missing column (named, with the table's columns)."""
    require_columns(schema, [column], frame, "name the id columns with their keywords")
    dtype = schema[column]
    kind = kind_of(dtype)
    if kind is not None:
        return kind
    # a float's text ('1.0') matches no integer id of another table: whole numbers
    # are integers (pl.Int64), anything else text
    to = "pl.Int64" if dtype.is_float() or dtype.is_decimal() else "pl.String"
    raise ColumnTypeError(
        f"column {column!r} in the {frame} has dtype {dtype}; ids must be strings or "
        f"integers: cast it, e.g. pl.col({column!r}).cast({to})"
    )


def common_id_dtype(dtypes: Sequence[pl.DataType]) -> pl.DataType:
    """The dtype one id column is cast to in every table so that joins match: String
    for strings (Categorical and Enum included), else an integer dtype that holds every
    value: Int64, or where a UInt64 is involved UInt64 beside unsigned, Int128 beside
    signed; Int128 where one is (UInt128 among unsigned ones). The kinds must agree
    (:func:`check_id_kinds`).

    Examples
    --------
    >>> common_id_dtype([pl.Categorical(), pl.String()])
    String
    >>> common_id_dtype([pl.UInt64(), pl.Int32()]), common_id_dtype([pl.UInt8(), pl.Int32()])
    (Int128, Int64)
    >>> common_id_dtype([pl.Int128(), pl.Int64()])
    Int128
    """
    if any(is_text(d) for d in dtypes):
        return pl.String()
    signed = any(d.is_signed_integer() for d in dtypes)
    if pl.UInt128() in dtypes:  # beside a signed one, ids above 2**127 fail the cast
        return pl.Int128() if signed else pl.UInt128()
    if pl.Int128() in dtypes:
        return pl.Int128()
    if pl.UInt64() not in dtypes:
        return pl.Int64()
    return pl.Int128() if signed else pl.UInt64()


def key_dtype_error(
    key: str, dtype: pl.DataType, where: str, other: pl.DataType, other_where: str
) -> ColumnTypeError:
    """The refusal of a ``by=`` or ``systems=`` key of one dtype ``where`` (``"the
    run"``) and another ``other_where`` (``"the judgments"``, ``"queries="``), the two
    tables joined on it: it names the cast that gives both one dtype (text for text or
    text beside integers, the integer dtype that holds both for integers, else the
    dtype ``where`` holds), so that the groups meet by value. Through the door only two
    kinds reach it (text beside integers, a float beside an integer): one kind in two
    dtypes is lined up first (:func:`with_common_keys`).

    >>> error = key_dtype_error("day", pl.Int32(), "the run", pl.String(), "the judgments")
    >>> str(error).split("; ")[1]
    "cast one side to match, e.g. pl.col('day').cast(pl.String) on both"
    """
    kinds = {kind_of(dtype), kind_of(other)}
    if kinds == {"integer"}:
        to = common_id_dtype([dtype, other])
    elif "string" in kinds:
        to = pl.String()
    else:
        to = dtype
    return ColumnTypeError(
        f"column {key!r} has dtype {dtype} in {where} but {other} in {other_where}; cast "
        f"one side to match, e.g. pl.col({key!r}).cast(pl.{to!r}) on both"
    )


def with_common_ids(
    tables: Mapping[str, pl.LazyFrame], columns: Mapping[str, Sequence[str]]
) -> dict[str, pl.LazyFrame]:
    """``tables`` with each id column of ``columns`` (column -> the names of the tables
    holding it; a name not in ``tables`` or a table that lacks it is skipped) cast to
    :func:`common_id_dtype` of its dtypes there, so that every join on it matches by
    value. The kinds must agree (:func:`check_id_kinds`).

    Examples
    --------
    >>> run = pl.LazyFrame({"doc_id": ["a"]}, schema={"doc_id": pl.Categorical})
    >>> qrels = pl.LazyFrame({"doc_id": ["a"]})
    >>> cast = with_common_ids({"run": run, "qrels": qrels}, {"doc_id": ["run", "qrels"]})
    >>> cast["run"].collect_schema()["doc_id"]
    String
    """
    schemas = {k: t.collect_schema() for k, t in tables.items()}
    casts: dict[str, list[pl.Expr]] = {k: [] for k in schemas}
    for column, names in columns.items():
        present = [n for n in names if n in schemas and column in schemas[n]]
        dtype = common_id_dtype([schemas[n][column] for n in present])
        for name in present:
            if schemas[name][column] != dtype:
                casts[name].append(pl.col(column).cast(dtype))
    return {k: t.with_columns(casts[k]) if casts[k] else t for k, t in tables.items()}


#: The side tables that hold a ``by``/``systems`` key beside the run and are matched with
#: it on that key (their rows serve their own group): the judgments, ``queries=``, the
#: interactions and item features, the reference run and the exact neighbours.
KEYED_TABLES = ("qrels", "queries", "interactions", "item_features", "reference", "neighbors")


def with_common_keys(
    run: pl.LazyFrame, tables: Mapping[str, pl.LazyFrame | None], keys: Sequence[str]
) -> tuple[pl.LazyFrame, dict[str, pl.LazyFrame | None]]:
    """``run`` and ``tables`` with each ``by``/``systems`` key of ``keys`` that the run
    and some table of :data:`KEYED_TABLES` hold in dtypes of one kind (integers of two
    widths, Categorical beside String) cast to :func:`common_id_dtype` of them on every
    side, as the ids are (:func:`with_common_ids`): the groups then meet by value (a
    UInt64 group beyond Int64 kept whole, in Int128). A key of two kinds (text beside
    integers) or of a dtype that holds no ids (floats, dates) is left as it is, for the
    route to refuse by name (:func:`key_dtype_error`); so is every table the key is not
    matched on (``labels=``, ``groups=``...: the run's key stays its own there).

    Examples
    --------
    >>> run = pl.LazyFrame({"day": [1]}, schema={"day": pl.Int32})
    >>> qrels = pl.LazyFrame({"day": [1]}, schema={"day": pl.Int64})
    >>> run, tables = with_common_keys(run, {"qrels": qrels, "labels": run}, ["day"])
    >>> run.collect_schema()["day"], tables["labels"].collect_schema()["day"]
    (Int64, Int32)
    """
    given = {k: t for k, t in tables.items() if k in KEYED_TABLES and t is not None}
    cast = _common_keys({"run": run, **given}, keys)
    cast = {k: signless_zero_keys(t, keys) for k, t in cast.items()}
    return cast["run"], {k: cast.get(k, t) for k, t in tables.items()}


def signless_zero_keys(frame: pl.LazyFrame, keys: Sequence[str]) -> pl.LazyFrame:
    """``frame`` with each float key of ``keys`` it holds read with -0.0 as 0.0: the two
    are equal, so a grouping puts them in one group, whose label was then whichever
    sign it met first (``-0.0`` on one path and ``0.0`` on another, and a query of the
    ``0.0`` rows labelled ``-0.0`` beside it); every other value is kept, bit for bit
    (NaN too). A frame without a float key is returned as it is.

    >>> frame = pl.LazyFrame({"system": [-0.0, 0.0, 1.5]})
    >>> signless_zero_keys(frame, ["system"]).collect()["system"].to_list()
    [0.0, 0.0, 1.5]
    """
    schema = frame.collect_schema()
    floats = [k for k in dict.fromkeys(keys) if k in schema and schema[k].is_float()]
    if not floats:
        return frame
    return frame.with_columns(
        pl.when(pl.col(k) == 0).then(pl.lit(0.0, schema[k])).otherwise(pl.col(k)).alias(k)
        for k in floats
    )


def with_common_key_frames(keys: Sequence[str], *frames: pl.LazyFrame) -> tuple[pl.LazyFrame, ...]:
    """``frames``, matched on the ``by``/``systems`` keys (the run first, then its side
    tables, or a part's rows and a side table), with each key of ``keys`` that the
    first holds lined up as :func:`with_common_keys` lines it up.

    >>> run = pl.LazyFrame({"day": ["1"]}, schema={"day": pl.Categorical})
    >>> run, other = with_common_key_frames(["day"], run, pl.LazyFrame({"day": ["1"]}))
    >>> run.collect_schema()["day"]
    String
    """
    names = ["run", *(str(n) for n in range(1, len(frames)))]
    cast = _common_keys(dict(zip(names, frames, strict=True)), keys)
    return tuple(cast[n] for n in names)


def _common_keys(tables: dict[str, pl.LazyFrame], keys: Sequence[str]) -> dict[str, pl.LazyFrame]:
    """``tables`` (the run's under ``"run"``) with the keys of one kind in two dtypes
    the run holds cast to one (:func:`with_common_keys`)."""
    if not keys or len(tables) < 2:
        return tables
    schemas = {k: t.collect_schema() for k, t in tables.items()}
    columns: dict[str, list[str]] = {}
    for key in keys:
        holding = [k for k, schema in schemas.items() if key in schema]
        dtypes = {schemas[k][key] for k in holding}
        kinds = {kind_of(d) for d in dtypes}
        if "run" in holding and len(dtypes) > 1 and len(kinds) == 1 and None not in kinds:
            columns[key] = holding
    return with_common_ids(tables, columns) if columns else tables


def check_id_kinds(
    first: pl.Schema, first_name: str, second: pl.Schema, second_name: str, columns: Sequence[str]
) -> None:
    """Raise :class:`ColumnTypeError` where an id column of ``columns`` holds strings in
    one table and integers in the other: the two would match no row (a join casts
    nothing), or only after a silent cast. Columns a table lacks are skipped. A name
    that ends in ``=`` is an argument's (``"queries="``), named as it is; another is a
    table's (``"run"``: "the run").

    Examples
    --------
    >>> check_id_kinds(pl.Schema({"group": pl.String}), "groups", pl.Schema({"group": pl.Int64}),
    ...                "target", ["group"])
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.ColumnTypeError: column 'group' holds strings in the groups ...
    """
    for column in columns:
        if column not in first or column not in second:
            continue
        kinds = id_kind(first, column, first_name), id_kind(second, column, second_name)
        if kinds[0] != kinds[1]:
            raise id_kinds_error(column, first, first_name, second, second_name)


def id_kinds_error(
    column: str, first: pl.Schema, first_name: str, second: pl.Schema, second_name: str
) -> ColumnTypeError:
    """The one refusal of an id column that holds strings in one table and integers in
    the other (:func:`check_id_kinds`), worded alike by every route that matches two
    tables on their ids, whichever metrics are asked for: the run first
    (``first_name="run"``). A name that ends in ``=`` is an argument's (``"groups="``),
    named as it is; another is a table's (``"judgments"``: "the judgments"). Both
    columns are ids already checked (:func:`id_kind`).

    >>> str(id_kinds_error("doc_id", pl.Schema({"doc_id": pl.Int64}), "run",
    ...                    pl.Schema({"doc_id": pl.String}), "groups="))  # doctest: +ELLIPSIS
    "column 'doc_id' holds integers in the run (Int64) but strings in groups= (String); ..."
    """
    kinds = kind_of(first[column]), kind_of(second[column])
    one, two = (n if n.endswith("=") else f"the {n}" for n in (first_name, second_name))
    return ColumnTypeError(
        f"column {column!r} holds {kinds[0]}s in {one} ({first[column]}) "
        f"but {kinds[1]}s in {two} ({second[column]}); cast one side, "
        f"e.g. pl.col({column!r}).cast(pl.String) on both"
    )


def interactions_by_keys(
    run: pl.Schema, interactions: pl.Schema, by: Sequence[str], frame: str = "run"
) -> list[str]:
    """The ``by`` keys of ``run`` that ``interactions`` carries too: each group's metrics
    read that group's interactions alone (as the recommendation table's metrics do);
    a key of another dtype there is refused (:class:`ColumnTypeError`).

    Examples
    --------
    >>> interactions_by_keys(pl.Schema({"s": pl.String}), pl.Schema({"s": pl.String}), ["s"])
    ['s']
    >>> interactions_by_keys(pl.Schema({"s": pl.String}), pl.Schema({"s": pl.Int64}), ["s"])
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.ColumnTypeError: column 's' has dtype String in the run but ...
    """
    keys = [k for k in by if k in run and k in interactions]
    for key in keys:
        if interactions[key] != run[key]:
            raise key_dtype_error(
                key, run[key], f"the {frame}", interactions[key], "the interactions"
            )
    return keys


def integer_cast_fix(column: str, dtype: pl.DataType) -> str:
    """The fix for a column of ``dtype`` that must hold integers: a cast, which for
    floats drops a fraction (``1.5`` becomes ``1``: a rank silently moved), so
    checked first.

    >>> integer_cast_fix("rank", pl.String())
    "cast it, e.g. pl.col('rank').cast(pl.Int64)"
    >>> integer_cast_fix("rank", pl.Float64())
    "where every value is a whole number, cast it, e.g. pl.col('rank').cast(pl.Int64) (a \
cast drops a fraction: 1.5 becomes 1; check (pl.col('rank') % 1 == 0).all() first)"
    """
    if isinstance(dtype, pl.List | pl.Array | pl.Struct):  # no cast makes one number
        return numeric_cast_fix(column, dtype)
    cast = f"pl.col({column!r}).cast(pl.Int64)"
    if not dtype.is_float():
        return f"cast it, e.g. {cast}"
    return (
        f"where every value is a whole number, cast it, e.g. {cast} (a cast drops a "
        f"fraction: 1.5 becomes 1; check (pl.col({column!r}) % 1 == 0).all() first)"
    )


def numeric_cast_fix(column: str, dtype: pl.DataType) -> str:
    """The fix for a column of ``dtype`` where numbers are read, one per row: a cast to
    Float64, except where that cast fails or loses the order it holds. A date or time
    is cast to its integer count (exact: a Float64 holds integers to 2**53 only, so two
    timestamps in nanoseconds a few apart would read as one score, tied); a list or a
    struct per row has no cast to one number: the message says which value to take.

    >>> numeric_cast_fix("score", pl.String())
    "cast it, e.g. pl.col('score').cast(pl.Float64)"
    >>> numeric_cast_fix("score", pl.Datetime("ns"))
    "cast it to its integer count, e.g. pl.col('score').cast(pl.Int64) (exact; a cast \
to pl.Float64 holds integers to 2**53 only: timestamps in nanoseconds a few apart would \
tie)"
    >>> numeric_cast_fix("score", pl.Array(pl.Float64, 2))
    "it holds an array per row, where one number per row is read: take one, e.g. \
pl.col('score').arr.first() (a list-shaped table holds its ids in a list of the same \
length beside it)"
    >>> numeric_cast_fix("score", pl.Struct({"value": pl.Float64}))
    "it holds a struct per row, where one number per row is read: take the field that \
holds it, e.g. pl.col('score').struct.field('value')"
    """
    col = f"pl.col({column!r})"
    if dtype.is_temporal():
        return (
            f"cast it to its integer count, e.g. {col}.cast(pl.Int64) (exact; a cast to "
            "pl.Float64 holds integers to 2**53 only: timestamps in nanoseconds a few "
            "apart would tie)"
        )
    if isinstance(dtype, pl.List | pl.Array):
        kind, space = ("a list", "list") if isinstance(dtype, pl.List) else ("an array", "arr")
        return (
            f"it holds {kind} per row, where one number per row is read: take one, e.g. "
            f"{col}.{space}.first() (a list-shaped table holds its ids in a list of the "
            "same length beside it)"
        )
    if isinstance(dtype, pl.Struct):
        field = dtype.fields[0].name if dtype.fields else "name"
        return (
            "it holds a struct per row, where one number per row is read: take the field "
            f"that holds it, e.g. {col}.struct.field({field!r})"
        )
    return f"cast it, e.g. {col}.cast(pl.Float64)"


def check_numeric(schema: pl.Schema, column: str, frame: str, *, integer: bool) -> None:
    """Raise :class:`ColumnTypeError` unless ``column`` is numeric (an integer if asked)."""
    dtype = schema[column]
    ok = dtype.is_integer() if integer else (dtype.is_numeric() or dtype == pl.Boolean)
    if not ok:
        want = "an integer" if integer else "numeric"
        fix = integer_cast_fix(column, dtype) if integer else numeric_cast_fix(column, dtype)
        raise ColumnTypeError(
            f"column {column!r} in the {frame} has dtype {dtype}; it must be {want}: {fix}"
        )


def check_policy(name: str, value: str) -> Policy:
    """Validate a query-set policy argument."""
    if value not in POLICIES:
        raise InvalidValueError(
            f"{name}={value!r} is not a policy; choose one of 'zero', 'drop', 'error'"
        )
    return value  # type: ignore[return-value]


@dataclass(frozen=True)
class CheckSpec:
    """What :func:`raise_on_bad_rows` checks and how it words the messages."""

    keys: tuple[str, ...]
    query_id: str
    doc_id: str
    rank: str | None
    score: str | None
    relevance: str
    judged_table: bool
    unjudged: Policy
    unretrieved: Policy
    check_duplicates: bool = True
    #: ``by`` keys of the run alone (attributes of the query with no value for the
    #: judged queries): a judged query a group did not retrieve cannot be placed.
    unplaced: tuple[str, ...] = ()
    #: ``by`` keys brought from ``queries=`` (a null one: a query it has no row for).
    from_queries: tuple[str, ...] = ()
    #: The names of the run and of the judgments in messages, where they are other
    #: tables (neighbour recall: the approximate run and the exact ``neighbors``).
    frames: tuple[str, str] | None = None
    #: The ``by`` keys the run and the judgments hold as columns (``systems=``, a
    #: system's own judgments): a duplicate's fix keeps one row per them too.
    run_keys: tuple[str, ...] = ()
    judged_keys: tuple[str, ...] = ()
    #: Whether the refusal of an ``unplaced`` key offers ``unretrieved='drop'``
    #: (:attr:`EvalOptions.offers_drop
    #: <polars_irmetrics.ground.options.EvalOptions.offers_drop>`).
    offers_drop: bool = True
    #: The score column the ranks are checked against (:func:`rank_against`), or None.
    against: str | None = None


# (flag column, error class, message template). Templates see {col}, {query}, {n}.
RUN_FLAGS: tuple[tuple[str, type[Exception], str, str], ...] = (
    (
        "null_doc",
        InvalidValueError,
        "doc_id",
        "column {col!r} of the {frame} has {n} null value(s) in query {query}; "
        "every row needs a document id: drop them, e.g. .drop_nulls({col!r})",
    ),
    (
        "dup_doc",
        DuplicateError,
        "doc_id",
        "column {col!r} of the {frame}: query {query} has {n} repeated listing(s) (each of "
        "a document listed before in the query); each (query, document) pair may appear "
        "once (trec_eval refuses such runs too): keep one row per document, e.g. "
        ".unique({unique!r})",
    ),
    (
        "null_rank",
        InvalidValueError,
        "rank",
        "column {col!r} of the {frame} has {n} null value(s) in query {query}; "
        "every retrieved document needs a rank: fill or drop them, or rank by score "
        "with order='score'",
    ),
    (
        "bad_rank",
        InvalidValueError,
        "rank",
        "column {col!r} of the {frame} has {n} rank(s) below 1 in query {query}; "
        "ranks start at 1 for the top document: add 1 to 0-based ranks, e.g. "
        "pl.col({col!r}) + 1",
    ),
    (
        "big_rank",
        InvalidValueError,
        "rank",
        "column {col!r} of the {frame} has {n} rank(s) of 2**63 or more in query {query}; "
        "a rank counts positions in one list: renumber them 1, 2, 3, ..., e.g. "
        "pl.col({col!r}).rank('ordinal').over(query_id)",
    ),
    (
        "dup_rank",
        DuplicateError,
        "rank",
        "column {col!r} of the {frame}: query {query} has {n} duplicate rank(s); each "
        "rank may hold one document: break the ties, or rank by score with order='score'",
    ),
    (
        "null_score",
        InvalidValueError,
        "score",
        "column {col!r} of the {frame} has {n} null value(s) in query {query}; every "
        "document needs a score to be ranked: fill or drop them, e.g. .drop_nulls({col!r})",
    ),
    (
        "nan_score",
        InvalidValueError,
        "score",
        "column {col!r} of the {frame} has {n} NaN value(s) in query {query}; NaN cannot be "
        "ranked: replace them, e.g. pl.col({col!r}).fill_nan(float('-inf'))",
    ),
    (
        "two_orders",
        InvalidValueError,
        "rank",
        "columns {col!r} and {score!r} of the {frame} order query {query} differently: {n} "
        "document(s) score lower than a document ranked below them. order='auto' reads "
        "{col!r} where the {frame} has it, and which order is meant the data cannot say: "
        "pass order='rank' to rank by {col!r}, or order='score' to rank by {score!r} "
        "(trec_eval's order, which ignores ranks)",
    ),
    (
        "q_null_doc",
        InvalidValueError,
        "doc_id",
        "column {col!r} of the {qframe} has {n} null value(s) in query {query}; "
        "every judgment needs a document id: drop them, e.g. .drop_nulls({col!r})",
    ),
    (
        "q_null_rel",
        InvalidValueError,
        "relevance",
        "column {col!r} of the {qframe} has {n} null value(s) in query {query}; every "
        "judged document needs a relevance label: fill them (e.g. .fill_null(0)) or drop them",
    ),
    (
        "q_bad_rel",
        InvalidValueError,
        "relevance",
        "column {col!r} of the {qframe} has {n} label(s) that are NaN, infinite, of "
        "magnitude 2**32 or more or below 2**-30 (other than 0), or between -1 and 0 in "
        "query {query}; a relevance label must be 0 or a finite number of magnitude in "
        "[2**-30, 2**32) (what evaluate's exact sums hold), and not between -1 and 0 "
        "(unjudged here, judged non-relevant by trec_eval, which truncates it to 0): "
        "replace or drop them, or rescale the labels",
    ),
    (
        "j_dup_rank",
        DuplicateError,
        "rank",
        "column {col!r} of the {frame}: query {query} has {n} judged document(s) at a rank "
        "another judged document holds; each rank may hold one document: break the ties, "
        "or rank by score with order='score'",
    ),
    (
        "q_dup_doc",
        DuplicateError,
        "doc_id",
        "column {col!r} of the {qframe}: query {query} has {n} repeated judgment(s) (each "
        "of a document judged before in the query); keep one judgment per document, e.g. "
        ".unique({unique!r})",
    ),
    (
        "q_big_term",
        InvalidValueError,
        "relevance",
        "column {col!r} of the {qframe}: in query {query}, {n} judged document(s) give a "
        "metric term of 2**32 or more, or not finite (a label above 32 with "
        "gain='exponential'), more than evaluate's exact sums hold: rescale the labels, or "
        "use the linear gain",
    ),
)


class ListOrder(str):
    """The name of a list-shaped run's rank column, made of the lists' positions
    (:func:`~polars_irmetrics.ground.lists.long_run`): the same text as the name (a
    column, an option's value, equal to it everywhere), marked so that a message about
    the ranks says "the lists' order" instead of naming a column the caller never wrote
    (:data:`LIST_TWO_ORDERS`).

    >>> ListOrder("rank") == "rank", repr(ListOrder("rank"))
    (True, "'rank'")
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return str.__repr__(self)


#: ``two_orders`` of a list-shaped run whose ranks are the lists' positions (the rank
#: column is a :class:`ListOrder`): the lists' order, not a column, against the scores.
LIST_TWO_ORDERS = (
    "the lists' order and column {score!r} of the {frame} order query {query} "
    "differently: {n} document(s) score lower than a document listed after them. "
    "order='auto' reads the lists' order (their positions) where the {frame} has no "
    "list of ranks, and which order is meant the data cannot say: pass order='rank' to "
    "rank by the lists' order, or order='score' to rank by the score lists in {score!r} "
    "(trec_eval's order, which ignores ranks)"
)


def flag_template(name: str, template: str, rank: str | None) -> str:
    """The template of :data:`RUN_FLAGS`' check ``name``: ``template``, or
    :data:`LIST_TWO_ORDERS` where the ranks are a list-shaped run's positions
    (``rank``, the rank column's name, a :class:`ListOrder`)."""
    return LIST_TWO_ORDERS if name == "two_orders" and isinstance(rank, ListOrder) else template


#: With check_duplicates=False a judged document twice in the run also shows here: the
#: count is of the query's judgments joined to its run rows (a judgment per run row that
#: lists its document, or alone where none does), each row past its document's first.
UNCHECKED_DUP_DOC = (
    "column {col!r}: query {query} has judged document(s) listed more than once, in the "
    "{frame} or in the {qframe}: {n} repeated row(s) once its judgments are joined to its "
    "{frame} rows (the run's own duplicate checks are off: check_duplicates=False); keep "
    "one row per document, e.g. .unique({unique!r})"
)


def flag_error(
    name: str,
    columns: Mapping[str, str | None],
    query: object,
    n: object,
    *,
    frame: str = "run",
    shown: str | None = None,
    keys: Sequence[str] = (),
) -> Exception:
    """The error of :data:`RUN_FLAGS`' check ``name`` for a run and judgments (the
    columns named by role in ``columns``; the query's as ``"query_id"``), first failing
    in ``query`` ``n`` times: for the routes that check the two as the ranking metrics
    do, in their words. ``frame``:
    the run's name in the message (``"recommendations"`` where the caller named it so);
    ``shown``: the query as text already (with its group), instead of ``repr(query)``;
    ``keys``: the ``by`` keys the table holds as columns, which a duplicate's fix keeps
    (judgments per system)."""
    error, role, template = next((e, r, t) for f, e, r, t in RUN_FLAGS if f == name)
    template = flag_template(name, template, columns.get("rank"))
    text = repr(query) if shown is None else shown
    qcol = columns.get("query_id") or "query_id"
    unique = [*keys, qcol, columns[role]]
    return error(
        template.format(
            col=columns[role],
            qcol=qcol,
            unique=unique,
            frame=frame,
            qframe="judgments",
            query=text,
            n=n,
            score=columns.get("against") or columns.get("score"),
        )
    )


def sampled_error(column: str, query: str, n: int, frame: str = "run") -> InvalidValueError:
    """The error of a query of the run (``frame``) with rows under ``n`` (more than one)
    values of its ``sample_id=`` column ``column``: sampled rankings of a stochastic
    policy, each a ranking of its own for the exposure measures, where the metrics asked
    for read one ranking per query and would read every sample's documents as one
    ranking. ``query``: the query as text (``repr``, with its group). The same message
    on every route and path (one plan, buckets, the engines' parts).

    >>> sampled_error("sample", "1", 2)  # doctest: +ELLIPSIS
    InvalidValueError("the run's column 'sample' (sample_id=) holds sampled rankings: ...")
    """
    owner = f"{frame}'" if frame.endswith("s") else f"{frame}'s"
    return InvalidValueError(
        f"the {owner} column {column!r} (sample_id=) holds sampled rankings: query "
        f"{query} has rows under {n} of its values, and the metrics asked for read one "
        f"ranking per query, so they would read every sample's documents as one ranking: "
        f"evaluate them on one sample, e.g. .filter(pl.col({column!r}) == 0), ask for the "
        f"exposure measures that read sampled rankings (ee_loss, ee_disparity, "
        f"ee_relevance, awrf, awrf_ndcg, rnd, rkl, rrd) in a call of their own, or drop "
        f"or rename the column if it holds no samples"
    )


def null_key_error(column: str, frame: str = "run") -> InvalidValueError:
    """The error of a null query (or user) id in ``column`` of the run (``frame``), in
    the ranking metrics' words."""
    return InvalidValueError(
        f"column {column!r} of the {frame} has null values; every row needs a {column}: "
        f"drop them, e.g. .drop_nulls({column!r})"
    )


def doubled_group_error(document: object) -> DuplicateError:
    """The refusal of a groups table (``groups=``) that lists ``document`` twice in one
    group, in the words of every measure that reads it (the exposure measures, Elliot's
    item_mad@k).

    >>> print(doubled_group_error("d1"))
    the groups table (groups=) lists document 'd1' twice in one group (column 'group'); one row per (document, group): drop the duplicates, e.g. .unique()
    """  # noqa: E501
    return DuplicateError(
        f"the groups table (groups=) lists document {document!r} twice in one group "
        "(column 'group'); one row per (document, group): drop the duplicates, "
        "e.g. .unique()"
    )


def null_ids_error(
    keyword: str, count: int | str, columns: Sequence[str], row: str
) -> InvalidValueError:
    """The refusal of a table beside the run (``keyword=``: groups=, user_groups=,
    propensities=, queries=) with ``count`` rows whose id (``columns``) is null: such a
    row names nothing the run holds and would be dropped by every join in silence, as
    the judgments', the interactions', the item features', the target's, the reference's
    and the labels' null ids are refused. ``row``: what each row of the table is;
    ``count`` may be a placeholder (``"{first}"``) where a plan's check fills it in.

    >>> print(null_ids_error("groups", 2, ["doc_id"], "each row puts one document in a group"))
    ... # doctest: +NORMALIZE_WHITESPACE
    groups= has 2 row(s) with a null 'doc_id': each row puts one document in a group, and
    a null id names none; fill or drop them, e.g. groups.drop_nulls(['doc_id'])
    """
    named = [repr(c) for c in columns]
    return InvalidValueError(
        f"{keyword}= has {count} row(s) with a null {' or '.join(named)}: {row}, and a null "
        f"id names none; fill or drop them, e.g. {keyword}.drop_nulls([{', '.join(named)}])"
    )


def null_ids_count(columns: Sequence[str]) -> pl.Expr:
    """The rows with a null in any of ``columns`` (an id): null where there is none, as
    a plan's flag of a first offender reads (:func:`null_ids_error`'s count)."""
    nulls = pl.any_horizontal(pl.col(c).is_null() for c in columns).sum().cast(pl.Int64)
    return pl.when(nulls > 0).then(nulls)


def unplaced_query_error(key: str, first: object, count: int) -> QuerySetError:
    """The error of ``count`` queries (of the run and the judgments) with no ``key`` in
    ``queries=``, ``first`` the lowest of their ids: on one machine, and on the
    engines, which look for them across their parts.

    >>> unplaced_query_error("segment", "q2", 1)
    QuerySetError("query 'q2' has no 'segment' in queries=: give every query of the run ...")
    """
    return QuerySetError(
        f"query {first!r} has no {key!r} in queries=: give every query of the run and the "
        f"judgments a row there ({count} have none)"
    )


def flag(name: str) -> str:
    """Internal column name of a data-check count."""
    return f"{INTERNAL}v_{name}"


#: Exact counts of one check for the queries the plan flagged (see ``recount`` below).
Recount = Callable[[pl.DataFrame], pl.DataFrame]


def raise_on_bad_rows(
    frame: pl.DataFrame,
    spec: CheckSpec,
    *,
    check_rows: str,
    recount: Mapping[str, Recount] | None = None,
) -> pl.DataFrame:
    """Raise the first data problem recorded in the per-query frame, else drop the flags.

    ``frame`` holds one row per query with the plan's check counts (``__irm_v_*``)
    and the flags ``__irm_judged`` / ``__irm_retrieved``, followed by rows that only
    carry check counts of the run (``check_rows`` true): they are read for the data
    problems, then dropped with the flags.

    ``recount`` maps a check's name to a function for a plan count that can only err
    upwards (a count of distinct hashes, where two ids may share a hash): given the
    flagged rows (the keys and the count), it returns the exact counts of those
    queries, read again from the input; only those are reported, and a query whose
    exact count is 0 is not. It runs only when the plan flagged something.
    """
    columns: Mapping[str, str | None] = {
        "doc_id": spec.doc_id,
        "rank": spec.rank,
        "score": spec.score,
        "relevance": spec.relevance,
    }
    run_frame = "judged table" if spec.judged_table else "run"
    qrels_frame = "judged table" if spec.judged_table else "judgments"
    if spec.frames is not None:
        run_frame, qrels_frame = spec.frames
    for key in spec.keys:
        if frame[key].null_count() and key in spec.from_queries:
            queries = frame.filter(pl.col(key).is_null()).get_column(spec.query_id)
            raise unplaced_query_error(key, queries.sort()[0], queries.n_unique())
        if frame[key].null_count():
            side = _side_of_null_key(frame, key)
            if spec.frames is not None:
                side = run_frame if side == "run" else qrels_frame
            raise ordered(null_key_error(key, side if not spec.judged_table else run_frame), 0)
    for rank, (name, error, role, template) in enumerate(RUN_FLAGS):
        column = flag(name)
        if column not in frame.columns:
            continue
        bad = frame.filter(pl.col(column) > 0)
        if bad.height and recount is not None and name in recount:
            bad = recount[name](bad.select(*spec.keys, column)).filter(pl.col(column) > 0)
        bad = bad.sort(spec.keys)
        if bad.height:
            row = bad.row(0, named=True)
            if name == "q_dup_doc" and not spec.check_duplicates:
                template = UNCHECKED_DUP_DOC
            template = flag_template(name, template, spec.rank)
            keys = spec.judged_keys if name == "q_dup_doc" else spec.run_keys
            text = template.format(
                col=columns[role],
                qcol=spec.query_id,
                unique=[*keys, spec.query_id, columns[role]],
                frame=run_frame,
                qframe=qrels_frame,
                query=describe_query(row, spec),
                n=row[column],
                score=spec.against or spec.score,
            )
            raise ordered(error(text), 1, rank, [row[k] for k in spec.keys])
    if ODD_DOCS in frame.columns:  # the run's odd ids, from its per-query check rows
        odd = (
            frame.filter(pl.col(check_rows) & pl.col(ODD_DOCS).is_not_null())
            .group_by(spec.keys)
            .agg(pl.col(ODD_DOCS).sum())
        )
        frame = frame.drop(ODD_DOCS).join(
            odd, on=spec.keys, how="left", nulls_equal=True, maintain_order="left"
        )
    if LISTED in frame.columns:  # the run's queries, from its per-query check rows
        listed = (
            frame.filter(pl.col(check_rows) & pl.col(LISTED).fill_null(False))
            .select(spec.keys)
            .unique()
            .with_columns(pl.lit(True).alias(LISTED))
        )
        frame = (
            frame.filter(~pl.col(check_rows))
            .drop(LISTED)
            .join(listed, on=spec.keys, how="left", nulls_equal=True, maintain_order="left")
            .with_columns(pl.col(LISTED).fill_null(False))
        )
    frame = frame.filter(~pl.col(check_rows))
    judged, retrieved = pl.col(f"{INTERNAL}judged"), pl.col(f"{INTERNAL}retrieved")
    if spec.unplaced and spec.unretrieved != "drop":
        _raise_unplaced(frame.filter(judged), spec)
    if spec.unjudged == "error":
        _raise_query_set(
            frame.filter(~judged).sort(spec.keys),
            spec,
            "in the run but not in the judgments",
            "unjudged",
        )
    if spec.unretrieved == "error":
        _raise_query_set(
            frame.filter(~retrieved).sort(spec.keys),
            spec,
            "in the judgments but not in the run",
            "unretrieved",
        )
    return frame.select(
        c for c in frame.columns if not c.startswith(f"{INTERNAL}v_") and c != check_rows
    )


def _side_of_null_key(frame: pl.DataFrame, key: str) -> str:
    # the run when any of its rows has the null key, whatever the order of the rows (the
    # plan may put the run's and the judgments' null-key rows in one query or in two)
    nulls = frame.filter(pl.col(key).is_null())
    return "run" if nulls[f"{INTERNAL}retrieved"].any() else "judgments"


def describe_query(row: Mapping[str, object], spec: CheckSpec) -> str:
    """The query of a check row as the ranking metrics' messages show it: its id's
    ``repr``, with its ``by`` keys beside it (``'q1' (system='a')``)."""
    parts = [f"{key}={row[key]!r}" for key in spec.keys if key != spec.query_id]
    text = repr(row[spec.query_id])
    return f"{text} ({', '.join(parts)})" if parts else text


def _raise_unplaced(judged: pl.DataFrame, spec: CheckSpec) -> None:
    """A ``by`` key of the run alone, and a judged query some group did not retrieve:
    the judgments do not say which group the query belongs to, so whether it counts (0)
    in that group depends on what the key means."""
    side = spec.frames[1] if spec.frames and spec.frames[1] in _UNPLACED_SIDES else "judgments"
    raise_unplaced(judged, spec.keys, spec.unplaced, spec.query_id, side, drop=spec.offers_drop)


#: How :func:`raise_unplaced` names each side table: the table, its verb, its queries
#: (one, several), how to give it the key, and how systems are scored against it.
_UNPLACED_SIDES = {
    "judgments": (
        "the judgments",
        "do",
        ("judged query", "judged queries"),
        "with queries= (a table of query ids and {named}, e.g. queries=run.select("
        "{query_id!r}, {named}).unique()), or in a {key!r} column of the judgments",
        "each scored on every judged query",
    ),
    "reference": (
        "the reference",
        "does",
        ("query of the reference", "queries of the reference"),
        "in a {key!r} column of the reference",
        "each compared with the reference on every query",
    ),
    "neighbors": (
        "neighbors=",
        "does",
        ("query of neighbors=", "queries of neighbors="),
        "in a {key!r} column of neighbors=",
        "each compared with neighbors= on every query",
    ),
}


def raise_unplaced(
    judged: pl.DataFrame,
    keys: Sequence[str],
    unplaced: Sequence[str],
    query_id: str,
    side: str = "judgments",
    *,
    drop: bool = True,
) -> None:
    """Refuse a query of a side table (the judgments, the reference, neighbors=) that
    some group of the run did not retrieve, where ``unplaced`` (``by`` keys the run has
    and the side table lacks) are attributes of the query: the side table does not say
    which group the query belongs to, so whether it counts (0) in a group that did not
    retrieve it depends on what the key means. ``judged``: one row per (group, query)
    of the side table's queries, ``keys`` (the ``by`` keys, then the query id) and a
    Boolean ``__irm_retrieved`` (the group's run lists the query). ``drop``: whether
    the message offers ``unretrieved='drop'`` (``False`` where the call refuses it:
    the expected-exposure measures alone, the ranking metrics beside one that reads the
    judgments with ``systems=``)."""
    retrieved = pl.col(f"{INTERNAL}retrieved")
    missed = judged.filter(~retrieved)
    if not missed.height:
        return
    table, verb, (one, many), how, scored = _UNPLACED_SIDES[side]
    key, by = unplaced[0], list(unplaced)
    where = judged.filter(retrieved).sort(list(keys))
    queries = missed.get_column(query_id).n_unique()
    groups = judged.select(by).unique().height
    # an example: a query the run lists under some group(s), missed by another
    listed = where.join(missed.select(query_id).unique(), on=query_id, how="semi").sort(
        [query_id, *by]
    )
    if listed.height:
        first = listed.row(0, named=True)[query_id]
        # each group once: with systems= the run lists it under a group once per system
        under = listed.filter(pl.col(query_id) == first).select(by).unique(maintain_order=True)
        shown = ", ".join(_group(r, by) for r in under.head(3).iter_rows(named=True))
        example = (
            f" (e.g. query {first!r}: the run lists it under {shown}, and {table} "
            "cannot tell whether it belongs to the other groups too)"
        )
    else:
        first = missed.sort(query_id).get_column(query_id)[0]
        example = f" (e.g. query {first!r}, which no group of the run lists)"
    named = ", ".join(repr(k) for k in by)
    error = QuerySetError(
        f"by key {key!r} is in the run but not in {table}: {table} {verb} not say which "
        f"{key!r} each {one} belongs to, so {queries} {one if queries == 1 else many} "
        f"that some of the {groups} groups did not retrieve cannot be placed{example}. If "
        f"{key!r} is an attribute of the query (day, market, segment), give each {one} "
        f"its {key!r}: {how.format(named=named, query_id=query_id, key=key)}; if it names "
        f"systems or runs ({scored}), pass systems={key!r} instead of by="
        + (
            "; or pass unretrieved='drop' to score each group on the queries it retrieved"
            if drop
            else ""
        )
    )
    columns = [*dict.fromkeys([*keys, *by, query_id]), f"{INTERNAL}retrieved"]
    refused = UnplacedRows(judged.select(columns), tuple(keys), tuple(by), query_id, side, drop)
    setattr(error, _UNPLACED_ROWS, refused)
    raise error


#: The attribute of a data error that places it among those one plan would choose
#: between (:func:`ordered`).
_ORDER = "_irm_order"

E = TypeVar("E", bound=BaseException)


def ordered(error: E, *order: object) -> E:
    """``error`` marked with its place among the data errors one plan over the whole
    input chooses between: ``order`` is the check's rank in that plan's order, then the
    first failing query's keys (``None`` first, as polars sorts them). A split
    evaluation (buckets, partitions: :class:`UnplacedParts`), each of whose parts raises
    its own first error, raises the least of its parts', the error the one plan raises,
    not the first part's.

    >>> ordered(QuerySetError("q"), 1, "b")._irm_order < ordered(QuerySetError("q"), 1, "a")._irm_order
    False
    """  # noqa: E501
    setattr(error, _ORDER, _sortable(order))
    return error


def order_of(error: BaseException) -> object | None:
    """The place :func:`ordered` gave ``error`` among the data errors one plan chooses
    between (it compares with another's), or ``None`` where it gave none.

    >>> order_of(ordered(QuerySetError("q"), 1, "a")) < order_of(ordered(QuerySetError("q"), 1, "b"))
    True
    >>> order_of(QuerySetError("q")) is None
    True
    """  # noqa: E501
    return getattr(error, _ORDER, None)


def _sortable(value: object) -> object:
    """``value`` as a tuple that compares as polars sorts (nulls first); a struct's
    fields in their order."""
    if isinstance(value, Mapping):
        value = tuple(value.values())
    if isinstance(value, tuple | list):
        return tuple((item is not None, _sortable(item)) for item in value)
    return value


@dataclass(frozen=True)
class UnplacedRows:
    """What :func:`raise_unplaced` refused: its rows (``judged``, the columns it reads)
    and its arguments, kept on the error it raises (:func:`unplaced_rows`), so that an
    out-of-core evaluation, each of whose buckets refuses its own queries, refuses once
    for the whole table, as one plan does (:class:`UnplacedParts`)."""

    judged: pl.DataFrame
    keys: tuple[str, ...]
    unplaced: tuple[str, ...]
    query_id: str
    side: str
    drop: bool


#: The attribute of :func:`raise_unplaced`'s error that holds its :class:`UnplacedRows`.
_UNPLACED_ROWS = "_irm_unplaced_rows"


def unplaced_rows(error: BaseException) -> UnplacedRows | None:
    """The rows and arguments of ``error`` where :func:`raise_unplaced` raised it, else
    ``None``.

    >>> unplaced_rows(QuerySetError("another refusal")) is None
    True
    """
    found = getattr(error, _UNPLACED_ROWS, None)
    return found if isinstance(found, UnplacedRows) else None


class UnplacedParts:
    """The refusals of :func:`raise_unplaced` of the parts of an out-of-core evaluation
    (its buckets, its partitions), each of which holds its own queries and every group:
    each part's refusal counts its own queries alone, so the parts after the first
    refusal are evaluated too (:meth:`part`), and :meth:`raise_together` refuses their
    union once, with one plan's count and example. Any other error stands as before: a
    part's, before any refusal; the first refusal, where another part raises another
    error after it.

    Examples
    --------
    >>> parts = UnplacedParts()
    >>> with parts.part():
    ...     pass  # a part evaluated, without a refusal
    >>> parts.raise_together()  # nothing refused: nothing raised
    """

    def __init__(self) -> None:
        self._refusals: list[tuple[Exception, UnplacedRows]] = []
        self._least: tuple[Any, Exception] | None = None

    @contextlib.contextmanager
    def part(self) -> Iterator[None]:
        """Evaluate one part: a refusal of :func:`raise_unplaced` is kept, not raised,
        and so is a data error marked by :func:`ordered` (the least of the parts' is
        raised by :meth:`raise_together`: one plan's, whichever part holds it)."""
        try:
            yield
        except Exception as error:
            order = getattr(error, _ORDER, None)
            if order is not None:
                if self._least is None or order < self._least[0]:
                    self._least = (order, error.with_traceback(None))
                return
            refused = unplaced_rows(error)
            first = self._least[1] if self._least is not None else None
            if first is None and self._refusals:
                first = self._refusals[0][0]
            if first is not None and refused is None:  # another error after it: it stands
                raise first from None
            if refused is None:
                raise
            # without its traceback, which would hold the part's frames while the others run
            self._refusals.append((error.with_traceback(None), refused))

    @property
    def refused(self) -> bool:
        """Whether a part has refused."""
        return bool(self._refusals)

    def raise_together(self) -> None:
        """Raise the least of the parts' data errors (:func:`ordered`), which one plan
        checks before the refusals; else refuse the union of the parts' refusals, as
        one plan over their rows does (the arguments the first's); nothing where no
        part raised."""
        if self._least is not None:
            raise self._least[1]
        if not self._refusals:
            return
        first = self._refusals[0][1]
        judged = pl.concat([rows.judged for _, rows in self._refusals], how="vertical_relaxed")
        raise_unplaced(
            judged, first.keys, first.unplaced, first.query_id, first.side, drop=first.drop
        )
        raise self._refusals[0][0]  # not reached: their union holds the queries refused


def _group(row: Mapping[str, object], keys: Sequence[str]) -> str:
    return ", ".join(f"{k}={row[k]!r}" for k in keys)


def _raise_query_set(bad: pl.DataFrame, spec: CheckSpec, where: str, policy: str) -> None:
    if not bad.height:
        return
    shown = ", ".join(describe_query(r, spec) for r in bad.head(5).iter_rows(named=True))
    more = f" and {bad.height - 5} more" if bad.height > 5 else ""
    error = QuerySetError(
        f"{bad.height} quer{'y is' if bad.height == 1 else 'ies are'} {where}: "
        f"{shown}{more}; pass {policy}='zero' to score them 0 or {policy}='drop' to leave "
        "them out"
    )
    first = bad.row(0, named=True)
    raise ordered(error, 3, policy == "unretrieved", [first[k] for k in spec.keys])


#: The hints of :func:`warn_on_coverage`, computed on its path only (they read the
#: inputs again): each returns a sentence, or ``None`` when it has nothing to say.
Hint = Callable[[], str | None]


class QueryHint:
    """The hint of the run's query ids that match judged ones only once their spelling
    is ignored: a :data:`Hint` marked as the one that says why a run lists some judged
    queries but not all (:func:`warn_on_counts` warns of those misses only where it
    finds a match, and reads no other hint for them)."""

    def __init__(self, read: Hint) -> None:
        self._read = read

    def __call__(self) -> str | None:
        return self._read()


#: The hint of the judged queries where a run retrieves no judged document though its
#: documents there match judged ones of the same query once their spelling is ignored
#: (``'D1'`` in the run, ``'d1'`` in the judgments, for one query): per system (the
#: values of its ``systems`` keys, a tuple; ``()`` without), how many such queries and a
#: sentence naming one, its pair and the fix. Read by :func:`warn_on_counts` only where
#: a system retrieves no judged document in some judged query it lists.
DocsHint = Callable[[], Mapping[tuple[Any, ...], tuple[int, str]]]


def blind_queries(frame: pl.DataFrame, listed: str | None) -> pl.DataFrame:
    """The rows of :func:`warn_on_coverage`'s ``frame`` of the judged queries where the
    run retrieves no judged document and which it lists (or may list: ``listed``
    absent or null), those a :data:`DocsHint` reads.

    Examples
    --------
    >>> frame = pl.DataFrame({"q": ["a", "b", "c"], "__irm_judged": [True, True, True],
    ...                       "__irm_judged_docs": [2, 1, 3], "__irm_found_docs": [1, 0, 0],
    ...                       "__irm_listed": [True, True, False]})
    >>> blind_queries(frame, "__irm_listed").get_column("q").to_list()
    ['b']
    """
    blind = pl.col(f"{INTERNAL}judged") & (pl.col(FOUND_DOCS) == 0)
    if listed is not None:
        blind = blind & pl.col(listed).fill_null(True)
    return frame.filter(blind)


def partly_queries(frame: pl.DataFrame) -> pl.DataFrame:
    """The rows of :func:`warn_on_coverage`'s ``frame`` of the judged queries where the
    run retrieves some judged documents but not all, those whose other documents a
    :data:`DocsHint` of documents spelt apart reads (its ``partly=``).

    Examples
    --------
    >>> frame = pl.DataFrame({"q": ["a", "b", "c"], "__irm_judged": [True, True, True],
    ...                       "__irm_judged_docs": [2, 1, 3], "__irm_found_docs": [1, 1, 0]})
    >>> partly_queries(frame).get_column("q").to_list()
    ['a']
    """
    found = pl.col(FOUND_DOCS)
    return frame.filter(pl.col(f"{INTERNAL}judged") & (found > 0) & (found < pl.col(JUDGED_DOCS)))


def warn_on_coverage(
    frame: pl.DataFrame,
    *,
    systems: Sequence[str],
    listed: str | None,
    unretrieved: Policy,
    hints: Sequence[Hint] = (),
    docs: Callable[[pl.DataFrame], Mapping[tuple[Any, ...], tuple[int, str]]] | None = None,
    partly: Callable[[pl.DataFrame], Mapping[tuple[Any, ...], tuple[int, str]]] | None = None,
) -> pl.DataFrame:
    """Warn once per run (each value of the ``systems`` keys) that retrieves no judged
    document, or does not list most judged queries, then return ``frame`` unchanged.

    ``frame`` is the checked per-query frame of every bucket: the flag
    ``__irm_judged`` and the counts :data:`JUDGED_DOCS` and :data:`FOUND_DOCS`; with
    ``listed`` the Boolean column that says whether the run lists the query (where it
    is absent or null, only a run that retrieves no judged document is warned about).
    The values are never changed: such a run scores 0 where trec_eval scores 0; the warning
    (:class:`~polars_irmetrics.errors.CoverageWarning`) says that ids which do not
    match are the more likely cause, with ``hints`` where the ids match after a change.
    The counts are :func:`coverage_counts`'s, and the text :func:`warn_on_counts`'s (an
    engine adds up the counts of its parts, :func:`merge_counts`, and warns the same).
    ``docs``: the :data:`DocsHint` of the rows of ``frame`` it is given
    (:func:`blind_queries`), read only where a run retrieves no judged document in some
    judged query it lists. ``partly``: the same of the rows of the judged queries where
    a run retrieves some judged documents but not all (:func:`partly_queries`), its
    other documents there spelt apart from the judged ones (read wherever there are
    such queries: no count tells them apart).
    """
    counts = coverage_counts(frame, systems=systems, listed=listed)
    read, some = docs, partly
    spelt = None if read is None else lambda: read(blind_queries(frame, listed))
    apart = None if some is None else lambda: some(partly_queries(frame))
    warn_on_counts(
        counts, systems=systems, unretrieved=unretrieved, hints=hints, docs=spelt, partly=apart
    )
    return frame


#: The columns of a coverage tally, after the systems' keys: judged queries, those with a
#: judged document retrieved, judged documents, those retrieved, and the judged queries
#: the run lists (null where the plan did not read the run's query list).
TALLY = ("queries", "found_queries", "docs", "found", "listed")


def coverage_counts(
    frame: pl.DataFrame, *, systems: Sequence[str], listed: str | None
) -> pl.DataFrame:
    """The coverage tally of :func:`warn_on_coverage`'s ``frame``: one row per system
    (each value of the ``systems`` keys) with a judged query, and the :data:`TALLY`
    columns (Int64). Tallies of disjoint sets of queries add up (:func:`merge_counts`).

    Examples
    --------
    >>> frame = pl.DataFrame({"__irm_judged": [True, True, False],
    ...                       "__irm_judged_docs": [2, 1, 0], "__irm_found_docs": [1, 0, 0],
    ...                       "__irm_listed": [True, False, True]})
    >>> coverage_counts(frame, systems=(), listed="__irm_listed").row(0)
    (2, 1, 3, 1, 1)
    """
    judged = frame.filter(pl.col(f"{INTERNAL}judged"))
    if listed is not None and judged.get_column(listed).null_count():
        listed = None  # the plan did not read the run's query list
    found = pl.col(FOUND_DOCS)
    counts = judged.group_by(list(systems), maintain_order=True).agg(
        pl.len().alias("queries"),
        (found > 0).sum().alias("found_queries"),
        pl.col(JUDGED_DOCS).sum().alias("docs"),
        found.sum().alias("found"),
        (pl.col(listed).sum() if listed is not None else pl.lit(None)).alias("listed"),
    )
    tally = counts.with_columns(pl.col(c).cast(pl.Int64) for c in TALLY)
    return tally.filter(pl.col("queries") > 0)


def merge_counts(parts: Sequence[pl.DataFrame], *, systems: Sequence[str]) -> pl.DataFrame:
    """The tallies of parts holding disjoint sets of queries (an engine's partitions),
    added up per system, as :func:`coverage_counts` counts them over every part at once
    (``listed`` null wherever a part's is).

    Examples
    --------
    >>> a = pl.DataFrame({"system": ["x"], "queries": [2], "found_queries": [0], "docs": [3],
    ...                   "found": [0], "listed": [2]})
    >>> b = a.with_columns(pl.lit("y").alias("system"))
    >>> merge_counts([a, b, a], systems=["system"]).rows()
    [('x', 4, 0, 6, 0, 4), ('y', 2, 0, 3, 0, 2)]
    """
    given = [p for p in parts if p.height]
    if not given:
        return parts[0].clear() if parts else pl.DataFrame()
    every = pl.concat(given, how="vertical_relaxed")
    listed = pl.col("listed")
    return every.group_by(list(systems), maintain_order=True).agg(
        *(pl.col(c).sum() for c in TALLY if c != "listed"),
        pl.when(listed.null_count() == 0).then(listed.sum()).alias("listed"),
    )


def suspect(counts: pl.DataFrame) -> bool:
    """Whether a part's tally may take part in a warning (:func:`warn_on_counts`): no
    judged query, or a system that retrieves no judged document or misses a judged
    query. An engine's part computes the warning's hints only then."""
    if not counts.height:
        return True
    found, listed = pl.col("found"), pl.col("listed")
    missed = (found == 0) | (listed.is_not_null() & (listed < pl.col("queries")))
    # judged documents in fewer than half of the judged queries it lists: warned of
    # where a hint finds ids that match after a change of spelling (warn_on_counts)
    sparse = listed.is_not_null() & (2 * pl.col("found_queries") < listed)
    return bool(counts.select((missed | sparse).any()).item())


#: What a judged query scores where the run retrieves no judged document for it: not 0
#: in every metric (rbp_residual is 1; num_ret, num_rel and unjudged@k count the run's
#: documents), so the warnings say what such a ranking scores.
#: A judged query the run does not list (unretrieved='zero') scores an empty ranking's
#: values likewise (rbp_residual 1, num_rel its relevant documents), as trec_eval -c.
_NOTHING = "0 in ndcg, map, precision, recall and the like"
_AS_UNJUDGED = f"as a ranking of no judged document does ({_NOTHING})"


def _missed_fate(unretrieved: Policy) -> str:
    """What the judged queries a run does not list score, as the warnings say it."""
    if unretrieved == "drop":
        return "are left out (unretrieved='drop')"
    return f"each score as an empty ranking does (unretrieved='zero', as trec_eval -c: {_NOTHING})"


#: How many callers leave the coverage warnings unsaid now (:func:`coverage_unsaid`).
_UNSAID = [0]


@contextlib.contextmanager
def coverage_unsaid() -> Iterator[None]:
    """Inside, :func:`warn_on_counts` says nothing and reads none of its hints (which
    read the inputs again: a lazy run's whole plan, with any side effect of its own),
    for a caller that ignores the :class:`~polars_irmetrics.errors.CoverageWarning` of
    its evaluations (fusion's fits and grids). Process-wide, as the warnings' filters
    are (a plan's callbacks run on polars' threads)."""
    _UNSAID[0] += 1
    try:
        yield
    finally:
        _UNSAID[0] -= 1


def warn_on_counts(
    counts: pl.DataFrame,
    *,
    systems: Sequence[str],
    unretrieved: Policy,
    hints: Sequence[Hint] = (),
    emit: Callable[[str], None] | None = None,
    scores: str | None = None,
    docs: DocsHint | None = None,
    blind_scores: str | None = None,
    partly: DocsHint | None = None,
) -> None:
    """The coverage warnings of a tally (:func:`coverage_counts`, :func:`merge_counts`):
    once per system that retrieves no judged document or lists fewer than half of the
    judged queries, or once for no judged query at all (see :func:`warn_on_coverage`);
    also once per system that retrieves a judged document in fewer than half of the
    judged queries it lists, where a hint finds ids that match after a change of
    spelling (without one, a shallow run over sparse judgments is such a run too); and
    once per system that misses any judged query, where the query hint (a
    :class:`QueryHint` among ``hints``, the only one read for it) finds a query id of
    the run that matches a judged one once its spelling is ignored (without one, a run
    of some of the topics is such a run too). ``emit`` gives each text (default: a
    :class:`~polars_irmetrics.errors.CoverageWarning` here; a Dask task hands it to the
    client). ``scores``: what the metrics score on a
    judged query where the run retrieves no judged document, for measures that do not
    score as the ranking metrics do there (default: "every judged query scores as a
    ranking of no judged document does (0 in ndcg, map, precision, recall and the
    like), as trec_eval scores such a run"). ``docs``: also once per system that
    retrieves no judged document in some judged query it lists where the
    :data:`DocsHint` finds its documents there spelt apart from the judged ones (read
    only where such a query is; not for a system warned above with every hint: the
    document hint there counts those pairs too); ``blind_scores``: what such a query
    scores, for measures that do not score it as the ranking metrics do (default: "as a
    ranking of no judged document does (0 in ndcg, ...)"). ``partly``: also once per
    system (not one warned above with every hint) where the :data:`DocsHint` finds, in
    judged queries where it retrieves some judged documents but not all, documents of
    its run that no judgment names and that match a judged one of the same query once
    the spaces around them, case and separators are ignored (``'D3'`` beside a judged
    ``'d3'``: scored as unjudged documents); read wherever a system is left to warn
    of."""
    if _UNSAID[0]:  # left unsaid by the caller (coverage_unsaid): no hint read either
        return
    emit = emit or warn_from_plan
    if not counts.height:
        where = " (with systems=: or the run has no rows)" if systems else ""
        emit(
            f"no judged query to evaluate: the judgments are empty{where}, so every mean "
            "is over 0 queries (num_q 0; with unjudged='zero', over the run's queries, each "
            "scoring 0); check the judgments' file or frame (trec_eval "
            "refuses such an evaluation: 'No queries with both results and relevance info')"
        )
        return
    listed = not counts.get_column("listed").null_count()
    said: list[str] = []
    hinted: list[str] = []
    spelt: list[str] = []
    # the systems warned of with every hint (said), or where most judged queries get no
    # judged document (hinted), and those that retrieve none in some it lists (blind)
    warned: set[str] = set()
    sparse: set[str] = set()
    blind: list[tuple[str, tuple[Any, ...], str]] = []
    for row in counts.sort(list(systems)).iter_rows(named=True):
        name = _run_name(row, systems)
        tally = _tally_text(row, listed)
        if row["found"] and row["found_queries"] < (row["listed"] if listed else row["queries"]):
            blind.append((name, tuple(row[k] for k in systems), tally))
        if row["found"] == 0:
            warned.add(name)
            if unretrieved != "drop" or (listed and row["listed"] >= row["queries"]):
                fate = scores or (
                    f"every judged query scores {_AS_UNJUDGED}, as trec_eval scores such a run"
                )
            elif listed and row["listed"] == 0:
                fate = (
                    "no judged query is left to score (unretrieved='drop' leaves out those "
                    "it does not list): every mean is over 0 queries (num_q 0)"
                )
            else:  # the judged queries it lists are scored, the others are left out
                fate = (
                    f"the judged queries it lists score {_AS_UNJUDGED}, the others left out "
                    "(unretrieved='drop')"
                )
            said.append(f"{name} retrieves no judged document ({tally}): {fate}")
        elif listed and 2 * row["listed"] < row["queries"]:
            warned.add(name)
            missed = row["queries"] - row["listed"]
            said.append(
                f"{name} misses most judged queries ({tally}): the {missed} it misses "
                f"{_missed_fate(unretrieved)}"
            )
        elif listed and 2 * row["found_queries"] < row["listed"]:
            # a shallow run over sparse judgments may retrieve no judged document for
            # most queries: said only where a hint finds ids spelt apart (below)
            sparse.add(name)
            hinted.append(
                f"{name} retrieves a judged document in only {row['found_queries']} of the "
                f"{row['listed']} judged queries it lists ({tally}): the others score "
                f"{_AS_UNJUDGED}"
            )
        elif listed and row["listed"] < row["queries"]:
            # a run that answers most judged queries but not all: said only where the
            # query hint finds the ones it misses spelt apart (a run of some topics is
            # no fault)
            missed = row["queries"] - row["listed"]
            spelt.append(
                f"{name} misses {missed} of the {row['queries']} judged queries ({tally}): "
                f"the {missed} it misses {_missed_fate(unretrieved)}"
            )
    if said or hinted or spelt:
        # each hint read once; only the query hint where it alone can say why (spelt)
        read = hints if said or hinted else [h for h in hints if isinstance(h, QueryHint)]
        texts = [(isinstance(hint, QueryHint), hint()) for hint in read]
        extra = [text for _, text in texts if text]
        if extra:
            said += hinted
        if any(text for of_queries, text in texts if of_queries):
            said += spelt
        if any(text for of_queries, text in texts if not of_queries):
            warned |= sparse  # their warning gives the document hint (every pair)
        advice = (
            " ".join(extra)
            if extra
            else "Check that the run and the judgments name the same queries and documents "
            "(same collection, same id spelling)."
        )
        for text in said:
            emit(f"{text}. {advice}")
    blind = [case for case in blind if case[0] not in warned]
    if docs is not None and blind:
        found = docs()  # read only where a listed judged query gets no judged document
        for name, key, tally in blind:
            if key not in found:
                continue
            count, hint = found[key]
            which = "query" if count == 1 else "queries"
            fate = "it scores" if count == 1 else "they score"
            emit(
                f"{name} retrieves no judged document in {count} judged {which} where its "
                f"documents match judged ones once their spelling is ignored ({tally}): "
                f"{fate} {blind_scores or _AS_UNJUDGED}. {hint}"
            )
    # the systems not warned of with every hint (whose document hint counts every pair)
    rest = [
        (_run_name(row, systems), tuple(row[k] for k in systems), _tally_text(row, listed))
        for row in counts.sort(list(systems)).iter_rows(named=True)
        if row["found"] and _run_name(row, systems) not in warned
    ]
    if partly is None or not rest:
        return
    apart = partly()
    for name, key, tally in rest:
        if key not in apart:
            continue
        count, hint = apart[key]
        which = "query" if count == 1 else "queries"
        emit(
            f"{name} retrieves documents spelt apart from judged ones in {count} judged "
            f"{which} where it retrieves other judged documents ({tally}): {hint}"
        )


def _tally_text(row: Mapping[str, Any], listed: bool) -> str:
    """A system's coverage tally (a row of :func:`coverage_counts`), as the warnings
    of :func:`warn_on_counts` say it."""
    tally = (
        f"{row['found']} of {row['docs']} judged documents, in {row['found_queries']} of "
        f"{row['queries']} judged queries"
    )
    if listed:
        tally += f"; it lists {row['listed']} of the {row['queries']} judged queries"
    return tally


def judged_tally(
    run: pl.LazyFrame,
    qrels: pl.LazyFrame,
    query_id: str,
    doc_id: str,
    *,
    by: str | Sequence[str] | None = None,
    listed: bool = False,
    found: pl.LazyFrame | None = None,
) -> pl.LazyFrame:
    """One row of :data:`TALLY` counts: the judged queries, those whose run retrieves a
    judged document, the judged documents and those the run retrieves (a document in
    several sampled rankings counted once per query), and, with ``listed``, the judged
    queries the run lists (else ``listed`` null): what :func:`warn_on_judged` reads, for
    a route that reads the judgments beside its own rows (the exposure measures, the
    propensity-scored metrics) and counts nothing of them per query itself, and what
    fusion's training warns of (:mod:`polars_irmetrics.fusion.judged`). ``by``: one
    row per value of that column of ``run`` (each run of a long frame of runs, the
    column kept), for the values ``run`` holds. One semi-join of the run's ids with the
    judgments', the ids of each kind cast to one dtype (:func:`common_id_dtype`; the
    kinds are checked before). The run's rows are matched first and made distinct after
    (the few found, not the run's millions: a distinct pass over every row of the run
    cost more than the rest of the exposure measures' plan). ``found``: the run's rows
    inner-joined with the judgments (``query_id`` and ``doc_id`` among its columns, of
    the run's dtypes, which are the judgments' too), where the caller has them: the
    documents found are read from it, in place of the semi-join (without ``by``).

    Examples
    --------
    >>> run = pl.LazyFrame({"q": [1, 1, 2], "d": ["a", "b", "a"]})
    >>> qrels = pl.LazyFrame({"q": [1, 2, 3], "d": ["A", "a", "x"]})
    >>> judged_tally(run, qrels, "q", "d").collect().row(0)
    (3, 1, 3, 1, None)
    >>> runs = pl.LazyFrame({"r": [0, 0, 1], "q": [1, 3, 2], "d": ["a", "x", "b"]})
    >>> judged_tally(runs, qrels, "q", "d", by="r", listed=True).sort("r").collect().rows()
    [(0, 3, 1, 3, 1, 2), (1, 3, 0, 3, 0, 1)]
    """
    keys = [query_id, doc_id]
    group = [] if by is None else [by] if isinstance(by, str) else list(by)
    ran, held = run.collect_schema(), qrels.collect_schema()
    # each id in one dtype on both sides (an Enum beside a String, Int32 beside Int64)
    cast = [pl.col(k).cast(common_id_dtype([ran[k], held[k]])) for k in keys]
    judged = qrels.select(cast).unique()
    ids = run.select(*group, *cast)
    if found is None or group:
        found = ids.join(judged, on=keys, how="semi").unique()
    else:  # the rows a semi-join keeps, each (query, document) once: the same pairs
        found = found.select(cast).unique()
    counts = [
        pl.col(query_id).n_unique().cast(pl.Int64).alias("found_queries"),
        pl.len().cast(pl.Int64).alias("found"),
    ]
    queries = judged.select(query_id).unique()
    lists = ids.select(*group, query_id).join(queries, on=query_id, how="semi").unique()
    listing = pl.len().cast(pl.Int64).alias("listed")
    totals = judged.select(
        pl.col(query_id).n_unique().cast(pl.Int64).alias("queries"),
        pl.len().cast(pl.Int64).alias("docs"),
    )
    if not group:
        parts = [totals, found.select(counts), *([lists.select(listing)] if listed else [])]
        tally = pl.concat(parts, how="horizontal")
    else:
        tally = (
            ids.select(group)
            .unique()
            .join(found.group_by(group).agg(counts), on=group, how="left", nulls_equal=True)
        )
        if listed:
            tally = tally.join(
                lists.group_by(group).agg(listing), on=group, how="left", nulls_equal=True
            )
        zero = ["found_queries", "found", *(["listed"] if listed else [])]
        tally = tally.join(totals, how="cross").with_columns(pl.col(zero).fill_null(0))
    if not listed:
        tally = tally.with_columns(pl.lit(None, pl.Int64).alias("listed"))
    return tally.select(*group, *TALLY)


def tally_counts(row: Mapping[str, Any], columns: Mapping[str, str] | None = None) -> pl.DataFrame:
    """One tally row (a plan's :data:`TALLY` counts, read where the plan runs; ``columns``:
    each count's name in ``row`` where it is not the count's own) as the frame
    :func:`warn_on_counts` reads: empty where no query is judged.

    >>> tally_counts({"queries": 0, "found_queries": 0, "docs": 0, "found": 0, "listed": None})
    shape: (0, 5)
    ...
    """
    names = columns or {c: c for c in TALLY}
    values = [{c: row[names[c]] for c in TALLY}]
    counts = pl.DataFrame(values, schema=dict.fromkeys(TALLY, pl.Int64))
    return counts.filter(pl.col("queries") > 0)


def warn_on_judged(
    row: Mapping[str, Any],
    unretrieved: Policy,
    hints: Sequence[Hint] = (),
    *,
    systems: Sequence[str] = (),
    scores: str | None = None,
    docs: DocsHint | None = None,
    blind_scores: str | None = None,
    partly: DocsHint | None = None,
) -> None:
    """The coverage warning of the judged queries' counts ``row`` (the :data:`TALLY`
    columns: no judged document retrieved, no judged query), in the words of the
    ranking metrics', with their ``hints``. ``systems``: the row holds, in column
    :data:`SYSTEM_TALLIES`, one tally per system (:func:`judged_tally` by the system
    keys), each warned about by name; ``scores``, ``docs`` (the judged queries where a
    system retrieves no judged document, its documents there spelt apart from the
    judged ones), ``blind_scores`` and ``partly`` (the judged queries where it retrieves
    some judged documents but not all, its other documents there spelt apart from the
    judged ones): as :func:`warn_on_counts` reads them."""
    if systems:
        counts = pl.DataFrame(row[SYSTEM_TALLIES])
        if counts.height:
            counts = counts.with_columns(pl.col(c).cast(pl.Int64) for c in TALLY).filter(
                pl.col("queries") > 0
            )
        counted = counts
    else:
        counted = tally_counts(row)
    warn_on_counts(
        counted,
        systems=systems,
        unretrieved=unretrieved,
        hints=hints,
        scores=scores,
        docs=docs,
        blind_scores=blind_scores,
        partly=partly,
    )


#: The column of a one-row tally that holds :func:`judged_tally`'s rows by system.
SYSTEM_TALLIES = f"{INTERNAL}system_tallies"


def system_tallies(tally: pl.LazyFrame) -> pl.LazyFrame:
    """:func:`judged_tally`'s rows by system as one row (:data:`SYSTEM_TALLIES`, a
    list of its rows), as :func:`with_tally` hands one row to
    :func:`warn_on_judged`."""
    return tally.select(pl.struct(pl.all()).implode().alias(SYSTEM_TALLIES))


#: The column that marks the tally row :func:`with_tally` adds to a plan's values.
TALLY_ROW = f"{INTERNAL}tally"


def held_tally(
    ids: pl.LazyFrame,
    held: pl.LazyFrame,
    keys: list[str],
    total: str,
    matched: str,
    *,
    distinct: bool = False,
    systems: Sequence[str] = (),
) -> pl.LazyFrame:
    """One row: the distinct ``keys`` of ``ids`` (column ``total``), and how many of
    them ``held`` lists (column ``matched``; ``distinct``: ``held`` lists each once
    already); for :func:`with_tally` and :func:`warn_on_joint` (null keys match null
    keys). ``systems``: keys of ``ids`` that name its systems (``systems=``): the row
    then holds too, in column :func:`systems_column` of ``matched``, each system whose
    ids ``held`` mostly lacks (fewer than half held), with its own counts, so that one
    system of many whose ids do not line up is warned about by name
    (:func:`warn_on_joint`'s ``by_system``), not hidden by the others' counts.

    >>> run = pl.LazyFrame({"query_id": ["a", "b", "b"]})
    >>> ref = pl.LazyFrame({"query_id": ["b", "c"]})
    >>> held_tally(run, ref, ["query_id"], "n", "held").collect().row(0)
    (2, 1)
    >>> runs = pl.LazyFrame({"s": ["x", "x", "y", "y"], "query_id": ["b", "c", "u", "v"]})
    >>> held_tally(runs, ref, ["query_id"], "n", "held", systems=["s"]).collect().row(0)
    (4, 2, [{'system0': "'y'", 'total': 2, 'matched': 0}])
    """
    marked = (held if distinct else held.unique()).with_columns(pl.lit(True).alias(matched))
    own = [k for k in systems if k not in keys]
    rows = ids.select(*own, *keys).unique().join(marked, on=keys, how="left", nulls_equal=True)
    counts = [
        pl.len().cast(pl.Int64).alias(total),
        pl.col(matched).count().cast(pl.Int64).alias(matched),
    ]
    tally = rows.select(*keys, matched).unique(keys).select(counts) if own else rows.select(counts)
    if not systems:
        return tally
    per_system = systems_row(rows.group_by(list(systems)).agg(counts), systems, total, matched)
    return pl.concat([tally, per_system], how="horizontal")


def systems_row(
    counts: pl.LazyFrame,
    systems: Sequence[str],
    total: str,
    matched: str,
    *,
    below_all: bool = False,
) -> pl.LazyFrame:
    """One row of one column, :func:`systems_column` of ``matched``, from ``counts`` (one
    row per system: its ``systems`` keys, ``total`` and ``matched`` ids): the systems
    under half (``below_all``: every system that lacks any), each key's value written as
    a warning names a system (text quoted, as Python writes it), for
    :func:`systems_named`. :func:`held_tally`'s; an engine, which counts each system's
    ids where they are, passes its counts.

    >>> counts = pl.LazyFrame({"s": ["x", "y"], "n": [2, 2], "held": [2, 0]})
    >>> systems_row(counts, ["s"], "n", "held").collect().row(0)
    ([{'system0': "'y'", 'total': 2, 'matched': 0}],)
    """
    schema = counts.collect_schema()
    names = [
        (
            pl.concat_str(pl.lit("'"), pl.col(k).cast(pl.String), pl.lit("'"))
            if is_text(schema[k])
            else pl.col(k).cast(pl.String)
        ).alias(f"system{i}")
        for i, k in enumerate(systems)
    ]
    under = pl.col(matched) < pl.col(total) if below_all else 2 * pl.col(matched) < pl.col(total)
    return (
        counts.filter(under)
        .sort(list(systems))
        .select(
            pl.struct(
                *names,
                pl.col(total).cast(pl.Int64).alias("total"),
                pl.col(matched).cast(pl.Int64).alias("matched"),
            )
            .implode()
            .alias(systems_column(matched))
        )
    )


def systems_tally(
    rows: pl.LazyFrame,
    held: pl.LazyFrame,
    column: str,
    matched: str,
    systems: Sequence[str],
    *,
    distinct: bool = False,
) -> pl.LazyFrame:
    """One row of one column, :func:`systems_column` of ``matched``: the systems of
    ``rows`` (its ``systems`` keys and ``column``) whose ``column`` ids ``held`` mostly
    lacks, each with its counts (:func:`held_tally`'s, without the whole run's), to set
    beside a tally of the whole run."""
    tally = held_tally(
        rows.select(*systems, column),
        held.select(column),
        [column],
        f"{matched}|all",
        matched,
        distinct=distinct,
        systems=systems,
    )
    return tally.select(systems_column(matched))


def systems_column(matched: str) -> str:
    """The column of :func:`held_tally`'s row that lists, for its ``matched`` count, the
    systems whose ids the other table mostly lacks."""
    return f"{matched}|systems"


def systems_named(row: Mapping[str, Any], matched: str, systems: Sequence[str]) -> list[Any]:
    """:func:`held_tally`'s systems under half for its ``matched`` count (empty where
    the row has none), each with ``name`` (``"system 'B'"``; with several keys
    ``"system (a='x', b='y')"``, as the ranking metrics' warnings name them), ``total``
    and ``matched``: the ``by_system`` of :func:`warn_on_joint`."""
    named = []
    for entry in row.get(systems_column(matched)) or []:
        values = [entry[f"system{i}"] for i in range(len(systems))]
        if len(systems) == 1:
            name = f"system {values[0]}"
        else:
            name = (
                "system ("
                + ", ".join(f"{k}={v}" for k, v in zip(systems, values, strict=True))
                + ")"
            )
        named.append({"name": name, "total": entry["total"], "matched": entry["matched"]})
    return named


def with_tally(
    values: pl.LazyFrame, tally: pl.LazyFrame, say: Callable[[Mapping[str, Any]], None]
) -> pl.LazyFrame:
    """``values`` unchanged, and ``say`` called with the one row of ``tally`` (counts of
    how two tables' ids line up) when the plan runs: the tally travels as one more row
    of the values (so it is read even where no value is left) and is dropped after.

    Examples
    --------
    >>> values = pl.LazyFrame({"q": ["a"], "v": [1.0]})
    >>> tally = pl.LazyFrame({"matched": [0]})
    >>> with_tally(values, tally, lambda row: print(row["matched"])).collect().shape
    0
    (1, 2)
    """
    return with_tally_and_values(values, tally, lambda row, _values: say(row))


def with_tally_and_values(
    values: pl.LazyFrame,
    tally: pl.LazyFrame,
    say: Callable[[Mapping[str, Any], pl.DataFrame], None],
) -> pl.LazyFrame:
    """:func:`with_tally`, ``say`` reading the collected values too (a count of what the
    values hold, such as the pairs the metrics read, against the tally's).

    >>> values = pl.LazyFrame({"num_rows": [2, 3]})
    >>> tally = pl.LazyFrame({"rows": [10]})
    >>> said = with_tally_and_values(
    ...     values, tally, lambda row, got: print(got["num_rows"].sum(), "of", row["rows"]))
    >>> said.collect().shape
    5 of 10
    (2, 1)
    """
    schema = values.collect_schema()
    marked = tally.with_columns(pl.lit(True).alias(TALLY_ROW))
    both = pl.concat([values, marked], how="diagonal_relaxed")

    def read(frame: pl.DataFrame) -> pl.DataFrame:
        row = frame.filter(pl.col(TALLY_ROW).fill_null(False))
        kept = frame.filter(pl.col(TALLY_ROW).is_null()).select(schema.names())
        if row.height:
            say(row.drop(TALLY_ROW, *schema.names()).row(0, named=True), kept)
        return kept

    return both.map_batches(warns_in_order(read), schema=schema)


def warn_on_joint(
    *,
    table: str,
    column: str | Sequence[str],
    matched: int,
    total: int,
    things: str,
    owner: str,
    effect: str | Callable[[int, int], str],
    by_system: Sequence[Mapping[str, Any]] = (),
) -> None:
    """The :class:`~polars_irmetrics.errors.CoverageWarning` of a joint where two tables'
    ids must line up: given when ``table=`` holds none or fewer than half of the
    ``total`` ``things`` of the ``owner`` (column ``column``; several columns, such as
    intersectional groups' dimensions, are named together), with the counts,
    ``effect`` (what the values then hold; a callable of the matched and total counts
    where it quotes them) and the likely fix. ``by_system``: where the whole owner's
    counts are not warned of, each system of ``systems=`` whose own ids ``table=``
    mostly lacks (:func:`systems_named`) is, by name: a system whose ids match none is
    otherwise hidden by the others' counts.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_on_joint(table="groups", column="doc_id", matched=0, total=3,
    ...                   things="documents", owner="run", effect="no group has exposure")
    ...     warn_on_joint(table="groups", column="doc_id", matched=2, total=3,
    ...                   things="documents", owner="run", effect="no group has exposure",
    ...                   by_system=[{"name": "system 'B'", "matched": 0, "total": 1}])
    >>> print(caught[0].message)  # doctest: +NORMALIZE_WHITESPACE
    groups= holds none of the 3 documents of the run (column 'doc_id'): no group has
    exposure. Ids that do not line up are the likely cause: give groups= and the run the
    same 'doc_id' values (same spelling, same collection).
    >>> print(caught[1].message)  # doctest: +NORMALIZE_WHITESPACE
    groups= holds none of the 1 documents of the run of system 'B' (column 'doc_id'): no
    group has exposure. Ids that do not line up are the likely cause: give groups= and
    the run of system 'B' the same 'doc_id' values (same spelling, same collection).
    """
    said = _say_joint(table, column, matched, total, things, owner, effect)
    if said:
        return
    for system in by_system:
        _say_joint(
            table,
            column,
            system["matched"],
            system["total"],
            things,
            f"{owner} of {system['name']}",
            effect,
        )


def lacks_most(matched: int, total: int) -> bool:
    """Whether a table holds fewer than half of ``total`` ids (``matched`` of them; none
    of none lacks nothing): where :func:`warn_on_joint` speaks.

    >>> lacks_most(1, 3), lacks_most(2, 4), lacks_most(0, 0)
    (True, False, False)
    """
    return bool(total) and 2 * matched < total


def _say_joint(
    table: str,
    column: str | Sequence[str],
    matched: int,
    total: int,
    things: str,
    owner: str,
    effect: str | Callable[[int, int], str],
) -> bool:
    """:func:`warn_on_joint`'s one warning; whether it was given."""
    if not lacks_most(matched, total):
        return False
    held = "none" if matched == 0 else f"only {matched}"
    fate = effect(matched, total) if callable(effect) else effect
    names = [repr(column)] if isinstance(column, str) else [repr(c) for c in column]
    where = f"column {names[0]}" if len(names) == 1 else f"columns {', '.join(names)}"
    same = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    warn_from_plan(
        f"{table}= holds {held} of the {total} {things} of the {owner} ({where}): "
        f"{fate}. Ids that do not line up are the likely cause: give {table}= and the "
        f"{owner} the same {same} values (same spelling, same collection)."
    )
    return True


def warn_on_pairs(
    *,
    matched: int,
    predictions: int,
    labels: int,
    query_id: str,
    doc_id: str,
    by_system: Sequence[Mapping[str, Any]] = (),
) -> None:
    """The :class:`~polars_irmetrics.errors.CoverageWarning` of ``labels=`` under
    ``unmatched='drop'``: given when no pair matches (an empty side included: every
    value is then null), or when the ``matched`` pairs are fewer than half of the
    ``predictions`` rows *and* fewer than half of the ``labels`` rows (predictions of
    every pair beside labels of a few, or the other way round, is how such tables are
    made; few matches on both sides is ids that do not line up), with the counts, what
    the values then hold and the likely fix.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_on_pairs(matched=0, predictions=4, labels=3, query_id="user", doc_id="item")
    ...     warn_on_pairs(matched=3, predictions=400, labels=3, query_id="user", doc_id="item")
    ...     warn_on_pairs(matched=0, predictions=4, labels=0, query_id="user", doc_id="item")
    >>> len(caught)
    2
    >>> print(caught[0].message)  # doctest: +NORMALIZE_WHITESPACE
    labels= and the predictions share none of their (user, item) pairs (4 predictions, 3
    labels): unmatched='drop' leaves out every prediction without a label, so every
    value is null. Ids that do not line up are the likely cause: give labels= and the
    predictions the same 'user' and 'item' values (same spelling, same collection).
    """
    if matched and (2 * matched >= predictions or 2 * matched >= labels):
        # the whole table's pairs line up: each system (by_system: ``name``, its
        # ``predictions`` and the pairs it ``matched``) whose own mostly do not, by name
        for system in by_system:
            _say_pairs(
                system["matched"], system["predictions"], labels, query_id, doc_id, system["name"]
            )
        return
    _say_pairs(matched, predictions, labels, query_id, doc_id, None)


def _say_pairs(
    matched: int, predictions: int, labels: int, query_id: str, doc_id: str, name: str | None
) -> None:
    """:func:`warn_on_pairs`' one warning (``name``: a system's, else the table's)."""
    if matched and (2 * matched >= predictions or 2 * matched >= labels):
        return
    held = "none" if matched == 0 else f"only {matched}"
    owner = "the predictions" if name is None else f"the predictions of {name}"
    if matched == 0:
        effect = "every value is null" if name is None else f"{name} has no row"
    else:
        effect = f"the metrics read only {matched} rows"
    warn_from_plan(
        f"labels= and {owner} share {held} of their ({query_id}, {doc_id}) pairs "
        f"({predictions} predictions, {labels} labels): unmatched='drop' leaves out every "
        f"prediction without a label, so {effect}. Ids that do not line up are the likely "
        f"cause: give labels= and {owner} the same {query_id!r} and {doc_id!r} "
        "values (same spelling, same collection)."
    )


def system_name(row: Mapping[str, object], systems: Sequence[str]) -> str:
    """How a warning names the system of ``row`` (its ``systems`` keys):
    ``"system 'B'"``, ``"system (a='x', b=1)"``."""
    return _run_name(row, systems)


_ITEMS, _KNOWN_ITEMS = f"{INTERNAL}items", f"{INTERNAL}known_items"
_USERS, _KNOWN_USERS = f"{INTERNAL}users", f"{INTERNAL}known_users"
_NULL_IDS = f"{INTERNAL}null_ids"


def interactions_tally(
    run: pl.LazyFrame,
    interactions: pl.LazyFrame,
    *,
    user: str,
    item: str,
    users: pl.LazyFrame | None = None,
    held_users: pl.LazyFrame | None = None,
    null_rows: int | None = None,
    shared: SharedIds | None = None,
    systems: Sequence[str] = (),
    system_rows: pl.LazyFrame | Mapping[str, pl.LazyFrame] | None = None,
) -> pl.LazyFrame:
    """One row: the run's items (``item``) and how many the interactions hold; where the
    interactions have the ``user`` column, the run's users and how many have a history;
    and the interactions' rows with a null id. The ids must be of one kind on both sides
    (:func:`check_id_kinds`); they are compared in :func:`common_id_dtype`. ``systems``:
    the run's system keys, and ``system_rows`` its rows with them: the row lists too
    each system whose items (users) the interactions mostly lack
    (:func:`held_tally`'s ``systems``), warned about by name; an engine passes them by
    column (its distinct system keys and items, and system keys and users).

    An engine, which holds its tables elsewhere, passes what it gathered: ``users``, the
    run's users where they are another frame than ``run`` (its distinct ids of each
    column); ``held_users``, the interactions' distinct users where ``interactions``
    holds only their distinct items (the catalogue); ``null_rows``, the interactions'
    rows with a null id where they were counted where the rows are. ``shared``: the
    door's frames shared by the routes of the call (:func:`~polars_irmetrics.ground.facts.id_rows`:
    the interactions' distinct ids, which the metrics read too)."""
    schema = interactions.collect_schema()
    columns = [item, *([user] if user in schema else [])]
    if null_rows is None:  # the pass with_null_id_check reads too, where shared
        parts = [null_ids(interactions, columns, shared)]
    else:
        parts = [interactions.select(pl.lit(null_rows, dtype=pl.Int64).alias(_NULL_IDS))]
    if held_users is not None:
        columns.append(user)
    for column, total, known in ((item, _ITEMS, _KNOWN_ITEMS), (user, _USERS, _KNOWN_USERS)):
        if column not in columns:
            continue
        side = users if column == user and users is not None else run
        held = held_users if column == user and held_users is not None else interactions
        ids = pl.col(column).cast(
            common_id_dtype([held.collect_schema()[column], side.collect_schema()[column]])
        )
        if held is interactions:  # the distinct ids the metrics read too, where shared
            distinct = id_rows(shared, interactions, held.select(ids), [], column)
            known_ids = distinct.select(column, pl.lit(True).alias(known))
        else:
            known_ids = held.select(ids).unique().with_columns(pl.lit(True).alias(known))
        parts.append(
            side.select(ids)
            .unique()
            .join(known_ids, on=column, how="left")
            .select(pl.len().cast(pl.Int64).alias(total), pl.col(known).count().cast(pl.Int64))
        )
        rows = system_rows.get(column) if isinstance(system_rows, Mapping) else system_rows
        if systems and rows is not None:
            parts.append(systems_tally(rows, known_ids, column, known, systems, distinct=True))
    return pl.concat(parts, how="horizontal")


def with_interactions_tally(
    values: pl.LazyFrame,
    run: pl.LazyFrame,
    interactions: pl.LazyFrame,
    *,
    user: str,
    item: str,
    name: str,
    dropped: bool = False,
    users: pl.LazyFrame | None = None,
    catalogue: Sequence[str] = (),
    shared: SharedIds | None = None,
    systems: Sequence[str] = (),
    system_rows: pl.LazyFrame | None = None,
    readers: Sequence[str] = (),
    history_readers: Sequence[str] = (),
) -> pl.LazyFrame:
    """``values``, and :func:`warn_on_interactions` when the plan runs, from
    :func:`interactions_tally` (``name``: the run's name in the text; ``dropped``: the
    run's items the interactions lack are left out, ``unseen_items='drop'``; ``run``
    may be its distinct items alone, and ``users`` its distinct users, where the caller
    has them); ``catalogue``: the labels of the metrics that read the catalogue's size
    (:func:`warn_on_catalogue`); ``shared``, ``systems`` and ``system_rows``: as
    :func:`interactions_tally` reads them; ``readers``: the labels of the metrics asked
    that read the interactions, which the warning names, and ``history_readers`` those
    of them that read each user's own history."""
    tally = interactions_tally(
        run,
        interactions,
        user=user,
        item=item,
        users=users,
        shared=shared,
        systems=systems,
        system_rows=system_rows,
    )

    def say(row: Mapping[str, Any]) -> None:
        warn_on_interactions(
            row,
            user=user,
            item=item,
            run=name,
            dropped=dropped,
            systems=systems,
            readers=readers,
            history_readers=history_readers,
        )
        warn_on_catalogue(row, item=item, labels=catalogue)

    return with_tally(values, tally, say)


_LACKING = f"{INTERNAL}lacking_history"


def with_history_check(
    values: pl.LazyFrame, run: pl.LazyFrame, interactions: pl.LazyFrame, keys: Sequence[str]
) -> pl.LazyFrame:
    """``values``, refused when the plan runs (:class:`InvalidValueError`, in the words of
    the recommendation table's metrics) where ``interactions`` has no row: the items'
    popularity and the catalogue of the metrics that read them (RecTools'
    ``serendipity(kind='kotkov')``, Elliot's) would come from nothing, so every item
    would read as never seen (a catalogue of 0 items divides by 0). ``interactions``:
    the frame of the interactions the route reads already (its items' counts, per
    ``keys`` and item, which has a row wherever the interactions have one), so the check
    makes no pass of its own. ``keys``: the ``by`` keys of ``run`` the interactions
    carry (each group's popularity from its own rows), where a group of ``run`` they
    hold no row of is refused, named by the first such group.

    >>> run = pl.LazyFrame({"s": ["a", "b"], "q": [1, 1]})
    >>> history = pl.LazyFrame({"s": ["a"], "q": [7], "d": [1]})
    >>> with_history_check(run, run, history, ["s"]).collect()
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: the interactions table has no rows for s=b: ...
    """
    if keys:
        ischema = interactions.collect_schema()
        groups = run.select(pl.col(k).cast(ischema[k]) for k in keys).unique()
        lacking = groups.join(
            interactions.select(keys).unique(), on=list(keys), how="anti", nulls_equal=True
        ).sort(keys)
        tally = lacking.select(
            pl.len().cast(pl.Int64).alias(_LACKING),
            *(
                pl.col(k).first().cast(pl.String).alias(f"{_LACKING}{i}")
                for i, k in enumerate(keys)
            ),
        )
    else:
        tally = interactions.select((pl.len() == 0).cast(pl.Int64).alias(_LACKING))

    def refuse(row: Mapping[str, Any]) -> None:
        if not row[_LACKING]:
            return
        where = ", ".join(f"{k}={row[f'{_LACKING}{i}']}" for i, k in enumerate(keys))
        raise InvalidValueError(
            f"the interactions table has no rows{f' for {where}' if where else ''}: the "
            "catalogue and the items' popularity come from it; pass the interactions the "
            "recommender learned from as interactions=..."
        )

    return with_tally(values, tally, refuse)


def warn_on_catalogue(row: Mapping[str, Any], *, item: str, labels: Sequence[str]) -> None:
    """The warning of :func:`interactions_tally`'s row where a metric of ``labels``
    (``mcc@k``, ``reco_accuracy@k``) reads the catalogue's size and the interactions
    lack some of the run's items, but not so many that :func:`warn_on_interactions`
    warns: RecTools' ``tn = n - k - fn`` takes the catalogue's ``n`` items to hold every
    list's items, so the true negatives, and the values, come out too small."""
    total, held = row[_ITEMS], row[_KNOWN_ITEMS]
    if not labels or not total or held >= total or 2 * held < total:
        return
    warn_from_plan(
        f"interactions= (the catalogue whose size {', '.join(labels)} read) lacks "
        f"{total - held} of the {total} items of the run (column {item!r}): RecTools' "
        "tn = n - k - fn takes its n items to hold every list's items, so the true "
        "negatives and the values come out too small; give interactions= every item a "
        "user may be recommended or find relevant"
    )


_FEATURE_ITEMS, _KNOWN_FEATURE_ITEMS = f"{INTERNAL}feature_items", f"{INTERNAL}known_features"

#: What a recommendation of an item without a feature vector gives, by ``unseen_items``
#: (under ``'error'`` each such item is refused, by name).
_NO_FEATURES = {
    "recommenders": "an item without a feature vector counts as similar 0 to every other "
    "item (unseen_items='recommenders', Microsoft Recommenders' fillna(0)), so a list of "
    "such items reads as diverse and serendipitous as a list can be",
    "drop": "the recommendations of an item without a feature vector are left out "
    "(unseen_items='drop'), so the metrics read few of the lists' items",
}


def warns_of_features(unseen_items: str) -> bool:
    """Whether item features that lack the run's items are counted and warned of under
    ``unseen_items`` (their recommendations scored or left out): not under ``'error'``,
    which refuses each such item by name.

    >>> warns_of_features("recommenders"), warns_of_features("error")
    (True, False)
    """
    return unseen_items in _NO_FEATURES


def features_tally(
    run: pl.LazyFrame, features: pl.LazyFrame, *, item: str, shared: SharedIds | None = None
) -> pl.LazyFrame:
    """One row: the run's distinct items and how many of them the item features hold,
    compared in :func:`common_id_dtype` (for :func:`warn_on_features`); ``shared``: the
    door's frames shared by the routes of the call (the features' distinct items, which
    their checks read too: :func:`~polars_irmetrics.ground.facts.id_rows`).

    >>> run = pl.LazyFrame({"doc_id": ["a", "b", "b"]})
    >>> features = pl.LazyFrame({"doc_id": ["b", "z"], "v": [[1.0], [2.0]]}, schema_overrides={
    ...     "doc_id": pl.Categorical})
    >>> features_tally(run, features, item="doc_id").collect().row(0)
    (2, 1)
    """
    dtype = common_id_dtype([run.collect_schema()[item], features.collect_schema()[item]])
    ids = pl.col(item).cast(dtype)
    held = features.select(ids)
    if shared is not None:  # each item once: the group-by the features' checks read
        held = id_rows(shared, features, held, [], item).select(item)
    return held_tally(
        run.select(ids),
        held,
        [item],
        _FEATURE_ITEMS,
        _KNOWN_FEATURE_ITEMS,
        distinct=shared is not None,
    )


def warn_on_features(row: Mapping[str, Any], *, item: str, run: str, unseen_items: str) -> None:
    """The warning of :func:`features_tally`'s row: item features that hold none or
    fewer than half of the run's items, where the recommendations of the others are
    scored anyway (``unseen_items='recommenders'``: similar 0 to every item, so the
    lists read as diverse as can be) or left out (``'drop'``) (:func:`warn_on_joint`);
    nothing where :func:`warns_of_features` says no."""
    if not warns_of_features(unseen_items):
        return
    warn_on_joint(
        table="item_features",
        column=item,
        matched=row[_KNOWN_FEATURE_ITEMS],
        total=row[_FEATURE_ITEMS],
        things="items",
        owner=run,
        effect=_NO_FEATURES[unseen_items],
    )


def refuse_null_ids(count: int, columns: Sequence[str]) -> None:
    """The refusal of interactions with ``count`` rows holding a null id in ``columns``
    (the user and the item columns, or the item column alone): a null user's rows would
    count toward popularity and the catalogue while belonging to no one, a null item's
    toward no item.

    >>> refuse_null_ids(0, ["u", "i"])
    >>> refuse_null_ids(2, ["u", "i"])
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: the interactions have 2 row(s) with a null 'u' or 'i': ...
    """  # noqa: E501
    if not count:
        return
    named = [repr(c) for c in columns]
    raise InvalidValueError(
        f"the interactions have {count} row(s) with a null {' or '.join(named)}: each row "
        "is one user's interaction with one item; fill or drop them, e.g. "
        f"interactions.drop_nulls([{', '.join(named)}])"
    )


def null_ids(
    interactions: pl.LazyFrame, counted: Sequence[str], shared: SharedIds | None = None
) -> pl.LazyFrame:
    """One row: the rows of ``interactions`` with a null id in ``counted`` (the item
    column first, then the user's where it is there), one cached pass for every reader
    of the call (:func:`interactions_tally`, :func:`with_null_id_check`) where the door
    shares frames (``shared``: :func:`~polars_irmetrics.ground.facts.shared_frame`)."""
    nulls = pl.any_horizontal(pl.col(c).is_null() for c in counted).sum().cast(pl.Int64)
    built = interactions.select(nulls.alias(_NULL_IDS))
    if shared is None:
        return built
    return shared_frame(shared, interactions, f"null_ids|{'|'.join(counted)}", built)


def with_null_id_check(
    values: pl.LazyFrame,
    interactions: pl.LazyFrame,
    columns: Sequence[str],
    shared: SharedIds | None = None,
) -> pl.LazyFrame:
    """``values``, refused when the plan runs where ``interactions`` has a row with a
    null id in ``columns`` (:func:`refuse_null_ids`): for a plan that warns of its own
    values from inside (Elliot's NaN of PopRSP and PopREO), whose warning would
    otherwise come before the refusal of the bad input that :func:`warn_on_interactions`
    gives around the whole plan (the same count and text: the input is refused once;
    ``shared``: the door's frames, where the count is that tally's pass, :func:`null_ids`).

    >>> values = pl.LazyFrame({"v": [1.0]})
    >>> history = pl.LazyFrame({"u": ["a", None], "i": [1, 2]})
    >>> with_null_id_check(values, history, ["u", "i"]).collect()
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: the interactions have 1 row(s) with a null 'u' or 'i': ...
    """  # noqa: E501
    # counted in the order interactions_tally counts them (the item, last in
    # ``columns``, first): its pass
    counted = [*columns[-1:], *columns[:-1]]
    return with_tally(
        values,
        null_ids(interactions, counted, shared),
        lambda row: refuse_null_ids(row[_NULL_IDS], columns),
    )


def _history_readers(readers: Sequence[str]) -> str:
    """The metrics that read the interactions, as :func:`warn_on_interactions` names
    them: the labels asked, or (none given) the families.

    >>> _history_readers(["novelty@3", "reco_accuracy@3"])
    'novelty@3 and reco_accuracy@3'
    """
    if not readers:
        return (
            "the metrics that read the history (novelty, surprisal, serendipity, the "
            "popularity-bias family)"
        )
    if len(readers) == 1:
        return readers[0]
    return f"{', '.join(readers[:-1])} and {readers[-1]}"


def _cold_users_effect(readers: Sequence[str], history_readers: Sequence[str]) -> str:
    """What a user without a history changes, as :func:`warn_on_interactions` says it:
    the metrics asked that read each user's history find every item new to them; where
    none of those asked does, nothing, though users that do not line up are a sign of
    ids that do not."""
    if history_readers:
        verb = "reads" if len(history_readers) == 1 else "read"
        return (
            f"a user without a history finds every item new ({_history_readers(history_readers)} "
            f"{verb} no history for them)"
        )
    if readers:
        return (
            f"no metric asked reads a user's own history ({_history_readers(readers)} "
            f"{'reads' if len(readers) == 1 else 'read'} the items' popularity or the "
            "catalogue alone), so the values do not change, but users that do not line up "
            "are a likely sign that the items do not either"
        )
    return (
        "a user without a history finds every item new (novelty(kind='replay'), "
        "serendipity read no history for them)"
    )


def warn_on_interactions(
    row: Mapping[str, Any],
    *,
    user: str,
    item: str,
    run: str,
    dropped: bool = False,
    systems: Sequence[str] = (),
    readers: Sequence[str] = (),
    history_readers: Sequence[str] = (),
) -> None:
    """The warnings of :func:`interactions_tally`'s row: a run whose items the
    interactions mostly lack, or none of whose users they hold (cold users are common;
    all of them cold reads every item as new) (:func:`warn_on_joint`); interactions
    with a null id are refused (a null user's rows would count toward popularity and
    the catalogue while belonging to no one, a null item's toward no item).
    ``dropped``: the recommendations of the items the interactions lack are left out
    (``unseen_items='drop'``; the row counts the run as given, before the drop).
    ``systems``: the run's system keys, where the row counts each system's too: a
    system whose items the interactions mostly lack (whose users none has a history),
    beside systems that line up, is warned about by name. ``readers``: the labels of the
    metrics asked that read the interactions, which the warning names (without them, the
    families that read them); ``history_readers``: those of them that read each user's
    own history, which a user without one changes (none of ``readers``: said so)."""
    refuse_null_ids(row[_NULL_IDS], [c for c in (user, item) if c == item or _USERS in row])
    warn_on_joint(
        table="interactions",
        column=item,
        matched=row[_KNOWN_ITEMS],
        total=row[_ITEMS],
        things="items",
        owner=run,
        effect="the recommendations of an item the interactions lack are left out "
        "(unseen_items='drop'), so the metrics read few of the lists' items"
        if dropped
        else "an item the interactions lack has no popularity and no user has seen it, "
        f"so {_history_readers(readers)} "
        f"{'reads' if len(readers) == 1 else 'read'} it as never seen, and the catalogue "
        "does not hold it",
        by_system=systems_named(row, _KNOWN_ITEMS, systems),
    )
    if _USERS not in row:
        return
    # none: a few cold users are common; each system none of whose users has a history
    # too, where some of the run's users have one
    cold = [s for s in systems_named(row, _KNOWN_USERS, systems) if s["matched"] == 0]
    known = row[_KNOWN_USERS]
    warn_on_joint(
        table="interactions",
        column=user,
        # the whole run is warned of where none of its users has a history alone
        matched=0 if not known else row[_USERS],
        total=row[_USERS],
        things="users",
        owner=run,
        effect=_cold_users_effect(readers, history_readers),
        by_system=cold,
    )


def warn_from_plan(text: str, category: type[Warning] = CoverageWarning) -> None:
    """A warning (by default a :class:`~polars_irmetrics.errors.CoverageWarning`) given
    from the plan (a polars callback, where no line of the caller's is on the stack):
    shown under the library's name, without a source line (not polars' own file), and
    each time (not once per process). Inside a door's plan, held until the plan's end
    and given in the order the plan declares its checks
    (:mod:`~polars_irmetrics.ground.warning_order`)."""
    if not hold(text, category):
        warn_now(text, category)


def with_group_check(
    values: pl.LazyFrame,
    run: pl.LazyFrame,
    judged: pl.LazyFrame,
    keys: Sequence[str],
    *,
    system_keys: Sequence[str],
    unjudged: Policy,
    unretrieved: Policy,
    judged_fate: str | None = None,
) -> pl.LazyFrame:
    """``values`` unchanged, warning when the plan runs of the groups of the ``by=`` or
    ``systems=`` ``keys`` that both ``run`` and ``judged`` (the judgments, which carry
    those keys: judgments per group) hold, where one holds a group the other lacks
    (:func:`warn_on_absent_groups`). The tally is one row of counts and first groups
    of the two tables' distinct key values (:func:`with_tally`): a pass over the key
    columns, only where the judgments carry such keys."""
    keys = list(keys)
    tally = absent_groups_row(run.select(keys).unique(), judged.select(keys).unique(), keys)
    return with_tally(
        values,
        tally,
        lambda row: warn_on_absent_groups(
            row,
            keys,
            system_keys=system_keys,
            unjudged=unjudged,
            unretrieved=unretrieved,
            judged_fate=judged_fate,
        ),
    )


def absent_groups_row(ran: pl.LazyFrame, held: pl.LazyFrame, keys: Sequence[str]) -> pl.LazyFrame:
    """The one row :func:`warn_on_absent_groups` reads: of the distinct groups ``ran``
    (the run's) and ``held`` (the judgments'), how many of each the other lacks and the
    first (a struct of the ``keys``).

    >>> ran, held = pl.LazyFrame({"s": ["A", "B"]}), pl.LazyFrame({"s": ["A"]})
    >>> absent_groups_row(ran, held, ["s"]).collect().row(0)
    (1, {'s': 'B'}, 0, None)
    """
    keys = list(keys)

    def absent(left: pl.LazyFrame, right: pl.LazyFrame, name: str) -> pl.LazyFrame:
        lacking = left.join(right, on=keys, how="anti", nulls_equal=True)
        return lacking.select(
            pl.len().alias(f"{name}_count"),
            pl.struct(keys).sort().first().alias(f"{name}_first"),
        )

    return pl.concat([absent(ran, held, "ran"), absent(held, ran, "judged")], how="horizontal")


def warn_on_absent_groups(
    row: Mapping[str, Any],
    keys: Sequence[str],
    *,
    system_keys: Sequence[str],
    unjudged: Policy,
    unretrieved: Policy,
    judged_fate: str | None = None,
    side: str = "the judgments",
    emit: Callable[[str], None] | None = None,
) -> None:
    """The warnings of :func:`with_group_check`'s tally ``row``: ``ran_count`` groups of
    the run ``side`` (the judgments) lacks, the first ``ran_first``, and
    ``judged_count`` of ``side`` the run lacks, the first ``judged_first`` (structs of
    the ``keys``). Such a group matches nothing: the run's is left out
    (``unjudged='drop'``) or scored as rankings of no judged document, and every judged
    query of the other as an empty ranking (or is left out; ``judged_fate``: what it
    scores where the route says otherwise) in its own group, which
    ``'B'`` beside ``'b'`` made silent; the text names the first group of each and the
    key columns. A group the run lacks that a ``systems=`` key names is left to the
    coverage warning (:func:`warn_on_counts`, which names that system). ``emit`` gives
    each text (default: a :class:`~polars_irmetrics.errors.CoverageWarning` here).

    Examples
    --------
    >>> import warnings
    >>> row = {"ran_count": 1, "ran_first": {"seg": "B"}, "judged_count": 0,
    ...        "judged_first": None}
    >>> with warnings.catch_warnings(record=True) as said:
    ...     warnings.simplefilter("always")
    ...     warn_on_absent_groups(row, ["seg"], system_keys=(), unjudged="drop",
    ...                           unretrieved="zero")
    >>> str(said[0].message)[:62]
    "the judgments hold none of the run's 1 group(s) (first: seg='B"
    """
    emit = emit or warn_from_plan
    options = ", ".join(
        f"{'systems' if k in system_keys else 'by'}= key column {k!r}" for k in keys
    )
    named = ", ".join(repr(k) for k in keys)

    def first(group: Mapping[str, Any]) -> str:
        return ", ".join(f"{k}={group[k]!r}" for k in keys)

    advice = (
        f"Ids that do not line up are the likely cause: give the run and {side} the same "
        f"{named} values (same spelling, same collection)"
    )
    if row["ran_count"]:
        fate = {
            "drop": "is unjudged and left out (unjudged='drop'): no metric that reads the "
            "judgments scores the group",
            "zero": f"is unjudged and scores {_AS_UNJUDGED} (unjudged='zero')",
            "error": "is unjudged (unjudged='error')",
        }[unjudged]
        emit(
            f"{side} hold none of the run's {row['ran_count']} group(s) (first: "
            f"{first(row['ran_first'])}): {side} carry the {options} (judgments per "
            f"group), and each query of such a group {fate}. {advice}, or drop {named} "
            f"from {side} to judge every group by the same judgments."
        )
    if row["judged_count"] and not any(k in system_keys for k in keys):
        if unretrieved == "drop":
            fate = "is left out (unretrieved='drop')"
        else:
            fate = judged_fate or (
                f"scores as an empty ranking does (unretrieved={unretrieved!r}: {_NOTHING})"
            )
        emit(
            f"the run holds none of the {row['judged_count']} group(s) of {side} (first: "
            f"{first(row['judged_first'])}; {options}): each judged query of such a group "
            f"{fate}. {advice}."
        )


def warn_empty_table(table: str = "the table") -> None:
    """The one warning of a table of no row, whose metrics are all null (the
    prediction route's table, the recommendation table, the impression log): nothing
    was scored, said from the plan (:func:`warn_from_plan`) as an
    :class:`~polars_irmetrics.errors.IrmWarning`.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_empty_table("the impression log")
    >>> str(caught[0].message)
    'the impression log holds no row, so every metric is null: nothing was scored (a filter that kept nothing, or an empty file?)'
    """  # noqa: E501
    warn_from_plan(empty_table_text(table), IrmWarning)


def empty_table_text(table: str = "the table") -> str:
    """The text of :func:`warn_empty_table` (an engine gives it from its parts'
    counts)."""
    return (
        f"{table} holds no row, so every metric is null: nothing was scored (a filter "
        "that kept nothing, or an empty file?)"
    )


def _run_name(row: Mapping[str, object], systems: Sequence[str]) -> str:
    if not systems:
        return "the run"
    if len(systems) == 1:
        return f"system {row[systems[0]]!r}"
    return "system (" + ", ".join(f"{k}={row[k]!r}" for k in systems) + ")"
