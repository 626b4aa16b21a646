"""Reports of a comparison: one row per system, one column per metric, with markers.

A cell is the system's mean; its markers say which systems it is *significantly
better than* (``significant`` in :func:`~polars_irmetrics.compare`'s result, i.e. the
adjusted p-value is at most ``alpha``): ranx-style letters (each system gets a letter,
``ᵃ`` = better than system a), or, against a baseline, daggers (``†`` better than the
baseline, ``‡`` worse). A legend explains them. The best mean of each metric (the
lowest where lower is better) is bold in Markdown, LaTeX (booktabs; markers as
superscripts) and HTML. CSV, JSON and Parquet write the tidy result itself.
"""

from __future__ import annotations

import html
import io
import math
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Literal

import polars as pl

from polars_irmetrics.errors import ColumnNotFoundError, InvalidValueError, IrmError
from polars_irmetrics.io.output import Renderer, write_table
from polars_irmetrics.metrics.registry import parse_metric

__all__ = ["REPORT_FORMATS", "Markers", "ReportFormat", "render_report", "write_report"]

ReportFormat = Literal["terminal", "markdown", "latex", "html", "csv", "json", "parquet"]
REPORT_FORMATS: tuple[str, ...] = (
    "terminal", "markdown", "latex", "html", "csv", "json", "parquet"
)  # fmt: skip
Markers = Literal["letters", "daggers"]

_SUPERSCRIPT = dict(
    zip(
        "abcdefghijklmnopqrstuvwxyz0123456789", "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖᑫʳˢᵗᵘᵛʷˣʸᶻ⁰¹²³⁴⁵⁶⁷⁸⁹", strict=True
    )
)
_NEEDED = ("metric", "system", "baseline", "mean", "baseline_mean", "delta", "significant")


@dataclass(frozen=True)
class _Table:
    systems: list[str]
    metrics: list[str]
    means: dict[tuple[str, str], float]
    marks: dict[tuple[str, str], list[str]]
    legend: list[str]


def _letter(i: int) -> str:
    return "abcdefghijklmnopqrstuvwxyz"[i] if i < 26 else str(i + 1)


def _table(result: pl.DataFrame, markers: Markers) -> _Table:
    missing = [c for c in _NEEDED if c not in result.columns]
    if missing:
        raise ColumnNotFoundError(
            f"column {missing[0]!r} is not in the frame; pass the result of irm.compare"
        )
    if markers not in ("letters", "daggers"):
        raise InvalidValueError(f"markers={markers!r} is not valid; choose 'letters' or 'daggers'")
    systems: list[str] = []
    metrics: list[str] = []
    means: dict[tuple[str, str], float] = {}
    marks: dict[tuple[str, str], list[str]] = {}
    rows = result.select(_NEEDED).iter_rows()
    for metric, system, baseline, mean, baseline_mean, _, _ in rows:
        for name in (baseline, system):
            if name not in systems:
                systems.append(name)
        if metric not in metrics:
            metrics.append(metric)
        means[system, metric] = mean
        means[baseline, metric] = baseline_mean
    baselines = set(result.get_column("baseline").unique().to_list())
    if markers == "daggers" and len(baselines) != 1:
        raise InvalidValueError(
            "markers='daggers' needs one baseline (mode='baseline'); use markers='letters'"
        )
    letter = {s: _letter(i) for i, s in enumerate(systems)}
    for metric, system, baseline, _, _, delta, significant in result.select(_NEEDED).iter_rows():
        if not significant or delta == 0:
            continue
        winner, loser = (system, baseline) if delta > 0 else (baseline, system)
        if markers == "daggers":
            marks.setdefault((system, metric), []).append("†" if delta > 0 else "‡")
        else:
            marks.setdefault((winner, metric), []).append(letter[loser])
    for key in marks:
        marks[key].sort()
    if markers == "daggers":
        (base,) = baselines
        legend = [f"†/‡: significantly better/worse than {base} (adjusted p <= alpha)"]
    else:
        legend = [
            "superscript x: significantly better than system x (adjusted p <= alpha)",
            ", ".join(f"{letter[s]} = {s}" for s in systems),
        ]
    return _Table(systems, metrics, means, marks, legend)


def _number(value: float, digits: int) -> str:
    return "nan" if math.isnan(value) else f"{value:.{digits}f}"


def _best(table: _Table, metric: str) -> float:
    values = [table.means[s, metric] for s in table.systems if (s, metric) in table.means]
    finite = [v for v in values if not math.isnan(v)]
    if not finite:
        return math.nan
    try:
        higher = parse_metric(metric).metric.higher_is_better
    except IrmError:  # a label that is not a metric name: higher is better
        higher = True
    return max(finite) if higher else min(finite)


def render_report(
    result: pl.DataFrame,
    fmt: ReportFormat = "terminal",
    *,
    markers: Markers = "letters",
    digits: int = 4,
) -> str:
    """The report of a comparison as text.

    Parameters
    ----------
    result
        The frame :func:`~polars_irmetrics.compare` returned (``per_query=False``).
    fmt
        ``"terminal"`` (aligned text), ``"markdown"``, ``"latex"`` (booktabs),
        ``"html"``, ``"csv"`` or ``"json"`` (the tidy frame itself).
    markers
        ``"letters"`` (ranx style) or ``"daggers"`` (one baseline only).
    digits
        Decimals of the means.

    Returns
    -------
    str

    Raises
    ------
    ColumnNotFoundError
        ``result`` is not a comparison result.
    InvalidValueError
        An unknown format or markers, or daggers without a single baseline.

    Examples
    --------
    ``b`` beats ``a`` significantly, ``c`` does not differ from ``a``:

    >>> import polars as pl
    >>> from polars_irmetrics.comparison.report import render_report
    >>> result = pl.DataFrame({
    ...     "metric": ["map", "map"], "system": ["b", "c"], "baseline": ["a", "a"],
    ...     "mean": [0.5, 0.31], "baseline_mean": [0.3, 0.3], "delta": [0.2, 0.01],
    ...     "significant": [True, False]})
    >>> print(render_report(result))
    #  system  map
    -  ------  -------
    a  a       0.3000
    b  b       0.5000ᵃ
    c  c       0.3100
    <BLANKLINE>
    superscript x: significantly better than system x (adjusted p <= alpha)
    a = a, b = b, c = c
    >>> print(render_report(result, "latex", markers="daggers"))
    \\begin{tabular}{ll}
    \\toprule
    System & map \\\\
    \\midrule
    a & 0.3000 \\\\
    b & \\textbf{0.5000}$^{\\dagger}$ \\\\
    c & 0.3100 \\\\
    \\bottomrule
    \\end{tabular}
    % $\\dagger$/$\\ddagger$: significantly better/worse than a (adjusted p <= alpha)
    """
    if fmt == "csv":
        return result.write_csv()
    if fmt == "json":
        buffer = io.StringIO()
        result.write_json(buffer)
        return buffer.getvalue() + "\n"
    table = _table(result, markers)
    if fmt == "terminal":
        return _terminal(table, digits)
    if fmt == "markdown":
        return _markdown(table, digits)
    if fmt == "latex":
        return _latex(table, digits)
    if fmt == "html":
        return _html(table, digits)
    raise InvalidValueError(
        f"report format {fmt!r} is not a text format; choose one of "
        f"{', '.join(REPORT_FORMATS)} (parquet needs a file)"
    )


def _sup(marks: list[str]) -> str:
    return "".join(_SUPERSCRIPT.get(m, m) for m in marks)


def _terminal(table: _Table, digits: int) -> str:
    header = ["#", "system", *table.metrics]
    rows = [
        [_letter(i), s]
        + [
            _number(table.means[s, m], digits) + _sup(table.marks.get((s, m), []))
            if (s, m) in table.means
            else ""
            for m in table.metrics
        ]
        for i, s in enumerate(table.systems)
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [header, ["-" * w for w in widths], *rows]
    text = "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in lines
    )
    return text + "\n\n" + "\n".join(table.legend) + "\n"


def _markdown(table: _Table, digits: int) -> str:
    out = ["| system | " + " | ".join(table.metrics) + " |"]
    out.append("|---|" + "---:|" * len(table.metrics))
    for s in table.systems:
        cells = []
        for m in table.metrics:
            value = table.means.get((s, m), math.nan)
            text = _number(value, digits)
            if value == _best(table, m):
                text = f"**{text}**"
            cells.append(text + _sup(table.marks.get((s, m), [])))
        out.append(f"| {s} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n\n" + "\n".join(table.legend) + "\n"


def _latex_escape(text: str) -> str:
    for old, new in (("\\", "\\textbackslash{}"), ("_", "\\_"), ("%", "\\%"), ("&", "\\&"),
                     ("#", "\\#"), ("$", "\\$"), ("{", "\\{"), ("}", "\\}")):  # fmt: skip
        text = text.replace(old, new)
    return text


def _latex_marks(marks: list[str]) -> str:
    if not marks:
        return ""
    names = {"†": "\\dagger", "‡": "\\ddagger"}
    return "$^{" + "".join(names.get(m, m) for m in marks) + "}$"


def _latex(table: _Table, digits: int) -> str:
    out = ["\\begin{tabular}{l" + "l" * len(table.metrics) + "}", "\\toprule"]
    out.append("System & " + " & ".join(_latex_escape(m) for m in table.metrics) + " \\\\")
    out.append("\\midrule")
    for s in table.systems:
        cells = []
        for m in table.metrics:
            value = table.means.get((s, m), math.nan)
            text = _number(value, digits)
            if value == _best(table, m):
                text = f"\\textbf{{{text}}}"
            cells.append(text + _latex_marks(table.marks.get((s, m), [])))
        out.append(_latex_escape(s) + " & " + " & ".join(cells) + " \\\\")
    out += ["\\bottomrule", "\\end{tabular}"]
    legend = [line.replace("†", "$\\dagger$").replace("‡", "$\\ddagger$") for line in table.legend]
    return "\n".join(out + [f"% {line}" for line in legend]) + "\n"


def _html(table: _Table, digits: int) -> str:
    out = ["<table>", "<thead><tr><th>system</th>"]
    out[-1] += "".join(f"<th>{html.escape(m)}</th>" for m in table.metrics) + "</tr></thead>"
    out.append("<tbody>")
    for s in table.systems:
        cells = []
        for m in table.metrics:
            value = table.means.get((s, m), math.nan)
            text = _number(value, digits)
            if value == _best(table, m):
                text = f"<b>{text}</b>"
            marks = table.marks.get((s, m), [])
            sup = f"<sup>{html.escape(''.join(marks))}</sup>" if marks else ""
            cells.append(f"<td>{text}{sup}</td>")
        out.append(f"<tr><td>{html.escape(s)}</td>" + "".join(cells) + "</tr>")
    out.append("</tbody>")
    out.append("<caption>" + html.escape(" ".join(table.legend)) + "</caption>")
    out.append("</table>")
    return "\n".join(out) + "\n"


def write_report(
    result: pl.DataFrame,
    path: str | Path | None,
    fmt: ReportFormat | None = None,
    *,
    markers: Markers = "letters",
    digits: int = 4,
) -> None:
    """Write :func:`render_report`'s text to ``path`` (``None``: standard output), in
    ``fmt``, else the format ``path``'s suffix names (``.md``, ``.tex``, ``.csv``,
    ``.json``, ``.parquet``; ``"terminal"`` for any other); ``"parquet"`` writes the tidy
    result. The file is written atomically (:func:`~polars_irmetrics.io.output.write_table`).
    """
    table_formats: tuple[ReportFormat, ...] = ("terminal", "markdown", "latex", "html")
    renderers: dict[str, Renderer] = {
        name: partial(_report_bytes, fmt=name, markers=markers, digits=digits)
        for name in table_formats
    }
    write_table(result, path, fmt, renderers=renderers, default="terminal")


def _report_bytes(
    result: pl.DataFrame, *, fmt: ReportFormat, markers: Markers, digits: int
) -> bytes:
    return render_report(result, fmt, markers=markers, digits=digits).encode()
