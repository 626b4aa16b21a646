"""Whitespace-separated text files with a fixed number of fields per line.

The small formats of trec_eval besides runs and qrels (preferences, judgment groups,
z-scores) are read here: each line is split on ASCII whitespace, as trec_eval splits
it; blank lines and ``#`` comment lines are skipped (trec_eval 10.0 skips comments).
"""

from __future__ import annotations

import warnings

import polars as pl

from polars_irmetrics.errors import TrecFormatError
from polars_irmetrics.io.sources import excerpt

__all__ = ["read_fields"]


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
        The first line without ``count`` fields, named with its number.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "f.txt"
    ...     _ = path.write_text("# comment\\n\\na  b\\tc\\n")
    ...     read_fields(str(path), 3, "x y z")["_fields"].to_list()
    [['a', 'b', 'c']]
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pl.exceptions.UnstableWarning)
        lines = pl.scan_lines(path, name="_line", row_index_name="_ln", row_index_offset=1)
    norm = (
        pl.col("_line")
        .str.replace_all(r"[\t\r\n\x0b\x0c]", " ")
        .str.replace_all("  +", " ")
        .str.strip_chars(" ")
    )
    frame = (
        lines.with_columns(norm.alias("_norm"))
        .filter((pl.col("_norm") != "") & ~pl.col("_norm").str.starts_with("#"))
        .select("_ln", "_line", pl.col("_norm").str.split(" ").alias("_fields"))
        .collect()
    )
    bad = frame.filter(pl.col("_fields").list.len() != count)
    if bad.height:
        number, line, fields = bad.row(0)
        raise TrecFormatError(
            f"{path}, line {number}: expected {count} whitespace-separated fields ({names}), "
            f"got {len(fields)}: {excerpt(line)}"
        )
    return frame
