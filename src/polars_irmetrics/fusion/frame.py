"""From the user's runs to the long frame every fusion reads, and back to a run.

The runs (a dict of frames, or one long frame with a run column) become one lazy
frame with one row per (run, query, document): the run as an integer index, the ids,
and the value that orders the run (its score, or minus its rank when it has no score
column). :func:`positions` numbers each run's documents per query (1 = top; ties in
the value broken by document id, descending compared as text, as
:func:`~polars_irmetrics.evaluate` and trec_eval break them: the same rule for every
method and for the fused run's own ranks), :func:`expand` adds a row for every candidate a run did
not retrieve (Borda, Condorcet), and :func:`checked` turns the data checks counted in
the plan into the library's errors.
"""

from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any

import polars as pl

from polars_irmetrics.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    DuplicateError,
    InvalidValueError,
    IrmWarning,
    MetricParameterError,
)
from polars_irmetrics.fusion.methods import (
    CANDIDATES,
    FUSION_METHODS,
    LEN,
    PRESENT,
    RUN,
    FusionMethod,
)
from polars_irmetrics.fusion.options import FusionOptions, Weights
from polars_irmetrics.ground.inputs import ArrowStreamExportable, as_polars
from polars_irmetrics.ground.lists import long_run
from polars_irmetrics.ground.options import EvalOptions, check_named_columns
from polars_irmetrics.ground.validate import (
    FLOAT64_EXACT,
    common_id_dtype,
    id_kind,
    numeric_cast_fix,
    warn_from_plan,
)

__all__ = [
    "BAD",
    "DUP",
    "MISORDERED",
    "RAW",
    "TIED",
    "Counts",
    "Gathered",
    "Runs",
    "check_rows",
    "checked",
    "expand",
    "flags",
    "flags_for",
    "gather",
    "overflow_error",
    "positions",
    "resolve_weights",
    "said_flags",
    "tied_ranks",
    "warn_said",
]

#: The runs to fuse: a dict of run name to frame, or one long frame with ``system=``.
Runs = Mapping[str, pl.DataFrame | pl.LazyFrame] | pl.DataFrame | pl.LazyFrame

RAW = "__irmf_raw"
BAD = "__irmf_bad"
DUP = "__irmf_dup"
#: Whether a run ordered by its ranks gives the document's rank to another document of
#: the query too (:func:`tied_ranks`), any of them in the (query, document) group.
TIED = "__irmf_tied"
#: Whether the row's run has a rank column beside the score column it is ordered by,
#: and the two order the row's query otherwise (a window over the run and the query,
#: added in :func:`gather` where some run has both; :func:`_warn_misordered`).
MISORDERED = "__irmf_misordered"
_LOW = "__irmf_low"
_HIGH = "__irmf_high"
_MAX_BITS = 62


@dataclass(frozen=True)
class Counts:
    """Count rows that travel with a fused frame to :func:`checked`: told apart by a
    non-null ``kind`` column, with ``columns``, and handed to ``read``."""

    kind: str
    columns: Sequence[str]
    read: Callable[[pl.DataFrame], None]


@dataclass(frozen=True)
class Gathered:
    """The runs as one long lazy frame, with what the plan needs to know about them."""

    frame: pl.LazyFrame
    #: The same rows, one frame per run (when the runs came as a dict and ``frame`` is
    #: all of them), so that per-(run, query) windows group by the query alone,
    #: which is cheaper than two keys; ``None`` otherwise.
    parts: tuple[pl.LazyFrame, ...] | None
    names: tuple[str, ...]
    order_columns: tuple[str, ...]
    has_score: bool
    eager: bool
    id_dtypes: tuple[pl.DataType, pl.DataType]
    #: Per run, whether its order column is an integer dtype wider than Float64's
    #: mantissa, or a Decimal (:func:`_raw`: its +inf marks a value Float64 does not
    #: hold exactly, not an inf).
    wide: tuple[bool, ...] = ()
    #: Per run, the dtype of its order column.
    order_dtypes: tuple[pl.DataType, ...] = ()
    #: One long frame's ``system=`` column and its dtype, whose text names the runs
    #: (``None`` for a dict of runs, whose keys are the names).
    system_column: tuple[str, pl.DataType] | None = None


def _id_cast(dtypes: Sequence[pl.DataType]) -> pl.DataType:
    """The dtype one id column takes in every run: String for strings, else the integer
    dtype that holds every run's (Int64, or UInt64 / Int128 where a UInt64 is among
    them: an id beyond 2**63 kept whole)."""
    return common_id_dtype(dtypes)


def gather(runs: Runs, options: FusionOptions) -> Gathered:
    """The runs as one long frame: ``RUN`` (Int32 index), the ids, ``RAW`` (Float64)."""
    q, d = options.query_id, options.doc_id
    # one name each (not a list or a pl.col), and the ids two columns: the door's checks
    named = EvalOptions.build(query_id=q, doc_id=d, score=options.score, rank=options.rank)
    if not isinstance(runs, Mapping) and _is_table(runs):  # one long frame of every run
        return _gather_long(_long_form(runs, "runs", options), options, named)
    if not isinstance(runs, Mapping):
        raise InvalidValueError(
            f"runs must be a dict of run name to DataFrame/LazyFrame, or one frame with "
            f"system=...; got {type(runs).__name__}"
        )
    if options.system is not None:
        raise InvalidValueError(
            f"system={options.system!r} is not read with a dict of runs: it names the run "
            "column of one long frame, and a dict names each run by its key; drop system=, "
            "or pass one long frame whose system column names the runs"
        )
    names = _run_names(runs)
    _require_two(names)
    frames, order_columns, kinds, id_types = [], [], [], []
    schemas: list[pl.Schema] = []
    wide: list[bool] = []
    order_dtypes: list[pl.DataType] = []
    beside: list[bool] = []
    eager = True
    for index, (name, given) in enumerate(zip(names, runs.values(), strict=True)):
        run = _long_form(given, f"run {name!r}", options)
        eager = eager and isinstance(run, pl.DataFrame)
        lazy = run.lazy()
        schema = lazy.collect_schema()
        schemas.append(schema)
        frame = f"run {name!r}"
        for column in (q, d):
            if column not in schema:
                have = ", ".join(repr(c) for c in schema.names()) or "none"
                raise ColumnNotFoundError(
                    f"column {column!r} not found in {frame} (its columns: {have}); name "
                    f"the columns with query_id=... and doc_id=..."
                )
        kinds.append((id_kind(schema, q, frame), id_kind(schema, d, frame)))
        id_types.append((schema[q], schema[d]))
        order = _order_column(schema, name, options)
        order_columns.append(order)
        wide.append(_is_wide(schema[order]))
        order_dtypes.append(schema[order])
        both = _both_orders(schema, order, options)
        beside.append(both)
        frames.append(
            lazy.select(
                pl.lit(index, pl.Int32).alias(RUN),
                pl.col(q),
                pl.col(d),
                _raw(order, schema[order], options),
                *([_misordered(options, [q])] if both else []),
            )
        )
    for position, column in enumerate((q, d)):
        found = {kind[position] for kind in kinds}
        if len(found) > 1:
            # the first run of each kind named, with its dtype (as compare names them)
            firsts = sorted({k[position]: i for i, k in reversed(list(enumerate(kinds)))}.values())
            shown = ", ".join(f"{names[i]!r}: {id_types[i][position]}" for i in firsts)
            raise ColumnTypeError(
                f"column {column!r} holds strings in some runs and integers in others "
                f"({shown}); cast it to one type in every run, e.g. "
                f"pl.col({column!r}).cast(pl.String)"
            )
    _check_order_names(named, schemas, names, order_columns, options)
    dtypes = (_id_cast([t[0] for t in id_types]), _id_cast([t[1] for t in id_types]))
    frames = [f.with_columns(pl.col(q).cast(dtypes[0]), pl.col(d).cast(dtypes[1])) for f in frames]
    if any(beside):  # one schema for every run's frame
        frames = [
            f if both else f.with_columns(pl.lit(False).alias(MISORDERED))
            for f, both in zip(frames, beside, strict=True)
        ]
    return Gathered(
        frame=pl.concat(frames, how="vertical"),
        parts=tuple(frames),
        names=names,
        order_columns=tuple(order_columns),
        has_score=all(c == options.score for c in order_columns),
        eager=eager,
        id_dtypes=dtypes,
        wide=tuple(wide),
        order_dtypes=tuple(order_dtypes),
    )


def _is_table(value: object) -> bool:
    """Whether ``value`` is a table :func:`~polars_irmetrics.ground.inputs.as_polars`
    reads: a polars frame, a pandas DataFrame, an Arrow table or stream."""
    pandas = sys.modules.get("pandas")
    return isinstance(value, pl.DataFrame | pl.LazyFrame | ArrowStreamExportable) or (
        pandas is not None and isinstance(value, pandas.DataFrame)
    )


def _long_form(run: object, name: str, options: FusionOptions) -> pl.DataFrame | pl.LazyFrame:
    """``run`` as polars reads it, in the long form: a pandas or Arrow table converted
    (as :func:`~polars_irmetrics.evaluate` converts it), a list-shaped run (one row of
    document ids per query) exploded, its positions the ranks: a query in two rows of
    one run refused, as :func:`~polars_irmetrics.evaluate` refuses it."""
    frame = as_polars(run, name)
    system = options.system if isinstance(options.system, str) else None
    return long_run(
        frame,
        query_id=options.query_id,
        doc_id=options.doc_id,
        rank=options.rank,
        score=options.score,
        keys=[] if system is None else [system],
        frame="run" if name == "runs" else name,  # "run 'b'": which of the runs is refused
    )


def _raw(order: str, dtype: pl.DataType, options: FusionOptions) -> pl.Expr:
    """``RAW``: the order value as Float64, negated for a rank (higher is better); a
    null as NaN, and an integer beyond 2**53 as +inf (an integer column holds no inf:
    :func:`check_rows` tells the two apart), both refused by the checks:
    fusion computes in Float64, where such integers tie with their neighbours
    (nanosecond timestamps 100 ns apart)."""
    value = pl.col(order).cast(pl.Float64)
    raw = value if order == options.score else -value
    if isinstance(dtype, pl.Decimal):  # a decimal Float64 does not give back: rounded
        given = pl.col(order)
        back = value.cast(dtype, strict=False)
        inexact = given.is_not_null() & (back != given).fill_null(True)
        raw = pl.when(inexact).then(math.inf).otherwise(raw)
    elif _is_wide(dtype):
        raw = pl.when(pl.col(order).abs() > FLOAT64_EXACT).then(math.inf).otherwise(raw)
    return raw.fill_null(math.nan).alias(RAW)


#: Integer dtypes whose every value is exact in Float64.
_NARROW = frozenset({pl.Int8(), pl.Int16(), pl.Int32(), pl.UInt8(), pl.UInt16(), pl.UInt32()})


def _is_wide(dtype: pl.DataType) -> bool:
    """Whether ``dtype`` is an integer dtype some of whose values Float64 rounds, or a
    Decimal (its values Float64 rounds are refused alike: two of them could tie)."""
    return (dtype.is_integer() and dtype not in _NARROW) or isinstance(dtype, pl.Decimal)


def _require_two(names: Sequence[str]) -> None:
    if len(names) < 2:
        got = ", ".join(repr(n) for n in names) or "none"
        raise InvalidValueError(
            f"fusion needs at least two runs; got {len(names)} ({got}): pass a dict of "
            "two or more runs, or one frame whose system column names two or more runs"
        )


def _order_column(schema: pl.Schema, name: str, options: FusionOptions) -> str:
    for column in (options.score, options.rank):
        if column in schema:
            dtype = schema[column]
            if not dtype.is_numeric():
                raise ColumnTypeError(
                    f"column {column!r} of run {name!r} has dtype {dtype}; it must be "
                    f"numeric: {numeric_cast_fix(column, dtype)}"
                )
            return column
    have = ", ".join(repr(c) for c in schema.names()) or "none"
    raise ColumnNotFoundError(
        f"run {name!r} has neither a {options.score!r} nor a {options.rank!r} column (its "
        f"columns: {have}); name its score column with score=... or its rank column "
        "with rank=..."
    )


def _run_names(runs: Mapping[Any, object]) -> tuple[str, ...]:
    """The runs' names (their keys as text), refused where two keys read alike (``1``
    and ``'1'``): a run's weight, fitted table and messages find it by that name."""
    names = tuple(str(name) for name in runs)
    keys = list(runs)
    for i, name in enumerate(names):
        if name in names[:i]:
            first = keys[names.index(name)]
            raise InvalidValueError(
                f"runs {first!r} and {keys[i]!r} are both named {name!r} (a run's name is its "
                "key as text, which its weight and its fitted table are found by): give each "
                "run a name of its own, e.g. string keys"
            )
    return names


def _check_order_names(
    named: EvalOptions,
    schemas: Sequence[pl.Schema],
    names: Sequence[str],
    order_columns: Sequence[str],
    options: FusionOptions,
    *,
    long: bool = False,
) -> None:
    """Refuse a ``score=`` or ``rank=`` given (not the default) that no run reads.

    A run is ordered by its score column where it has one, else by its rank column
    (:func:`_order_column`; ranx orders every run by its scores). So a name that no run
    has is refused as the door refuses it (``check_named_columns``: a misspelt one would
    be ignored), and so is a ``rank=`` naming a column of a run that is ordered by its
    scores: that run's ranks would be ignored beside them. ``long``: the runs came as
    one long frame (``names``: one name for it).

    >>> schema = pl.Schema({"query_id": pl.String, "doc_id": pl.String, "score": pl.Float64})
    >>> _check_order_names(
    ...     EvalOptions.build(rank="r"), [schema], ["a"], ["score"], FusionOptions(rank="r")
    ... )  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.ColumnNotFoundError: rank='r' names no column of the runs ...
    """
    held = {column: dtype for schema in schemas for column, dtype in schema.items()}
    check_named_columns(named, pl.Schema(held), "runs")
    rank, score = options.rank, options.score
    if "rank" not in named.given():
        return
    for name, schema, order in zip(names, schemas, order_columns, strict=True):
        if rank in schema and order == score:
            what = "the runs, which are" if long else f"run {name!r}, which is"
            its = "their" if long else "its"
            fix = f"frame.drop({score!r})" if long else f"runs[{name!r}].drop({score!r})"
            raise InvalidValueError(
                f"rank={rank!r} names a column of {what} ordered by {its} {score!r} column: "
                f"fusion orders a run by its scores where it has a score column (as ranx "
                f"does) and by its ranks only without one, so rank= would be ignored; drop "
                f"rank= to fuse the scores, or drop the {score!r} column to fuse the ranks "
                f"in {rank!r}, e.g. {fix}"
            )


def _gather_long(
    frame: pl.DataFrame | pl.LazyFrame, options: FusionOptions, named: EvalOptions
) -> Gathered:
    system = options.system
    if system is None:
        raise InvalidValueError(
            "one frame of several runs needs system= naming its run column, e.g. "
            "fuse(frame, system='run'); or pass a dict of run name to frame"
        )
    if not isinstance(system, str):
        raise InvalidValueError(
            f"system must be a column name (a str), got {system!r}: pass the name of the "
            "column that names the runs, e.g. system='run'"
        )
    lazy = frame.lazy()
    schema = lazy.collect_schema()
    q, d = options.query_id, options.doc_id
    for column in (system, q, d):
        if column not in schema:
            have = ", ".join(repr(c) for c in schema.names()) or "none"
            raise ColumnNotFoundError(
                f"column {column!r} not found in the runs (its columns: {have}); name the "
                "columns with system=..., query_id=... and doc_id=..."
            )
    for column in (q, d):  # strings or integers (any other dtype refused, named)
        id_kind(schema, column, "runs")
    if isinstance(schema[system], pl.List | pl.Array):  # no text cast names one run
        raise ColumnTypeError(
            f"column {system!r} of the runs has dtype {schema[system]}; each row needs one "
            "run name (a string or an integer): give each row its run's name, e.g. "
            f"pl.col({system!r}).list.first() for a list of one name"
        )
    system_text = pl.col(system).cast(pl.String)
    found = lazy.select(system_text.unique()).collect()[system]
    if found.null_count():
        raise InvalidValueError(
            f"column {system!r} of the runs has null values; every row needs a run name: "
            f"drop them, e.g. .drop_nulls({system!r})"
        )
    names = tuple(sorted(found.to_list()))
    _require_two(names)
    order = _order_column(schema, "runs", options)
    _check_order_names(named, [schema], ["runs"], [order], options, long=True)
    dtypes = (_id_cast([schema[q]]), _id_cast([schema[d]]))
    long = lazy.select(
        system_text.replace_strict(
            {name: i for i, name in enumerate(names)}, return_dtype=pl.Int32
        ).alias(RUN),
        pl.col(q).cast(dtypes[0]),
        pl.col(d).cast(dtypes[1]),
        _raw(order, schema[order], options),
        *([_misordered(options, [system, q])] if _both_orders(schema, order, options) else []),
    )
    return Gathered(
        frame=long,
        parts=None,
        names=names,
        order_columns=(order,) * len(names),
        has_score=order == options.score,
        eager=isinstance(frame, pl.DataFrame),
        id_dtypes=dtypes,
        wide=(_is_wide(schema[order]),) * len(names),
        order_dtypes=(schema[order],) * len(names),
        system_column=(system, schema[system]),
    )


def resolve_weights(
    method: FusionMethod, weights: Weights | None, names: Sequence[str]
) -> tuple[float, ...] | None:
    """One checked weight per run (in the runs' order), or ``None`` for unweighted methods.

    Examples
    --------
    >>> from polars_irmetrics.fusion.methods import get_fusion_method
    >>> from polars_irmetrics.fusion.frame import resolve_weights
    >>> resolve_weights(get_fusion_method("wsum"), {"dense": 0.3, "bm25": 0.7}, ["bm25", "dense"])
    (0.7, 0.3)
    >>> resolve_weights(get_fusion_method("wsum"), [0.0, 0.0], ["bm25", "dense"])
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: weights are all zero; give at least one run a ...
    """
    listed = ", ".join(repr(n) for n in names)
    if not method.weighted:
        if weights is not None:
            weighted = ", ".join(m.name for m in FUSION_METHODS.values() if m.weighted)
            raise MetricParameterError(
                f"{method.name} takes no weights; drop weights=, or use a weighted method "
                f"({weighted})"
            )
        return None
    if weights is None:
        raise MetricParameterError(
            f"{method.name} needs weights, one per run ({listed}): pass them, e.g. "
            f"weights={[round(1 / len(names), 3)] * len(names)}"
        )
    unordered = isinstance(weights, Set)  # a set's order is its hashes': no run's weight
    if (
        unordered
        or isinstance(weights, str | bytes)
        or not isinstance(weights, Mapping | Iterable)
    ):
        even = round(1 / len(names), 3)
        kind = "a set, whose order is no run's" if unordered else "not a list or dict of numbers"
        raise InvalidValueError(
            f"weights={weights!r} is {kind}; weights must be a list "
            f"of numbers, one per run in the runs' order ({listed}), e.g. "
            f"weights={[even] * len(names)}, or a dict of run name to number, e.g. "
            f"weights={dict.fromkeys(names, even)}"
        )
    if isinstance(weights, Mapping):
        # by the runs' names: their keys as text (a dict {1: run} names its run '1')
        keyed: dict[str, float] = {}
        for key, value in weights.items():
            if str(key) in keyed:
                raise InvalidValueError(
                    f"weights names run {str(key)!r} twice (a key is read as text, as the "
                    f"runs' keys are); give one weight per run ({listed})"
                )
            keyed[str(key)] = value
        missing = [n for n in names if n not in keyed]
        extra = [n for n in keyed if n not in names]
        if missing or extra:
            raise InvalidValueError(
                f"weights must name every run ({listed}) once; missing: "
                f"{', '.join(map(repr, missing)) or 'none'}; unknown: "
                f"{', '.join(map(repr, extra)) or 'none'}"
            )
        values = [keyed[n] for n in names]
    else:
        values = list(weights)
        if len(values) != len(names):
            raise InvalidValueError(
                f"weights has {len(values)} value(s) for {len(names)} runs ({listed}); "
                "give one weight per run, in the runs' order"
            )
    out = []
    for name, value in zip(names, values, strict=True):
        ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
        if not ok or not math.isfinite(value) or value < 0:
            raise InvalidValueError(
                f"weight {value!r} of run {name!r} is not valid; weights must be finite "
                "numbers >= 0"
            )
        out.append(float(value))
    if not any(out):
        raise InvalidValueError("weights are all zero; give at least one run a positive weight")
    return tuple(out)


def positions(
    frame: pl.LazyFrame, keys: Sequence[str], value: str, doc: str, out: str
) -> pl.LazyFrame:
    """``out``: 1 + the rows of the group with a higher ``value`` + tied rows with a
    greater ``doc`` compared as text (trec_eval's rule, and
    :func:`~polars_irmetrics.evaluate`'s); a null ``value`` gets a null position.

    Two windows over the group (``rank("min")`` and ``rank("max")``, sharing its
    grouping) place every row; only rows that tie are then ordered by id, in a window
    over the tied rows alone.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.fusion.frame import positions
    >>> frame = pl.LazyFrame({"q": [1, 1, 1], "d": ["c", "a", "b"], "s": [0.5, 0.5, 0.9]})
    >>> positions(frame, ["q"], "s", "d", "p").sort("p").collect()["d"].to_list()
    ['b', 'c', 'a']

    Integer ids are compared as text, as trec_eval compares them: 9 before 10 in a tie.

    >>> frame = pl.LazyFrame({"q": [1, 1], "d": [9, 10], "s": [0.5, 0.5]})
    >>> positions(frame, ["q"], "s", "d", "p").sort("p").collect()["d"].to_list()
    [9, 10]
    """
    v = pl.col(value)
    low, high = pl.col(_LOW), pl.col(_HIGH)
    windowed = frame.with_columns(
        v.rank("min", descending=True).over(keys).cast(pl.Int64).alias(_LOW),
        v.rank("max", descending=True).over(keys).cast(pl.Int64).alias(_HIGH),
    ).cache()  # read twice below: computed once
    tie = (low != high).fill_null(False)
    untied = windowed.filter(~tie).with_columns(low.alias(out))
    tied = windowed.filter(tie).with_columns(
        (
            low
            + pl.col(doc).cast(pl.String).rank("ordinal", descending=True).over([*keys, value])
            - 1
        )
        .cast(pl.Int64)
        .alias(out)
    )
    return pl.concat([untied, tied], how="vertical").drop(_LOW, _HIGH)


def _both_orders(schema: pl.Schema, order: str, options: FusionOptions) -> bool:
    """Whether a run ordered by its score column has a numeric rank column too (another
    column: ``score='rank'`` fuses the rank column as the scores)."""
    rank = options.rank
    return (
        order == options.score and rank != order and rank in schema and schema[rank].is_numeric()
    )


def _misordered(options: FusionOptions, by: list[str]) -> pl.Expr:
    """:data:`MISORDERED`: whether the window's documents ranked by the rank column come
    in another order than fusion places them, by score (ties by document id,
    descending compared as text): the rank column orders a document above one that
    scores higher, or breaks a tie of scores otherwise. Ties of ranks fall back on the
    same rule (a repeated rank is no disagreement)."""
    score = pl.col(options.score).cast(pl.Float64)
    rank = pl.col(options.rank).cast(pl.Float64)
    text = pl.col(options.doc_id).cast(pl.String)
    placed = text.sort_by([score, text], descending=[True, True])
    ranked = text.sort_by([rank, score, text], descending=[False, True, True])
    return (ranked != placed).any().over(by).fill_null(False).alias(MISORDERED)


def said_flags(gathered: Gathered, options: FusionOptions) -> list[pl.Expr]:
    """The long frame's warning flags (:func:`tied_ranks`, and :data:`MISORDERED` where
    :func:`gather` added it), each read as ``any`` per (query, document) by the fusion's
    group-by and warned of by :func:`checked`."""
    schema = gathered.frame.collect_schema()
    return [
        *tied_ranks(gathered, options),
        *([pl.col(MISORDERED)] if MISORDERED in schema else []),
    ]


def tied_ranks(gathered: Gathered, options: FusionOptions) -> list[pl.Expr]:
    """The long frame's :data:`TIED` column (a window over the run, the query and the
    order value): whether a run ordered by its ``rank`` column (it has no score column)
    gives the row's rank to another document of the query too; ``[]`` where every run
    is ordered by its scores. :func:`checked` warns where one is (:func:`_warn_tied`):
    such documents are placed by the tie rule (:func:`positions`), an order the run did
    not give, where :func:`~polars_irmetrics.evaluate` refuses such ranks."""
    ranked = [i for i, c in enumerate(gathered.order_columns) if c != options.score]
    if not ranked:
        return []
    q = options.query_id
    given = pl.col(RUN).is_in(ranked) & pl.col(RAW).is_not_null()
    return [(given & (pl.len().over(RUN, q, RAW) > 1)).alias(TIED)]


def warn_said(gathered: Gathered, options: FusionOptions) -> None:
    """Eagerly, the warnings of :func:`said_flags`: a run that gives one rank to several
    documents of a query, a rank column beside the scores that orders otherwise
    (:func:`~polars_irmetrics.fit_fusion`, which fits its tables on the positions);
    nothing otherwise."""
    said = said_flags(gathered, options)
    if not said:
        return
    found = gathered.frame.select(flag.any() for flag in said).collect()
    for name in found.columns:
        if found[name].item():
            _SAYS[name](gathered, options)


def _warn_tied(gathered: Gathered, options: FusionOptions) -> None:
    """The warning of :func:`tied_ranks`: per run (three named), how many queries give a
    rank to several documents, the first of them (its rank and documents, in the order
    assumed), and the fix. Eager: read on the warning's path only."""
    q, d = options.query_id, options.doc_id
    ranked = [i for i, c in enumerate(gathered.order_columns) if c != options.score]
    text = pl.col(d).cast(pl.String)
    ties = (
        gathered.frame.filter(pl.col(RUN).is_in(ranked))
        .group_by(RUN, q, RAW)
        .agg(pl.len().alias("n"), text.sort(descending=True).head(3).alias("docs"))
        .filter(pl.col("n") > 1)
    )
    firsts, counts = pl.collect_all(
        [
            ties.sort(RUN, q, pl.col(RAW), descending=[False, False, True])
            .group_by(RUN, maintain_order=True)
            .first(),
            ties.group_by(RUN).agg(pl.col(q).n_unique().alias("queries")),
        ]
    )
    queries = dict(counts.iter_rows())
    clauses = []
    for row in firsts.iter_rows(named=True):
        rank = -row[RAW]
        shown = int(rank) if float(rank).is_integer() else rank
        docs = ", ".join(repr(x) for x in row["docs"]) + (", ..." if row["n"] > 3 else "")
        many = queries[row[RUN]]
        clauses.append(
            f"run {gathered.names[row[RUN]]!r} gives one rank to several documents in "
            f"{many} quer{'y' if many == 1 else 'ies'} (query {row[q]!r}: rank {shown} to "
            f"{row['n']} documents, placed {docs})"
        )
    if len(clauses) > 3:
        clauses = [*clauses[:3], f"and {len(clauses) - 3} more runs"]
    rank = options.rank
    warn_from_plan(
        f"{'; '.join(clauses)}: fusion reads each run's order, and placed the documents "
        "of one rank by document id, descending compared as text (as tied scores are, "
        "trec_eval's rule), an order the run did not give, on which the fused scores "
        "depend (irm.evaluate refuses such ranks). Give each document of a query its own "
        f"rank, e.g. pl.col({rank!r}).rank('ordinal').over({q!r}) on rows sorted in the "
        "order you mean, or give the runs a score column.",
        IrmWarning,
    )


def _warn_misordered(gathered: Gathered, options: FusionOptions) -> None:
    """The warning of :data:`MISORDERED`: the runs (three named) whose rank column
    orders some query otherwise than their scores, how many queries, the first.
    Eager: read on the warning's path only."""
    q = options.query_id
    rows = gathered.frame.filter(pl.col(MISORDERED)).select(RUN, q).unique()
    firsts, counts = pl.collect_all(
        [
            rows.sort(RUN, q).group_by(RUN, maintain_order=True).first(),
            rows.group_by(RUN).agg(pl.len().alias("queries")),
        ]
    )
    queries = dict(counts.iter_rows())
    named = [
        f"run {gathered.names[run]!r} in {_quantity(queries[run], 'query', 'queries')} "
        f"(first: {query!r})"
        for run, query in firsts.iter_rows()
    ]
    if len(named) > 3:
        named = [*named[:3], f"and {len(named) - 3} more runs"]
    score, rank = options.score, options.rank
    warn_from_plan(
        f"the {rank!r} column orders some queries otherwise than the {score!r} column "
        f"({'; '.join(named)}): fusion orders a run by its {score!r} column, as ranx "
        "does (ties by document id, descending compared as text), and ignored its ranks, "
        f"where irm.evaluate reads the ranks (and refuses a run whose ranks contradict "
        f"its scores). Drop the {rank!r} column to fuse the scores without this warning, "
        f"or the {score!r} column to fuse the ranks.",
        IrmWarning,
    )


def _quantity(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


#: The warning of each flag of :func:`said_flags`.
_SAYS: dict[str, Callable[[Gathered, FusionOptions], None]] = {
    TIED: _warn_tied,
    MISORDERED: _warn_misordered,
}


def expand(frame: pl.LazyFrame, q: str, d: str) -> pl.LazyFrame:
    """A row for every (run, candidate) of the runs that have the query.

    Adds ``CANDIDATES`` (the query's candidates: documents retrieved by any run),
    ``LEN`` (the run's list length) and ``PRESENT`` (whether the run retrieved it);
    the run's other columns are null on the added rows. A run without the query adds
    no rows for it.
    """
    candidates = (
        frame.select(q, d).unique().with_columns(pl.len().over(q).cast(pl.Int64).alias(CANDIDATES))
    )
    lists = frame.group_by(RUN, q).agg(pl.len().cast(pl.Int64).alias(LEN))
    present = frame.drop(LEN, strict=False).with_columns(pl.lit(True).alias(PRESENT))
    return (
        lists.join(candidates, on=q)
        .join(present, on=[RUN, q, d], how="left", nulls_equal=True)
        .with_columns(pl.col(PRESENT).fill_null(False))
    )


def flags(present: pl.Expr | None = None) -> list[pl.Expr]:
    """The data checks of one (query, document) group, as two booleans.

    ``BAD``: a retrieved row whose order value is NaN, infinite or null (nulls were
    filled with NaN when gathered); ``DUP``: a run listing the document twice.
    """
    bad = ~pl.col(RAW).is_finite()
    if present is not None:
        bad = bad & present
    bit = pl.lit(2, pl.Int64).pow(pl.col(RUN))
    return [
        bad.any().fill_null(False).alias(BAD),
        (bit.sum() != bit.bitwise_or()).alias(DUP),
    ]


def flags_for(names: Sequence[str], present: pl.Expr | None = None) -> list[pl.Expr]:
    """:func:`flags`, with a distinct count for more runs than an Int64 has bits."""
    if len(names) <= _MAX_BITS:
        return flags(present)
    rows = pl.len() if present is None else present.sum()
    rows_of_runs = pl.col(RUN) if present is None else pl.col(RUN).filter(present)
    return [flags(present)[0], (rows != rows_of_runs.n_unique()).alias(DUP)]


def checked(
    fused: pl.LazyFrame,
    gathered: Gathered,
    options: FusionOptions,
    schema: pl.Schema,
    counts: Counts | None = None,
    *,
    score: str | None = None,
) -> pl.LazyFrame:
    """``fused`` with its check flags read: the first problem raised, else the flags
    dropped. With ``counts``, ``fused`` also holds count rows (a non-null
    ``counts.kind`` column): they are taken out before the checks and handed to
    ``counts.read`` after them (a problem is raised first). With ``score``, the fused
    score column: a fused score beyond float64's range (finite runs' scores whose sum
    overflows) is refused (:func:`_overflow`), where it was ranked as infinite, tied
    with every other such document."""
    q, d = options.query_id, options.doc_id

    def check(frame: pl.DataFrame) -> pl.DataFrame:
        rows = None
        if counts is not None:
            marked = frame.get_column(counts.kind).is_not_null()
            rows = frame.filter(marked).select(counts.columns)
            frame = frame.filter(~marked).drop(counts.columns)
        problem = (
            frame[q].null_count() or frame[d].null_count() or frame[BAD].any() or frame[DUP].any()
        )
        if problem:
            check_rows(gathered, options)
            # no run's row is at fault: a (run, index) twice in a fitted table (refused by
            # fitted.check_fitted) would duplicate the rows it is joined to
            raise DuplicateError(
                "the fused run holds a (query, document) twice though no run lists one "
                "twice: pass fitted= the table fit_fusion returned, one row per (run, index)"
            )
        if score is not None:
            _overflow(frame, score, options)
        for flag, say in _SAYS.items():
            if flag in frame.columns:
                if frame[flag].any():
                    say(gathered, options)
                frame = frame.drop(flag)
        if counts is not None and rows is not None:
            counts.read(rows)
        return frame.drop(BAD, DUP)

    return fused.map_batches(check, schema=schema)


def _overflow(frame: pl.DataFrame, score: str, options: FusionOptions) -> None:
    """Refuse the first (by query and document) fused score that is not finite: every
    run's score is finite (checked before), so the method's sum or product overflowed."""
    q, d = options.query_id, options.doc_id
    over = frame.filter(~pl.col(score).is_finite()).sort(q, d, nulls_last=True).head(1)
    if not over.height:
        return
    row = over.row(0, named=True)
    raise overflow_error(row[q], row[d], row[score], options)


def overflow_error(
    query: object, doc: object, value: float, options: FusionOptions, at: str = ""
) -> InvalidValueError:
    """The refusal of a fused score that is not finite though every run's is (the
    method's sum or product overflowed), for ``fuse`` and ``optimize_fusion``'s grid
    (``at``: the grid point, as ``" at weights [1.0, 0.0]"``)."""
    return InvalidValueError(
        f"the fused score of query {query!r}, document {doc!r} is {value} in "
        f"{options.method!r}{at}: the runs' scores are finite, but their combination is "
        "beyond float64's range (about 1.8e308), so such documents would tie; divide "
        f"the scores by a large number first, e.g. pl.col({options.score!r}) / 1e300, or "
        "pass norm='max'"
    )


def _too_wide(
    column: str, run: str, query: object, doc: object, q: str, decimal: bool
) -> InvalidValueError:
    """The error of an integer order value beyond 2**53, or of a decimal one Float64
    rounds (see :func:`_raw`)."""
    if decimal:
        return InvalidValueError(
            f"column {column!r} of run {run!r} holds a decimal that Float64 rounds (query "
            f"{query!r}, document {doc!r}): fusion computes in Float64, where such values "
            "may tie with their neighbours; give the run an order that is exact there, e.g. "
            f"pl.col({column!r}).rank('dense').over({q!r})"
        )
    return InvalidValueError(
        f"column {column!r} of run {run!r} holds an integer beyond 2**53 (query {query!r}, "
        f"document {doc!r}): fusion computes in Float64, where such integers tie with "
        "their neighbours (timestamps in nanoseconds); give the run an order that is "
        f"exact there, e.g. pl.col({column!r}).rank('dense').over({q!r})"
    )


def check_rows(gathered: Gathered, options: FusionOptions) -> None:
    """Raise the runs' first problem: a null id, an order value that is NaN, infinite,
    null or an integer beyond 2**53, or a document listed twice in one query; return
    where there is none. Eager (three small queries): :func:`checked` calls it once its
    flags fired, :func:`~polars_irmetrics.fit_fusion` before fitting."""
    q, d = options.query_id, options.doc_id
    long = gathered.frame
    nulls = long.filter(pl.col(q).is_null() | pl.col(d).is_null()).sort(RUN).head(1).collect()
    if nulls.height:
        row = nulls.row(0, named=True)
        column = q if row[q] is None else d
        name = gathered.names[row[RUN]]
        raise InvalidValueError(
            f"column {column!r} of run {name!r} has null values; every row needs a "
            f"{column}: drop them, e.g. .drop_nulls({column!r})"
        )
    bad = long.filter(~pl.col(RAW).is_finite()).sort(RUN, q, d, nulls_last=True).head(1).collect()
    if bad.height:
        row = bad.row(0, named=True)
        name = gathered.names[row[RUN]]
        column = gathered.order_columns[row[RUN]]
        if row[RAW] == math.inf and gathered.wide and gathered.wide[row[RUN]]:
            decimal = isinstance(gathered.order_dtypes[row[RUN]], pl.Decimal)
            raise _too_wide(column, name, row[q], row[d], q, decimal)
        raise InvalidValueError(
            f"column {column!r} of run {name!r} has a NaN, infinite or null value (query "
            f"{row[q]!r}, document {row[d]!r}); fusion needs a finite value on every row: "
            f"fix or drop such rows, e.g. .filter(pl.col({column!r}).is_finite())"
        )
    dup = (
        long.group_by(RUN, q, d)
        .agg(pl.len().alias("n"))
        .filter(pl.col("n") > 1)
        .sort(RUN, q, d)
        .head(1)
        .collect()
    )
    if not dup.height:
        return
    row = dup.row(0, named=True)
    name = gathered.names[row[RUN]]
    raise DuplicateError(
        f"run {name!r} lists document {row[d]!r} {row['n']} times in query {row[q]!r}; a "
        f"run may list a document once per query: keep one row per document, e.g. "
        f".unique([{q!r}, {d!r}])"
    )
