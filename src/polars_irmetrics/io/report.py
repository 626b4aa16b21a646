"""Turn a result frame into text or files: aligned table, CSV, JSON, Markdown, Parquet, TREC.

Used by the ``irm`` command. Floats are shown with 4 decimals in the text formats
(the precision trec_eval prints); CSV, JSON and Parquet keep full precision.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import polars as pl

from polars_irmetrics.errors import InvalidValueError
from polars_irmetrics.io.output import render_table, write_table

__all__ = ["OUTPUT_FORMATS", "OutputFormat", "render", "write_output"]

OutputFormat = Literal["table", "csv", "json", "parquet", "markdown", "latex", "trec"]
OUTPUT_FORMATS: tuple[str, ...] = (
    "table", "csv", "json", "parquet", "markdown", "latex", "trec"
)  # fmt: skip


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
    if fmt == "trec":
        return _trec(frame, keys, metrics)
    if fmt != "parquet":
        return render_table(frame, fmt).decode()
    raise InvalidValueError(
        f"output format {fmt!r} is not a text format; choose one of "
        f"{', '.join(OUTPUT_FORMATS)} (parquet needs -o FILE)"
    )


def write_output(
    frame: pl.DataFrame,
    fmt: OutputFormat | None,
    output: str | None,
    *,
    keys: Sequence[str] = (),
    metrics: Sequence[str] = (),
    default: str = "table",
) -> None:
    """Write ``frame`` to ``output`` (a path; atomic) or to standard output, in ``fmt``,
    else the format ``output``'s suffix names, else ``default``."""
    if output is None and fmt == "parquet":
        raise InvalidValueError(
            "--format parquet writes a binary file: name it with -o FILE.parquet"
        )
    trec = {"trec": lambda f: _trec(f, keys, metrics).encode()}
    write_table(frame, output, fmt, renderers=trec, default=default)
