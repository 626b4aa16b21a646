"""Whitespace-separated text files with a fixed number of fields per line.

The small formats of trec_eval besides runs and qrels (preferences, judgment groups,
z-scores) are read here: each line is split on ASCII whitespace, as trec_eval splits
it; blank lines and ``#`` comment lines are skipped (trec_eval 10.0 skips comments).
"""

from __future__ import annotations

import re
import warnings

import polars as pl

from polars_irmetrics.errors import FileFormatError, TrecFormatError
from polars_irmetrics.io.sources import display_name, excerpt, open_text, undecodable_error

__all__ = ["atol", "decimal", "read_fields"]

#: A plain decimal number: ASCII digits, one point, an exponent (no ``_``, no spaces).
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
#: The words C's ``atof`` reads as numbers (trec_eval's reader), any case.
_WORDS = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)


def decimal(text: str, *, words: bool = False) -> float | None:
    """``text`` as a number when it is a plain decimal (``0.25``, ``-3``, ``1e-4``),
    else ``None``: Python's ``float`` also reads ``1_0`` as 10, Unicode digits and
    spaces, which no file format means. ``words`` also reads ``nan`` and ``inf`` (as
    C's ``atof`` does, which trec_eval reads numbers with).

    Examples
    --------
    >>> from polars_irmetrics.io.text import decimal
    >>> decimal("0.25"), decimal("1_0"), decimal("\\u00a01"), decimal("nan", words=True)
    (0.25, None, None, nan)
    """
    if _DECIMAL.fullmatch(text) or (words and _WORDS.fullmatch(text)):
        return float(text)
    return None


def atol(token: pl.Expr) -> pl.Expr:
    """``token`` (text) read as C's ``atol`` reads it, as trec_eval reads a qrels label:
    an optional sign and the leading digits, the rest ignored (``1.9`` is 1, ``1e1`` is
    1, ``.5e1`` is 0: no leading digit). Int64; null where those digits are beyond the
    Int64 range. Which tokens are labels at all is the caller's check.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.io.text import atol
    >>> tokens = pl.Series(["+1", "1e-1", ".5e1", "1e1", "-2.7", "99999999999999999999"])
    >>> tokens.to_frame("t").select(atol(pl.col("t")).alias("t"))["t"].to_list()
    [1, 1, 0, 1, -2, None]
    """
    digits = token.str.extract(r"^([+-]?[0-9]+)")
    return (
        pl.when(digits.is_null())
        .then(pl.lit(0, pl.Int64))
        .otherwise(digits.cast(pl.Int64, strict=False))
    )


def read_fields(path: str, count: int, names: str) -> pl.DataFrame:
    """The data lines of ``path``, split into exactly ``count`` fields each.

    Parameters
    ----------
    path
        The file.
    count
        How many fields each line must have.
    names
        The fields' names, for the error message (``"query_id measure mean stddev"``).

    Returns
    -------
    polars.DataFrame
        ``_ln`` (1-based line number), ``_line`` (the line) and ``_fields`` (a list of
        ``count`` strings), one row per data line, in file order.

    Raises
    ------
    TrecFormatError
        The first line without ``count`` fields, or not UTF-8, named with its number.
    MissingFileError
        The path does not exist.
    FileFormatError
        The path is a folder, cannot be read, or holds binary data. The file may be
        compressed (gzip, zstd, bzip2, xz) or ``-`` (standard input); a leading UTF-8
        byte-order mark is stripped, as the run and qrels readers strip it.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "f.txt"
    ...     _ = path.write_text("# comment\\n\\na  b\\tc\\n")
    ...     read_fields(str(path), 3, "x y z")["_fields"].to_list()
    [['a', 'b', 'c']]
    """
    name = display_name(path)
    what = f"a text file of {count} whitespace-separated fields per line ({names})"
    text = open_text(path, what, TrecFormatError)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pl.exceptions.UnstableWarning)
        lines = pl.scan_lines(
            text.data, name="_line", row_index_name="_ln", row_index_offset=1, glob=False
        )
    if text.bom:  # known from the first bytes: clean files pay nothing
        line = pl.col("_line")
        first = pl.when(pl.col("_ln") == 1).then(line.str.strip_prefix("\ufeff")).otherwise(line)
        lines = lines.with_columns(first.alias("_line"))
    norm = (
        pl.col("_line")
        .str.replace_all(r"[\t\r\n\x0b\x0c]", " ")
        .str.replace_all("  +", " ")
        .str.strip_chars(" ")
    )
    query = (
        lines.with_columns(norm.alias("_norm"))
        .filter((pl.col("_norm") != "") & ~pl.col("_norm").str.starts_with("#"))
        .select("_ln", "_line", pl.col("_norm").str.split(" ").alias("_fields"))
    )
    try:
        frame = query.collect()
    except pl.exceptions.ComputeError:  # text that is not UTF-8 past the head
        found = undecodable_error(path, what, TrecFormatError)
        unread = FileFormatError(f"{name}: cannot be read as text; expected {what}")
        raise found or unread from None
    bad = frame.filter(pl.col("_fields").list.len() != count)
    if bad.height:
        number, line, fields = bad.row(0)
        raise TrecFormatError(
            f"{name}, line {number}: expected {count} whitespace-separated fields ({names}), "
            f"got {len(fields)}: {excerpt(line)}"
        )
    return frame
