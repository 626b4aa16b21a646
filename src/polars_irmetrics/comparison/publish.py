"""``irm.report(result)``: a comparison as a publication table and a self-contained page.

:func:`report` wraps :func:`~polars_irmetrics.compare`'s tidy result in a
:class:`Report`: one row per system, one column per metric, significance markers, the
best value bold and a footnote naming the test, the correction, alpha, the number of
queries and the baseline (:func:`~polars_irmetrics.comparison.record.describe`; the
options are those ``compare`` recorded for that very frame, or ``options=``).

* In a notebook it displays as that table (``_repr_html_``), rendered by great_tables
  (the engine of polars' ``DataFrame.style``; the ``report`` extra). Numbers align on
  the decimal point: the same decimals, tabular figures, and each column's markers in
  a box of one width.
* :meth:`Report.to_html` is one HTML document holding the table and the plots (per-query
  deltas, metric@k curves, significance matrices, confidence intervals) as inline SVG:
  no script, no external URL (the SVGs' namespace declarations are dropped, which HTML
  does not need), readable offline and printable (each figure kept on one page).
* :meth:`Report.to_latex` (booktabs, decimal-aligned ``r@{.}l`` columns) and
  :meth:`Report.to_markdown` are :mod:`~polars_irmetrics.comparison.report`'s: great_tables'
  own LaTeX drops bold and does not align decimals.
* :meth:`Report.save` writes by suffix (``.html``, ``.tex``, ``.md``, ``.txt``), to a
  temporary file in the target folder renamed over the target (``os.replace``), so a
  reader never sees half a file (:func:`~polars_irmetrics.io.output.write_atomic`, the
  one writer of every output).
"""

from __future__ import annotations

import html
import io
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from polars_irmetrics.comparison import plot
from polars_irmetrics.comparison.api import recorded_per_query
from polars_irmetrics.comparison.options import CompareOptions
from polars_irmetrics.comparison.record import recall
from polars_irmetrics.comparison.report import (
    Markers,
    Table,
    best,
    check_report,
    footnote,
    is_reproducibility,
    kind_of,
    latex,
    markdown,
    marker_text,
    reproducibility_table,
    table,
    terminal,
)
from polars_irmetrics.errors import (
    ColumnNotFoundError,
    ColumnTypeError,
    InvalidValueError,
    IrmError,
)
from polars_irmetrics.ground.lazy import LazyModule
from polars_irmetrics.io.output import check_target, write_text
from polars_irmetrics.metrics.registry import parse_metric

_INSTALL = "pip install 'polars_irmetrics[report]'"
#: great_tables, imported at the first HTML or LaTeX table (import time)
_GT = LazyModule(
    "great_tables", missing=f"HTML reports need great_tables, which is not installed: {_INSTALL}"
)

if TYPE_CHECKING:
    from great_tables import GT
    from matplotlib.figure import Figure

__all__ = ["Report", "report"]

_ID = "irm-report"
_SUFFIXES = {".html": "html", ".htm": "html", ".tex": "latex", ".md": "markdown", ".txt": "text"}
_CSS = f"""
#{_ID} td.gt_row {{ font-variant-numeric: tabular-nums; white-space: nowrap; }}
#{_ID} .irm-mark {{ display: inline-block; text-align: left; }}
#{_ID} .irm-mark sup {{ font-size: 70%; }}
"""
_PAGE_CSS = """
body { font-family: system-ui, -apple-system, 'Segoe UI', Roboto, Arial, sans-serif;
       color: #222; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.4; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
.irm-figures { display: grid; gap: 1rem;
               grid-template-columns: repeat(auto-fit, minmax(24rem, 1fr)); }
figure { margin: 0; break-inside: avoid; page-break-inside: avoid; }
figure svg { max-width: 100%; height: auto; }
figcaption { font-size: 0.9rem; color: #444; text-align: center; }
@media print { body { margin: 0; max-width: none; } h2 { break-after: avoid; } }
"""


def _need_great_tables() -> Any:
    return _GT.module


class Report:
    """A comparison rendered for people: a table (HTML, LaTeX, Markdown, text) and plots.

    Build it with :func:`report` (the parameters are its own). ``str(report)`` is the
    terminal table.

    Parameters
    ----------
    result
        The frame :func:`~polars_irmetrics.compare` returned.
    per_query
        ``compare(..., per_query=True)``; default: from what ``compare`` recorded.
    curves
        ``evaluate(runs, "ndcg@1..20", systems=system)``; default: from the result.
    options
        The comparison's options; default: those ``compare`` recorded.
    markers
        ``"letters"`` or ``"daggers"``.
    digits
        Decimals of the means.
    title
        The table's and page's title.
    system
        The system column of :meth:`frame`.

    Examples
    --------
    A frame built by hand: the numbers are its means, the footnote says that the test
    was not recorded.

    >>> import polars as pl
    >>> from polars_irmetrics.comparison.publish import Report
    >>> result = pl.DataFrame({"metric": ["map"], "system": ["b"], "baseline": ["a"],
    ...     "n": [9], "mean": [0.5], "baseline_mean": [0.25], "delta": [0.25],
    ...     "significant": [False], "higher_is_better": [True]})
    >>> Report(result).frame().rows()
    [('a', 0.25), ('b', 0.5)]
    """

    def __init__(
        self,
        result: pl.DataFrame,
        *,
        per_query: pl.DataFrame | None = None,
        curves: pl.DataFrame | None = None,
        options: CompareOptions | None = None,
        markers: Markers = "letters",
        digits: int = 4,
        title: str | None = None,
        system: str = "system",
    ) -> None:
        check_report(result, digits, options)  # render_report's checks, the same words
        _check_arguments(per_query, system, result)
        self.result = result
        record = recall(result)
        given = options
        if options is None and record is not None:
            options = record.options
        self.options = options
        self.digits = digits
        self.title = title
        self.system = system
        if is_reproducibility(result):  # irm.reproducibility's frame: measures x metrics
            cells, self.note = reproducibility_table(result)
            self.table: Table = cells
            self.system = self.table.row_label if system == "system" else system
            self.per_query, self.curves = per_query, curves
            return
        self.table = table(result, markers, given)
        self.note = footnote(result, given)  # the recorded options, where none is given
        self.per_query = per_query if per_query is not None else recorded_per_query(result)
        self.curves = curves if curves is not None else self._curves_from_result()

    def _curves_from_result(self) -> pl.DataFrame | None:
        """Means per system of the metrics with two or more cutoffs of one family."""
        cutoffs: dict[str, int] = {}
        for metric in self.table.metrics:
            try:
                k = parse_metric(metric).k
            except IrmError:  # a label that is no metric name: no curve
                continue
            if k is not None and "@" in metric:
                family = metric.rsplit("@", 1)[0]
                cutoffs[family] = cutoffs.get(family, 0) + 1
        columns = [m for m in self.table.metrics if cutoffs.get(m.rsplit("@", 1)[0], 0) >= 2]
        if not columns:
            return None
        return self.frame().select(self.system, *columns)

    def frame(self) -> pl.DataFrame:
        """The table's numbers: one row per system, one Float64 column per metric (the
        means of :func:`~polars_irmetrics.compare`'s ``mean``/``baseline_mean``)."""
        data: dict[str, Any] = {self.system: self.table.systems}
        for m in self.table.metrics:
            data[m] = [self.table.means.get((s, m)) for s in self.table.systems]
        return pl.DataFrame(
            data,
            schema={self.system: pl.String, **dict.fromkeys(self.table.metrics, pl.Float64)},
        )

    # --- the table -------------------------------------------------------------------

    def to_gt(self, *, header: bool = True) -> GT:
        """The table as a great_tables ``GT`` (restyle it, then render it yourself);
        ``header``: with the title, if any."""
        gt = _need_great_tables()
        frame = self.frame()
        texts = {
            (s, m): marker_text(self.table, self.table.marks.get((s, m), []))
            for s in self.table.systems
            for m in self.table.metrics
        }
        widths = {
            m: max((len(texts[s, m]) for s in self.table.systems), default=0)
            for m in self.table.metrics
        }
        styled = gt.GT(frame, rowname_col=self.system).with_id(_ID)
        for i, s in enumerate(self.table.systems):
            for m in self.table.metrics:
                marks = html.escape(texts[s, m])
                sup = f"<sup>{marks}</sup>" if marks else ""
                box = f'<span class="irm-mark" style="min-width: {widths[m] * 0.75:.2f}em">'
                box += f"{sup}</span>"
                if self.table.stds is not None and (s, m) in self.table.stds:  # with_std
                    box += f" ± {self.table.stds[s, m]:.{self.digits}f}"
                styled = styled.fmt(
                    lambda v, box=box: ("nan" if v is None else f"{v:.{self.digits}f}") + box,
                    columns=m,
                    rows=[i],
                )
                value = self.table.means.get((s, m))
                if value is not None and value == best(self.table, m):
                    styled = styled.tab_style(
                        gt.style.text(weight="bold"), gt.loc.body(columns=m, rows=[i])
                    )
        styled = styled.cols_align("right", columns=self.table.metrics)
        styled = styled.tab_stubhead(label=self.system)
        if self.title and header:
            styled = styled.tab_header(title=self.title)
        for line in [*self.table.legend, self.note]:
            styled = styled.tab_source_note(gt.html(html.escape(line)))
        done: GT = styled.opt_css(_CSS)
        return done

    def _repr_html_(self) -> str:
        return _scoped(str(self.to_gt().as_raw_html()))

    def to_latex(self) -> str:
        """A booktabs tabular: decimal-aligned ``r@{.}l`` columns, the best bold, the
        markers as superscripts, the footnote below."""
        return latex(self.table, self.digits, self.note)

    def to_markdown(self) -> str:
        """A Markdown table (the best bold, markers as superscripts) and the footnote."""
        return markdown(self.table, self.digits, self.note)

    def __str__(self) -> str:
        return terminal(self.table, self.digits, self.note)

    def __repr__(self) -> str:  # a terminal REPL shows the table too
        return str(self)

    # --- the plots -------------------------------------------------------------------

    def figures(self) -> list[tuple[str, str, Figure]]:
        """The page's plots as ``(section, caption, figure)``: per-query deltas, metric@k
        curves, significance matrices and confidence intervals (those the data allows)."""
        out: list[tuple[str, str, Figure]] = []
        metrics = self.table.metrics
        if self.per_query is not None:
            for m in self.per_query.get_column("metric").unique(maintain_order=True):
                figure = plot.plot_deltas(self.per_query, metric=m)
                out.append(("Per-query deltas", str(m), figure))
        if self.curves is not None:
            figure = plot.plot_metric_curves(self.curves, system=self.system)
            out.append(("Metric@k", "mean metric@k per system", figure))
        if "p_adjusted" in self.result.columns:
            for m in metrics:
                alpha = None if self.options is None else self.options.alpha
                figure = plot.plot_significance_matrix(self.result, metric=m, alpha=alpha)
                out.append(("Significance", m, figure))
        if {"ci_low", "ci_high"} <= set(self.result.columns):
            for m in metrics:
                figure = plot.plot_ci(self.result, metric=m)
                out.append(("Deltas and confidence intervals", m, figure))
        return out

    def to_html(self, *, plots: bool = True) -> str:
        """One self-contained HTML document: the table and (``plots``) every figure as
        inline SVG. No script, no external URL."""
        title = html.escape(self.title or "Comparison of systems")
        parts = [
            "<!DOCTYPE html>",
            '<html lang="en">',
            '<head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{title}</title>",
            f"<style>{_PAGE_CSS}</style></head>",
            "<body>",
            f"<h1>{title}</h1>",
            _scoped(str(self.to_gt(header=False).as_raw_html())),
        ]
        section = None
        for i, (name, caption, figure) in enumerate(self.figures() if plots else []):
            if name != section:
                if section is not None:
                    parts.append("</div></section>")
                parts.append(f'<section><h2>{html.escape(name)}</h2><div class="irm-figures">')
                section = name
            svg = _inline_svg(figure, f"irm-fig{i}", f"{name}: {caption}")
            parts.append(f"<figure>{svg}<figcaption>{html.escape(caption)}</figcaption></figure>")
        if section is not None:
            parts.append("</div></section>")
        parts += ["</body>", "</html>", ""]
        return "\n".join(parts)

    def save(self, path: str | Path) -> Path:
        """Write the report by ``path``'s suffix: ``.html`` (:meth:`to_html`), ``.tex``,
        ``.md``, ``.txt``; atomically (a temporary file renamed over ``path``, by
        :func:`~polars_irmetrics.io.output.write_atomic`): nothing is half-written.

        Raises
        ------
        InvalidValueError
            Another suffix, a folder, or a folder that cannot be written.
        MissingFileError
            The folder of ``path`` does not exist.

        Examples
        --------
        >>> import tempfile
        >>> import polars as pl
        >>> from polars_irmetrics.comparison.publish import Report
        >>> result = pl.DataFrame({"metric": ["map"], "system": ["b"], "baseline": ["a"],
        ...     "mean": [0.5], "baseline_mean": [0.25], "delta": [0.25],
        ...     "significant": [False], "higher_is_better": [True]})
        >>> with tempfile.TemporaryDirectory() as folder:
        ...     Report(result).save(folder)
        Traceback (most recent call last):
        ...
        polars_irmetrics.errors.InvalidValueError: ...: is a folder, not a file; name a file ...
        """
        if not isinstance(path, str | Path):  # Path(3): Python's own TypeError
            raise InvalidValueError(
                f"path must be a file name (str or pathlib.Path), got {path!r}; e.g. "
                "report.save('comparison.html')"
            )
        target = Path(path)
        check_target(path)  # a folder, a missing or read-only folder: named, before rendering
        kind = _SUFFIXES.get(target.suffix.lower())
        if kind is None:
            raise InvalidValueError(
                f"report file {str(path)!r} must end in .html, .tex, .md or .txt "
                "(the tidy result: result.write_parquet / write_csv / write_json)"
            )
        text = {
            "html": self.to_html,
            "latex": self.to_latex,
            "markdown": self.to_markdown,
            "text": self.__str__,
        }[kind]()
        write_text(target, text)
        return target


def _scoped(fragment: str) -> str:
    """great_tables' CSS with its few unscoped rules (``tbody, tr, td ...``, which would
    restyle every other table of a notebook or docs page) scoped to the report's table."""
    fragment = fragment.replace(
        f"#{_ID} thead, tbody, tfoot, tr, td, th {{",
        ", ".join(f"#{_ID} {t}" for t in ("thead", "tbody", "tfoot", "tr", "td", "th")) + " {",
    )
    return fragment.replace("\n tr { background-color", f"\n#{_ID} tr {{ background-color")


def _inline_svg(figure: Figure, prefix: str, label: str) -> str:
    """``figure`` as an ``<svg>`` element for an HTML page: no XML prolog, DOCTYPE,
    metadata or namespace URLs; its ids prefixed (several figures share a page)."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None})
    text = buffer.getvalue()
    text = text[text.index("<svg") :]
    text = re.sub(r"<metadata>.*?</metadata>", "", text, flags=re.S)
    text = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", text)
    text = re.sub(r'\bid="([^"]+)"', rf'id="{prefix}-\1"', text)
    text = re.sub(r'href="#([^"]+)"', rf'href="#{prefix}-\1"', text)
    text = re.sub(r"url\(#([^)]+)\)", rf"url(#{prefix}-\1)", text)
    return text.replace("<svg", f'<svg role="img" aria-label="{html.escape(label)}"', 1)


def _check_arguments(per_query: object, system: object, result: pl.DataFrame) -> None:
    """The page's own arguments, refused by name before anything is drawn (the result,
    ``digits`` and ``options`` are :func:`~polars_irmetrics.comparison.report.check_report`'s):
    a per-query frame that is not the same comparison's (its metrics drawn beside another
    metric's table) or whose rows would be counted wrong (a null value, a query twice:
    :func:`~polars_irmetrics.comparison.plot.check_per_query`), a system label that is
    not text."""
    if not isinstance(system, str):
        raise InvalidValueError(f"system= names the first column's header, text; got {system!r}")
    if per_query is None:
        return
    if not isinstance(per_query, pl.DataFrame):
        raise InvalidValueError(
            f"per_query is a {kind_of(per_query)}; pass the polars DataFrame "
            "irm.compare(..., per_query=True) returned (collect a LazyFrame first)"
        )
    missing = [
        c for c in ("metric", "delta", "value", "baseline_value") if c not in per_query.columns
    ]
    if missing:
        raise ColumnNotFoundError(
            f"column {missing[0]!r} is not in per_query; pass the per_query=True result of "
            "the same irm.compare call"
        )
    if not per_query.schema["delta"].is_numeric():
        raise ColumnTypeError(
            f"column 'delta' of per_query has dtype {per_query.schema['delta']}; pass the "
            "per_query=True result of the same irm.compare call"
        )
    if "metric" in result.columns:
        other = sorted(set(per_query["metric"].unique()) - set(result["metric"].unique()))
        if other:
            raise InvalidValueError(
                f"per_query holds metric {other[0]!r}, which result does not: its plots "
                "would stand beside another metric's table; pass the per_query=True result "
                "of the same irm.compare call"
            )
    _check_same_comparison(per_query, result)
    plot.check_per_query(per_query)  # a null value or a query twice: counted wrong


def _check_same_comparison(per_query: pl.DataFrame, result: pl.DataFrame) -> None:
    """Refuse a ``per_query`` whose comparisons (metric, system, baseline) are not
    ``result``'s, or whose ``higher_is_better`` of a metric is not ``result``'s: the
    page's delta plots would stand beside another comparison's table, or count as wins
    what the table calls worse."""
    keys = [c for c in ("metric", "system", "baseline") if c in per_query.columns]
    if len(keys) == 3 and set(keys) <= set(result.columns):
        text = [pl.col(c).cast(pl.String) for c in keys]
        other = (
            per_query.select(text)
            .unique(maintain_order=True)
            .join(result.select(text).unique(), on=keys, how="anti", nulls_equal=True)
        )
        if other.height:
            metric, system, baseline = other.row(0)
            raise InvalidValueError(
                f"per_query holds system {system!r} against {baseline!r} on metric "
                f"{metric!r}, which result does not compare: its plot would stand beside "
                "another comparison's table; pass the per_query=True result of the same "
                "irm.compare call"
            )
    column = "higher_is_better"
    if not {"metric", column} <= set(per_query.columns) & set(result.columns):
        return
    pairs = [pl.col("metric").cast(pl.String), pl.col(column)]
    said = (
        per_query.select(pairs)
        .unique(maintain_order=True)
        .join(result.select(pairs).unique(), on="metric", how="inner", suffix="_result")
    )
    apart = said.filter(pl.col(column).ne_missing(pl.col(f"{column}_result")))
    if apart.height:
        metric, given, stated = apart.row(0)
        raise InvalidValueError(
            f"higher_is_better of metric {metric!r} is {given} in per_query and {stated} in "
            "result: the delta plots would count as wins what the table calls worse (or "
            "the other way); pass the per_query=True result of the same irm.compare call"
        )


def report(
    result: pl.DataFrame,
    *,
    per_query: pl.DataFrame | None = None,
    curves: pl.DataFrame | None = None,
    options: CompareOptions | None = None,
    markers: Markers = "letters",
    digits: int = 4,
    title: str | None = None,
    system: str = "system",
) -> Report:
    """A comparison as a publication table and a self-contained HTML page.

    Parameters
    ----------
    result
        The frame :func:`~polars_irmetrics.compare` returned (``per_query=False``), or
        :func:`~polars_irmetrics.reproducibility`'s (``measure, metric, run, value``: a
        row per measure and run, a column per metric, no markers, nothing bold, no
        plots).
    per_query
        ``compare(..., per_query=True)`` for the per-query delta plots; default: from
        the values ``compare`` recorded for ``result`` (none for a frame built or
        filtered by hand).
    curves
        ``evaluate(runs, "ndcg@1..20", systems=system)`` for the metric@k plot; default: the
        result's own metrics with two or more cutoffs of one family, if any.
    options
        The comparison's options, named in the footnote; default: those ``compare``
        recorded for ``result``. Without either the footnote says they were not recorded.
        An ``alternative`` other than the one ``compare`` recorded is refused: a
        significant marker is better or worse by which way the test looked (without a
        record, a one-sided ``alternative`` that the rows' statistics deny,
        :func:`~polars_irmetrics.comparison.report.check_stated`). Its ``alpha`` reads
        the result's ``significant``: a row that says other than ``p_adjusted <=
        alpha`` (at 0.05 where neither ``options`` nor a record gives alpha) is refused,
        as its marker would stand on a difference the test did not find.
    markers
        ``"letters"`` (ranx style: ``ᵃ`` = significantly better than system a; beyond 26
        systems ``aa``, ``ab`` .., a cell's markers then separated by commas) or
        ``"daggers"`` (one baseline: ``†`` better, ``‡`` worse).
    digits
        Decimals of the means (0..12). The best mean is bold by its unrounded value:
        two means that print alike (0.30004 and 0.30001 at 4 digits, lower is better)
        may have only one bold; an exact tie bolds both.
    title
        The table's (and page's) title.
    system
        The name of the system column in :meth:`Report.frame`.

    Returns
    -------
    Report
        ``_repr_html_`` (notebooks), ``to_html()``, ``to_latex()``, ``to_markdown()``,
        ``str()``, ``frame()`` (the numbers, Float64), ``figures()`` and ``save(path)``.

    Raises
    ------
    ColumnNotFoundError
        ``result`` is not a comparison result.
    InvalidValueError
        Bad ``markers``, ``digits`` or ``options``, a null mean, a system with two
        means of one metric (in two rows), a ``significant`` that disagrees with its
        p-value at alpha, daggers without a
        single baseline, a ``save`` suffix other than .html/.tex/.md/.txt, a
        ``per_query`` with a null or NaN ``delta``, ``value`` or ``baseline_value``.
    DuplicateError
        A ``per_query`` holding a query in two rows of one comparison (its plots would
        count it twice).
    MissingDependencyError
        great_tables (the ``report`` extra) for HTML, matplotlib (``plot``) for plots.

    See Also
    --------
    polars_irmetrics.compare : the tidy result, one row per metric and comparison.
    polars_irmetrics.comparison.plot : the plots, one function each.

    Examples
    --------
    ``b`` finds the relevant document on five queries, ``a`` on one; the footnote names
    what ``compare`` recorded (one comparison: Holm changes nothing):

    >>> import polars as pl
    >>> import polars_irmetrics as irm
    >>> queries = ["q1", "q2", "q3", "q4", "q5"]
    >>> qrels = pl.DataFrame({"query_id": queries, "doc_id": "x", "relevance": 1})
    >>> a = pl.DataFrame({"query_id": queries, "doc_id": ["x", "n", "n", "n", "n"],
    ...                   "rank": 1})
    >>> b = pl.DataFrame({"query_id": queries, "doc_id": "x", "rank": 1})
    >>> result = irm.compare({"a": a, "b": b}, "P@1", qrels=qrels, baseline="a")
    >>> table = irm.report(result, markers="daggers")
    >>> print(table.to_markdown())
    | system | P@1 |
    |---|---:|
    | a | 0.2000 |
    | b | **1.0000**† |
    <BLANKLINE>
    †/‡: significantly better/worse than a (adjusted p <= alpha)
    <BLANKLINE>
    Two-sided paired t-test, Holm correction over 1 comparison (all metrics together),
    significant at adjusted p ≤ 0.05; 5 queries; baseline: a.
    >>> table.frame()["P@1"].to_list() == [result["baseline_mean"][0], result["mean"][0]]
    True

    A frame derived from it (other columns, other rows) is a new frame, with no record:
    name the options yourself. A frame equal to it (a copy, a filter that keeps every
    row) is recognised by its rows.

    >>> irm.report(result.drop("ci_low", "ci_high")).note[:40]
    'Test, correction and alpha not recorded '
    >>> irm.report(result.filter(pl.col("metric") == "P@1")).note[:40]
    'Two-sided paired t-test, Holm correction'
    """
    return Report(
        result,
        per_query=per_query,
        curves=curves,
        options=options,
        markers=markers,
        digits=digits,
        title=title,
        system=system,
    )
