"""trec_eval's other judgment formats: preferences (``-R prefs``) and judgment groups
(``-R qrels_jg``).

* **prefs**: ``query_id jg jsg doc_id rel_level`` per line. Within one judgment
  sub-group (``jg``, ``jsg``) a document with a higher ``rel_level`` is preferred to
  one with a lower level; a level of 0 means "judged non-relevant".
* **qrels_jg**: a qrels file whose second field is a judgment group (one user's
  judgments): ``query_id jg doc_id relevance``.

Blank lines and ``#`` comment lines are skipped. A malformed line raises
:class:`~polars_irmetrics.errors.TrecFormatError` naming the file and the line.
"""

from __future__ import annotations

import math
import os

import polars as pl

from polars_irmetrics.errors import TrecFormatError
from polars_irmetrics.io.sources import display_name, excerpt
from polars_irmetrics.io.text import atol, read_fields

__all__ = ["read_trec_prefs", "read_trec_qrels_jg", "read_trec_qrels_prefs"]

_PREFS_FIELDS = "query_id jg jsg doc_id rel_level"
_QRELS_JG_FIELDS = "query_id jg doc_id relevance"


def _number(frame: pl.DataFrame, index: int, name: str, path: str) -> pl.Series:
    """Field ``index`` as Float64; TrecFormatError for the first line where it is not a
    finite number (``nan``, ``inf`` and ``-inf`` are refused: they order nothing)."""
    token = pl.col("_fields").list.get(index)
    parsed = frame.select(
        "_ln", "_line", token.alias("_token"), token.cast(pl.Float64, strict=False).alias("_v")
    )
    bad = parsed.filter(~pl.col("_v").is_finite().fill_null(False))
    if bad.height:
        number, line, text, value = bad.row(0)
        fix = "" if value is None else "; write a finite number"
        problem = "is not a number" if value is None else "is not a finite number"
        raise TrecFormatError(
            f"{display_name(path)}, line {number}: {name} {excerpt(text)} {problem}: "
            f"{excerpt(line)}{fix}"
        )
    return parsed.get_column("_v")


def _integer(frame: pl.DataFrame, index: int, name: str, path: str) -> pl.Series:
    """Field ``index`` as Int64, as trec_eval reads a label (C's ``atol``): the sign and
    leading digits, exactly (beyond 2**53 too), the rest ignored (``2.7`` is 2, ``1e1``
    is 1); TrecFormatError for the first line where it is not a finite number, or its
    digits are beyond the Int64 range."""
    token = pl.col("_fields").list.get(index)
    as_float = token.cast(pl.Float64, strict=False)
    value = pl.when(as_float.is_finite()).then(atol(token))
    parsed = frame.select(
        "_ln", "_line", token.alias("_token"), as_float.alias("_f"), value.alias("_v")
    )
    bad = parsed.filter(pl.col("_v").is_null())
    if bad.height:
        number, line, text, as_number, _ = bad.row(0)
        fix = "; write a whole-number label"
        if as_number is None:
            problem, fix = "is not a number", ""
        elif not math.isfinite(as_number):
            problem = "is not a finite number"
        else:
            problem = "is out of the range of a 64-bit integer"
        raise TrecFormatError(
            f"{display_name(path)}, line {number}: {name} {excerpt(text)} {problem}: "
            f"{excerpt(line)}{fix}"
        )
    return parsed.get_column("_v")


def read_trec_prefs(source: str | os.PathLike[str]) -> pl.DataFrame:
    """Read trec_eval's preference file (``-R prefs``).

    Parameters
    ----------
    source
        Path of the file: ``query_id jg jsg doc_id rel_level`` per line.

    Returns
    -------
    polars.DataFrame
        Columns ``query_id``, ``jg``, ``jsg``, ``doc_id`` (String) and ``rel_level``
        (Float64), in file order.

    Raises
    ------
    TrecFormatError
        A line without 5 fields, or a ``rel_level`` that is not a finite number.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "prefs.txt"
    ...     _ = path.write_text("# user 1\\nq1 u1 s1 d1 2\\nq1 u1 s1 d2 1\\n")
    ...     read_trec_prefs(path).rows()
    [('q1', 'u1', 's1', 'd1', 2.0), ('q1', 'u1', 's1', 'd2', 1.0)]
    """
    path = os.fspath(source)
    frame = read_fields(path, 5, _PREFS_FIELDS)
    level = _number(frame, 4, "rel_level", path)
    return frame.select(
        *(pl.col("_fields").list.get(i).alias(n) for i, n in ((0, "query_id"), (1, "jg"))),
        pl.col("_fields").list.get(2).alias("jsg"),
        pl.col("_fields").list.get(3).alias("doc_id"),
        level.alias("rel_level"),
    )


def read_trec_qrels_jg(source: str | os.PathLike[str]) -> pl.DataFrame:
    """Read a qrels file with judgment groups (``-R qrels_jg``).

    Parameters
    ----------
    source
        Path of the file: ``query_id jg doc_id relevance`` per line.

    Returns
    -------
    polars.DataFrame
        Columns ``query_id``, ``jg``, ``doc_id`` (String) and ``relevance`` (Int64:
        read as trec_eval reads it, with C's ``atol``: the sign and leading digits, so
        ``2.7`` is 2 and ``1e1`` is 1).

    Raises
    ------
    TrecFormatError
        A line without 4 fields, or a relevance that is not a finite number or whose
        digits are beyond the Int64 range (they are read exactly, beyond 2**53 too).

    Examples
    --------
    Two users judged d1; the label 2.7 is read as 2:

    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "qrels_jg.txt"
    ...     _ = path.write_text("q1 alice d1 1\\nq1 bob d1 2.7\\n")
    ...     read_trec_qrels_jg(path).rows()
    [('q1', 'alice', 'd1', 1), ('q1', 'bob', 'd1', 2)]
    """
    path = os.fspath(source)
    frame = read_fields(path, 4, _QRELS_JG_FIELDS)
    relevance = _integer(frame, 3, "relevance", path)
    return frame.select(
        pl.col("_fields").list.get(0).alias("query_id"),
        pl.col("_fields").list.get(1).alias("jg"),
        pl.col("_fields").list.get(2).alias("doc_id"),
        relevance.alias("relevance"),
    )


def read_trec_qrels_prefs(source: str | os.PathLike[str]) -> pl.DataFrame:
    """Read a qrels file as preferences (``-R qrels_prefs``), as trec_eval reads it.

    Each line ``query_id iteration doc_id relevance`` becomes a preference row: the
    iteration field is the judgment group, the sub-group is ``"0"`` and the label is
    the level (a float: ``2.5`` stays 2.5).

    Parameters
    ----------
    source
        Path of the qrels file.

    Returns
    -------
    polars.DataFrame
        The columns of :func:`read_trec_prefs`.

    Raises
    ------
    TrecFormatError
        A line without 4 fields, or a relevance that is not a finite number.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "qrels.txt"
    ...     _ = path.write_text("q1 0 d1 2.5\\nq1 0 d2 0\\n")
    ...     read_trec_qrels_prefs(path).rows()
    [('q1', '0', '0', 'd1', 2.5), ('q1', '0', '0', 'd2', 0.0)]
    """
    path = os.fspath(source)
    frame = read_fields(path, 4, "query_id iteration doc_id relevance")
    level = _number(frame, 3, "relevance", path)
    return frame.select(
        pl.col("_fields").list.get(0).alias("query_id"),
        pl.col("_fields").list.get(1).alias("jg"),
        pl.lit("0").alias("jsg"),
        pl.col("_fields").list.get(2).alias("doc_id"),
        level.alias("rel_level"),
    )
