"""Turn a result frame into text or files: aligned table, CSV, JSON, Markdown, Parquet, TREC.

Used by the ``irm`` command. Floats are shown with 4 decimals in the text formats
(the precision trec_eval prints); CSV, JSON and Parquet keep full precision.
"""

from __future__ import annotations

import io
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import polars as pl

from polars_irmetrics.errors import InvalidValueError

__all__ = ["OutputFormat", "render", "write_output"]

OutputFormat = Literal["table", "csv", "json", "parquet", "markdown", "trec"]
OUTPUT_FORMATS: tuple[str, ...] = ("table", "csv", "json", "parquet", "markdown", "trec")


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.4f}"
    return str(value)


def _aligned(frame: pl.DataFrame) -> str:
    header = frame.columns
    rows = [[_cell(v) for v in row] for row in frame.iter_rows()]
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(header)]
    numeric = [dtype.is_numeric() for dtype in frame.dtypes]

    def line(cells: Sequence[str]) -> str:
        parts = [
            c.rjust(w) if num else c.ljust(w)
            for c, w, num in zip(cells, widths, numeric, strict=True)
        ]
        return "  ".join(parts).rstrip()

    out = [line(header), line(["-" * w for w in widths])]
    out += [line(r) for r in rows]
    return "\n".join(out) + "\n"


def _markdown(frame: pl.DataFrame) -> str:
    numeric = [dtype.is_numeric() for dtype in frame.dtypes]
    out = ["| " + " | ".join(frame.columns) + " |"]
    out.append("|" + "|".join("---:" if n else "---" for n in numeric) + "|")
    for row in frame.iter_rows():
        out.append("| " + " | ".join(_cell(v) for v in row) + " |")
    return "\n".join(out) + "\n"


def trec_line(measure: str, query: str, value: object) -> str:
    """One line as trec_eval prints it: name in 22 columns, tab, query, tab, value."""
    text = f"{value:.4f}" if isinstance(value, float) else str(value)
    return f"{measure:<22}\t{query}\t{text}\n"


def _trec(frame: pl.DataFrame, keys: Sequence[str], metrics: Sequence[str]) -> str:
    out = []
    label_keys = [k for k in keys if k in frame.columns]
    for row in frame.iter_rows(named=True):
        where = "\t".join(str(row[k]) for k in label_keys) if label_keys else "all"
        for metric in metrics:
            out.append(trec_line(metric, where, row[metric]))
    return "".join(out)


def render(
    frame: pl.DataFrame,
    fmt: OutputFormat,
    *,
    keys: Sequence[str] = (),
    metrics: Sequence[str] = (),
) -> str:
    """The text form of ``frame`` in a text format (all but Parquet).

    Examples
    --------
    >>> import polars as pl
    >>> from polars_irmetrics.io.report import render
    >>> print(render(pl.DataFrame({"run": ["bm25"], "num_q": [2], "map": [0.25]}), "table"),
    ...       end="")
    run   num_q     map
    ----  -----  ------
    bm25      2  0.2500
    """
    if fmt == "table":
        return _aligned(frame)
    if fmt == "markdown":
        return _markdown(frame)
    if fmt == "csv":
        return frame.write_csv()
    if fmt == "json":
        buffer = io.StringIO()
        frame.write_json(buffer)
        return buffer.getvalue() + "\n"
    if fmt == "trec":
        return _trec(frame, keys, metrics)
    raise InvalidValueError(
        f"output format {fmt!r} is not a text format; choose one of "
        f"{', '.join(OUTPUT_FORMATS)} (parquet needs -o FILE)"
    )


def write_output(
    frame: pl.DataFrame,
    fmt: OutputFormat,
    output: str | None,
    *,
    keys: Sequence[str] = (),
    metrics: Sequence[str] = (),
) -> None:
    """Write ``frame`` to ``output`` (a path) or to standard output."""
    if fmt == "parquet":
        if output is None:
            raise InvalidValueError(
                "--format parquet writes a binary file: name it with -o FILE.parquet"
            )
        frame.write_parquet(output)
        return
    text = render(frame, fmt, keys=keys, metrics=metrics)
    if output is None:
        sys.stdout.write(text)
    else:
        Path(output).write_text(text, encoding="utf-8")
