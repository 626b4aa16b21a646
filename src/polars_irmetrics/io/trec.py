"""Read and write TREC run and qrels text files.

A *run* file has one retrieved document per line::

    query_id Q0 doc_id rank score run_id

and a *qrels* (relevance judgments) file one judged document per line::

    query_id iteration doc_id relevance

Fields are separated by any run of ASCII whitespace (spaces, tabs); leading and
trailing whitespace, blank lines and lines whose first non-blank character is ``#``
are ignored. Files compressed with gzip, zstd, bzip2 or xz are read transparently
(whatever their name), ``-`` reads standard input, and a leading UTF-8 byte-order mark
is stripped. A binary file, or a path that does not exist, raises
:class:`~polars_irmetrics.errors.FileFormatError` or
:class:`~polars_irmetrics.errors.MissingFileError` naming it.
Query and document ids are always kept as strings: ``007`` stays ``"007"``.

Parsing is vectorised in polars (the file is read as one string column and split with
string expressions), so a file of tens of millions of lines is read in seconds. A
malformed line raises :class:`~polars_irmetrics.errors.TrecFormatError` naming the
file, the 1-based line number and the line itself.
"""

from __future__ import annotations

import math
import os
import re
import warnings
from collections.abc import Callable, Mapping
from functools import partial
from typing import IO, Any, TypeAlias

import polars as pl

from polars_irmetrics.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    InvalidValueError,
    TrecFormatError,
)
from polars_irmetrics.ground.validate import FLOAT64_EXACT
from polars_irmetrics.io.output import write_atomic
from polars_irmetrics.io.sources import display_name, excerpt, open_text, undecodable_error
from polars_irmetrics.io.text import atol

__all__ = [
    "read_trec_qrels",
    "read_trec_run",
    "scan_trec_qrels",
    "scan_trec_run",
    "write_trec_run",
]

Source: TypeAlias = "str | os.PathLike[str]"
DTypeArg: TypeAlias = "pl.DataType | type[pl.DataType]"

# trec_eval splits lines on ASCII whitespace (C ``isspace``); so do we. Other Unicode
# spaces (no-break space, ...) are part of an id.
_OTHER_SPACE = r"[\t\r\n\x0b\x0c]"
_WHITESPACE = re.compile(r"[ \t\r\n\x0b\x0c]+")

_RUN_FIELDS = "query_id Q0 doc_id rank score run_id"
_QRELS_FIELDS = "query_id iteration doc_id relevance"
_TEXT = f"a TREC run ({_RUN_FIELDS}) or qrels ({_QRELS_FIELDS}) text file"

# Internal columns; the leading underscore keeps them apart from the output columns.
_LN = "_ln"  # 1-based line number
_LINE = "_line"  # the line as read (line ending removed); only read again for errors
_NORM = "_norm"  # the line with whitespace normalised to single spaces
_FIELDS = "_fields"  # the normalised line split on spaces
_N = "_n"  # the number of fields
_BAD = "_bad"  # whether the line is malformed
_REL_FLOAT = "_rel_float"  # qrels relevance as Float64 (null: not a number)
_REL_INT = "_rel_int"  # qrels relevance as Int64 (null: not a whole number)
_INTERNAL = (_LN, _N, _BAD, _REL_FLOAT, _REL_INT)

_INT64_LIMIT = 2.0**63

_RUN_SCHEMA: dict[str, pl.DataType] = {
    "query_id": pl.String(),
    "doc_id": pl.String(),
    "rank": pl.Int64(),
    "score": pl.Float64(),
    "run_id": pl.String(),
}


# --------------------------------------------------------------------------- reading


def read_trec_run(source: Source, *, keep_rank: bool = False) -> pl.DataFrame:
    """Read a TREC run file into a long table, one row per retrieved document.

    Each line is ``query_id Q0 doc_id rank score run_id``. The ``Q0`` field is ignored.
    Rows keep the file's order. Blank lines and lines starting with ``#`` (comments) are
    skipped; trec_eval has no comments (it would read ``#q1`` as a query id), so the
    writers of this library refuse a query id starting with ``#``.

    .. note::
        trec_eval ignores the file's rank column: it orders each query's documents by
        ``score`` descending, ties broken by ``doc_id`` descending (compared as text).
        The evaluator of this library does the same with the ``score`` column, so
        ``rank`` is only read (and checked) with ``keep_rank=True``.

    Parameters
    ----------
    source
        Path of the run file (``str`` or path-like); a gzip-compressed file is read
        transparently.
    keep_rank
        Also return the file's own rank column as ``rank`` (Int64). A rank that is not
        a whole number (``3`` and ``3.0`` are) is then a format error; without
        ``keep_rank`` the rank field is not checked, like trec_eval.

    Returns
    -------
    polars.DataFrame
        Columns ``query_id`` (String), ``doc_id`` (String), ``rank`` (Int64, only with
        ``keep_rank=True``), ``score`` (Float64) and ``run_id`` (String). An empty file
        gives an empty frame with this schema.

    Raises
    ------
    TrecFormatError
        A line has fewer than 6 fields (fields after the run tag are ignored, as
        trec_eval ignores them), or its score is not a number (``nan``
        included; ``inf`` and ``-inf`` are accepted), or (with ``keep_rank=True``) its
        rank is not an integer. The message names the file, the 1-based line number
        and shows the line.
    MissingFileError
        The file does not exist (a ``FileNotFoundError`` too).
    FileFormatError
        The file holds binary data, not UTF-8 text.

    See Also
    --------
    scan_trec_run : The same as a LazyFrame.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "bm25.txt"
    ...     _ = path.write_text(
    ...         "# a comment\\n"
    ...         "q1 Q0 007 1 12.5 bm25\\n"
    ...         "q1\\tQ0\\td2   2 11.0 bm25\\n"
    ...     )
    ...     run = read_trec_run(path, keep_rank=True)
    >>> run
    shape: (2, 5)
    ┌──────────┬────────┬──────┬───────┬────────┐
    │ query_id ┆ doc_id ┆ rank ┆ score ┆ run_id │
    │ ---      ┆ ---    ┆ ---  ┆ ---   ┆ ---    │
    │ str      ┆ str    ┆ i64  ┆ f64   ┆ str    │
    ╞══════════╪════════╪══════╪═══════╪════════╡
    │ q1       ┆ 007    ┆ 1    ┆ 12.5  ┆ bm25   │
    │ q1       ┆ d2     ┆ 2    ┆ 11.0  ┆ bm25   │
    └──────────┴────────┴──────┴───────┴────────┘
    """
    path = _path(source)
    return _collect(_parse_run(path, keep_rank=keep_rank), path, _run_problem(keep_rank))


def scan_trec_run(source: Source, *, keep_rank: bool = False) -> pl.LazyFrame:
    """Lazily read a TREC run file; see :func:`read_trec_run`.

    The file is read, and checked, when the frame is collected; a malformed line then
    raises :class:`~polars_irmetrics.errors.TrecFormatError` from ``collect()``.

    Parameters
    ----------
    source
        Path of the run file (``str`` or path-like); gzip is read transparently.
    keep_rank
        Also return the file's rank column as ``rank`` (Int64).

    Returns
    -------
    polars.LazyFrame
        The schema of :func:`read_trec_run`.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "run.txt"
    ...     _ = path.write_text("q1 Q0 d1 1 2.5 bm25\\nq2 Q0 d9 1 0.5 bm25\\n")
    ...     lazy = scan_trec_run(path)
    ...     lazy.filter(pl.col("query_id") == "q2").collect()
    shape: (1, 4)
    ┌──────────┬────────┬───────┬────────┐
    │ query_id ┆ doc_id ┆ score ┆ run_id │
    │ ---      ┆ ---    ┆ ---   ┆ ---    │
    │ str      ┆ str    ┆ f64   ┆ str    │
    ╞══════════╪════════╪═══════╪════════╡
    │ q2       ┆ d9     ┆ 0.5   ┆ bm25   │
    └──────────┴────────┴───────┴────────┘
    """
    path = _path(source)
    lazy = _parse_run(path, keep_rank=keep_rank)
    schema = {name: _RUN_SCHEMA[name] for name in _run_columns(keep_rank)}
    check = partial(_checked, path=path, describe=_run_problem(keep_rank))
    return lazy.map_batches(check, schema=schema)


def read_trec_qrels(source: Source, *, relevance_dtype: DTypeArg | None = None) -> pl.DataFrame:
    """Read a TREC qrels (relevance judgments) file, one row per judged document.

    Each line is ``query_id iteration doc_id relevance``; the iteration field is
    ignored. Rows keep the file's order. Relevance values are kept as they are,
    negative ones included.

    .. note::
        trec_eval reads relevance with C's ``atol``, the sign and leading digits only:
        ``0.5`` becomes ``0`` and ``1e1`` becomes ``1``. This reader keeps the number
        (0.5, and 10): a file with any fractional relevance gives a Float64 column.
        :func:`read_trec_eval_qrels` (which ``irm trec-eval`` uses) reads it as
        trec_eval does.

    Parameters
    ----------
    source
        Path of the qrels file (``str`` or path-like); gzip is read transparently.
    relevance_dtype
        ``None`` (the default) infers the dtype: Int64 when every relevance in the file
        is a whole number (``1``, ``-2``, ``3.0``; an empty file included), otherwise
        Float64. ``pl.Int64`` makes a fractional relevance a format error;
        ``pl.Float64`` always gives Float64.

    Returns
    -------
    polars.DataFrame
        Columns ``query_id`` (String), ``doc_id`` (String) and ``relevance`` (Int64 or
        Float64, see ``relevance_dtype``).

    Raises
    ------
    TrecFormatError
        A line does not have exactly 4 fields, or its relevance is not a finite number
        (or, with ``relevance_dtype=pl.Int64``, not a whole number). The message names
        the file, the 1-based line number and shows the line.
    ColumnTypeError
        ``relevance_dtype`` is not ``None``, ``pl.Int64`` or ``pl.Float64``.
    MissingFileError
        The file does not exist (a ``FileNotFoundError`` too).
    FileFormatError
        The file holds binary data, not UTF-8 text.

    See Also
    --------
    scan_trec_qrels : The same as a LazyFrame (Float64 relevance by default).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "qrels.txt"
    ...     _ = path.write_text("q1 0 d1 2\\nq1 0 d2 0\\nq2 0 007 -1\\n")
    ...     qrels = read_trec_qrels(path)
    ...     _ = path.write_text("q1 0 d1 0.5\\n")
    ...     graded = read_trec_qrels(path)
    >>> qrels
    shape: (3, 3)
    ┌──────────┬────────┬───────────┐
    │ query_id ┆ doc_id ┆ relevance │
    │ ---      ┆ ---    ┆ ---       │
    │ str      ┆ str    ┆ i64       │
    ╞══════════╪════════╪═══════════╡
    │ q1       ┆ d1     ┆ 2         │
    │ q1       ┆ d2     ┆ 0         │
    │ q2       ┆ 007    ┆ -1        │
    └──────────┴────────┴───────────┘
    >>> graded["relevance"].dtype
    Float64
    """
    path = _path(source)
    if relevance_dtype is not None:
        dtype = _relevance_dtype(relevance_dtype)
        return _collect(_parse_qrels(path, dtype), path, _qrels_problem)
    # Parse both ways in one pass, then keep Int64 if every value is a whole number.
    frame = _collect(_parse_qrels(path, None), path, _qrels_problem, keep_all=True)
    as_int = frame[_REL_INT]
    relevance = as_int if as_int.null_count() == 0 else frame[_REL_FLOAT]
    return frame.select("query_id", "doc_id", relevance.alias("relevance"))


def scan_trec_qrels(source: Source, *, relevance_dtype: DTypeArg = pl.Float64) -> pl.LazyFrame:
    """Lazily read a TREC qrels file; see :func:`read_trec_qrels`.

    A LazyFrame's schema must be known before the file is read, so the relevance dtype
    is not inferred: it is Float64 unless ``relevance_dtype=pl.Int64`` is passed (then a
    fractional relevance is a format error). The file is read, and checked, when the
    frame is collected; a malformed line then raises
    :class:`~polars_irmetrics.errors.TrecFormatError` from ``collect()``.

    Parameters
    ----------
    source
        Path of the qrels file (``str`` or path-like); gzip is read transparently.
    relevance_dtype
        ``pl.Float64`` (the default) or ``pl.Int64``.

    Returns
    -------
    polars.LazyFrame
        Columns ``query_id`` (String), ``doc_id`` (String), ``relevance``
        (``relevance_dtype``).

    Raises
    ------
    ColumnTypeError
        ``relevance_dtype`` is not ``pl.Int64`` or ``pl.Float64``.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "qrels.txt"
    ...     _ = path.write_text("q1 0 d1 2\\nq1 0 d2 1\\n")
    ...     floats = scan_trec_qrels(path).collect()
    ...     ints = scan_trec_qrels(path, relevance_dtype=pl.Int64).collect()
    >>> floats["relevance"].to_list(), ints["relevance"].to_list()
    ([2.0, 1.0], [2, 1])
    """
    path = _path(source)
    dtype = _relevance_dtype(relevance_dtype)
    check = partial(_checked, path=path, describe=_qrels_problem)
    schema = {"query_id": pl.String(), "doc_id": pl.String(), "relevance": dtype}
    return _parse_qrels(path, dtype).map_batches(check, schema=schema)


def _path(source: Source) -> str:
    if not isinstance(source, str | bytes | os.PathLike):  # 5, None: os.fspath's TypeError
        raise ColumnTypeError(
            f"source must be a file path (str or os.PathLike[str]), got {source!r}; pass "
            "the file's path, e.g. 'run.txt' or pathlib.Path('run.txt')"
        )
    path = os.fspath(source)
    if not isinstance(path, str):  # a bytes path-like slipped through the types
        raise ColumnTypeError(
            f"source must be a file path (str or os.PathLike[str]), got {source!r}; "
            "pass it as text, e.g. os.fsdecode(path)"
        )
    return path


def _scan_lines(path: str) -> pl.LazyFrame:
    """Every line of the file (blank ones included) with its 1-based number.

    The file may be compressed (gzip, zstd, bzip2, xz) or ``-`` (standard input); a
    leading UTF-8 byte-order mark is stripped (:mod:`polars_irmetrics.io.sources`).
    """
    text = open_text(path, _TEXT, TrecFormatError)
    # Marked unstable in polars; we pin its behaviour with our own tests.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pl.exceptions.UnstableWarning)
        lines = pl.scan_lines(
            text.data, name=_LINE, row_index_name=_LN, row_index_offset=1, glob=False
        )
    if text.bom:  # known from the first bytes: clean files pay nothing
        line = pl.col(_LINE)
        first = pl.when(pl.col(_LN) == 1).then(line.str.strip_prefix("\ufeff")).otherwise(line)
        lines = lines.with_columns(first.alias(_LINE))
    return lines


def _fields(path: str) -> pl.LazyFrame:
    """The non-blank, non-comment lines, split into their whitespace-separated fields.

    Whitespace is normalised with cheap literal-ish passes (other whitespace to spaces,
    runs of spaces to one, strip) and then split on a single space: about twice as
    fast as a regex tokenizer on large files.
    """
    norm = (
        pl.col(_LINE)
        .str.replace_all(_OTHER_SPACE, " ")
        .str.replace_all("  +", " ")
        .str.strip_chars(" ")
    )
    return (
        _scan_lines(path)
        .with_columns(norm.alias(_NORM))
        .filter((pl.col(_NORM) != "") & ~pl.col(_NORM).str.starts_with("#"))
        .select(_LN, pl.col(_NORM).str.split(" ").alias(_FIELDS))
    )


def repeated_pair(source: Source, query: str | None = None) -> tuple[int, int, str] | None:
    """The first line of a TREC run or qrels file whose query and document (fields 1
    and 3 of both) an earlier line holds too, of query ``query`` where one is given:
    ``(line, earlier line, doc_id)``, lines counted from 1 as the file's (blank and
    comment lines too); None where no pair repeats. For messages only, on an error
    path (a duplicate the checks refused, which name neither the file nor the line).

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "qrels.txt"
    ...     _ = path.write_text("q1 0 d1 1\\n# note\\nq2 0 d2 0\\nq1 0 d1 2\\nq2 0 d2 1\\n")
    ...     repeated_pair(path), repeated_pair(path, "q2")
    ((4, 1, 'd1'), (5, 3, 'd2'))
    """
    lines = _fields(_path(source)).select(_LN, _field(0).alias("q"), _field(2).alias("d"))
    return first_repeat(lines, query)


def first_repeat(rows: pl.LazyFrame, query: str | None = None) -> tuple[int, int, str] | None:
    """The first row of ``rows`` (its columns: an increasing position, then ``q`` and
    ``d``, the query and document as text) whose (query, document) an earlier row holds
    too, of query ``query`` where one is given: ``(position, earlier position, d)``;
    None where no pair repeats (:func:`repeated_pair`'s, and a table file's). An error
    path only.

    >>> rows = pl.LazyFrame({"n": [0, 1, 2], "q": ["q1", "q1", "q1"], "d": ["a", "b", "a"]})
    >>> first_repeat(rows), first_repeat(rows, "q2")
    ((2, 0, 'a'), None)
    """
    position = rows.collect_schema().names()[0]
    if query is not None:
        rows = rows.filter(pl.col("q") == query)
    first = pl.col(position).min().over("q", "d").alias("first")
    found = (
        (rows.with_columns(first).filter(pl.col(position) > pl.col("first")).sort(position))
        .head(1)
        .collect()
    )
    if not found.height:
        return None
    at, _, doc, earlier = found.row(0)
    return int(at), int(earlier), str(doc)


def _field(index: int) -> pl.Expr:
    return pl.col(_FIELDS).list.get(index, null_on_oob=True)


def _whole(as_float: pl.Expr, token: pl.Expr) -> pl.Expr:
    """``token`` as Int64 when it is a whole number (``3``, ``-2``, ``3.0``), else null."""
    from_float = pl.when((as_float == as_float.floor()) & (as_float.abs() < _INT64_LIMIT)).then(
        as_float.cast(pl.Int64, strict=False)
    )
    # Integer text first: exact beyond 2**53, where the float would round.
    return pl.coalesce(token.cast(pl.Int64, strict=False), from_float)


def _run_columns(keep_rank: bool) -> list[str]:
    return [name for name in _RUN_SCHEMA if keep_rank or name != "rank"]


#: A C99 hexadecimal floating constant, as ``strtod`` (trec_eval's ``atof``) reads it:
#: sign, ``0x``, hex digits with an optional point, an optional binary exponent.
_HEX_FLOAT = r"^([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?(?:[pP]([+-]?[0-9]+))?$"


def _hex_float(token: pl.Expr) -> pl.Expr:
    """``token`` as the Float64 of a hexadecimal floating constant (``0x1p3`` = 8.0,
    ``-0x1.8p1`` = -3.0), as trec_eval reads a score with ``atof``; null for other text
    (or one of more than 15 significant hex digits). The digits are one integer, times
    a power of two: exact where the digits fit 53 bits (``%a`` writes 14 at most).

    >>> t = pl.DataFrame({"t": ["0x1p3", "-0x1.8p1", "0X.8", "0x10", "0x", "1.5", "0x1p-3"]})
    >>> t.select(_hex_float(pl.col("t"))).to_series().to_list()
    [8.0, -3.0, 0.5, 16.0, None, None, 0.125]
    """
    parts = token.str.extract_groups(_HEX_FLOAT)
    whole, fraction = parts.struct[1], parts.struct[2].fill_null("").str.strip_chars_end("0")
    digits = pl.concat_str(whole, fraction).str.strip_chars_start("0")
    mantissa = (
        pl.when(digits == "")
        .then(pl.lit(0, pl.Int64))
        .otherwise(digits.str.to_integer(base=16, strict=False))
    )
    power = (
        parts.struct[3].fill_null("0").cast(pl.Int64, strict=False) - 4 * fraction.str.len_chars()
    )
    # in two halves, so that neither factor leaves float64's range before the product
    half = power // 2
    value = mantissa.cast(pl.Float64) * pl.lit(2.0).pow(half) * pl.lit(2.0).pow(power - half)
    value = pl.when(parts.struct[0] == "-").then(-value).otherwise(value)
    # at least one hex digit, before or after the point
    return pl.when(pl.concat_str(whole, parts.struct[2].fill_null("")) != "").then(value)


def _parse_run(path: str, *, keep_rank: bool) -> pl.LazyFrame:
    if not isinstance(keep_rank, bool):  # "yes" was taken as True
        raise InvalidValueError(f"keep_rank must be True or False, got {keep_rank!r}")
    # decimal text, or a hexadecimal constant (0x1p3), which trec_eval's atof reads too
    token = _field(4)
    score = pl.coalesce(token.cast(pl.Float64, strict=False), _hex_float(token)).alias("score")
    columns = [_field(0).alias("query_id"), _field(2).alias("doc_id")]
    if keep_rank:
        columns.append(_whole(_field(3).cast(pl.Float64, strict=False), _field(3)).alias("rank"))
    columns += [score, _field(5).alias("run_id")]
    n = pl.col(_FIELDS).list.len()
    lazy = _fields(path).select(_LN, n.alias(_N), *columns)
    bad = (pl.col(_N) < 6) | pl.col("score").is_null() | pl.col("score").is_nan()
    if keep_rank:
        bad = bad | pl.col("rank").is_null()
    return lazy.with_columns(bad.alias(_BAD))


def read_trec_eval_qrels(source: Source) -> pl.DataFrame:
    """Read a TREC qrels file as trec_eval reads it: each label with C's ``atol``.

    trec_eval (``get_qrels.c``) reads a label as an optional sign and its leading
    digits: ``1.9`` is 1, ``1e1`` is 1 (not 10), ``.5e1`` is 0. A label must still be a
    finite number (``rel`` and ``inf`` are refused, as :func:`read_trec_qrels` refuses
    them), and one whose digits are beyond the Int64 range is refused too.

    Parameters
    ----------
    source
        Path of the qrels file (``str`` or path-like).

    Returns
    -------
    polars.DataFrame
        Columns ``query_id`` (String), ``doc_id`` (String) and ``relevance`` (Int64).

    Raises
    ------
    TrecFormatError
        A line without 4 fields, a relevance that is not a finite number or whose
        digits are beyond the Int64 range; the message names the file, the 1-based line
        number and shows the line.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "qrels.txt"
    ...     _ = path.write_text("q1 0 d1 +1\\nq1 0 d2 1e-1\\nq1 0 d3 .5e1\\n")
    ...     read_trec_eval_qrels(path)["relevance"].to_list()
    [1, 1, 0]
    """
    path = _path(source)
    return _collect(_parse_qrels(path, None, atol_labels=True), path, _atol_problem)


def _parse_qrels(
    path: str, dtype: pl.DataType | None, *, atol_labels: bool = False
) -> pl.LazyFrame:
    """Parsed qrels with ``_rel_float`` and ``_rel_int`` (and ``relevance`` for a dtype,
    or read as C's ``atol`` reads it with ``atol_labels``: Int64, null out of range)."""
    token = _field(3)
    as_float = token.cast(pl.Float64, strict=False)
    columns: list[str | pl.Expr] = [
        _LN,
        pl.col(_FIELDS).list.len().alias(_N),
        _field(0).alias("query_id"),
        _field(2).alias("doc_id"),
        as_float.alias(_REL_FLOAT),
    ]
    if atol_labels:
        finite = as_float.is_finite().fill_null(False)
        lazy = _fields(path).select(*columns, pl.when(finite).then(atol(token)).alias("relevance"))
        bad = (pl.col(_N) != 4) | pl.col("relevance").is_null()
        return lazy.with_columns(bad.alias(_BAD))
    lazy = _fields(path).select(*columns, _whole(as_float, token).alias(_REL_INT))
    bad = (pl.col(_N) != 4) | ~pl.col(_REL_FLOAT).is_finite().fill_null(False)
    if dtype == pl.Int64:
        bad = bad | pl.col(_REL_INT).is_null()
    lazy = lazy.with_columns(bad.alias(_BAD))
    if dtype is None:
        return lazy
    relevance = pl.col(_REL_INT if dtype == pl.Int64 else _REL_FLOAT)
    return lazy.with_columns(relevance.alias("relevance"))


def _relevance_dtype(dtype: DTypeArg) -> pl.DataType:
    if dtype == pl.Int64:
        return pl.Int64()
    if dtype == pl.Float64:
        return pl.Float64()
    raise ColumnTypeError(f"relevance_dtype must be pl.Int64 or pl.Float64, got {dtype!r}")


Describe = Callable[[Mapping[str, Any], str], str]


def _checked(
    frame: pl.DataFrame, *, path: str, describe: Describe, keep_all: bool = False
) -> pl.DataFrame:
    """``frame`` without the internal columns, or TrecFormatError for its first bad line."""
    bad = frame.filter(pl.col(_BAD))
    if bad.height:
        row = bad.row(int(bad[_LN].arg_min() or 0), named=True)
        number = row[_LN]
        line = _line_at(path, number)
        raise TrecFormatError(f"{display_name(path)}, line {number}: {describe(row, line)}")
    if keep_all:
        return frame
    return frame.drop(_INTERNAL, strict=False)


def _line_at(path: str, number: int) -> str:
    """Line ``number`` of the file, read again: only needed for an error message."""
    found = _scan_lines(path).filter(pl.col(_LN) == number).select(_LINE).collect()
    return str(found.item()) if found.height else ""


def _collect(
    lazy: pl.LazyFrame, path: str, describe: Describe, *, keep_all: bool = False
) -> pl.DataFrame:
    try:
        frame = lazy.collect()
    except pl.exceptions.ComputeError:
        found = undecodable_error(path, _TEXT, TrecFormatError)
        if found is None:
            raise
        raise found from None
    return _checked(frame, path=path, describe=describe, keep_all=keep_all)


def _split(line: str) -> list[str]:
    return _WHITESPACE.split(line.strip(" \t\r\n\x0b\x0c"))


#: The hint of a TREC line that is a header: none is read, a comment is.
_HEADER = "; a header line? TREC files have none: delete it, or start it with '#'"
#: The words a qrels header names its relevance column by (lower case).
_RELEVANCE_WORDS = frozenset({"relevance", "rel", "label", "judgment", "grade", "qrel"})


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _run_problem(keep_rank: bool) -> Describe:
    def describe(row: Mapping[str, Any], line: str) -> str:
        fields = _split(line)
        if row[_N] < 6:
            return (
                f"expected 6 whitespace-separated fields ({_RUN_FIELDS}), got {row[_N]}: "
                f"{excerpt(line)}"
            )
        # a header (query_id Q0 doc_id rank score run_id): neither a rank nor a score
        header = _HEADER if not (_number(fields[3]) or _number(fields[4])) else ""
        if keep_rank and row["rank"] is None:
            return f"rank {excerpt(fields[3])} is not an integer: {excerpt(line)}{header}"
        return f"score {excerpt(fields[4])} is not a number: {excerpt(line)}{header}"

    return describe


def _qrels_problem(row: Mapping[str, Any], line: str) -> str:
    if row[_N] != 4:
        return (
            f"expected 4 whitespace-separated fields ({_QRELS_FIELDS}), got {row[_N]}: "
            f"{excerpt(line)}"
        )
    fields = _split(line)
    token = fields[3]
    value = row[_REL_FLOAT]
    if value is None:
        # a header (query_id iteration doc_id relevance): a word for the iteration too
        word = token.lower() in _RELEVANCE_WORDS and not _number(fields[1])
        header = _HEADER if word else ""
        return f"relevance {excerpt(token)} is not a number: {excerpt(line)}{header}"
    if not math.isfinite(value):
        return f"relevance {excerpt(token)} is not a finite number: {excerpt(line)}"
    return f"relevance {excerpt(token)} is not an integer (relevance_dtype=Int64): {excerpt(line)}"


def _atol_problem(row: Mapping[str, Any], line: str) -> str:
    """:func:`_qrels_problem`, for labels read as ``atol`` reads them: a finite number
    is refused only where its leading digits are beyond the Int64 range."""
    value = row[_REL_FLOAT]
    if row[_N] != 4 or value is None or not math.isfinite(value):
        return _qrels_problem(row, line)
    token = _split(line)[3]
    return (
        f"relevance {excerpt(token)} is out of the range of a 64-bit integer: "
        f"{excerpt(line)}; write a label within it"
    )


# --------------------------------------------------------------------------- writing


def write_trec_run(
    frame: pl.DataFrame | pl.LazyFrame,
    path: Source,
    *,
    run_id: str | None = None,
    query_id: str = "query_id",
    doc_id: str = "doc_id",
    rank: str | None = None,
    score: str | None = None,
) -> None:
    """Write a long table of retrieved documents as a TREC run file.

    Each row becomes one line ``query_id Q0 doc_id rank score run_id``. Queries are
    written in ascending order of their id (compared as text) and each query's
    documents in ranking order:

    * by the rank column when there is one: ``rank=`` names it, or a column named
      ``rank`` is used when ``score=`` is not given. Ties in rank are broken by score
      descending (when there is a score column) and then by doc id descending;
    * otherwise by the score column (``score=``, default ``score``) descending, ties
      broken by doc id descending, compared as text (trec_eval's rule).

    The written rank is 1, 2, ... within each query, in that order. The written score
    is the score column when there is one; without one it is ``-rank`` (the written
    rank, negated: ``-1``, ``-2``, ...), which decreases strictly down the ranking, so
    trec_eval, which ignores the rank field and re-sorts by score, sees the same order.

    Parameters
    ----------
    frame
        A DataFrame or LazyFrame, one row per (query, document).
    path
        The file to write (``str`` or path-like). A name ending in ``.gz``, ``.bz2`` or
        ``.xz`` is written compressed so (gzip, bzip2, xz); another compression suffix
        (``.zst``) is refused (:func:`~polars_irmetrics.io.output.write_atomic`).
    run_id
        The run tag written in the last field; non-empty, without whitespace. By
        default, the frame's ``run_id`` column when it holds one tag (as
        :func:`read_trec_run` returns it), else ``"irm"``.
    query_id, doc_id
        Names of the query and document id columns (String, Categorical, Enum or
        integer; written as text).
    rank
        Name of a numeric rank column to order by (lower is better).
    score
        Name of a numeric score column (higher is better).

    Raises
    ------
    ColumnNotFoundError
        A named column is missing, or there is neither a rank nor a score column.
    ColumnTypeError
        An id column is not text or integer, or the rank or score column not numeric.
    InvalidValueError
        A null id, rank or score; a NaN rank or score; an empty id or one containing
        whitespace; a query id starting with ``#`` (it would read back as a comment);
        or a ``run_id`` that is empty or contains whitespace; or, without ``run_id=``,
        a ``run_id`` column holding several tags (filter one run, or pass ``run_id=``).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> frame = pl.DataFrame(
    ...     {"query_id": ["q2", "q1", "q1"], "doc_id": ["d7", "d1", "d2"],
    ...      "score": [1.0, 0.5, 2.0]}
    ... )
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "run.txt"
    ...     write_trec_run(frame, path, run_id="demo")
    ...     print(path.read_text(), end="")
    q1 Q0 d2 1 2.0 demo
    q1 Q0 d1 2 0.5 demo
    q2 Q0 d7 1 1.0 demo

    Without a score column the score is ``-rank``:

    >>> ranked = pl.DataFrame({"qid": ["q1", "q1"], "doc": ["b", "a"], "rank": [2, 1]})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "run.txt"
    ...     write_trec_run(ranked, path, query_id="qid", doc_id="doc")
    ...     print(path.read_text(), end="")
    q1 Q0 a 1 -1 irm
    q1 Q0 b 2 -2 irm
    """
    columns = frame.collect_schema()
    names = columns.names()
    for role, name in (("query_id", query_id), ("doc_id", doc_id)):
        _require(names, name, role)
    if rank is not None:
        _require(names, rank, "rank")
    if score is not None:
        _require(names, score, "score")
    rank_col = (
        rank if rank is not None else ("rank" if score is None and "rank" in names else None)
    )
    score_col = score if score is not None else ("score" if "score" in names else None)
    if rank_col is None and score_col is None:
        raise ColumnNotFoundError(
            "write_trec_run needs a score or a rank column to order the documents: pass "
            f"score= or rank=, or name a column 'score' or 'rank'; the frame has columns "
            f"{names}"
        )
    tag = _frame_run_id(frame, names) if run_id is None else run_id
    _check_run_id(tag)

    selected = [_id_column(columns, query_id, "q"), _id_column(columns, doc_id, "d")]
    if rank_col is not None:
        selected.append(_number_column(columns, rank_col, "r"))
    if score_col is not None:
        selected.append(_number_column(columns, score_col, "s"))
    if score_col is not None and columns[score_col].is_decimal():
        selected.append(pl.col(score_col).alias("_exact"))
    data = frame.lazy().select(selected).collect()
    if "_exact" in data.columns:
        _check_decimal_scores(data, score_col or "score")
    _check_values(data, {"q": query_id, "d": doc_id, "r": rank_col, "s": score_col})

    keys, descending = ["q"], [False]
    if rank_col is not None:
        keys.append("r")
        descending.append(False)
    if score_col is not None:
        keys.append("s")
        descending.append(True)
    keys.append("d")
    descending.append(True)
    written_rank = pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over("q")
    out = (
        data.sort(keys, descending=descending)
        .with_columns(written_rank.alias("rank"))
        .select(
            "q",
            pl.lit("Q0").alias("Q0"),
            "d",
            "rank",
            pl.col("s") if score_col is not None else (-pl.col("rank")).alias("s"),
            pl.lit(tag).alias("run_id"),
        )
    )
    write_atomic(_path(path), partial(_write_lines, out))  # .gz, .bz2, .xz: compressed


def _write_lines(out: pl.DataFrame, target: str | IO[bytes]) -> None:
    out.write_csv(target, separator=" ", include_header=False, quote_style="never")


def _require(names: list[str], name: str, role: str) -> None:
    if name not in names:
        raise ColumnNotFoundError(
            f"{role} column {name!r} is not in the frame; the frame has columns {names}"
        )


def _id_column(schema: pl.Schema, name: str, alias: str) -> pl.Expr:
    dtype = schema[name]
    if not (
        dtype == pl.String
        or dtype == pl.Categorical
        or isinstance(dtype, pl.Enum)
        or dtype.is_integer()
    ):
        raise ColumnTypeError(
            f"id column {name!r} has dtype {dtype}; a TREC id must be text "
            "(String, Categorical, Enum) or an integer"
        )
    return pl.col(name).cast(pl.String).alias(alias)


def _number_column(schema: pl.Schema, name: str, alias: str) -> pl.Expr:
    dtype = schema[name]
    if not dtype.is_numeric():
        raise ColumnTypeError(f"column {name!r} has dtype {dtype}; it must be numeric")
    column = pl.col(name)
    if not (dtype.is_integer() or dtype.is_float()):
        column = column.cast(pl.Float64)
    return column.alias(alias)


def _frame_run_id(frame: pl.DataFrame | pl.LazyFrame, names: list[str]) -> str:
    """The one tag of the frame's ``run_id`` column; ``"irm"`` without one."""
    if "run_id" not in names:
        return "irm"
    tags = (
        frame.lazy()
        .select(pl.col("run_id").cast(pl.String).unique().sort(nulls_last=True).head(4))
        .collect()
        .get_column("run_id")
    )
    if tags.len() == 0 or tags.null_count() == tags.len():
        return "irm"
    if tags.len() == 1:
        return str(tags[0])
    shown = ", ".join(repr(tag) for tag in tags.head(3).to_list())
    more = ", ..." if tags.len() > 3 else ""
    raise InvalidValueError(
        f"column 'run_id' holds several run tags ({shown}{more}); a run file has one: "
        f"write each run to its own file (e.g. frame.filter(pl.col('run_id') == {tags[0]!r})), "
        "or pass run_id= to write them all under one tag"
    )


def _beyond_exact(score: pl.Series) -> pl.Series:
    """Whether each integer score is beyond 2**53 in magnitude (no exact Float64)."""
    if score.dtype in (pl.Int64, pl.UInt64):
        wide = score.cast(pl.Int128)
        beyond: pl.Series = (wide > FLOAT64_EXACT) | (wide < -FLOAT64_EXACT)
        return beyond
    if score.dtype == pl.UInt128:  # compared as integers: 2**53 + 1 too
        above: pl.Series = score > FLOAT64_EXACT
        return above
    if score.dtype == pl.Int128:
        far: pl.Series = (score > FLOAT64_EXACT) | (score < -FLOAT64_EXACT)
        return far
    return pl.Series([False] * score.len())  # 32 bits or fewer: always exact


def _check_decimal_scores(data: pl.DataFrame, name: str) -> None:
    """Refuse Decimal scores that a query's Float64 text would tie (over ~17 digits)."""
    exact = data.select(pl.struct("q", "_exact").n_unique()).item()
    written = data.select(pl.struct("q", "s").n_unique()).item()
    if exact != written:
        raise InvalidValueError(
            f"column {name!r} holds Decimal scores with more significant digits than a "
            "Float64 keeps (about 17): distinct scores of one query would be written, and "
            "read back, as the same number; round or rescale them, or write ranks instead "
            "(rank=, or a score of -rank)"
        )
    data.drop_in_place("_exact")


def _check_run_id(run_id: str) -> None:
    if not run_id or _WHITESPACE.search(run_id):
        raise InvalidValueError(
            f"run_id must be a non-empty string without whitespace, got {run_id!r}"
        )


def _check_values(data: pl.DataFrame, names: Mapping[str, str | None]) -> None:
    for alias, name in names.items():
        if name is None:
            continue
        nulls = data[alias].null_count()
        if nulls:
            raise InvalidValueError(
                f"column {name!r} has {nulls} null value(s); every line of a run file "
                "needs a value"
            )
    for alias in ("r", "s"):
        name = names[alias]
        if name is not None and data[alias].dtype.is_float():
            nans = int(data[alias].is_nan().sum())
            if nans:
                raise InvalidValueError(f"column {name!r} has {nans} NaN value(s)")
    score = data["s"] if names["s"] is not None else None
    if score is not None and score.dtype.is_integer():
        wide = score.filter(_beyond_exact(score))
        if wide.len():
            raise InvalidValueError(
                f"column {names['s']!r} holds {wide.len()} integer score(s) beyond 2**53, "
                f"e.g. {wide[0]}; the file's scores are read back as Float64, where such "
                "integers round and may tie: rescale the scores, or write ranks (drop the score "
                "column and pass rank=: the score written is then -rank)"
            )
    for alias in ("q", "d"):
        ids = data[alias]
        bad = ids.filter((ids == "") | ids.str.contains(r"[ \t\r\n\x0b\x0c]"))
        if bad.len():
            raise InvalidValueError(
                f"id column {names[alias]!r} has {bad.len()} empty id(s) or id(s) "
                f"containing whitespace, e.g. {bad[0]!r}; TREC files are "
                "whitespace-separated"
            )
    comments = data["q"].filter(data["q"].str.starts_with("#"))
    if comments.len():
        raise InvalidValueError(
            f"query id {comments[0]!r} (column {names['q']!r}) starts with '#'; the line "
            "would read back as a comment"
        )
