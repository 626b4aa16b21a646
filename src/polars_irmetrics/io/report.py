"""Turn a result frame into text or files: aligned table, CSV, JSON, Markdown, Parquet, TREC.

Used by the ``irm`` command. Floats are shown with 4 decimals in the text formats
(the precision trec_eval prints); CSV, JSON and Parquet keep full precision.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import polars as pl

from polars_irmetrics.errors import InvalidValueError
from polars_irmetrics.io.output import Renderer, check_output, render_table, write_table

__all__ = ["OUTPUT_FORMATS", "OutputFormat", "check_output_args", "render", "write_output"]

OutputFormat = Literal["table", "csv", "json", "parquet", "markdown", "latex", "html", "trec"]
OUTPUT_FORMATS: tuple[str, ...] = (
    "table", "csv", "json", "parquet", "markdown", "latex", "html", "trec"
)  # fmt: skip


def trec_line(measure: str, query: str, value: object) -> str:
    """One line as trec_eval prints it: name in 22 columns, tab, query, tab, value
    (a float as C's ``printf("%6.4f")``: ``0.2500``, and ``inf`` padded to ``   inf``)."""
    text = f"{value:6.4f}" if isinstance(value, float) else str(value)
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


def _renderers(keys: Sequence[str], metrics: Sequence[str]) -> dict[str, Renderer]:
    return {"trec": lambda f: _trec(f, keys, metrics).encode()}


def check_output_args(fmt: str | None, output: str | None, *, default: str = "table") -> str:
    """The format ``irm ... --format FMT -o FILE`` writes, checked before anything is
    computed: a known format, a suffix that names one (an unknown suffix is refused),
    a folder that exists and can be written, no binary format on standard output.

    Examples
    --------
    >>> from polars_irmetrics.io.report import check_output_args
    >>> check_output_args(None, None), check_output_args("trec", None)
    ('table', 'trec')
    >>> check_output_args(None, "means.xlsx")
    Traceback (most recent call last):
    ...
    polars_irmetrics.errors.InvalidValueError: means.xlsx: the suffix names no output format; ...
    """
    if output is None and fmt == "parquet":
        raise InvalidValueError(
            "--format parquet writes a binary file: name it with -o FILE.parquet"
        )
    renderers = _renderers((), ())
    return check_output(output, fmt, default=default, flag="--format", renderers=renderers)


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
    else the format ``output``'s suffix names (a suffix that names none is refused);
    ``default`` on standard output."""
    chosen = check_output_args(fmt, output, default=default)
    renderers = _renderers(keys, metrics)
    write_table(frame, output, chosen, renderers=renderers, flag="--format")
